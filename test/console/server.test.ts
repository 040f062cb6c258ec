/**
 * The console's server side on real HTTP (docs/console-contract.md): sign-in by the
 * one-time link and by key pair, the session cookie, the shell and its CSP, the
 * bundle's files, `/ui/api` answering exactly as the API does, sign-out, and the
 * console turned off. No browser: the client helper's browser tests drive the pages.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { fixedClock } from '../../src/service/clock.js';
import { createKey, createUser, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { PAGE_CSP } from '../../src/server/console/pages.js';
import { TOKEN_TTL_MS, IDLE_TTL_MS } from '../../src/server/console/sessions.js';

const T0 = '2026-03-04T05:06:07.000Z';

let dir: string;
let db: Db;
let server: RunningServer;
let publicKey: string;
let privateKey: string;
/** The console's clock, in ms (pinned: links and sessions expire when a test moves it). */
let now: number;
let assets: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-console-'));
  db = openDb(join(dir, 'amsg.db'));
  const init = initialize(db, fixedClock(T0));
  publicKey = init.public_key!;
  privateKey = init.private_key!;
  now = Date.parse(T0);
  assets = join(dir, 'assets');
  mkdirSync(join(assets, 'chunks'), { recursive: true });
  writeFileSync(join(assets, 'console.js'), 'export const console = 1;\n');
  writeFileSync(join(assets, 'console.css'), 'body { color: black }\n');
  writeFileSync(join(assets, 'chunks', 'chart.js'), 'export {};\n');
  writeFileSync(join(dir, 'secret.txt'), 'not for the web');
  server = await startServer({ db, clock: fixedClock(T0), console: { now: () => now, assets } });
});

afterEach(async () => {
  await server.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const basic = (pub = publicKey, priv = privateKey) => `Basic ${Buffer.from(`${pub}:${priv}`).toString('base64')}`;

async function get(path: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, { headers, redirect: 'manual' });
}

/** The session cookie's value from a Set-Cookie header. */
const sessionOf = (res: Response) => /amsg_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1];

/** Signs in by a fresh link: the Cookie header to send. */
async function signInByLink(): Promise<string> {
  const res = await fetch(server.consoleUrl!(), { redirect: 'manual' });
  expect(res.status).toBe(200);
  return `amsg_session=${sessionOf(res)}`;
}

async function signInByKeys(pub = publicKey, priv = privateKey, next?: string) {
  return fetch(`${server.url}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ public_key: pub, private_key: priv, ...(next ? { next } : {}) }).toString(),
    redirect: 'manual',
  });
}

async function session(cookie: string) {
  const res = await get('/ui/api/session', { cookie });
  expect(res.status).toBe(200);
  return (await res.json()) as { csrf_token: string; [k: string]: unknown };
}

describe('sign-in by the printed link', () => {
  it('is a loopback URL with a token; opening it sets the session cookie and lands on the mailings by a same-site refresh', async () => {
    const link = server.consoleUrl!();
    expect(link).toMatch(new RegExp(`^${server.url}/ui/login\\?token=[A-Za-z0-9_-]{43}$`));
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/^amsg_session=[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict$/);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const html = await res.text();
    expect(html).toContain('<meta http-equiv="refresh" content="0;url=/ui/1/mailings">');
    expect(html).not.toMatch(/<script|style=/i);
    const who = await session(`amsg_session=${sessionOf(res)}`);
    expect(who).toMatchObject({ account_id: 1, signed_in_by: 'link', user: { user_id: 1, email: 'owner@localhost', role: 'owner' } });
  });

  it('works once', async () => {
    const link = server.consoleUrl!();
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(200);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('This sign-in link is invalid, used or expired.');
  });

  it('expires after 10 minutes', async () => {
    const fresh = server.consoleUrl!();
    const stale = server.consoleUrl!();
    now += TOKEN_TTL_MS - 1;
    expect((await fetch(fresh, { redirect: 'manual' })).status).toBe(200);
    now += 1;
    const res = await fetch(stale, { redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('a made-up token is refused', async () => {
    expect((await get('/ui/login?token=AAAA')).status).toBe(401);
    expect((await get('/ui/login?token=')).status).toBe(401);
  });
});

describe('sign-in by key pair', () => {
  it('the form page has no script and posts to /ui/login', async () => {
    const res = await get('/ui/login?next=/ui/1/webhooks');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const html = await res.text();
    expect(html).toContain('<form method="post" action="/ui/login">');
    expect(html).toContain('<input type="hidden" name="next" value="/ui/1/webhooks">');
    expect(html).toContain('type="password"');
    expect(html).not.toMatch(/<script|style=/i);
  });

  it('a right pair sets the cookie and goes to next, or to the mailings of the key’s account', async () => {
    const res = await signInByKeys();
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui/1/mailings');
    expect(res.headers.get('set-cookie')).toMatch(/^amsg_session=[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict$/);
    expect(await session(`amsg_session=${sessionOf(res)}`)).toMatchObject({ signed_in_by: 'key', account_id: 1 });
    const next = await signInByKeys(publicKey, privateKey, '/ui/1/members?q=ann');
    expect(next.headers.get('location')).toBe('/ui/1/members?q=ann');
  });

  it('never goes to another site after sign-in', async () => {
    for (const next of ['//evil.example/ui/x', 'https://evil.example/', '/ui//evil.example', '/other', '/ui\\evil'])
      expect((await signInByKeys(publicKey, privateKey, next)).headers.get('location')).toBe('/ui/1/mailings');
  });

  it('a wrong pair is refused with one message whichever half was wrong', async () => {
    const other = createKey({ db, clock: fixedClock(T0), actor: localActor(db, 1), accountId: 1 }, { label: 'x' });
    const answers = await Promise.all([
      signInByKeys(publicKey, `${privateKey}x`),
      signInByKeys('unknownkey', privateKey),
      signInByKeys(publicKey, other.private_key),
      signInByKeys(publicKey, ''),
    ]);
    const bodies = await Promise.all(answers.map((r) => r.text()));
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(401);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(bodies[i]).toContain('That key pair is not valid.');
      expect(bodies[i]).not.toMatch(/public key is|private key is|unknown key/i);
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it('the form of our own page is taken whatever the browser says its origin is; another site’s is refused', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/ui/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ public_key: publicKey, private_key: privateKey }).toString(),
        redirect: 'manual',
      });
    const host = new URL(server.url).host;
    expect((await post({ origin: server.url })).status).toBe(303);
    expect((await post({ origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(303);
    expect((await post({ origin: 'null' })).status).toBe(403);
    expect((await post({ origin: 'null', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ origin: `http://evil.example`, host })).status).toBe(403);
  });

  it('a form posted from another site is refused', async () => {
    const res = await fetch(`${server.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://evil.example' },
      body: new URLSearchParams({ public_key: publicKey, private_key: privateKey }).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('revoking the key ends its session', async () => {
    const key = createKey({ db, clock: fixedClock(T0), actor: localActor(db, 1), accountId: 1 }, { label: 'revoke me' });
    const cookie = `amsg_session=${sessionOf(await signInByKeys(key.public_key, key.private_key))}`;
    expect((await get('/ui/api/1/mailings', { cookie })).status).toBe(200);
    db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(T0, key.key_id);
    const res = await get('/ui/api/1/mailings', { cookie });
    expect(res.status).toBe(401);
  });
});

describe('sessions', () => {
  it('GET /ui/api/session answers the csrf token, the user and the accounts it may open', async () => {
    const cookie = await signInByLink();
    const body = await session(cookie);
    expect(body).toEqual({
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user: { user_id: 1, account_id: 1, email: 'owner@localhost', role: 'owner', billing_access: true, manage_users: true },
      account_id: 1,
      accounts: [{ account_id: 1, name: 'My account', is_hq: false, parent_account_id: null }],
      signed_in_by: 'link',
      expires_at: '@D:2026-03-04T17:06:07',
    });
  });

  it('an HQ owner is offered its live sub-accounts; a user of the HQ only those on its access list', async () => {
    initialize(db, fixedClock(T0), { hq: true });
    const cookie = await signInByLink();
    const { csrf_token } = await session(cookie);
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}/ui/api${path}`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf_token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const a = await post('/1/enterprise/subaccount', { account_name: 'North' });
    const b = await post('/1/enterprise/subaccount', { account_name: 'South' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(((await session(cookie)).accounts as { account_id: number }[]).map((x) => x.account_id)).toEqual([
      1,
      a.body.account_id,
      b.body.account_id,
    ]);
    const ctx = { db, clock: fixedClock(T0), actor: localActor(db, 1), accountId: 1 };
    const user = createUser(ctx, { email: 'clerk@example.com', role: 'user' });
    db.prepare('INSERT INTO user_account_access (user_id, account_id) VALUES (?, ?)').run(user.user_id, b.body.account_id);
    const key = createKey(ctx, { user_id: user.user_id });
    const clerk = `amsg_session=${sessionOf(await signInByKeys(key.public_key, key.private_key))}`;
    expect(((await session(clerk)).accounts as { account_id: number }[]).map((x) => x.account_id)).toEqual([1, b.body.account_id]);
    // The API's own rule: the other sub-account is a 404 through the console as through the API.
    const denied = await get(`/ui/api/${a.body.account_id}/mailings`, { cookie: clerk });
    expect(denied.status).toBe(404);
    const api = await fetch(`${server.url}/${a.body.account_id}/mailings`, {
      headers: { authorization: basic(key.public_key, key.private_key) },
    });
    expect(await denied.text()).toBe(await api.text());
  });

  it('ends after 12 idle hours; a request keeps it alive', async () => {
    const cookie = await signInByLink();
    now += IDLE_TTL_MS - 1000;
    expect((await get('/ui/api/session', { cookie })).status).toBe(200);
    now += IDLE_TTL_MS - 1000;
    expect((await get('/ui/api/session', { cookie })).status).toBe(200);
    now += IDLE_TTL_MS;
    expect((await get('/ui/api/session', { cookie })).status).toBe(401);
    expect((await get('/ui/1/mailings', { cookie })).status).toBe(302);
  });

  it('sign-out needs the csrf token, clears the cookie, and the session is over', async () => {
    const cookie = await signInByLink();
    const { csrf_token } = await session(cookie);
    const refused = await fetch(`${server.url}/ui/logout`, { method: 'POST', headers: { cookie }, redirect: 'manual' });
    expect(refused.status).toBe(403);
    expect((await get('/ui/api/session', { cookie })).status).toBe(200);
    const res = await fetch(`${server.url}/ui/logout`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf_token },
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui/login');
    expect(res.headers.get('set-cookie')).toBe('amsg_session=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0');
    expect((await get('/ui/api/session', { cookie })).status).toBe(401);
    // The form way: csrf_token as a field.
    const cookie2 = await signInByLink();
    const form = await fetch(`${server.url}/ui/logout`, {
      method: 'POST',
      headers: { cookie: cookie2, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf_token=${(await session(cookie2)).csrf_token}`,
      redirect: 'manual',
    });
    expect(form.status).toBe(303);
    expect((await get('/ui/api/session', { cookie: cookie2 })).status).toBe(401);
  });
});

describe('pages', () => {
  it('without a session every page redirects to sign-in, keeping where it was going', async () => {
    for (const path of ['/ui/1/mailings', '/ui/1/mailings/4/messages/9', '/ui/1/members?q=ann%40', '/ui/7/webhooks']) {
      const res = await get(path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location')).toBe(`/ui/login?next=${encodeURIComponent(path)}`);
    }
    for (const path of ['/ui', '/ui/']) expect((await get(path)).headers.get('location')).toBe('/ui/login');
  });

  it('with one, every page is the shell: no inline script, the module and the stylesheet, and the CSP', async () => {
    const cookie = await signInByLink();
    for (const path of ['/ui/1/mailings', '/ui/1/mailings/4', '/ui/1/members/3', '/ui/1/sms/2', '/ui/1/imports', '/ui/99/anything/else']) {
      const res = await get(path, { cookie });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const html = await res.text();
      expect(html).toContain('<script type="module" src="/ui/assets/console.js"></script>');
      expect(html).toContain('<link rel="stylesheet" href="/ui/assets/console.css">');
      expect(html.match(/<script/g)).toHaveLength(1);
      // No favicon request to the API (a 401 in the browser's console).
      expect(html).toContain('<link rel="icon" href="data:,">');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
      expect(html).not.toMatch(/style=|<style/i);
    }
    expect((await get('/ui', { cookie })).headers.get('location')).toBe('/ui/1/mailings');
  });

  it('the CSP forbids inline scripts and styles and any other origin', () => {
    expect(PAGE_CSP).toContain("script-src 'self';");
    expect(PAGE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
    expect(PAGE_CSP).toContain("frame-ancestors 'none'");
  });

  it('a path that is no page is a 404', async () => {
    const cookie = await signInByLink();
    const missing = await get('/ui/nothing%3Cscript%3E', { cookie });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const html = await missing.text();
    expect(html).toContain('There is no console page /ui/nothing%3Cscript%3E.');
    expect(html).not.toMatch(/<script|<form/);
    expect((await fetch(`${server.url}/ui/1/mailings`, { method: 'POST', headers: { cookie } })).status).toBe(405);
  });
});

describe('the bundle’s files', () => {
  it('are served with their type, an etag and a 304 on revalidation, without a session', async () => {
    const js = await get('/ui/assets/console.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('no-cache');
    expect(await js.text()).toBe('export const console = 1;\n');
    const etag = js.headers.get('etag')!;
    expect((await get('/ui/assets/console.js', { 'if-none-match': etag })).status).toBe(304);
    expect((await get('/ui/assets/console.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await get('/ui/assets/chunks/chart.js')).status).toBe(200);
  });

  it('nothing outside the folder is reachable', async () => {
    for (const path of [
      '/ui/assets/../secret.txt',
      '/ui/assets/%2e%2e/secret.txt',
      '/ui/assets/%2E%2E%2Fsecret.txt',
      '/ui/assets/..%5csecret.txt',
      '/ui/assets/chunks/../../secret.txt',
      '/ui/assets/.hidden',
      '/ui/assets/',
      '/ui/assets/nothing.js',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('not for the web');
    }
  });

  it('a missing bundle says how to build it', async () => {
    rmSync(join(assets, 'console.js'));
    const res = await get('/ui/assets/console.js');
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/run npm run build/);
  });
});

describe('amsg serve --no-console', () => {
  it('answers every /ui URL with a 404 that says the console is off', async () => {
    const off = await startServer({ db, clock: fixedClock(T0), console: false });
    try {
      expect(off.consoleUrl).toBeUndefined();
      for (const path of ['/ui', '/ui/', '/ui/login', '/ui/api/session', '/ui/assets/console.js']) {
        const res = await fetch(`${off.url}${path}`, { redirect: 'manual' });
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: 'the console is off (amsg serve --no-console)' });
      }
      // The API is as it was.
      expect((await fetch(`${off.url}/1/mailings`, { headers: { authorization: basic() } })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

// ------------------------------------------------------------------ data through the console

/** A signed-in owner: its cookie and csrf token, and a write through /ui/api. */
async function owner() {
  const cookie = await signInByLink();
  const { csrf_token } = await session(cookie);
  const write = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${server.url}/ui/api${path}`, {
      method,
      headers: { cookie, 'x-csrf-token': csrf_token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return JSON.parse(text);
  };
  return { cookie, write };
}

/** Reads server-sent events until `until` says stop (or the stream ends); answers them. */
async function readEvents(res: Response, until: (events: { event: string; data: any }[]) => boolean) {
  const events: { event: string; data: any }[] = [];
  const reader = res.body!.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event) events.push({ event, data: JSON.parse(data!) });
    }
    if (until(events)) {
      await reader.cancel();
      break;
    }
  }
  return events;
}

describe('live counts over server-sent events', () => {
  it('streams a mailing’s counts as it sends, then done; errors are the API’s JSON', async () => {
    await server.close();
    // A fast look, so the test sees the counts move within a second.
    server = await startServer({ db, clock: fixedClock(T0), console: { now: () => now, assets, liveInterval: 30 } });
    const { cookie, write } = await owner();
    const ids: number[] = [];
    for (const email of ['ann@example.com', 'bob@example.com']) ids.push((await write('POST', '/1/members/add', { email })).member_id);
    const [gold] = await write('POST', '/1/groups', { groups: [{ group_name: 'Gold' }] });
    await write('PUT', `/1/groups/${gold.member_group_id}/members`, { member_ids: ids });
    const { mailing_id } = await write('POST', '/1/mailings', {
      name: 'Spring',
      subject: 'Hi',
      sender: 'shop@example.com',
      html_body: '<p>Hi</p><a href="[% optout_url %]">out</a>',
      recipient_groups: [gold.member_group_id],
    });
    const res = await fetch(`${server.url}/ui/api/1/mailings/${mailing_id}/live`, { headers: { cookie, accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const reading = readEvents(res, (events) => events.some((e) => e.event === 'done'));
    // The send runs while the stream is open (amsg serve runs it in the background).
    await new Promise((r) => setTimeout(r, 100));
    const { advanceJobs } = await import('../../src/service/jobs.js');
    for (let i = 0; i < 100 && advanceJobs(db, fixedClock(T0), 1_000); i++);
    const events = await reading;
    expect(events[0]).toMatchObject({ event: 'counts', data: { mailing_status: 'p', response: { name: 'Spring', sent: 0 } } });
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: 'done', data: { mailing_status: 'c', response: { sent: 2, delivered: 2 } } });
    expect(events.at(-2)).toMatchObject({ event: 'counts', data: last.data });
    // A mailing already sent: one counts and one done, then the stream ends.
    const again = await fetch(`${server.url}/ui/api/1/mailings/${mailing_id}/live`, { headers: { cookie } });
    expect((await readEvents(again, () => false)).map((e) => e.event)).toEqual(['counts', 'done']);
    // Errors before the stream starts are the API's answers.
    for (const [path, status] of [
      ['/ui/api/1/mailings/999/live', 404],
      ['/ui/api/2/mailings/1/live', 404],
    ] as const) {
      const r = await fetch(`${server.url}${path}`, { headers: { cookie } });
      expect(r.status).toBe(status);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const api = await fetch(`${server.url}${path.replace('/ui/api', '').replace('/mailings/', '/response/').replace('/live', '')}`, {
        headers: { authorization: basic() },
      });
      expect(await r.text()).toBe(await api.text());
    }
  });

  it('a draft’s stream stays open (it may still send) and moves once the draft is approved elsewhere', async () => {
    await server.close();
    server = await startServer({ db, clock: fixedClock(T0), console: { now: () => now, assets, liveInterval: 30 } });
    const { cookie, write } = await owner();
    const { member_id } = await write('POST', '/1/members/add', { email: 'cy@example.com' });
    const [group] = await write('POST', '/1/groups', { groups: [{ group_name: 'Drafted' }] });
    await write('PUT', `/1/groups/${group.member_group_id}/members`, { member_ids: [member_id] });
    const { mailing_id } = await write('POST', '/1/mailings', {
      name: 'Draft',
      subject: 'Hi',
      sender: 'shop@example.com',
      html_body: '<p>Hi</p><a href="[% optout_url %]">out</a>',
      recipient_groups: [group.member_group_id],
      status: 'u',
    });
    const res = await fetch(`${server.url}/ui/api/1/mailings/${mailing_id}/live`, { headers: { cookie } });
    const reading = readEvents(res, (events) => events.some((e) => e.event === 'done'));
    await new Promise((r) => setTimeout(r, 200));
    await write('PUT', `/1/mailings/${mailing_id}`, { status: 'ready' });
    const { advanceJobs } = await import('../../src/service/jobs.js');
    for (let i = 0; i < 100 && advanceJobs(db, fixedClock(T0), 1_000); i++);
    const events = await reading;
    expect(events[0]).toMatchObject({ event: 'counts', data: { mailing_status: 'u', response: { sent: 0 } } });
    expect(events.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { mailing_status: 'c', response: { sent: 1 } } });
  });

  it('a stream ends when its session does; closing the server ends open streams', async () => {
    await server.close();
    server = await startServer({ db, clock: fixedClock(T0), console: { now: () => now, assets, liveInterval: 30 } });
    const { cookie, write } = await owner();
    const { mailing_id } = await write('POST', '/1/mailings', {
      name: 'Later',
      subject: 'Hi',
      sender: 'shop@example.com',
      html_body: '<p>Hi</p><a href="[% optout_url %]">out</a>',
      recipient_emails: ['x@example.com'],
      send_at: '2030-01-01T00:00:00',
    });
    const res = await fetch(`${server.url}/ui/api/1/mailings/${mailing_id}/live`, { headers: { cookie } });
    const reading = readEvents(res, () => false);
    await new Promise((r) => setTimeout(r, 100));
    const { csrf_token } = await session(cookie);
    await fetch(`${server.url}/ui/logout`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf_token }, redirect: 'manual' });
    const events = await reading;
    expect(events.map((e) => e.event)).toEqual(['counts', 'error']);
    expect(events[1].data).toMatchObject({ status: 401 });
    // And one left open does not hold the server's close.
    const other = await owner();
    const open = await fetch(`${server.url}/ui/api/1/mailings/${mailing_id}/live`, { headers: { cookie: other.cookie } });
    const pending = readEvents(open, () => false);
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    expect((await pending).map((e) => e.event)).toEqual(['counts']);
    server = await startServer({ db, clock: fixedClock(T0), console: { now: () => now, assets } });
  });
});

describe('message frames', () => {
  it('answer the message HTML alone under a sandbox CSP that runs no script', async () => {
    const { cookie, write } = await owner();
    const { member_id } = await write('POST', '/1/members/add', { email: 'ann@example.com' });
    const html = '<p>Hi <img src=x onerror=alert(1)><script>alert(2)</script></p><a href="[% optout_url %]">out</a>';
    const { mailing_id } = await write('POST', '/1/mailings', {
      name: 'Spring',
      subject: 'Hi',
      sender: 'shop@example.com',
      html_body: html,
      recipient_emails: ['ann@example.com'],
    });
    const { advanceJobs } = await import('../../src/service/jobs.js');
    for (let i = 0; i < 100 && advanceJobs(db, fixedClock(T0), 1_000); i++);
    for (const path of [
      `/ui/frame/1/mailings/${mailing_id}/messages/${member_id}`,
      `/ui/frame/1/mailings/${mailing_id}/preview?member_id=${member_id}`,
    ]) {
      const res = await get(path, { cookie });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toMatch(/^sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none';/);
      expect(csp).not.toMatch(/allow-scripts|allow-same-origin|script-src/);
      expect(csp).toContain("frame-ancestors 'self'");
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(await res.text()).toBe(
        `<p>Hi <img src=x onerror=alert(1)><script>alert(2)</script></p><a href="https://view.amsg.example.com/optout/1/${mailing_id}/${member_id}">out</a>`,
      );
    }
    const missing = await get(`/ui/frame/1/mailings/${mailing_id}/messages/999`, { cookie });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await missing.text()).toBe(`no message of mailing ${mailing_id} for member 999`);
    expect((await get('/ui/frame/1/members/1', { cookie })).status).toBe(404);
    expect((await get(`/ui/frame/2/mailings/${mailing_id}/preview`, { cookie })).status).toBe(404);
  });
});

describe('export downloads', () => {
  it('stream through /ui/api as a file, with the API’s type and name', async () => {
    const { cookie, write } = await owner();
    await write('POST', '/1/members/add', { email: 'ann@example.com' });
    const { export_id } = await write('POST', '/1/exports', { user_id: 'owner@localhost' });
    const { advanceJobs } = await import('../../src/service/jobs.js');
    for (let i = 0; i < 100 && advanceJobs(db, fixedClock(T0), 1_000); i++);
    const ui = await get(`/ui/api/1/exports/${export_id}/download`, { cookie });
    const api = await get(`/1/exports/${export_id}/download`, { authorization: basic() });
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toBe(api.headers.get('content-type'));
    expect(ui.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
    expect(ui.headers.get('content-disposition')).toBe(api.headers.get('content-disposition'));
    expect(ui.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await ui.arrayBuffer()).equals(Buffer.from(await api.arrayBuffer()))).toBe(true);
  });
});

// ------------------------------------------------------------------ the commands

describe('amsg serve and amsg console (the built CLI)', () => {
  const BIN = fileURLToPath(new URL('../../bin/amsg.js', import.meta.url));
  const env = { ...process.env, AMSG_BASE_URL: '', AMSG_API_KEY: '', AMSG_DB: '', AMSG_PROFILE: '', AMSG_QUIET: '' };

  /** Starts the CLI, waits for the stderr line that matches, and answers it with the process. */
  async function start(args: string[], wait: RegExp) {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (c) => {
        err += c;
        const m = wait.exec(err);
        if (m) resolve(m[0]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    return { child, line, stderr: () => err };
  }
  const stop = (child: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill('SIGINT');
    });

  it('amsg serve prints one sign-in line; the link signs in; --no-console turns it off', async () => {
    const file = join(dir, 'served.db');
    const { child, line } = await start(
      ['--db', file, 'serve', '--port', '0'],
      /console: (http:\/\/127\.0\.0\.1:\d+)\/ui\/login\?token=[\w-]{43}\n/,
    );
    try {
      const link = line.slice('console: '.length).trim();
      const res = await fetch(link, { redirect: 'manual' });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toMatch(/^amsg_session=/);
    } finally {
      expect(await stop(child)).toBe(0);
    }
    const off = await start(['--db', file, 'serve', '--port', '0', '--no-console'], /serving .* at (http:\/\/\S+)/);
    try {
      const base = /at (http:\/\/\S+)/.exec(off.line)![1];
      expect(off.stderr()).not.toContain('console:');
      expect((await fetch(`${base}/ui/login`)).status).toBe(404);
    } finally {
      await stop(off.child);
    }
  });

  it('amsg console serves the local database on a free loopback port, prints the link, and stops on Ctrl-C', async () => {
    const file = join(dir, 'local.db');
    const { child, line } = await start(['--db', file, 'console'], /console: http:\/\/127\.0\.0\.1:\d+\/ui\/login\?token=[\w-]{43}\n/);
    try {
      const link = line.slice('console: '.length).trim();
      const res = await fetch(link, { redirect: 'manual' });
      expect(res.status).toBe(200);
      const cookie = `amsg_session=${sessionOf(res)}`;
      const mailings = await fetch(new URL('/ui/api/1/mailings', link), { headers: { cookie } });
      expect(mailings.status).toBe(200);
      expect(await mailings.json()).toEqual([]);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it('amsg console refuses remote mode and a bad port with a usage error', async () => {
    for (const [args, message] of [
      [['--base-url', 'http://127.0.0.1:9', '--api-key', 'a:b', 'console'], /serves the local database/],
      [['--db', join(dir, 'x.db'), 'console', '--port', 'abc'], /--port must be 0-65535/],
    ] as const) {
      const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c) => (err += c));
      const code = await new Promise((r) => child.once('exit', r));
      expect(code).toBe(2);
      expect(err).toMatch(message);
    }
  });
});
