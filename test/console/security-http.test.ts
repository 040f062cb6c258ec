/**
 * The console's security at the HTTP level (issue 33, "Security"): no data without a
 * session, no write without the CSRF token, the API's own 404s and 403s through
 * `/ui/api` (a key without a permission cannot do through the console what the API
 * refuses it), values answered as JSON only, and no console GET that writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { fixedClock } from '../../src/service/clock.js';
import { createKey, createUser, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { ROUTES } from '../../src/api/routes/index.js';

const T0 = '2026-03-04T05:06:07.000Z';
const XSS = '<img src=x onerror=alert(1)><script>alert(2)</script>';

let dir: string;
let db: Db;
let server: RunningServer;
let owner: { auth: string; cookie: string; csrf: string };
let clerk: { auth: string; cookie: string; csrf: string };
let memberId: number;

const basic = (pub: string, priv: string) => `Basic ${Buffer.from(`${pub}:${priv}`).toString('base64')}`;

async function signIn(pub: string, priv: string) {
  const res = await fetch(`${server.url}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ public_key: pub, private_key: priv }).toString(),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  const cookie = /^(amsg_session=[^;]+)/.exec(res.headers.get('set-cookie')!)![1];
  const session = await (await fetch(`${server.url}/ui/api/session`, { headers: { cookie } })).json();
  return { auth: basic(pub, priv), cookie, csrf: session.csrf_token as string };
}

/** The same request through the API (Basic auth) and through the console (cookie + csrf): both answers. */
async function both(who: typeof owner, method: string, path: string, body?: unknown) {
  const init = (headers: Record<string, string>) => ({
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const api = await fetch(`${server.url}${path}`, init({ authorization: who.auth }));
  const ui = await fetch(`${server.url}/ui/api${path}`, init({ cookie: who.cookie, 'x-csrf-token': who.csrf }));
  return { api: { status: api.status, text: await api.text() }, ui: { status: ui.status, text: await ui.text(), headers: ui.headers } };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-console-sec-'));
  db = openDb(join(dir, 'amsg.db'));
  const clock = fixedClock(T0);
  const init = initialize(db, clock);
  const ctx = { db, clock, actor: localActor(db, 1), accountId: 1 };
  const user = createUser(ctx, { email: 'clerk@example.com', role: 'user' });
  const clerkKey = createKey(ctx, { user_id: user.user_id });
  server = await startServer({ db, clock, console: {}, log: () => {} });
  owner = await signIn(init.public_key!, init.private_key!);
  clerk = await signIn(clerkKey.public_key, clerkKey.private_key);
  // A member whose values would run script if any page put them into HTML.
  await fetch(`${server.url}/1/fields`, {
    method: 'POST',
    headers: { authorization: owner.auth },
    body: JSON.stringify({ shortcut_name: 'first_name', display_name: XSS, field_type: 'text' }),
  });
  const added = await fetch(`${server.url}/1/members/add`, {
    method: 'POST',
    headers: { authorization: owner.auth },
    body: JSON.stringify({ email: 'ann@example.com', fields: { first_name: XSS } }),
  });
  memberId = (await added.json()).member_id;
  // A webhook and one delivery to replay.
  await fetch(`${server.url}/1/webhooks`, {
    method: 'POST',
    headers: { authorization: owner.auth },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', event: 'member_add' }),
  });
  await fetch(`${server.url}/1/webhooks/trigger`, {
    method: 'POST',
    headers: { authorization: owner.auth },
    body: JSON.stringify({ event: 'member_add' }),
  });
});

afterAll(async () => {
  await server.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('without a session', () => {
  const NOT_SIGNED_IN = { error: 'not signed in to the console (or the session expired): sign in at /ui/login' };
  it.each(ROUTES.map((r) => [r.method, r.path] as const))('%s /ui/api%s answers 401 JSON', async (method, path) => {
    const url = `${server.url}/ui/api${path.replace(/\{\w+\}/g, '1')}`;
    for (const cookie of [undefined, 'amsg_session=forged', `amsg_session=${owner.csrf}`]) {
      const res = await fetch(url, { method, headers: cookie ? { cookie } : {}, body: method === 'GET' ? undefined : '{}' });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual(NOT_SIGNED_IN);
    }
  });
  it('the session, a live stream and a frame are 401 too', async () => {
    for (const path of ['/ui/api/session', '/ui/api/1/mailings/1/live', '/ui/api/openapi.json'])
      expect((await fetch(`${server.url}${path}`)).status).toBe(401);
    expect((await fetch(`${server.url}/ui/frame/1/mailings/1/preview`)).status).toBe(401);
  });
  it('a Basic auth header is not a session', async () => {
    const res = await fetch(`${server.url}/ui/api/1/mailings`, { headers: { authorization: owner.auth } });
    expect(res.status).toBe(401);
  });
});

describe('CSRF: every write needs the session’s x-csrf-token', () => {
  const writes = ROUTES.filter((r) => r.method !== 'GET');
  it.each(writes.map((r) => [r.method, r.path] as const))(
    '%s /ui/api%s without or with a wrong token: 403, nothing done',
    async (method, path) => {
      const url = `${server.url}/ui/api${path.replace(/\{\w+\}/g, '1')}`;
      const changes = db.prepare('SELECT total_changes()').pluck();
      const before = changes.get();
      for (const token of [undefined, '', clerk.csrf, `${owner.csrf}x`]) {
        const res = await fetch(url, {
          method,
          headers: { cookie: owner.cookie, 'content-type': 'application/json', ...(token === undefined ? {} : { 'x-csrf-token': token }) },
          body: '{}',
        });
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: 'missing or wrong x-csrf-token header (get it from GET /ui/api/session)' });
      }
      expect(changes.get()).toBe(before);
    },
  );
  it('the right token from another site’s page is refused as well', async () => {
    const res = await fetch(`${server.url}/ui/api/1/groups`, {
      method: 'POST',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, origin: 'http://evil.example' },
      body: JSON.stringify({ groups: [{ group_name: 'X' }] }),
    });
    expect(res.status).toBe(403);
  });
  it('with the right token the write is the API’s', async () => {
    const { api, ui } = await both(owner, 'POST', '/1/groups', { groups: [{ group_name: 'Gold' }] });
    expect(api.status).toBe(200);
    // The second create of the name is the API's own 400, through the console too.
    expect(ui.status).toBe(400);
    const made = await fetch(`${server.url}/ui/api/1/groups`, {
      method: 'POST',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ groups: [{ group_name: 'Silver' }] }),
    });
    expect(made.status).toBe(200);
    expect(await made.json()).toEqual([{ member_group_id: JSON.parse(api.text)[0].member_group_id + 1, group_name: 'Silver' }]);
  });
});

describe('/ui/api answers as the API does', () => {
  it('the same bytes for reads, with no-store and nosniff', async () => {
    for (const path of [
      '/1/members',
      `/1/members/${memberId}`,
      '/1/webhooks/deliveries',
      '/1/mailings?mailing_statuses=p',
      '/1/fields',
      '/openapi.json',
    ]) {
      const { api, ui } = await both(owner, 'GET', path);
      expect(ui.status, path).toBe(api.status);
      expect(ui.text, path).toBe(api.text);
      expect(ui.headers.get('cache-control')).toBe('no-store');
      expect(ui.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
  it('the same errors: bad input, no such record, another account, unknown parameters', async () => {
    for (const [method, path, body] of [
      ['GET', '/1/members/999999'],
      ['GET', '/2/members'],
      ['GET', '/1/mailings?mailing_statuses=z'],
      ['GET', '/1/nothing'],
      ['PUT', '/1/members/status', { member_ids: 'x' }],
      ['GET', '/1/members?colour=red'],
    ] as const) {
      const { api, ui } = await both(owner, method, path, body);
      expect(ui.status, path).toBe(api.status);
      expect(ui.text, path).toBe(api.text);
    }
    const ignored = await both(owner, 'GET', '/1/members?colour=red');
    expect(ignored.ui.headers.get('x-amsg-ignored-parameters')).toBe('colour');
  });
  it('the sandbox reset and ingestion are not reachable through the console', async () => {
    for (const path of ['/_sandbox/reset', '/v1/1/events']) {
      const res = await fetch(`${server.url}/ui/api${path}`, {
        method: 'POST',
        headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf },
        body: JSON.stringify({ email: 'x@example.com', type: 't' }),
      });
      expect(res.status).toBe(404);
    }
  });
});

describe('permissions are the API’s', () => {
  it('a user-role key cannot replay a delivery through the console either', async () => {
    const { api, ui } = await both(clerk, 'POST', '/1/webhooks/deliveries/1/replay');
    expect(api.status).toBe(403);
    expect(ui.status).toBe(403);
    expect(ui.text).toBe(api.text);
    expect(JSON.parse(ui.text)).toMatchObject({ operation: 'webhooks.replay', access: 'manager' });
    const deliveries = (await both(owner, 'GET', '/1/webhooks/deliveries')).ui;
    expect(JSON.parse(deliveries.text)).toHaveLength(1);
  });
  it('the owner can', async () => {
    const { api, ui } = await both(owner, 'POST', '/1/webhooks/deliveries/1/replay');
    expect([api.status, ui.status]).toEqual([200, 200]);
    expect([JSON.parse(api.text), JSON.parse(ui.text)]).toEqual([2, 3]);
  });
});

describe('values are JSON, never HTML', () => {
  it('a member field holding markup comes back as a JSON string, as stored', async () => {
    const res = await fetch(`${server.url}/ui/api/1/members/${memberId}`, { headers: { cookie: owner.cookie } });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = await res.json();
    expect(body.fields.first_name).toBe(XSS);
  });
  it('the session answer carries no HTML either', async () => {
    const res = await fetch(`${server.url}/ui/api/session`, { headers: { cookie: owner.cookie } });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});

describe('no console GET writes', () => {
  it('pages, the session, the shell, assets, frames and reads leave the database as it was', async () => {
    const changes = db.prepare('SELECT total_changes()').pluck();
    const before = changes.get();
    for (const path of [
      '/ui/',
      '/ui/login',
      '/ui/1/mailings',
      '/ui/api/session',
      '/ui/api/1/members',
      '/ui/api/1/webhooks/deliveries/1',
      '/ui/frame/1/mailings/1/preview',
      '/ui/assets/console.js',
    ])
      await (await fetch(`${server.url}${path}`, { headers: { cookie: owner.cookie }, redirect: 'manual' })).arrayBuffer();
    expect(changes.get()).toBe(before);
  });
});
