/**
 * The console's sign-in tokens and sessions, in memory: a server restart signs
 * everyone out, which for a sandbox is what one expects. A session remembers how it
 * was signed in (the key's public key, or the user the link signed in), never an
 * actor: the actor is read again on each request, so a revoked key ends its session.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../store/db.js';
import type { Actor } from '../../service/context.js';
import { actorOfKey, actorOfUser } from '../../service/accounts/accounts.js';

/** How long a printed sign-in link is good for. */
export const TOKEN_TTL_MS = 10 * 60_000;
/** A session ends after this long without a request… */
export const IDLE_TTL_MS = 12 * 3600_000;
/** …and this long after it began, whatever. */
export const MAX_TTL_MS = 7 * 24 * 3600_000;

export const COOKIE = 'amsg_session';

export type SignedInBy = 'link' | 'key';

export interface Session {
  id: string;
  csrf: string;
  by: SignedInBy;
  /** The key a key-pair session is bound to. */
  publicKey?: string;
  /** The user a link session is bound to. */
  userId?: number;
  createdAt: number;
  seenAt: number;
}

const random = () => randomBytes(32).toString('base64url');

export class Sessions {
  private readonly tokens = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly db: Db,
    /** Milliseconds now (tests pin it to see a link or a session expire). */
    private readonly now: () => number = Date.now,
  ) {}

  /** A new one-time sign-in token, good for TOKEN_TTL_MS. */
  newToken(): string {
    const token = random();
    this.tokens.set(token, this.now() + TOKEN_TTL_MS);
    return token;
  }

  /** Uses up a token: true once, for a known token before it expires. */
  takeToken(token: string): boolean {
    const expires = this.tokens.get(token);
    if (expires === undefined) return false;
    this.tokens.delete(token);
    return this.now() < expires;
  }

  start(how: { by: 'link'; userId: number } | { by: 'key'; publicKey: string }): Session {
    this.sweep();
    const now = this.now();
    const session: Session = { id: random(), csrf: random(), createdAt: now, seenAt: now, ...how };
    this.sessions.set(session.id, session);
    return session;
  }

  end(id: string) {
    this.sessions.delete(id);
  }

  /** The live session of a cookie value and its user as of now, or undefined (and the session ended). */
  resolve(id: string | undefined): { session: Session; actor: Actor } | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    const actor =
      now - session.seenAt < IDLE_TTL_MS && now - session.createdAt < MAX_TTL_MS
        ? session.publicKey !== undefined
          ? actorOfKey(this.db, session.publicKey)
          : actorOfUser(this.db, session.userId!)
        : undefined;
    if (!actor) {
      this.sessions.delete(id);
      return undefined;
    }
    session.seenAt = now;
    return { session, actor };
  }

  /** When the session ends if it stays in use. */
  expiresAt(session: Session): number {
    return Math.min(session.seenAt + IDLE_TTL_MS, session.createdAt + MAX_TTL_MS);
  }

  /** Drops expired tokens and sessions (on each sign-in, so the maps stay as small as their use). */
  private sweep() {
    const now = this.now();
    for (const [token, expires] of this.tokens) if (expires <= now) this.tokens.delete(token);
    for (const [id, s] of this.sessions) if (now - s.seenAt >= IDLE_TTL_MS || now - s.createdAt >= MAX_TTL_MS) this.sessions.delete(id);
  }
}

/** A CSRF token compared in constant time. */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of one cookie of a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
