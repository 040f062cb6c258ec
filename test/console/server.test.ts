/**
 * The console's server side on real HTTP (docs/console-contract.md): sign-in by the
 * one-time link and by key pair, the session cookie, the shell and its CSP, the
 * bundle's files, `/ui/api` answering exactly as the API does, sign-out, and the
 * console turned off. No browser: the client helper's browser tests drive the pages.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    expect((await get('/ui/nothing', { cookie })).status).toBe(404);
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
