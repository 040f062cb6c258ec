import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { authenticate, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { fixedClock } from '../../src/service/clock.js';
import { openDb } from '../../src/store/db.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atD, countRows, expectFieldError, ok } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const T0D = atD(T0);
const DAY_MS = 86_400_000;

/** One request as another user of the account (the helper's call acts as the owner). */
async function callAs(userId: number, method: string, path: string, body?: unknown) {
  const row = s.db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as any;
  const actor = {
    user_id: row.user_id,
    account_id: row.account_id,
    email: row.email,
    role: row.role,
    billing_access: row.billing_access === 1,
    manage_users: row.manage_users === 1,
  };
  const res = await s.router.handle({
    method,
    path,
    query: {},
    body: body === undefined ? undefined : JSON.stringify(body),
    actor,
  });
  return { status: res.status, body: JSON.parse(JSON.stringify(res.body ?? null)) };
}

// ------------------------------------------------------------------ users

describe('users', () => {
  it('lists the owner created by init', async () => {
    expect(await s.call('GET', '/1/users')).toEqual({
      status: 200,
      body: [
        {
          user_id: 1,
          account_id: 1,
          email: 'owner@localhost',
          role: 'owner',
          billing_access: true,
          manage_users: true,
          created_at: T0D,
        },
      ],
    });
  });

  it('creates users of each role (200), e-mail lower-cased, permissions default false', async () => {
    s.clock.advance(1000);
    expect(await s.call('POST', '/1/users', { body: { email: 'Boss@X.org', role: 'manager', manage_users: true } })).toEqual({
      status: 200,
      body: {
        user_id: 2,
        account_id: 1,
        email: 'boss@x.org',
        role: 'manager',
        billing_access: false,
        manage_users: true,
        created_at: '@D:2026-03-04T05:06:08',
      },
    });
    const plain = await ok(s, 'POST', '/1/users', { body: { email: 'u@x.org', role: 'user', billing_access: true } });
    expect([plain.user_id, plain.role, plain.billing_access, plain.manage_users]).toEqual([3, 'user', true, false]);
    const owner2 = await ok(s, 'POST', '/1/users', { body: { email: 'o2@x.org', role: 'owner' } });
    expect(owner2.role).toBe('owner');
    expect((await ok(s, 'GET', '/1/users')).map((u: any) => [u.user_id, u.role])).toEqual([
      [1, 'owner'],
      [2, 'manager'],
      [3, 'user'],
      [4, 'owner'],
    ]);
  });

  it('refuses a duplicate e-mail, an unknown role and bad permission flags', async () => {
    expect(await s.call('POST', '/1/users', { body: { email: 'OWNER@localhost.test', role: 'user' } })).toMatchObject({
      status: 200,
    });
    expect(await s.call('POST', '/1/users', { body: { email: 'owner@localhost.test', role: 'manager' } })).toEqual({
      status: 400,
      body: { error: 'email: a user with e-mail owner@localhost.test already exists', field: 'email' },
    });
    expectFieldError(await s.call('POST', '/1/users', { body: { email: 'x@x.org', role: 'admin' } }), 'role');
    expectFieldError(await s.call('POST', '/1/users', { body: { email: 'x@x.org' } }), 'role');
    expectFieldError(await s.call('POST', '/1/users', { body: { email: 'x@x.org', role: 'user', manage_users: 'yes' } }), 'manage_users');
    expect(countRows(s, 'users')).toBe(2);
  });

  it('only owners and managers with manage_users add users, and never of a role at or above their own', async () => {
    await ok(s, 'POST', '/1/users', { body: { email: 'm@x.org', role: 'manager', manage_users: true } });
    await ok(s, 'POST', '/1/users', { body: { email: 'm2@x.org', role: 'manager' } });
    await ok(s, 'POST', '/1/users', { body: { email: 'u@x.org', role: 'user' } });
    expect((await callAs(2, 'POST', '/1/users', { email: 'u2@x.org', role: 'user' })).status).toBe(200);
    expect(await callAs(2, 'POST', '/1/users', { email: 'm3@x.org', role: 'manager' })).toEqual({
      status: 403,
      body: { error: 'a manager cannot create a user with role manager' },
    });
    expect((await callAs(3, 'POST', '/1/users', { email: 'u3@x.org', role: 'user' })).status).toBe(403);
    expect((await callAs(4, 'POST', '/1/users', { email: 'u4@x.org', role: 'user' })).status).toBe(403);
    expect(countRows(s, 'users')).toBe(5);
  });
});

// ------------------------------------------------------------------ keys

describe('API keys', () => {
  it('lists the key made by init: public half only', async () => {
    const list = await ok(s, 'GET', '/1/keys');
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual({
      key_id: 1,
      user_id: 1,
      user_email: 'owner@localhost',
      public_key: expect.stringMatching(/^[0-9a-f]{20}$/),
      label: 'created by amsg init',
      created_at: T0D,
      revoked_at: null,
    });
  });

  it('create answers the private key once; it is never listed and stored only hashed', async () => {
    s.clock.advance(5000);
    const res = await s.call('POST', '/1/keys', { body: { label: 'ci' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key_id: 2,
      user_id: 1,
      user_email: 'owner@localhost',
      public_key: expect.stringMatching(/^[0-9a-f]{20}$/),
      label: 'ci',
      created_at: '@D:2026-03-04T05:06:12',
      revoked_at: null,
      private_key: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    const { public_key, private_key } = res.body;

    const listed = await ok(s, 'GET', '/1/keys');
    expect(listed.map((k: any) => k.key_id)).toEqual([1, 2]);
    for (const k of listed) expect(k).not.toHaveProperty('private_key');
    expect(JSON.stringify(listed)).not.toContain(private_key);

    const rows = s.db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
    expect(JSON.stringify(rows)).not.toContain(private_key);
    const row = rows.find((r) => r.public_key === public_key)!;
    expect(Object.keys(row).sort()).toEqual(
      ['created_at', 'key_id', 'label', 'private_key_hash', 'public_key', 'revoked_at', 'salt', 'user_id'].sort(),
    );
    expect(row.private_key_hash).toMatch(/^[0-9a-f]{64}$/);
    // Not even an unsalted hash of it.
    const { createHash } = await import('node:crypto');
    expect(row.private_key_hash).not.toBe(createHash('sha256').update(private_key).digest('hex'));
  });

  it('two keys never share a public or private half', async () => {
    const a = await ok(s, 'POST', '/1/keys', { body: {} });
    const b = await ok(s, 'POST', '/1/keys', { rawBody: '' });
    expect(a.public_key).not.toBe(b.public_key);
    expect(a.private_key).not.toBe(b.private_key);
    expect(b.label).toBeNull();
  });

  it('creates a key for another user of the account; 404 for an unknown user', async () => {
    await ok(s, 'POST', '/1/users', { body: { email: 'u@x.org', role: 'user' } });
    const k = await ok(s, 'POST', '/1/keys', { body: { user_id: 2, label: 'for u' } });
    expect([k.user_id, k.user_email]).toEqual([2, 'u@x.org']);
    expect(await s.call('POST', '/1/keys', { body: { user_id: 9 } })).toEqual({ status: 404, body: { error: 'user 9 not found' } });
    expectFieldError(await s.call('POST', '/1/keys', { body: { user_id: '2' } }), 'user_id');
    expect(countRows(s, 'api_keys')).toBe(2);
  });

  it('authenticate accepts the pair and rejects a wrong or unknown one', async () => {
    const { public_key, private_key } = await ok(s, 'POST', '/1/keys', { body: { label: 'ci' } });
    expect(authenticate(s.db, public_key, private_key)).toEqual({
      user_id: 1,
      account_id: 1,
      email: 'owner@localhost',
      role: 'owner',
      billing_access: true,
      manage_users: true,
    });
    expect(authenticate(s.db, public_key, private_key + 'x')).toBeUndefined();
    expect(authenticate(s.db, public_key, '')).toBeUndefined();
    expect(
      authenticate(
        s.db,
        public_key.replace(/.$/, (c: string) => (c === '0' ? '1' : '0')),
        private_key,
      ),
    ).toBeUndefined();
    expect(authenticate(s.db, private_key, public_key)).toBeUndefined();
  });

  it("authenticate answers the key's own user", async () => {
    await ok(s, 'POST', '/1/users', { body: { email: 'u@x.org', role: 'user', billing_access: true } });
    const { public_key, private_key } = await ok(s, 'POST', '/1/keys', { body: { user_id: 2 } });
    expect(authenticate(s.db, public_key, private_key)).toEqual({
      user_id: 2,
      account_id: 1,
      email: 'u@x.org',
      role: 'user',
      billing_access: true,
      manage_users: false,
    });
  });

  it('revoke answers true; a revoked key no longer authenticates and is listed only with include_revoked', async () => {
    const { key_id, public_key, private_key } = await ok(s, 'POST', '/1/keys', { body: {} });
    s.clock.advance(60_000);
    expect(await s.call('DELETE', `/1/keys/${key_id}`)).toEqual({ status: 200, body: true });
    expect(authenticate(s.db, public_key, private_key)).toBeUndefined();
    expect((await ok(s, 'GET', '/1/keys')).map((k: any) => k.key_id)).toEqual([1]);
    const all = await ok(s, 'GET', '/1/keys', { query: { include_revoked: 'true' } });
    expect(all.map((k: any) => [k.key_id, k.revoked_at])).toEqual([
      [1, null],
      [key_id, '@D:2026-03-04T05:07:07'],
    ]);
    // Revoking again is still true and keeps the first revocation time.
    s.clock.advance(60_000);
    expect(await ok(s, 'DELETE', `/1/keys/${key_id}`)).toBe(true);
    expect((await ok(s, 'GET', '/1/keys', { query: { include_revoked: '1' } }))[1].revoked_at).toBe('@D:2026-03-04T05:07:07');
    expect(await s.call('DELETE', '/1/keys/99')).toEqual({ status: 404, body: { error: 'key 99 not found' } });
  });

  it("a plain user may not create or revoke another user's keys", async () => {
    await ok(s, 'POST', '/1/users', { body: { email: 'u@x.org', role: 'user' } });
    expect((await callAs(2, 'POST', '/1/keys', { user_id: 1 })).status).toBe(403);
    expect((await callAs(2, 'DELETE', '/1/keys/1')).status).toBe(403);
    const own = await callAs(2, 'POST', '/1/keys', {});
    expect([own.status, own.body.user_id]).toEqual([200, 2]);
    expect(await callAs(2, 'DELETE', `/1/keys/${own.body.key_id}`)).toEqual({ status: 200, body: true });
    expect(countRows(s, 'api_keys', 'revoked_at IS NULL')).toBe(1);
  });
});

// ------------------------------------------------------------------ initialize

describe('initialize', () => {
  it('a second time creates nothing and answers no key', () => {
    const before = ['accounts', 'users', 'api_keys'].map((t) => s.db.prepare(`SELECT * FROM ${t}`).all());
    s.clock.advance(DAY_MS);
    expect(initialize(s.db, s.clock, { accountName: 'Other', ownerEmail: 'x@x.org' })).toEqual({
      created: false,
      account_id: 1,
      user_id: 1,
    });
    expect(['accounts', 'users', 'api_keys'].map((t) => s.db.prepare(`SELECT * FROM ${t}`).all())).toEqual(before);
  });

  it('the first time creates account 1, its owner and a working key pair', () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-init-'));
    const db = openDb(join(dir, 'fresh.db'));
    try {
      const result = initialize(db, fixedClock(T0), { accountName: 'Acme', ownerEmail: 'Boss@Acme.test' });
      expect(result).toEqual({
        created: true,
        account_id: 1,
        user_id: 1,
        key_id: 1,
        public_key: expect.stringMatching(/^[0-9a-f]{20}$/),
        private_key: expect.any(String),
      });
      expect(db.prepare('SELECT account_id, account_name, account_status FROM accounts').all()).toEqual([
        { account_id: 1, account_name: 'Acme', account_status: 'active' },
      ]);
      expect(localActor(db, 1)).toMatchObject({ user_id: 1, email: 'boss@acme.test', role: 'owner' });
      expect(authenticate(db, result.public_key!, result.private_key!)).toMatchObject({ user_id: 1, account_id: 1 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ------------------------------------------------------------------ webhook event types

describe('GET /{account_id}/webhooks/events', () => {
  const NAMES = [
    'mailing_finish',
    'mailing_start',
    'member_signup',
    'message_open',
    'message_click',
    'member_optout',
    'message_share',
    'message_share_click',
    'import_finish',
    'member_update',
    'member_delete',
    'member_add_to_group',
    'member_remove_from_group',
    'group_create',
    'group_delete',
    'group_update',
    'member_status_update',
    'message_forward',
    'member_add',
    'field_create',
    'field_delete',
    'field_update',
  ];

  it('answers exactly the 22 event types of the spec, ids 1..22 in order', async () => {
    const res = await s.call('GET', '/1/webhooks/events');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(22);
    expect(res.body.map((e: any) => [e.webhook_event_id, e.event_name])).toEqual(NAMES.map((n, i) => [i + 1, n]));
    for (const e of res.body) {
      expect(Object.keys(e).sort()).toEqual(['description', 'event_name', 'webhook_event_id']);
      expect(typeof e.description).toBe('string');
      expect(e.description.length).toBeGreaterThan(0);
    }
    expect(res.body[5].description).toBe('Fired when a member opts out.');
  });

  it('takes no input and is 404 for another account', async () => {
    // An unknown query parameter is ignored (named in a header).
    expect((await s.call('GET', '/1/webhooks/events', { query: { type: 'x' } })).status).toBe(200);
    expect(await s.call('GET', '/2/webhooks/events')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
  });
});
