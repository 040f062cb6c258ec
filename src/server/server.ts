import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../store/db.js';
import type { Clock } from '../service/clock.js';
import type { ImportWriter } from '../service/import-writer.js';
import { authenticate } from '../service/accounts.js';
import { memo } from '../store/memo.js';
import { Router, type ApiRequest, type ApiResponse } from '../api/router.js';
import { openapiDocument } from '../api/openapi.js';
import { VERSION } from '../version.js';

export const BODY_LIMIT = 10 * 1024 * 1024;

export interface ServeOptions {
  db: Db;
  clock: Clock;
  host?: string;
  port?: number;
  /** Requests per API key per minute; 0 or undefined means no limit. */
  rateLimit?: number;
  /** Writes streamed-import batches on its own thread. */
  importWriter?: ImportWriter;
}

export interface RunningServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

class RateLimiter {
  private windowStart = 0;
  private counts = new Map<string, number>();
  constructor(private readonly perMinute: number) {}

  /** Seconds until the key may call again, or 0 when this call is allowed. */
  hit(key: string, now: number): number {
    if (now - this.windowStart >= 60_000) {
      this.windowStart = now;
      this.counts.clear();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n > this.perMinute ? Math.ceil((this.windowStart + 60_000 - now) / 1000) : 0;
  }
}

/** How long an over-limit upload may go on being read (and dropped) after its 413. */
const LINGER_MS = 2_000;

/** Answers a request's body text, or undefined once it has answered 413. */
async function readBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  lingering: Set<http.IncomingMessage>,
): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > BODY_LIMIT) {
    send(res, { status: 413, body: { error: `request body exceeds the 10 MB limit (${declared} bytes)` } });
    discardRest(req, res, lingering);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop must not destroy the request: see discardRest.
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) {
      send(res, { status: 413, body: { error: 'request body exceeds the 10 MB limit' } });
      discardRest(req, res, lingering);
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads and drops the rest of a refused upload for a while. Closing the socket at once
 * (or answering `connection: close`, which makes node close it) leaves the client's
 * unsent bytes unread, the kernel answers them with a reset, and the client sees
 * ECONNRESET instead of the 413. So the answer is followed by a half-close, which
 * tells the client not to reuse the connection while we go on reading; the timer
 * bounds an endless body, and close() does not wait for it.
 */
function discardRest(req: http.IncomingMessage, res: http.ServerResponse, lingering: Set<http.IncomingMessage>) {
  const linger = setTimeout(() => req.destroy(), LINGER_MS);
  linger.unref();
  lingering.add(req);
  req.once('close', () => {
    clearTimeout(linger);
    lingering.delete(req);
  });
  res.once('finish', () => req.socket.end());
  req.resume();
}

function send(res: http.ServerResponse, r: ApiResponse, headers: http.OutgoingHttpHeaders = {}) {
  if (r.raw) return; // streamed by the caller
  const text = JSON.stringify(r.body);
  res.writeHead(r.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function credentials(header: string | undefined): [string, string] | undefined {
  const m = header && /^Basic\s+(\S+)$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? [decoded.slice(0, colon), decoded.slice(colon + 1)] : undefined;
}

/** The service on HTTP: Basic auth with key pairs, JSON bodies whatever the Content-Type, JSON errors. */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const router = new Router(opts.db, opts.clock, undefined, opts.importWriter);
  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit) : undefined;
  const openapi = JSON.stringify(openapiDocument(router.routes, VERSION));
  const lingering = new Set<http.IncomingMessage>();

  const fail = (res: http.ServerResponse, err: unknown) => {
    if (!res.headersSent) send(res, { status: 500, body: { error: `internal error: ${(err as Error).message}` } });
    else res.destroy();
  };

  /** Routes an authenticated request and writes the answer (in this tick when the handler is synchronous). */
  const answer = (req: http.IncomingMessage, res: http.ServerResponse, request: ApiRequest) => {
    const pending = router.handle(request);
    if (!(pending instanceof Promise)) return void respond(res, pending);
    pending.then((result) => respond(res, result)).catch((err) => fail(res, err));
  };

  const respond = (res: http.ServerResponse, result: ApiResponse) => {
    if (!result.raw) return send(res, result, result.headers);
    const raw = result.raw;
    res.writeHead(200, {
      'content-type': raw.contentType,
      ...(raw.filename ? { 'content-disposition': `attachment; filename="${raw.filename}"` } : {}),
    });
    const data = raw.data;
    pipeline(typeof data === 'string' || Buffer.isBuffer(data) ? Readable.from([data]) : Readable.from(data), res).catch(
      (err) => fail(res, err),
    );
  };

  // Not an async function: a GET with no body is answered without a promise, which
  // is a measurable share of a small request's cost (bench/RESULTS.md).
  const server = http.createServer((req, res) => {
    try {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      // The raw path (still percent-encoded) goes to the router, which decodes each
      // segment once: an e-mail with %40 or a raw @, and a + stays a plus.
      const rawPath = q < 0 ? target : target.slice(0, q);
      // The interface description is public; everything else needs a key pair.
      if (req.method === 'GET' && rawPath === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        return void res.end(openapi);
      }
      const header = req.headers.authorization;
      // A known pair is not decoded and hashed again until the database changes (a
      // revoked key changes it), which keeps the key check off every request's cost.
      const actor =
        header &&
        memo(opts.db, `auth:${header}`, () => {
          const creds = credentials(header);
          return creds && authenticate(opts.db, creds[0], creds[1]);
        });
      if (!actor) {
        req.resume();
        return send(
          res,
          {
            status: 401,
            body: {
              error: credentials(header)
                ? 'invalid API key pair'
                : 'authentication required: HTTP Basic with your public key as user name and private key as password',
            },
          },
          { 'www-authenticate': 'Basic realm="amsg"' },
        );
      }
      // Counted per public key, however the header spells it.
      const wait = limiter?.hit(credentials(header!)![0], Date.now());
      if (wait) {
        req.resume();
        return send(res, { status: 403, body: { error: 'Rate Limit Exceeded' } }, { 'retry-after': String(wait) });
      }
      const query: Record<string, string> = {};
      if (q >= 0) for (const [k, v] of new URLSearchParams(target.slice(q + 1))) query[k] = v;
      const request = { method: req.method ?? 'GET', path: rawPath, query, body: '', actor };
      // Most GETs carry no body at all: skip the read loop for them.
      if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
        return answer(req, res, request);
      readBody(req, res, lingering)
        .then((body) => body !== undefined && answer(req, res, { ...request, body }))
        .catch((err) => fail(res, err));
    } catch (err) {
      fail(res, err);
    }
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        // close() drops only the connections idle at that moment; one whose request
        // is still in flight becomes idle when it is answered, so keep sweeping
        // until the server has closed instead of waiting out the keep-alive timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 25);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
        for (const req of lingering) req.destroy();
      }),
  };
}
