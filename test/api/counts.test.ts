/**
 * Kept counts (src/store/counters.ts): after every kind of write that moves a member,
 * a membership or a subscription row, the stored counts equal a COUNT(*) of the rows,
 * and the answers that read them (count=true, a group's and a subscription's counts)
 * say the expected numbers. Imports run both ways: counted by the triggers (batches
 * written here) and by the batch itself (the import writer thread has no triggers).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { TRUE_COUNTS, recountAll } from '../../src/store/counters.js';
import { advanceImports } from '../../src/service/imports/index.js';
import { addMember, createField, createGroups, ok, setStatus } from './util.js';

/** Every kept count equals the truth; a count that went below zero or was never made fails too. */
function expectCountsTrue(s: TestService) {
  for (const [table, truth] of Object.entries(TRUE_COUNTS)) {
    const kept = s.db.prepare(`SELECT * FROM ${table} WHERE n <> 0 ORDER BY 1, 2, 3, 4`).all();
    const real = s.db.prepare(`SELECT * FROM (${truth}) ORDER BY 1, 2, 3, 4`).all();
    expect(kept, table).toEqual(real);
  }
}

const group = (s: TestService, id: number) => ok(s, 'GET', `/1/groups/${id}`);
const groupCounts = async (s: TestService, id: number) => {
  const g = await group(s, id);
  return [g.active_count, g.error_count, g.optout_count];
};
const memberCount = (s: TestService, query: Record<string, string> = {}) =>
  ok(s, 'GET', '/1/members', { query: { count: 'true', ...query } });

describe('kept counts, written through the services (triggers)', () => {
  let s: TestService;
  let gold: number;
  let silver: number;
  let ids: number[];
  beforeEach(async () => {
    s = makeService(T0);
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    [gold, silver] = await createGroups(s, 'Gold', 'Silver');
    ids = [];
    for (let i = 0; i < 6; i++) ids.push(await addMember(s, `m${i}@example.com`, { group_ids: i < 4 ? [gold] : [silver] }));
  });
  afterEach(() => s.close());

  it('add: a new member counts in its account and its groups; adding it again counts nothing', async () => {
    expect(await memberCount(s)).toBe(6);
    expect(await groupCounts(s, gold)).toEqual([4, 0, 0]);
    await addMember(s, 'm0@example.com', { group_ids: [gold, silver] });
    expect(await groupCounts(s, silver)).toEqual([3, 0, 0]);
    expect(await memberCount(s)).toBe(6);
    expectCountsTrue(s);
  });

  it('status changes (bulk, move, one member, opt-out by address) move the member in every group', async () => {
    await setStatus(s, [ids[0], ids[4]], 'e');
    expect(await groupCounts(s, gold)).toEqual([3, 1, 0]);
    expect(await groupCounts(s, silver)).toEqual([1, 1, 0]);
    await ok(s, 'PUT', '/1/members/status/e/to/o', { body: { group_id: gold } });
    expect(await groupCounts(s, gold)).toEqual([3, 0, 1]);
    expect(await groupCounts(s, silver)).toEqual([1, 1, 0]);
    await ok(s, 'PUT', `/1/members/${ids[1]}`, { body: { status_to: 'e' } });
    await ok(s, 'PUT', '/1/members/email/optout/m5@example.com');
    expect(await groupCounts(s, gold)).toEqual([2, 1, 1]);
    expect(await groupCounts(s, silver)).toEqual([0, 1, 1]);
    expect(await memberCount(s)).toBe(6);
    expectCountsTrue(s);
  });

  it('archive (one, listed, by status) and restore move members between live and archived counts', async () => {
    await ok(s, 'DELETE', `/1/members/${ids[0]}`);
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [ids[1], ids[4]] } });
    await setStatus(s, [ids[2]], 'o');
    await ok(s, 'DELETE', '/1/members', { query: { member_status_id: 'o' } });
    expect(await memberCount(s)).toBe(2);
    expect(await memberCount(s, { deleted_only: 'true' })).toBe(4);
    expect(await memberCount(s, { deleted: 'true' })).toBe(6);
    expect(await groupCounts(s, gold)).toEqual([1, 0, 0]);
    expect(await groupCounts(s, silver)).toEqual([1, 0, 0]);
    expectCountsTrue(s);
    // Adding an archived member brings it back, with its status and groups.
    await addMember(s, 'm2@example.com');
    expect(await groupCounts(s, gold)).toEqual([1, 0, 1]);
    expect(await memberCount(s)).toBe(3);
    expectCountsTrue(s);
  });

  it('purge (listed, and every archived member of a group) takes the member out of every count', async () => {
    await setStatus(s, [ids[1]], 'e');
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ids[0], ids[1]] } });
    expect(await groupCounts(s, gold)).toEqual([2, 0, 0]);
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [ids[2], ids[4]] } });
    await ok(s, 'PUT', '/1/members/purgeall', { body: { member_group_id: gold } });
    expect(await memberCount(s, { deleted: 'true' })).toBe(3);
    expect(await memberCount(s, { deleted_only: 'true' })).toBe(1);
    expect(await groupCounts(s, gold)).toEqual([1, 0, 0]);
    expectCountsTrue(s);
  });

  it('group writes: add, remove, remove from all, clear (all or one status), copy, copy by status, delete', async () => {
    await ok(s, 'PUT', `/1/members/${ids[4]}/groups`, { body: { group_ids: [gold] } });
    await ok(s, 'PUT', `/1/groups/${silver}/members`, { body: { member_ids: [ids[0], ids[1]] } });
    expect(await groupCounts(s, silver)).toEqual([4, 0, 0]);
    await ok(s, 'PUT', `/1/members/${ids[0]}/groups/remove`, { body: { group_ids: [silver] } });
    await ok(s, 'PUT', `/1/groups/${gold}/members/remove`, { body: { member_ids: [ids[3]] } });
    await ok(s, 'DELETE', `/1/members/${ids[1]}/groups`);
    expect(await groupCounts(s, gold)).toEqual([3, 0, 0]);
    expect(await groupCounts(s, silver)).toEqual([2, 0, 0]);
    expectCountsTrue(s);

    await setStatus(s, [ids[2]], 'o');
    await ok(s, 'DELETE', `/1/groups/${gold}/members`, { query: { member_status_id: 'o' } });
    expect(await groupCounts(s, gold)).toEqual([2, 0, 0]);
    const [bronze] = await createGroups(s, 'Bronze');
    await ok(s, 'PUT', `/1/groups/${gold}/${bronze}/members/copy`, { body: {} });
    expect(await groupCounts(s, bronze)).toEqual([2, 0, 0]);
    await ok(s, 'PUT', `/1/members/${bronze}/copy`, { body: { member_status_id: ['o'] } });
    expect(await groupCounts(s, bronze)).toEqual([2, 0, 1]);
    await ok(s, 'DELETE', `/1/groups/${silver}/members`);
    expect(await groupCounts(s, silver)).toEqual([0, 0, 0]);
    await ok(s, 'DELETE', `/1/groups/${gold}`);
    expectCountsTrue(s);
  });

  it('clearing or deleting a field moves no count', async () => {
    await ok(s, 'PUT', `/1/members/${ids[0]}`, { body: { fields: { city: 'Oslo' } } });
    const before = s.db.prepare('SELECT * FROM group_counts ORDER BY 1, 2, 3').all();
    const field = (await ok(s, 'GET', '/1/fields')).find((f: { shortcut_name: string }) => f.shortcut_name === 'city').field_id;
    await ok(s, 'POST', `/1/fields/${field}/clear`);
    await ok(s, 'DELETE', `/1/fields/${field}`);
    expect(s.db.prepare('SELECT * FROM group_counts ORDER BY 1, 2, 3').all()).toEqual(before);
    expectCountsTrue(s);
  });

  it('subscriptions: subscribe, opt out of it, opt out of everything, archive, remove', async () => {
    const sub = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
    const counts = async () => {
      const r = await ok(s, 'GET', `/1/subscriptions/${sub}`);
      return [r.member_count, r.optout_count];
    };
    await ok(s, 'POST', `/1/subscriptions/${sub}/members/bulk`, { body: { member_ids: ids.slice(0, 5) } });
    expect(await counts()).toEqual([5, 0]);
    await ok(s, 'PUT', `/1/subscriptions/${sub}/members/${ids[0]}/optout`, { body: {} });
    await setStatus(s, [ids[1]], 'o');
    await ok(s, 'DELETE', `/1/members/${ids[2]}`);
    expect(await counts()).toEqual([2, 2]);
    expect(await ok(s, 'GET', `/1/subscriptions/${sub}/members`)).toEqual([{ member_id: ids[3] }, { member_id: ids[4] }]);
    expect(await ok(s, 'GET', `/1/subscriptions/${sub}/optouts`)).toEqual([{ member_id: ids[0] }, { member_id: ids[1] }]);
    await ok(s, 'DELETE', `/1/subscriptions/${sub}/members/${ids[0]}`);
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ids[1]] } });
    expect(await counts()).toEqual([2, 0]);
    expectCountsTrue(s);
  });

  it('a staged import job (POST /members) counts its members and memberships', async () => {
    await ok(s, 'POST', '/1/members', {
      body: { members: [{ email: 'j1@example.com' }, { email: 'm0@example.com' }, { email: 'j2@example.com' }], group_ids: [silver] },
    });
    for (let i = 0; i < 100 && advanceImports(s.db, s.clock, 10_000); i++);
    expect(await memberCount(s)).toBe(8);
    expect(await groupCounts(s, silver)).toEqual([5, 0, 0]);
    expectCountsTrue(s);
  });

  it('recountAll puts counts right that were written around the triggers', async () => {
    s.db.prepare('UPDATE group_counts SET n = n + 7').run();
    recountAll(s.db);
    expect(await groupCounts(s, gold)).toEqual([4, 0, 0]);
    expectCountsTrue(s);
  });
});

describe.each([
  ['written here (triggers)', false],
  ['written by the import writer thread (counted by the batch)', true],
])('kept counts of streamed imports, %s', (_, importWriter) => {
  let s: TestService;
  beforeEach(async () => {
    s = makeService(T0, { importWriter });
    // Every batch to the thread: until it has started, batches are written here.
    if (importWriter) await s.router.importWriter!.whenReady();
  });
  afterEach(() => s.close());

  const importRows = async (rows: string[][], extra: Record<string, unknown> = {}) => {
    const id = (await ok(s, 'POST', '/1/members/imports', { body: extra })).import_id;
    await ok(s, 'POST', `/1/members/imports/${id}/rows`, { body: { columns: ['email', 'groups'], rows } });
    await ok(s, 'POST', `/1/members/imports/${id}/finish`, { body: {} });
    return id as number;
  };
  const groupId = async (name: string) =>
    (await ok(s, 'GET', '/1/groups')).find((g: { group_name: string }) => g.group_name === name).member_group_id as number;

  it('a first import, a re-import with new groups, and one that brings archived members back', async () => {
    const rows = Array.from({ length: 250 }, (_, i) => [`u${i}@example.com`, i % 2 ? 'Odd' : 'Even']);
    await importRows(rows);
    const odd = await groupId('Odd');
    const even = await groupId('Even');
    expect(await memberCount(s)).toBe(250);
    expect(await groupCounts(s, odd)).toEqual([125, 0, 0]);
    expectCountsTrue(s);

    // Status changes and archives between the imports, through the services.
    const [first, second, third] = (await ok(s, 'GET', '/1/members', { query: { end: '3' } })).map(
      (m: { member_id: number }) => m.member_id,
    );
    await setStatus(s, [first], 'o');
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [second, third] } });
    expect(await groupCounts(s, even)).toEqual([123, 0, 1]);
    expect(await memberCount(s)).toBe(248);

    // Again, everyone also in All, and a few new members: the archived come back.
    await importRows([...rows.map(([e, g]) => [e, `${g};All`]), ['new1@example.com', 'All'], ['new2@example.com', 'Odd']]);
    const all = await groupId('All');
    expect(await memberCount(s)).toBe(252);
    expect(await memberCount(s, { deleted_only: 'true' })).toBe(0);
    expect(await groupCounts(s, all)).toEqual([250, 0, 1]);
    expect(await groupCounts(s, even)).toEqual([124, 0, 1]);
    expect(await groupCounts(s, odd)).toEqual([126, 0, 0]);
    expectCountsTrue(s);
  });

  it('an import into the import groups of an account with archived members elsewhere', async () => {
    const [vip] = await createGroups(s, 'VIP');
    const archived = await addMember(s, 'gone@example.com', { group_ids: [vip] });
    await ok(s, 'DELETE', `/1/members/${archived}`);
    await importRows(
      [
        ['a@example.com', ''],
        ['b@example.com', 'VIP'],
      ],
      { group_ids: [vip] },
    );
    expect(await groupCounts(s, vip)).toEqual([2, 0, 0]);
    expect(await memberCount(s, { deleted_only: 'true' })).toBe(1);
    expectCountsTrue(s);
  });
});
