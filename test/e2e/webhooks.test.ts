import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifySignature } from '../../src/service/webhooks/sign.js';
import { BIN, NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg webhooks`, end to end, in local mode (the CLI posts what is due after its call)
 * and against a spawned `amsg serve` (which posts in the background): the same
 * commands, the same transcripts, the same posts at a receiver of the test's own.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const AT_NOW = `@D:${NOW.slice(0, 19)}`;

interface Post {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A receiver on 127.0.0.1 that records what it gets and answers 200. */
async function receiver(): Promise<{ url: string; posts: Post[]; server: Server; waitFor(n: number): Promise<Post[]> }> {
  const posts: Post[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      posts.push({ url: req.url!, headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    posts,
    server,
    async waitFor(n) {
      const until = Date.now() + 10_000;
      while (posts.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return posts;
    },
  };
}

describe.each<Mode>(['local', 'remote'])('amsg webhooks (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  let hooks: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    await box.start();
    hooks = await receiver();
  }, 60_000);
  afterAll(async () => {
    hooks.server.closeAllConnections();
    hooks.server.close();
    await box.stop();
  });

  test('create prints the id and the secret once; list, get, update; bad input is refused', async () => {
    const created = await box.json('webhooks', 'create', `${hooks.url}/members`, '--event', 'member_add');
    expect(created).toEqual({ webhook_id: 1, secret: expect.stringMatching(/^whsec_/) });
    expect(await box.json('webhooks', 'list')).toEqual([
      { webhook_id: 1, url: `${hooks.url}/members`, method: 'POST', event: 'member_add', public_key: null },
    ]);
    expect(await json('webhooks', 'update', '1', '--public-key', 'pk_test')).toBe(1);
    expect(await box.json('webhooks', 'get', '1')).toEqual({
      webhook_id: 1,
      url: `${hooks.url}/members`,
      method: 'POST',
      event: 'member_add',
      public_key: 'pk_test',
    });
    const bad = await run('webhooks', 'create', 'ftp://example.com', '--event', 'member_add');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('url: must be an http:// or https:// URL');
    const badEvent = await run('webhooks', 'create', 'https://example.com', '--event', 'member_added');
    expect(badEvent.exitCode).toBe(1);
    expect(badEvent.stderr).toContain('event: must be one of');
    expect((await run('webhooks', 'update', '1')).exitCode).toBe(2);
    expect((await run('webhooks', 'delete', '1')).exitCode).toBe(2); // no --yes off a terminal

    // An add posts a signed member_add to the receiver (the CLI after its call, or serve).
    await json('members', 'add', 'ada@example.com');
    const [post] = await hooks.waitFor(1);
    expect(post.url).toBe('/members');
    expect(post.headers['x-amsg-event']).toBe('member_add');
    expect(JSON.parse(post.body)).toEqual({
      event_id: 1,
      event: 'member_add',
      webhook_event_id: 19,
      account_id: 1,
      occurred_at: AT_NOW,
      data: { members: [{ member_id: 1, email: 'ada@example.com' }], member_count: 1 },
    });
    expect(verifySignature(created.secret, post.headers['x-amsg-signature'] as string, post.body, 0, 0)).toBe(true);
    // The delivery log says so (serve may record it a moment after the post arrives).
    let log: any[] = [];
    for (let i = 0; i < 50 && log[0]?.status !== 'o'; i++) {
      log = await box.json('webhooks', 'deliveries', '1');
      if (log[0]?.status !== 'o') await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toEqual([
      expect.objectContaining({ delivery_id: 1, event_id: 1, event: 'member_add', status: 'o', attempts: 1, last_status_code: 200 }),
    ]);
    expect(await json('webhooks', 'deliveries', '--failed')).toEqual([]);
  });

  test('replay sends a delivery again; trigger fires a sample; roll-secret signs with the new secret', async () => {
    expect(await json('webhooks', 'replay', '1')).toBe(2);
    const posts = await hooks.waitFor(2);
    expect(posts[1].headers['x-amsg-event-id']).toBe('1');
    expect(posts[1].headers['x-amsg-delivery-id']).toBe('2');
    const rolled = await box.json('webhooks', 'roll-secret', '1', '--yes');
    expect(await json('webhooks', 'trigger', 'member_add')).toEqual({ event_id: 2, deliveries: 1 });
    expect(await json('webhooks', 'trigger', 'field_delete')).toEqual({ event_id: null, deliveries: 0 });
    const [, , sample] = await hooks.waitFor(3);
    expect(JSON.parse(sample.body).data).toEqual({
      members: [{ member_id: 0, email: 'sample@example.com' }],
      member_count: 1,
      sample: true,
    });
    expect(verifySignature(rolled.secret, sample.headers['x-amsg-signature'] as string, sample.body, 0, 0)).toBe(true);
  });

  test('listen registers temporary webhooks, prints what arrives, forwards it signed, and cleans up', async () => {
    const before = hooks.posts.length;
    const child = execa(
      'node',
      [BIN, 'webhooks', 'listen', '--events', 'member_add,group_create', '--forward-to', `${hooks.url}/forwarded`],
      {
        env: { ...process.env, ...box.baseEnv, ...box.env },
        reject: false,
      },
    );
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    const until = Date.now() + 15_000;
    while (!stderr.includes('Ready!') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const secret = /Signing secret: (whsec_\S+)/.exec(stderr)![1];
    const temporary = await box.json('webhooks', 'list');
    expect(temporary.map((w: any) => w.event)).toEqual(['member_add', 'member_add', 'group_create']);

    await json('members', 'add', 'bob@example.com');
    await json('groups', 'create', 'Gold');
    while (stdout.trim().split('\n').length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const printed = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(printed.map((e) => [e.event, e.data])).toEqual([
      ['member_add', { members: [{ member_id: 2, email: 'bob@example.com' }], member_count: 1 }],
      ['group_create', { groups: [{ member_group_id: 1, group_name: 'Gold' }] }],
    ]);
    // Forwarded with the body and signature as received: it verifies with the printed secret.
    const forwarded = (await hooks.waitFor(before + 3)).filter((p) => p.url === '/forwarded');
    expect(forwarded.length).toBe(2);
    for (const f of forwarded) expect(verifySignature(secret, f.headers['x-amsg-signature'] as string, f.body, 0, 0)).toBe(true);

    child.kill('SIGTERM');
    const done = await child;
    expect(done.exitCode).toBe(0);
    expect(stderr).toContain('deleted the temporary webhooks');
    expect((await box.json('webhooks', 'list')).map((w: any) => w.webhook_id)).toEqual([1]);
  }, 30_000);

  test('delete and delete-all answer true', async () => {
    await box.json('webhooks', 'create', `${hooks.url}/x`, '--event', 'field_create');
    const one = await box.amsg('webhooks', 'list', '--limit', '1', '--json');
    expect(JSON.parse(one.stdout).map((w: any) => w.webhook_id)).toEqual([1]);
    expect(one.stderr).toContain('1 of 2 shown; --all for every row, --start 1 for the rows after these');
    const types = await run('webhooks', 'events', '--limit', '1', '--json');
    expect(JSON.parse(types.stdout)).toHaveLength(1);
    expect(types.stderr).toMatch(/amsg: 1 of \d+ shown; --all for every row/);
    const refused = await box.amsg('webhooks', 'delete', '1');
    expect(refused.stderr).toContain(`refusing to delete webhook 1 (member_add → ${hooks.url}/members) without --yes`);
    expect(await json('webhooks', 'delete', '1', '--yes')).toBe(true);
    expect(await json('webhooks', 'delete-all', '--yes')).toBe(true);
    expect(await json('webhooks', 'list')).toEqual([]);
  });
});

test('both modes print the same transcript', () => {
  // Runs whose output carries a random secret or the receiver's port are left out of the recorded runs.
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});

describe('a SIGKILL of amsg serve during a burst of deliveries', () => {
  test('after a restart, every committed event is delivered at least once, and none is lost', async () => {
    const box = new Sandbox('local');
    const creds = await box.start();
    // A receiver a little slow to answer, so the kill lands with posts in flight.
    const seen = new Map<string, number>();
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-amsg-event-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        setTimeout(() => res.end('ok'), 5);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    // The real clock here: the restarted serve must see time move (leases, retries).
    const env = { ...process.env, ...box.baseEnv, AMSG_NOW: '' };
    const startServe = async () => {
      const child = execa('node', [BIN, 'serve', '--port', '0', '--db', box.db], { env, reject: false });
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 15_000);
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) {
            clearTimeout(timer);
            resolve(out.split('\n')[0].trim());
          }
        });
      });
      return { child, url };
    };
    try {
      const auth = `Basic ${Buffer.from(`${creds.public_key}:${creds.private_key}`).toString('base64')}`;
      const call = (url: string, path: string, body: unknown) =>
        fetch(`${url}/1${path}`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      let serve = await startServe();
      expect((await call(serve.url, '/webhooks', { url: hookUrl, event: 'member_add' })).status).toBe(200);
      const N = 1000;
      let answered = 0;
      // The burst: adds as fast as serve answers; the kill comes once some posts arrived.
      const burst = (async () => {
        for (let i = 0; i < N; i++) {
          try {
            const res = await call(serve.url, '/members/add', { email: `m${i}@example.com` });
            if (res.status === 200) answered++;
          } catch {
            return; // serve is gone
          }
        }
      })();
      const until = Date.now() + 20_000;
      while (seen.size < 40 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      serve.child.kill('SIGKILL');
      await serve.child;
      await burst;
      expect(answered).toBeGreaterThan(0);
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(box.db, { readonly: true });
      // It died mid-burst: with deliveries not yet made, some of them leased by the dead process.
      const left = db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'p'").pluck().get() as number;
      expect(left).toBeGreaterThan(0);
      // Every add that was answered committed its event; the restarted serve sends the rest.
      serve = await startServe();
      try {
        const events = db.prepare('SELECT event_id FROM webhook_events ORDER BY event_id').pluck().all() as number[];
        expect(events.length).toBeGreaterThanOrEqual(answered);
        const pending = () => db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status <> 'o'").pluck().get() as number;
        const deadline = Date.now() + 30_000;
        while ((pending() > 0 || seen.size < events.length) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(pending()).toBe(0);
        expect([...seen.keys()].map(Number).sort((a, b) => a - b)).toEqual(events);
      } finally {
        db.close();
        serve.child.kill('SIGTERM');
        await serve.child;
      }
    } finally {
      server.closeAllConnections();
      server.close();
      await box.stop();
    }
  }, 90_000);
});
