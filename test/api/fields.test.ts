import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { addMember, countRows, createField, expectFieldError, getMember, ok, snapshot } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const field = (field_id: number, shortcut_name: string, over: Record<string, unknown> = {}) => ({
  field_id,
  account_id: 1,
  shortcut_name,
  display_name: shortcut_name,
  short_display_name: null,
  field_type: 'text',
  widget_type: 'text',
  required: false,
  column_order: field_id,
  deleted_at: null,
  options: null,
  ...over,
});

/** The spec's widget_type-by-field_type table. */
const ALLOWED: Record<string, string[]> = {
  text: ['text', 'long', 'radio', 'select one'],
  'text[]': ['select multiple', 'check_multiple'],
  numeric: ['number'],
  boolean: ['checkbox'],
  date: ['date'],
  timestamp: ['date'],
};
const ALL_WIDGETS = [...new Set(Object.values(ALLOWED).flat())];
const WITH_OPTIONS = ['radio', 'select one', 'select multiple', 'check_multiple'];

/** The stored field_values of a member, straight from the table. */
const storedValues = (memberId: number) =>
  JSON.parse((s.db.prepare('SELECT field_values FROM members WHERE member_id = ?').get(memberId) as any).field_values);

// ------------------------------------------------------------------ list and get

describe('GET /{account_id}/fields', () => {
  it('answers [] and then the fields in column order', async () => {
    expect(await s.call('GET', '/1/fields')).toEqual({ status: 200, body: [] });
    await createField(s, { shortcut_name: 'late', field_type: 'text', column_order: 9 });
    await createField(s, { shortcut_name: 'early', field_type: 'numeric', column_order: 2 });
    expect(await ok(s, 'GET', '/1/fields')).toEqual([
      field(2, 'early', { field_type: 'numeric', widget_type: 'number', column_order: 2 }),
      field(1, 'late', { column_order: 9 }),
    ]);
  });

  it('lists deleted fields only with deleted=true or 1', async () => {
    await createField(s, { shortcut_name: 'a', field_type: 'text' });
    await createField(s, { shortcut_name: 'b', field_type: 'text' });
    s.clock.advance(3_600_000);
    await ok(s, 'DELETE', '/1/fields/1');
    expect((await ok(s, 'GET', '/1/fields')).map((f: any) => f.field_id)).toEqual([2]);
    for (const deleted of ['true', '1']) {
      const list = await ok(s, 'GET', '/1/fields', { query: { deleted } });
      expect(list).toEqual([field(1, 'a', { deleted_at: '@D:2026-03-04T06:06:07' }), field(2, 'b')]);
    }
  });
});

describe('GET /{account_id}/fields/{field_id}', () => {
  it('answers the field; 404 for unknown; a deleted one only with deleted', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text', display_name: 'City', short_display_name: 'Cty' });
    expect(await s.call('GET', '/1/fields/1')).toEqual({
      status: 200,
      body: field(1, 'city', { display_name: 'City', short_display_name: 'Cty' }),
    });
    expect(await s.call('GET', '/1/fields/2')).toEqual({ status: 404, body: { error: 'field 2 not found' } });
    await ok(s, 'DELETE', '/1/fields/1');
    expect(await s.call('GET', '/1/fields/1')).toEqual({ status: 404, body: { error: 'field 1 not found' } });
    expect((await ok(s, 'GET', '/1/fields/1', { query: { deleted: '1' } })).deleted_at).toBe('@D:2026-03-04T05:06:07');
    expect((await ok(s, 'GET', '/1/fields/1', { query: { deleted: 'true' } })).shortcut_name).toBe('city');
  });
});

// ------------------------------------------------------------------ create

describe('POST /{account_id}/fields', () => {
  it('answers the new id as a bare integer with 200', async () => {
    expect(await s.call('POST', '/1/fields', { body: { shortcut_name: 'city', display_name: 'City', field_type: 'text' } })).toEqual({
      status: 200,
      body: 1,
    });
    expect(await s.call('POST', '/1/fields', { body: { shortcut_name: 'zip', display_name: 'Zip', field_type: 'text' } })).toEqual({
      status: 200,
      body: 2,
    });
  });

  it('stores every given attribute; the first allowed widget is the default', async () => {
    await createField(s, {
      shortcut_name: 'colour',
      display_name: 'Favourite colour',
      short_display_name: 'Colour',
      field_type: 'text',
      widget_type: 'select one',
      options: ['red', 'green'],
      column_order: 4,
      required: true,
    });
    await createField(s, { shortcut_name: 'n', field_type: 'numeric' });
    await createField(s, { shortcut_name: 'tags', field_type: 'text[]', options: ['x'] });
    expect(await ok(s, 'GET', '/1/fields/1')).toEqual(
      field(1, 'colour', {
        display_name: 'Favourite colour',
        short_display_name: 'Colour',
        widget_type: 'select one',
        options: ['red', 'green'],
        column_order: 4,
        required: true,
      }),
    );
    expect((await ok(s, 'GET', '/1/fields/2')).widget_type).toBe('number');
    expect((await ok(s, 'GET', '/1/fields/2')).column_order).toBe(5);
    expect((await ok(s, 'GET', '/1/fields/3')).widget_type).toBe('check_multiple');
  });

  it('accepts every allowed field_type / widget_type pair', async () => {
    let n = 0;
    for (const [field_type, widgets] of Object.entries(ALLOWED)) {
      for (const widget_type of widgets) {
        const body: Record<string, unknown> = { shortcut_name: `f${++n}`, display_name: 'F', field_type, widget_type };
        if (WITH_OPTIONS.includes(widget_type)) body.options = ['one', 'two'];
        expect(await s.call('POST', '/1/fields', { body }), `${field_type} + ${widget_type}`).toEqual({ status: 200, body: n });
        expect((await ok(s, 'GET', `/1/fields/${n}`)).widget_type).toBe(widget_type);
      }
    }
    expect(n).toBe(10);
  });

  it('refuses every other pair with a 400 naming widget_type and the allowed ones', async () => {
    for (const [field_type, widgets] of Object.entries(ALLOWED)) {
      for (const widget_type of [...ALL_WIDGETS.filter((w) => !widgets.includes(w)), 'slider']) {
        const body: Record<string, unknown> = { shortcut_name: 'f', display_name: 'F', field_type, widget_type };
        if (WITH_OPTIONS.includes(widget_type)) body.options = ['one'];
        const res = await s.call('POST', '/1/fields', { body });
        expectFieldError(res, 'widget_type');
        const allowed = /\(allowed: (.*)\)$/.exec(res.body.error)?.[1].split(', ');
        expect(res.body.error).toContain(`"${widget_type}" is not allowed for field_type ${field_type}`);
        expect(allowed?.sort()).toEqual(widgets.slice().sort());
      }
    }
    expect(countRows(s, 'fields')).toBe(0);
  });

  it('options: required and non-empty for the option widgets, refused for the others, distinct', async () => {
    const post = (body: Record<string, unknown>) =>
      s.call('POST', '/1/fields', { body: { shortcut_name: 'f', display_name: 'F', ...body } });
    for (const [field_type, widget_type] of [
      ['text', 'radio'],
      ['text', 'select one'],
      ['text[]', 'select multiple'],
      ['text[]', 'check_multiple'],
    ]) {
      expectFieldError(await post({ field_type, widget_type }), 'options');
      expectFieldError(await post({ field_type, widget_type, options: [] }), 'options');
    }
    expectFieldError(await post({ field_type: 'text', options: ['a'] }), 'options');
    expectFieldError(await post({ field_type: 'numeric', options: ['1'] }), 'options');
    expectFieldError(await post({ field_type: 'text', widget_type: 'radio', options: ['a', 'a'] }), 'options');
    expectFieldError(await post({ field_type: 'text', widget_type: 'radio', options: ['a', ''] }), 'options[1]');
    expectFieldError(await post({ field_type: 'text', widget_type: 'radio', options: 'a,b' }), 'options');
    expect(countRows(s, 'fields')).toBe(0);
  });

  it('validates shortcut_name, field_type and display_name', async () => {
    const post = (body: Record<string, unknown>) => s.call('POST', '/1/fields', { body });
    expectFieldError(await post({ shortcut_name: '1st', display_name: 'X', field_type: 'text' }), 'shortcut_name');
    expectFieldError(await post({ shortcut_name: 'has space', display_name: 'X', field_type: 'text' }), 'shortcut_name');
    expectFieldError(await post({ display_name: 'X', field_type: 'text' }), 'shortcut_name');
    expectFieldError(await post({ shortcut_name: 'x', display_name: 'X', field_type: 'string' }), 'field_type');
    expectFieldError(await post({ shortcut_name: 'x', display_name: 'X' }), 'field_type');
    expectFieldError(await post({ shortcut_name: 'x', field_type: 'text' }), 'display_name');
    expectFieldError(await post({ shortcut_name: 'x', display_name: 'X', field_type: 'text', column_order: -1 }), 'column_order');
    expect(countRows(s, 'fields')).toBe(0);
  });

  it('names are unique case-insensitively; a deleted field frees its name', async () => {
    await createField(s, { shortcut_name: 'City', field_type: 'text' });
    const res = await s.call('POST', '/1/fields', { body: { shortcut_name: 'city', display_name: 'c', field_type: 'numeric' } });
    expect(res).toEqual({
      status: 400,
      body: { error: 'shortcut_name: a field named "city" already exists (field 1)', field: 'shortcut_name' },
    });
    expect(countRows(s, 'fields')).toBe(1);
    await ok(s, 'DELETE', '/1/fields/1');
    expect(await s.call('POST', '/1/fields', { body: { shortcut_name: 'city', display_name: 'c', field_type: 'numeric' } })).toEqual({
      status: 200,
      body: 2,
    });
  });
});

// ------------------------------------------------------------------ update

describe('PUT /{account_id}/fields/{field_id}', () => {
  beforeEach(async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text', display_name: 'City' });
    await createField(s, { shortcut_name: 'colour', field_type: 'text', widget_type: 'radio', options: ['red', 'blue'] });
  });

  it('answers the field id as a bare integer and changes the definition', async () => {
    expect(await s.call('PUT', '/1/fields/1', { body: { display_name: 'Town' } })).toEqual({ status: 200, body: 1 });
    expect(await ok(s, 'GET', '/1/fields/1')).toEqual(field(1, 'city', { display_name: 'Town' }));
    expect(await ok(s, 'PUT', '/1/fields/2', { body: { options: ['red', 'blue', 'green'], widget_type: 'select one' } })).toBe(2);
    const f = await ok(s, 'GET', '/1/fields/2');
    expect([f.widget_type, f.options]).toEqual(['select one', ['red', 'blue', 'green']]);
  });

  it('renames, refusing a name taken by another field but not its own in another case', async () => {
    expect(await ok(s, 'PUT', '/1/fields/1', { body: { shortcut_name: 'CITY' } })).toBe(1);
    expect((await ok(s, 'GET', '/1/fields/1')).shortcut_name).toBe('CITY');
    expectFieldError(await s.call('PUT', '/1/fields/1', { body: { shortcut_name: 'Colour' } }), 'shortcut_name');
    expect((await ok(s, 'GET', '/1/fields/1')).shortcut_name).toBe('CITY');
  });

  it('keeps the widget table and options rules', async () => {
    const before = snapshot(s);
    expectFieldError(await s.call('PUT', '/1/fields/1', { body: { widget_type: 'checkbox' } }), 'widget_type');
    expectFieldError(await s.call('PUT', '/1/fields/1', { body: { widget_type: 'radio' } }), 'options');
    expectFieldError(await s.call('PUT', '/1/fields/2', { body: { options: [] } }), 'options');
    expect(snapshot(s)).toBe(before);
  });

  it('a field_type change while members hold values is a 400; after clear it resets the widget', async () => {
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo' } });
    expect(await s.call('PUT', '/1/fields/1', { body: { field_type: 'numeric' } })).toEqual({
      status: 400,
      body: { error: 'field_type: field city holds member values; clear it before changing its type', field: 'field_type' },
    });
    await ok(s, 'POST', '/1/fields/1/clear', { body: {} });
    expect(await ok(s, 'PUT', '/1/fields/1', { body: { field_type: 'numeric' } })).toBe(1);
    const f = await ok(s, 'GET', '/1/fields/1');
    expect([f.field_type, f.widget_type]).toEqual(['numeric', 'number']);
  });

  it('404 for an unknown or deleted field', async () => {
    expect(await s.call('PUT', '/1/fields/7', { body: { display_name: 'X' } })).toEqual({
      status: 404,
      body: { error: 'field 7 not found' },
    });
    await ok(s, 'DELETE', '/1/fields/1');
    expect((await s.call('PUT', '/1/fields/1', { body: { display_name: 'X' } })).status).toBe(404);
  });
});

// ------------------------------------------------------------------ delete and clear

describe('DELETE /{account_id}/fields/{field_id}', () => {
  it('answers true and removes the values from every member', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'zip', field_type: 'text' });
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo', zip: '0150' } });
    await addMember(s, 'b@x.org', { fields: { city: 'Rome' } });
    expect(await s.call('DELETE', '/1/fields/1')).toEqual({ status: 200, body: true });
    expect((await getMember(s, 1)).fields).toEqual({ zip: '0150' });
    expect(storedValues(1)).toEqual({ 2: '0150' });
    expect(storedValues(2)).toEqual({});
    // A new field of the same name starts empty.
    const again = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    expect(again).toBe(3);
    expect((await getMember(s, 2)).fields).toEqual({});
    expect(await s.call('DELETE', '/1/fields/1')).toEqual({ status: 404, body: { error: 'field 1 not found' } });
    expect(await s.call('DELETE', '/1/fields/9')).toEqual({ status: 404, body: { error: 'field 9 not found' } });
  });

  it('a deleted field name is unknown to member writes', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await ok(s, 'DELETE', '/1/fields/1');
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { city: 'x' } } }), 'fields.city');
  });
});

describe('POST /{account_id}/fields/{field_id}/clear', () => {
  it('answers true and removes the values from all members (archived too); the field stays', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'zip', field_type: 'text' });
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo', zip: '1' } });
    await addMember(s, 'b@x.org', { fields: { city: 'Rome' } });
    await addMember(s, 'c@x.org', { fields: { city: 'Bern' } });
    await ok(s, 'DELETE', '/1/members/3');
    expect(await s.call('POST', '/1/fields/1/clear', { body: {} })).toEqual({ status: 200, body: true });
    expect((await ok(s, 'GET', '/1/members', { query: { deleted: '1' } })).map((m: any) => m.fields)).toEqual([{ zip: '1' }, {}, {}]);
    expect(storedValues(3)).toEqual({});
    expect((await ok(s, 'GET', '/1/fields/1')).deleted_at).toBeNull();
    // An empty body is {}; clearing an empty field is still true.
    expect(await s.call('POST', '/1/fields/1/clear', { rawBody: '' })).toEqual({ status: 200, body: true });
  });

  it('404 for an unknown field; the body is empty, null or anything (unknown keys are ignored)', async () => {
    expect(await s.call('POST', '/1/fields/5/clear', { body: {} })).toEqual({ status: 404, body: { error: 'field 5 not found' } });
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    expect(await s.call('POST', '/1/fields/1/clear', { rawBody: 'null' })).toEqual({ status: 200, body: true });
    expect(await s.call('POST', '/1/fields/1/clear', { body: { all: true } })).toEqual({ status: 200, body: true });
  });
});

// ------------------------------------------------------------------ member values by type

describe('member field values', () => {
  beforeEach(async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'size', field_type: 'text', widget_type: 'select one', options: ['S', 'M'] });
    await createField(s, { shortcut_name: 'tags', field_type: 'text[]', widget_type: 'select multiple', options: ['x', 'y', 'z'] });
    await createField(s, { shortcut_name: 'notes', field_type: 'text[]', widget_type: 'check_multiple', options: ['p', 'q'] });
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    await createField(s, { shortcut_name: 'vip', field_type: 'boolean' });
    await createField(s, { shortcut_name: 'born', field_type: 'date' });
    await createField(s, { shortcut_name: 'seen', field_type: 'timestamp' });
    await addMember(s, 'm@x.org');
  });

  /** Writes one value through PUT /members/1 and answers what GET shows, or the error response. */
  const write = async (name: string, value: unknown) => {
    const res = await s.call('PUT', '/1/members/1', { body: { fields: { [name]: value } } });
    if (res.status !== 200) return res;
    expect(res.body).toBe(true);
    return { stored: (await getMember(s, 1)).fields[name] };
  };
  const accepted: [string, unknown, unknown][] = [
    ['city', 'Oslo', 'Oslo'],
    ['city', 42, '42'],
    ['size', 'M', 'M'],
    ['tags', ['x', 'z'], ['x', 'z']],
    ['tags', 'y', ['y']],
    ['tags', [], []],
    ['notes', ['q'], ['q']],
    ['age', 12.5, 12.5],
    ['age', ' 7 ', 7],
    ['age', -3, -3],
    // Decimal notation: a sign, digits, a point, an exponent.
    ['age', '+5', 5],
    ['age', '-0.25', -0.25],
    ['age', '.5', 0.5],
    ['age', '2.', 2],
    ['age', '1e3', 1000],
    ['age', '1.5E-2', 0.015],
    ['age', '007', 7],
    ['vip', true, true],
    ['vip', false, false],
    ['vip', 'yes', true],
    ['vip', '0', false],
    ['born', '2026-02-28', '2026-02-28'],
    ['born', '2024-02-29', '2024-02-29'],
    ['seen', '2026-03-04T05:06:07', '2026-03-04T05:06:07'],
    ['seen', '2026-03-04T05:06:07+02:00', '2026-03-04T03:06:07'],
    ['seen', '2026-03-04T05:06:07.999Z', '2026-03-04T05:06:07'],
    ['seen', '2026-03-04 05:06', '2026-03-04T05:06:00'],
  ];
  for (const [name, value, stored] of accepted) {
    it(`${name} accepts ${JSON.stringify(value)} as ${JSON.stringify(stored)}`, async () => {
      expect(await write(name, value)).toEqual({ stored });
    });
  }

  const refused: [string, unknown][] = [
    ['city', true],
    ['city', ['a']],
    ['city', { a: 1 }],
    ['size', 'XL'],
    ['tags', ['x', 'nope']],
    ['tags', [1]],
    ['tags', 5],
    ['notes', ['x']],
    ['age', 'abc'],
    ['age', true],
    ['age', [1]],
    // Number() reads these, but they are not decimal numbers (0x10 was stored as 16).
    ['age', '0x10'],
    ['age', '0X1f'],
    ['age', '0b101'],
    ['age', '0o17'],
    ['age', ' 0x10 '],
    ['age', 'Infinity'],
    ['age', '-Infinity'],
    ['age', '1e999'],
    ['age', '   '],
    ['age', '1_000'],
    ['age', '1,5'],
    ['age', '- 5'],
    ['age', '.'],
    ['age', '1e'],
    ['age', 'e5'],
    ['vip', 'maybe'],
    ['vip', 1],
    ['born', '2026-02-30'],
    ['born', '2025-02-29'],
    ['born', '2026/02/28'],
    ['born', '28-02-2026'],
    ['born', 20260228],
    ['seen', 'yesterday'],
    ['seen', '2026-03-04'],
    ['seen', '2026-02-30T10:00:00'],
    ['seen', '2026-03-04T25:00:00'],
    ['seen', 1772600767],
  ];
  for (const [name, value] of refused) {
    it(`${name} refuses ${JSON.stringify(value)} with a 400 naming fields.${name}`, async () => {
      const before = snapshot(s);
      expectFieldError(await write(name, value), `fields.${name}`);
      expect(snapshot(s)).toBe(before);
    });
  }

  it('a numeric field refuses hexadecimal, binary and octal text like any other word, with what it got', async () => {
    for (const value of ['0x10', '0b101', 'five'])
      expect(await write('age', value)).toEqual({
        status: 400,
        body: { error: `fields.age: must be a number for a numeric field, got "${value}"`, field: 'fields.age' },
      });
    // A JSON number too large for a double parses as Infinity: refused, not stored.
    expect(await s.call('PUT', '/1/members/1', { rawBody: '{"fields":{"age":1e999}}' })).toEqual({
      status: 400,
      body: { error: 'fields.age: must be a number for a numeric field, got Infinity', field: 'fields.age' },
    });
    expect((await getMember(s, 1)).fields).toEqual({});
  });

  it('coerceValue: every text path to a number takes decimal notation only', async () => {
    const { coerceValue } = await import('../../src/values.js');
    const numeric = field(9, 'n', { field_type: 'numeric', widget_type: 'number' }) as never;
    expect(coerceValue(numeric, ' -1.5e2 ', 'n')).toBe(-150);
    expect(coerceValue(numeric, 42, 'n')).toBe(42);
    for (const bad of ['', ' ', '\t', '0x10', '0b101', 'Infinity', '1e999', '-1e999', NaN, Infinity, null, true])
      expect(() => coerceValue(numeric, bad, 'n'), String(bad)).toThrow(/^n: must be a number for a numeric field, got /);
  });

  it('trimmed and isDate answer exactly what String.prototype.trim and the YYYY-MM-DD pattern with a real day answer', async () => {
    const { trimmed, isDate } = await import('../../src/values.js');
    // The definitions they replace on an import's hot path.
    const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    const oldIsDate = (t: string) => {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
      if (!m) return false;
      const [y, mo, d] = [+m[1], +m[2], +m[3]];
      if (y < 100 || mo < 1 || mo > 12 || d < 1) return false;
      const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
      return d <= DAYS[mo - 1] + (leap ? 1 : 0);
    };
    // Every kind of edge: each JS whitespace (ASCII, NBSP, line separators, BOM, ideographic
    // space), controls, DEL, non-ASCII letters and digits, at either end or both.
    const ends = [
      '',
      ' ',
      '\t',
      '\n',
      '\r',
      '\v',
      '\f',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u3000',
      '\ufeff',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u0085',
      'é',
      '١',
      'a',
      '~',
      '!',
    ];
    for (const a of ends)
      for (const z of ends)
        for (const mid of ['', 'x', 'Oslo', ' in ', a + z]) {
          const text = a + mid + z;
          expect(trimmed(text), JSON.stringify(text)).toBe(text.trim());
        }
    const dates = [
      '2024-02-29',
      '2023-02-29',
      '1900-02-29',
      '2000-02-29',
      '0099-01-01',
      '0100-01-01',
      '2024-00-10',
      '2024-13-01',
      '2024-04-31',
      '2024-12-31',
      '2024-01-00',
    ];
    const malformed = [
      '2024-1-01',
      '2024/01/01',
      '2024-01-011',
      ' 2024-01-01',
      '2024-01-01 ',
      '２０２４-01-01',
      '2024-0١-01',
      '20240-1-01',
      '',
      '2024-01-01\n',
      'abcd-ef-gh',
    ];
    for (const t of [...dates, ...malformed]) expect(isDate(t), t).toBe(oldIsDate(t));
    expect(dates.filter(isDate)).toEqual(['2024-02-29', '2000-02-29', '0100-01-01', '2024-12-31']);
  });

  it('null or an empty string removes the value', async () => {
    await ok(s, 'PUT', '/1/members/1', { body: { fields: { city: 'Oslo', age: 3, vip: true } } });
    await ok(s, 'PUT', '/1/members/1', { body: { fields: { city: null, age: '' } } });
    expect((await getMember(s, 1)).fields).toEqual({ vip: true });
  });

  it('an unknown field name is a 400 naming it, and nothing is written', async () => {
    const res = await s.call('POST', '/1/members/add', { body: { email: 'n@x.org', fields: { city: 'Oslo', shoe: 44 } } });
    expectFieldError(res, 'fields.shoe');
    expect(res.body.error).toContain('unknown field "shoe"');
    expect(countRows(s, 'members')).toBe(1);
  });

  it('field names match case-insensitively and read back under the shortcut name', async () => {
    await ok(s, 'PUT', '/1/members/1', { body: { fields: { CITY: 'Oslo', Age: 5 } } });
    expect((await getMember(s, 1)).fields).toEqual({ city: 'Oslo', age: 5 });
  });

  it('the same rules apply on add and signup', async () => {
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'n@x.org', fields: { born: '2026-02-30' } } }), 'fields.born');
    await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'G' }] } });
    expectFieldError(
      await s.call('POST', '/1/members/signup', { body: { email: 'n@x.org', group_ids: [1], fields: { age: 'old' } } }),
      'fields.age',
    );
    expect(countRows(s, 'members')).toBe(1);
  });
});
