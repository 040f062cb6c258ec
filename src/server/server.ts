import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterCommit, commitTurn, type Db } from '../store/db.js';
import type { Clock } from '../service/clock.js';
import type { Actor } from '../service/context.js';
import type { ImportWriter } from '../service/imports/import-writer.js';
import { authenticate, initAccountId, isSandboxOwner } from '../service/accounts/accounts.js';
import { TableMemo } from '../store/memo.js';
import { Router, type ApiRequest, type ApiResponse } from '../api/router.js';
import { jsonText } from '../api/json-text.js';
import { openapiDocument } from '../api/openapi.js';
import { answerMailLink, isMailLink } from '../api/mail-links.js';
import { VERSION } from '../version.js';
import { INBOUND_LIMIT, tooLarge } from '../service/events/workflows.js';
import { parseQuery } from './query.js';
import { createConsole, type Console, type ConsoleOptions } from './console/index.js';

export const BODY_LIMIT = 10 * 1024 * 1024;

/** Event ingestion (`/v1/{account_id}/events`) takes the spec's smaller payload limit. */
const INGEST_PATH = /^\/v1\/[^/]+\/events\/?$/;
const bodyLimitOf = (path: string) => (INGEST_PATH.test(path) ? INBOUND_LIMIT : BODY_LIMIT);
const tooLargeBody = (limit: number, declared?: number) =>
  limit === BODY_LIMIT
    ? { status: 413, body: { error: `request body exceeds the 10 MB limit${declared === undefined ? '' : ` (${declared} bytes)`}` } }
    : { status: 413, body: tooLarge(declared).body };

/** A key pair's user by the Authorization header, read from the tables authenticate reads (its memo survives writes to any other). */
const KEY_PAIRS = new TableMemo<string, Actor | undefined>('auth', ['api_keys', 'users']);

export interface ServeOptions {
  db: Db;
  clock: Clock;
  host?: string;
  port?: number;
  /** Requests per API key per window (a minute, as the real service counts); 0 or undefined means no limit. */
  rateLimit?: number;
  /** The rate limit's window in ms (60,000 by default; tests use a short one). */
  rateLimitWindowMs?: number;
  /** Writes streamed-import batches on its own thread. */
  importWriter?: ImportWriter;
  /** Puts the database back in the state the server started with (`POST /_sandbox/reset`); absent: there is none. */
  sandboxReset?: () => Promise<void>;
  /** Unknown query and body keys answer 400 instead of being ignored (`amsg serve --strict`). */
  strict?: boolean;
  /** Where the log lines go (ignored parameters); stderr by default. */
  log?: (line: string) => void;
  /** The web console under /ui (docs/console-contract.md): on unless false (`amsg serve --no-console`). */
  console?: false | ConsoleOptions;
}

/** The sandbox-only route: not part of the service's interface, so not in the route table or openapi.json. */
export const SANDBOX_RESET_PATH = '/_sandbox/reset';

export interface RunningServer {
  url: string;
  server: http.Server;
  /** The console, unless it is off. */
  console?: Console;
  /** A fresh one-time console sign-in link (`console: …` on stderr), on a loopback address when the server listens on all. */
  consoleUrl?(): string;
  /** Whether no request has arrived for ms: background work that is not due (the e-mail search index) waits for that. */
  idleFor(ms: number): boolean;
  close(): Promise<void>;
}

/**
 * The real service's limit: so many calls per key in a fixed window (180 a minute),
 * then 403 `Rate Limit Exceeded` until the window ends, with Retry-After in whole
 * seconds. A refused call counts too, so a client that hammers stays out.
 */
class RateLimiter {
  private windowStart = 0;
  private counts = new Map<string, number>();
  constructor(
    private readonly perWindow: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds until the key may call again (at least 1), or 0 when this call is allowed. */
  hit(key: string, now: number): number {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.counts.clear();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n > this.perWindow ? Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000)) : 0;
  }
}

/** How long an over-limit upload may go on being read (and dropped) after its 413. */
const LINGER_MS = 2_000;

/**
 * Reads a request's body text and hands it to `then`, or answers 413 (and never calls
 * it). Listeners, not an async iterator: a small write's body is one chunk, and the
 * iterator's promises were a measurable share of a small write (bench/mixed.js).
 */
function readBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  lingering: Set<http.IncomingMessage>,
  limit: number,
  then: (body: string) => void,
  fail: (err: unknown) => void,
): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    refuseUpload(req, res, tooLargeBody(limit, declared), {}, lingering);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const detach = () => void req.off('data', onData).off('end', onEnd).off('error', onError);
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) return void chunks.push(chunk);
    // Stops collecting without destroying the request: see refuseUpload.
    detach();
    refuseUpload(req, res, tooLargeBody(limit), {}, lingering);
  };
  const onEnd = () => {
    detach();
    // In a listener, a throw would be the process's uncaught exception: it is the request's 500.
    try {
      then(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      fail(err);
    }
  };
  const onError = (err: Error) => {
    detach();
    fail(err);
  };
  req.on('data', onData).on('end', onEnd).on('error', onError);
}

/**
 * Answers a request whose body will not be read (over the limit), with
 * `connection: close`, and reads and drops the rest of the body for a while.
 *
 * Every answer says whether the connection stays open. One that says keep-alive
 * and is followed by a close makes a client that reuses the connection at that
 * moment see a reset (about 1 request in 10,000 of a busy client did). But node
 * destroys a `connection: close` socket as soon as the answer is written, and
 * closing a socket with the client's unsent bytes unread makes the kernel answer
 * them with a reset, so the client sees ECONNRESET instead of the 413. So the
 * socket is only half-closed when the answer is written (a FIN after it), the body
 * goes on being read, and the socket is closed once the body has ended (nothing
 * more is expected on this connection) or LINGER_MS have passed (an endless body);
 * close() does not wait for it.
 */
function refuseUpload(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: ApiResponse,
  headers: http.OutgoingHttpHeaders,
  lingering: Set<http.IncomingMessage>,
) {
  const socket = req.socket;
  socket.destroySoon = () => void socket.end();
  send(res, answer, { ...headers, connection: 'close' });
  lingering.add(req);
  let pending = 2; // the answer written, the body read
  const done = () => {
    if (--pending === 0) socket.destroy();
  };
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => {
    clearTimeout(linger);
    lingering.delete(req);
  });
  if (res.writableFinished) done();
  else res.once('finish', done);
  if (req.readableEnded) done();
  else req.once('end', done);
  req.resume();
}

/**
 * Answers a request before its body is read (no valid key, the rate limit). A body
 * of a declared length within the limit is dropped as it comes (node reads it
 * before the connection's next request); a chunked one is dropped before the
 * answer, so the answer can still say whether the connection stays open: past the
 * limit it does not, as after a 413.
 */
function answerUnread(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: ApiResponse,
  headers: http.OutgoingHttpHeaders,
  lingering: Set<http.IncomingMessage>,
) {
  if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) return refuseUpload(req, res, answer, headers, lingering);
  if (req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return send(res, answer, headers);
  }
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) return;
    req.off('data', onData).off('end', onEnd);
    refuseUpload(req, res, answer, headers, lingering);
  };
  // In a listener, a throw would end the process: the connection is cut instead.
  const onEnd = () => {
    try {
      send(res, answer, headers);
    } catch {
      res.destroy();
    }
  };
  req.on('data', onData).once('end', onEnd);
}

/**
 * A request node's HTTP parser refused (malformed, headers too large, too slow):
 * answered as JSON like every error, with `connection: close` (the parser cannot go
 * on), when no answer is under way on the connection; then the connection is closed.
 */
function refuseMalformed(err: NodeJS.ErrnoException, socket: Duplex) {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return void socket.destroy();
  const [status, error] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request took too long to arrive']
        : [400, `malformed HTTP request (${err.code ?? 'unparsable'}: ${(err as { reason?: string }).reason ?? err.message})`];
  const text = JSON.stringify({ error });
  // An answer to HEAD has no body (a client would read one as garbage after it).
  const head = (err as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  // Half-closed after the answer; the parser refuses whatever else comes, and that closes it.
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${head ? '' : text}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** An answer ready to be written: its body text encoded and its headers checked (prepare). */
interface Prepared {
  status: number;
  headers: http.OutgoingHttpHeaders;
  text: string;
}

/**
 * Encodes an answer and checks every header value as node would when writing it, so
 * that whatever cannot be written throws here, before anything is sent (and, for a
 * write, before the turn is committed: see respond).
 */
function prepare(r: ApiResponse, headers: http.OutgoingHttpHeaders = {}): Prepared {
  const text = jsonText(r.body);
  const all: http.OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  };
  // The answer's own headers (content-type, content-length) are always valid: only the
  // extra ones are checked, and most answers have none (a small request's cost).
  for (const name in headers) {
    const value = headers[name];
    http.validateHeaderName(name);
    if (value !== undefined) http.validateHeaderValue(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  return { status: r.status, headers: all, text };
}

function write(res: http.ServerResponse, p: Prepared) {
  res.writeHead(p.status, p.headers);
  res.end(p.text);
}

function send(res: http.ServerResponse, r: ApiResponse, headers: http.OutgoingHttpHeaders = {}) {
  if (r.raw) return; // streamed by the caller
  write(res, prepare(r, headers));
}

/** `attachment; filename="…"`, with RFC 6266's `filename*` when the name is not plain ASCII. */
function attachment(filename: string): string {
  const plain = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  if (plain === filename) return `attachment; filename="${filename}"`;
  const encoded = Array.from(Buffer.from(filename, 'utf8'), (b) =>
    /[A-Za-z0-9!#$&+.^_`|~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
  return `attachment; filename="${plain}"; filename*=UTF-8''${encoded}`;
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
  const router = new Router(opts.db, opts.clock, undefined, opts.importWriter, { strict: opts.strict });
  router.addAllRoutes();
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit, opts.rateLimitWindowMs) : undefined;
  const openapi = JSON.stringify(openapiDocument(router.routes, VERSION));
  const lingering = new Set<http.IncomingMessage>();

  /**
   * A 500 for a request whose answer could not be given, or a cut connection once part
   * of it was sent. Never throws: it runs where a throw would end the process (a
   * callback after the turn's commit, a stream's error).
   */
  const fail = (res: http.ServerResponse, err: unknown) => {
    try {
      if (!res.headersSent) return send(res, { status: 500, body: { error: `internal error: ${(err as Error)?.message ?? String(err)}` } });
    } catch {
      // Not even the 500 could be written: the connection is all there is left to end.
    }
    res.destroy();
  };

  /**
   * Routes an authenticated request and writes the answer (in this tick when the handler
   * is synchronous). `headers` are added to it (the console's).
   */
  const answer = (res: http.ServerResponse, request: ApiRequest, headers?: Record<string, string>) => {
    const pending = router.handle(request);
    if (!(pending instanceof Promise)) return void respond(res, pending, request, headers);
    pending.then((result) => respond(res, result, request, headers)).catch((err) => fail(res, err));
  };

  /**
   * Answers once the turn's writes are committed (commitPerTurn: at once on other
   * connections); a 500 if they could not be.
   *
   * The answer is encoded and its headers checked now, before the commit, not in the
   * callback after it: a write's answer that could not be given would otherwise be
   * found only once the write was kept. The turn's transaction holds the writes of
   * every request answered in this turn, so one request's writes cannot be taken back
   * alone once its handler returned; what can be done is to know before the commit,
   * and answer a 500 that says the changes were kept (and log it), never a silent one.
   * Header values built from request data (the ignored parameters' names) are encoded
   * by the router before the handler runs (headerSafeName), so this is the last guard.
   * `headers` are added to the answer (the console's).
   */
  const respond = (res: http.ServerResponse, result: ApiResponse, request: ApiRequest, headers?: Record<string, string>) => {
    let ready: Prepared | undefined;
    if (!result.raw)
      try {
        ready = prepare(result, headers ? { ...headers, ...result.headers } : result.headers);
      } catch (err) {
        const wrote = request.method !== 'GET' && result.status < 400;
        log(
          `${request.method} ${request.path}: the answer could not be written (${(err as Error).message})${wrote ? '; any changes it made were kept' : ''}`,
        );
        ready = prepare({
          status: 500,
          body: {
            error: `internal error: the answer could not be written (${(err as Error).message})${wrote ? '; the request was carried out, and any changes it made were kept' : ''}`,
          },
        });
      }
    afterCommit(opts.db, (failed) => {
      try {
        if (failed !== undefined) fail(res, failed);
        else respondNow(res, result, request, ready, headers);
      } catch (err) {
        fail(res, err);
      }
    });
  };

  const respondNow = (
    res: http.ServerResponse,
    result: ApiResponse,
    request: ApiRequest,
    ready: Prepared | undefined,
    headers?: Record<string, string>,
  ) => {
    // A misspelled parameter is ignored, as the real service does: the log says so.
    if (result.ignored)
      log(`${request.method} ${request.path}: ignored unknown parameters ${result.ignored.join(', ')} (amsg serve --strict refuses them)`);
    if (ready) return write(res, ready);
    const raw = result.raw!;
    res.writeHead(200, {
      ...headers,
      'content-type': raw.contentType,
      ...(raw.filename ? { 'content-disposition': attachment(raw.filename) } : {}),
    });
    const data = raw.data;
    pipeline(typeof data === 'string' || Buffer.isBuffer(data) ? Readable.from([data]) : Readable.from(data), res).catch((err) =>
      fail(res, err),
    );
  };

  const consoleApp =
    opts.console === false
      ? undefined
      : createConsole(
          {
            db: opts.db,
            router,
            answer,
            readBody: (req, res, limit, then) => readBody(req, res, lingering, limit, then, (err) => fail(res, err)),
            reserved: [SANDBOX_RESET_PATH],
            rateLimit: limiter && ((key) => limiter.hit(key, Date.now())),
          },
          opts.console,
        );

  // Not an async function: a GET with no body is answered without a promise, which
  // is a measurable share of a small request's cost (bench/RESULTS.md).
  // A server just started waits as if a request had just come: its first callers come first.
  let lastRequestAt = Date.now();
  const server = http.createServer((req, res) => {
    lastRequestAt = Date.now();
    try {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      // The raw path (still percent-encoded) goes to the router, which decodes each
      // segment once: an e-mail with %40 or a raw @, and a + stays a plus.
      const rawPath = q < 0 ? target : target.slice(0, q);
      // The console has its own sign-in (a session cookie), so it comes before the key check.
      if (rawPath === '/ui' || rawPath.startsWith('/ui/')) {
        if (consoleApp) return consoleApp.handle(req, res, rawPath, q < 0 ? '' : target.slice(q + 1));
        req.resume();
        return send(res, { status: 404, body: { error: 'the console is off (amsg serve --no-console)' } });
      }
      // The interface description is public; everything else needs a key pair.
      if (req.method === 'GET' && rawPath === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        return void res.end(openapi);
      }
      // An opt-in confirmation's links are followed from a mail client, with no key.
      if (isMailLink(rawPath)) {
        req.resume();
        const answer = answerMailLink(opts.db, opts.clock, req.method ?? 'GET', rawPath);
        return void afterCommit(opts.db, () => {
          res.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8', ...(answer.allow ? { allow: answer.allow } : {}) });
          res.end(answer.html);
        });
      }
      const header = req.headers.authorization;
      // A known pair is not decoded and hashed again until a key or a user changes (a
      // revoked key does) or another connection commits (looked for once per turn of the
      // event loop: checkOncePerTurn), which keeps the key check
      // off every request's cost, a write's too.
      const actor =
        header &&
        KEY_PAIRS.get(opts.db, header, () => {
          const creds = credentials(header);
          return creds && authenticate(opts.db, creds[0], creds[1]);
        });
      if (!actor)
        return answerUnread(
          req,
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
          lingering,
        );
      // Counted per public key, however the header spells it.
      const wait = limiter?.hit(credentials(header!)![0], Date.now());
      if (wait)
        return answerUnread(req, res, { status: 403, body: { error: 'Rate Limit Exceeded' } }, { 'retry-after': String(wait) }, lingering);
      if (rawPath === SANDBOX_RESET_PATH) return sandboxReset(req, res, actor);
      const query = q >= 0 ? parseQuery(target.slice(q + 1)) : {};
      const request = { method: req.method ?? 'GET', path: rawPath, query, body: '', actor };
      // Most GETs carry no body at all: skip the read loop for them.
      if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return answer(res, request);
      readBody(
        req,
        res,
        lingering,
        bodyLimitOf(rawPath),
        (body) => answer(res, { ...request, body }),
        (err) => fail(res, err),
      );
    } catch (err) {
      fail(res, err);
    }
  });
  /**
   * `POST /_sandbox/reset`: the sandbox owner's key only (it replaces every account's data, so
   * not a sub-account owner's, who owns one account of it),
   * answered once the starting state is back. Requests that arrive meanwhile wait on
   * SQLite's lock and then see the restored state.
   */
  const sandboxReset = (req: http.IncomingMessage, res: http.ServerResponse, actor: Actor) => {
    req.resume();
    if (req.method !== 'POST') return send(res, { status: 405, body: { error: `${SANDBOX_RESET_PATH} takes POST` } }, { allow: 'POST' });
    if (!isSandboxOwner(opts.db, actor))
      return send(res, {
        status: 403,
        body: {
          error: `forbidden: ${SANDBOX_RESET_PATH} needs the key of the sandbox's owner, an owner of account ${initAccountId(opts.db)} (the account amsg init made): it restores every account`,
          access: 'sandbox owner',
        },
      });
    if (!opts.sandboxReset)
      return send(res, {
        status: 409,
        body: {
          error: 'this server has no starting state to reset to: start it with --seed FILE or --snapshot FILE (or on a new database file)',
        },
      });
    // The turn's writes first: the restore takes the write lock from another connection.
    commitTurn(opts.db);
    // A throw in the answer is the request's 500 too, not an unhandled rejection (which ends node).
    opts
      .sandboxReset()
      .then(() => send(res, { status: 200, body: true }))
      .catch((err) => fail(res, err));
  };

  server.keepAliveTimeout = 5_000;
  server.on('clientError', refuseMalformed);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  // Listening on every address: the link a person on this machine opens is the loopback one.
  const local = addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address === '::' ? '[::1]' : host;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    console: consoleApp,
    consoleUrl: consoleApp && (() => consoleApp.signInUrl(`http://${local}:${addr.port}`)),
    idleFor: (ms) => Date.now() - lastRequestAt >= ms,
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
        for (const req of lingering) req.socket.destroy();
        // An open event stream is never idle: end it.
        consoleApp?.close();
      }),
  };
}
