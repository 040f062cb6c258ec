/**
 * Sending the SMTP outbox (src/service/mail/outbox.ts) with nodemailer's pooled transport.
 * Loaded by a process that delivers (`amsg serve`, a local command with an SMTP server
 * set), and nodemailer (a vendor file of its own: scripts/build.js) only when the first
 * message goes out.
 *
 * - At least once, never lost: a message is claimed before it is sent (attempts + 1,
 *   lease_pid names the process, next_attempt_at moves to the end of the lease) and the
 *   claim is committed before the first byte goes to the server. A process killed
 *   mid-send leaves it claimed; once its process is gone (or the lease is over on the
 *   clock) the next deliverer sends it again, under the same Message-ID. So a kill between
 *   the server's 250 and our record of it sends the message twice, both copies with one
 *   Message-ID (which mail stores and clients de-duplicate on); a kill before the 250 sends
 *   it once.
 * - Retries: a temporary failure (a 4xx reply, a refused or dropped connection, a timeout,
 *   a failed login) is tried again after 2 s × 2^(n−1), at most 5 min apart. A message the
 *   server keeps answering 4xx fails after 15 attempts (about 40 minutes); a server that
 *   cannot be reached does not use a message up: its mail waits, retried every 5 min at
 *   most, until the server is back.
 * - A permanent refusal (5xx) fails the message at once. A 5xx to RCPT TO for a member's
 *   address in a mailing's own send is that member's hard bounce, recorded as `amsg sim
 *   bounce --hard` records one (mailings/engagement.ts): the report counts it and the
 *   member's status becomes e.
 * - Throughput: messages are claimed a batch at a time (one short transaction), sent
 *   concurrently over a few pooled connections, and their outcomes recorded a batch at a
 *   time, so the database work is a small share of a message's cost (bench/smtp.js).
 */
import { backgroundErrorOf, firstOrAfter, pollEvery, soonOnce } from '../polling.js';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { commitTurn, type Db } from '../../store/db.js';
import { beforeWrite, stmt } from '../../store/statements.js';
import { stamp, type Clock } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_BOUND } from '../paging.js';
import { localActor } from '../accounts/accounts.js';
import { recordEngagement } from '../mailings/engagement.js';
import { outgoingMail, type ComposedMessage } from './message.js';
import { sendComposer, type FrozenMessage, type MailKind } from './outbox.js';
import type { MailSettings } from './settings.js';

export const MAX_ATTEMPTS = 15;
const RETRY_BASE_MS = 2_000;
const RETRY_MAX_MS = 5 * 60_000;

export interface MailDeliverOptions {
  /** The wait after the first failed attempt (doubling after each next one); default 2 s. */
  retryBaseMs?: number;
  /** The longest wait between attempts; default 5 min. */
  retryMaxMs?: number;
  /** Connection, greeting and socket timeouts; default 30 s. */
  timeoutMs?: number;
  /** Messages in flight at once; default 64. */
  concurrency?: number;
  /** Pooled SMTP connections; default 4. */
  connections?: number;
  /** Where a change in the server's reachability is said (once each way). */
  report?: (line: string) => void;
}

interface Row {
  /** A mailing's own send: its frozen message (read with the row), or null when the message is gone. */
  frozen_email?: string | null;
  content_mailing_id?: number | null;
  merge_values?: string | null;
  delivery_type?: string | null;
  mail_id: number;
  account_id: number;
  kind: MailKind;
  mailing_id: number | null;
  member_id: number | null;
  to_email: string;
  subject: string | null;
  message: string | null;
  message_id: string;
  attempts: number;
  next_attempt_at: string | null;
  lease_pid: number | null;
}

interface Outcome {
  row: Row;
  subject: string | null;
  ok: boolean;
  reply: string;
  /** 5xx: fail now. */
  permanent: boolean;
  /** A 5xx to RCPT TO: the recipient's address was refused. */
  recipientRefused: boolean;
  /** The server could not be reached or talked to at all (no reply to blame a message for). */
  unreachable: boolean;
  /** The local run's wait ended with the message still open: due again at once. */
  interrupted?: boolean;
  at: string;
}

/** Whether a process exists (signal 0 only checks; EPERM means it exists but is not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const COLUMNS = `o.mail_id, o.account_id, o.kind, o.mailing_id, o.member_id, o.to_email, o.subject, o.message, o.message_id, o.attempts,
   o.next_attempt_at, o.lease_pid, mm.email AS frozen_email, mm.content_mailing_id, mm.merge_values, mm.delivery_type`;
/** A send's frozen message comes with its row: one lookup by key, not a statement of its own per message. */
const FROM = `mail_outbox o LEFT JOIN mailing_messages mm ON o.kind = 'send' AND mm.mailing_id = o.mailing_id AND mm.member_id = o.member_id`;
/** What is due, oldest first (along mail_outbox_due). */
export const DUE_SQL = `SELECT ${COLUMNS} FROM ${FROM} WHERE o.status = 'q' AND o.next_attempt_at <= ? ORDER BY o.next_attempt_at, o.mail_id ${LIMIT_BOUND}`;
/** What a process holds (along mail_outbox_leased): whether its process is gone is asked of each. */
export const HELD_SQL = `SELECT ${COLUMNS} FROM ${FROM} WHERE o.lease_pid IS NOT NULL AND o.status = 'q' ${LIMIT_BOUND}`;

type Nodemailer = typeof import('nodemailer');
let nodemailer: Promise<Nodemailer> | undefined;
const loadNodemailer = async (): Promise<Nodemailer> => {
  // The vendor file answers the CommonJS exports; a plain import answers them as default.
  const mod = (await import('nodemailer')) as Partial<Nodemailer> & { default?: Nodemailer };
  return (typeof mod.createTransport === 'function' ? mod : mod.default) as Nodemailer;
};

/** The message as nodemailer composes it (message.ts decides it): the Message-ID fixed by the row, the Date of the send. */
export function mailOptions(
  row: Pick<Row, 'to_email' | 'message_id'>,
  m: ComposedMessage,
  date: Date,
): SMTPPool.Options & Record<string, unknown> {
  return { ...outgoingMail(row.to_email, m), messageId: row.message_id, date };
}

export class MailDeliverer {
  private readonly opts: Required<Omit<MailDeliverOptions, 'report'>> & Pick<MailDeliverOptions, 'report'>;
  private readonly inflight = new Map<number, Promise<void>>();
  private readonly outcomes: Outcome[] = [];
  private transporter?: Transporter;
  private stopPolling?: () => void;
  private flushing = false;
  private stopped = false;
  private unreachable = false;
  private heldScannedAt = 0;
  /** Counts of this deliverer's work, for the local run's note. */
  readonly done = { sent: 0, failed: 0, retrying: 0 };
  lastProblem?: string;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly settings: MailSettings,
    opts: MailDeliverOptions = {},
  ) {
    this.opts = {
      retryBaseMs: opts.retryBaseMs ?? RETRY_BASE_MS,
      retryMaxMs: opts.retryMaxMs ?? RETRY_MAX_MS,
      timeoutMs: opts.timeoutMs ?? 30_000,
      concurrency: opts.concurrency ?? 64,
      connections: opts.connections ?? 4,
      report: opts.report,
    };
  }

  /** The wait after the n-th failed attempt (1-based). */
  backoffMs(attempt: number): number {
    return Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (attempt - 1));
  }

  private get leaseMs() {
    // Connect, greet, log in, send: each may take the timeout.
    return this.opts.timeoutMs * 4;
  }

  /** Due messages, oldest first, and messages held by a process that is gone (or by this one, which no longer sends them). */
  private due(limit: number): Row[] {
    const now = stamp(this.clock.now());
    // A claimed row is not due (its next_attempt_at is the end of its lease), unless a send outlasted its lease.
    const rows = (stmt(this.db, DUE_SQL).all(now, limit) as Row[]).filter((r) => !this.inflight.has(r.mail_id));
    // Rows held by a process that is gone: looked for at most once a second (a process dies rarely;
    // this one's own claims are most of what the look finds while it sends).
    if (rows.length < limit && Date.now() - this.heldScannedAt >= 1_000) {
      this.heldScannedAt = Date.now();
      const seen = new Set(rows.map((r) => r.mail_id));
      for (const r of stmt(this.db, HELD_SQL).all(limit + this.inflight.size) as Row[]) {
        if (rows.length >= limit) break;
        if (seen.has(r.mail_id) || this.inflight.has(r.mail_id)) continue;
        if (r.lease_pid === process.pid || !alive(r.lease_pid!)) rows.push(r);
      }
    }
    return rows;
  }

  /** Claims the rows no one else took since they were read (compare and set), in one committed transaction. */
  private claim(rows: Row[]): Row[] {
    const leaseEnd = stamp(new Date(this.clock.now().getTime() + this.leaseMs));
    const take = stmt(
      this.db,
      `UPDATE mail_outbox SET attempts = attempts + 1, lease_pid = ?, next_attempt_at = ?
        WHERE mail_id = ? AND status = 'q' AND next_attempt_at IS ? AND lease_pid IS ?`,
    );
    beforeWrite(this.db);
    return this.db
      .transaction(() => rows.filter((r) => take.run(process.pid, leaseEnd, r.mail_id, r.next_attempt_at, r.lease_pid).changes === 1))
      .immediate()
      .map((r) => ({ ...r, attempts: r.attempts + 1 }));
  }

  private async transport(): Promise<Transporter> {
    if (this.transporter) return this.transporter;
    const { createTransport } = await (nodemailer ??= loadNodemailer());
    const s = this.settings.smtp;
    this.transporter ??= createTransport({
      pool: true,
      host: s.host,
      port: s.port,
      secure: s.secure,
      ...(s.user !== undefined ? { auth: { user: s.user, pass: s.pass ?? '' } } : {}),
      tls: { rejectUnauthorized: !s.tlsInsecure },
      maxConnections: this.opts.connections,
      maxMessages: Number.POSITIVE_INFINITY,
      connectionTimeout: this.opts.timeoutMs,
      greetingTimeout: this.opts.timeoutMs,
      socketTimeout: this.opts.timeoutMs,
    });
    // A pooled connection that fails outside a send: the send it affects fails and is retried.
    this.transporter.on('error', () => {});
    return this.transporter;
  }

  /** Composers of the mailings being sent (their templates compiled once), by mailing. */
  private readonly composers = new Map<number, (row: FrozenMessage) => ComposedMessage>();

  private compose(row: Row): ComposedMessage {
    if (row.message !== null) return JSON.parse(row.message) as ComposedMessage;
    if (row.merge_values == null) throw new Error(`no message of mailing ${row.mailing_id} for member ${row.member_id} (purged?)`);
    let compose = this.composers.get(row.mailing_id!);
    if (!compose) {
      if (this.composers.size >= 16) this.composers.clear();
      const ctx: Ctx = { db: this.db, clock: this.clock, actor: localActor(this.db, row.account_id), accountId: row.account_id };
      compose = sendComposer(ctx, row.mailing_id!);
      this.composers.set(row.mailing_id!, compose);
    }
    return compose({
      content_mailing_id: row.content_mailing_id!,
      member_id: row.member_id!,
      email: row.frozen_email!,
      merge_values: row.merge_values,
      delivery_type: row.delivery_type!,
    });
  }

  private async send(row: Row): Promise<Outcome> {
    let message: ComposedMessage;
    try {
      message = this.compose(row);
    } catch (err) {
      // Nothing to send (its mailing or member purged since): no retry makes it composable.
      return this.outcome(row, row.subject, { ok: false, permanent: true, reply: `not sent: ${(err as Error).message}` });
    }
    const subject = message.subject;
    try {
      const transporter = await this.transport();
      const info = (await transporter.sendMail(mailOptions(row, message, this.clock.now()))) as { response?: string };
      return this.outcome(row, subject, { ok: true, reply: info.response ?? '250 accepted' });
    } catch (err) {
      const e = err as { responseCode?: number; code?: string; command?: string; response?: string; message?: string };
      const code = e.responseCode;
      const reply = e.response ?? (e.code && !e.message?.includes(e.code) ? `${e.code}: ${e.message}` : (e.message ?? String(err)));
      // A login the server refuses is the settings' fault, not the message's: it waits like a server that is down.
      const unreachable = code === undefined || e.code === 'EAUTH' || e.code === 'ETLS';
      const permanent = !unreachable && code! >= 500;
      return this.outcome(row, subject, {
        ok: false,
        reply,
        permanent,
        unreachable,
        recipientRefused: permanent && /RCPT/i.test(e.command ?? ''),
      });
    }
  }

  private outcome(row: Row, subject: string | null, o: Partial<Outcome> & { ok: boolean; reply: string }): Outcome {
    return {
      row,
      subject,
      permanent: false,
      recipientRefused: false,
      unreachable: false,
      ...o,
      reply: o.reply.replace(/\s+/g, ' ').trim().slice(0, 500),
      at: stamp(this.clock.now()),
    };
  }

  /** Records the outcomes gathered so far, in one transaction. */
  private flush() {
    if (this.outcomes.length === 0 || !this.db.open) return;
    commitTurn(this.db);
    if (this.db.inTransaction) return void this.flushSoon();
    const batch = this.outcomes.splice(0);
    const sent = stmt(
      this.db,
      `UPDATE mail_outbox SET status = 's', sent_at = ?, last_reply = ?, subject = ?, lease_pid = NULL, next_attempt_at = NULL
        WHERE mail_id = ? AND status = 'q'`,
    );
    const again = stmt(
      this.db,
      `UPDATE mail_outbox SET status = ?, last_reply = ?, subject = ?, lease_pid = NULL, next_attempt_at = ?, bounced = ?
        WHERE mail_id = ? AND status = 'q'`,
    );
    const headsUpSent = stmt(this.db, 'UPDATE mailing_headsup SET sent_ts = ? WHERE mailing_id = ? AND email = ?');
    beforeWrite(this.db);
    try {
      this.db
        .transaction(() => {
          for (const o of batch) {
            const r = o.row;
            if (o.ok) {
              sent.run(o.at, o.reply, o.subject, r.mail_id);
              if (r.kind === 'headsup') headsUpSent.run(o.at, r.mailing_id, r.to_email);
              this.done.sent++;
              continue;
            }
            const failed = o.permanent || (!o.unreachable && !o.interrupted && r.attempts >= MAX_ATTEMPTS);
            const bounced = failed && o.recipientRefused && r.kind === 'send';
            const next = failed ? null : o.interrupted ? o.at : stamp(new Date(this.clock.now().getTime() + this.backoffMs(r.attempts)));
            again.run(failed ? 'f' : 'q', o.reply, o.subject, next, bounced ? 1 : 0, r.mail_id);
            if (bounced) this.bounce(r);
            if (failed) this.done.failed++;
            else this.done.retrying++;
          }
        })
        .immediate();
    } catch (err) {
      // Not recorded (the database busy for longer than its timeout): the leases run out and the
      // messages are sent again, under their Message-IDs. A background deliverer must not take its process down.
      backgroundError(err);
    } finally {
      for (const o of batch) {
        this.inflight.delete(o.row.mail_id);
      }
    }
  }

  /** A refused recipient of a mailing's own send: the member's hard bounce, as a real one would be recorded. */
  private bounce(r: Row) {
    const ctx: Ctx = { db: this.db, clock: this.clock, actor: localActor(this.db, r.account_id), accountId: r.account_id };
    try {
      this.db.transaction(() => recordEngagement(ctx, 'bounce', { mailing_id: r.mailing_id!, member_id: r.member_id!, hard: true }))();
    } catch (err) {
      // The member or its message is gone (purged since): nothing to record it on.
      backgroundError(err);
    }
  }

  private flushSoon() {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      this.flush();
      this.schedule();
    });
  }

  /** Says a change in the server's reachability, once each way. */
  private noteReachability(o: Outcome) {
    const where = this.settings.smtp.display;
    if (o.unreachable && !o.interrupted) {
      this.lastProblem = o.reply;
      if (!this.unreachable) {
        this.unreachable = true;
        this.opts.report?.(`cannot deliver mail through ${where} (${o.reply}): messages stay queued and are retried until it answers`);
      }
    } else if (o.ok && this.unreachable) {
      this.unreachable = false;
      this.lastProblem = undefined;
      this.opts.report?.(`delivering mail through ${where} again`);
    } else if (!o.ok && !o.unreachable) this.lastProblem = o.reply;
  }

  /** Starts sends for the due messages, up to the concurrency; answers how many started. */
  pump(): number {
    if (this.stopped || !this.db.open) return 0;
    commitTurn(this.db);
    if (this.db.inTransaction) return 0;
    const room = this.opts.concurrency - this.inflight.size;
    // Claims come in batches (a quarter of the room at least), not one transaction per message.
    if (room < Math.max(1, this.opts.concurrency / 4)) return 0;
    const rows = this.claim(this.due(room));
    for (const row of rows) {
      const done = this.send(row).then((o) => {
        // Still in flight until its outcome is recorded (flush): until then the row looks claimed by no one.
        this.noteReachability(o);
        this.outcomes.push(o);
        this.flushSoon();
      });
      this.inflight.set(row.mail_id, done);
    }
    return rows.length;
  }

  /** Runs pump soon (once, however many times it was asked meanwhile). */
  readonly schedule = soonOnce(
    () => this.pump(),
    () => this.stopped,
    (err) => backgroundError(err),
  );

  /** Delivers in the background: every pollMs, and as soon as a send ends. */
  start(pollMs = 250) {
    this.stopPolling = pollEvery(pollMs, () => this.schedule());
  }

  /**
   * Delivers what is due for up to budgetMs (a local command's turn). A send still open
   * then is given back due at once (its claim counted as an attempt): the next process
   * that holds the database sends it, under the same Message-ID.
   */
  async runFor(budgetMs: number): Promise<void> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      // Outcomes are recorded here, not left to an immediate: this loop awaits settled promises.
      this.flush();
      this.pump();
      if (this.inflight.size === 0) {
        // A server that cannot be reached now will not be in a second either: what is left is the next process's.
        if (this.unreachable) break;
        // Due again within the budget (a quick retry after a 4xx) is worth waiting for; later is the next process's.
        const next = stmt(this.db, "SELECT MIN(next_attempt_at) FROM mail_outbox WHERE status = 'q'").pluck().get() as string | null;
        if (next === null || Date.parse(`${next.slice(0, 23)}Z`) - this.clock.now().getTime() > deadline - Date.now()) break;
        const before = this.clock.now().getTime();
        await new Promise((r) => setTimeout(r, 50));
        // A pinned clock (AMSG_NOW) never reaches the retry: the next process's, then.
        if (Date.now() >= deadline || this.clock.now().getTime() === before) break;
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) break;
      await firstOrAfter(this.inflight.values(), Math.min(left, 100));
    }
    await this.stop();
  }

  /** Stops: open sends are cut off and their messages due again at once; their outcomes recorded. */
  async stop() {
    this.stopped = true;
    this.stopPolling?.();
    const open = [...this.inflight.keys()];
    if (open.length) {
      // Whatever the cut-off sends answer, they are given back: due now.
      const interrupted = new Set(open);
      const waiting = [...this.inflight.values()];
      this.transporter?.close();
      await Promise.all(waiting);
      for (const o of this.outcomes)
        if (interrupted.has(o.row.mail_id) && !o.ok)
          Object.assign(o, { interrupted: true, permanent: false, recipientRefused: false, reply: `interrupted: ${o.reply}` });
    }
    this.flush();
    this.transporter?.close();
    this.transporter = undefined;
  }

  /** Messages of this database still waiting (queued or retrying). */
  queuedCount(): number {
    return stmt(this.db, "SELECT COUNT(*) FROM mail_outbox WHERE status = 'q'").pluck().get() as number;
  }
}

/** A failure of background delivery: the next pass tries again; AMSG_DEBUG=1 shows it. */
export const backgroundError = backgroundErrorOf('mail delivery');
