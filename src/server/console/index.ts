/**
 * The web console on `amsg serve` (issue 33; docs/console-contract.md): everything
 * under `/ui`. Its pages are the bundle in dist/console; its data is the route
 * table itself, asked through `/ui/api/<route path>` as the signed-in user, so the
 * console answers, permits, refuses and fires webhooks exactly as the API does.
 * Only `amsg serve` and `amsg console` load this module.
 */
import type http from 'node:http';
import type { ApiRequest, ApiResponse, Router } from '../../api/router.js';
import { jsonText } from '../../api/json-text.js';
import { atD } from '../../api/codecs.js';
import type { Db } from '../../store/db.js';
import type { Actor } from '../../service/context.js';
import { stamp } from '../../service/clock.js';
import { accessibleAccounts, authenticate, firstOwner } from '../../service/accounts/accounts.js';
import { parseQuery } from '../query.js';
import { assetsDir, serveAsset } from './assets.js';
import { liveStreams, type LiveStreams } from './live.js';
import { FRAME_HEADERS, landingPage, loginPage, NOT_SIGNED_IN, PAGE_HEADERS, SHELL } from './pages.js';
import { COOKIE, cookieValue, sameToken, Sessions, type Session } from './sessions.js';

/** What the console needs of the server it is mounted on. */
export interface ConsoleHost {
  db: Db;
  router: Router;
  /** Answers an API request as the server answers it (once the turn's writes are committed), with extra headers. */
  answer(res: http.ServerResponse, request: ApiRequest, headers: Record<string, string>): void;
  /** Reads a request body of at most `limit` bytes (a 413 otherwise) and hands it over. */
  readBody(req: http.IncomingMessage, res: http.ServerResponse, limit: number, then: (body: string) => void): void;
  /** Paths that are not operations of the table and stay out of reach of the console (/_sandbox/reset). */
  reserved: string[];
}

export interface ConsoleOptions {
  /** Milliseconds now, for sign-in links and sessions (tests pin it). */
  now?: () => number;
  /** The bundle's folder (default: dist/console of this package, or AMSG_CONSOLE_ASSETS). */
  assets?: string;
  /** How often a live stream looks at the counts (ms). */
  liveInterval?: number;
}

export interface Console {
  handle(req: http.IncomingMessage, res: http.ServerResponse, rawPath: string, queryText: string): void;
  /** A fresh one-time sign-in link on `base` (the server's URL). */
  signInUrl(base: string): string;
  readonly sessions: Sessions;
  close(): void;
}

const API_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const LOGIN_BODY_LIMIT = 16 * 1024;
const API_BODY_LIMIT = 10 * 1024 * 1024;
const PAGE_PATH = /^\/ui\/\d+(\/|$)/;
const LIVE_PATH = /^\/(\d+)\/mailings\/(\d+)\/live$/;
/** /ui/frame/<api path>, and the API operation whose html_body the frame shows. */
const FRAME_PATHS = [/^\/\d+\/mailings\/\d+\/messages\/\d+$/, /^\/\d+\/mailings\/\d+\/preview$/];

function sendJson(res: http.ServerResponse, r: ApiResponse) {
  const text = jsonText(r.body);
  res.writeHead(r.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...API_HEADERS,
    ...r.headers,
  });
  res.end(text);
}

function sendHtml(res: http.ServerResponse, status: number, html: string, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    ...PAGE_HEADERS,
    ...headers,
  });
  res.end(html);
}

function redirect(res: http.ServerResponse, status: 302 | 303, location: string, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(status, { location, 'content-length': 0, 'cache-control': 'no-store', ...headers });
  res.end();
}

/** A `next` to go to after sign-in: a console path of ours only (never `//host`, never elsewhere). */
function safeNext(next: string | undefined | null): string | undefined {
  return next && /^\/ui\/[^/\\]/.test(next) && !/[\r\n]/.test(next) ? next : undefined;
}

const home = (actor: Actor) => `/ui/${actor.account_id}/mailings`;

export function createConsole(host: ConsoleHost, opts: ConsoleOptions = {}): Console {
  const sessions = new Sessions(host.db, opts.now);
  const assets = opts.assets ?? assetsDir();
  const live: LiveStreams = liveStreams(host.router, opts.liveInterval ? { look: opts.liveInterval, ping: 15_000 } : undefined);

  const cookieOf = (req: http.IncomingMessage) => cookieValue(req.headers.cookie, COOKIE);
  const secure = (req: http.IncomingMessage) => (req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '');
  const setCookie = (req: http.IncomingMessage, session: Session) =>
    `${COOKIE}=${session.id}; Path=/ui; HttpOnly; SameSite=Strict${secure(req)}`;
  const clearCookie = (req: http.IncomingMessage) => `${COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0${secure(req)}`;

  /**
   * A write from another site's page (a form posted at us) is refused whatever it
   * carries. A browser names the page's origin; `null` (a page under no-referrer, a
   * sandboxed frame) is ours only when the browser says the request is same-origin.
   */
  const foreignOrigin = (req: http.IncomingMessage) => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    if (origin === 'null') return req.headers['sec-fetch-site'] !== 'same-origin';
    const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
    return origin !== `${proto}://${req.headers.host}`;
  };

  const signIn = (req: http.IncomingMessage, res: http.ServerResponse, queryText: string) => {
    const query = new URLSearchParams(queryText);
    const token = query.get('token');
    if (req.method === 'GET' && token !== null) {
      const actor = sessions.takeToken(token) ? firstOwner(host.db) : undefined;
      if (!actor) return sendHtml(res, 401, loginPage({ message: 'This sign-in link is invalid, used or expired.' }));
      const session = sessions.start({ by: 'link', userId: actor.user_id });
      return sendHtml(res, 200, landingPage(home(actor)), { 'set-cookie': setCookie(req, session) });
    }
    if (req.method === 'GET') return sendHtml(res, 200, loginPage({ next: safeNext(query.get('next')) }));
    if (req.method !== 'POST') return sendHtml(res, 405, loginPage(), { allow: 'GET, POST' });
    if (foreignOrigin(req)) return sendHtml(res, 403, loginPage({ message: 'Sign in from this server’s own page.' }));
    host.readBody(req, res, LOGIN_BODY_LIMIT, (body) => {
      const form = new URLSearchParams(body);
      const next = safeNext(form.get('next'));
      const publicKey = form.get('public_key')?.trim() ?? '';
      const privateKey = form.get('private_key')?.trim() ?? '';
      const actor = publicKey && privateKey ? authenticate(host.db, publicKey, privateKey) : undefined;
      // One message whichever half was wrong.
      if (!actor) return sendHtml(res, 401, loginPage({ message: 'That key pair is not valid.', next }));
      const old = cookieOf(req);
      if (old) sessions.end(old);
      const session = sessions.start({ by: 'key', publicKey });
      redirect(res, 303, next ?? home(actor), { 'set-cookie': setCookie(req, session) });
    });
  };

  const signOut = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== 'POST')
      return sendJson(res, { status: 405, body: { error: 'sign out with POST /ui/logout' }, headers: { allow: 'POST' } });
    const signedIn = sessions.resolve(cookieOf(req));
    host.readBody(req, res, LOGIN_BODY_LIMIT, (body) => {
      if (signedIn) {
        const given = (req.headers['x-csrf-token'] as string | undefined) ?? new URLSearchParams(body).get('csrf_token') ?? undefined;
        if (!sameToken(given, signedIn.session.csrf)) return sendJson(res, csrfRefused);
        sessions.end(signedIn.session.id);
      }
      redirect(res, 303, '/ui/login', { 'set-cookie': clearCookie(req) });
    });
  };

  const csrfRefused: ApiResponse = {
    status: 403,
    body: { error: 'missing or wrong x-csrf-token header (get it from GET /ui/api/session)' },
  };

  const sessionAnswer = (session: Session, actor: Actor): ApiResponse => ({
    status: 200,
    body: {
      csrf_token: session.csrf,
      user: {
        user_id: actor.user_id,
        account_id: actor.account_id,
        email: actor.email,
        role: actor.role,
        billing_access: actor.billing_access,
        manage_users: actor.manage_users,
      },
      account_id: actor.account_id,
      accounts: accessibleAccounts(host.db, actor),
      signed_in_by: session.by,
      expires_at: atD(stamp(new Date(sessions.expiresAt(session)))),
    },
  });

  /** `/ui/api/…`: the session, a live stream, or an operation of the table as the session's user. */
  const api = (req: http.IncomingMessage, res: http.ServerResponse, apiPath: string, queryText: string) => {
    const signedIn = sessions.resolve(cookieOf(req));
    if (!signedIn) {
      req.resume();
      return sendJson(res, { status: 401, body: { error: NOT_SIGNED_IN } });
    }
    const { session, actor } = signedIn;
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      if (foreignOrigin(req) || !sameToken(req.headers['x-csrf-token'] as string | undefined, session.csrf)) {
        req.resume();
        return sendJson(res, csrfRefused);
      }
    }
    if (apiPath === '/session') {
      if (method !== 'GET') return sendJson(res, { status: 405, body: { error: 'GET /ui/api/session' }, headers: { allow: 'GET' } });
      return sendJson(res, sessionAnswer(session, actor));
    }
    const liveMatch = method === 'GET' ? LIVE_PATH.exec(apiPath) : null;
    if (liveMatch) return live.open(req, res, () => sessions.resolve(session.id)?.actor, liveMatch[1], liveMatch[2], sendJson);
    // Not operations of the table: the sandbox reset, and ingestion (a public endpoint of its own).
    if (host.reserved.includes(apiPath) || apiPath.startsWith('/v1/')) {
      req.resume();
      return sendJson(res, { status: 404, body: { error: `no such operation: ${method} ${apiPath}` } });
    }
    const request: ApiRequest = { method, path: apiPath, query: parseQuery(queryText), body: '', actor };
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
      return host.answer(res, request, API_HEADERS);
    host.readBody(req, res, API_BODY_LIMIT, (body) => host.answer(res, { ...request, body }, API_HEADERS));
  };

  /** `/ui/frame/<api path>`: a message's HTML alone, for the console's sandboxed iframe. */
  const frame = (req: http.IncomingMessage, res: http.ServerResponse, apiPath: string, queryText: string) => {
    const text = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...FRAME_HEADERS });
      res.end(body);
    };
    const signedIn = sessions.resolve(cookieOf(req));
    if (!signedIn) return text(401, NOT_SIGNED_IN);
    if (req.method !== 'GET') return text(405, 'GET only');
    if (!FRAME_PATHS.some((p) => p.test(apiPath))) return text(404, 'not found');
    const query = parseQuery(queryText);
    // The message as sent: only its HTML is asked for.
    if (apiPath.includes('/messages/')) query.type = 'html';
    const result = host.router.handle({ method: 'GET', path: apiPath, query, actor: signedIn.actor }) as ApiResponse;
    if (result.status !== 200) return text(result.status, (result.body as { error?: string })?.error ?? 'error');
    const html = (result.body as { html_body?: string }).html_body ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html), ...FRAME_HEADERS });
    res.end(html);
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, rawPath: string, queryText: string) => {
    if (rawPath === '/ui/login') return signIn(req, res, queryText);
    if (rawPath === '/ui/logout') return signOut(req, res);
    if (rawPath.startsWith('/ui/api/')) return api(req, res, rawPath.slice('/ui/api'.length), queryText);
    if (rawPath.startsWith('/ui/frame/')) return frame(req, res, rawPath.slice('/ui/frame'.length), queryText);
    req.resume();
    if (rawPath.startsWith('/ui/assets/')) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, { status: 405, body: { error: 'GET only' } });
      return serveAsset(req, res, assets, rawPath.slice('/ui/assets/'.length));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendHtml(res, 405, loginPage({ message: 'Console pages are read with GET.' }), { allow: 'GET' });
    const signedIn = sessions.resolve(cookieOf(req));
    if (rawPath === '/ui' || rawPath === '/ui/') return redirect(res, 302, signedIn ? home(signedIn.actor) : '/ui/login');
    if (!PAGE_PATH.test(rawPath)) return sendHtml(res, 404, loginPage({ message: `There is no console page ${rawPath}.` }));
    if (!signedIn) return redirect(res, 302, `/ui/login?next=${encodeURIComponent(rawPath + (queryText ? `?${queryText}` : ''))}`);
    sendHtml(res, 200, SHELL);
  };

  return {
    handle,
    sessions,
    signInUrl: (base) => `${base}/ui/login?token=${sessions.newToken()}`,
    close: () => live.closeAll(),
  };
}
