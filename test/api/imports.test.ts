import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceImports } from '../../src/service/imports/index.js';
import { ApiError } from '../../src/errors.js';
import { runImport, type ImportOutcome, type ImportRequest } from '../../src/cli/importer.js';
import { progressLine } from '../../src/cli/import-progress.js';
import { CsvError, openCsv } from '../../src/cli/csv-source.js';
import { addMember, atD, countRows, createField, createGroups, getMember, groupMemberIds, ok } from './util.js';

let s: TestService;
beforeEach(async () => {
  s = makeService();
  // makeService creates no standard fields: these are the ones every test here uses.
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' }); // 1
  await createField(s, { shortcut_name: 'city', field_type: 'text' }); // 2
  await createField(s, { shortcut_name: 'birthday', field_type: 'date' }); // 3
  await createField(s, { shortcut_name: 'score', field_type: 'numeric' }); // 4
});
afterEach(() => s.close());

const T0D = atD(T0); // @D:2026-03-04T05:06:07
const T1 = '2026-03-04T06:00:00.000Z';
const T2 = '2026-03-04T07:30:45.000Z';

/** Runs the job runner until no POST /members job is left. */
function runJobs() {
  for (let i = 0; i < 100 && advanceImports(s.db, s.clock, 10_000); i++);
  expect(advanceImports(s.db, s.clock, 10_000)).toBe(false);
}

/** Every row of every table: a failed request must leave this unchanged. */
function allTables(): string {
  const tables =
    // import_members is a view over import_ledger since migration 007.
    (s.db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").all() as { name: string }[]).map(
      (t) => t.name,
    );
  expect(tables).toEqual(expect.arrayContaining(['members', 'member_imports', 'import_rows', 'import_members', 'member_groups']));
  return JSON.stringify(tables.map((t) => [t, s.db.prepare(`SELECT * FROM "${t}"`).all()]));
}

const stage = (members: unknown[], extra: Record<string, unknown> = {}) =>
  ok(s, 'POST', '/1/members', { body: { members, ...extra } }).then((r) => r.import_id as number);
const getImport = (id: number) => ok(s, 'GET', `/1/members/imports/${id}`);
const importMembers = (id: number, query: Record<string, string> = {}) => ok(s, 'GET', `/1/members/imports/${id}/members`, { query });
const open = (extra: Record<string, unknown> = {}) => ok(s, 'POST', '/1/members/imports', { body: extra });
const rows = (id: number, members: unknown[]) => ok(s, 'POST', `/1/members/imports/${id}/rows`, { body: { members } });
const finish = (id: number, error?: string) => ok(s, 'POST', `/1/members/imports/${id}/finish`, { body: error ? { error } : {} });
const memberByEmail = (email: string) => ok(s, 'GET', `/1/members/email/${email}`, { query: { deleted: 'true' } });

/** The import record with every counter at zero; `over` sets what a test expects. */
const record = (import_id: number, over: Record<string, unknown> = {}) => ({
  import_id,
  account_id: 1,
  import_started: null,
  import_finished: null,
  source_name: null,
  source_filename: null,
  num_members_added: 0,
  num_members_updated: 0,
  num_duplicates: 0,
  num_skipped: 0,
  num_members: 0,
  num_errors: 0,
  num_added_by_group: [],
  groups_updated: [],
  fields_updated: [],
  status: 'q',
  error_message: null,
  style: null,
  automated_field_changes: null,
  mode: 'job',
  add_only: false,
  group_ids: [],
  ...over,
});

// ------------------------------------------------------------------ the job

describe('POST /{account_id}/members (a job)', () => {
  it('answers {import_id} at once, runs q → p → o, and counts every kind of row', async () => {
    const [news, vip] = await createGroups(s, 'News', 'VIP');
    const kept = await addMember(s, 'kept@x.org', { fields: { first_name: 'Kept', city: 'Oslo' }, group_ids: [news] });
    const archived = await addMember(s, 'archived@x.org');
    const optedOut = await addMember(s, 'out@x.org');
    await ok(s, 'DELETE', `/1/members/${archived}`);
    await ok(s, 'PUT', '/1/members/email/optout/out@x.org', { body: {} });

    const id = await stage(
      [
        { email: 'New@X.org', first_name: 'New', city: 'Bergen' }, // added
        { email: 'kept@x.org', score: '7.5' }, // updated (already in News)
        { email: 'new@x.org', first_name: 'Twice' }, // duplicate of the first row
        { email: 'not-an-email', first_name: 'Bad' }, // error
        { email: 'bad.date@x.org', first_name: 'Bad', birthday: '1990-02-30' }, // error: the only birthday
        { email: 'archived@x.org', first_name: 'Back' }, // updated, restored
        { email: 'out@x.org', first_name: 'Out' }, // updated, stays opted out
      ],
      { group_ids: [news, vip], source_filename: 'audience.csv' },
    );
    expect(id).toBe(1);
    // Nothing is applied before the runner gets to it.
    expect(await getImport(id)).toEqual(record(1, { source_filename: 'audience.csv', group_ids: [news, vip] }));
    expect(countRows(s, 'members')).toBe(3);
    expect(countRows(s, 'import_rows')).toBe(7);

    s.clock.set(T1);
    runJobs();
    expect(countRows(s, 'import_rows')).toBe(0);
    expect(await getImport(id)).toEqual(
      record(1, {
        status: 'o',
        source_filename: 'audience.csv',
        group_ids: [news, vip],
        import_started: atD(T1),
        import_finished: atD(T1),
        num_members: 7,
        num_members_added: 1,
        num_members_updated: 3,
        num_duplicates: 1,
        num_skipped: 2,
        num_errors: 2,
        // new@ joins both; kept@ joins VIP only; archived@ and out@ join both.
        num_added_by_group: [
          { member_group_id: news, num_added: 3 },
          { member_group_id: vip, num_added: 4 },
        ],
        groups_updated: [news, vip],
        // Only fields that rows actually wrote: not the birthday of a rejected row.
        fields_updated: ['first_name', 'city', 'score'],
      }),
    );

    const added = (await memberByEmail('new@x.org')).member_id;
    expect(await importMembers(id)).toEqual([
      { member_id: kept, change_type: 'u', member_status_id: 'a', email: 'kept@x.org' },
      { member_id: archived, change_type: 'u', member_status_id: 'a', email: 'archived@x.org' },
      { member_id: optedOut, change_type: 'u', member_status_id: 'o', email: 'out@x.org' },
      { member_id: added, change_type: 'a', member_status_id: 'a', email: 'new@x.org' },
    ]);

    // The first row of a duplicate pair wins; the fields merge into what a member had.
    expect((await getMember(s, added)).fields).toEqual({ first_name: 'New', city: 'Bergen' });
    const keptNow = await getMember(s, kept);
    expect(keptNow.fields).toEqual({ first_name: 'Kept', city: 'Oslo', score: 7.5 });
    expect(keptNow.last_modified_at).toBe(atD(T1));
    // An archived member comes back; an opt-out stays opted out.
    const back = await getMember(s, archived);
    expect(back.deleted_at).toBeNull();
    expect(back.fields).toEqual({ first_name: 'Back' });
    expect(back.member_since).toBe(T0D);
    const out = await getMember(s, optedOut);
    expect([out.member_status_id, out.status, out.fields]).toEqual(['o', 'opt-out', { first_name: 'Out' }]);
    expect(groupMemberIds(s, news)).toEqual([kept, archived, optedOut, added]);
    expect(groupMemberIds(s, vip)).toEqual([kept, archived, optedOut, added]);
    // No member was made for a rejected row.
    expect(countRows(s, 'members', "email IN ('not-an-email', 'bad.date@x.org')")).toBe(0);
    expect(countRows(s, 'members')).toBe(4);
  });

  it('lists imports in id order; another import id is a 404', async () => {
    const a = await stage([{ email: 'a@x.org' }]);
    const b = await stage([{ email: 'b@x.org' }], { source_name: 'nightly sync' });
    runJobs();
    const list = await ok(s, 'GET', '/1/members/imports');
    expect(list.map((i: any) => [i.import_id, i.status, i.source_name, i.num_members_added])).toEqual([
      [a, 'o', null, 1],
      [b, 'o', 'nightly sync', 1],
    ]);
    expect(list[1]).toEqual(await getImport(b));
    expect((await s.call('GET', '/1/members/imports/99')).status).toBe(404);
    expect((await s.call('GET', '/1/members/imports/99/members')).status).toBe(404);
  });

  it('runs a job larger than one runner batch in several transactions, to the same counts', async () => {
    const members = Array.from({ length: 4_500 }, (_, i) => ({ email: `m${i}@x.org`, score: i }));
    members.push({ email: 'm0@x.org', score: -1 }); // a duplicate in the last batch
    const id = await stage(members);
    // Each short slice of the runner commits whole batches: a consistent prefix at every step.
    const seen = new Set<string>();
    for (let i = 0; i < 100 && advanceImports(s.db, s.clock, 1); i++) {
      const now = await getImport(id);
      expect(now.num_members_added).toBe(countRows(s, 'members'));
      expect(now.num_members).toBe(4_501 - countRows(s, 'import_rows'));
      expect(now.num_members % 2_000 === 0 || now.num_members === 4_501).toBe(true);
      seen.add(now.status);
    }
    expect(seen.has('p')).toBe(true);
    runJobs();
    const done = await getImport(id);
    expect([done.status, done.num_members, done.num_members_added, done.num_duplicates]).toEqual(['o', 4_501, 4_500, 1]);
    expect((await memberByEmail('m0@x.org')).fields).toEqual({ score: 0 });
  });

  it('add_only adds new members and skips existing ones without touching them', async () => {
    const old = await addMember(s, 'old@x.org', { fields: { city: 'Oslo' } });
    const [g] = await createGroups(s, 'G');
    const id = await stage(
      [
        { email: 'old@x.org', city: 'Changed', first_name: 'Old' },
        { email: 'fresh@x.org', city: 'Bergen' },
      ],
      { add_only: true, group_ids: [g] },
    );
    runJobs();
    const fresh = (await memberByEmail('fresh@x.org')).member_id;
    expect(await getImport(id)).toMatchObject({
      status: 'o',
      add_only: true,
      num_members: 2,
      num_members_added: 1,
      num_members_updated: 0,
      num_skipped: 1,
      num_errors: 0,
      num_added_by_group: [{ member_group_id: g, num_added: 1 }],
      // first_name came only with the skipped row.
      fields_updated: ['city'],
    });
    expect(await importMembers(id)).toEqual([
      { member_id: old, change_type: 's', member_status_id: 'a', email: 'old@x.org' },
      { member_id: fresh, change_type: 'a', member_status_id: 'a', email: 'fresh@x.org' },
    ]);
    expect((await getMember(s, old)).fields).toEqual({ city: 'Oslo' });
    expect(groupMemberIds(s, g)).toEqual([fresh]);
  });

  it('re-importing the same rows updates every member and adds none', async () => {
    const members = [
      { email: 'a@x.org', first_name: 'A', score: '1' },
      { email: 'b@x.org', first_name: 'B', score: '2' },
      { email: 'c@x.org', first_name: 'C', score: '3' },
    ];
    const first = await stage(members);
    runJobs();
    const before = countRows(s, 'members');
    const again = await stage(members);
    runJobs();
    expect(countRows(s, 'members')).toBe(before);
    expect(await getImport(first)).toMatchObject({ num_members: 3, num_members_added: 3, num_members_updated: 0 });
    expect(await getImport(again)).toMatchObject({
      status: 'o',
      num_members: 3,
      num_members_added: 0,
      num_members_updated: 3,
      num_duplicates: 0,
      num_skipped: 0,
      fields_updated: ['first_name', 'score'],
    });
    expect((await importMembers(again)).map((m: any) => m.change_type)).toEqual(['u', 'u', 'u']);
    expect(await importMembers(again, { added_only: 'true' })).toEqual([]);
  });

  it('joins group_ids and row-level groups, creating a missing group by name', async () => {
    const [news] = await createGroups(s, 'News');
    const id = await stage(
      [
        { email: 'a@x.org', groups: ['VIP', 'news'] },
        { email: 'b@x.org', groups: 'vip' },
        { email: 'c@x.org', groups: [news] },
        { email: 'd@x.org' },
      ],
      { group_ids: [news] },
    );
    runJobs();
    const groups = await ok(s, 'GET', '/1/groups');
    expect(groups.map((g: any) => [g.group_name, g.active_count])).toEqual([
      ['News', 4],
      ['VIP', 2],
    ]);
    const vip = groups[1].member_group_id;
    expect(await getImport(id)).toMatchObject({
      num_members_added: 4,
      num_added_by_group: [
        { member_group_id: news, num_added: 4 },
        { member_group_id: vip, num_added: 2 },
      ],
      groups_updated: [news, vip],
    });
    expect((await importMembers(id, { added_to_groups: '1' })).length).toBe(4);
  });

  it('criteria.sms sets the statuses of imported members that have a phone number', async () => {
    const id = await stage(
      [
        { email: 'phone@x.org', sms: { phone_number: '+47 912 34 567' } },
        { email: 'nophone@x.org', first_name: 'No' },
      ],
      { criteria: { sms: { transactional_status: 'o', promotional_status: 'a' } } },
    );
    runJobs();
    expect(await getImport(id)).toMatchObject({ status: 'o', num_members_added: 2, num_errors: 0 });
    const phone = await memberByEmail('phone@x.org');
    expect(phone.sms).toEqual({
      phone_number: '+4791234567',
      region_code: 'NO',
      transactional_status: 'o',
      transactional_status_updated_at: '2026-03-04T05:06:07.000000+00:00',
      promotional_status: 'a',
      promotional_status_updated_at: '2026-03-04T05:06:07.000000+00:00',
    });
    expect((await memberByEmail('nophone@x.org')).sms).toBeNull();
  });

  it('an unknown field is a 400 naming it, and nothing is written', async () => {
    await stage([{ email: 'before@x.org' }]);
    runJobs();
    const before = allTables();
    const res = await s.call('POST', '/1/members', {
      body: {
        members: [
          { email: 'a@x.org', city: 'Oslo' },
          { email: 'b@x.org', favourite_colour: 'red' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('favourite_colour');
    expect(res.body.error).toMatch(/^members\[1\]\.favourite_colour: unknown field "favourite_colour"/);
    expect(res.body.field).toBe('members[1].favourite_colour');
    expect(allTables()).toBe(before);
  });

  it('an unknown group id is a 404, and nothing is written', async () => {
    const [g] = await createGroups(s, 'G');
    const before = allTables();
    const res = await s.call('POST', '/1/members', { body: { members: [{ email: 'a@x.org' }], group_ids: [g, 999] } });
    expect(res).toEqual({ status: 404, body: { error: 'group 999 not found' } });
    expect(allTables()).toBe(before);
    const streamed = await s.call('POST', '/1/members/imports', { body: { group_ids: [999] } });
    expect(streamed.status).toBe(404);
    expect(allTables()).toBe(before);
  });

  it('refuses a malformed body before writing', async () => {
    const before = allTables();
    for (const body of [
      { members: [] },
      { members: [{ email: 'a@x.org' }], add_only: 'yes' },
      { members: [{ email: 'a@x.org' }], criteria: { sms: { promotional_status: 'x' } } },
      { members: [{ email: 'a@x.org' }], group_ids: [1.5] },
      { members: ['a@x.org'] },
    ])
      expect((await s.call('POST', '/1/members', { body })).status).toBe(400);
    expect(allTables()).toBe(before);
  });

  it('a POST /members job takes no stream rows and is not finished by a client', async () => {
    const id = await stage([{ email: 'a@x.org' }]);
    const more = await s.call('POST', `/1/members/imports/${id}/rows`, { body: { members: [{ email: 'b@x.org' }] } });
    expect(more.status).toBe(400);
    expect(more.body.error).toContain('takes no more rows');
    expect((await s.call('POST', `/1/members/imports/${id}/finish`, { body: {} })).status).toBe(400);
    runJobs();
    expect(await getImport(id)).toMatchObject({ status: 'o', num_members: 1 });
    expect(countRows(s, 'members', "email = 'b@x.org'")).toBe(0);
  });

  it('a job whose group was deleted before it ran ends in e with a message, and the runner goes on', async () => {
    const [g] = await createGroups(s, 'Gone');
    // The jobs of one look run in one transaction, each in a savepoint: the one before
    // and the one after the failing job are applied, the failing one leaves nothing.
    const first = await stage([{ email: 'first@x.org' }]);
    const doomed = await stage([{ email: 'a@x.org' }], { group_ids: [g] });
    const fine = await stage([{ email: 'b@x.org' }]);
    await ok(s, 'DELETE', `/1/groups/${g}`);
    runJobs();
    expect(await getImport(first)).toMatchObject({ status: 'o', num_members_added: 1 });
    expect(countRows(s, 'members', "email = 'first@x.org'")).toBe(1);
    const failed = await getImport(doomed);
    expect(failed.status).toBe('e');
    expect(failed.error_message).toContain(`group ${g} not found`);
    expect(failed.num_members).toBe(0);
    expect(countRows(s, 'members', "email = 'a@x.org'")).toBe(0);
    expect(countRows(s, 'import_rows')).toBe(0);
    expect(await getImport(fine)).toMatchObject({ status: 'o', num_members_added: 1 });
  });

  it('when the first job of a look fails, it ends in e alone and the jobs after it are applied', async () => {
    const [g] = await createGroups(s, 'Gone');
    // The first job runs without a savepoint: its failure undoes the look's transaction,
    // which then held nothing else, and the runner goes on with the others.
    const doomed = await stage([{ email: 'a@x.org' }, { email: 'c@x.org' }], { group_ids: [g] });
    const next = await stage([{ email: 'b@x.org' }]);
    const last = await stage([{ email: 'd@x.org' }, { email: 'e@x.org' }]);
    await ok(s, 'DELETE', `/1/groups/${g}`);
    runJobs();
    const failed = await getImport(doomed);
    expect(failed).toMatchObject({ status: 'e', num_members: 0, num_members_added: 0 });
    expect(failed.error_message).toContain(`group ${g} not found`);
    expect(countRows(s, 'members', "email IN ('a@x.org', 'c@x.org')")).toBe(0);
    expect(await getImport(next)).toMatchObject({ status: 'o', num_members_added: 1 });
    expect(await getImport(last)).toMatchObject({ status: 'o', num_members_added: 2 });
    expect(countRows(s, 'members')).toBe(3);
    expect(countRows(s, 'import_rows')).toBe(0);
  });
});

// ------------------------------------------------------------------ rows the service refuses

describe('row errors', () => {
  it('a refused row leaves no trace: no member, no membership, no field counted', async () => {
    const [g] = await createGroups(s, 'G');
    const kept = await addMember(s, 'kept@x.org', { fields: { city: 'Oslo' } });
    const id = (await open({ group_ids: [g] })).import_id;
    const res = await rows(id, [
      { email: 'unknown.group@x.org', first_name: 'X', groups: [999] },
      { email: 'bad.phone@x.org', first_name: 'X', sms: { phone_number: '12' } },
      { email: 'sms.text@x.org', sms: '+4791234567' },
      { email: 'kept@x.org', city: 'Bergen', sms: { phone_number: 'nope' } },
      { email: 'bad.score@x.org', score: 'ten' },
      { email: 'ok@x.org', first_name: 'Ok' },
    ]);
    expect(res.errors.map((e: any) => [e.index, e.email])).toEqual([
      [0, 'unknown.group@x.org'],
      [1, 'bad.phone@x.org'],
      [2, 'sms.text@x.org'],
      [3, 'kept@x.org'],
      [4, 'bad.score@x.org'],
    ]);
    expect(res.errors[0].error).toBe('group 999 not found');
    expect(res.errors[1].error).toContain('is not a phone number');
    expect(res.errors[2].error).toContain('sms');
    expect(res.errors[4].error).toBe('score: must be a number for a numeric field, got "ten"');
    expect(res).toMatchObject({ received: 6, num_members: 6, added: 1, updated: 0, duplicates: 0, skipped: 5 });
    const done = await finish(id);
    expect(done).toMatchObject({
      num_members: 6,
      num_members_added: 1,
      num_members_updated: 0,
      num_skipped: 5,
      num_errors: 5,
      num_added_by_group: [{ member_group_id: g, num_added: 1 }],
      fields_updated: ['first_name'],
    });
    expect(countRows(s, 'members')).toBe(2);
    expect((await getMember(s, kept)).fields).toEqual({ city: 'Oslo' });
    expect(groupMemberIds(s, g)).toEqual([(await memberByEmail('ok@x.org')).member_id]);
    expect((await importMembers(id)).map((m: any) => m.email)).toEqual(['ok@x.org']);
  });

  it('after a row refused for its sms part, a later row for the same address is applied, not a duplicate', async () => {
    const id = (await open()).import_id;
    const res = await rows(id, [
      { email: 'a@x.org', sms: { promotional_status: 'a' } },
      { email: 'a@x.org', city: 'Oslo', sms: { phone_number: '+4791234567', promotional_status: 'a' } },
    ]);
    expect(res).toMatchObject({ added: 1, duplicates: 0, skipped: 1 });
    expect(res.errors).toEqual([
      { index: 0, email: 'a@x.org', error: 'sms.promotional_status: the member has no phone number; give sms.phone_number' },
    ]);
    const a = await memberByEmail('a@x.org');
    expect([a.fields, a.sms.phone_number, a.sms.promotional_status]).toEqual([{ city: 'Oslo' }, '+4791234567', 'a']);
  });

  it('an empty or null value adds nothing for a new member and clears the value of an existing one', async () => {
    const kept = await addMember(s, 'kept@x.org', { fields: { city: 'Oslo', first_name: 'K' } });
    const id = (await open()).import_id;
    await rows(id, [
      { email: 'new@x.org', city: null, first_name: '', score: 3 },
      { email: 'kept@x.org', city: null },
    ]);
    await finish(id);
    expect((await memberByEmail('new@x.org')).fields).toEqual({ score: 3 });
    expect(s.db.prepare("SELECT field_values FROM members WHERE email = 'new@x.org'").get()).toEqual({ field_values: '{"4":3}' });
    expect((await getMember(s, kept)).fields).toEqual({ first_name: 'K' });
    expect((await getImport(id)).fields_updated).toEqual(['score']);
  });
});

// ------------------------------------------------------------------ the member list and its filters

describe('GET /{account_id}/members/imports/{id}/members', () => {
  it('filters: all, added_only, added_to_groups; false and 0 mean the filter is off', async () => {
    const [g] = await createGroups(s, 'G');
    const inGroup = await addMember(s, 'in.group@x.org', { group_ids: [g] });
    const outside = await addMember(s, 'outside@x.org');
    const id = await stage([{ email: 'in.group@x.org' }, { email: 'outside@x.org' }, { email: 'new@x.org' }], { group_ids: [g] });
    runJobs();
    const added = (await memberByEmail('new@x.org')).member_id;
    const everyone = [
      { member_id: inGroup, change_type: 'u', member_status_id: 'a', email: 'in.group@x.org' },
      { member_id: outside, change_type: 'u', member_status_id: 'a', email: 'outside@x.org' },
      { member_id: added, change_type: 'a', member_status_id: 'a', email: 'new@x.org' },
    ];
    expect(await importMembers(id)).toEqual(everyone);
    expect(await importMembers(id, { all: 'true' })).toEqual(everyone);
    expect(await importMembers(id, { all: '1', added_only: '1' })).toEqual(everyone);
    expect(await importMembers(id, { added_only: 'true' })).toEqual([everyone[2]]);
    expect(await importMembers(id, { added_only: '1' })).toEqual([everyone[2]]);
    expect(await importMembers(id, { added_only: 'false' })).toEqual(everyone);
    expect(await importMembers(id, { added_only: '0' })).toEqual(everyone);
    // in.group@ was in the group already.
    expect(await importMembers(id, { added_to_groups: 'true' })).toEqual([everyone[1], everyone[2]]);
    expect(await importMembers(id, { added_to_groups: '0' })).toEqual(everyone);
    expect(await importMembers(id, { added_only: '1', added_to_groups: '1' })).toEqual([everyone[2]]);
    expect(await importMembers(id, { all: 'false', added_to_groups: 'false' })).toEqual(everyone);
    const bad = await s.call('GET', `/1/members/imports/${id}/members`, { query: { added_only: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('added_only');
    // An unknown query parameter is ignored (named in a header; test/api/client-fidelity.test.ts).
    expect((await s.call('GET', `/1/members/imports/${id}/members`, { query: { since: '1' } })).status).toBe(200);
  });

  it('a purged member is in no import list any more; an archived one still is', async () => {
    const first = await stage([{ email: 'gone@x.org' }, { email: 'stays@x.org' }]);
    runJobs();
    const second = (await open()).import_id;
    await rows(second, [{ email: 'gone@x.org', city: 'Oslo' }]);
    await finish(second);
    const gone = (await memberByEmail('gone@x.org')).member_id;
    const stays = (await memberByEmail('stays@x.org')).member_id;
    await ok(s, 'DELETE', `/1/members/${stays}`);
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [gone] } })).toBe(true);
    expect((await importMembers(first)).map((m: any) => m.member_id)).toEqual([stays]);
    expect(await importMembers(second)).toEqual([]);
    expect(await importMembers(first, { added_only: '1' })).toEqual([
      { member_id: stays, change_type: 'a', member_status_id: 'a', email: 'stays@x.org' },
    ]);
    expect(countRows(s, 'import_members', 'member_id = ?', gone)).toBe(0);
    // The counters are history: the import did add two members.
    expect((await getImport(first)).num_members_added).toBe(2);
  });
});

// ------------------------------------------------------------------ streamed imports

describe('streamed imports (extension)', () => {
  it('one import record across batches: duplicates across batches, started when opened, finished when finished', async () => {
    const opened = await open({ source_filename: 'big.csv', source_name: 'CRM' });
    const id = opened.import_id;
    expect(opened).toEqual(
      record(id, { status: 'p', mode: 'stream', source_filename: 'big.csv', source_name: 'CRM', import_started: T0D }),
    );
    s.clock.set(T1);
    const b1 = await rows(id, [{ email: 'a@x.org', city: 'Oslo' }, { email: 'b@x.org' }]);
    expect(b1).toEqual({
      import_id: id,
      received: 2,
      num_members: 2,
      added: 2,
      updated: 0,
      duplicates: 0,
      skipped: 0,
      errors: [],
      duplicate_rows: [],
    });
    const b2 = await rows(id, [{ email: 'A@x.org', city: 'Rome' }, { email: 'c@x.org' }, { email: 'c@x.org' }]);
    // A (a@x.org) is a row of the batch before; the second c@x.org repeats this batch's row 1.
    expect(b2).toEqual({
      import_id: id,
      received: 3,
      num_members: 5,
      added: 1,
      updated: 0,
      duplicates: 2,
      skipped: 0,
      errors: [],
      duplicate_rows: [
        { index: 0, email: 'a@x.org', duplicate_of: null },
        { index: 2, email: 'c@x.org', duplicate_of: 1 },
      ],
    });
    expect(await getImport(id)).toMatchObject({ status: 'p', num_members: 5, import_finished: null });
    s.clock.set(T2);
    expect(await finish(id)).toEqual(
      record(id, {
        status: 'o',
        mode: 'stream',
        source_filename: 'big.csv',
        source_name: 'CRM',
        import_started: T0D,
        import_finished: atD(T2),
        num_members: 5,
        num_members_added: 3,
        num_duplicates: 2,
        fields_updated: ['city'],
      }),
    );
    expect((await memberByEmail('a@x.org')).fields).toEqual({ city: 'Oslo' });
    expect(countRows(s, 'member_imports')).toBe(1);
  });

  it('rows after finish are a 400; finishing twice is a 400; an unknown import is a 404', async () => {
    const id = (await open()).import_id;
    await rows(id, [{ email: 'a@x.org' }]);
    await finish(id);
    const before = allTables();
    const late = await s.call('POST', `/1/members/imports/${id}/rows`, { body: { members: [{ email: 'b@x.org' }] } });
    expect(late.status).toBe(400);
    expect(late.body.error).toContain('finished');
    const twice = await s.call('POST', `/1/members/imports/${id}/finish`, { body: {} });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toContain('already finished');
    expect(allTables()).toBe(before);
    expect((await s.call('POST', '/1/members/imports/99/rows', { body: { members: [] } })).status).toBe(404);
    expect((await s.call('POST', '/1/members/imports/99/finish', { body: {} })).status).toBe(404);
  });

  it('finishing with an error ends in e; more rows resume it to p; finishing then ends in o', async () => {
    const id = (await open()).import_id;
    await rows(id, [{ email: 'a@x.org' }, { email: 'b@x.org' }]);
    s.clock.set(T1);
    const stopped = await finish(id, 'interrupted after line 3; resume with --resume');
    expect(stopped).toMatchObject({
      status: 'e',
      error_message: 'interrupted after line 3; resume with --resume',
      import_finished: atD(T1),
      num_members: 2,
    });
    s.clock.set(T2);
    const resumed = await rows(id, [{ email: 'c@x.org' }, { email: 'a@x.org' }]);
    expect(resumed).toMatchObject({ received: 2, num_members: 4, added: 1, duplicates: 1 });
    // In progress again: no error and no end time until it is finished.
    expect(await getImport(id)).toMatchObject({ status: 'p', error_message: null, import_finished: null, import_started: T0D });
    expect(await finish(id)).toMatchObject({
      status: 'o',
      error_message: null,
      import_finished: atD(T2),
      num_members: 4,
      num_members_added: 3,
      num_duplicates: 1,
    });
  });

  it('an empty batch and an empty import are fine', async () => {
    const id = (await open()).import_id;
    expect(await rows(id, [])).toMatchObject({ received: 0, num_members: 0 });
    expect(await finish(id)).toMatchObject({ status: 'o', num_members: 0 });
  });

  it('a killed stream (never finished) stays p with a consistent prefix', async () => {
    const id = (await open()).import_id;
    await rows(id, [
      { email: 'a@x.org', city: 'Oslo' },
      { email: 'b@x.org', city: 'Rome' },
    ]);
    await rows(id, [
      { email: 'c@x.org', city: 'Bern' },
      { email: 'bad', city: 'X' },
    ]);
    // A third batch refused as a whole changes nothing.
    const broken = await s.call('POST', `/1/members/imports/${id}/rows`, {
      body: { members: [{ email: 'd@x.org' }, { email: 'e@x.org', first_name: 5, score: [1] }], columns: ['email'] },
    });
    expect(broken.status).toBe(400);
    const rec = await getImport(id);
    expect(rec).toMatchObject({ status: 'p', num_members: 4, num_members_added: 3, num_errors: 1, import_finished: null });
    expect(countRows(s, 'members')).toBe(rec.num_members_added);
    expect(countRows(s, 'import_members', 'import_id = ?', id)).toBe(3);
    const members = await ok(s, 'GET', '/1/members');
    expect(members.map((m: any) => [m.email, m.fields.city])).toEqual([
      ['a@x.org', 'Oslo'],
      ['b@x.org', 'Rome'],
      ['c@x.org', 'Bern'],
    ]);
    // The job runner leaves a stream alone.
    expect(advanceImports(s.db, s.clock, 1000)).toBe(false);
    expect((await getImport(id)).status).toBe('p');
  });

  it('a batch that names a deleted group fails whole, and the import can still be finished in error', async () => {
    const [g] = await createGroups(s, 'G');
    const id = (await open({ group_ids: [g] })).import_id;
    await rows(id, [{ email: 'a@x.org' }]);
    await ok(s, 'DELETE', `/1/groups/${g}`);
    const before = allTables();
    const res = await s.call('POST', `/1/members/imports/${id}/rows`, { body: { members: [{ email: 'b@x.org' }] } });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(`group ${g} not found`);
    expect(allTables()).toBe(before);
    expect(await finish(id, `group ${g} not found`)).toMatchObject({ status: 'e', num_members: 1 });
  });
});

// ------------------------------------------------------------------ dry run

describe('POST /{account_id}/members/imports/validate', () => {
  it('counts what an import would do with the same rules, and writes nothing', async () => {
    await addMember(s, 'old@x.org');
    const before = allTables();
    const res = await ok(s, 'POST', '/1/members/imports/validate', {
      body: {
        members: [
          { email: 'old@x.org', city: 'Oslo' },
          { email: 'new@x.org', groups: ['Brand new group'] },
          { email: 'NEW@x.org' },
          { email: 'bad', city: 'X' },
          { email: 'date@x.org', birthday: 'soon' },
        ],
      },
    });
    expect(res).toEqual({
      received: 5,
      added: 1,
      updated: 1,
      duplicates: 1,
      skipped: 2,
      errors: [
        { index: 3, email: 'bad', error: '"bad" is not a valid e-mail address' },
        { index: 4, email: 'date@x.org', error: 'birthday: must be a date YYYY-MM-DD for a date field, got "soon"' },
      ],
      duplicate_rows: [{ index: 2, email: 'new@x.org', duplicate_of: 1 }],
    });
    expect(allTables()).toBe(before);
    const addOnly = await ok(s, 'POST', '/1/members/imports/validate', {
      body: { members: [{ email: 'old@x.org' }, { email: 'new@x.org' }], add_only: true },
    });
    expect(addOnly).toMatchObject({ received: 2, added: 1, updated: 0, skipped: 1, errors: [] });
    expect((await s.call('POST', '/1/members/imports/validate', { body: { members: [], group_ids: [42] } })).status).toBe(404);
    expect(allTables()).toBe(before);
  });
});

// ------------------------------------------------------------------ rows the client refused

describe('rows the client refused before sending', () => {
  it('are counted as rows of the import, skipped as errors, so a resume skips exactly num_members rows', async () => {
    const id = (await open()).import_id;
    const res = await ok(s, 'POST', `/1/members/imports/${id}/rows`, {
      body: { members: [{ email: 'a@x.org' }, { email: 'bad' }], rejected: 3 },
    });
    expect(res).toMatchObject({ received: 5, num_members: 5, added: 1, skipped: 4 });
    expect(res.errors).toHaveLength(1);
    expect(await ok(s, 'POST', `/1/members/imports/${id}/rows`, { body: { members: [], rejected: 2 } })).toMatchObject({
      received: 2,
      num_members: 7,
    });
    expect(await finish(id)).toMatchObject({ num_members: 7, num_members_added: 1, num_skipped: 6, num_errors: 6 });
    const negative = await s.call('POST', `/1/members/imports/${id}/rows`, { body: { members: [], rejected: -1 } });
    expect(negative.status).toBe(400);
    expect(negative.body.field).toBe('rejected');
  });
});

// ------------------------------------------------------------------ the CLI's import pipeline over the route table

describe('runImport (the CLI pipeline) against the route table', () => {
  /**
   * An Api over the route table, advancing jobs after each call as the local
   * transport does; `refuse` answers some calls with an error instead.
   */
  const apiOver = async (
    refuse: (call: { method: string; path: string }, n: number) => ApiError | undefined | Promise<undefined> = () => undefined,
  ) => {
    const { Api } = await import('../../src/client/api.js');
    let calls = 0;
    const transport = {
      target: 'test',
      async request(call: { method: string; path: string; query?: Record<string, unknown>; body?: unknown }) {
        const refused = await refuse(call, ++calls);
        if (refused) throw refused;
        const res = await s.router.handle({
          method: call.method,
          path: call.path,
          query: Object.fromEntries(
            Object.entries(call.query ?? {})
              .filter(([, v]) => v !== undefined)
              .map(([k, v]) => [k, String(v)]),
          ),
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
          actor: s.actor,
        });
        advanceImports(s.db, s.clock, 1000);
        const body = JSON.parse(JSON.stringify(res.body ?? null));
        if (res.status >= 400) throw ApiError.fromResponse(res.status, body);
        return body;
      },
      download: () => Promise.reject(new Error('no downloads here')),
      close: async () => undefined,
    };
    return new Api(transport as never, 1);
  };
  const csv = (name: string, rows: string[]) => {
    const path = `${s.dir}/${name}`;
    writeFileSync(path, ['email,first_name', ...rows].join('\n') + '\n');
    return path;
  };
  const request = (file: string, over: Partial<ImportRequest> = {}): ImportRequest => ({
    file,
    groups: async () => [],
    addOnly: false,
    map: {},
    dryRun: false,
    batchSize: 2,
    wait: true,
    ...over,
  });
  const quiet = { update: () => undefined, note: () => undefined, stop: async () => undefined };
  const rows = (n: number) => Array.from({ length: n }, (_, i) => `p${i}@x.org,P${i}`);

  it('falls back to POST /members jobs, one record per batch, when the service has no streamed imports', async () => {
    const api = await apiOver((call) =>
      call.method === 'POST' && call.path === '/1/members/imports'
        ? new ApiError(405, 'POST is not allowed on /1/members/imports')
        : undefined,
    );
    const notes: string[] = [];
    const outcome = await runImport(api, request(csv('five.csv', [...rows(4), 'short']), { batchSize: 2 }), quiet, (m) => notes.push(m), {
      stopped: false,
    });
    expect(notes).toEqual(['the service has no streamed imports: sending 2-row batches with POST /members, one import record per batch']);
    expect(outcome.imports.map((i) => [i.mode, i.status, i.num_members, i.num_members_added])).toEqual([
      ['job', 'o', 2, 2],
      ['job', 'o', 2, 2],
    ]);
    expect(outcome.rejected).toEqual([{ line: 6, reason: 'has 1 columns; the header has 2' }]);
    expect(countRows(s, 'members')).toBe(4);
  });

  it('a refused batch ends the import in e with the reason, and what was written is whole batches', async () => {
    let rowCalls = 0;
    const api = await apiOver((call) =>
      call.path.endsWith('/rows') && ++rowCalls === 2 ? new ApiError(503, 'the service is busy') : undefined,
    );
    const failed = await runImport(api, request(csv('six.csv', rows(6))), quiet, () => undefined, { stopped: false }).then(
      () => undefined,
      (err: Error & { outcome?: ImportOutcome }) => err,
    );
    expect(failed?.message).toBe('the service is busy');
    expect(failed?.outcome?.lastLine).toBe(3);
    expect(failed?.outcome?.importId).toBe(1);
    expect(await getImport(1)).toMatchObject({
      status: 'e',
      num_members: 2,
      num_members_added: 2,
      error_message: 'the service is busy (stopped after line 3)',
    });
    expect(countRows(s, 'members')).toBe(2);
  });

  it('a file that breaks: every complete row before the broken one is imported, and the error names the line', async () => {
    const path = `${s.dir}/broken.csv`;
    writeFileSync(path, ['email,first_name', ...rows(5), 'broken@x.org,"Unclosed', 'more'].join('\n'));
    const failed = await runImport(await apiOver(), request(path, { batchSize: 2 }), quiet, () => undefined, { stopped: false }).then(
      () => undefined,
      (err: Error & { outcome?: ImportOutcome }) => err,
    );
    const message = `${path}, line 7: the quoted field that opens on this line is not closed by the end of the file (a missing quote, or a truncated file?)`;
    expect(failed).toBeInstanceOf(CsvError);
    expect(failed?.message).toBe(message);
    // Rows 1-4 went in two batches; row 5 (line 6), read into the next, goes in before the import ends.
    expect(failed?.outcome).toMatchObject({ lastLine: 6, rowsRead: 5, rowsSent: 5, importId: 1 });
    expect(await getImport(1)).toMatchObject({
      status: 'e',
      num_members: 5,
      num_members_added: 5,
      error_message: `${message} (stopped after line 6)`,
    });
    expect(countRows(s, 'members')).toBe(5);
  });

  it('invalid UTF-8 half way through a batch, after the first chunk settled UTF-8: the rows before its line are imported too', async () => {
    const path = `${s.dir}/latin1.csv`;
    // 15,000 rows are more than the first read (256 KiB), which finds UTF-8.
    writeFileSync(path, Buffer.from(['email,first_name', ...rows(15_000), 'm\xfcller@x.org,M', 'z@x.org,Z'].join('\n'), 'latin1'));
    const failed = await runImport(await apiOver(), request(path, { batchSize: 4_000 }), quiet, () => undefined, { stopped: false }).then(
      () => undefined,
      (err: Error & { outcome?: ImportOutcome }) => err,
    );
    expect(failed?.message).toMatch(/latin1\.csv is not valid UTF-8 \(line 15002, byte \d+\): .* or name its encoding with --encoding/);
    expect(await getImport(1)).toMatchObject({ status: 'e', num_members: 15_000, num_members_added: 15_000 });
  });

  it('a file whose first chunk is not UTF-8 is read as Windows-1252, and says so; --encoding names another', async () => {
    const path = `${s.dir}/cp1252.csv`;
    writeFileSync(path, Buffer.from(['email,first_name', 'm\xfcller@x.org,M\xfcller \x80', 'z@x.org,Z'].join('\n'), 'latin1'));
    const notes: string[] = [];
    const outcome = await runImport(await apiOver(), request(path), quiet, (m) => notes.push(m), { stopped: false });
    expect([outcome.rowsSent, outcome.rejectedCount]).toEqual([2, 0]);
    expect(notes).toContain(`read ${path} as Windows-1252 (Latin-1) (it is not UTF-8)`);
    expect((await memberByEmail('m%C3%BCller%40x.org')).fields.first_name).toBe('Müller €');
    // ISO-8859-15 named: 0xA4 is the euro sign there (a currency sign in Latin-1).
    writeFileSync(path, Buffer.from('email,first_name\ne@x.org,\xa4\n', 'latin1'));
    await runImport(await apiOver(), request(path, { encoding: 'iso-8859-15' }), quiet, () => undefined, { stopped: false });
    expect((await memberByEmail('e%40x.org')).fields.first_name).toBe('€');
  });

  it('duplicate rows are told with their lines and the row imported, and written with the rejected rows to --errors-out', async () => {
    const path = `${s.dir}/dups.csv`;
    writeFileSync(
      path,
      ['email,first_name', 'a@x.org,A', 'b@x.org,B', 'bad,X', 'c@x.org,C', 'A@x.org,A2', 'c@x.org,C2', 'short', 'b@x.org,B2'].join('\n') +
        '\n',
    );
    const errorsOut = `${s.dir}/errors.csv`;
    const outcome = await runImport(await apiOver(), request(path, { batchSize: 3, errorsOut }), quiet, () => undefined, {
      stopped: false,
    });
    // Batches: lines 2-4, 5-7, 8-9. Line 6 repeats line 2 of the batch before; line 7 repeats line 5 of its own batch.
    expect(outcome.duplicates).toEqual([
      { line: 6, reason: 'duplicate of an earlier row, the one imported for this address' },
      { line: 7, reason: 'duplicate of line 5, the row imported for this address' },
      { line: 9, reason: 'duplicate of an earlier row, the one imported for this address' },
    ]);
    expect(outcome.duplicateCount).toBe(3);
    expect(outcome.rejected).toEqual([
      { line: 4, reason: '"bad" is not a valid e-mail address' },
      { line: 8, reason: 'has 1 columns; the header has 2' },
    ]);
    expect(outcome.rejectedCount).toBe(2);
    expect(outcome.imports[0]).toMatchObject({ status: 'o', num_members: 8, num_members_added: 3, num_duplicates: 3, num_errors: 2 });
    expect(readFileSync(errorsOut, 'utf8')).toBe(
      [
        'email,first_name,line,error',
        'bad,X,4,"""bad"" is not a valid e-mail address"',
        'A@x.org,A2,6,"duplicate of an earlier row, the one imported for this address"',
        'c@x.org,C2,7,"duplicate of line 5, the row imported for this address"',
        // A ragged row keeps exactly its cells, so the file re-imports as it was.
        'short,8,has 1 columns; the header has 2',
        'b@x.org,B2,9,"duplicate of an earlier row, the one imported for this address"',
        '',
      ].join('\n'),
    );
    // A dry run checks each batch alone: the duplicates within a batch.
    const dry = await runImport(await apiOver(), request(path, { batchSize: 3, dryRun: true }), quiet, () => undefined, { stopped: false });
    expect(dry.duplicates).toEqual([{ line: 7, reason: 'duplicate of line 5, the row imported for this address' }]);
    expect(dry.dryRun).toMatchObject({ duplicates: 1 });
  });

  it('a stop (Ctrl-C) sends no partial batch: the record ends in e on a batch boundary', async () => {
    const stop: { stopped: boolean; onStop?: () => void } = { stopped: false };
    const api = await apiOver((call) => {
      // Ctrl-C while the first batch is being applied; the second was sent with it
      // (two are in flight), the last row (line 8) is a partial batch.
      if (call.path.endsWith('/rows')) {
        stop.stopped = true;
        stop.onStop?.();
      }
      return undefined;
    });
    const outcome = await runImport(api, request(csv('seven.csv', rows(7)), { batchSize: 3 }), quiet, () => undefined, stop);
    expect(outcome.interrupted).toBe(true);
    expect(outcome.lastLine).toBe(7);
    expect(outcome.imports[0]).toMatchObject({
      status: 'e',
      num_members: 6,
      error_message: 'interrupted after line 7; resume with --resume',
    });
    expect(countRows(s, 'members')).toBe(6);
  });

  it('a stop while the next batch waits for the two in flight sends no more', async () => {
    const stop: { stopped: boolean; onStop?: () => void } = { stopped: false };
    let rowCalls = 0;
    const api = await apiOver(async (call) => {
      if (call.path.endsWith('/rows') && ++rowCalls === 1) {
        // The first batch takes a while: the second goes meanwhile, and the reader
        // fills the third, which waits for the first.
        await new Promise((r) => setTimeout(r, 200));
        stop.stopped = true;
        stop.onStop?.();
      }
      return undefined;
    });
    const outcome = await runImport(api, request(csv('eleven.csv', rows(11)), { batchSize: 3 }), quiet, () => undefined, stop);
    expect(rowCalls).toBe(2);
    expect(outcome).toMatchObject({ interrupted: true, lastLine: 7, rowsSent: 6 });
    expect(outcome.imports[0]).toMatchObject({ status: 'e', num_members: 6 });
  });

  it('a stop before the first batch was written leaves no record at all', async () => {
    const stop = { stopped: true };
    const outcome = await runImport(await apiOver(), request(csv('none.csv', rows(3))), quiet, () => undefined, stop);
    expect(outcome).toMatchObject({ interrupted: true, imports: [], rowsSent: 0 });
    expect(countRows(s, 'member_imports')).toBe(0);
  });
});

describe('the plain progress line (off a terminal)', () => {
  it('says what runs, how far, how fast, what is left and what was rejected', () => {
    const state = { rowsRead: 12_000, rowsSent: 10_000, rejected: 3, bytesRead: 500, totalBytes: 1_000 };
    expect(progressLine({ ...state, importId: 7 }, 0, 2_000)).toBe(
      'import 7, 12,000 rows read, 10,000 sent, 5,000 rows/s, 50%, ETA 2s, 3 rejected',
    );
    // Before its first batch an import has no id yet; it is not a dry run for that.
    expect(progressLine(state, 0, 2_000).startsWith('import, 12,000 rows read')).toBe(true);
    expect(progressLine({ ...state, dryRun: true, totalBytes: undefined }, 0, 4_000)).toBe(
      'dry run, 12,000 rows read, 10,000 sent, 2,500 rows/s, 3 rejected',
    );
  });
});

describe("openCsv (the CLI's CSV reader)", () => {
  /** Reads a whole file; a slow reader (as an import waiting for its batches) pauses now and then. */
  const read = async (content: string | Buffer, slow = false) => {
    const path = `${s.dir}/in.csv`;
    writeFileSync(path, content);
    const source = await openCsv(path);
    const records: [number, string[]][] = [];
    /** The bad rows (a record over the limit, a quote where none belongs), by line, with why. */
    const bad: [number, string][] = [];
    let error: unknown;
    try {
      for await (const r of source.records) {
        if (r.problem) bad.push([r.line, r.problem]);
        else records.push([r.line, r.values]);
        if (slow) await new Promise((resolve) => setTimeout(resolve, 2));
      }
    } catch (err) {
      error = err;
    }
    return { header: source.header, delimiter: source.delimiter, records, error, ...(bad.length ? { bad } : {}) };
  };

  it('numbers records by the line they start on, through blank lines and quoted newlines', async () => {
    const r = await read('\uFEFFemail;note\r\na@x.org;"two\r\nlines"\r\n\r\nb@x.org;"a ""quote"""\r\n');
    expect(r).toEqual({
      header: ['email', 'note'],
      delimiter: ';',
      records: [
        [2, ['a@x.org', 'two\r\nlines']],
        [5, ['b@x.org', 'a "quote"']],
      ],
      error: undefined,
    });
  });

  it('skips blank lines before the header, and counts them', async () => {
    const r = await read('\r\n\r\nemail\ta\r\n1@x.org\tA\r\n');
    expect(r).toMatchObject({ header: ['email', 'a'], delimiter: '\t', records: [[4, ['1@x.org', 'A']]] });
  });

  it('delivers every record before a broken one, then the error naming the line the quote opens on, whatever the timing', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => `r${i}@x.org,${i}`);
    const r = await read(['email,n', ...rows, 'broken@x.org,"unclosed', 'more', 'lines'].join('\n'), true);
    expect(r.records).toHaveLength(10);
    expect(r.records.at(-1)).toEqual([11, ['r9@x.org', '9']]);
    expect(r.error).toBeInstanceOf(CsvError);
    expect((r.error as Error).message).toBe(
      `${s.dir}/in.csv, line 12: the quoted field that opens on this line is not closed by the end of the file (a missing quote, or a truncated file?)`,
    );
  });

  it('an unclosed quote after a quoted field of several lines: the line where that quote opens', async () => {
    const r = await read('email,a,b\r\nx@x.org,"one\rtwo\r\nthree",ok\r\ny@x.org,"two\nlines","never\nclosed\n');
    expect(r.records).toEqual([[2, ['x@x.org', 'one\rtwo\r\nthree', 'ok']]]);
    expect((r.error as Error).message).toMatch(/, line 6: the quoted field that opens on this line is not closed/);
    // Over the limit, it is a bad row that runs to the end of the file, not an error that stops it.
    const big = await read(`email,a\nx@x.org,ok\ny@x.org,"${'x'.repeat(1_000_001)}\nz@x.org,never closed\n`);
    expect(big).toMatchObject({
      records: [[2, ['x@x.org', 'ok']]],
      error: undefined,
      bad: [
        [
          3,
          'is longer than 1,000,000 characters (1,000,032, to the end of the file): not imported (a quote opened in it and not closed where it should be?)',
        ],
      ],
    });
  });

  it('a record over 1,000,000 characters is a bad row, on a line of its own or through quoted line ends, and the records after it are read, over any chunking', async () => {
    for (const slow of [false, true]) {
      const long = 'y'.repeat(1_100_000);
      const r = await read(
        `email,a\nx@x.org,ok\nq@x.org,"${long}\r\nmore ""quoted"" text\n",end\nu@x.org,${long}\nlast@x.org,"fine\nvalue"\nend@x.org,ok`,
        slow,
      );
      expect(r).toMatchObject({
        records: [
          [2, ['x@x.org', 'ok']],
          [7, ['last@x.org', 'fine\nvalue']],
          [9, ['end@x.org', 'ok']],
        ],
        error: undefined,
        bad: [
          [3, 'is longer than 1,000,000 characters (1,100,037): not imported (a quote opened in it and not closed where it should be?)'],
          [6, 'is longer than 1,000,000 characters (1,100,008): not imported (a quote opened in it and not closed where it should be?)'],
        ],
      });
    }
  });

  it('every line end works in any mix: CRLF, LF and a lone CR', async () => {
    const r = await read(
      'email,first_name\r\na1@example.com,A\r\na2@example.com,B\na3@example.com,C\ra4@example.com,D\r\n\r\ra5@example.com,E\n',
    );
    expect(r).toEqual({
      header: ['email', 'first_name'],
      delimiter: ',',
      records: [
        [2, ['a1@example.com', 'A']],
        [3, ['a2@example.com', 'B']],
        [4, ['a3@example.com', 'C']],
        [5, ['a4@example.com', 'D']],
        [8, ['a5@example.com', 'E']],
      ],
      error: undefined,
    });
    // A file of lone CRs (old Mac exports), and the file.
    expect((await read('email;n\ra@x.org;1\rb@x.org;2\r')).records).toEqual([
      [2, ['a@x.org', '1']],
      [3, ['b@x.org', '2']],
    ]);
    // The same over several read chunks (256 KiB): a chunk ends inside a line, after its last CR.
    const crLines = Array.from({ length: 30_000 }, (_, i) => `m${i}@x.org;${i}`);
    const crFile = await read(`email;n\r${crLines.join('\r')}\r`);
    expect(crFile.records).toHaveLength(30_000);
    expect(crFile.records.every(([line, values], i) => line === i + 2 && values[0] === `m${i}@x.org` && values[1] === String(i))).toBe(
      true,
    );
    expect(
      (await read('email,first_name\r\na1@example.com,A\r\na2@example.com,B\na3@example.com,C\na4@example.com,D\r\n')).records,
    ).toEqual([
      [2, ['a1@example.com', 'A']],
      [3, ['a2@example.com', 'B']],
      [4, ['a3@example.com', 'C']],
      [5, ['a4@example.com', 'D']],
    ]);
  });

  it('mixed line ends across read chunks, before and after a quote hands the rest to csv-parse', async () => {
    // Lines end in turn in CRLF, LF and CR; a quoted value with line ends comes half way.
    const ends = ['\r\n', '\n', '\r'];
    const lines = ['email,note'];
    const expected: [number, string[]][] = [];
    let line = 2;
    for (let i = 0; i < 40_000; i++) {
      const note = i === 20_000 ? '"a ""quoted""\r\nnote\rof\nfour lines"' : `note${i}`;
      lines.push(`r${i}@x.org,${note}`);
      expected.push([line, [`r${i}@x.org`, i === 20_000 ? 'a "quoted"\r\nnote\rof\nfour lines' : `note${i}`]]);
      line += i === 20_000 ? 4 : 1;
    }
    const text = lines.map((l, i) => l + ends[i % 3]).join('');
    expect(text.length).toBeGreaterThan(3 * 256 * 1024);
    const r = await read(text);
    expect(r.error).toBeUndefined();
    expect(r.records).toEqual(expected);
    // A CRLF split by a chunk boundary (256 KiB) is one line end, on the fast path and in csv-parse.
    for (const quoted of [false, true]) {
      const head = quoted ? 'email,n\n"q@x.org",0\n' : 'email,n\n';
      const filler = 'f@x.org,' + 'x'.repeat(256 * 1024 - head.length - 'f@x.org,'.length - 1);
      const split = await read(`${head}${filler}\r\nlast@x.org,1\r\n`);
      expect(split.records.map(([l, v]) => [l, v[0]])).toEqual([
        ...(quoted ? [[2, 'q@x.org']] : []),
        [quoted ? 3 : 2, 'f@x.org'],
        [quoted ? 4 : 3, 'last@x.org'],
      ]);
    }
  });

  it('a stray quote inside an unquoted value, or text after a closing quote, is a bad row; quoted quotes are fine', async () => {
    const r = await read(
      'email,last_name,city\ngood1@example.com,Smith,Oslo\nbad1@example.com,O"Brien,Dublin\ngood3@example.com,"Quoted, Name",Bergen\n' +
        'bad2@example.com,5" tall,"x"\nbad3@example.com,"Cy"x,Bergen\ngood6@example.com,"O""Brien","5"" ""tall"""\n',
    );
    const fix = 'a value with a quote in it is written in quotes, the quote doubled ("O""Brien")';
    expect(r).toMatchObject({
      records: [
        [2, ['good1@example.com', 'Smith', 'Oslo']],
        [4, ['good3@example.com', 'Quoted, Name', 'Bergen']],
        [7, ['good6@example.com', 'O"Brien', '5" "tall"']],
      ],
      error: undefined,
      bad: [
        [3, `has a quote inside the unquoted value O"Brien: ${fix}`],
        [5, `has a quote inside the unquoted value 5" tall: ${fix}`],
        [6, `has text after the closing quote of the quoted value "Cy"x: ${fix}`],
      ],
    });
  });

  it('UTF-16 with a byte order mark, little or big endian, over read chunks: the same records as UTF-8', async () => {
    const lines = ['email,city', ...Array.from({ length: 20_000 }, (_, i) => `u${i}@x.org,Tromsø ${i} "€"`.replace(/"€"/, '€'))];
    const text = `${lines.join('\r\n')}\r\n`;
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    expect(le.length).toBeGreaterThan(2 * 256 * 1024);
    for (const bytes of [le, be]) {
      const r = await read(bytes);
      expect(r.error).toBeUndefined();
      expect(r.header).toEqual(['email', 'city']);
      expect(r.records).toHaveLength(20_000);
      expect(r.records[19_999]).toEqual([20_001, ['u19999@x.org', 'Tromsø 19999 €']]);
    }
  });

  it('a first chunk that is not UTF-8 is Windows-1252; invalid UTF-8 after a first chunk that is names its line and byte', async () => {
    const path = `${s.dir}/latin1.csv`;
    writeFileSync(path, Buffer.from('em\xfcil\na@x.org\nb\xfcr@x.org\n', 'latin1'));
    const detected = await openCsv(path);
    expect([detected.header, detected.encoding]).toEqual([['emüil'], { name: 'windows-1252', why: 'it is not UTF-8' }]);
    const prefix = `email\n${'a@x.org\n'.repeat(40_000)}`;
    writeFileSync(path, Buffer.concat([Buffer.from(prefix), Buffer.from('b\xfcr@x.org\n', 'latin1')]));
    const source = await openCsv(path);
    expect(source.encoding).toEqual({ name: 'utf-8' });
    let records = 0;
    await expect(
      (async () => {
        for await (const _ of source.records) records++;
      })(),
    ).rejects.toThrow(new RegExp(`latin1\\.csv is not valid UTF-8 \\(line 40002, byte ${prefix.length + 2}\\)`));
    expect(records).toBe(40_000);
  });

  it('invalid UTF-8 after the header: every record before its line first, lines counted with CR line ends too', async () => {
    const oslo = `Oslo${' '.repeat(300_000)}`;
    const r = await read(Buffer.from(`email,city\ra@x.org,${oslo}\r\nb@x.org,M\xfcnchen\rc@x.org,Rome\r`, 'latin1'));
    expect(r.records).toEqual([[2, ['a@x.org', oslo]]]);
    expect((r.error as Error).message).toMatch(new RegExp(`in\\.csv is not valid UTF-8 \\(line 3, byte ${35 + 300_000}\\)`));
    // A character split by a chunk boundary is not an error, and an invalid byte after it is found where it is.
    const ok = await read(
      Buffer.concat([Buffer.from(`email,city\na@x.org,${'x'.repeat(256 * 1024 - 20)}`), Buffer.from('ü\nb@x.org,ü\n')]),
    );
    expect(ok.error).toBeUndefined();
    expect(ok.records.map(([l, v]) => [l, v[0], v[1].slice(-1)])).toEqual([
      [2, 'a@x.org', 'ü'],
      [3, 'b@x.org', 'ü'],
    ]);
    // Only the file's first BOM is dropped: U+FEFF at the start of a later chunk is a character of a value.
    const head = `email,city\na@x.org,`;
    const bom = await read(`${head}${'x'.repeat(256 * 1024 - head.length)}\uFEFFkept\n`);
    expect(bom.records.map(([l, v]) => [l, v[1].slice(-5)])).toEqual([[2, '\uFEFFkept']]);
  });
});
