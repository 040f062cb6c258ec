import '../liftoff-only.js';
import type { Dispatcher, Pool as PoolType } from 'undici';
// The parts of undici a call needs, not its index: the index also loads fetch, the
// mock agent, caches and WebSocket, half of what a remote command spent starting.
import Pool from 'undici/lib/dispatcher/pool.js';
import undiciRequest from 'undici/lib/api/api-request.js';
import { UndiciError } from 'undici/lib/core/errors.js';

import { ApiError, boundedJson, parseWindowCut, WINDOW_CUT_HEADER, type WindowCut } from '../errors.js';
import {
  ConnectionError,
  queryString,
  RateLimitedError,
  type ApiCall,
  type Download,
  type Transport,
  type WaitReporter,
} from './transport.js';

export interface HttpOptions {
  baseUrl: string;
  /** `public:private` */
  apiKey?: string;
  /** Attempts for a retryable call, the first included. */
  attempts?: number;
  /** First backoff in ms; doubles each retry, with jitter. */
  backoffMs?: number;
  timeoutMs?: number;
  /**
   * The longest a command waits out the service's rate limit for one call, in
   * seconds (AMSG_MAX_WAIT; an hour by default): a longer Retry-After, or refusals
   * that go on longer, stop the command (RateLimitedError, exit 5).
   */
  maxWaitSeconds?: number;
}

/** Statuses worth another try for an idempotent call (the rate limit's answers are handled on their own). */
const RETRY_STATUSES = new Set([502, 503, 504]);
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE']);
/** Errors after which the request cannot have reached the server, so even a POST may be sent again. */
const CONNECT_ONLY = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** The longest Retry-After worth waiting for on a 502-504 inside one command. */
const MAX_RETRY_AFTER_MS = 30_000;

/** The default of AMSG_MAX_WAIT: how long one call may wait out the rate limit. */
export const DEFAULT_MAX_WAIT_SECONDS = 3600;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The real service's answer past its limit (403 with this error), or a 429 from a proxy in front of it. */
const isRateLimit = (status: number, body: unknown) =>
  status === 429 || (status === 403 && (body as { error?: string } | undefined)?.error === 'Rate Limit Exceeded');

/**
 * Paces calls to the service's rate limit once it has met it. The limit itself is
 * not announced (the real service allows 180 calls a minute and says only 403 past
 * it), so it is learnt from the refusals: the calls answered since the last wait
 * ended, over the time from then to the end of this one, is the rate the service
 * takes. Calls then go out evenly at a little under that rate (a token bucket of
 * one token), creeping up slowly so that a limit that was underestimated (another
 * client shared the window) is found again by the next refusal. While a wait is
 * under way every call waits with it: sending more would only be refused (and
 * amsg serve, like many services, counts refused calls against the limit too).
 */
export class Pacer {
  /** Calls per ms, once a refusal has been met. */
  private rate?: number;
  private nextAt = 0;
  /** Until when every call waits (a rate limit's Retry-After). */
  private blockedUntil = 0;
  /** When the calls counted in `answered` began: the first call, then the end of the last wait. */
  private since?: number;
  private answered = 0;

  constructor(private readonly now = () => Date.now()) {}

  /** The rate paced at, in calls a second (undefined: no refusal met yet). */
  get callsPerSecond(): number | undefined {
    return this.rate === undefined ? undefined : this.rate * 1000;
  }

  /** Waits for the call's turn. */
  async take(): Promise<void> {
    const now = this.now();
    this.since ??= now;
    let at = Math.max(now, this.blockedUntil);
    if (this.rate !== undefined) {
      at = Math.max(at, this.nextAt);
      this.nextAt = at + 1 / this.rate;
      // Creeps up about 9% over 180 calls: the limit is looked for again now and then.
      this.rate *= 1.0005;
    }
    if (at > now) await sleep(at - now);
  }

  /** A call was answered (not refused by the rate limit). */
  done(): void {
    this.answered++;
  }

  /**
   * A call was refused by the rate limit, to be retried after waitMs. Answers true
   * when this starts a wait (false: a call in flight met the same one), so that a
   * wait is told once.
   */
  limited(waitMs: number): boolean {
    const now = this.now();
    const until = now + waitMs;
    if (now < this.blockedUntil) {
      this.blockedUntil = Math.max(this.blockedUntil, until);
      return false;
    }
    // The calls the service took since the last wait, over the time they had.
    const span = until - (this.since ?? now);
    if (span > 0) this.rate = Math.max(1, this.answered - 1) / span;
    this.answered = 0;
    this.since = until;
    this.blockedUntil = until;
    this.nextAt = until;
    return true;
  }
}

/** The service over HTTP: an undici Pool with keep-alive, timeouts and retries with backoff. */
export class HttpTransport implements Transport {
  private readonly pool: PoolType;
  private readonly basePath: string;
  private readonly auth?: string;
  readonly pacer = new Pacer();
  private waitReporter?: WaitReporter;

  constructor(private readonly opts: HttpOptions) {
    const url = new URL(opts.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    const timeout = opts.timeoutMs ?? 30_000;
    this.pool = new Pool(url.origin, {
      connections: 8,
      keepAliveTimeout: 10_000,
      connectTimeout: Math.min(timeout, 10_000),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    if (opts.apiKey) this.auth = `Basic ${Buffer.from(opts.apiKey).toString('base64')}`;
  }

  get target() {
    return this.opts.baseUrl;
  }

  /** The server runs its jobs in the background. */
  readonly runsJobs = false;

  reportWaits(reporter: WaitReporter | undefined): WaitReporter | undefined {
    const before = this.waitReporter;
    this.waitReporter = reporter;
    return before;
  }

  async request(call: ApiCall): Promise<unknown> {
    const { res, text } = await this.exchange(call, true);
    const header = res.headers[WINDOW_CUT_HEADER];
    const cut = parseWindowCut(Array.isArray(header) ? header[0] : header);
    if (cut) this.onWindowCut?.(cut);
    return parse(text!);
  }

  onWindowCut?: (cut: WindowCut) => void;

  /** Streams a successful answer's body; an error answer is read and thrown as ApiError like any other. */
  async download(call: ApiCall): Promise<Download> {
    const { res } = await this.exchange(call, false, '*/*');
    const type = res.headers['content-type'];
    const disposition = String(res.headers['content-disposition'] ?? '');
    const filename = /filename="([^"]*)"/.exec(disposition)?.[1];
    const target = this.opts.baseUrl;
    async function* body(): AsyncIterable<Buffer> {
      try {
        for await (const chunk of res.body) yield chunk as Buffer;
      } catch (err) {
        throw new ConnectionError(`the download from ${target} broke off: ${describe(err)}`, err);
      }
    }
    return { contentType: Array.isArray(type) ? type[0] : (type ?? 'application/octet-stream'), filename, body: body() };
  }

  /**
   * Sends a call with retries, and answers the successful response (its text read
   * when readBody, else left to stream). Error answers are thrown as ApiError.
   */
  private async exchange(
    call: ApiCall,
    readBody: boolean,
    accept = 'application/json',
  ): Promise<{ res: Dispatcher.ResponseData; text?: string }> {
    const attempts = this.opts.attempts ?? 4;
    const idempotent = IDEMPOTENT.has(call.method) || call.repeatable === true;
    const maxWaitMs = (this.opts.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS) * 1000;
    // Checked before it is serialized: the service's own 400, not a stack overflow here.
    const sent = call.body === undefined ? undefined : JSON.stringify(boundedJson(call.body, ''));
    let waitedMs = 0;
    let refusals = 0;
    for (let attempt = 1; ; attempt++) {
      let res: Dispatcher.ResponseData;
      let text: string | undefined;
      await this.pacer.take();
      try {
        res = await this.send(call, sent, accept);
        if (readBody || res.statusCode >= 400) text = await res.body.text();
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        const retryable = idempotent || CONNECT_ONLY.has(code);
        if (retryable && attempt < attempts) {
          await sleep(this.backoff(attempt));
          continue;
        }
        throw new ConnectionError(`cannot reach ${this.opts.baseUrl}: ${describe(err)}`, err);
      }
      const status = res.statusCode;
      if (status < 400) {
        this.pacer.done();
        return { res, text };
      }
      const ra = Number(res.headers['retry-after']);
      const retryAfter = Number.isFinite(ra) && ra >= 0 ? ra : undefined;
      const body = parse(text!);
      if (isRateLimit(status, body)) {
        // Refused before it was done (the limit is checked first), so any call, a POST
        // too, is sent again once the wait is over. Such waits do not use up attempts.
        // A Retry-After of 0 is taken twice; after that the waits grow, so that a service
        // that keeps saying 0 is not hammered (and AMSG_MAX_WAIT ends it).
        const said = retryAfter === undefined || (retryAfter === 0 && refusals >= 2) ? undefined : retryAfter * 1000;
        const waitMs = said ?? this.unsaidWait(refusals);
        refusals++;
        if (waitMs > maxWaitMs || waitedMs + waitMs > maxWaitMs) throw this.stopped(waitMs, waitedMs, maxWaitMs, retryAfter);
        if (this.pacer.limited(waitMs)) this.waitReporter?.(Math.ceil(waitMs / 1000));
        waitedMs += waitMs;
        attempt--;
        continue;
      }
      this.pacer.done();
      if (idempotent && RETRY_STATUSES.has(status) && attempt < attempts) {
        // Retrying sooner than the server asked is refused again, so a longer wait is
        // the caller's to decide on: answer the error now instead of blocking.
        if (retryAfter === undefined || retryAfter * 1000 <= MAX_RETRY_AFTER_MS) {
          await sleep(retryAfter !== undefined ? retryAfter * 1000 : this.backoff(attempt));
          continue;
        }
      }
      throw ApiError.fromResponse(status, body);
    }
  }

  /** The rate limit asks for more waiting than a command may do. */
  private stopped(waitMs: number, waitedMs: number, maxWaitMs: number, retryAfter: number | undefined) {
    const max = `${Math.round(maxWaitMs / 1000)} s`;
    return new RateLimitedError(
      waitMs > maxWaitMs
        ? `the service's rate limit asks to wait ${Math.ceil(waitMs / 1000)} s, longer than the ${max} amsg waits (AMSG_MAX_WAIT)`
        : `the service's rate limit went on refusing after ${Math.round(waitedMs / 1000)} s of waiting, the most amsg waits (AMSG_MAX_WAIT=${Math.round(maxWaitMs / 1000)})`,
      retryAfter,
    );
  }

  /**
   * The wait on a rate-limit answer without Retry-After: doubling from 1 s (five
   * backoffs), at most a minute, the real service's window.
   */
  private unsaidWait(refusals: number) {
    return Math.min(60_000, (this.opts.backoffMs ?? 200) * 5 * 2 ** refusals);
  }

  private backoff(attempt: number) {
    const base = (this.opts.backoffMs ?? 200) * 2 ** (attempt - 1);
    return base / 2 + Math.random() * base;
  }

  private send(call: ApiCall, body: string | undefined, accept: string): Promise<Dispatcher.ResponseData> {
    const qs = new URLSearchParams(queryString(call.query)).toString();
    return undiciRequest.call(this.pool, {
      method: call.method,
      path: `${this.basePath}${call.path}${qs ? `?${qs}` : ''}`,
      headers: {
        accept,
        ...(this.auth ? { authorization: this.auth } : {}),
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body,
    });
  }

  async close() {
    await this.pool.close();
  }
}

function parse(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function describe(err: unknown): string {
  if (err instanceof UndiciError) return `${err.message} (${(err as { code?: string }).code})`;
  const e = err as { code?: string; message?: string };
  return e.code ? `${e.code}${e.message && !e.message.includes(e.code) ? ` ${e.message}` : ''}` : String(e.message ?? err);
}
