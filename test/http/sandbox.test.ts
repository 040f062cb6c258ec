/**
 * Fast resets of `amsg serve`: snapshots taken and restored while the server has the
 * database open and is writing it, and `POST /_sandbox/reset`.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { serve } from '../../src/server/index.js';
import { initializeLocal } from '../../src/api/local.js';
import { restoreSnapshot, SnapshotError, takeSnapshot } from '../../src/store/snapshot.js';
import { ImportWriter } from '../../src/service/imports/import-writer.js';
import { WRITER_SCRIPT } from '../helpers.js';

let dir: string;
const running: { close(): Promise<void> }[] = [];

beforeAll(() => {
  process.env.AMSG_NOW = '2026-05-06T07:08:09Z';
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-sandbox-'));
});
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

type Server = Awaited<ReturnType<typeof serve>>;

async function start(opts: { db?: string; resetTo?: string; keepStartingState?: boolean; importWriter?: ImportWriter } = {}) {
  const server = await serve({
    db: opts.db ?? join(dir, 'amsg.db'),
    port: 0,
    resetTo: opts.resetTo,
    keepStartingState: opts.keepStartingState,
    importWriter: opts.importWriter,
  });
  running.push(server);
  return server;
}

/** A client of one server with one key pair. */
function client(server: Server, key: { public_key: string; private_key: string }) {
  const auth = `Basic ${Buffer.from(`${key.public_key}:${key.private_key}`).toString('base64')}`;
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: auth },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
}

/** The 403 every key but the sandbox owner's gets from POST /_sandbox/reset. */
const SANDBOX_OWNER_ONLY = {
  error:
    "forbidden: /_sandbox/reset needs the key of the sandbox's owner, an owner of account 1 (the account amsg init made): it restores every account",
  access: 'sandbox owner',
};

const addMember = (call: ReturnType<typeof client>, email: string) => call('POST', '/1/members/add', { email });
const count = async (call: ReturnType<typeof client>) => (await call('GET', '/1/members?count=true')).body;

describe('the import writer of amsg serve', () => {
  test("starts with the server, so a streamed import's first batch is written on its thread, not on the serving one", async () => {
    const file = join(dir, 'amsg.db');
    const writer = new ImportWriter(file, WRITER_SCRIPT);
    const server = await start({ db: file, importWriter: writer });
    // Only looked at (ready starts nothing): before any import, the thread comes up by itself.
    for (let i = 0; i < 500 && !writer.ready; i++) await new Promise((r) => setTimeout(r, 10));
    expect(writer.ready).toBe(true);
    expect(writer.batchesSent).toBe(0);

    const call = client(server, server.created!);
    const opened = await call('POST', '/1/members/imports', {});
    expect(opened.status).toBe(200);
    const id = opened.body.import_id as number;
    const members = Array.from({ length: 3 }, (_, i) => ({ email: `m${i}@example.com`, first_name: `M${i}` }));
    expect((await call('POST', `/1/members/imports/${id}/rows`, { members })).body).toMatchObject({
      import_id: id,
      num_members: 3,
      added: 3,
    });
    expect(writer.batchesSent).toBe(1);
    expect((await call('POST', `/1/members/imports/${id}/finish`, {})).body).toMatchObject({ status: 'o', num_members_added: 3 });
    expect(await count(call)).toBe(3);
  });
});

describe('POST /_sandbox/reset', () => {
  test('restores the state a new database started with; the owner key only; POST only', async () => {
    const server = await start();
    const call = client(server, server.created!);
    expect((await addMember(call, 'a@example.com')).status).toBe(200);
    expect(await count(call)).toBe(1);
    expect(await call('POST', '/_sandbox/reset')).toEqual({ status: 200, body: true });
    expect(await count(call)).toBe(0);
    expect((await call('GET', '/1/members/email/a%40example.com')).status).toBe(404);
    // Written to again after the reset, on the same connection.
    expect((await addMember(call, 'b@example.com')).body).toMatchObject({ member_id: 1 });

    const user = (await call('POST', '/1/users', { email: 'm@example.com', role: 'manager', manage_users: true })).body;
    const managerKey = (await call('POST', '/1/keys', { user_id: user.user_id })).body;
    const manager = client(server, managerKey);
    expect(await manager('POST', '/_sandbox/reset')).toEqual({ status: 403, body: SANDBOX_OWNER_ONLY });
    expect(await call('GET', '/_sandbox/reset')).toEqual({ status: 405, body: { error: '/_sandbox/reset takes POST' } });
    const anonymous = await fetch(`${server.url}/_sandbox/reset`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect(await count(call)).toBe(1);
  });

  test("over an HQ database: the sandbox owner's key only; a sub-account's owner, and every manager and user, get 403", async () => {
    const file = join(dir, 'hq.db');
    const init = initializeLocal(file, { hq: true });
    const snap = join(dir, 'hq-snap.db');
    await takeSnapshot(file, snap);
    const server = await start({ db: file, resetTo: snap });
    const hqOwner = client(server, { public_key: init.public_key!, private_key: init.private_key! });
    const sub = (await hqOwner('POST', '/1/enterprise/subaccount', { account_name: 'Oslo branch' })).body.account_id as number;
    expect(sub).toBe(2);
    /** A key of a user of an account: its existing owner, or a new user of that role. */
    const keyOf = async (account: number, role: 'owner' | 'manager' | 'user', extra: Record<string, unknown> = {}) => {
      const user =
        role === 'owner' && account !== 1
          ? (await hqOwner('GET', `/${account}/users`)).body.find((u: { role: string }) => u.role === 'owner')
          : (
              await hqOwner('POST', `/${account}/users`, {
                email: `${role}${JSON.stringify(extra).length}@a${account}.example.com`,
                role,
                ...extra,
              })
            ).body;
      const key = await hqOwner('POST', `/${account}/keys`, { user_id: user.user_id });
      expect(key.status).toBe(200);
      return client(server, key.body);
    };
    const others = {
      'HQ manager with manage_users and billing access': await keyOf(1, 'manager', { manage_users: true, billing_access: true }),
      'HQ user': await keyOf(1, 'user'),
      'sub-account owner': await keyOf(sub, 'owner'),
      'sub-account manager with manage_users': await keyOf(sub, 'manager', { manage_users: true }),
      'sub-account user': await keyOf(sub, 'user'),
    };
    const secondOwner = await keyOf(1, 'owner');
    await addMember(hqOwner, 'kept@example.com');
    for (const [who, call] of Object.entries(others))
      expect({ who, ...(await call('POST', '/_sandbox/reset')) }).toEqual({ who, status: 403, body: SANDBOX_OWNER_ONLY });
    // Nothing was reset: the member added since the snapshot is still there.
    expect(await count(hqOwner)).toBe(1);
    // Any owner of the account amsg init made is the sandbox's owner.
    expect(await secondOwner('POST', '/_sandbox/reset')).toEqual({ status: 200, body: true });
    expect(await count(hqOwner)).toBe(0);
    expect(await hqOwner('POST', '/_sandbox/reset')).toEqual({ status: 200, body: true });
  });

  test('a database served as it was has no starting state to reset to (409)', async () => {
    const file = join(dir, 'old.db');
    const init = initializeLocal(file);
    const server = await start({ db: file });
    const call = client(server, { public_key: init.public_key!, private_key: init.private_key! });
    expect(await call('POST', '/_sandbox/reset')).toEqual({
      status: 409,
      body: {
        error: 'this server has no starting state to reset to: start it with --seed FILE or --snapshot FILE (or on a new database file)',
      },
    });
  });

  test('started from a snapshot (--snapshot), it goes back to that snapshot', async () => {
    const file = join(dir, 'seeded.db');
    const init = initializeLocal(file);
    const snap = join(dir, 'snap.db');
    {
      const server = await start({ db: file });
      const call = client(server, { public_key: init.public_key!, private_key: init.private_key! });
      await addMember(call, 'kept@example.com');
      await takeSnapshot(file, snap);
      await server.close();
      running.splice(0);
    }
    const live = join(dir, 'live.db');
    await restoreSnapshot(snap, live);
    const server = await start({ db: live, resetTo: snap });
    const call = client(server, { public_key: init.public_key!, private_key: init.private_key! });
    await addMember(call, 'extra@example.com');
    expect(await count(call)).toBe(2);
    expect((await call('POST', '/_sandbox/reset')).body).toBe(true);
    expect(await count(call)).toBe(1);
    expect((await call('GET', '/1/members/email/kept%40example.com')).status).toBe(200);
  });
});

describe('snapshots under a running server', () => {
  test('a snapshot taken while the server writes is one consistent state; a restore into the live file is seen at once', async () => {
    const file = join(dir, 'amsg.db');
    const server = await start({ db: file });
    const call = client(server, server.created!);
    for (let i = 0; i < 50; i++) await addMember(call, `m${i}@example.com`);
    const snap = join(dir, 'snap.db');
    // Writes go on while the snapshot is taken.
    const writing = Promise.all(Array.from({ length: 50 }, (_, i) => addMember(call, `w${i}@example.com`)));
    await takeSnapshot(file, snap);
    await writing;
    expect(statSync(snap).mode & 0o777).toBe(0o600);
    const copy = new Database(snap, { readonly: true });
    const inCopy = copy.prepare('SELECT COUNT(*) FROM members').pluck().get() as number;
    // The kept count agrees with the rows: one state, not a mix of two.
    expect(copy.prepare('SELECT SUM(n) FROM member_counts WHERE account_id = 1').pluck().get()).toBe(inCopy);
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
    copy.close();
    expect(inCopy).toBeGreaterThanOrEqual(50);
    expect(await count(call)).toBe(100);

    await restoreSnapshot(snap, file);
    // The server's open connection sees the restored file at its next request.
    expect(await count(call)).toBe(inCopy);
    expect((await call('GET', '/1/members/email/w49%40example.com')).status).toBe(inCopy === 100 ? 200 : 404);
    const next = await addMember(call, 'after@example.com');
    expect(next.status).toBe(200);
    expect(await count(call)).toBe(inCopy + 1);
  });

  test('a file that is not an amsg snapshot is refused before anything is written', async () => {
    const file = join(dir, 'amsg.db');
    initializeLocal(file);
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    await expect(restoreSnapshot(other, file)).rejects.toThrow(new SnapshotError(`${other} is not an amsg database snapshot`));
    writeFileSync(join(dir, 'text.db'), 'not a database at all');
    await expect(restoreSnapshot(join(dir, 'text.db'), file)).rejects.toThrow(`${join(dir, 'text.db')} is not an amsg database snapshot`);
    await expect(restoreSnapshot(join(dir, 'missing.db'), file)).rejects.toThrow(`no database at ${join(dir, 'missing.db')}`);
  });
});
