import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeService, T0, type TestService } from '../helpers.js';
import { Deliverer, MAX_ATTEMPTS, TIMEOUT_MS, backoffMs } from '../../src/service/webhooks/deliver.js';
import { verifySignature } from '../../src/service/webhooks/sign.js';
import { addMember, atD, ok } from './util.js';
import { startReceiver } from './receiver.js';

/**
 * Delivery: signed posts to a receiver on 127.0.0.1, retries with backoff on the
 * injected clock, order per webhook, leases that survive a killed process, replay.
 */

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let s: TestService;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let base: string;
let received: Received[];
/** How the receiver answers the next request (default 200). */
let answer: (req: Received, res: ServerResponse) => void;

beforeEach(async () => {
  s = makeService();
  received = [];
  answer = (_req, res) => res.end('ok');
  receiver = await startReceiver((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body };
      received.push(r);
      answer(r, res);
    });
  });
  base = receiver.base;
});
afterEach(async () => {
  await receiver.close();
  s.close();
});

async function register(event = 'member_add', extra: Record<string, unknown> = {}): Promise<{ webhook_id: number; secret: string }> {
  return ok(s, 'POST', '/1/webhooks', { body: { url: `${base}/hook`, event, ...extra }, query: { include_secret: 'true' } });
}

/** One deliverer pass: posts what is due and waits for the answers. */
async function deliver(opts: { timeoutMs?: number } = {}) {
  const d = new Deliverer(s.db, s.clock, opts);
  await d.runFor(5_000);
}

const delivery = (id: number) => ok(s, 'GET', `/1/webhooks/deliveries/${id}`);

/** The webhooks guide's verifier, exactly as docs/guide/webhooks.md prints it, as a module. */
async function guideVerifier(): Promise<(secret: string, header: string, body: string, tolerance?: number) => boolean> {
  const guide = readFileSync(new URL('../../docs/guide/webhooks.md', import.meta.url), 'utf8');
  const section = guide.slice(guide.indexOf('## Verifying a signature'));
  const code = section.slice(section.indexOf('```js\n') + 6, section.indexOf('```', section.indexOf('```js\n') + 6));
  expect(code.trim().split('\n').length).toBeLessThanOrEqual(10);
  const file = join(s.dir, 'verify.mjs');
  writeFileSync(file, code);
  return (await import(file)).verify;
}

describe('signed posts', () => {
  it('posts the envelope with the signature, event-id and delivery-id headers; the webhooks guide verifier accepts it', async () => {
    const { secret } = await register();
    const id = await addMember(s, 'ada@example.com');
    await deliver();
    expect(received.length).toBe(1);
    const [r] = received;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/hook');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-amsg-event-id']).toBe('1');
    expect(r.headers['x-amsg-delivery-id']).toBe('1');
    expect(r.headers['x-amsg-event']).toBe('member_add');
    expect(r.body).toBe(
      `{"event_id":1,"event":"member_add","webhook_event_id":19,"account_id":1,"occurred_at":"${atD(T0)}","data":{"members":[{"member_id":${id},"email":"ada@example.com"}],"member_count":1}}`,
    );
    const header = r.headers['x-amsg-signature'] as string;
    expect(header).toMatch(new RegExp(`^t=${Math.floor(Date.parse(T0) / 1000)},v1=[0-9a-f]{64}$`));
    const verify = await guideVerifier();
    // The clock is pinned in the past, so the age check is left out here.
    expect(verify(secret, header, r.body, Infinity)).toBe(true);
    expect(verify(secret, header, r.body.replace('ada@', 'eve@'), Infinity)).toBe(false);
    expect(verify(`${secret}x`, header, r.body, Infinity)).toBe(false);
    expect(verify(secret, header, r.body)).toBe(false); // too old for the default tolerance
    expect(verifySignature(secret, header, r.body, Math.floor(Date.parse(T0) / 1000))).toBe(true);
    const d = await delivery(1);
    expect(d).toEqual({
      delivery_id: 1,
      webhook_id: 1,
      event_id: 1,
      event: 'member_add',
      status: 'o',
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
      created_at: atD(T0),
      delivered_at: atD(T0),
      replay_of: null,
      // One delivery's GET also has the start of each answer and the body sent (the console's webhook page).
      attempt_log: [{ attempted_at: atD(T0), status_code: 200, error: null, duration_ms: expect.any(Number), response_body: 'ok' }],
      payload: JSON.parse(r.body),
    });
    // Delivered is delivered: nothing is posted again.
    await deliver();
    expect(received.length).toBe(1);
  });

  it('a GET webhook gets the body as the payload query parameter, signed the same way', async () => {
    const { secret } = await register('group_create', { method: 'GET' });
    await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'Gold' }] } });
    await deliver();
    const [r] = received;
    expect(r.method).toBe('GET');
    const payload = new URL(r.url, base).searchParams.get('payload')!;
    expect(JSON.parse(payload).data).toEqual({ groups: [{ member_group_id: 1, group_name: 'Gold' }] });
    expect(verifySignature(secret, r.headers['x-amsg-signature'] as string, payload, 0, 0)).toBe(true);
  });

  it('a rolled secret signs the posts from then on', async () => {
    await register();
    const rolled = await ok(s, 'POST', '/1/webhooks/1/secret');
    await addMember(s, 'ada@example.com');
    await deliver();
    expect(verifySignature(rolled.secret, received[0].headers['x-amsg-signature'] as string, received[0].body, 0, 0)).toBe(true);
  });
});

describe('retries on the injected clock', () => {
  it('retries a 500 with exponential backoff, 8 attempts over about a day, then fails', async () => {
    answer = (_r, res) => {
      res.statusCode = 500;
      res.end('boom');
    };
    await register();
    await addMember(s, 'ada@example.com');
    const waits: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await deliver();
      expect(received.length).toBe(attempt);
      const d = await delivery(1);
      expect(d.attempts).toBe(attempt);
      expect(d.last_status_code).toBe(500);
      expect(d.last_error).toBe('HTTP 500');
      if (attempt === MAX_ATTEMPTS) {
        expect(d.status).toBe('e');
        expect(d.next_attempt_at).toBe(null);
        break;
      }
      expect(d.status).toBe('p');
      // Not due a moment before the backoff is over, due when it is.
      const wait = backoffMs(attempt);
      waits.push(wait);
      expect(d.next_attempt_at).toBe(atD(new Date(s.clock.now().getTime() + wait).toISOString()));
      s.clock.advance(wait - 1_000);
      await deliver();
      expect(received.length).toBe(attempt);
      s.clock.advance(1_000);
    }
    expect(waits.map((w) => w / 1000)).toEqual([80, 240, 720, 2160, 6480, 19440, 58320]);
    const total = waits.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThan(28);
    expect((await ok(s, 'GET', '/1/webhooks/deliveries', { query: { status: 'e' } })).map((d: any) => d.delivery_id)).toEqual([1]);
    expect((await delivery(1)).attempt_log.map((a: any) => a.status_code)).toEqual(Array(MAX_ATTEMPTS).fill(500));
    // A replay sends it again, with the same event id and a new delivery id.
    answer = (_r, res) => res.end();
    const replay = await ok(s, 'POST', '/1/webhooks/deliveries/1/replay');
    await deliver();
    expect(received.at(-1)!.headers['x-amsg-event-id']).toBe('1');
    expect(received.at(-1)!.headers['x-amsg-delivery-id']).toBe(String(replay));
    expect((await delivery(replay)).status).toBe('o');
  });

  it('a timeout is an attempt that failed (10 s by default; shortened here)', async () => {
    expect(TIMEOUT_MS).toBe(10_000);
    answer = () => undefined; // never answers
    await register();
    await addMember(s, 'ada@example.com');
    await deliver({ timeoutMs: 200 });
    const d = await delivery(1);
    expect(d).toEqual(
      expect.objectContaining({ status: 'p', attempts: 1, last_status_code: null, last_error: 'timeout: no answer within 0.2 s' }),
    );
    expect(d.next_attempt_at).toBe(atD(new Date(Date.parse(T0) + backoffMs(1)).toISOString()));
  });

  it('a refused connection is an attempt that failed', async () => {
    await ok(s, 'POST', '/1/webhooks', { body: { url: 'http://127.0.0.1:9/closed', event: 'member_add' } });
    await addMember(s, 'ada@example.com');
    await deliver();
    const d = await delivery(1);
    expect(d.status).toBe('p');
    expect(d.attempts).toBe(1);
    expect(d.last_error).toMatch(/ECONNREFUSED/);
  });
});

describe('order, leases and slow receivers', () => {
  it('keeps the order of a webhook: the next waits for the one before', async () => {
    let fail = true;
    answer = (_r, res) => {
      res.statusCode = fail ? 503 : 200;
      res.end();
    };
    await register();
    await addMember(s, 'a@example.com');
    await addMember(s, 'b@example.com');
    await deliver();
    expect(received.map((r) => r.headers['x-amsg-event-id'])).toEqual(['1']);
    await deliver();
    expect(received.length).toBe(1); // 1 is waiting for its retry, and 2 waits behind it
    fail = false;
    s.clock.advance(backoffMs(1));
    await deliver();
    expect(received.map((r) => r.headers['x-amsg-event-id'])).toEqual(['1', '1', '2']);
  });

  it('a delivery leased by a process that died is due again, with the same ids', async () => {
    await register();
    await addMember(s, 'ada@example.com');
    // What a killed process leaves: leased until the lease's end, by a pid that is gone.
    const dead = 2 ** 22 + 12345;
    s.db.prepare('UPDATE webhook_deliveries SET lease_pid = ?, next_attempt_at = ?').run(dead, '2999-01-01T00:00:00.000000');
    await deliver();
    expect(received.map((r) => [r.headers['x-amsg-event-id'], r.headers['x-amsg-delivery-id']])).toEqual([['1', '1']]);
    expect((await delivery(1)).status).toBe('o');
  });

  it('a lease held by a live process is respected until it ends on the clock', async () => {
    await register();
    await addMember(s, 'ada@example.com');
    const until = new Date(Date.parse(T0) + 15_000).toISOString().replace('Z', '000');
    s.db.prepare('UPDATE webhook_deliveries SET lease_pid = ?, next_attempt_at = ?').run(process.ppid, until);
    await deliver();
    expect(received.length).toBe(0);
    s.clock.advance(15_000);
    await deliver();
    expect(received.length).toBe(1);
  });

  it("a post still open when a local run's budget ends is an attempt that timed out, retried after its backoff", async () => {
    answer = () => undefined;
    await register();
    await addMember(s, 'ada@example.com');
    await new Deliverer(s.db, s.clock).runFor(150);
    expect(received.length).toBe(1);
    const d = await delivery(1);
    expect(d).toEqual(
      expect.objectContaining({
        status: 'p',
        attempts: 1,
        last_error: 'timeout: no answer within 0.15 s (what a local run waits)',
        next_attempt_at: atD(new Date(Date.parse(T0) + backoffMs(1)).toISOString()),
      }),
    );
    expect(s.db.prepare('SELECT lease_pid FROM webhook_deliveries').pluck().get()).toBe(null);
    // So the next run does not wait on it again.
    const started = performance.now();
    await new Deliverer(s.db, s.clock).runFor(150);
    expect(performance.now() - started).toBeLessThan(100);
    expect(received.length).toBe(1);
  });

  it('a deliverer that stops gives an open post back, due at once, not counted as an attempt', async () => {
    answer = () => undefined;
    await register();
    await addMember(s, 'ada@example.com');
    const d = new Deliverer(s.db, s.clock);
    d.start(20);
    while (received.length < 1) await new Promise((r) => setTimeout(r, 5));
    await d.stop();
    expect(await delivery(1)).toEqual(expect.objectContaining({ status: 'p', attempts: 0, next_attempt_at: atD(T0), attempt_log: [] }));
    expect(s.db.prepare('SELECT lease_pid FROM webhook_deliveries').pluck().get()).toBe(null);
  });

  it('a receiver that never answers holds up neither other webhooks nor the service', async () => {
    const slow = await startReceiver(() => undefined);
    try {
      await ok(s, 'POST', '/1/webhooks', { body: { url: `${slow.base}/`, event: 'member_add' } });
      await register();
      const d = new Deliverer(s.db, s.clock, { timeoutMs: 5_000 });
      d.start(20);
      await addMember(s, 'a@example.com');
      const t0 = Date.now();
      while (received.length < 1 && Date.now() - t0 < 3_000) await new Promise((r) => setTimeout(r, 10));
      expect(received.length).toBe(1); // the good webhook got it while the slow one hangs
      // The service answers meanwhile.
      const started = performance.now();
      await addMember(s, 'b@example.com');
      expect(performance.now() - started).toBeLessThan(200);
      await d.stop();
      // The hanging post was given back, not counted.
      expect(
        s.db.prepare('SELECT attempts, lease_pid FROM webhook_deliveries WHERE webhook_id = 1 ORDER BY delivery_id LIMIT 1').get(),
      ).toEqual({ attempts: 0, lease_pid: null });
    } finally {
      await slow.close();
    }
  });

  it('a receiver answering garbage (a 200 with a huge body) is a success, read no further than needed', async () => {
    answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(1024 * 1024, 7));
    };
    await register();
    await addMember(s, 'ada@example.com');
    await deliver();
    expect((await delivery(1)).status).toBe('o');
  });
});

describe('a webhook deleted during its post', () => {
  it('records nothing and keeps delivering', async () => {
    let release!: () => void;
    answer = (_r, res) => {
      release = () => res.end();
    };
    await register();
    await addMember(s, 'ada@example.com');
    const d = new Deliverer(s.db, s.clock);
    const run = d.runFor(3_000);
    while (received.length < 1) await new Promise((r) => setTimeout(r, 5));
    await ok(s, 'DELETE', '/1/webhooks/1');
    release();
    await run;
    expect(s.db.prepare('SELECT COUNT(*) FROM webhook_attempts').pluck().get()).toBe(0);
    expect(s.db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get()).toBe(0);
  });
});
