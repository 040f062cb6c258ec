import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseCsv } from 'csv-parse/sync';
import { strFromU8, unzipSync } from 'fflate';
import { makeService, T0, type TestService } from '../helpers.js';
import { addMember, countRows, createField, createGroups, expectFieldError, ok, setStatus } from './util.js';
import { csvField } from '../../src/service/exports.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const DAY = 86_400_000;
const ISO0 = '2026-03-04T05:06:07.000000+00:00';
const BASE = ['email', 'member_id', 'member_since', 'plaintext_preferred', 'bounce_count', 'status_name', 'last_modified_at'];

/** GET …/download through the route table: status, headers and the whole body. */
async function download(id: number) {
  const res = await s.router.handle({ method: 'GET', path: `/1/exports/${id}/download`, query: {}, actor: s.actor });
  if (!res.raw) return { status: res.status, body: res.body as any, contentType: undefined, filename: undefined, bytes: Buffer.alloc(0) };
  const chunks: Buffer[] = [];
  const data = res.raw.data;
  if (typeof data === 'string' || Buffer.isBuffer(data)) chunks.push(Buffer.from(data));
  else for await (const c of data as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(c));
  return {
    status: res.status,
    body: undefined,
    contentType: res.raw.contentType,
    filename: res.raw.filename,
    bytes: Buffer.concat(chunks),
  };
}

async function csvOf(id: number): Promise<string[][]> {
  const d = await download(id);
  expect(d.status).toBe(200);
  expect(d.contentType).toBe('text/csv; charset=utf-8');
  return parseCsv(d.bytes.toString('utf8'), { relax_column_count: false }) as string[][];
}

async function createExport(criteria?: Record<string, unknown>, user_id = 'owner@localhost'): Promise<number> {
  const body = await ok(s, 'POST', '/1/exports', { body: criteria === undefined ? { user_id } : { user_id, criteria } });
  expect(Object.keys(body)).toEqual(['export_id']);
  return body.export_id;
}

/** member_id column of an export's CSV. */
async function exportedIds(id: number): Promise<number[]> {
  const [header, ...rows] = await csvOf(id);
  const at = header.indexOf('member_id');
  return rows.map((r) => Number(r[at]));
}

describe('POST /{account_id}/exports and the CSV download', () => {
  it('answers the columns in the spec order: base, fields in column order, sms in spec order', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text', column_order: 2 });
    await createField(s, { shortcut_name: 'first_name', field_type: 'text', column_order: 1 });
    await addMember(s, 'ada@x.org', { fields: { first_name: 'Ada', city: 'London' }, phone_number: '+4791234567' });
    const id = await createExport({
      sms: { fields: ['region_code', 'phone_number', 'transactional_status', 'promotional_status'] },
    });
    const rows = await csvOf(id);
    expect(rows[0]).toEqual([
      ...BASE,
      'first_name',
      'city',
      'sms_phone_number',
      'promotional_status',
      'transactional_status',
      'region_code',
    ]);
    expect(rows[1]).toEqual(['ada@x.org', '1', ISO0, 'false', '0', 'active', ISO0, 'Ada', 'London', '+4791234567', 'o', 'a', 'NO']);
    expect(rows).toHaveLength(2);
  });

  it('answers the export record in the spec shape, ISO 8601 with +00:00', async () => {
    const [g] = await createGroups(s, 'News');
    const id = await createExport({ groups: [g], member_status_ids: ['a', 'o'], sms: { fields: ['phone_number'] } }, 'Boss@X.org');
    expect(await ok(s, 'GET', `/1/exports/${id}`)).toEqual({
      export_id: id,
      account_id: 1,
      export_name: `audience_export_${id}`,
      export_type: 'a',
      status: 'o',
      user_id: 'Boss@X.org',
      created_at: ISO0,
      completed_at: ISO0,
      criteria: {
        groups: [g],
        segments: null,
        subscriptions: null,
        member_ids: null,
        member_status_ids: ['a', 'o'],
        include_fields: true,
        mfv_delimiter: ',',
        sms: { fields: ['phone_number'] },
      },
    });
    const d = await download(id);
    expect(d.filename).toBe(`audience_export_${id}.csv`);
  });

  it('exports the union of groups and member_ids, each member once, in member id order', async () => {
    const [g1, g2] = await createGroups(s, 'One', 'Two');
    const a = await addMember(s, 'a@x.org', { group_ids: [g1] });
    const b = await addMember(s, 'b@x.org', { group_ids: [g1, g2] });
    const c = await addMember(s, 'c@x.org', { group_ids: [g2] });
    const d = await addMember(s, 'd@x.org');
    await addMember(s, 'e@x.org');
    expect(await exportedIds(await createExport({ groups: [g1] }))).toEqual([a, b]);
    expect(await exportedIds(await createExport({ groups: [g2, g1], member_ids: [d, b, d] }))).toEqual([a, b, c, d]);
    expect(await exportedIds(await createExport({ member_ids: [c] }))).toEqual([c]);
    const stored = await ok(s, 'GET', '/1/exports/2');
    expect(stored.criteria.groups).toEqual([g2, g1]);
    expect(stored.criteria.member_ids).toEqual([d, b]);
  });

  it('exports the whole audience when no source is given, nothing for empty lists', async () => {
    await addMember(s, 'a@x.org');
    await addMember(s, 'b@x.org');
    expect(await exportedIds(await createExport())).toEqual([1, 2]);
    expect(await exportedIds(await createExport({ groups: null, member_ids: null }))).toEqual([1, 2]);
    expect(await exportedIds(await createExport({ groups: [], member_ids: [] }))).toEqual([]);
    expect((await csvOf(3))[0]).toEqual(BASE);
  });

  it('filters by member_status_ids (active only by default) and leaves archived members out', async () => {
    const [g] = await createGroups(s, 'G');
    const ids = [];
    for (const e of ['a@x.org', 'o@x.org', 'e@x.org', 'gone@x.org']) ids.push(await addMember(s, e, { group_ids: [g] }));
    await setStatus(s, [ids[1]], 'o');
    await setStatus(s, [ids[2]], 'e');
    expect(await ok(s, 'DELETE', `/1/members/${ids[3]}`)).toBe(true);
    expect(await exportedIds(await createExport({ groups: [g] }))).toEqual([ids[0]]);
    expect(await exportedIds(await createExport({ groups: [g], member_status_ids: ['o', 'e'] }))).toEqual([ids[1], ids[2]]);
    const all = await csvOf(await createExport({ member_ids: ids, member_status_ids: ['a', 'o', 'e'] }));
    expect(all.slice(1).map((r) => [r[0], r[5]])).toEqual([
      ['a@x.org', 'active'],
      ['o@x.org', 'opt-out'],
      ['e@x.org', 'error'],
    ]);
  });

  it('include_fields: true for every live field, a list for some (in column order), [] for none', async () => {
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    await createField(s, { shortcut_name: 'score', field_type: 'numeric' });
    await createField(s, { shortcut_name: 'vip', field_type: 'boolean' });
    await createField(s, { shortcut_name: 'birthday', field_type: 'date' });
    await addMember(s, 'a@x.org', { fields: { first_name: 'Ann', score: 9.5, vip: true, birthday: '1990-01-02' } });
    await addMember(s, 'b@x.org', { fields: { score: 10, vip: false } });
    const all = await csvOf(await createExport({ include_fields: true }));
    expect(all[0].slice(7)).toEqual(['first_name', 'score', 'vip', 'birthday']);
    expect(all[1].slice(7)).toEqual(['Ann', '9.5', 'true', '1990-01-02']);
    expect(all[2].slice(7)).toEqual(['', '10', 'false', '']);
    const some = await csvOf(await createExport({ include_fields: ['VIP', 'first_name'] }));
    expect(some[0].slice(7)).toEqual(['first_name', 'vip']);
    expect((await ok(s, 'GET', '/1/exports/2')).criteria.include_fields).toEqual(['first_name', 'vip']);
    expect((await csvOf(await createExport({ include_fields: [] })))[0]).toEqual(BASE);
  });

  it('refuses an unknown field name, naming it', async () => {
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    const res = await s.call('POST', '/1/exports', {
      body: { user_id: 'owner@localhost', criteria: { include_fields: ['first_name', 'shoe_size'] } },
    });
    expectFieldError(res, 'criteria.include_fields[1]');
    expect(res.body.error).toContain('"shoe_size"');
    expect(countRows(s, 'exports')).toBe(0);
  });

  it('joins text[] values with mfv_delimiter', async () => {
    await createField(s, { shortcut_name: 'tags', field_type: 'text[]', widget_type: 'check_multiple', options: ['a', 'b', 'c,d'] });
    await addMember(s, 'a@x.org', { fields: { tags: ['a', 'b'] } });
    await addMember(s, 'b@x.org', { fields: { tags: ['c,d'] } });
    const comma = await csvOf(await createExport());
    expect(comma.slice(1).map((r) => r[7])).toEqual(['a,b', 'c,d']);
    const semi = await download(await createExport({ mfv_delimiter: ';' }));
    expect(
      semi.bytes
        .toString()
        .split('\n')
        .slice(1, 3)
        .map((l) => l.slice(l.lastIndexOf('+00:00,') + 7)),
    ).toEqual(['a;b', '"c,d"']);
  });

  it('writes SMS columns empty for members without a number', async () => {
    await addMember(s, 'phone@x.org', { sms: { phone_number: '+15555550123', promotional_status: 'a' } });
    await addMember(s, 'none@x.org');
    const rows = await csvOf(
      await createExport({ sms: { fields: ['phone_number', 'promotional_status', 'transactional_status', 'region_code'] } }),
    );
    expect(rows.slice(1).map((r) => r.slice(7))).toEqual([
      ['+15555550123', 'a', 'a', 'US'],
      ['', '', '', ''],
    ]);
    expect((await csvOf(await createExport({ sms: { fields: [] } })))[0]).toEqual(BASE);
  });

  it('quotes values with commas, quotes and line breaks (RFC 4180), so a CSV parser reads them back', async () => {
    await createField(s, { shortcut_name: 'note', field_type: 'text' });
    const nasty = ['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\r\nlf', ' spaced ', 'ünï©ødé', ''];
    for (const [i, note] of nasty.entries()) await addMember(s, `m${i}@x.org`, { fields: { note: note || null } });
    const rows = await csvOf(await createExport());
    expect(rows.slice(1).map((r) => r[7])).toEqual(nasty);
    for (const v of nasty) expect(parseCsv(`${csvField(v)},x\n`)).toEqual([[v, 'x']]);
    expect(csvField('a"b')).toBe('"a""b"');
    expect(csvField('plain')).toBe('plain');
  });

  it('reads current values: a change after the export shows in the download', async () => {
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    const id1 = await addMember(s, 'a@x.org', { fields: { first_name: 'Old' } });
    const exp = await createExport();
    expect(await ok(s, 'PUT', `/1/members/${id1}`, { body: { fields: { first_name: 'New' } } })).toBe(true);
    await addMember(s, 'later@x.org');
    const rows = await csvOf(exp);
    expect(rows.slice(1).map((r) => [r[0], r[7]])).toEqual([['a@x.org', 'New']]);
  });

  it('streams large exports in chunks, all rows present', async () => {
    const insert = s.db.prepare(
      `INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')`,
    );
    s.db.transaction(() => {
      for (let i = 0; i < 10_000; i++) insert.run(`m${i}@x.org`);
    })();
    const id = await createExport();
    const res = await s.router.handle({ method: 'GET', path: `/1/exports/${id}/download`, query: {}, actor: s.actor });
    const chunks: string[] = [];
    for await (const c of res.raw!.data as Iterable<string>) chunks.push(String(c));
    expect(chunks.length).toBeGreaterThan(5);
    const lines = chunks.join('').split('\n');
    expect(lines).toHaveLength(10_002);
    expect(lines[10_000]).toBe('m9999@x.org,10000,2026-01-01T00:00:00.000000+00:00,false,0,active,2026-01-01T00:00:00.000000+00:00');
  });

  describe('validation', () => {
    const post = (body: unknown) => s.call('POST', '/1/exports', { body });

    it('requires user_id, a string', async () => {
      expectFieldError(await post({}), 'user_id');
      expectFieldError(await post({ user_id: '' }), 'user_id');
      expectFieldError(await post({ user_id: 7 }), 'user_id');
    });

    it('refuses malformed criteria, naming them', async () => {
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { groups: ['1'] } }), 'criteria.groups[0]');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { member_status_ids: ['f'] } }), 'criteria.member_status_ids[0]');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { member_status_ids: [] } }), 'criteria.member_status_ids');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { include_fields: false } }), 'criteria.include_fields');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { mfv_delimiter: '' } }), 'criteria.mfv_delimiter');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { sms: { fields: ['phone'] } } }), 'criteria.sms.fields[0]');
      expectFieldError(await post({ user_id: 'a@x.org', criteria: { segments: ['3'] } }), 'criteria.segments[0]');
      expect(await post({ user_id: 'a@x.org', criteria: { segments: [3] } })).toEqual({
        status: 404,
        body: { error: 'segment 3 not found' },
      });
      expect(countRows(s, 'exports')).toBe(0);
      // An unknown key is ignored (and named in a header): test/api/client-fidelity.test.ts.
      expect((await post({ user_id: 'a@x.org', criteria: { group: [1] } })).status).toBe(200);
    });

    it('answers 404 naming unknown groups and members', async () => {
      const [g] = await createGroups(s, 'G');
      await addMember(s, 'a@x.org');
      const groups = await post({ user_id: 'a@x.org', criteria: { groups: [g, 98, 99] } });
      expect(groups).toEqual({ status: 404, body: { error: 'groups 98, 99 not found' } });
      const members = await post({ user_id: 'a@x.org', criteria: { member_ids: [1, 7] } });
      expect(members).toEqual({ status: 404, body: { error: 'member 7 not found' } });
      expect(countRows(s, 'exports')).toBe(0);
    });
  });

  it('uses the members of subscriptions (subscribed ones only) when subscriptions exist', async () => {
    const exists = s.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'subscription_members'`).get();
    if (!exists) return;
    const a = await addMember(s, 'a@x.org');
    const b = await addMember(s, 'b@x.org');
    await addMember(s, 'c@x.org');
    s.db
      .prepare(
        `INSERT INTO subscriptions (subscription_id, account_id, subscription_name, created_at, modified_at) VALUES (5, 1, 'News', ?, ?)`,
      )
      .run(T0, T0);
    s.db
      .prepare(`INSERT INTO subscription_members (subscription_id, member_id, status, subscribed_at) VALUES (5, ?, 'subscribed', ?)`)
      .run(a, T0);
    s.db
      .prepare(`INSERT INTO subscription_members (subscription_id, member_id, status, opted_out_at) VALUES (5, ?, 'opted_out', ?)`)
      .run(b, T0);
    expect(await exportedIds(await createExport({ subscriptions: [5] }))).toEqual([a]);
    expect(await s.call('POST', '/1/exports', { body: { user_id: 'a@x.org', criteria: { subscriptions: [6] } } })).toEqual({
      status: 404,
      body: { error: 'subscription 6 not found' },
    });
  });
});

describe('GET /{account_id}/exports', () => {
  it('lists the exports of the past seven days by type (a by default); older ones stay readable by id', async () => {
    const m = await addMember(s, 'a@x.org');
    const first = await createExport();
    s.clock.advance(2 * DAY);
    const second = await createExport();
    const member = (await ok(s, 'POST', `/1/exports/members/${m}`)).export_id;
    expect((await ok(s, 'GET', '/1/exports')).map((e: any) => e.export_id)).toEqual([first, second]);
    expect((await ok(s, 'GET', '/1/exports', { query: { export_type: 'a' } })).map((e: any) => e.export_id)).toEqual([first, second]);
    expect((await ok(s, 'GET', '/1/exports', { query: { export_type: 'm' } })).map((e: any) => e.export_id)).toEqual([member]);
    s.clock.advance(6 * DAY); // first is 8 days old, second 6
    expect((await ok(s, 'GET', '/1/exports')).map((e: any) => e.export_id)).toEqual([second]);
    s.clock.advance(2 * DAY);
    expect(await ok(s, 'GET', '/1/exports')).toEqual([]);
    expect(await ok(s, 'GET', '/1/exports', { query: { export_type: 'm' } })).toEqual([]);
    expect((await ok(s, 'GET', `/1/exports/${first}`)).created_at).toBe(ISO0);
    expect(await exportedIds(first)).toEqual([m]);
    expectFieldError(await s.call('GET', '/1/exports', { query: { export_type: 'x' } }), 'export_type');
  });

  it('answers 404 for an unknown export, and for another account', async () => {
    expect(await s.call('GET', '/1/exports/9')).toEqual({ status: 404, body: { error: 'export 9 not found' } });
    expect(await download(9)).toMatchObject({ status: 404, body: { error: 'export 9 not found' } });
    expect((await s.call('GET', '/2/exports')).status).toBe(404);
  });
});

describe('POST /{account_id}/exports/members/{member_id}', () => {
  it('zips all data of the member as JSON files with a README', async () => {
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    const [g] = await createGroups(s, 'News');
    const m = await addMember(s, 'ada@x.org', { fields: { first_name: 'Ada' }, group_ids: [g], phone_number: '+4791234567' });
    await addMember(s, 'other@x.org', { group_ids: [g] });
    await setStatus(s, [m], 'o');
    const id = (await ok(s, 'POST', `/1/exports/members/${m}`)).export_id;
    const record = await ok(s, 'GET', `/1/exports/${id}`);
    expect(record).toMatchObject({ export_type: 'm', status: 'o', user_id: 'owner@localhost', export_name: `member_${m}_export_${id}` });
    expect(record.criteria.member_ids).toEqual([m]);

    const d = await download(id);
    expect(d.contentType).toBe('application/zip');
    expect(d.filename).toBe(`member_${m}_export_${id}.zip`);
    const files = unzipSync(new Uint8Array(d.bytes));
    const names = Object.keys(files);
    for (const name of ['README.txt', 'member.json', 'fields.json', 'groups.json', 'optouts.json', 'mailings.json', 'sms.json'])
      expect(names).toContain(name);
    const read = (name: string) => JSON.parse(strFromU8(files[name]));
    expect(read('member.json')).toEqual(await ok(s, 'GET', `/1/members/${m}`));
    expect(read('fields.json')).toEqual([
      { field_id: 1, shortcut_name: 'first_name', display_name: 'first_name', field_type: 'text', value: 'Ada' },
    ]);
    expect(read('groups.json')).toEqual([{ member_group_id: g, group_name: 'News', added_at: '@D:2026-03-04T05:06:07' }]);
    expect(read('optouts.json')).toEqual([{ timestamp: '@D:2026-03-04T05:06:07', mailing_id: null }]);
    expect(read('mailings.json')).toEqual([]);
    expect(read('sms.json')).toMatchObject({ phone_number: '+4791234567', region_code: 'NO' });
    const readme = strFromU8(files['README.txt']);
    expect(readme).toContain(`member ${m} (ada@x.org)`);
    for (const name of names.filter((n) => n !== 'README.txt')) expect(readme).toContain(name);
    // Nothing about the other member.
    expect(Buffer.from(strFromU8(files['groups.json'])).toString()).not.toContain('other@x.org');
  });

  it('exports an archived member too, and answers 404 for an unknown one', async () => {
    const m = await addMember(s, 'a@x.org');
    expect(await ok(s, 'DELETE', `/1/members/${m}`)).toBe(true);
    expect((await s.call('POST', `/1/exports/members/${m}`)).status).toBe(200);
    expect(await s.call('POST', '/1/exports/members/99')).toEqual({ status: 404, body: { error: 'member 99 not found' } });
    expect((await s.call('POST', `/1/exports/members/${m}`, { body: { x: 1 } })).status).toBe(200);
  });

  it('gives the same bytes for the same data (stamped with the export time)', async () => {
    const m = await addMember(s, 'a@x.org');
    const one = await download((await ok(s, 'POST', `/1/exports/members/${m}`)).export_id);
    const two = await download((await ok(s, 'POST', `/1/exports/members/${m}`)).export_id);
    expect(one.bytes.equals(two.bytes)).toBe(true);
  });
});

describe('erasure', () => {
  it('after a purge the member is in no export, and its individual exports are gone', async () => {
    const [g] = await createGroups(s, 'G');
    const keep = await addMember(s, 'keep@x.org', { group_ids: [g] });
    const gone = await addMember(s, 'gone@x.org', { group_ids: [g] });
    const audience = await createExport({ groups: [g] });
    const individual = (await ok(s, 'POST', `/1/exports/members/${gone}`)).export_id;
    const other = (await ok(s, 'POST', `/1/exports/members/${keep}`)).export_id;
    expect(await exportedIds(audience)).toEqual([keep, gone]);

    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [gone] } })).toBe(true);
    const csv = (await download(audience)).bytes.toString();
    expect(csv).not.toContain('gone@x.org');
    expect(await exportedIds(audience)).toEqual([keep]);
    expect(await s.call('GET', `/1/exports/${individual}`)).toEqual({ status: 404, body: { error: `export ${individual} not found` } });
    expect((await download(individual)).status).toBe(404);
    expect((await ok(s, 'GET', '/1/exports', { query: { export_type: 'm' } })).map((e: any) => e.export_id)).toEqual([other]);
    expect(countRows(s, 'export_members', 'member_id = ?', gone)).toBe(0);
  });
});
