/**
 * The bulk path of streamed imports: CSV rows, batch offsets, the update of members
 * an import finds (one upsert per row), duplicates across batches and across
 * interleaved imports. Every scenario runs twice: with batches written on this
 * thread, and on the import writer's thread (the built CLI and `amsg serve`), and
 * the answers and stored rows must be the same.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { atD, countRows, createField, createGroups, ok } from './util.js';
import { localActor } from '../../src/service/accounts/accounts.js';
import { BATCH_WAIT_MS } from '../../src/service/imports/index.js';

describe.each([
  ['written here', false],
  ['written by the import writer thread', true],
])('streamed import rows, %s', (_, importWriter) => {
  let s: TestService;
  beforeEach(async () => {
    s = makeService(T0, { importWriter });
    // Every batch to the thread: until it has started, batches are written here.
    if (importWriter) await s.router.importWriter!.whenReady();
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' }); // 1
    await createField(s, { shortcut_name: 'birthday', field_type: 'date' }); // 2
    await createField(s, { shortcut_name: 'score', field_type: 'numeric' }); // 3
  });
  afterEach(() => s.close());

  const open = (extra: Record<string, unknown> = {}) =>
    ok(s, 'POST', '/1/members/imports', { body: extra }).then((r) => r.import_id as number);
  const send = (id: number, body: Record<string, unknown>) => s.call('POST', `/1/members/imports/${id}/rows`, { body });
  const csvRows = async (id: number, columns: string[], rows: string[][], extra: Record<string, unknown> = {}) => {
    const res = await send(id, { columns, rows, ...extra });
    if (res.status !== 200) throw new Error(`rows answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const getImport = (id: number) => ok(s, 'GET', `/1/members/imports/${id}`);
  const stored = () =>
    s.db
      .prepare('SELECT member_id, email, member_status_id, field_values, sms_phone_number, deleted_at FROM members ORDER BY member_id')
      .all();
  const groupsOf = (memberId: number) =>
    (
      s.db
        .prepare(
          `SELECT g.group_name FROM group_members gm JOIN member_groups g ON g.member_group_id = gm.member_group_id
            WHERE gm.member_id = ? ORDER BY g.group_name`,
        )
        .all(memberId) as { group_name: string }[]
    ).map((g) => g.group_name);
  const everything = () =>
    JSON.stringify(
      ['members', 'member_groups', 'group_members', 'member_imports', 'import_ledger'].map((t) => s.db.prepare(`SELECT * FROM ${t}`).all()),
    );

  it('CSV rows: values as text, trimmed; groups split on ; and |, created when missing; phone_number; each bad row told by position', async () => {
    const id = await open();
    const answer = await csvRows(
      id,
      ['email', 'first_name', 'birthday', 'score', 'groups', 'phone_number'],
      [
        [' Ada@Example.com ', ' Ada ', '1990-02-03', '7.5', 'Gold; Silver|Bronze', '+4791234567'],
        ['bob@example.com', 'Bob', '', '', '', ''],
        ['not-an-address', 'X', '', '', '', ''],
        ['cy@example.com', 'Cy', '1990-02-30', '', '', ''],
        ['dee@example.com', 'Dee'],
        ['eve@example.com', 'Eve', '', 'ten', 'Gold', ''],
      ],
    );
    expect(answer).toEqual({
      import_id: id,
      received: 6,
      num_members: 6,
      added: 2,
      updated: 0,
      duplicates: 0,
      skipped: 4,
      errors: [
        { index: 2, email: 'not-an-address', error: '"not-an-address" is not a valid e-mail address' },
        { index: 3, email: 'cy@example.com', error: expect.stringMatching(/^birthday: /) },
        { index: 4, email: null, error: 'has 2 values; there are 6 columns' },
        { index: 5, email: 'eve@example.com', error: expect.stringMatching(/^score: /) },
      ],
      duplicate_rows: [],
    });
    expect(stored()).toEqual([
      {
        member_id: 1,
        email: 'ada@example.com',
        member_status_id: 'a',
        field_values: '{"1":"Ada","2":"1990-02-03","3":7.5}',
        sms_phone_number: '+4791234567',
        deleted_at: null,
      },
      // Empty cells are no value at all for a new member.
      {
        member_id: 2,
        email: 'bob@example.com',
        member_status_id: 'a',
        field_values: '{"1":"Bob"}',
        sms_phone_number: null,
        deleted_at: null,
      },
    ]);
    expect(groupsOf(1)).toEqual(['Bronze', 'Gold', 'Silver']);
    expect(groupsOf(2)).toEqual([]);
    // Eve's row named Gold too, but was refused: Gold has Ada alone.
    expect(countRows(s, 'member_groups')).toBe(3);
    expect(await getImport(id)).toMatchObject({ num_members: 6, num_members_added: 2, num_skipped: 4, num_errors: 4 });
  });

  it('an empty cell leaves a value as it is when the member is updated; the rest are merged', async () => {
    const first = await open();
    await csvRows(first, ['email', 'first_name', 'score'], [['ada@example.com', 'Ada', '1']]);
    const second = await open();
    expect(await csvRows(second, ['email', 'first_name', 'score'], [['ADA@example.com', '', '2']])).toMatchObject({ added: 0, updated: 1 });
    expect(stored()).toMatchObject([{ member_id: 1, field_values: '{"1":"Ada","3":2}' }]);
    expect(await ok(s, 'GET', `/1/members/imports/${second}/members`)).toEqual([
      { member_id: 1, change_type: 'u', member_status_id: 'a', email: 'ada@example.com' },
    ]);
  });

  it('columns that name no field, no email column, or one field twice: a 400 naming each, and nothing written', async () => {
    const id = await open();
    const before = everything();
    const refused = await send(id, { columns: ['E-mail', 'first_name', 'shoe_size', 'First_Name'], rows: [['a@b.org', 'A', '4', 'B']] });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error:
        'columns: "E-mail" is not a field (nor email, groups or phone_number); "shoe_size" is not a field (nor email, groups or phone_number); ' +
        '"First_Name" is given twice; there is no email column',
      field: 'columns',
    });
    expect((await send(id, { columns: ['email'] })).body).toEqual({ error: 'rows: is required (or give members)' });
    expect((await send(id, { rows: [['a@b.org']] })).body).toEqual({ error: 'columns: is required (or give members)' });
    expect((await send(id, { members: [{ email: 'a@b.org' }], columns: ['email'], rows: [] })).body).toEqual({
      error: 'members: give either members or columns and rows, not both',
    });
    expect((await send(id, { columns: ['email'], rows: [['a@b.org', 7]] })).body).toEqual({
      error: 'rows[0][1]: must be a string, got number 7',
      field: 'rows[0][1]',
    });
    expect(everything()).toBe(before);
  });

  it('offsets: a batch that does not follow the rows the import has is a 409 that writes nothing', async () => {
    const id = await open();
    await csvRows(id, ['email'], [['a@b.org'], ['b@b.org']], { offset: 0 });
    const before = everything();
    const res = await send(id, { columns: ['email'], rows: [['c@b.org']], offset: 0 });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: `offset: this batch follows row 0, but import ${id} has 2 rows`,
      field: 'offset',
      num_members: 2,
      expected_offset: 2,
    });
    expect(everything()).toBe(before);
    expect(await csvRows(id, ['email'], [['c@b.org']], { offset: 2, rejected: 1 })).toMatchObject({ num_members: 4, added: 1, skipped: 1 });
  });

  it('a batch that arrives before the one it follows waits for it, and both are applied in file order', async () => {
    const id = await open();
    const later = send(id, { columns: ['email'], rows: [['c@b.org'], ['d@b.org']], offset: 2 });
    const earlier = send(id, { columns: ['email'], rows: [['a@b.org'], ['b@b.org']], offset: 0 });
    expect((await earlier).body).toMatchObject({ num_members: 2, added: 2 });
    expect((await later).body).toMatchObject({ num_members: 4, added: 2 });
    expect((stored() as { email: string }[]).map((m) => m.email)).toEqual(['a@b.org', 'b@b.org', 'c@b.org', 'd@b.org']);
  });

  /** Account 2, a second account in the same file (not a sub-account of 1), acting as its owner. */
  const secondAccount = () => {
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', '2026-01-01T00:00:00.000000')`).run();
    s.db
      .prepare(
        `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at)
         VALUES (2, 'owner@other.org', 'owner', 1, 1, '2026-01-01T00:00:00.000000')`,
      )
      .run();
    const actor = localActor(s.db, 2);
    return (id: number, body: Record<string, unknown>) =>
      Promise.resolve(
        s.router.handle({ method: 'POST', path: `/2/members/imports/${id}/rows`, query: {}, body: JSON.stringify(body), actor }),
      ).then((r) => ({ status: r.status, body: r.body }));
  };
  /** Whether a promise has settled by the time the event loop has run its pending work (and a writer thread could answer). */
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    await new Promise((r) => setTimeout(r, 100));
    return done;
  };

  it("another account's batch for this import's id is a 404 that leaves the import's waiting batch alone", async () => {
    const sendAsOther = secondAccount();
    const id = await open();
    await csvRows(id, ['email'], [['a@b.org'], ['b@b.org']], { offset: 0 });
    // The third batch arrives before the second and waits for it.
    const third = send(id, { columns: ['email'], rows: [['e@b.org'], ['f@b.org']], offset: 4 });
    const notFound = { status: 404, body: { error: `import ${id} not found` } };
    // Account 2 names the import's id: at the offset the import expects next, behind it, and at the waiting batch's.
    expect(await sendAsOther(id, { columns: ['email'], rows: [['x@b.org']], offset: 2 })).toEqual(notFound);
    expect(await sendAsOther(id, { columns: ['email'], rows: [['x@b.org']], offset: 0 })).toEqual(notFound);
    const atThird = sendAsOther(id, { columns: ['email'], rows: [['x@b.org']], offset: 4 });
    expect(await settled(atThird)).toBe(true);
    expect(await atThird).toEqual(notFound);
    expect(await settled(third)).toBe(false);
    // The second batch comes: both are applied, in file order.
    expect(await csvRows(id, ['email'], [['c@b.org'], ['d@b.org']], { offset: 2 })).toMatchObject({ num_members: 4, added: 2 });
    expect(await third).toMatchObject({ status: 200, body: { num_members: 6, added: 2 } });
    expect((stored() as { email: string }[]).map((m) => m.email)).toEqual([
      'a@b.org',
      'b@b.org',
      'c@b.org',
      'd@b.org',
      'e@b.org',
      'f@b.org',
    ]);
    expect(await getImport(id)).toMatchObject({ status: 'p', num_members: 6, num_members_added: 6 });
  });

  it("another account cannot finish this import (a 404), and the import's waiting batch still waits", async () => {
    secondAccount();
    const id = await open();
    const second = send(id, { columns: ['email'], rows: [['c@b.org']], offset: 2 });
    const finish = await s.router.handle({
      method: 'POST',
      path: `/2/members/imports/${id}/finish`,
      query: {},
      body: JSON.stringify({ error: 'stop' }),
      actor: localActor(s.db, 2),
    });
    expect(finish).toMatchObject({ status: 404, body: { error: `import ${id} not found` } });
    expect(await settled(second)).toBe(false);
    await csvRows(id, ['email'], [['a@b.org'], ['b@b.org']], { offset: 0 });
    expect(await second).toMatchObject({ status: 200, body: { num_members: 3, added: 1 } });
  });

  it('a batch sent again after it was applied is answered as it was, not written again, and leaves the batch waiting behind it alone', async () => {
    const id = await open();
    const first = await csvRows(id, ['email'], [['a@b.org'], ['b@b.org'], ['a@b.org']], { offset: 0 });
    expect(first).toMatchObject({ num_members: 3, added: 2, duplicates: 1 });
    const third = send(id, { columns: ['email'], rows: [['e@b.org']], offset: 5 });
    // A retry whose first try was applied (its answer lost): the same answer, nothing written.
    expect(await send(id, { columns: ['email'], rows: [['a@b.org'], ['b@b.org'], ['a@b.org']], offset: 0 })).toEqual({
      status: 200,
      body: first,
    });
    expect(await getImport(id)).toMatchObject({ num_members: 3, num_members_added: 2, num_duplicates: 1 });
    // Another batch at that offset (other rows than the one applied there) is refused as before.
    expect(await send(id, { columns: ['email'], rows: [['a@b.org'], ['b@b.org']], offset: 0 })).toEqual({
      status: 409,
      body: { error: `offset: this batch follows row 0, but import ${id} has 3 rows`, field: 'offset', num_members: 3, expected_offset: 3 },
    });
    expect(await settled(third)).toBe(false);
    expect(await csvRows(id, ['email'], [['c@b.org'], ['d@b.org']], { offset: 3 })).toMatchObject({ num_members: 5 });
    expect(await third).toMatchObject({ status: 200, body: { num_members: 6, added: 1 } });
    // Only the last few answers are kept, and none once the import is finished.
    const kept = () =>
      s.db.prepare('SELECT batch_offset FROM import_batch_answers WHERE import_id = ? ORDER BY batch_offset').pluck().all(id);
    expect(kept()).toEqual([0, 3, 5]);
    await ok(s, 'POST', `/1/members/imports/${id}/finish`, { body: {} });
    expect(kept()).toEqual([]);
  });

  it('a batch left waiting for one that failed is refused once the import is ended', async () => {
    const id = await open();
    const waiting = send(id, { columns: ['email'], rows: [['c@b.org']], offset: 5 });
    await ok(s, 'POST', `/1/members/imports/${id}/finish`, { body: { error: 'the batch before it failed' } });
    const res = await waiting;
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ field: 'offset', num_members: 0 });
    expect(countRows(s, 'members')).toBe(0);
    expect(await getImport(id)).toMatchObject({ status: 'e', error_message: 'the batch before it failed' });
  });

  it('a file imported again updates every member once, brings archived ones back, and counts an address seen in an earlier batch as a duplicate', async () => {
    const [gold] = await createGroups(s, 'Gold');
    const columns = ['email', 'first_name', 'groups'];
    const first = await open();
    await csvRows(first, columns, [
      ['a@b.org', 'A', ''],
      ['b@b.org', 'B', 'Gold'],
      ['c@b.org', 'C', ''],
    ]);
    expect(await ok(s, 'DELETE', '/1/members/3')).toBe(true);
    const again = await open();
    // The version the member pages keep their anchors under (024-member-order): c's
    // return moves positions, so it must change; the other updates and an add must not.
    const version = () => s.db.prepare('SELECT version FROM member_order WHERE account_id = 1').pluck().get();
    const before = version();
    // Batch 1 updates a, b and c (c comes back); batch 2 names b again: a duplicate, its value not taken.
    expect(
      await csvRows(again, columns, [
        ['a@b.org', 'A2', 'Gold'],
        ['b@b.org', 'B2', 'Gold'],
        ['c@b.org', 'C2', ''],
      ]),
    ).toMatchObject({
      added: 0,
      updated: 3,
      duplicates: 0,
    });
    const afterRestore = version();
    expect(afterRestore).not.toBe(before);
    expect(
      await csvRows(again, columns, [
        ['b@b.org', 'B3', ''],
        ['d@b.org', 'D', 'Gold'],
      ]),
    ).toMatchObject({
      added: 1,
      updated: 0,
      duplicates: 1,
    });
    expect(version()).toBe(afterRestore);
    expect(stored()).toMatchObject([
      { member_id: 1, field_values: '{"1":"A2"}', deleted_at: null },
      { member_id: 2, field_values: '{"1":"B2"}', deleted_at: null },
      { member_id: 3, field_values: '{"1":"C2"}', deleted_at: null },
      { member_id: 4, field_values: '{"1":"D"}', deleted_at: null },
    ]);
    expect(await getImport(again)).toMatchObject({
      num_members: 5,
      num_members_added: 1,
      num_members_updated: 3,
      num_duplicates: 1,
      num_added_by_group: [{ member_group_id: gold, num_added: 2 }],
    });
    expect(await ok(s, 'GET', `/1/members/imports/${again}/members`)).toEqual([
      { member_id: 1, change_type: 'u', member_status_id: 'a', email: 'a@b.org' },
      { member_id: 2, change_type: 'u', member_status_id: 'a', email: 'b@b.org' },
      { member_id: 3, change_type: 'u', member_status_id: 'a', email: 'c@b.org' },
      { member_id: 4, change_type: 'a', member_status_id: 'a', email: 'd@b.org' },
    ]);
    expect(await ok(s, 'GET', `/1/members/imports/${again}/members`, { query: { added_to_groups: 'true' } })).toEqual([
      { member_id: 1, change_type: 'u', member_status_id: 'a', email: 'a@b.org' },
      { member_id: 4, change_type: 'a', member_status_id: 'a', email: 'd@b.org' },
    ]);
  });

  it('two imports in turns: a member the earlier one already wrote is its duplicate, though the later one wrote it since', async () => {
    const a = await open();
    const b = await open();
    await csvRows(a, ['email', 'first_name'], [['x@b.org', 'A1']]);
    await csvRows(b, ['email', 'first_name'], [['x@b.org', 'B1']]);
    expect(
      await csvRows(
        a,
        ['email', 'first_name'],
        [
          ['x@b.org', 'A2'],
          ['y@b.org', 'A3'],
        ],
      ),
    ).toMatchObject({
      added: 1,
      updated: 0,
      duplicates: 1,
    });
    expect(
      await csvRows(
        b,
        ['email', 'first_name'],
        [
          ['x@b.org', 'B2'],
          ['y@b.org', 'B3'],
        ],
      ),
    ).toMatchObject({
      added: 0,
      updated: 1,
      duplicates: 1,
    });
    expect(stored()).toMatchObject([
      { email: 'x@b.org', field_values: '{"1":"B1"}' },
      { email: 'y@b.org', field_values: '{"1":"B3"}' },
    ]);
  });

  it('each dropped duplicate row is told by position, with the row it repeats (null: a row of an earlier batch)', async () => {
    const columns = ['email', 'first_name', 'score'];
    const id = await open();
    // New members (the insert path); a refused row names an address, but takes nothing.
    const first = await csvRows(id, columns, [
      ['a@b.org', 'A', '1'],
      ['b@b.org', 'B', '2'],
      ['x@b.org', 'X', 'ten'],
      [' A@B.org ', 'A again', '3'],
      ['x@b.org', 'X again', '4'],
      ['b@b.org', 'B again', '5'],
      ['a@b.org', 'A thrice', '6'],
    ]);
    expect(first).toMatchObject({ added: 3, duplicates: 3, skipped: 1 });
    expect(first.duplicate_rows).toEqual([
      { index: 3, email: 'a@b.org', duplicate_of: 0 },
      { index: 5, email: 'b@b.org', duplicate_of: 1 },
      { index: 6, email: 'a@b.org', duplicate_of: 0 },
    ]);
    // A later batch: an address of an earlier batch, and one twice in this batch.
    const second = await csvRows(id, columns, [
      ['c@b.org', 'C', '7'],
      ['b@b.org', 'B later', '8'],
      ['c@b.org', 'C again', '9'],
    ]);
    expect(second).toMatchObject({ added: 1, duplicates: 2 });
    expect(second.duplicate_rows).toEqual([
      { index: 1, email: 'b@b.org', duplicate_of: null },
      { index: 2, email: 'c@b.org', duplicate_of: 0 },
    ]);
    expect((stored() as { email: string; field_values: string }[]).map((m) => [m.email, m.field_values])).toEqual([
      ['a@b.org', '{"1":"A","3":1}'],
      ['b@b.org', '{"1":"B","3":2}'],
      ['x@b.org', '{"1":"X again","3":4}'],
      ['c@b.org', '{"1":"C","3":7}'],
    ]);
    expect(await getImport(id)).toMatchObject({ num_members: 10, num_duplicates: 5, num_errors: 1 });
  });

  it('duplicate rows are told the same on the update path, the decided path (an empty cell) and across slices of a large batch', async () => {
    const columns = ['email', 'first_name', 'score'];
    const setup = await open();
    await csvRows(setup, columns, [
      ['a@b.org', 'A', '1'],
      ['b@b.org', 'B', '2'],
    ]);
    // Existing members: the upsert path.
    const again = await open();
    expect(
      (
        await csvRows(again, columns, [
          ['a@b.org', 'A2', '1'],
          ['b@b.org', 'B2', '2'],
          ['a@b.org', 'A3', '3'],
        ])
      ).duplicate_rows,
    ).toEqual([{ index: 2, email: 'a@b.org', duplicate_of: 0 }]);
    expect((await csvRows(again, columns, [['b@b.org', 'B3', '3']])).duplicate_rows).toEqual([
      { index: 0, email: 'b@b.org', duplicate_of: null },
    ]);
    // An empty cell is decided against the member, after a lookup.
    const partial = await open();
    expect(
      (
        await csvRows(partial, columns, [
          ['n@b.org', 'N', ''],
          ['a@b.org', '', '5'],
          ['n@b.org', 'N2', ''],
          ['a@b.org', 'A4', ''],
        ])
      ).duplicate_rows,
    ).toEqual([
      { index: 2, email: 'n@b.org', duplicate_of: 0 },
      { index: 3, email: 'a@b.org', duplicate_of: 1 },
    ]);
    expect((await csvRows(partial, columns, [['n@b.org', '', '1']])).duplicate_rows).toEqual([
      { index: 0, email: 'n@b.org', duplicate_of: null },
    ]);
    // 1,200 rows: the writer thread takes them in slices of 500; row 1,100 repeats row 10.
    const big = await open();
    const rows = Array.from({ length: 1_200 }, (_, i) => [`big${i}@b.org`, `B${i}`, String(i)]);
    rows[1_100] = ['big10@b.org', 'again', '0'];
    const answer = await csvRows(big, columns, rows);
    expect(answer).toMatchObject({ added: 1_199, duplicates: 1 });
    expect(answer.duplicate_rows).toEqual([{ index: 1_100, email: 'big10@b.org', duplicate_of: 10 }]);
  });

  it('a dry run tells the duplicate rows too', async () => {
    const res = await ok(s, 'POST', '/1/members/imports/validate', {
      body: { columns: ['email'], rows: [['a@b.org'], ['b@b.org'], ['A@b.org']] },
    });
    expect(res).toEqual({
      received: 3,
      added: 2,
      updated: 0,
      duplicates: 1,
      skipped: 0,
      errors: [],
      duplicate_rows: [{ index: 2, email: 'a@b.org', duplicate_of: 0 }],
    });
  });

  it('memberships made with the member have no time of their own: the member export says member_since', async () => {
    const [gold] = await createGroups(s, 'Gold');
    const id = await open({ group_ids: [gold] });
    await csvRows(id, ['email'], [['a@b.org']]);
    s.clock.set('2026-05-06T07:08:09.000Z');
    const later = await open({ group_ids: [gold] });
    await csvRows(later, ['email', 'groups'], [['a@b.org', 'Silver']]);
    expect(s.db.prepare('SELECT member_group_id, added_at FROM group_members ORDER BY member_group_id').all()).toEqual([
      { member_group_id: gold, added_at: null },
      { member_group_id: gold + 1, added_at: '2026-05-06T07:08:09.000000' },
    ]);
    const exp = await ok(s, 'POST', '/1/exports/members/1');
    const { unzipSync, strFromU8 } = await import('fflate');
    const res = await s.router.handle({ method: 'GET', path: `/1/exports/${exp.export_id}/download`, query: {}, actor: s.actor });
    const zip = unzipSync(new Uint8Array(res.raw!.data as Buffer));
    expect(JSON.parse(strFromU8(zip['groups.json']))).toEqual([
      { member_group_id: gold, group_name: 'Gold', added_at: atD(T0) },
      { member_group_id: gold + 1, group_name: 'Silver', added_at: '@D:2026-05-06T07:08:09' },
    ]);
  });
});

describe('the import writer thread while it starts', () => {
  it('batches that arrive before it has started are written here, the rest by it, in file order, and the import is the same', async () => {
    const s = makeService(T0, { importWriter: true });
    try {
      const writer = s.router.importWriter!;
      await createGroups(s, 'Gold');
      // Opening the import starts the thread; the first batch comes before it could have.
      const id = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id as number;
      const send = (rows: string[][], offset: number) =>
        ok(s, 'POST', `/1/members/imports/${id}/rows`, { body: { columns: ['email', 'groups'], rows, offset } });
      expect(
        await send(
          [
            ['a@b.org', 'Gold'],
            ['b@b.org', ''],
            ['a@b.org', 'Gold'],
          ],
          0,
        ),
      ).toMatchObject({ num_members: 3, added: 2, duplicates: 1 });
      expect(writer.batchesSent).toBe(0);
      await writer.whenReady();
      // Two in flight, as the CLI sends them: the thread takes both, in order.
      const [second, third] = await Promise.all([
        send(
          [
            ['c@b.org', 'Gold'],
            ['b@b.org', 'Gold'],
          ],
          3,
        ),
        send([['d@b.org', 'New']], 5),
      ]);
      expect(writer.batchesSent).toBe(2);
      // b@b.org is this import's already (batch 1): a duplicate, whichever connection wrote that batch.
      expect(second).toMatchObject({ num_members: 5, added: 1, updated: 0, duplicates: 1 });
      expect(third).toMatchObject({ num_members: 6, added: 1 });
      expect(await ok(s, 'POST', `/1/members/imports/${id}/finish`, { body: {} })).toMatchObject({
        status: 'o',
        num_members: 6,
        num_members_added: 4,
        num_members_updated: 0,
        num_duplicates: 2,
      });
      expect(s.db.prepare('SELECT email FROM members ORDER BY member_id').pluck().all()).toEqual([
        'a@b.org',
        'b@b.org',
        'c@b.org',
        'd@b.org',
      ]);
      const gold = s.db.prepare(
        "SELECT m.email FROM group_members gm JOIN members m USING (member_id) JOIN member_groups g USING (member_group_id) WHERE g.group_name = 'Gold' ORDER BY 1",
      );
      expect(gold.pluck().all()).toEqual(['a@b.org', 'c@b.org']);
      // Kept counts agree with the rows, whichever connection wrote them.
      expect((await ok(s, 'GET', '/1/members', { query: { count: 'true' } })) as unknown).toBe(4);
    } finally {
      s.close();
    }
  });
});

describe('a batch sent ahead of its offset', () => {
  it(`waits ${BATCH_WAIT_MS / 1000} s at most for the batch it follows, then is a 409 that names the offset the import expects`, async () => {
    const s = makeService();
    try {
      const id = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id as number;
      const send = (body: Record<string, unknown>) => s.call('POST', `/1/members/imports/${id}/rows`, { body });
      expect((await send({ columns: ['email'], rows: [['a@b.org'], ['b@b.org']], offset: 0 })).status).toBe(200);
      const started = Date.now();
      const res = await send({ columns: ['email'], rows: [['e@b.org']], offset: 4 });
      const waited = Date.now() - started;
      expect(res).toEqual({
        status: 409,
        body: {
          error: `offset: import ${id} expects the batch at row 2 next; the batch at row 4 waited ${BATCH_WAIT_MS / 1000} s for it and is not applied`,
          field: 'offset',
          expected_offset: 2,
          num_members: 2,
        },
      });
      expect(waited).toBeGreaterThanOrEqual(BATCH_WAIT_MS - 50);
      expect(waited).toBeLessThan(BATCH_WAIT_MS + 2_000);
      expect(countRows(s, 'members')).toBe(2);
      // The import goes on from where it is.
      expect((await send({ columns: ['email'], rows: [['c@b.org']], offset: 2 })).body).toMatchObject({ num_members: 3, added: 1 });
    } finally {
      s.close();
    }
  });
});

describe('the members_status index (partial: members who are not active)', () => {
  it('a status move for a rare status reads it; an active member has no entry', async () => {
    const s = makeService();
    try {
      const { statusIs } = await import('../../src/service/audience/members.js');
      const plan = (sql: string) =>
        (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('; ');
      // The form of a status move (members.ts setStatusWhere).
      expect(
        plan(
          `UPDATE members SET member_status_id = 'a' WHERE account_id = 1 AND member_status_id <> 'a' AND (deleted_at IS NULL AND ${statusIs('o')})`,
        ),
      ).toBe('SEARCH members USING INDEX members_status (account_id=? AND member_status_id=?)');
      expect(statusIs('a')).toBe("member_status_id = 'a'");
      expect(() => statusIs('z' as never)).toThrow('not a member status: z');
    } finally {
      s.close();
    }
  });
});
