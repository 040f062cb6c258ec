import '../liftoff-only.js';
import type { Dispatcher, Pool as PoolType } from 'undici';
// The parts of undici a call needs, not its index: the index also loads fetch, the
// mock agent, caches and WebSocket, half of what a remote command spent starting.
import Pool from 'undici/lib/dispatcher/pool.js';
import undiciRequest from 'undici/lib/api/api-request.js';
import { UndiciError } from 'undici/lib/core/errors.js';

import { ApiError, boundedJson, parseWindowCut, WINDOW_CUT_HEADER, type WindowCut } from '../errors.js';
import { ConnectionError, queryString, type ApiCall, type Download, type Transport } from './transport.js';

export interface HttpOptions {
  baseUrl: string;
  /** `public:private` */
  apiKey?: string;
  /** Attempts for a retryable call, the first included. */
  attempts?: number;
  /** First backoff in ms; doubles each retry, with jitter. */
  backoffMs?: number;
  timeoutMs?: number;
}

/** Statuses worth another try for an idempotent call (403 only with the rate-limit body). */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE']);
/** Errors after which the request cannot have reached the server, so even a POST may be sent again. */
const CONNECT_ONLY = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** The longest Retry-After worth waiting for inside one command. */
const MAX_RETRY_AFTER_MS = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service over HTTP: an undici Pool with keep-alive, timeouts and retries with backoff. */
export class HttpTransport implements Transport {
  private readonly pool: PoolType;
  private readonly basePath: string;
  private readonly auth?: string;

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
    const idempotent = IDEMPOTENT.has(call.method);
    // Checked before it is serialized: the service's own 400, not a stack overflow here.
    const sent = call.body === undefined ? undefined : JSON.stringify(boundedJson(call.body, ''));
    for (let attempt = 1; ; attempt++) {
      let res: Dispatcher.ResponseData;
      let text: string | undefined;
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
      if (status < 400) return { res, text };
      const ra = Number(res.headers['retry-after']);
      const retryAfter = Number.isFinite(ra) && ra >= 0 ? ra : undefined;
      const body = parse(text!);
      const rateLimited = status === 403 && (body as { error?: string })?.error === 'Rate Limit Exceeded';
      if (idempotent && (RETRY_STATUSES.has(status) || rateLimited) && attempt < attempts) {
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
