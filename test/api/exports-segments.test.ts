import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { addMember, countRows, createField, createGroups, ok, setStatus } from './util.js';

/** Audience exports with criteria.segments: segments are saved searches (see searches.test.ts). */
let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

async function createExport(criteria: Record<string, unknown>): Promise<number> {
  const body = await ok(s, 'POST', '/1/exports', { body: { user_id: 'owner@localhost', criteria } });
  return body.export_id;
}

/** member_id column of the export's CSV download. */
async function exportedIds(exportId: number): Promise<number[]> {
  const res = await s.router.handle({ method: 'GET', path: `/1/exports/${exportId}/download`, query: {}, actor: s.actor });
  expect(res.status).toBe(200);
  let text = '';
  for (const chunk of res.raw!.data as Iterable<string>) text += chunk;
  const [header, ...rows] = text
    .trimEnd()
    .split('\n')
    .map((line) => line.split(','));
  const at = header.indexOf('member_id');
  return rows.map((r) => Number(r[at]));
}

async function createSearch(name: string, criteria: unknown): Promise<number> {
  return await ok(s, 'POST', '/1/searches', { body: { name, criteria } });
}

/**
 *  1 ada   Oslo    Gold
 *  2 bob   Oslo            (opted out)
 *  3 cy    Bergen  Gold
 *  4 di    Oslo            (archived)
 *  5 ed    Bergen
 *  6 fay   Oslo            (error)
 */
async function seed() {
  await createField(s, { shortcut_name: 'city', field_type: 'text' });
  const [gold] = await createGroups(s, 'Gold');
  await addMember(s, 'ada@x.org', { fields: { city: 'Oslo' }, group_ids: [gold] });
  await addMember(s, 'bob@x.org', { fields: { city: 'Oslo' } });
  await addMember(s, 'cy@x.org', { fields: { city: 'Bergen' }, group_ids: [gold] });
  await addMember(s, 'di@x.org', { fields: { city: 'Oslo' } });
  await addMember(s, 'ed@x.org', { fields: { city: 'Bergen' } });
  await addMember(s, 'fay@x.org', { fields: { city: 'Oslo' } });
  await setStatus(s, [2], 'o');
  await setStatus(s, [6], 'e');
  expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [4] } })).toBe(true);
  const oslo = await createSearch('Oslo', ['member_field:city', 'eq', 'Oslo']);
  return { gold, oslo };
}

describe('POST /{account_id}/exports with criteria.segments', () => {
  it('exports the members of a segment, of the statuses asked for, never archived ones', async () => {
    const { oslo } = await seed();
    expect(await exportedIds(await createExport({ segments: [oslo] }))).toEqual([1]);
    expect(await exportedIds(await createExport({ segments: [oslo], member_status_ids: ['a', 'o', 'e'] }))).toEqual([1, 2, 6]);
  });

  it('is the union of groups, segments, subscriptions and member_ids, each member once', async () => {
    const { gold, oslo } = await seed();
    const sub = await ok(s, 'POST', '/1/subscriptions', { body: { name: 'Weekly' } });
    expect(await ok(s, 'POST', `/1/subscriptions/${sub.subscription_id}/members/bulk`, { body: { member_ids: [5] } })).toBe(true);
    const bergen = await createSearch('Bergen', ['member_field:city', 'eq', 'Bergen']);
    const statuses = ['a', 'o', 'e'];
    expect(await exportedIds(await createExport({ groups: [gold], segments: [oslo], member_status_ids: statuses }))).toEqual([1, 2, 3, 6]);
    expect(
      await exportedIds(await createExport({ segments: [bergen, oslo, bergen], member_ids: [2], member_status_ids: statuses })),
    ).toEqual([1, 2, 3, 5, 6]);
    const id = await createExport({ groups: [], segments: [oslo], subscriptions: [sub.subscription_id], member_ids: [3] });
    expect(await exportedIds(id)).toEqual([1, 3, 5]);
    // The record keeps the segments as given, without repeats.
    expect((await ok(s, 'GET', '/1/exports/2')).criteria.segments).toEqual([bergen, oslo]);
    expect((await ok(s, 'GET', `/1/exports/${id}`)).criteria).toMatchObject({ groups: [], segments: [oslo], member_ids: [3] });
  });

  it('an empty segment list is a union of nothing; segments null with no other source is the whole audience', async () => {
    await seed();
    expect(await exportedIds(await createExport({ segments: [] }))).toEqual([]);
    const all = await createExport({ segments: null });
    expect(await exportedIds(all)).toEqual([1, 3, 5]);
    expect((await ok(s, 'GET', `/1/exports/${all}`)).criteria.segments).toBeNull();
  });

  it('runs the segment when the export is created: later changes to the search leave the export as it was', async () => {
    const { oslo } = await seed();
    const id = await createExport({ segments: [oslo] });
    await ok(s, 'PUT', `/1/searches/${oslo}`, { body: { criteria: ['member_field:city', 'eq', 'Bergen'] } });
    expect(await exportedIds(id)).toEqual([1]);
    expect(await exportedIds(await createExport({ segments: [oslo] }))).toEqual([3, 5]);
  });

  it('follows segments that use other searches', async () => {
    const { oslo } = await seed();
    const goldInOslo = await createSearch('Gold in Oslo', ['and', ['search', 'eq', oslo], ['group', 'eq', 'Gold']]);
    expect(await exportedIds(await createExport({ segments: [goldInOslo] }))).toEqual([1]);
  });

  it("answers 404 naming unknown, deleted and other accounts' segments, and creates nothing", async () => {
    const { oslo } = await seed();
    const gone = await createSearch('Gone', ['member_status_id', 'eq', 'a']);
    expect(await ok(s, 'DELETE', `/1/searches/${gone}`)).toBe(true);
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', 'x')`).run();
    s.db
      .prepare(
        `INSERT INTO searches (search_id, account_id, name, criteria, created_at) VALUES (70, 2, 'Theirs', '["member_status_id","eq","a"]', 'x')`,
      )
      .run();
    const post = (segments: number[]) => s.call('POST', '/1/exports', { body: { user_id: 'owner@localhost', criteria: { segments } } });
    expect(await post([oslo, 98, 99])).toEqual({ status: 404, body: { error: 'segments 98, 99 not found' } });
    expect(await post([gone])).toEqual({ status: 404, body: { error: `segment ${gone} not found` } });
    expect(await post([70])).toEqual({ status: 404, body: { error: 'segment 70 not found' } });
    expect(countRows(s, 'exports')).toBe(0);
  });
});
