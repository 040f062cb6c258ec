import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceImports } from '../../src/service/imports/index.js';
import { addMember, atD, countRows, createField, expectFieldError, getMember, ok, snapshot } from './util.js';

let s: TestService;
let region: number;
let office: number;
let city: number;
let flavour: number;
let toppings: number;
beforeEach(async () => {
  s = makeService();
  region = await createField(s, { shortcut_name: 'region', field_type: 'text', widget_type: 'select one', options: ['EU', 'US', 'Asia'] });
  office = await createField(s, {
    shortcut_name: 'office',
    field_type: 'text',
    widget_type: 'radio',
    options: ['Oslo', 'Paris', 'Austin', 'Tokyo'],
  });
  city = await createField(s, { shortcut_name: 'city', field_type: 'text' });
  flavour = await createField(s, {
    shortcut_name: 'flavour',
    field_type: 'text[]',
    widget_type: 'check_multiple',
    options: ['sweet', 'savoury'],
  });
  toppings = await createField(s, {
    shortcut_name: 'toppings',
    field_type: 'text[]',
    widget_type: 'select multiple',
    options: ['jam', 'honey', 'cheese', 'ham'],
  });
});
afterEach(() => s.close());

const REGION_OFFICE = { EU: ['Oslo', 'Paris'], US: ['Austin'] };
const create = (body: Record<string, unknown>) => s.call('POST', '/1/fields/relationships', { body });
const regionOffice = () =>
  ok(s, 'POST', '/1/fields/relationships', {
    body: { relationship_name: 'Region → Office', parent_field_id: region, child_field_id: office, options: REGION_OFFICE },
  });

const related = (field_id: number, shortcut_name: string, widget_type: string, options: string[]) => ({
  field_id,
  shortcut_name,
  display_name: shortcut_name,
  options,
  widget_type,
});

describe('the five operations', () => {
  it('create answers the whole record in the shape of the spec; get and list answer the same', async () => {
    const record = {
      relationship_id: 1,
      relationship_name: 'Region → Office',
      account_id: 1,
      created_at: atD(T0),
      parent_field: related(region, 'region', 'select one', ['EU', 'US', 'Asia']),
      child_field: related(office, 'office', 'radio', ['Oslo', 'Paris', 'Austin', 'Tokyo']),
      options: { EU: ['Oslo', 'Paris'], US: ['Austin'] },
    };
    expect(await regionOffice()).toEqual(record);
    expect(await s.call('GET', '/1/fields/relationships/1')).toEqual({ status: 200, body: record });
    expect(await s.call('GET', '/1/fields/relationships')).toEqual({ status: 200, body: [record] });
  });

  it('PUT takes any of the create parameters and answers the updated record; DELETE answers true; unknown ids are 404', async () => {
    await regionOffice();
    const renamed = await ok(s, 'PUT', '/1/fields/relationships/1', { body: { relationship_name: 'Where' } });
    expect(renamed).toMatchObject({ relationship_id: 1, relationship_name: 'Where', options: REGION_OFFICE });
    const moved = await ok(s, 'PUT', '/1/fields/relationships/1', { body: { options: { Asia: ['Tokyo'] } } });
    expect(moved.options).toEqual({ Asia: ['Tokyo'] });
    const swapped = await ok(s, 'PUT', '/1/fields/relationships/1', {
      body: { parent_field_id: flavour, child_field_id: toppings, options: { sweet: ['jam', 'honey'] } },
    });
    expect(swapped).toMatchObject({ parent_field: { field_id: flavour }, child_field: { field_id: toppings }, relationship_name: 'Where' });
    expect(await s.call('DELETE', '/1/fields/relationships/1')).toEqual({ status: 200, body: true });
    expect(await s.call('GET', '/1/fields/relationships')).toEqual({ status: 200, body: [] });
    for (const [method, body] of [['GET'], ['PUT', { relationship_name: 'x' }], ['DELETE']] as const)
      expect(await s.call(method, '/1/fields/relationships/1', { body })).toEqual({
        status: 404,
        body: { error: 'field relationship 1 not found' },
      });
  });
});

describe('the rules: each a 400 naming the problem, writing nothing', () => {
  it('a duplicate name (any case)', async () => {
    await regionOffice();
    const before = snapshot(s);
    expect(await create({ relationship_name: 'region → OFFICE', parent_field_id: flavour, child_field_id: toppings, options: {} })).toEqual(
      {
        status: 400,
        body: {
          error: 'relationship_name: a relationship named "region → OFFICE" already exists (relationship 1)',
          field: 'relationship_name',
        },
      },
    );
    expect(snapshot(s)).toBe(before);
    expect(countRows(s, 'field_relationships')).toBe(1);
  });

  it('options that are not options of their fields', async () => {
    expect(await create({ relationship_name: 'R', parent_field_id: region, child_field_id: office, options: { Mars: ['Oslo'] } })).toEqual({
      status: 400,
      body: { error: 'options.Mars: "Mars" is not an option of the parent field region (EU, US, Asia)', field: 'options.Mars' },
    });
    expect(
      await create({ relationship_name: 'R', parent_field_id: region, child_field_id: office, options: { EU: ['Oslo', 'Rome', 'Bern'] } }),
    ).toEqual({
      status: 400,
      body: {
        error: 'options.EU: "Rome", "Bern" are not options of the child field office (Oslo, Paris, Austin, Tokyo)',
        field: 'options.EU',
      },
    });
    expectFieldError(
      await create({ relationship_name: 'R', parent_field_id: region, child_field_id: office, options: { EU: 'Oslo' } }),
      'options.EU',
    );
    expectFieldError(await create({ relationship_name: 'R', parent_field_id: region, child_field_id: office, options: ['EU'] }), 'options');
    expect(countRows(s, 'field_relationships')).toBe(0);
  });

  it('a field that already belongs to another relationship, as parent or as child', async () => {
    await regionOffice();
    for (const [parent, child, param, name] of [
      [region, flavour, 'parent_field_id', 'region'],
      [flavour, region, 'child_field_id', 'region'],
      [office, flavour, 'parent_field_id', 'office'],
      [flavour, office, 'child_field_id', 'office'],
    ] as const)
      expect(await create({ relationship_name: 'Second', parent_field_id: parent, child_field_id: child, options: {} })).toEqual({
        status: 400,
        body: {
          error: `${param}: field ${name} already belongs to relationship 1 ("Region → Office"); a field may belong to only one relationship`,
          field: param,
        },
      });
    // PUT checks the whole configuration again, its own fields excepted.
    await ok(s, 'POST', '/1/fields/relationships', {
      body: { relationship_name: 'Taste', parent_field_id: flavour, child_field_id: toppings, options: {} },
    });
    expectFieldError(await s.call('PUT', '/1/fields/relationships/2', { body: { child_field_id: office } }), 'child_field_id');
    expect((await s.call('PUT', '/1/fields/relationships/1', { body: { child_field_id: office, options: REGION_OFFICE } })).status).toBe(
      200,
    );
  });

  it('a parent and child that are the same field', async () => {
    expect(await create({ relationship_name: 'R', parent_field_id: region, child_field_id: region, options: {} })).toEqual({
      status: 400,
      body: { error: `child_field_id: the parent and the child are the same field (${region})`, field: 'child_field_id' },
    });
  });

  it('a field type that has no options, and a field that does not exist', async () => {
    expect(await create({ relationship_name: 'R', parent_field_id: city, child_field_id: office, options: {} })).toEqual({
      status: 400,
      body: {
        error:
          'parent_field_id: field city is a text field, which has no options (a relationship takes check_multiple, select multiple, select one, radio fields)',
        field: 'parent_field_id',
      },
    });
    expectFieldError(
      await create({ relationship_name: 'R', parent_field_id: region, child_field_id: city, options: {} }),
      'child_field_id',
    );
    expect(await create({ relationship_name: 'R', parent_field_id: 99, child_field_id: office, options: {} })).toEqual({
      status: 400,
      body: { error: 'parent_field_id: there is no field 99', field: 'parent_field_id' },
    });
  });

  it('PUT re-checks the whole configuration: new options against the stored fields', async () => {
    await regionOffice();
    expectFieldError(await s.call('PUT', '/1/fields/relationships/1', { body: { options: { EU: ['Rome'] } } }), 'options.EU');
    // The stored options no longer fit a new child.
    expectFieldError(await s.call('PUT', '/1/fields/relationships/1', { body: { child_field_id: toppings } }), 'options.EU');
    expect((await ok(s, 'GET', '/1/fields/relationships/1')).options).toEqual(REGION_OFFICE);
  });

  it('the required parameters of create', async () => {
    expectFieldError(await create({ parent_field_id: region, child_field_id: office, options: {} }), 'relationship_name');
    expectFieldError(await create({ relationship_name: 'R', child_field_id: office, options: {} }), 'parent_field_id');
    expectFieldError(await create({ relationship_name: 'R', parent_field_id: region, options: {} }), 'child_field_id');
    expectFieldError(await create({ relationship_name: 'R', parent_field_id: region, child_field_id: office }), 'options');
  });
});

describe('fields in a relationship', () => {
  it('deleting a field that is in a relationship is refused (delete the relationship first)', async () => {
    await regionOffice();
    expect(await s.call('DELETE', `/1/fields/${office}`)).toEqual({
      status: 400,
      body: { error: 'field_id: field office is in relationship 1 ("Region → Office"); delete the relationship first', field: 'field_id' },
    });
    expect((await ok(s, 'GET', `/1/fields/${office}`)).deleted_at).toBe(null);
    await ok(s, 'DELETE', '/1/fields/relationships/1');
    expect(await s.call('DELETE', `/1/fields/${office}`)).toEqual({ status: 200, body: true });
  });

  it('a field keeps the options its relationship uses', async () => {
    await regionOffice();
    expect(await s.call('PUT', `/1/fields/${office}`, { body: { options: ['Oslo', 'Austin'] } })).toEqual({
      status: 400,
      body: {
        error:
          'options: field office is in relationship 1 ("Region → Office"), which uses "Paris"; change or delete the relationship first',
        field: 'options',
      },
    });
    expectFieldError(await s.call('PUT', `/1/fields/${region}`, { body: { widget_type: 'text' } }), 'options');
    expect(await s.call('PUT', `/1/fields/${office}`, { body: { options: ['Oslo', 'Paris', 'Austin', 'Bern'] } })).toEqual({
      status: 200,
      body: office,
    });
  });
});

// ------------------------------------------------------------------ enforcement on member writes

const ERR_EU_AUSTIN =
  'fields.office: "Austin" is not allowed when region is "EU" (relationship "Region → Office": "EU" allows "Oslo", "Paris")';

describe('enforced on every member write', () => {
  beforeEach(regionOffice);

  it('add: a child value the parent value does not allow is a 400 saying what it allows; allowed pairs and half-pairs pass', async () => {
    const before = snapshot(s);
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { region: 'EU', office: 'Austin' } } })).toEqual({
      status: 400,
      body: { error: ERR_EU_AUSTIN, field: 'fields.office' },
    });
    expect(snapshot(s)).toBe(before);
    const id = await addMember(s, 'a@x.org', { fields: { region: 'EU', office: 'Paris' } });
    expect((await getMember(s, id)).fields).toEqual({ region: 'EU', office: 'Paris' });
    // Either one alone is no conflict.
    await addMember(s, 'b@x.org', { fields: { office: 'Tokyo' } });
    await addMember(s, 'c@x.org', { fields: { region: 'US' } });
    // A parent option the relationship does not name allows no child value.
    expect(await s.call('POST', '/1/members/add', { body: { email: 'd@x.org', fields: { region: 'Asia', office: 'Tokyo' } } })).toEqual({
      status: 400,
      body: {
        error: 'fields.office: "Tokyo" is not allowed when region is "Asia" (relationship "Region → Office": "Asia" allows no value)',
        field: 'fields.office',
      },
    });
  });

  it('add and update of an existing member: the stored value of the other field counts', async () => {
    const id = await addMember(s, 'a@x.org', { fields: { region: 'EU', office: 'Oslo' } });
    expect(await s.call('PUT', `/1/members/${id}`, { body: { fields: { office: 'Austin' } } })).toEqual({
      status: 400,
      body: { error: ERR_EU_AUSTIN, field: 'fields.office' },
    });
    expectFieldError(await s.call('PUT', `/1/members/${id}`, { body: { fields: { region: 'US' } } }), 'fields.office');
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { office: 'Austin' } } }), 'fields.office');
    expect((await getMember(s, id)).fields).toEqual({ region: 'EU', office: 'Oslo' });
    // Changing both together, or clearing the child first, is fine.
    expect(await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { region: 'US', office: 'Austin' } } })).toBe(true);
    expect(await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { office: null } } })).toBe(true);
    expect(await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { region: 'EU' } } })).toBe(true);
    // A write that touches neither field is not held up by them.
    expect(await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { city: 'Oslo' } } })).toBe(true);
  });

  it('signup', async () => {
    const g = (await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'G' }] } }))[0].member_group_id;
    expect(
      await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g], fields: { region: 'EU', office: 'Austin' } } }),
    ).toEqual({
      status: 400,
      body: { error: ERR_EU_AUSTIN, field: 'fields.office' },
    });
    expect(countRows(s, 'members')).toBe(0);
  });

  it('multiple-choice fields: each child option must be allowed by one of the parent options', async () => {
    await ok(s, 'POST', '/1/fields/relationships', {
      body: {
        relationship_name: 'Taste',
        parent_field_id: flavour,
        child_field_id: toppings,
        options: { sweet: ['jam', 'honey'], savoury: ['cheese', 'ham'] },
      },
    });
    await addMember(s, 'a@x.org', { fields: { flavour: ['sweet', 'savoury'], toppings: ['jam', 'ham'] } });
    expect(
      await s.call('POST', '/1/members/add', { body: { email: 'b@x.org', fields: { flavour: ['sweet'], toppings: ['jam', 'ham'] } } }),
    ).toEqual({
      status: 400,
      body: {
        error: 'fields.toppings: "ham" is not allowed when flavour is "sweet" (relationship "Taste": "sweet" allows "jam", "honey")',
        field: 'fields.toppings',
      },
    });
  });

  it('bulk add (POST /members): a row error naming the row, the other rows written', async () => {
    const { import_id } = await ok(s, 'POST', '/1/members', {
      body: {
        members: [
          { email: 'a@x.org', region: 'EU', office: 'Oslo' },
          { email: 'b@x.org', region: 'EU', office: 'Austin' },
          // The Python client's form: the values nested under fields.
          { email: 'c@x.org', fields: { region: 'US', office: 'Paris' } },
        ],
      },
    });
    for (let i = 0; i < 20 && advanceImports(s.db, s.clock, 10_000); i++);
    expect(await ok(s, 'GET', `/1/members/imports/${import_id}`)).toMatchObject({ status: 'o', num_members_added: 1, num_errors: 2 });
    expect(countRows(s, 'members')).toBe(1);
  });

  it('streamed import rows, as member objects and as CSV rows: an error per bad row with its position in the batch (the CLI says its line)', async () => {
    const { import_id } = await ok(s, 'POST', '/1/members/imports', { body: {} });
    const objects = await ok(s, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: {
        members: [
          { email: 'a@x.org', region: 'EU', office: 'Austin' },
          { email: 'b@x.org', region: 'US', office: 'Austin' },
        ],
      },
    });
    expect(objects.errors).toEqual([
      {
        index: 0,
        email: 'a@x.org',
        error: 'office: "Austin" is not allowed when region is "EU" (relationship "Region → Office": "EU" allows "Oslo", "Paris")',
      },
    ]);
    const csv = await ok(s, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: {
        offset: 2,
        columns: ['email', 'office', 'region'],
        rows: [
          ['c@x.org', 'Oslo', 'EU'],
          ['d@x.org', 'Tokyo', 'US'],
          // An empty cell leaves the value as it is: no pair to check in the row.
          ['e@x.org', 'Tokyo', ''],
        ],
      },
    });
    expect(csv.errors).toEqual([
      {
        index: 1,
        email: 'd@x.org',
        error: 'office: "Tokyo" is not allowed when region is "US" (relationship "Region → Office": "US" allows "Austin")',
      },
    ]);
    expect(csv).toMatchObject({ added: 2, num_members: 5 });
  });
});

describe.each([false, true])("import rows against the member's stored values (import writer thread: %s)", (threaded) => {
  let t: TestService;
  beforeEach(async () => {
    t = makeService(T0, { importWriter: threaded });
    if (threaded) await t.router.importWriter!.whenReady();
    const field = (body: Record<string, unknown>) =>
      ok(t, 'POST', '/1/fields', { body: { display_name: String(body.shortcut_name), ...body } });
    const r = await field({ shortcut_name: 'region', field_type: 'text', widget_type: 'select one', options: ['EU', 'US', 'Asia'] });
    const o = await field({
      shortcut_name: 'office',
      field_type: 'text',
      widget_type: 'radio',
      options: ['Oslo', 'Paris', 'Austin', 'Tokyo'],
    });
    await field({ shortcut_name: 'city', field_type: 'text' });
    await ok(t, 'POST', '/1/fields/relationships', {
      body: { relationship_name: 'Region → Office', parent_field_id: r, child_field_id: o, options: REGION_OFFICE },
    });
    for (const email of ['a@x.org', 'b@x.org', 'c@x.org'])
      await ok(t, 'POST', '/1/members/add', { body: { email, fields: { region: 'EU', office: 'Oslo' } } });
  });
  afterEach(() => t.close());

  it('a row that gives one of the pair is checked against what the member holds; the others are written', async () => {
    const { import_id } = await ok(t, 'POST', '/1/members/imports', { body: {} });
    const objects = await ok(t, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: {
        members: [
          { email: 'a@x.org', office: 'Austin', city: 'A' },
          { email: 'b@x.org', office: 'Paris', city: 'B' },
          { email: 'new@x.org', office: 'Tokyo', city: 'N' },
        ],
      },
    });
    expect(objects.errors).toEqual([
      {
        index: 0,
        email: 'a@x.org',
        error: 'office: "Austin" is not allowed when region is "EU" (relationship "Region → Office": "EU" allows "Oslo", "Paris")',
      },
    ]);
    expect(objects).toMatchObject({ added: 1, updated: 1 });
    const csv = await ok(t, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: {
        offset: 3,
        columns: ['email', 'region', 'office'],
        rows: [
          ['c@x.org', 'US', ''],
          ['b@x.org', '', 'Oslo'],
          ['a@x.org', '', ''],
        ],
      },
    });
    expect(csv.errors).toEqual([
      {
        index: 0,
        email: 'c@x.org',
        error: 'office: "Oslo" is not allowed when region is "US" (relationship "Region → Office": "US" allows "Austin")',
      },
    ]);
    await ok(t, 'POST', `/1/members/imports/${import_id}/finish`, { body: {} });
    const fields = async (email: string) => (await ok(t, 'GET', `/1/members/email/${email}`)).fields;
    expect(await fields('a@x.org')).toEqual({ region: 'EU', office: 'Oslo' });
    // b's second row is the import's duplicate (an address of an earlier batch): not written.
    expect(csv.duplicates).toBe(1);
    expect(await fields('b@x.org')).toEqual({ region: 'EU', office: 'Paris', city: 'B' });
    expect(await fields('c@x.org')).toEqual({ region: 'EU', office: 'Oslo' });
    expect(await fields('new@x.org')).toEqual({ office: 'Tokyo', city: 'N' });
    // Clearing one of the pair breaks nothing.
    const { import_id: second } = await ok(t, 'POST', '/1/members/imports', { body: {} });
    const cleared = await ok(t, 'POST', `/1/members/imports/${second}/rows`, { body: { members: [{ email: 'a@x.org', region: null }] } });
    expect(cleared.errors).toEqual([]);
    expect(await fields('a@x.org')).toEqual({ office: 'Oslo' });
  });

  it('an add-only import leaves existing members as they are, so their rows are skipped, not refused', async () => {
    const { import_id } = await ok(t, 'POST', '/1/members/imports', { body: { add_only: true } });
    const batch = await ok(t, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: { members: [{ email: 'a@x.org', office: 'Austin' }] },
    });
    expect(batch).toMatchObject({ errors: [], skipped: 1, added: 0 });
  });
});

// ------------------------------------------------------------------ field rules

describe('required fields', () => {
  let g: number;
  beforeEach(async () => {
    await ok(s, 'PUT', `/1/fields/${city}`, { body: { required: true } });
    g = (await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'G' }] } }))[0].member_group_id;
  });

  it('a signup (a form) must fill every required field', async () => {
    expect(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g] } })).toEqual({
      status: 400,
      body: { error: 'fields.city: is required on a signup (missing: city)', field: 'fields.city' },
    });
    expectFieldError(
      await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g], fields: { city: '' } } }),
      'fields.city',
    );
    expect(countRows(s, 'members')).toBe(0);
    expect(
      (await ok(s, 'POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g], fields: { City: 'Oslo' } } })).status,
    ).toBe('a');
  });

  it('an API add or an import may leave it out, but no write may empty it', async () => {
    const id = await addMember(s, 'a@x.org');
    await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { city: 'Oslo' } } });
    for (const value of [null, ''])
      expect(await s.call('PUT', `/1/members/${id}`, { body: { fields: { city: value } } })).toEqual({
        status: 400,
        body: { error: 'fields.city: city is a required field; it cannot be emptied', field: 'fields.city' },
      });
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { city: null } } }), 'fields.city');
    expect((await getMember(s, id)).fields).toEqual({ city: 'Oslo' });
    const { import_id } = await ok(s, 'POST', '/1/members/imports', { body: {} });
    const batch = await ok(s, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: { members: [{ email: 'a@x.org', city: null }, { email: 'b@x.org' }] },
    });
    expect(batch.errors).toEqual([{ index: 0, email: 'a@x.org', error: 'city: city is a required field; it cannot be emptied' }]);
    // A CSV empty cell leaves the value as it is, so it is no error.
    const csv = await ok(s, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: { offset: 2, columns: ['email', 'city'], rows: [['a@x.org', '']] },
    });
    expect(csv.errors).toEqual([]);
    expect((await getMember(s, id)).fields).toEqual({ city: 'Oslo' });
  });
});

describe('options of select, radio and multiple-choice fields on every write path', () => {
  it('add, update, signup, bulk and import rows: a value outside the options is an error naming the field and its options', async () => {
    const error = 'fields.office: "Rome" is not one of the options of office (Oslo, Paris, Austin, Tokyo)';
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { office: 'Rome' } } })).toEqual({
      status: 400,
      body: { error, field: 'fields.office' },
    });
    const id = await addMember(s, 'a@x.org');
    expectFieldError(await s.call('PUT', `/1/members/${id}`, { body: { fields: { toppings: ['jam', 'nutella'] } } }), 'fields.toppings');
    expectFieldError(
      await s.call('POST', '/1/members/signup', { body: { email: 'b@x.org', group_ids: [], fields: { region: 'Mars' } } }),
      'fields.region',
    );
    const { import_id } = await ok(s, 'POST', '/1/members/imports', { body: {} });
    const csv = await ok(s, 'POST', `/1/members/imports/${import_id}/rows`, {
      body: {
        columns: ['email', 'flavour'],
        rows: [
          ['c@x.org', 'bitter'],
          ['d@x.org', 'sweet'],
        ],
      },
    });
    expect(csv.errors).toEqual([
      { index: 0, email: 'c@x.org', error: 'flavour: "bitter" is not one of the options of flavour (sweet, savoury)' },
    ]);
  });
});
