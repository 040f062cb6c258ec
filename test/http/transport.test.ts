/**
 * The HTTP transport against small fake servers (retries, backoff, errors), and the
 * two transports side by side: the same calls must answer the same locally and over HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpTransport, Pacer } from '../../src/client/http-transport.js';
import { LocalTransport, initLocalDatabase } from '../../src/client/local-transport.js';
import { ConnectionError, RateLimitedError, type ApiCall, type Transport } from '../../src/client/transport.js';
import { connect, seg, type Api } from '../../src/client/api.js';
import { ApiError } from '../../src/errors.js';
import { serve } from '../../src/server/index.js';

// ------------------------------------------------------------------ fake servers

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Reply = (req: Seen, n: number, res: http.ServerResponse) => void;

interface Fake {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

const servers: http.Server[] = [];
const transports: Transport[] = [];

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

/** A server that records each request and lets `reply` answer the n-th (1-based). */
async function fake(reply: Reply, port = 0): Promise<Fake> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      reply(s, seen.length, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${actual}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function answer(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Fails the first `failures` requests with `status` (and body), then answers `ok`. */
function failThen(failures: number, status: number, body: unknown = { error: 'try later' }, ok: unknown = { ok: 1 }, headers = {}): Reply {
  return (_req, n, res) => (n <= failures ? answer(res, status, body, headers) : answer(res, 200, ok));
}

function transport(url: string, opts: Partial<ConstructorParameters<typeof HttpTransport>[0]> = {}) {
  const t = new HttpTransport({ baseUrl: url, apiKey: 'pub:priv', backoffMs: 5, ...opts });
  transports.push(t);
  return t;
}

/** A port that was free a moment ago and has nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

const GET: ApiCall = { method: 'GET', path: '/1/members' };

// ------------------------------------------------------------------ requests

describe('HttpTransport requests', () => {
  it('sends Basic auth, JSON bodies, the base path and the query string, and answers parsed JSON', async () => {
    const f = await fake((_req, _n, res) => answer(res, 200, [{ member_id: 1 }]));
    const t = transport(`${f.url}/api/`);
    const answerOf = await t.request({
      method: 'POST',
      path: '/1/members/add',
      query: { start: 0, count: true, skipped: undefined },
      body: { email: 'a@x.org' },
    });
    expect(answerOf).toEqual([{ member_id: 1 }]);
    expect(f.seen).toHaveLength(1);
    const [req] = f.seen;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/api/1/members/add?start=0&count=true');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('pub:priv').toString('base64')}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ email: 'a@x.org' });
  });

  it('sends no Content-Type and no body when the call has none, and no auth without a key', async () => {
    const f = await fake((_req, _n, res) => answer(res, 200, true));
    const t = transport(f.url, { apiKey: undefined });
    expect(await t.request(GET)).toBe(true);
    expect(f.seen[0].headers).not.toHaveProperty('content-type');
    expect(f.seen[0].headers).not.toHaveProperty('authorization');
    expect(f.seen[0].body).toBe('');
  });

  it('answers bare scalars as they are', async () => {
    const f = await fake((_req, n, res) => answer(res, 200, n === 1 ? '42' : n === 2 ? 'true' : '"text"'));
    const t = transport(f.url);
    expect(await t.request(GET)).toBe(42);
    expect(await t.request(GET)).toBe(true);
    expect(await t.request(GET)).toBe('text');
  });

  it('keeps the e-mail in an encoded path as it is', async () => {
    const f = await fake((_req, _n, res) => answer(res, 200, true));
    const t = transport(f.url);
    await t.request({ method: 'PUT', path: `/1/members/email/optout/${seg('a+b@x.org')}` });
    expect(f.seen[0].url).toBe('/1/members/email/optout/a%2Bb%40x.org');
  });

  it('throws ApiError with the status and the whole error body', async () => {
    const f = await fake((_req, _n, res) => answer(res, 400, { error: 'email: is required', field: 'email' }));
    const err = await rejection(transport(f.url).request({ method: 'POST', path: '/1/members/add', body: {} }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.message).toBe('email: is required');
    expect(err.body).toEqual({ error: 'email: is required', field: 'email' });
  });

  it('throws ApiError with the text of a non-JSON error, or the status when there is none', async () => {
    const f = await fake((_req, n, res) => {
      res.writeHead(n === 1 ? 418 : 409, { 'content-type': 'text/plain' });
      res.end(n === 1 ? 'short and stout' : '');
    });
    const t = transport(f.url);
    const teapot = await rejection(t.request({ method: 'POST', path: '/x' }));
    expect(teapot).toBeInstanceOf(ApiError);
    expect(teapot.status).toBe(418);
    expect(teapot.body).toEqual({ error: 'short and stout' });
    const empty = await rejection(t.request({ method: 'POST', path: '/x' }));
    expect(empty.status).toBe(409);
    expect(empty.body).toEqual({ error: 'HTTP 409' });
  });
});

// ------------------------------------------------------------------ retries

describe('HttpTransport retries', () => {
  it.each([
    ['GET', 503],
    ['GET', 502],
    ['GET', 504],
    ['GET', 429],
    ['PUT', 503],
    ['DELETE', 503],
    ['PUT', 429],
  ] as const)('retries %s on %i and answers the later success', async (method, status) => {
    const f = await fake(failThen(2, status));
    const result = await transport(f.url).request({ method, path: '/1/thing', body: method === 'PUT' ? { a: 1 } : undefined });
    expect(result).toEqual({ ok: 1 });
    expect(f.seen.map((s) => s.method)).toEqual([method, method, method]);
    // A retried PUT sends the same body every time.
    if (method === 'PUT') expect(f.seen.map((s) => s.body)).toEqual(Array(3).fill('{"a":1}'));
  });

  it('retries on the 403 that says Rate Limit Exceeded', async () => {
    const f = await fake(failThen(1, 403, { error: 'Rate Limit Exceeded' }, [1, 2]));
    expect(await transport(f.url).request(GET)).toEqual([1, 2]);
    expect(f.seen).toHaveLength(2);
  });

  it('does not retry any other 403', async () => {
    const f = await fake(failThen(1, 403, { error: 'only owners may do this' }));
    const err = await rejection(transport(f.url).request(GET));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
    expect(err.body).toEqual({ error: 'only owners may do this' });
    expect(f.seen).toHaveLength(1);
  });

  it.each([400, 401, 404, 409, 500])('does not retry a %i', async (status) => {
    const f = await fake(failThen(1, status, { error: `no (${status})` }));
    const err = await rejection(transport(f.url).request(GET));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(status);
    expect(err.body).toEqual({ error: `no (${status})` });
    expect(f.seen).toHaveLength(1);
  });

  it.each([503, 502])('does not retry a POST on %i: it may have been carried out', async (status) => {
    const f = await fake(failThen(1, status));
    const err = await rejection(transport(f.url).request({ method: 'POST', path: '/1/members/add', body: { email: 'a@x.org' } }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(status);
    expect(err.body).toEqual({ error: 'try later' });
    expect(f.seen).toHaveLength(1);
  });

  it.each([
    [403, { error: 'Rate Limit Exceeded' }],
    [429, { error: 'slow down' }],
  ])('sends a POST again after the rate limit refused it (%i): it was refused before it was carried out', async (status, body) => {
    const f = await fake(failThen(1, status, body, 7, { 'retry-after': '0' }));
    expect(await transport(f.url).request({ method: 'POST', path: '/1/fields', body: { a: 1 } })).toBe(7);
    expect(f.seen.map((r) => [r.method, r.body])).toEqual(Array(2).fill(['POST', '{"a":1}']));
  });

  it('sends a repeatable POST again after a 503 or a broken connection, as it does a GET', async () => {
    const f = await fake((_req, n, res) =>
      n === 1 ? res.socket!.destroy() : n === 2 ? answer(res, 503, { error: 'busy' }) : answer(res, 200, 1),
    );
    const call: ApiCall = { method: 'POST', path: '/1/members/imports/3/rows', body: { offset: 0 }, repeatable: true };
    expect(await transport(f.url).request(call)).toBe(1);
    expect(f.seen.map((r) => r.body)).toEqual(Array(3).fill('{"offset":0}'));
  });

  it('does not retry a plain POST on a broken connection: it may have been carried out', async () => {
    const f = await fake((_req, _n, res) => res.socket!.destroy());
    const err = await rejection(transport(f.url).request({ method: 'POST', path: '/1/members/add', body: { email: 'a@x.org' } }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(f.seen).toHaveLength(1);
  });

  it('gives up after the configured attempts and throws the last answer', async () => {
    const f = await fake((_req, n, res) => answer(res, 503, { error: `busy ${n}` }));
    const err = await rejection(transport(f.url, { attempts: 3 }).request(GET));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(err.body).toEqual({ error: 'busy 3' });
    expect(f.seen).toHaveLength(3);
  });

  it('tries once with attempts: 1', async () => {
    const f = await fake(failThen(5, 503));
    expect((await rejection(transport(f.url, { attempts: 1 }).request(GET))).status).toBe(503);
    expect(f.seen).toHaveLength(1);
  });

  it('waits as long as a small Retry-After says, not the backoff', async () => {
    // The backoff alone would wait about a minute; Retry-After: 1 must win.
    const f = await fake(failThen(1, 503, { error: 'busy' }, { ok: 1 }, { 'retry-after': '1' }));
    const started = Date.now();
    expect(await transport(f.url, { backoffMs: 60_000 }).request(GET)).toEqual({ ok: 1 });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(5_000);
    expect(f.seen).toHaveLength(2);
  });

  it('retries at once on Retry-After: 0', async () => {
    const f = await fake(failThen(2, 429, { error: 'slow down' }, { ok: 1 }, { 'retry-after': '0' }));
    const started = Date.now();
    expect(await transport(f.url, { backoffMs: 60_000 }).request(GET)).toEqual({ ok: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(f.seen).toHaveLength(3);
  });

  it('waits out the rate limit for as long as Retry-After says (a POST too), and says so once', async () => {
    const f = await fake(failThen(1, 403, { error: 'Rate Limit Exceeded' }, 5, { 'retry-after': '2' }));
    const t = transport(f.url);
    const told: number[] = [];
    t.reportWaits((s) => told.push(s));
    const started = Date.now();
    expect(await t.request({ method: 'POST', path: '/1/members/add', body: { email: 'a@x.org' } })).toBe(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_950);
    expect(told).toEqual([2]);
    expect(f.seen).toHaveLength(2);
  });

  it('stops with RateLimitedError at once when Retry-After asks for longer than AMSG_MAX_WAIT allows', async () => {
    const f = await fake(failThen(1, 403, { error: 'Rate Limit Exceeded' }, { ok: 1 }, { 'retry-after': '45' }));
    const started = Date.now();
    const err = await rejection(transport(f.url, { maxWaitSeconds: 30 }).request(GET));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.message).toBe("the service's rate limit asks to wait 45 s, longer than the 30 s amsg waits (AMSG_MAX_WAIT)");
    expect(err.retryAfterSeconds).toBe(45);
    expect(f.seen).toHaveLength(1);
  });

  it('a service that keeps saying Retry-After: 0 is not hammered: the waits grow, and AMSG_MAX_WAIT ends them', async () => {
    const f = await fake((_req, _n, res) => answer(res, 429, { error: 'slow down' }, { 'retry-after': '0' }));
    const err = await rejection(transport(f.url, { backoffMs: 100, maxWaitSeconds: 2 }).request(GET));
    expect(err).toBeInstanceOf(RateLimitedError);
    // Two at once, then a wait of 2 s (the backoff, grown); the next (4 s) would pass the 2 s allowed.
    expect(f.seen).toHaveLength(4);
  });

  it('stops when the refusals go on for longer than AMSG_MAX_WAIT in all', async () => {
    const f = await fake((_req, _n, res) => answer(res, 403, { error: 'Rate Limit Exceeded' }, { 'retry-after': '1' }));
    const err = await rejection(transport(f.url, { maxWaitSeconds: 2 }).request(GET));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.message).toMatch(/went on refusing after 2 s of waiting/);
    expect(f.seen).toHaveLength(3);
  });

  it('uses the backoff when Retry-After is not a number of seconds', async () => {
    const f = await fake(failThen(1, 503, { error: 'busy' }, { ok: 1 }, { 'retry-after': 'Wed, 21 Oct 2099 07:28:00 GMT' }));
    const started = Date.now();
    expect(await transport(f.url).request(GET)).toEqual({ ok: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

// ------------------------------------------------------------------ pacing

describe('Pacer', () => {
  /** A pacer on a clock the test moves; take() answers how long it would have slept. */
  const paced = () => {
    let now = 1_000_000;
    const pacer = new Pacer(() => now);
    const take = async () => {
      const before = now;
      const slept = vi.spyOn(globalThis, 'setTimeout');
      await Promise.race([pacer.take(), new Promise((r) => setImmediate(r))]);
      const ms = slept.mock.calls.length ? Number(slept.mock.calls[0][1]) : 0;
      slept.mockRestore();
      now = Math.max(now, before + ms);
      return ms;
    };
    return { pacer, take, advance: (ms: number) => (now += ms) };
  };

  it('does not pace before the first refusal', async () => {
    const { pacer, take } = paced();
    for (let i = 0; i < 50; i++) expect(await take()).toBe(0);
    expect(pacer.callsPerSecond).toBeUndefined();
  });

  it('learns the rate from the calls answered before the refusal and the wait, and spaces calls to it', async () => {
    const { pacer, take, advance } = paced();
    // 30 calls answered in 0.5 s, then refused with a wait of 1.5 s: 29 calls in 2 s.
    for (let i = 0; i < 30; i++) {
      await take();
      pacer.done();
      advance(500 / 30);
    }
    expect(pacer.limited(1_500)).toBe(true);
    // A call in flight meets the same wait: told once.
    expect(pacer.limited(1_400)).toBe(false);
    expect(pacer.callsPerSecond).toBeCloseTo(14.5, 1);
    // Every call waits for the end of the wait, then they go about 69 ms apart.
    expect(await take()).toBe(1_500);
    const gap = await take();
    expect(gap).toBeGreaterThan(60);
    expect(gap).toBeLessThan(70);
  });
});

// ------------------------------------------------------------------ connection failures

describe('HttpTransport connection failures', () => {
  it('retries on connection refused and finally throws ConnectionError naming the URL', async () => {
    const port = await closedPort();
    const t = transport(`http://127.0.0.1:${port}`, { attempts: 3 });
    const err = await rejection(t.request(GET));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).not.toBeInstanceOf(ApiError);
    expect(err.message).toMatch(new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it.each(['GET', 'POST'] as const)('a %s that was refused reaches the server once it is up', async (method) => {
    // Refused means the request never left, so even a POST may go again.
    const port = await closedPort();
    const t = transport(`http://127.0.0.1:${port}`, { attempts: 5, backoffMs: 100 });
    const pending = t.request({ method, path: '/1/members/add', body: method === 'POST' ? { email: 'a@x.org' } : undefined });
    await new Promise((r) => setTimeout(r, 20));
    const f = await fake((_req, _n, res) => answer(res, 200, { member_id: 7 }), port);
    expect(await pending).toEqual({ member_id: 7 });
    expect(f.seen.map((s) => s.method)).toEqual([method]);
  });

  it('retries a GET whose connection was dropped, but not a POST', async () => {
    const dropFirst: Reply = (_req, n, res) => (n === 1 ? res.socket!.destroy() : answer(res, 200, { ok: n }));
    const f = await fake(dropFirst);
    expect(await transport(f.url).request(GET)).toEqual({ ok: 2 });
    expect(f.seen).toHaveLength(2);

    const g = await fake(dropFirst);
    const err = await rejection(transport(g.url).request({ method: 'POST', path: '/1/members/add', body: { email: 'a@x.org' } }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toMatch(new RegExp(`^cannot reach ${g.url}: `));
    expect(g.seen).toHaveLength(1);
  });

  it('times out a server that never answers, as a ConnectionError', async () => {
    const f = await fake(() => undefined);
    const err = await rejection(transport(f.url, { timeoutMs: 200, attempts: 2 }).request(GET));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(f.seen).toHaveLength(2);
  });

  it('LocalTransport: a missing database file is a ConnectionError that says how to make one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-local-'));
    try {
      const t = new LocalTransport(join(dir, 'missing.db'), 1);
      const err = await rejection(t.request(GET));
      expect(err).toBeInstanceOf(ConnectionError);
      expect(err.message).toBe(`no amsg database at ${join(dir, 'missing.db')}`);
      // The fix is local (not the remote one of checking the base URL): said by the CLI after the message.
      expect((err as ConnectionError).hint).toBe('\n  create one here with `amsg init`, or name an existing one with --db FILE (AMSG_DB)');
      await t.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ------------------------------------------------------------------ parity

describe('local and HTTP transports answer alike', () => {
  const NOW = '2026-05-06T07:08:09Z';
  let dir: string;
  let running: Awaited<ReturnType<typeof serve>>;
  let local: Api;
  let remote: Api;

  beforeEach(async () => {
    vi.stubEnv('AMSG_NOW', NOW);
    dir = mkdtempSync(join(tmpdir(), 'amsg-parity-'));
    running = await serve({ db: join(dir, 'served.db'), host: '127.0.0.1', port: 0 });
    expect(running.created).toBeDefined();
    const init = await initLocalDatabase(join(dir, 'local.db'), {});
    expect(init.created).toBe(true);
    remote = await connect({
      mode: 'remote',
      baseUrl: running.url,
      apiKey: `${running.created!.public_key}:${running.created!.private_key}`,
      db: 'unused.db',
      account: 1,
      profile: 'default',
    });
    local = await connect({ mode: 'local', db: join(dir, 'local.db'), account: 1, profile: 'default' });
  });

  afterEach(async () => {
    await remote.close();
    await local.close();
    await running.close();
    vi.unstubAllEnvs();
    rmSync(dir, { recursive: true, force: true });
  });

  type Outcome = { ok: unknown } | { status: number; body: unknown; name: string };

  async function outcome(p: Promise<unknown>): Promise<Outcome> {
    try {
      return { ok: await p };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return { status: err.status, body: err.body, name: err.name };
    }
  }

  /** The same scenario on one Api; answers every outcome in order. */
  async function scenario(api: Api): Promise<Outcome[]> {
    const out: Outcome[] = [];
    const run = async (p: Promise<unknown>) => out.push(await outcome(p));
    await run(api.post('/fields', { shortcut_name: 'city', field_type: 'text', display_name: 'City' }));
    await run(api.post('/fields', { shortcut_name: 'city', field_type: 'text', display_name: 'Again' }));
    await run(api.post('/fields', { shortcut_name: '9lives', field_type: 'text', display_name: 'X' }));
    await run(
      api.post('/fields', {
        shortcut_name: 'tier',
        field_type: 'text',
        display_name: 'Tier',
        widget_type: 'select one',
        options: ['gold', 'silver'],
      }),
    );
    await run(api.get('/fields'));
    await run(api.post('/members/add', { email: 'A+B@X.org', fields: { city: 'Oslo' } }));
    await run(api.post('/members/add', { email: 'c@x.org', fields: { tier: 'bronze' } }));
    await run(api.post('/members/add', { email: 'c@x.org' }));
    await run(api.post('/members/add', { email: 'not-an-address' }));
    await run(api.post('/members/add', { email: 'd@x.org', unknown_key: 1 }));
    await run(api.get(`/members/email/${seg('a+b@x.org')}`));
    await run(api.get(`/members/email/${seg('nobody@x.org')}`));
    await run(api.get('/members', { start: 0, end: 10 }));
    await run(api.get('/members', { count: true }));
    await run(api.get('/members', { start: 'x' }));
    await run(api.get('/members/999'));
    await run(api.put(`/members/email/optout/${seg('c@x.org')}`));
    await run(api.get('/members/2'));
    await run(api.get('/members/2/optout'));
    await run(api.post('/groups', { groups: [{ group_name: 'Alpha' }, { group_name: 'Beta' }] }));
    await run(api.get('/groups'));
    await run(api.put('/members/1/groups', { group_ids: [1, 2] }));
    await run(api.put('/members/1/groups', { group_ids: [99] }));
    await run(api.get('/members/1/groups'));
    await run(api.put('/members/status', { member_ids: [1], status_to: 'o' }));
    await run(api.delete('/members/1'));
    await run(api.get('/members/1'));
    await run(api.get('/members/1', { deleted: true }));
    await run(api.request('PATCH', '/members'));
    await run(api.get('/no/such/route'));
    await run(api.get('/users'));
    await run(api.get('/webhooks/events'));
    await run(api.transport.request({ method: 'GET', path: '/99/members' }));
    await run(api.transport.request({ method: 'GET', path: '/abc/members' }));
    return out;
  }

  it('for a series of calls, errors included', async () => {
    const viaHttp = await scenario(remote);
    const inProcess = await scenario(local);
    expect(viaHttp).toEqual(inProcess);

    // The comparison means something only if the scenario both succeeded and failed.
    const failures = inProcess.filter((o) => 'status' in o) as { status: number }[];
    expect(failures.map((o) => o.status)).toEqual(expect.arrayContaining([400, 404, 405]));
    expect(inProcess.length - failures.length).toBeGreaterThan(15);
    // And the pinned clock reached both: the member record carries it.
    expect(inProcess[10]).toEqual({ ok: expect.objectContaining({ email: 'a+b@x.org', member_since: '@D:2026-05-06T07:08:09' }) });
  });
});
