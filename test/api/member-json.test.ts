/**
 * A member is written as JSON text without building it as objects (encode.memberJson,
 * FieldCatalog.namedJson): a page of members, and one member read by id or by e-mail.
 * It must write exactly what the object path writes for the same member, key for key,
 * in the same order and encoding: the service's record through encode.member and
 * JSON.stringify is the reference.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { jsonText, RawJson } from '../../src/api/json-text.js';
import { member as memberObject } from '../../src/api/encode.js';
import { FieldCatalog } from '../../src/service/audience/fields.js';
import { memberRow, toMember } from '../../src/service/audience/members.js';
import { makeService, type TestService } from '../helpers.js';
import { addMember, createField, ok, setStatus } from './util.js';

/** The body of a request as the wire has it (text), through the route table. */
async function wire(s: TestService, path: string, query: Record<string, string> = {}): Promise<string> {
  const res = await s.router.handle({ method: 'GET', path, query, actor: s.actor });
  expect(res.status).toBe(200);
  return jsonText(res.body);
}

/**
 * A member as the object path writes it (archived ones too), from the row as `SELECT *`
 * reads it: the hot reads take fewer columns (the SMS ones as one JSON value), so the
 * reference does not share them.
 */
function objectJson(s: TestService, id: number, emptyFields = false): string {
  const ctx = { db: s.db, clock: s.clock, actor: s.actor, accountId: 1 };
  const m = memberObject(toMember(memberRow(ctx, id, true), FieldCatalog.of(ctx)));
  return JSON.stringify(emptyFields ? { ...m, fields: {} } : m);
}

/**
 * What the page must be: each member as the object path writes it (fields emptied for
 * exclude_fields). On the way, each member's GET by id and by e-mail must write the
 * same text, as JSON text (not objects).
 */
async function expectedPage(s: TestService, ids: number[], emptyFields = false): Promise<string> {
  const items: string[] = [];
  for (const id of ids) {
    const expected = objectJson(s, id, emptyFields);
    if (!emptyFields) {
      const res = await s.router.handle({ method: 'GET', path: `/1/members/${id}`, query: { deleted: 'true' }, actor: s.actor });
      expect(res.status).toBe(200);
      expect(res.body).toBeInstanceOf(RawJson);
      expect(jsonText(res.body)).toBe(expected);
      const email = (JSON.parse(expected) as { email: string }).email;
      expect(await wire(s, `/1/members/email/${encodeURIComponent(email)}`, { deleted: 'true' })).toBe(expected);
    }
    items.push(expected);
  }
  return `[${items.join(',')}]`;
}

/** Values that a careless rewrite of the stored text would break. */
const TRICKY = [
  'plain',
  'with "quotes" and, commas',
  'looks like a key: ,"3":"x", {"12":1}',
  'back\\slash \\" and \\\\',
  'line\nbreak\ttab\u0001control',
  'unicode é ø 日本 and emoji 🎉',
  '',
];

describe('a page of members as JSON text', () => {
  let s: TestService;
  beforeEach(async () => {
    s = makeService();
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'tags', field_type: 'text[]', options: [...TRICKY.filter(Boolean), 'b,"c"', '1', 'x', 'y'] });
    await createField(s, { shortcut_name: 'score', field_type: 'numeric' });
    await createField(s, { shortcut_name: 'vip', field_type: 'boolean' });
    await createField(s, { shortcut_name: 'birthday', field_type: 'date' });
    await createField(s, { shortcut_name: 'seen_at', field_type: 'timestamp' });
  });

  it('writes each member exactly as GET /members/{id} does: every field type, tricky text, sms, statuses, partial fields, archived', async () => {
    const ids: number[] = [];
    for (const [i, text] of TRICKY.entries())
      ids.push(
        await addMember(s, `m${i}@example.com`, {
          fields: {
            city: text || null,
            tags: i % 2 ? [text, 'b,"c"', '1'] : null,
            score: [0, -1.5, 1e21, 0.1 + 0.2, 123456789.125, 7, 3][i],
            vip: i % 3 === 0,
            birthday: i % 2 ? '1990-02-28' : null,
            seen_at: i % 2 ? null : '2026-01-02T03:04:05Z',
          },
          // The SMS columns reach the hot reads as one JSON value: a phone with defaults, and
          // one with an unknown calling code (region_code stays null) whose promotional status
          // changes later (below), so its two statuses and their times differ and no two of
          // its values could be swapped unseen.
          ...(i === 2 ? { sms: { phone_number: '+4791234567', promotional_status: 'a' } } : {}),
          ...(i === 5 ? { sms: { phone_number: '+9991234567', transactional_status: 'o', promotional_status: 'o' } } : {}),
        }),
      );
    s.clock.advance(61_000);
    await ok(s, 'PUT', `/1/members/${ids[5]}`, { body: { sms: { promotional_status: 'a' } } });
    ids.push(await addMember(s, 'nofields@example.com'));
    await setStatus(s, [ids[1]], 'o');
    await ok(s, 'PUT', `/1/members/${ids[3]}`, { body: { fields: { city: 'updated, "again"' } } });
    await ok(s, 'DELETE', `/1/members/${ids[4]}`);

    const live = ids.filter((id) => id !== ids[4]);
    expect(await wire(s, '/1/members')).toBe(await expectedPage(s, live));
    expect(await wire(s, '/1/members', { deleted: 'true' })).toBe(await expectedPage(s, ids));
    expect(await wire(s, '/1/members', { deleted_only: 'true' })).toBe(await expectedPage(s, [ids[4]]));
    expect(await wire(s, '/1/members', { exclude_fields: 'true' })).toBe(await expectedPage(s, live, true));
    expect(await wire(s, '/1/members', { start: '2', end: '4' })).toBe(await expectedPage(s, live.slice(2, 4)));
    expect(await wire(s, '/1/members', { start: '100' })).toBe('[]');
    // The parsed page is what the local transport and clients read.
    expect((await ok(s, 'GET', '/1/members')).map((m: { member_id: number }) => m.member_id)).toEqual(live);
  });

  it('values merged by an import (SQLite json_patch) and a field deleted since are written as the object path writes them', async () => {
    const id = await addMember(s, 'a@example.com', { fields: { score: 2, city: 'Oslo' } });
    const imp = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id as number;
    await ok(s, 'POST', `/1/members/imports/${imp}/rows`, {
      body: {
        members: [
          { email: 'a@example.com', tags: ['x', 'y'], vip: false },
          { email: 'b@example.com', birthday: '2000-01-01' },
        ],
      },
    });
    await ok(s, 'POST', `/1/members/imports/${imp}/finish`);
    const fields = (await ok(s, 'GET', '/1/fields')) as { field_id: number; shortcut_name: string }[];
    await ok(s, 'DELETE', `/1/fields/${fields.find((f) => f.shortcut_name === 'tags')!.field_id}`);
    expect(await wire(s, '/1/members')).toBe(await expectedPage(s, [id, id + 1]));
  });

  it('a field placed before older ones (column order unlike id order) is written in column order', async () => {
    await createField(s, { shortcut_name: 'first_col', field_type: 'text', column_order: 0 });
    const id = await addMember(s, 'a@example.com', { fields: { city: 'Oslo', first_col: 'here', score: 1 } });
    const page = await wire(s, '/1/members');
    expect(page).toBe(await expectedPage(s, [id]));
    expect(Object.keys(JSON.parse(page)[0].fields)).toEqual(['first_col', 'city', 'score']);
  });
});

describe('FieldCatalog.namedJson', () => {
  const catalog = new FieldCatalog([
    { field_id: 3, shortcut_name: 'city', column_order: 1 },
    { field_id: 5, shortcut_name: 'say "hi"', column_order: 2 },
    { field_id: 12, shortcut_name: 'n', column_order: 3 },
  ] as never);
  const same = (stored: string) => expect(catalog.namedJson(stored)).toBe(JSON.stringify(catalog.toNamed(stored)));

  it('renames keys in place, and answers what toNamed and JSON.stringify answer, for any stored text', () => {
    expect(catalog.namedJson('{"3":"Oslo","12":1.5}')).toBe('{"city":"Oslo","n":1.5}');
    same('{}');
    same('{"3":"a,\\"12\\":b","5":["x","\\"3\\":"],"12":-0.5}');
    // Keys out of column order (json_patch appends), an unknown (deleted) field, whitespace.
    same('{"12":1,"3":"x"}');
    same('{"3":"x","99":"gone","12":2}');
    same('{ "3" : "x" , "12" : 3 }');
    same('{"5":"only"}');
    same('{"3":"ends in a backslash \\\\","5":["a,b","{\\"12\\":1}"],"12":1e-7}');
    same('{"3":"x","abc":1}');
    same('{"3":"x",\n"12":1}');
  });
});
