/**
 * The permission table (each route's `access`, checked by the Router with `mayCall`):
 * generated over the whole route table, every operation is refused with a 403 that
 * names it to each role that may not call it, before anything is read or written,
 * and is not refused for that reason to a role that may. Then the one rule for users
 * and keys: a caller acts on itself, or on users of a lower role; owners on anyone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { ROUTES } from '../../src/api/routes/index.js';
import { ACCESS_NEEDS, mayCall, type Access } from '../../src/service/accounts/accounts.js';
import type { Actor, Role } from '../../src/service/context.js';
import { ok } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService(T0);
});
afterEach(() => s.close());

/** Adds a user (as the owner) and answers the actor its keys would act as. */
async function userWith(role: Role, extra: { manage_users?: boolean; billing_access?: boolean } = {}): Promise<Actor> {
  const email = `${role}${extra.manage_users ? '-people' : ''}${extra.billing_access ? '-billing' : ''}@example.com`;
  const u = await ok(s, 'POST', '/1/users', { body: { email, role, ...extra } });
  return { user_id: u.user_id, account_id: 1, email, role, manage_users: !!extra.manage_users, billing_access: !!extra.billing_access };
}

const call = (actor: Actor, method: string, path: string, body: unknown = {}) =>
  Promise.resolve(s.router.handle({ method, path, query: {}, body: JSON.stringify(body), actor })).then((r) => ({
    status: r.status,
    body: r.body as { error?: string; operation?: string; access?: string },
  }));

/** A path of the route with every placeholder filled (1: the id need not exist; the check comes first). */
const pathOf = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'email' ? 'a%40example.com' : '1'));

describe('the permission table', () => {
  it('every route says who may call it, and the table has each kind', () => {
    for (const r of ROUTES) expect(Object.keys(ACCESS_NEEDS), r.op).toContain(r.access);
    const kinds = new Set(ROUTES.map((r) => r.access));
    expect([...kinds].sort()).toEqual(['billing', 'manager', 'people', 'user']);
  });

  it('the openapi document carries it as x-amsg-access', async () => {
    const doc = await ok(s, 'GET', '/openapi.json');
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p)) as { operationId: string; 'x-amsg-access': Access }[];
    expect(ops.length).toBe(ROUTES.length);
    for (const r of ROUTES) expect(ops.find((o) => o.operationId === r.op)?.['x-amsg-access'], r.op).toBe(r.access);
  });

  it('each role is refused exactly the operations it may not call, with a 403 naming them, and nothing changes', async () => {
    const actors = {
      user: await userWith('user'),
      billing: await userWith('user', { billing_access: true }),
      manager: await userWith('manager'),
      people: await userWith('manager', { manage_users: true }),
    };
    const changes = s.db.prepare('SELECT total_changes()').pluck();
    let refused = 0;
    for (const [who, actor] of Object.entries(actors))
      for (const r of ROUTES) {
        const before = changes.get();
        const res = await call(actor, r.method, pathOf(r.path));
        if (mayCall(actor, r.access)) {
          expect(res.body?.operation, `${who} ${r.op}`).toBeUndefined();
          continue;
        }
        refused++;
        expect(res.status, `${who} ${r.op}`).toBe(403);
        expect(res.body, `${who} ${r.op}`).toEqual({
          error: `forbidden: ${r.op} needs ${ACCESS_NEEDS[r.access]} (this key's user ${actor.email} has role ${actor.role})`,
          operation: r.op,
          access: r.access,
        });
        expect(changes.get(), `${who} ${r.op} wrote`).toBe(before);
      }
    // Users are refused every manager and people operation, managers the people ones;
    // everyone but the user with billing access is refused the billing ones.
    const count = (a: Access) => ROUTES.filter((r) => r.access === a).length;
    expect(refused).toBe(2 * (count('manager') + count('people')) + count('people') + 3 * count('billing'));
  });

  it('a user may not list keys or users, export, delete fields or purge (what the probe found)', async () => {
    const user = await userWith('user');
    for (const [method, path] of [
      ['GET', '/1/keys'],
      ['GET', '/1/users'],
      ['POST', '/1/exports'],
      ['DELETE', '/1/fields/1'],
      ['POST', '/1/members/purge'],
    ])
      expect((await call(user, method, path)).status, `${method} ${path}`).toBe(403);
  });

  it('another account is a 404 whatever the role (the permission is not told)', async () => {
    const user = await userWith('user');
    expect(await call(user, 'GET', '/2/keys')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
  });
});

describe('acting on users and keys: oneself, or users of a lower role; owners anyone', () => {
  const keyOf = async (userId: number) => (await ok(s, 'POST', '/1/keys', { body: { user_id: userId } })).key_id as number;

  it('a manager with manage_users cannot revoke the owner’s key, nor another manager’s', async () => {
    const people = await userWith('manager', { manage_users: true });
    const other = await userWith('manager');
    const ownerKey = (await ok(s, 'GET', '/1/keys'))[0].key_id;
    const res = await call(people, 'DELETE', `/1/keys/${ownerKey}`);
    expect(res).toEqual({ status: 403, body: { error: 'a manager cannot revoke the keys of a owner: only of users of a lower role' } });
    expect((await call(people, 'DELETE', `/1/keys/${await keyOf(other.user_id)}`)).status).toBe(403);
    expect((await ok(s, 'GET', '/1/keys')).every((k: { revoked_at: string | null }) => k.revoked_at === null)).toBe(true);
  });

  it('a manager with manage_users cannot create a key for another manager or the owner, but can for a user and itself', async () => {
    const people = await userWith('manager', { manage_users: true });
    const other = await userWith('manager');
    const user = await userWith('user');
    expect(await call(people, 'POST', '/1/keys', { user_id: other.user_id })).toEqual({
      status: 403,
      body: { error: 'a manager cannot create keys for a manager: only for users of a lower role' },
    });
    expect((await call(people, 'POST', '/1/keys', { user_id: 1 })).status).toBe(403);
    expect((await call(people, 'POST', '/1/keys', { user_id: user.user_id })).status).toBe(200);
    expect((await call(people, 'POST', '/1/keys', {})).status).toBe(200);
    // ... and revoke the user's key.
    const userKey = await keyOf(user.user_id);
    expect(await call(people, 'DELETE', `/1/keys/${userKey}`)).toEqual({ status: 200, body: true });
  });

  it('a user acts on its own keys only', async () => {
    const user = await userWith('user');
    const own = await call(user, 'POST', '/1/keys', {});
    expect(own.status).toBe(200);
    expect(await call(user, 'DELETE', `/1/keys/${(own.body as any).key_id}`)).toEqual({ status: 200, body: true });
    const ownerKey = (await ok(s, 'GET', '/1/keys'))[0].key_id;
    expect((await call(user, 'DELETE', `/1/keys/${ownerKey}`)).status).toBe(403);
  });
});
