/**
 * Posting the outbox (src/service/webhooks/webhooks.ts) to the webhooks: signed, with retries on
 * the service clock, at least once, in order per webhook. Loaded only by a process that
 * delivers (`amsg serve`, a local CLI after its call, `amsg webhooks listen`), and undici
 * only when the first post goes out.
 *
 * - Order: a webhook's deliveries go one at a time, oldest first; the next waits until
 *   the one before is delivered or has failed for good.
 * - At least once: a delivery is leased before its post (next_attempt_at moves to the
 *   end of the lease, lease_pid names the process) and settled after it. A process
 *   killed in between leaves it leased; when the lease ends on the clock, or its process
 *   is gone, the next deliverer sends it again with the same event and delivery ids.
 * - Retries: a 2xx is delivered; any other answer, a timeout or a refused connection is
 *   tried again after 80 s × 3^(n−1) (80 s, 4 min, 12 min, 36 min, 1.8 h, 5.4 h, 16.2 h:
 *   8 attempts over about a day), then the delivery is failed (e).
 * - A slow or broken receiver holds up only its own webhook: posts are asynchronous,
 *   each with a timeout, a few webhooks at a time, and the database work around them
 *   is a couple of short statements.
 */
import { backgroundErrorOf, firstOrAfter, pollEvery, soonOnce } from '../polling.js';
import type { Agent, Dispatcher } from 'undici';
import { commitTurn, type Db } from '../../store/db.js';
import { beforeWrite, stmt } from '../../store/statements.js';
import { stamp, type Clock } from '../clock.js';
import { VERSION } from '../../version.js';
import { DELIVERY_ID_HEADER, EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './sign.js';
import { eventBody, onEventEmitted } from './webhooks.js';

export const MAX_ATTEMPTS = 8;
export const TIMEOUT_MS = 10_000;

/** The wait after the n-th failed attempt (1-based) before the next one. */
export function backoffMs(attempt: number): number {
  return 80_000 * 3 ** (attempt - 1);
}

export interface DeliverOptions {
  /** Per post (default 10 s). */
  timeoutMs?: number;
  /** Webhooks posted to at once (default 8). */
  concurrency?: number;
}

interface Head {
  delivery_id: number;
  webhook_id: number;
  event_id: number;
  next_attempt_at: string;
  lease_pid: number | null;
  attempts: number;
  url: string;
  method: 'POST' | 'GET';
  secret: string;
  event: string;
  account_id: number;
  data: string;
  occurred_at: string;
}

interface Outcome {
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The start of the receiver's answer, as text (the delivery log shows it). */
  response_body?: string | null;
}

/** How much of a receiver's answer is kept with the attempt. */
export const RESPONSE_BODY_KEPT = 2048;
/** How much of it is read at most (the rest is dropped): a receiver that streams garbage is not waited for. */
const RESPONSE_BODY_READ = 64 * 1024;

/** The first RESPONSE_BODY_KEPT bytes of an answer as text, reading at most RESPONSE_BODY_READ. */
async function startOf(body: AsyncIterable<Buffer>): Promise<string | null> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let read = 0;
  for await (const chunk of body) {
    if (keptBytes < RESPONSE_BODY_KEPT) {
      kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
      keptBytes += Math.min(chunk.length, RESPONSE_BODY_KEPT - keptBytes);
    }
    read += chunk.length;
    if (read >= RESPONSE_BODY_READ) break;
  }
  // A multi-byte character cut at the end decodes as U+FFFD: the log shows text, not bytes.
  return keptBytes ? Buffer.concat(kept).toString('utf8') : null;
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

const secondsOf = (ms: number) => Math.floor(ms / 1000);

interface UndiciParts {
  Agent: typeof Agent;
  request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
}
let undici: Promise<UndiciParts> | undefined;
/**
 * The parts of undici a post needs, not its index (which also loads fetch, caches and
 * WebSocket: most of what loading undici costs a local command, as in http-transport.ts).
 */
const loadUndici = async (): Promise<UndiciParts> => {
  const [agent, api] = await Promise.all([import('undici/lib/dispatcher/agent.js'), import('undici/lib/api/api-request.js')]);
  return { Agent: agent.default, request: api.default };
};

/**
 * Delivers due webhook posts for one database. `amsg serve` runs it in the background
 * (start/stop); a local CLI runs it for a budget after its call, and `amsg webhooks
 * listen` in local mode every quarter second (runFor).
 */
export class Deliverer {
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  /** Webhooks with a post in flight from this process, and the abort of each. */
  private readonly inflight = new Map<number, { deliveryId: number; abort: AbortController; done: Promise<void> }>();
  private agent?: Agent;
  private stopPolling?: () => void;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    opts: DeliverOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
    this.concurrency = opts.concurrency ?? 8;
  }

  /** Each webhook's oldest pending delivery, when it is due and no live process holds it. */
  private dueHeads(): Head[] {
    const now = stamp(this.clock.now());
    const heads: Head[] = [];
    const webhooks = stmt(this.db, 'SELECT webhook_id FROM webhooks ORDER BY webhook_id').pluck().all() as number[];
    for (const webhookId of webhooks) {
      if (this.inflight.has(webhookId)) continue;
      const head = stmt(
        this.db,
        `SELECT d.delivery_id, d.webhook_id, d.event_id, d.next_attempt_at, d.lease_pid, d.attempts,
                w.url, w.method, w.secret, e.event, e.account_id, e.data, e.occurred_at
           FROM webhook_deliveries d
           JOIN webhooks w ON w.webhook_id = d.webhook_id
           JOIN webhook_events e ON e.event_id = d.event_id
          WHERE d.webhook_id = ? AND d.status = 'p'
          ORDER BY d.delivery_id LIMIT 1`,
      ).get(webhookId) as Head | undefined;
      if (!head) continue;
      const due =
        head.next_attempt_at <= now ||
        // A lease whose process is gone (or is this one, which no longer posts it) is over
        // whatever the clock says: a pinned clock never reaches the lease's end.
        (head.lease_pid !== null && (head.lease_pid === process.pid || !alive(head.lease_pid)));
      if (due) heads.push(head);
    }
    return heads;
  }

  /** Takes a delivery if no one else took it since it was read (compare and set). */
  private claim(head: Head): boolean {
    const leaseEnd = stamp(new Date(this.clock.now().getTime() + this.timeoutMs + 5_000));
    return (
      stmt(
        this.db,
        `UPDATE webhook_deliveries SET next_attempt_at = ?, lease_pid = ?
          WHERE delivery_id = ? AND status = 'p' AND next_attempt_at = ? AND lease_pid IS ?`,
      ).run(leaseEnd, process.pid, head.delivery_id, head.next_attempt_at, head.lease_pid).changes === 1
    );
  }

  /** Records the attempt and moves the delivery on: delivered, due again later, or failed. */
  private settle(head: Head, outcome: Outcome) {
    const now = this.clock.now();
    const at = stamp(now);
    const ok = outcome.status_code !== null && outcome.status_code >= 200 && outcome.status_code < 300;
    const attempts = head.attempts + 1;
    const status = ok ? 'o' : attempts >= MAX_ATTEMPTS ? 'e' : 'p';
    const next = status === 'p' ? stamp(new Date(now.getTime() + backoffMs(attempts))) : null;
    beforeWrite(this.db);
    this.db
      .transaction(() => {
        // The webhook may have been deleted during the post, its deliveries with it.
        stmt(
          this.db,
          `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms, response_body)
         SELECT delivery_id, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE delivery_id = ?`,
        ).run(at, outcome.status_code, outcome.error, outcome.duration_ms, outcome.response_body ?? null, head.delivery_id);
        stmt(
          this.db,
          `UPDATE webhook_deliveries
            SET attempts = attempts + 1, status = ?, next_attempt_at = ?, lease_pid = NULL,
                last_status_code = ?, last_error = ?, delivered_at = ?
          WHERE delivery_id = ? AND status = 'p'`,
        ).run(status, next, outcome.status_code, outcome.error, ok ? at : null, head.delivery_id);
      })
      .immediate();
  }

  /** Gives a delivery back unsent (the budget ran out, or the process stops): due now, no attempt counted. */
  private release(deliveryId: number) {
    stmt(
      this.db,
      "UPDATE webhook_deliveries SET next_attempt_at = ?, lease_pid = NULL WHERE delivery_id = ? AND status = 'p' AND lease_pid = ?",
    ).run(stamp(this.clock.now()), deliveryId, process.pid);
  }

  private async post(head: Head, abort: AbortController): Promise<Outcome> {
    const { Agent, request } = await (undici ??= loadUndici());
    this.agent ??= new Agent({
      connections: 4,
      keepAliveTimeout: 10_000,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const body = eventBody(head);
    const headers: Record<string, string> = {
      'user-agent': `amsg-webhooks/${VERSION}`,
      [SIGNATURE_HEADER]: signatureHeader(head.secret, secondsOf(this.clock.now().getTime()), body),
      [EVENT_ID_HEADER]: String(head.event_id),
      [DELIVERY_ID_HEADER]: String(head.delivery_id),
      [EVENT_HEADER]: head.event,
    };
    let url = head.url;
    if (head.method === 'GET') url += `${url.includes('?') ? '&' : '?'}payload=${encodeURIComponent(body)}`;
    else headers['content-type'] = 'application/json';
    const started = performance.now();
    const timeout = setTimeout(() => abort.abort(new Error(`timeout: no answer within ${this.timeoutMs / 1000} s`)), this.timeoutMs);
    try {
      const target = new URL(url);
      const res = await request.call(this.agent, {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: head.method,
        headers,
        body: head.method === 'POST' ? body : undefined,
        signal: abort.signal,
      });
      // Read a little of the answer (its start is kept for the log) and drop the rest.
      const response_body = await startOf(res.body).catch(() => null);
      return {
        status_code: res.statusCode,
        error: res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`,
        duration_ms: Math.round(performance.now() - started),
        response_body,
      };
    } catch (err) {
      const reason = abort.signal.aborted ? abort.signal.reason : err;
      return { status_code: null, error: describe(reason), duration_ms: Math.round(performance.now() - started) };
    } finally {
      clearTimeout(timeout);
    }
  }

  /** Starts posts for the due heads, up to the concurrency; answers how many started. */
  pump(): number {
    if (this.stopped || !this.db.open) return 0;
    // Outside a request (an immediate or a timer): a turn's writes can be committed now.
    commitTurn(this.db);
    if (this.db.inTransaction) return 0;
    let started = 0;
    for (const head of this.dueHeads()) {
      if (this.inflight.size >= this.concurrency) break;
      if (!this.claim(head)) continue;
      started++;
      const abort = new AbortController();
      const done = this.post(head, abort).then((outcome) => {
        this.inflight.delete(head.webhook_id);
        if (!this.db.open) return;
        try {
          // Given back by stop or a spent budget: not an attempt, just not now.
          if (abort.signal.aborted && abort.signal.reason === RELEASED) this.release(head.delivery_id);
          else this.settle(head, outcome);
        } catch (err) {
          // Not recorded (busy for longer than the busy timeout, say): the lease runs out and
          // the post is made again. A background deliverer must not take its process down.
          backgroundError(err);
        }
        if (!this.stopped) this.schedule();
      });
      this.inflight.set(head.webhook_id, { deliveryId: head.delivery_id, abort, done: done.then(() => undefined) });
    }
    return started;
  }

  /** Runs pump soon (once, however many events were fired meanwhile). */
  readonly schedule = soonOnce(
    () => this.pump(),
    () => this.stopped,
    (err) => backgroundError(err),
  );

  /** Delivers in the background: woken by events fired in this process, and every pollMs for the rest. */
  start(pollMs = 250) {
    onEventEmitted(() => this.schedule());
    this.stopPolling = pollEvery(pollMs, () => this.schedule());
  }

  /**
   * Delivers what is due for up to budgetMs. A post still open then is an attempt that
   * timed out: retried after its backoff, so a receiver that hangs costs a local run its
   * budget once per retry, not on every command.
   */
  async runFor(budgetMs: number): Promise<void> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      this.pump();
      if (this.inflight.size === 0) break;
      const left = deadline - Date.now();
      if (left <= 0) break;
      await firstOrAfter(
        [...this.inflight.values()].map((f) => f.done),
        left,
      );
    }
    const open = [...this.inflight.values()];
    const late = new Error(`timeout: no answer within ${budgetMs / 1000} s (what a local run waits)`);
    for (const f of open) f.abort.abort(late);
    await Promise.all(open.map((f) => f.done));
    await this.stop();
  }

  /** Stops: open posts are aborted and given back (due again at once, no attempt counted). */
  async stop() {
    this.stopped = true;
    this.stopPolling?.();
    onEventEmitted(undefined);
    const open = [...this.inflight.values()];
    for (const f of open) f.abort.abort(RELEASED);
    await Promise.all(open.map((f) => f.done));
    await this.agent?.close().catch(() => undefined);
    this.agent = undefined;
  }
}

const RELEASED = new Error('released');

/** A failure of background delivery: the next pass tries again; AMSG_DEBUG=1 shows it. */
export const backgroundError = backgroundErrorOf('webhook delivery');

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** A local CLI's turn: deliver what is due within budgetMs. */
export async function deliverFor(db: Db, clock: Clock, budgetMs: number, opts: DeliverOptions = {}): Promise<void> {
  // Before undici loads: see src/liftoff-only.ts (a served process keeps the optimizing tier).
  if (!undici) await import('../../liftoff-only.js');
  await new Deliverer(db, clock, opts).runFor(budgetMs);
}
