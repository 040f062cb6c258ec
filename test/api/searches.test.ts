import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { openDb } from '../../src/store/db.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { searchMembersSql } from '../../src/service/audience/searches.js';
import { addMember, atD, countRows, createField, createGroups, expectFieldError, ok, setStatus } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

/** The record as the service answers it right after it was computed (saving computes it). */
const search = (search_id: number, name: string, criteria: unknown, over: Record<string, unknown> = {}) => ({
  search_id,
  account_id: 1,
  name,
  criteria: JSON.stringify(criteria),
  active_count: 0,
  error_count: 0,
  optout_count: 0,
  cached_at: atD(T0),
  last_run_at: atD(T0),
  deleted_at: null,
  purged_at: null,
  ...over,
});

/**
 * Saves a search: POST answers the bare search_id (the real service's shape), then the
 * record is read back, so a test sees what was saved; a refusal is answered as it came.
 */
async function create(name: string, criteria: unknown) {
  const res = await s.call('POST', '/1/searches', { body: { name, criteria } });
  if (res.status !== 200) return res;
  expect(typeof res.body).toBe('number');
  return { status: 200, body: await ok(s, 'GET', `/1/searches/${res.body}`) };
}

/** Saves changes to a search: PUT answers true; the record is read back. */
async function update(id: number, body: Record<string, unknown>) {
  expect(await ok(s, 'PUT', `/1/searches/${id}`, { body })).toBe(true);
  return ok(s, 'GET', `/1/searches/${id}`);
}

/** Runs the job runner (which refreshes stale searches) until nothing is left to do now. */
function runJobs() {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
  expect(advanceJobs(s.db, s.clock, 1_000)).toBe(false);
}

const totalChanges = () => s.db.prepare('SELECT total_changes()').pluck().get() as number;

/** [active, error, optout] as GET /searches/{id} answers them. */
async function counts(id: number) {
  const r = await ok(s, 'GET', `/1/searches/${id}`);
  return [r.active_count, r.error_count, r.optout_count];
}

/** The member ids GET /searches/{id}/members lists. */
const listed = async (id: number, query?: Record<string, string>) =>
  (await ok(s, 'GET', `/1/searches/${id}/members`, { query })).map((m: { member_id: number }) => m.member_id);

/**
 * The search run now, straight from the tables (as a mailing send runs it): the live
 * members it matches and their [active, error, optout] counts.
 */
function truth(id: number) {
  const q = searchMembersSql({ db: s.db, clock: s.clock, actor: s.actor, accountId: 1 }, id);
  const rows = s.db
    .prepare(`SELECT member_id, member_status_id FROM members WHERE member_id IN (${q.sql}) ORDER BY member_id`)
    .all(...q.params) as { member_id: number; member_status_id: string }[];
  const n = (status: string) => rows.filter((r) => r.member_status_id === status).length;
  return { ids: rows.map((r) => r.member_id), counts: [n('a'), n('e'), n('o')] };
}

/** member_count is the search's rows in search_results, whatever wrote or removed them. */
function expectMemberCountKept() {
  const rows = s.db
    .prepare('SELECT search_id, member_count, (SELECT COUNT(*) FROM search_results r WHERE r.search_id = s.search_id) AS n FROM searches s')
    .all() as { search_id: number; member_count: number; n: number }[];
  for (const r of rows) expect(r.member_count, `search ${r.search_id}`).toBe(r.n);
}

let saved = 0;
/** Saves the criteria as a new search and answers the ids of the members it matches. */
async function matching(criteria: unknown): Promise<number[]> {
  const created = await create(`probe ${++saved}`, criteria);
  if (created.status !== 200) throw new Error(`${JSON.stringify(criteria)} answered ${created.status}: ${JSON.stringify(created.body)}`);
  const members = await ok(s, 'GET', `/1/searches/${created.body.search_id}/members`);
  return members.map((m: { member_id: number }) => m.member_id);
}

/** The 400 for saving these criteria: its message and the field it names. */
async function refusal(criteria: unknown) {
  const res = await create(`refused ${++saved}`, criteria);
  expect(res.status).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'field']);
  return res.body as { error: string; field: string };
}

/**
 * An audience with every field type:
 *  1 ada  Oslo      age 36  vip    1990-01-15  seen 2026-03-01T10:00:00  news, offers  Gold      joined 2026-01-10
 *  2 bob  Bergen    age 20  !vip   2000-06-30  seen 2026-03-02T09:30:00  events        Silver    joined 2026-02-10
 *  3 cy   oslo      age 50                                               (none)        Gold      joined 2026-03-04 (error)
 *  4 di   (no fields)                                                                            joined 2026-03-04 (opted out)
 *  5 ed   Trondheim  age 36, archived                                                  Gold
 */
async function seedAudience() {
  await createField(s, { shortcut_name: 'city', field_type: 'text' });
  await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
  await createField(s, { shortcut_name: 'vip', field_type: 'boolean' });
  await createField(s, { shortcut_name: 'birthday', field_type: 'date' });
  await createField(s, { shortcut_name: 'last_seen', field_type: 'timestamp' });
  await createField(s, {
    shortcut_name: 'tags',
    field_type: 'text[]',
    widget_type: 'check_multiple',
    options: ['news', 'offers', 'events'],
  });
  const [gold, silver] = await createGroups(s, 'Gold', 'Silver');
  s.clock.set('2026-01-10T12:00:00Z');
  await addMember(s, 'ada@example.com', {
    fields: { city: 'Oslo', age: 36, vip: true, birthday: '1990-01-15', last_seen: '2026-03-01T10:00:00', tags: ['news', 'offers'] },
    group_ids: [gold],
  });
  s.clock.set('2026-02-10T12:00:00Z');
  await addMember(s, 'bob@example.com', {
    fields: { city: 'Bergen', age: 20, vip: false, birthday: '2000-06-30', last_seen: '2026-03-02T09:30:00', tags: ['events'] },
    group_ids: [silver],
  });
  s.clock.set(T0);
  await addMember(s, 'cy@test.org', { fields: { city: 'oslo', age: 50 }, group_ids: [gold] });
  await addMember(s, 'di@example.com');
  await addMember(s, 'ed@example.com', { fields: { city: 'Trondheim', age: 36 }, group_ids: [gold] });
  await setStatus(s, [3], 'e');
  await setStatus(s, [4], 'o');
  expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [5] } })).toBe(true);
  return { gold, silver };
}

// ------------------------------------------------------------------ records

describe('saved searches: create, read, list, update, delete', () => {
  it('creates a search, answering its bare id; the record has criteria as a JSON string, counts computed when saved, @D: dates', async () => {
    await seedAudience();
    const criteria = ['or', ['member_field:city', 'eq', 'Oslo'], ['member:email', 'contains', '*@example.com']];
    expect(await s.call('POST', '/1/searches', { body: { name: 'Oslo or example', criteria } })).toEqual({ status: 200, body: 1 });
    const res = { status: 200, body: await ok(s, 'GET', '/1/searches/1') };
    expect(res).toEqual({
      status: 200,
      body: search(1, 'Oslo or example', criteria, { active_count: 2, error_count: 1, optout_count: 1 }),
    });
    expect(typeof res.body.criteria).toBe('string');
    expect(JSON.parse(res.body.criteria)).toEqual(criteria);
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(res.body);
    expect(await ok(s, 'GET', '/1/searches')).toEqual([res.body]);
  });

  it('takes criteria as a string holding the JSON too, and stores it re-serialized compactly', async () => {
    const res = await create('Text', '[ "member:email" ,  "eq", "ada@example.com" ]');
    expect(res.status).toBe(200);
    expect(res.body.criteria).toBe('["member:email","eq","ada@example.com"]');
    expect(s.db.prepare('SELECT criteria FROM searches').pluck().get()).toBe('["member:email","eq","ada@example.com"]');
  });

  it('cached_at and last_run_at are when the stored result was computed: saving stamps them, reading does not', async () => {
    await addMember(s, 'ada@example.com');
    const created = (await create('All', ['member_status_id', 'in', ['a', 'e', 'o']])).body;
    expect([created.cached_at, created.last_run_at, created.active_count]).toEqual([atD(T0), atD(T0), 1]);
    s.clock.set('2026-04-01T00:00:00Z');
    const later = await ok(s, 'GET', '/1/searches/1');
    expect(later).toEqual(created);
    await ok(s, 'GET', '/1/searches/1/members');
    expect(s.db.prepare('SELECT cached_at, last_run_at FROM searches').get()).toEqual({
      cached_at: '2026-03-04T05:06:07.000000',
      last_run_at: '2026-03-04T05:06:07.000000',
    });
    // Saving criteria (the same ones too) computes the search again.
    const saved = await update(1, { criteria: ['member_status_id', 'in', ['a', 'e', 'o']] });
    expect([saved.cached_at, saved.last_run_at]).toEqual(['@D:2026-04-01T00:00:00', '@D:2026-04-01T00:00:00']);
    // A rename alone keeps the stored result and its stamps.
    s.clock.set('2026-05-01T00:00:00Z');
    const renamed = await update(1, { name: 'Everyone' });
    expect([renamed.name, renamed.cached_at]).toEqual(['Everyone', '@D:2026-04-01T00:00:00']);
  });

  it('counts are cached: a member added, changing status, archived or purged moves them when the background refresh has run', async () => {
    await seedAudience();
    const example = (await create('Example', ['member:email', 'contains', '*@example.com'])).body;
    // ada (a), bob (a), di (o); ed is archived and counts nowhere.
    expect([example.active_count, example.error_count, example.optout_count]).toEqual([2, 0, 1]);
    expect(truth(1)).toEqual({ ids: [1, 2, 4], counts: [2, 0, 1] });
    expect(await listed(1)).toEqual([1, 2, 4]);
    runJobs();

    const fay = await addMember(s, 'fay@example.com');
    await setStatus(s, [2], 'e');
    expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [4] } })).toBe(true);
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [1] } })).toBe(true);
    expect(truth(1)).toEqual({ ids: [2, fay], counts: [1, 1, 0] });

    // Until the refresh: the counts as computed; the list is the stored result less
    // the members archived (di) or purged (ada) since; fay is not in it yet.
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(example);
    expect(await listed(1)).toEqual([2]);
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(1);
    expectMemberCountKept();
    // The runner notices the change at once but waits until the result is a second old.
    runJobs();
    expect(s.db.prepare('SELECT stale_since FROM searches').pluck().get()).toBe('2026-03-04T05:06:07.000000');
    s.clock.set('2026-03-04T05:06:07.999Z');
    runJobs();
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(example);

    s.clock.set('2026-03-04T05:06:08Z');
    runJobs();
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(
      search(1, 'Example', ['member:email', 'contains', '*@example.com'], {
        active_count: 1,
        error_count: 1,
        cached_at: '@D:2026-03-04T05:06:08',
        last_run_at: '@D:2026-03-04T05:06:08',
      }),
    );
    expect(await listed(1)).toEqual([2, fay]);
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(2);
    expect(s.db.prepare('SELECT stale_since FROM searches').pluck().get()).toBe(null);
    expectMemberCountKept();
  });

  it('lists live searches in id order, with a window and count=true', async () => {
    for (const name of ['A', 'B', 'C']) expect((await create(name, ['member_status_id', 'eq', 'a'])).status).toBe(200);
    expect((await ok(s, 'GET', '/1/searches')).map((r: any) => r.name)).toEqual(['A', 'B', 'C']);
    expect((await ok(s, 'GET', '/1/searches', { query: { start: '1', end: '2' } })).map((r: any) => r.name)).toEqual(['B']);
    expect(await s.call('GET', '/1/searches', { query: { count: 'true' } })).toEqual({ status: 200, body: 3 });
    expect(await ok(s, 'DELETE', '/1/searches/2')).toBe(true);
    expect((await ok(s, 'GET', '/1/searches')).map((r: any) => r.search_id)).toEqual([1, 3]);
    expect(await ok(s, 'GET', '/1/searches', { query: { count: '1' } })).toBe(2);
    expectFieldError(await s.call('GET', '/1/searches', { query: { start: '2', end: '1' } }), 'end');
    expect((await s.call('GET', '/1/searches', { query: { begin: '0' } })).status).toBe(200);
  });

  it('updates the name, the criteria or both, answering true', async () => {
    await seedAudience();
    await create('Oslo', ['member_field:city', 'eq', 'Oslo']);
    expect(await s.call('PUT', '/1/searches/1', { body: { name: '  Oslo people ' } })).toEqual({ status: 200, body: true });
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(
      search(1, 'Oslo people', ['member_field:city', 'eq', 'Oslo'], { active_count: 1, error_count: 1 }),
    );
    const changed = await update(1, { criteria: '["member_field:city","eq","Bergen"]' });
    expect([changed.name, changed.criteria, changed.active_count, changed.error_count]).toEqual([
      'Oslo people',
      '["member_field:city","eq","Bergen"]',
      1,
      0,
    ]);
    const both = await update(1, { name: 'Adults', criteria: ['member_field:age', 'gt', 30] });
    expect([both.name, both.criteria, both.active_count, both.error_count]).toEqual(['Adults', '["member_field:age","gt",30]', 1, 1]);
    expect(await s.call('PUT', '/1/searches/1', { body: {} })).toEqual({ status: 400, body: { error: 'give name, criteria or both' } });
    // A refused update changes nothing.
    expectFieldError(await s.call('PUT', '/1/searches/1', { body: { name: 'X', criteria: ['nope', 'eq', 1] } }), 'criteria[0]');
    expect((await ok(s, 'GET', '/1/searches/1')).name).toBe('Adults');
  });

  it('names are unique among live searches in any case; a deleted search frees its name', async () => {
    await create('Oslo', ['member_status_id', 'eq', 'a']);
    await create('Bergen', ['member_status_id', 'eq', 'a']);
    expect(await create('OSLO', ['member_status_id', 'eq', 'a'])).toEqual({
      status: 400,
      body: { error: 'name: a search named "OSLO" already exists (search 1)', field: 'name' },
    });
    expect(await s.call('PUT', '/1/searches/2', { body: { name: 'oslo' } })).toEqual({
      status: 400,
      body: { error: 'name: a search named "oslo" already exists (search 1)', field: 'name' },
    });
    // Renaming a search to its own name in another case is no clash.
    expect((await update(1, { name: 'OSLO' })).name).toBe('OSLO');
    expect(await create('   ', ['member_status_id', 'eq', 'a'])).toEqual({
      status: 400,
      body: { error: 'name: must not be empty', field: 'name' },
    });
    expect(await ok(s, 'DELETE', '/1/searches/1')).toBe(true);
    expect((await create('oslo', ['member_status_id', 'eq', 'a'])).body.search_id).toBe(3);
    expect(countRows(s, 'searches')).toBe(3);
  });

  it('refuses missing and mistyped body parameters (unknown ones are ignored: client-fidelity.test.ts)', async () => {
    expectFieldError(await s.call('POST', '/1/searches', { body: { name: 'X' } }), 'criteria');
    expectFieldError(await s.call('POST', '/1/searches', { body: { criteria: ['member_status_id', 'eq', 'a'] } }), 'name');
    expect(await s.call('POST', '/1/searches', { body: { name: 'X', criteria: { group: 1 } } })).toEqual({
      status: 400,
      body: {
        error: 'criteria: must be a condition list such as ["group", "eq", "Gold"], or a string holding its JSON',
        field: 'criteria',
      },
    });
    expectFieldError(await s.call('POST', '/1/searches', { body: { name: 7, criteria: ['member_status_id', 'eq', 'a'] } }), 'name');
    expectFieldError(await s.call('PUT', '/1/searches/1', { body: { criteria: 5 } }), 'criteria');
    expect(countRows(s, 'searches')).toBe(0);
  });

  it("answers 404 for a missing, deleted or other account's search, and for bad ids 400", async () => {
    await create('Mine', ['member_status_id', 'eq', 'a']);
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', 'x')`).run();
    s.db
      .prepare(
        `INSERT INTO searches (search_id, account_id, name, criteria, created_at) VALUES (50, 2, 'Theirs', '["member_status_id","eq","a"]', 'x')`,
      )
      .run();
    const theirs = { status: 404, body: { error: 'search 50 not found' } };
    expect(await s.call('GET', '/1/searches/50')).toEqual(theirs);
    expect(await s.call('PUT', '/1/searches/50', { body: { name: 'Stolen' } })).toEqual(theirs);
    expect(await s.call('DELETE', '/1/searches/50')).toEqual(theirs);
    expect(await s.call('GET', '/1/searches/50/members')).toEqual(theirs);
    expect(await s.call('GET', '/1/segments/50')).toEqual(theirs);
    expect(await s.call('GET', '/1/searches/99')).toEqual({ status: 404, body: { error: 'search 99 not found' } });
    expect(await s.call('GET', '/2/searches')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
    expect(await ok(s, 'DELETE', '/1/searches/1')).toBe(true);
    expect(await s.call('GET', '/1/searches/1')).toEqual({ status: 404, body: { error: 'search 1 not found' } });
    expect(await s.call('DELETE', '/1/searches/1')).toEqual({ status: 404, body: { error: 'search 1 not found' } });
    expect(await s.call('PUT', '/1/searches/1', { body: { name: 'Back' } })).toEqual({
      status: 404,
      body: { error: 'search 1 not found' },
    });
    expectFieldError(await s.call('GET', '/1/searches/abc'), 'search_id');
    expect(s.db.prepare('SELECT name FROM searches WHERE search_id = 50').pluck().get()).toBe('Theirs');
  });

  it('marks every search and segment route as an extension in openapi.json', async () => {
    const doc = (await s.call('GET', '/openapi.json')).body;
    const ops = [
      '/{account_id}/searches',
      '/{account_id}/searches/{search_id}',
      '/{account_id}/searches/{search_id}/members',
      '/{account_id}/segments',
      '/{account_id}/segments/{segment_id}',
    ].flatMap((path) => Object.values(doc.paths[path]) as any[]);
    expect(ops.map((o) => o.operationId).sort()).toEqual([
      'searches.create',
      'searches.delete',
      'searches.get',
      'searches.list',
      'searches.members',
      'searches.update',
      'segments.get',
      'segments.list',
    ]);
    expect(ops.every((o) => o['x-amsg-extension'] === true)).toBe(true);
  });
});

// ------------------------------------------------------------------ members

describe('GET /{account_id}/searches/{search_id}/members', () => {
  it('answers the live matching members of any status, as member records, with a window and count=true', async () => {
    const { gold } = await seedAudience();
    await create('Gold', ['group', 'eq', gold]);
    const members = await ok(s, 'GET', '/1/searches/1/members');
    expect(members.map((m: any) => [m.member_id, m.email, m.member_status_id])).toEqual([
      [1, 'ada@example.com', 'a'],
      [3, 'cy@test.org', 'e'],
    ]);
    expect(members[0]).toEqual(await ok(s, 'GET', '/1/members/1'));
    expect((await ok(s, 'GET', '/1/searches/1/members', { query: { start: '1' } })).map((m: any) => m.member_id)).toEqual([3]);
    expect((await ok(s, 'GET', '/1/searches/1/members', { query: { end: '1' } })).map((m: any) => m.member_id)).toEqual([1]);
    expect(await s.call('GET', '/1/searches/1/members', { query: { count: 'true' } })).toEqual({ status: 200, body: 2 });
    expectFieldError(await s.call('GET', '/1/searches/1/members', { query: { count: 'maybe' } }), 'count');
  });

  it('lists forwarded members though no count counts them', async () => {
    await addMember(s, 'fwd@example.com');
    s.db.prepare(`UPDATE members SET member_status_id = 'f'`).run();
    const created = (await create('All', ['member:email', 'contains', '*'])).body;
    expect([created.active_count, created.error_count, created.optout_count]).toEqual([0, 0, 0]);
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(1);
  });
});

// ------------------------------------------------------------------ the stored result

describe('the stored result: reads never write, the background refresh keeps it', () => {
  /** GET routes that read a search or its members. */
  const READS: [string, Record<string, string>?][] = [
    ['/1/searches/1'],
    ['/1/searches'],
    ['/1/searches', { count: 'true' }],
    ['/1/segments'],
    ['/1/segments/1'],
    ['/1/searches/1/members'],
    ['/1/searches/1/members', { start: '1', end: '2' }],
    ['/1/searches/1/members', { count: 'true' }],
  ];

  it('a GET of a search, the lists and the members changes nothing, and the runner after it stamps nothing', async () => {
    const { gold } = await seedAudience();
    await create('Gold', ['group', 'eq', gold]);
    // The runner notices the writes above, once.
    runJobs();
    const before = totalChanges();
    const rows = s.db.prepare('SELECT * FROM searches').all();
    // Days later, reads still change nothing (a refresh is the runner's to do).
    s.clock.set('2026-03-06T00:00:00Z');
    for (const [path, query] of READS) {
      expect((await s.call('GET', path, { query })).status).toBe(200);
      expect(totalChanges(), `${path} ${JSON.stringify(query ?? {})}`).toBe(before);
    }
    expect(s.db.prepare('SELECT * FROM searches').all()).toEqual(rows);
    s.clock.set(T0);
    expect(advanceJobs(s.db, s.clock, 1_000)).toBe(false);
    expect(totalChanges()).toBe(before);
  });

  it('pages walk the stored result in member id order; members archived since are left out of pages and of count', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const ids: number[] = [];
    for (let i = 0; i < 9; i++) ids.push(await addMember(s, `m${i}@example.com`, { fields: { city: i % 3 ? 'Oslo' : 'Bergen' } }));
    await create('Oslo', ['member_field:city', 'eq', 'Oslo']);
    const oslo = [ids[1], ids[2], ids[4], ids[5], ids[7], ids[8]];
    expect(truth(1).ids).toEqual(oslo);
    expect(await listed(1)).toEqual(oslo);
    expect(await listed(1, { end: '2' })).toEqual(oslo.slice(0, 2));
    expect(await listed(1, { start: '2', end: '5' })).toEqual(oslo.slice(2, 5));
    expect(await listed(1, { start: '5' })).toEqual(oslo.slice(5));
    expect(await listed(1, { start: '6' })).toEqual([]);

    expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [ids[2], ids[5]] } })).toBe(true);
    const left = [ids[1], ids[4], ids[7], ids[8]];
    expect(await listed(1)).toEqual(left);
    expect(await listed(1, { start: '1', end: '3' })).toEqual(left.slice(1, 3));
    expect(await listed(1, { start: '2', end: '3' })).toEqual(left.slice(2, 3));
    expect(await listed(1, { start: '3' })).toEqual(left.slice(3));
    expect(await listed(1, { start: '4' })).toEqual([]);
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(4);
    // One brought back is in the stored result still, so it is listed again.
    await addMember(s, 'm2@example.com');
    expect(await listed(1)).toEqual([ids[1], ids[2], ids[4], ids[7], ids[8]]);
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(5);
    expectMemberCountKept();
  });

  it('notices what another connection wrote (another process, the import writer) through data_version', async () => {
    const city = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'ada@example.com', { fields: { city: 'Oslo' } });
    await create('Oslo', ['member_field:city', 'eq', 'Oslo']);
    runJobs();
    const other = openDb(s.file);
    other
      .prepare('INSERT INTO members (account_id, email, member_since, last_modified_at, field_values) VALUES (1, ?, ?, ?, ?)')
      .run('bob@example.com', '2026-03-04T05:06:07.000000', '2026-03-04T05:06:07.000000', JSON.stringify({ [city]: 'Oslo' }));
    other.close();
    s.clock.set('2026-03-04T05:07:00Z');
    expect(await counts(1)).toEqual([1, 0, 0]);
    runJobs();
    expect(await counts(1)).toEqual([2, 0, 0]);
    expect(await listed(1)).toEqual([1, 2]);
    expect((await ok(s, 'GET', '/1/searches/1')).cached_at).toBe('@D:2026-03-04T05:07:00');
  });

  it('after a change, waits until the result is ten times as old as computing it took', async () => {
    await create('Active', ['member_status_id', 'eq', 'a']);
    runJobs();
    // As if computing it had taken five seconds.
    s.db.prepare('UPDATE searches SET compute_ms = 5000').run();
    await addMember(s, 'ada@example.com');
    s.clock.set('2026-03-04T05:06:56.999Z');
    runJobs();
    expect(await counts(1)).toEqual([0, 0, 0]);
    s.clock.set('2026-03-04T05:06:57Z');
    runJobs();
    expect(await counts(1)).toEqual([1, 0, 0]);
    expect(s.db.prepare('SELECT cached_at FROM searches').pluck().get()).toBe('2026-03-04T05:06:57.000000');
  });

  it('a result nobody changed is computed again only when it is a day old', async () => {
    await addMember(s, 'ada@example.com');
    await create('Active', ['member_status_id', 'eq', 'a']);
    runJobs();
    const before = totalChanges();
    s.clock.set('2026-03-05T05:06:06.999Z');
    runJobs();
    expect(totalChanges()).toBe(before);
    s.clock.set('2026-03-05T05:06:07Z');
    runJobs();
    expect(await ok(s, 'GET', '/1/searches/1')).toMatchObject({ active_count: 1, cached_at: '@D:2026-03-05T05:06:07' });
  });

  it('a refresh goes 10,000 member ids a step, each its own transaction; the counts change after the last one', async () => {
    const city = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    // 25,000 members; the even ids live in Oslo.
    s.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000)
         INSERT INTO members (member_id, account_id, email, member_since, last_modified_at, field_values)
         SELECT i, 1, 'm' || i || '@bulk.example', @now, @now, CASE WHEN i % 2 = 0 THEN @oslo ELSE '{}' END FROM n`,
      )
      .run({ now: '2026-03-04T05:06:07.000000', oslo: JSON.stringify({ [city]: 'Oslo' }) });
    expect((await create('Oslo', ['member_field:city', 'eq', 'Oslo'])).body).toMatchObject({ active_count: 12_500, optout_count: 0 });
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(12_500);
    expect(await listed(1, { start: '12000', end: '12005' })).toEqual([24_002, 24_004, 24_006, 24_008, 24_010]);
    runJobs();

    // 50 of them opt out; 10 more move in.
    s.db.prepare("UPDATE members SET member_status_id = 'o' WHERE member_id <= 100 AND member_id % 2 = 0").run();
    s.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 25001 UNION ALL SELECT i + 1 FROM n WHERE i < 25010)
         INSERT INTO members (member_id, account_id, email, member_since, last_modified_at, field_values)
         SELECT i, 1, 'm' || i || '@bulk.example', @now, @now, @oslo FROM n`,
      )
      .run({ now: '2026-03-04T05:06:07.000000', oslo: JSON.stringify({ [city]: 'Oslo' }) });
    s.clock.set('2026-03-04T05:07:00Z');
    const refresh = () => s.db.prepare('SELECT * FROM search_refreshes').all();
    // A budget of 0 is one step a call.
    expect(advanceJobs(s.db, s.clock, 0)).toBe(true);
    expect(refresh()).toEqual([
      {
        search_id: 1,
        started_at: '2026-03-04T05:07:00.000000',
        done_to: 10_000,
        active_count: 4_950,
        error_count: 0,
        optout_count: 50,
        ms: expect.any(Number),
      },
    ]);
    expect(await counts(1)).toEqual([12_500, 0, 0]);
    // A change in a range already done is the next refresh's.
    await setStatus(s, [4], 'e');
    expect(advanceJobs(s.db, s.clock, 0)).toBe(true);
    expect(refresh()).toMatchObject([{ done_to: 20_000, active_count: 9_950, optout_count: 50 }]);
    expect(advanceJobs(s.db, s.clock, 0)).toBe(false);
    expect(refresh()).toEqual([]);
    expect(await ok(s, 'GET', '/1/searches/1')).toMatchObject({
      active_count: 12_460,
      error_count: 0,
      optout_count: 50,
      cached_at: '@D:2026-03-04T05:07:00',
    });
    expect(await ok(s, 'GET', '/1/searches/1/members', { query: { count: 'true' } })).toBe(12_510);
    expect(await listed(1, { start: '12500', end: '12510' })).toEqual(Array.from({ length: 10 }, (_, i) => 25_001 + i));
    expect(s.db.prepare('SELECT stale_since FROM searches').pluck().get()).toBe('2026-03-04T05:07:00.000000');
    expectMemberCountKept();

    s.clock.set('2026-03-04T05:10:00Z');
    runJobs();
    expect(await counts(1)).toEqual([12_460, 1, 49]);
    expect(truth(1).counts).toEqual([12_460, 1, 49]);
    expect(s.db.prepare('SELECT stale_since FROM searches').pluck().get()).toBe(null);
    expectMemberCountKept();
  });

  it('updating a search computes the searches that use it in the same write', async () => {
    await seedAudience();
    await create('Oslo', ['member_field:city', 'eq', 'Oslo']);
    await create('Oslo or opted out', ['or', ['search', 'eq', 1], ['member_status_id', 'eq', 'o']]);
    await create('Not that', ['not', ['search', 'eq', 2]]);
    await create('Unrelated', ['member_status_id', 'eq', 'a']);
    expect([await counts(2), await counts(3)]).toEqual([
      [1, 1, 1],
      [1, 0, 0],
    ]);
    s.clock.set('2026-03-04T06:00:00Z');
    await ok(s, 'PUT', '/1/searches/1', { body: { criteria: ['member_field:city', 'eq', 'Bergen'] } });
    expect([await counts(1), await counts(2), await counts(3)]).toEqual([
      [1, 0, 0],
      [1, 0, 1],
      [1, 1, 0],
    ]);
    expect([await listed(2), await listed(3)]).toEqual([
      [2, 4],
      [1, 3],
    ]);
    expect([2, 3].map((id) => truth(id).ids)).toEqual([
      [2, 4],
      [1, 3],
    ]);
    const stamps = s.db.prepare('SELECT search_id, cached_at FROM searches ORDER BY search_id').raw().all();
    expect(stamps).toEqual([
      [1, '2026-03-04T06:00:00.000000'],
      [2, '2026-03-04T06:00:00.000000'],
      [3, '2026-03-04T06:00:00.000000'],
      [4, '2026-03-04T05:06:07.000000'],
    ]);
  });

  it('a search with no result yet (as migration 012 leaves older ones) reads as zeros and is computed first', async () => {
    await seedAudience();
    await create('Example', ['member:email', 'contains', '*@example.com']);
    s.db.exec(
      'DELETE FROM search_results; UPDATE searches SET cached_at = NULL, last_run_at = NULL, active_count = 0, optout_count = 0, member_count = 0',
    );
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(
      search(1, 'Example', ['member:email', 'contains', '*@example.com'], { cached_at: null, last_run_at: null }),
    );
    expect(await listed(1)).toEqual([]);
    // No clock needs to move for it.
    runJobs();
    expect(await ok(s, 'GET', '/1/searches/1')).toEqual(
      search(1, 'Example', ['member:email', 'contains', '*@example.com'], { active_count: 2, optout_count: 1 }),
    );
    expect(await listed(1)).toEqual([1, 2, 4]);
  });

  it('a search the runner cannot compute keeps its result and does not hold up the others', async () => {
    await addMember(s, 'ada@example.com');
    await create('Active', ['member_status_id', 'eq', 'a']);
    // Another account's search, written straight in: that account has no owner to act as.
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', 'x')`).run();
    s.db
      .prepare(
        `INSERT INTO searches (search_id, account_id, name, criteria, created_at) VALUES (50, 2, 'Theirs', '["member_status_id","eq","a"]', 'x')`,
      )
      .run();
    await addMember(s, 'bob@example.com');
    s.clock.set('2026-03-04T06:00:00Z');
    runJobs();
    expect(await counts(1)).toEqual([2, 0, 0]);
    expect(s.db.prepare('SELECT cached_at, member_count FROM searches WHERE search_id = 50').get()).toEqual({
      cached_at: null,
      member_count: 0,
    });
  });

  it('deleting a search drops its stored result', async () => {
    await seedAudience();
    await create('Example', ['member:email', 'contains', '*@example.com']);
    expect(countRows(s, 'search_results', 'search_id = 1')).toBe(3);
    expect(await ok(s, 'DELETE', '/1/searches/1')).toBe(true);
    expect(countRows(s, 'search_results')).toBe(0);
  });

  it('reads walk indexes: no sort, no scan of members or of the stored result (EXPLAIN QUERY PLAN)', async () => {
    s.close();
    s = makeService(T0, { trace: true });
    await seedAudience();
    await create('Example', ['member:email', 'contains', '*@example.com']);
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [2] } });
    const planOf = (sql: string) => (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((p) => p.detail);
    /** Plan lines that sort, or read members (m) or search_results whole. */
    const offending = (sql: string) =>
      planOf(sql).filter(
        (d) => d.includes('USE TEMP B-TREE FOR ORDER BY') || /^SCAN (members|m|search_results)\b(?! USING (COVERING )?INDEX)/.test(d),
      );
    // A plain BEGIN is a read snapshot (the Router reads a GET in one); IMMEDIATE or EXCLUSIVE takes the write lock.
    const isWrite = (sql: string) => /^\s*(INSERT|UPDATE|DELETE|REPLACE|BEGIN\s+(IMMEDIATE|EXCLUSIVE)|CREATE|DROP|ALTER)\b/i.test(sql);

    const reads: string[] = [];
    for (const [path, query] of READS) {
      // Once before, so the field catalog (memoized per database generation) is not in the capture.
      await s.call('GET', path, { query });
      const { result, statements } = await s.capture(() => s.call('GET', path, { query }));
      expect(result.status).toBe(200);
      expect(statements.filter(isWrite), path).toEqual([]);
      reads.push(...statements);
    }
    for (const sql of reads) expect(offending(sql), sql).toEqual([]);
    const detail = reads.filter((sql) =>
      /FROM searches WHERE account_id = [\d.]+ AND search_id = [\d.]+ AND deleted_at IS NULL$/.test(sql),
    );
    expect(detail.length).toBeGreaterThan(0);
    for (const sql of detail) expect(planOf(sql)).toEqual(['SEARCH searches USING INTEGER PRIMARY KEY (rowid=?)']);
    const list = reads.filter((sql) => /ORDER BY search_id LIMIT/.test(sql));
    expect(list.length).toBe(2);
    for (const sql of list) expect(planOf(sql)).toEqual(['SEARCH searches USING INDEX searches_live (account_id=?)']);
    // A page: entries of the result's primary key, then the page's members by id; the
    // members archived since are found on their index and looked up in the result.
    const pages = reads.filter((sql) =>
      /^SELECT member_id FROM search_results WHERE search_id = [\d.]+ ORDER BY member_id LIMIT/.test(sql),
    );
    expect(pages.length).toBe(2);
    for (const sql of pages) expect(planOf(sql)).toEqual(['SEARCH search_results USING PRIMARY KEY (search_id=?)']);
    const byId = reads.filter((sql) => /^SELECT m\.\* FROM members m WHERE m\.member_id IN/.test(sql));
    expect(byId.length).toBe(2);
    for (const sql of byId) expect(planOf(sql)).toContain('SEARCH m USING INTEGER PRIMARY KEY (rowid=?)');
    const archived = reads.filter((sql) => /deleted_at >= /.test(sql));
    expect(archived.length).toBe(3);
    for (const sql of archived)
      expect(planOf(sql)).toEqual(
        expect.arrayContaining([
          'SEARCH search_results USING COVERING INDEX search_results_member (member_id=? AND search_id=?)',
          'SEARCH members USING COVERING INDEX members_deleted (account_id=? AND deleted_at>?)',
        ]),
      );

    // A refresh step reads one range of member ids, whatever the criteria.
    await addMember(s, 'fay@example.com');
    s.clock.set('2026-03-04T06:00:00Z');
    const { result: more, statements } = await s.capture(() => advanceJobs(s.db, s.clock, 0));
    expect(more).toBe(false);
    const range = statements.filter((sql) => /FROM members m\s+WHERE m\.member_id > /.test(sql));
    expect(range.length).toBe(1);
    expect(planOf(range[0])[0]).toBe('SEARCH m USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)');
    const audience = statements.filter((sql) => /^\s*(SELECT|WITH|DELETE|INSERT)\b/i.test(sql) && /\b(members|search_results)\b/.test(sql));
    expect(audience.length).toBeGreaterThanOrEqual(3);
    for (const sql of audience) expect(offending(sql), sql).toEqual([]);
    expect(await counts(1)).toEqual([2, 0, 1]);
  });
});

// ------------------------------------------------------------------ the criteria language

describe('criteria: operators and predicates', () => {
  beforeEach(seedAudience);

  it('text fields: eq, lt, gt, between, in compare case-insensitively; a missing value matches none of them', async () => {
    expect(await matching(['member_field:city', 'eq', 'OSLO'])).toEqual([1, 3]);
    expect(await matching(['member_field:city', 'eq', 'Stavanger'])).toEqual([]);
    expect(await matching(['member_field:city', 'lt', 'c'])).toEqual([2]);
    expect(await matching(['member_field:city', 'gt', 'C'])).toEqual([1, 3]);
    expect(await matching(['member_field:city', 'between', 'b', 'BERGEN'])).toEqual([2]);
    expect(await matching(['member_field:city', 'in', ['bergen', 'Oslo']])).toEqual([1, 2, 3]);
  });

  it('contains is a glob on the whole value: * any run, ? one character, any case; % and _ are literal', async () => {
    expect(await matching(['member:email', 'contains', '*@example.com'])).toEqual([1, 2, 4]);
    expect(await matching(['member:email', 'contains', '*@EXAMPLE.*'])).toEqual([1, 2, 4]);
    expect(await matching(['member_field:city', 'contains', 'os?o'])).toEqual([1, 3]);
    expect(await matching(['member_field:city', 'contains', 'er'])).toEqual([]);
    expect(await matching(['member_field:city', 'contains', '*er*'])).toEqual([2]);
    expect(await matching(['member:email', 'contains', 'a_a@*'])).toEqual([]);
    expect(await matching(['member:email', 'contains', '%'])).toEqual([]);
    expect(await matching(['email', 'eq', 'BOB@example.com'])).toEqual([2]);
  });

  it('numeric fields compare as numbers (10 is more than 9), from numbers or numeric text', async () => {
    expect(await matching(['member_field:age', 'eq', 36])).toEqual([1]);
    expect(await matching(['member_field:age', 'gt', 9])).toEqual([1, 2, 3]);
    expect(await matching(['member_field:age', 'lt', '36'])).toEqual([2]);
    expect(await matching(['member_field:age', 'between', 20, 36])).toEqual([1, 2]);
    expect(await matching(['member_field:age', 'in', [50, 20]])).toEqual([2, 3]);
  });

  it('boolean fields: eq true or false (members without a value match neither)', async () => {
    expect(await matching(['member_field:vip', 'eq', true])).toEqual([1]);
    expect(await matching(['member_field:vip', 'eq', 'false'])).toEqual([2]);
  });

  it('date fields compare as dates', async () => {
    expect(await matching(['member_field:birthday', 'eq', '1990-01-15'])).toEqual([1]);
    expect(await matching(['member_field:birthday', 'lt', '1995-01-01'])).toEqual([1]);
    expect(await matching(['member_field:birthday', 'gt', '1990-01-15'])).toEqual([2]);
    expect(await matching(['member_field:birthday', 'between', '1990-01-15', '2000-06-30'])).toEqual([1, 2]);
    expect(await matching(['member_field:birthday', 'in', ['2000-06-30', '1980-01-01']])).toEqual([2]);
  });

  it('timestamp fields and member_since: a date compares the day, a date-time the second', async () => {
    expect(await matching(['member_field:last_seen', 'eq', '2026-03-01'])).toEqual([1]);
    expect(await matching(['member_field:last_seen', 'eq', '2026-03-01T10:00:00'])).toEqual([1]);
    expect(await matching(['member_field:last_seen', 'eq', '2026-03-01T10:00:01'])).toEqual([]);
    expect(await matching(['member_field:last_seen', 'gt', '2026-03-01T10:00:00'])).toEqual([2]);
    expect(await matching(['member_field:last_seen', 'lt', '2026-03-02'])).toEqual([1]);
    expect(await matching(['member_field:last_seen', 'between', '2026-03-01T10:00:00', '2026-03-02T09:00:00'])).toEqual([1]);
    expect(await matching(['member_field:last_seen', 'in', ['2026-03-02', '2026-01-01T00:00:00']])).toEqual([2]);
    expect(await matching(['member_since', 'eq', '2026-01-10'])).toEqual([1]);
    expect(await matching(['member_since', 'gt', '2026-01-10'])).toEqual([2, 3, 4]);
    expect(await matching(['member_since', 'lt', '2026-02-10T12:00:01'])).toEqual([1, 2]);
    expect(await matching(['member_since', 'between', '2026-02-01', '2026-03-04'])).toEqual([2, 3, 4]);
    expect(await matching(['member_since', 'in', ['2026-03-04']])).toEqual([3, 4]);
  });

  it('text[] fields: eq and any hold a value, contains globs an item, in is any', async () => {
    expect(await matching(['member_field:tags', 'eq', 'NEWS'])).toEqual([1]);
    expect(await matching(['member_field:tags', 'any', ['events', 'offers']])).toEqual([1, 2]);
    expect(await matching(['member_field:tags', 'in', ['events']])).toEqual([2]);
    expect(await matching(['member_field:tags', 'contains', '*s'])).toEqual([1, 2]);
    expect(await matching(['member_field:tags', 'contains', 'new?'])).toEqual([1]);
    expect(await matching(['not', ['member_field:tags', 'any', ['news']]])).toEqual([2, 3, 4]);
  });

  it('member_status_id and member:status take eq and in', async () => {
    expect(await matching(['member_status_id', 'eq', 'e'])).toEqual([3]);
    expect(await matching(['member:status', 'in', ['a', 'o']])).toEqual([1, 2, 4]);
  });

  it('groups by name (any case) or id, with eq, in and any', async () => {
    expect(await matching(['group', 'eq', 'gold'])).toEqual([1, 3]);
    expect(await matching(['group', 'eq', 2])).toEqual([2]);
    expect(await matching(['group', 'eq', '2'])).toEqual([2]);
    expect(await matching(['group', 'in', ['Silver', 1]])).toEqual([1, 2, 3]);
    expect(await matching(['group', 'any', ['Silver']])).toEqual([2]);
  });

  it('subscriptions by name or id: subscribed members, not those who opted out of it', async () => {
    const sub = await ok(s, 'POST', '/1/subscriptions', { body: { name: 'Weekly' } });
    expect(await ok(s, 'POST', `/1/subscriptions/${sub.subscription_id}/members/bulk`, { body: { member_ids: [1, 2, 4] } })).toBe(true);
    expect(await ok(s, 'PUT', `/1/subscriptions/${sub.subscription_id}/members/2/optout`)).toBe(true);
    expect(await matching(['subscription', 'eq', 'WEEKLY'])).toEqual([1, 4]);
    expect(await matching(['subscription', 'in', [sub.subscription_id]])).toEqual([1, 4]);
  });

  it('and, or and not nest; not of a missing value is true', async () => {
    expect(await matching(['and', ['member_field:city', 'eq', 'Oslo'], ['member_status_id', 'eq', 'a']])).toEqual([1]);
    expect(await matching(['or', ['member_field:city', 'eq', 'Bergen'], ['member_status_id', 'eq', 'o']])).toEqual([2, 4]);
    expect(await matching(['not', ['member_field:city', 'eq', 'Oslo']])).toEqual([2, 4]);
    expect(await matching(['and', ['group', 'eq', 'Gold']])).toEqual([1, 3]);
    expect(
      await matching([
        'or',
        ['and', ['group', 'eq', 'Gold'], ['not', ['member_field:age', 'gt', 40]]],
        ['member:email', 'contains', 'di@*'],
      ]),
    ).toEqual([1, 4]);
    // A long "and" compiles to a balanced tree, well inside SQLite's expression depth.
    expect(await matching(['and', ...Array.from({ length: 400 }, () => ['member_field:age', 'gt', 1])])).toEqual([1, 2, 3]);
  });

  it('a condition alone may be the whole criteria; archived members never match', async () => {
    expect(await matching(['member_field:age', 'eq', 36])).toEqual([1]);
    expect(await matching(['member:email', 'eq', 'ed@example.com'])).toEqual([]);
  });

  it('search and segment conditions match the members of another saved search, by id', async () => {
    await create('Oslo', ['member_field:city', 'eq', 'oslo']);
    await create('Active', ['member_status_id', 'eq', 'a']);
    expect(await matching(['search', 'eq', 1])).toEqual([1, 3]);
    expect(await matching(['and', ['segment', 'eq', '1'], ['search', 'eq', 2]])).toEqual([1]);
    expect(await matching(['not', ['search', 'any', [1, 2]]])).toEqual([4]);
    // Nesting goes through several levels, and changing an inner search changes the outer one.
    const outer = (await create('Outer', ['search', 'in', [1]])).body.search_id;
    const outermost = (await create('Outermost', ['not', ['search', 'eq', outer]])).body.search_id;
    expect(await ok(s, 'GET', `/1/searches/${outermost}/members`).then((r) => r.map((m: any) => m.member_id))).toEqual([2, 4]);
    await ok(s, 'PUT', '/1/searches/1', { body: { criteria: ['member_field:city', 'eq', 'Bergen'] } });
    expect(await ok(s, 'GET', `/1/searches/${outermost}/members`).then((r) => r.map((m: any) => m.member_id))).toEqual([1, 3, 4]);
  });
});

describe('criteria: what happens to names that change after saving', () => {
  it('a deleted field, group or subscription makes its condition match nobody (a not of it, everybody)', async () => {
    const field = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const [gold] = await createGroups(s, 'Gold');
    await addMember(s, 'ada@example.com', { fields: { city: 'Oslo' }, group_ids: [gold] });
    await create('City', ['member_field:city', 'eq', 'Oslo']);
    await create('Not gold', ['not', ['group', 'eq', 'Gold']]);
    expect((await ok(s, 'GET', '/1/searches/1')).active_count).toBe(1);
    expect((await ok(s, 'GET', '/1/searches/2')).active_count).toBe(0);
    expect(await ok(s, 'DELETE', `/1/fields/${field}`)).toBe(true);
    expect(await ok(s, 'DELETE', `/1/groups/${gold}`)).toBe(true);
    // The stored results change when the background refresh runs.
    expect([(await ok(s, 'GET', '/1/searches/1')).active_count, (await ok(s, 'GET', '/1/searches/2')).active_count]).toEqual([1, 0]);
    s.clock.set('2026-03-04T06:00:00Z');
    runJobs();
    expect((await ok(s, 'GET', '/1/searches/1')).active_count).toBe(0);
    expect((await ok(s, 'GET', '/1/searches/2')).active_count).toBe(1);
    expect([await listed(1), await listed(2)]).toEqual([[], [1]]);
    // A new field of the same name is what the name means now.
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await ok(s, 'PUT', '/1/members/1', { body: { fields: { city: 'oslo' } } });
    s.clock.set('2026-03-04T07:00:00Z');
    runJobs();
    expect((await ok(s, 'GET', '/1/searches/1')).active_count).toBe(1);
    expect(await listed(1)).toEqual([1]);
  });

  it('a field whose type changed makes conditions that no longer fit it match nobody, not fail', async () => {
    const code = await createField(s, { shortcut_name: 'code', field_type: 'text' });
    await addMember(s, 'ada@example.com');
    await create('Code', ['member_field:code', 'contains', 'A*']);
    await create('Not code', ['not', ['member_field:code', 'eq', 'A1']]);
    expect(await ok(s, 'PUT', `/1/fields/${code}`, { body: { field_type: 'numeric' } })).toBe(code);
    expect(await s.call('GET', '/1/searches/1')).toMatchObject({ status: 200, body: { active_count: 0 } });
    expect(await s.call('GET', '/1/searches/2')).toMatchObject({ status: 200, body: { active_count: 1 } });
    // Saving it again is what refuses it.
    expectFieldError(await s.call('PUT', '/1/searches/1', { body: { criteria: ['member_field:code', 'contains', 'A*'] } }), 'criteria[1]');
  });
});

describe('criteria: cycles and deleting searches in use', () => {
  it('refuses a search that would contain itself, directly or through others', async () => {
    await create('A', ['member_status_id', 'eq', 'a']);
    await create('B', ['search', 'eq', 1]);
    await create('C', ['or', ['member_status_id', 'eq', 'o'], ['segment', 'eq', 2]]);
    expect(await s.call('PUT', '/1/searches/1', { body: { criteria: ['search', 'eq', 1] } })).toEqual({
      status: 400,
      body: { error: 'criteria[2]: a search cannot contain itself (search 1 → 1)', field: 'criteria[2]' },
    });
    expect(
      await s.call('PUT', '/1/searches/1', { body: { criteria: ['and', ['member_status_id', 'eq', 'a'], ['search', 'in', [3]]] } }),
    ).toEqual({
      status: 400,
      body: { error: 'criteria[2][2][0]: a search cannot contain itself (search 1 → 3 → 2 → 1)', field: 'criteria[2][2][0]' },
    });
    expect((await ok(s, 'GET', '/1/searches/1')).criteria).toBe('["member_status_id","eq","a"]');
  });

  it('refuses to delete a search another live search uses (409), and allows it once that one is gone', async () => {
    await create('A', ['member_status_id', 'eq', 'a']);
    await create('B', ['or', ['member_status_id', 'eq', 'e'], ['segment', 'in', ['1']]]);
    expect(await s.call('DELETE', '/1/searches/1')).toEqual({
      status: 409,
      body: { error: 'search 1 is used by search 2 ("B"); change or delete that search first' },
    });
    expect(await ok(s, 'DELETE', '/1/searches/2')).toBe(true);
    expect(await ok(s, 'DELETE', '/1/searches/1')).toBe(true);
  });
});

describe('criteria: every refusal names the place and the reason', () => {
  beforeEach(seedAudience);

  const cases: [string, unknown, string, string][] = [
    ['not JSON text', '["and", ', 'criteria', 'is not valid JSON'],
    [
      'not a list',
      '"group"',
      'criteria',
      'must be a list: a predicate ["and" | "or" | "not", …] or a condition [subject, operator, value…], got "group"',
    ],
    ['an empty list', [], 'criteria', 'must not be an empty list'],
    [
      'a number where a subject belongs',
      [7, 'eq', 1],
      'criteria[0]',
      'must be a predicate (and, or, not) or a subject (member_field:<shortcut_name>, member:email, member_status_id, member_since, group, subscription, search, segment), got 7',
    ],
    [
      'an unknown operator',
      ['and', ['member_field:city', 'eq', 'Oslo'], ['group', 'equals', 'Gold']],
      'criteria[2][1]',
      'unknown operator "equals" (eq, lt, gt, between, contains, in, any)',
    ],
    ['a missing operator', ['and', ['group']], 'criteria[1]', 'a condition is [subject, operator, value…]; the operator is missing'],
    [
      'an unknown subject',
      ['or', ['member:city', 'eq', 'Oslo']],
      'criteria[1][0]',
      'unknown subject "member:city" (member_field:<shortcut_name>, member:email, member_status_id, member_since, group, subscription, search, segment)',
    ],
    ['an unknown field', ['member_field:town', 'eq', 'Oslo'], 'criteria[0]', 'unknown field "town" (see GET /fields)'],
    [
      'a field subject without a name',
      ['member_field:', 'eq', 'Oslo'],
      'criteria[0]',
      'names no field: write member_field:<shortcut_name>',
    ],
    ['upper-case predicates', ['AND', ['group', 'eq', 'Gold']], 'criteria[0]', 'predicates are lower case: "and", not "AND"'],
    ['"and" without operands', ['and'], 'criteria', '"and" takes at least one condition'],
    ['"or" without operands', ['not', ['or']], 'criteria[1]', '"or" takes at least one condition'],
    [
      '"not" with two operands',
      ['not', ['group', 'eq', 'Gold'], ['group', 'eq', 'Silver']],
      'criteria',
      '"not" takes exactly one condition, got 2',
    ],
    [
      'an operand that is no list',
      ['and', 'group'],
      'criteria[1]',
      'must be a list: a predicate ["and" | "or" | "not", …] or a condition [subject, operator, value…], got "group"',
    ],
    ['eq with two values', ['member_field:city', 'eq', 'Oslo', 'Bergen'], 'criteria', '"eq" takes one value, got 2'],
    ['eq without a value', ['member_field:city', 'eq'], 'criteria', '"eq" takes one value, got 0'],
    [
      'between with one value',
      ['member_field:age', 'between', 20],
      'criteria',
      '"between" takes two values (low and high, inclusive), got 1',
    ],
    [
      'in with loose values',
      ['member_field:city', 'in', 'Oslo', 'Bergen'],
      'criteria',
      '"in" takes one list of values, e.g. [subject, "in", ["a", "b"]], got 2 operands',
    ],
    ['in with a scalar', ['member_field:city', 'in', 'Oslo'], 'criteria[2]', 'must be a non-empty list of values, got "Oslo"'],
    ['in with an empty list', ['group', 'in', []], 'criteria[2]', 'must be a non-empty list of values, got []'],
    [
      'any on a text field',
      ['member_field:city', 'any', ['Oslo']],
      'criteria[1]',
      'operator "any" does not apply to text field "city" (eq, lt, gt, between, contains, in)',
    ],
    [
      'contains on a numeric field',
      ['member_field:age', 'contains', '3*'],
      'criteria[1]',
      'operator "contains" does not apply to numeric field "age" (eq, lt, gt, between, in)',
    ],
    ['lt on a boolean field', ['member_field:vip', 'lt', true], 'criteria[1]', 'operator "lt" does not apply to boolean field "vip" (eq)'],
    [
      'lt on a text[] field',
      ['member_field:tags', 'lt', 'b'],
      'criteria[1]',
      'operator "lt" does not apply to text[] field "tags" (eq, contains, in, any)',
    ],
    ['lt on a group', ['group', 'lt', 'Gold'], 'criteria[1]', 'operator "lt" does not apply to group (eq, in, any)'],
    [
      'contains on member_status_id',
      ['member_status_id', 'contains', 'a'],
      'criteria[1]',
      'operator "contains" does not apply to member_status_id (eq, in)',
    ],
    ['a word where a number belongs', ['member_field:age', 'gt', 'old'], 'criteria[2]', 'must be a number for a numeric field, got "old"'],
    [
      'a second bound that is no number',
      ['member_field:age', 'between', 1, 'x'],
      'criteria[3]',
      'must be a number for a numeric field, got "x"',
    ],
    [
      'a list item that is no number',
      ['member_field:age', 'in', [1, 'x']],
      'criteria[2][1]',
      'must be a number for a numeric field, got "x"',
    ],
    ['a non-boolean', ['member_field:vip', 'eq', 'perhaps'], 'criteria[2]', 'must be true or false for a boolean field, got "perhaps"'],
    [
      'an impossible date',
      ['member_field:birthday', 'eq', '2026-02-30'],
      'criteria[2]',
      'must be a date YYYY-MM-DD for a date field, got "2026-02-30"',
    ],
    [
      'a timestamp that is no date',
      ['member_field:last_seen', 'gt', 'yesterday'],
      'criteria[2]',
      'must be a date YYYY-MM-DD or a date-time YYYY-MM-DDThh:mm:ss, got "yesterday"',
    ],
    [
      'member_since that is no date',
      ['member_since', 'lt', 20260101],
      'criteria[2]',
      'must be a date YYYY-MM-DD or a date-time YYYY-MM-DDThh:mm:ss, got 20260101',
    ],
    ['a text value that is an object', ['member_field:city', 'eq', { a: 1 }], 'criteria[2]', 'must be text, got {"a":1}'],
    [
      'an empty glob',
      ['member:email', 'contains', ''],
      'criteria[2]',
      '"contains" takes a glob pattern (* any run of characters, ? one character), got ""',
    ],
    ['an unknown status', ['member_status_id', 'in', ['a', 'x']], 'criteria[2][1]', 'must be a member status (a, e, o, f), got "x"'],
    ['an unknown group name', ['group', 'eq', 'Platinum'], 'criteria[2]', 'unknown group "Platinum" (see GET /groups)'],
    ['an unknown group id', ['group', 'in', ['Gold', 99]], 'criteria[2][1]', 'unknown group 99 (see GET /groups)'],
    ['a group given as a list', ['group', 'eq', ['Gold']], 'criteria[2]', 'must be a group id or name, got ["Gold"]'],
    ['an unknown subscription', ['subscription', 'eq', 'Weekly'], 'criteria[2]', 'unknown subscription "Weekly" (see GET /subscriptions)'],
    [
      'a search by name',
      ['search', 'eq', 'Gold buyers'],
      'criteria[2]',
      'a search is referred to by its id (an integer), got "Gold buyers"',
    ],
    ['an unknown search', ['segment', 'any', [42]], 'criteria[2][0]', 'unknown segment 42 (see GET /searches)'],
    [
      'nesting too deep',
      Array.from({ length: 40 }).reduce<unknown>((inner) => ['not', inner], ['group', 'eq', 'Gold']),
      'criteria[1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1]',
      'nests too deep (at most 32 levels, nested searches included)',
    ],
    [
      'too many conditions',
      ['or', ...Array.from({ length: 1001 }, () => ['group', 'eq', 'Gold'])],
      'criteria',
      'has too many conditions (at most 1000, nested searches included)',
    ],
  ];

  it.each(cases)('%s', async (_what, criteria, field, reason) => {
    const body = await refusal(criteria);
    expect(body.field).toBe(field);
    if (reason === 'is not valid JSON') expect(body.error.startsWith(`${field}: is not valid JSON (`)).toBe(true);
    else expect(body.error).toBe(`${field}: ${reason}`);
    expect(countRows(s, 'searches')).toBe(0);
  });
});

// ------------------------------------------------------------------ segments

describe('segments are saved searches', () => {
  it('lists and gets segments by search id, with the counts; count=true and windows work', async () => {
    await seedAudience();
    await create('Oslo', ['member_field:city', 'eq', 'Oslo']);
    await create('Everyone', ['member:email', 'contains', '*']);
    expect(await s.call('GET', '/1/segments')).toEqual({
      status: 200,
      body: [
        { segment_id: 1, name: 'Oslo', active_count: 1, error_count: 1, optout_count: 0 },
        { segment_id: 2, name: 'Everyone', active_count: 2, error_count: 1, optout_count: 1 },
      ],
    });
    expect(await s.call('GET', '/1/segments/2')).toEqual({
      status: 200,
      body: { segment_id: 2, name: 'Everyone', active_count: 2, error_count: 1, optout_count: 1 },
    });
    expect(await ok(s, 'GET', '/1/segments', { query: { count: 'true' } })).toBe(2);
    expect((await ok(s, 'GET', '/1/segments', { query: { start: '1' } })).map((r: any) => r.segment_id)).toEqual([2]);
    expect(await s.call('GET', '/1/segments/3')).toEqual({ status: 404, body: { error: 'search 3 not found' } });
    expectFieldError(await s.call('GET', '/1/segments/x'), 'segment_id');
  });
});
