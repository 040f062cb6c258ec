import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { addMember, countRows, expectFieldError, ok, setStatus } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

/** T0 (2026-03-04T05:06:07Z) as subscriptions answer it. */
const T0_TEXT = 'Wed, 04 Mar 2026 05:06:07 GMT';
const LATER = '2026-03-05T10:00:00.000Z';
const LATER_TEXT = 'Thu, 05 Mar 2026 10:00:00 GMT';

const subscription = (subscription_id: number, subscription_name: string, over: Record<string, unknown> = {}) => ({
  subscription_id,
  account_id: 1,
  subscription_name,
  description: '',
  member_count: 0,
  optout_count: 0,
  created_at: T0_TEXT,
  modified_at: T0_TEXT,
  deleted_at: null,
  purged_at: null,
  settings: null,
  subscription_order: null,
  ...over,
});
const listItem = (...args: Parameters<typeof subscription>) => ({ ...subscription(...args), import_status: null });

async function create(name: string, extra: Record<string, unknown> = {}): Promise<number> {
  return (await ok(s, 'POST', '/1/subscriptions', { body: { name, ...extra } })).subscription_id;
}

async function members(...emails: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const e of emails) ids.push(await addMember(s, e));
  return ids;
}

const bulk = (id: number, body: unknown) => s.call('POST', `/1/subscriptions/${id}/members/bulk`, { body });

async function counts(id: number): Promise<[number, number]> {
  const sub = await ok(s, 'GET', `/1/subscriptions/${id}`);
  return [sub.member_count, sub.optout_count];
}

const idsOf = (rows: { member_id: number }[]) => rows.map((r) => r.member_id);
const subscribed = async (id: number, query?: Record<string, string>) =>
  idsOf(await ok(s, 'GET', `/1/subscriptions/${id}/members`, { query }));
const optedOut = async (id: number, query?: Record<string, string>) =>
  idsOf(await ok(s, 'GET', `/1/subscriptions/${id}/optouts`, { query }));

/** Every table, every row: a failed request must leave this unchanged. */
function snapshot(): string {
  const tables = (
    s.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((t) => t.name);
  // Ordered by the first two columns, or the only one (the e-mail search index has one).
  const order = (t: string) => ((s.db.prepare('SELECT count(*) FROM pragma_table_info(?)').pluck().get(t) as number) > 1 ? '1, 2' : '1');
  return JSON.stringify(tables.map((t) => [t, s.db.prepare(`SELECT * FROM ${t} ORDER BY ${order(t)}`).all()]));
}

/** A finished import of account 1 (or another) that recorded these change types, written straight into the tables. */
function simulateImport(rows: [memberId: number, changeType: 'a' | 'u' | 's'][], opts: { account?: number; status?: string } = {}): number {
  const importId = Number(
    s.db
      .prepare('INSERT INTO member_imports (account_id, status, created_at) VALUES (?, ?, ?)')
      .run(opts.account ?? 1, opts.status ?? 'o', '2026-03-04T05:06:07.000000').lastInsertRowid,
  );
  const insert = s.db.prepare('INSERT INTO import_members (import_id, member_id, change_type) VALUES (?, ?, ?)');
  for (const [memberId, changeType] of rows) insert.run(importId, memberId, changeType);
  return importId;
}

// ------------------------------------------------------------------ create, read, list

describe('POST and GET /{account_id}/subscriptions', () => {
  it('lists none on a fresh account', async () => {
    expect(await s.call('GET', '/1/subscriptions')).toEqual({ status: 200, body: [] });
  });

  it('creates a subscription (200) with RFC 1123 GMT dates, and reads it back', async () => {
    const res = await s.call('POST', '/1/subscriptions', { body: { name: '  Weekly digest ', description: 'The week' } });
    expect(res).toEqual({ status: 200, body: subscription(1, 'Weekly digest', { description: 'The week' }) });
    expect(await s.call('GET', '/1/subscriptions/1')).toEqual({
      status: 200,
      body: subscription(1, 'Weekly digest', { description: 'The week' }),
    });
    // import_status is in list items only.
    expect(await ok(s, 'GET', '/1/subscriptions')).toEqual([listItem(1, 'Weekly digest', { description: 'The week' })]);
    expect(await ok(s, 'GET', '/1/subscriptions/1')).not.toHaveProperty('import_status');
  });

  it('accepts settings and subscription_order as extensions', async () => {
    const body = await ok(s, 'POST', '/1/subscriptions', {
      body: { name: 'Offers', settings: { show_on_default_preference_form: true }, subscription_order: 3 },
    });
    expect(body).toEqual(subscription(1, 'Offers', { settings: { show_on_default_preference_form: true }, subscription_order: 3 }));
    expectFieldError(
      await s.call('POST', '/1/subscriptions', { body: { name: 'X', settings: { show_on_default_preference_form: 'yes' } } }),
      'settings.show_on_default_preference_form',
    );
    expectFieldError(
      await s.call('POST', '/1/subscriptions', { body: { name: 'X', settings: {} } }),
      'settings.show_on_default_preference_form',
    );
    expectFieldError(await s.call('POST', '/1/subscriptions', { body: { name: 'X', subscription_order: 1.5 } }), 'subscription_order');
  });

  it('requires a name, refuses blank names and unknown parameters', async () => {
    expectFieldError(await s.call('POST', '/1/subscriptions', { body: {} }), 'name');
    expectFieldError(await s.call('POST', '/1/subscriptions', { body: { name: '' } }), 'name');
    expectFieldError(await s.call('POST', '/1/subscriptions', { body: { name: '   ' } }), 'name');
    expectFieldError(await s.call('POST', '/1/subscriptions', { body: { name: 7 } }), 'name');
    expect(countRows(s, 'subscriptions')).toBe(0);
  });

  it('keeps names unique among live subscriptions, in any case; a deleted one frees its name', async () => {
    await create('News');
    const before = snapshot();
    expect(await s.call('POST', '/1/subscriptions', { body: { name: 'NEWS' } })).toEqual({
      status: 400,
      body: { error: 'name: a subscription named "NEWS" already exists (subscription 1)', field: 'name' },
    });
    expect(snapshot()).toBe(before);
    await ok(s, 'DELETE', '/1/subscriptions/1');
    expect(await create('news')).toBe(2);
  });

  it('answers 404 naming the subscription', async () => {
    for (const [method, path] of [
      ['GET', '/1/subscriptions/9'],
      ['GET', '/1/subscriptions/9/members'],
      ['GET', '/1/subscriptions/9/optouts'],
      ['PUT', '/1/subscriptions/9'],
      ['DELETE', '/1/subscriptions/9'],
    ]) {
      expect(await s.call(method, path, method === 'PUT' ? { body: {} } : undefined), `${method} ${path}`).toEqual({
        status: 404,
        body: { error: 'subscription 9 not found' },
      });
    }
    expect(await bulk(9, { member_ids: [1] })).toEqual({ status: 404, body: { error: 'subscription 9 not found' } });
    expectFieldError(await s.call('GET', '/1/subscriptions/abc'), 'subscription_id');
  });

  it('each account has its own subscriptions, names and members', async () => {
    const [a] = await members('a@example.com');
    await create('News');
    expect(await s.call('GET', '/2/subscriptions')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
    // A sub-account of account 1, which its owner may act on.
    s.db.prepare("INSERT INTO accounts (account_id, account_name, parent_account_id, created_at) VALUES (2, 'sub', 1, 'x')").run();
    expect(await ok(s, 'GET', '/2/subscriptions')).toEqual([]);
    expect(await s.call('GET', '/2/subscriptions/1')).toEqual({ status: 404, body: { error: 'subscription 1 not found' } });
    const other = await ok(s, 'POST', '/2/subscriptions', { body: { name: 'News' } });
    expect(other).toEqual(subscription(2, 'News', { account_id: 2 }));
    // A member of account 1 is not a member of account 2.
    expect(await s.call('POST', '/2/subscriptions/2/members/bulk', { body: { member_ids: [a] } })).toEqual({
      status: 404,
      body: { error: `member ${a} not found` },
    });
    expect(await s.call('PUT', `/2/subscriptions/2/members/${a}/optout`, { body: {} })).toEqual({
      status: 404,
      body: { error: `member ${a} not found` },
    });
  });
});

// ------------------------------------------------------------------ update and delete

describe('PUT and DELETE /{account_id}/subscriptions/{subscription_id}', () => {
  it('renames and re-describes; modified_at moves, created_at stays', async () => {
    await create('News', { description: 'old' });
    s.clock.set(LATER);
    expect(await s.call('PUT', '/1/subscriptions/1', { body: { name: 'Newsletter', description: 'new' } })).toEqual({
      status: 200,
      body: subscription(1, 'Newsletter', { description: 'new', modified_at: LATER_TEXT }),
    });
  });

  it('takes name only when renaming; an update that changes nothing leaves modified_at', async () => {
    await create('News', { settings: { show_on_default_preference_form: false }, subscription_order: 1 });
    s.clock.set(LATER);
    expect(await ok(s, 'PUT', '/1/subscriptions/1', { body: {} })).toEqual(
      subscription(1, 'News', { settings: { show_on_default_preference_form: false }, subscription_order: 1 }),
    );
    expect(await ok(s, 'PUT', '/1/subscriptions/1', { body: { name: 'News', description: '' } })).toHaveProperty('modified_at', T0_TEXT);
    // A change of case is a rename of its own name, not a conflict.
    expect((await ok(s, 'PUT', '/1/subscriptions/1', { body: { name: 'NEWS' } })).subscription_name).toBe('NEWS');
    expect(await ok(s, 'PUT', '/1/subscriptions/1', { body: { settings: null, subscription_order: null } })).toEqual(
      subscription(1, 'NEWS', { modified_at: LATER_TEXT }),
    );
  });

  it('refuses a rename onto another live name and changes nothing', async () => {
    await create('News');
    await create('Offers', { description: 'd' });
    const before = snapshot();
    const res = await s.call('PUT', '/1/subscriptions/2', { body: { name: ' news ', description: 'changed' } });
    expect(res).toEqual({
      status: 400,
      body: { error: 'name: a subscription named "news" already exists (subscription 1)', field: 'name' },
    });
    expectFieldError(await s.call('PUT', '/1/subscriptions/2', { body: { name: '' } }), 'name');
    expectFieldError(await s.call('PUT', '/1/subscriptions/2', { body: { name: '  ' } }), 'name');
    expect(snapshot()).toBe(before);
  });

  it('deletes: answers the subscription with deleted_at set, keeps it out of the default list', async () => {
    const [ada] = await members('ada@example.com');
    await create('News');
    await create('Offers');
    await bulk(1, { member_ids: [ada] });
    s.clock.set(LATER);
    const deleted = subscription(1, 'News', { member_count: 1, deleted_at: LATER_TEXT, modified_at: LATER_TEXT });
    expect(await s.call('DELETE', '/1/subscriptions/1')).toEqual({ status: 200, body: deleted });
    expect(await ok(s, 'GET', '/1/subscriptions')).toEqual([listItem(2, 'Offers')]);
    expect(await ok(s, 'GET', '/1/subscriptions', { query: { include_deleted: 'true' } })).toEqual([
      { ...deleted, import_status: null },
      listItem(2, 'Offers'),
    ]);
    expect(await ok(s, 'GET', '/1/subscriptions', { query: { deleted_only: 'true' } })).toEqual([{ ...deleted, import_status: null }]);
    // deleted_only wins over include_deleted; false and 0 are the defaults.
    expect(await ok(s, 'GET', '/1/subscriptions', { query: { deleted_only: 'true', include_deleted: 'true' } })).toHaveLength(1);
    expect(await ok(s, 'GET', '/1/subscriptions', { query: { deleted_only: 'false', include_deleted: '0' } })).toHaveLength(1);
    expectFieldError(await s.call('GET', '/1/subscriptions', { query: { deleted_only: 'maybe' } }), 'deleted_only');
    // An unknown flag is ignored: the default list.
    expect(await ok(s, 'GET', '/1/subscriptions', { query: { deleted: 'true' } })).toHaveLength(1);
    // Reads by id still work and show the members; a second DELETE answers the same.
    expect(await ok(s, 'GET', '/1/subscriptions/1')).toEqual(deleted);
    expect(await subscribed(1)).toEqual([ada]);
    s.clock.set('2026-04-01T00:00:00Z');
    expect(await s.call('DELETE', '/1/subscriptions/1')).toEqual({ status: 200, body: deleted });
  });

  it('a deleted subscription takes no more writes', async () => {
    const [ada] = await members('ada@example.com');
    await create('News');
    await ok(s, 'DELETE', '/1/subscriptions/1');
    const before = snapshot();
    const gone = { status: 404, body: { error: 'subscription 1 not found (it was deleted)' } };
    expect(await s.call('PUT', '/1/subscriptions/1', { body: { description: 'x' } })).toEqual(gone);
    expect(await bulk(1, { member_ids: [ada] })).toEqual(gone);
    expect(await s.call('PUT', `/1/subscriptions/1/members/${ada}/optout`, { body: {} })).toEqual(gone);
    expect(await s.call('DELETE', `/1/subscriptions/1/members/${ada}`)).toEqual(gone);
    expect(snapshot()).toBe(before);
  });
});

// ------------------------------------------------------------------ members and counts

describe('POST /{account_id}/subscriptions/{subscription_id}/members/bulk', () => {
  it('subscribes members by id (true); repeats and members already in change nothing', async () => {
    const [a, b, c] = await members('a@example.com', 'b@example.com', 'c@example.com');
    await create('News');
    expect(await bulk(1, { member_ids: [a, b, a] })).toEqual({ status: 200, body: true });
    expect(await counts(1)).toEqual([2, 0]);
    s.clock.set(LATER);
    expect(await bulk(1, { member_ids: [b, c] })).toEqual({ status: 200, body: true });
    expect(await subscribed(1)).toEqual([a, b, c]);
    const rows = s.db.prepare('SELECT member_id, status, subscribed_at, opted_out_at FROM subscription_members ORDER BY member_id').all();
    expect(rows).toEqual([
      { member_id: a, status: 'subscribed', subscribed_at: '2026-03-04T05:06:07.000000', opted_out_at: null },
      { member_id: b, status: 'subscribed', subscribed_at: '2026-03-04T05:06:07.000000', opted_out_at: null },
      { member_id: c, status: 'subscribed', subscribed_at: '2026-03-05T10:00:00.000000', opted_out_at: null },
    ]);
    // Membership is not a change of the subscription record.
    expect((await ok(s, 'GET', '/1/subscriptions/1')).modified_at).toBe(T0_TEXT);
  });

  it('takes exactly one of member_ids and import_id (400 otherwise)', async () => {
    const [a] = await members('a@example.com');
    await create('News');
    const importId = simulateImport([[a, 'a']]);
    const before = snapshot();
    expect(await bulk(1, {})).toEqual({
      status: 400,
      body: { error: 'give member_ids (an array of member ids) or import_id' },
    });
    expect(await bulk(1, { member_ids: [a], import_id: importId })).toEqual({
      status: 400,
      body: { error: 'give member_ids or import_id, not both' },
    });
    expectFieldError(await bulk(1, { member_ids: [] }), 'member_ids');
    expectFieldError(await bulk(1, { member_ids: [a, '2'] }), 'member_ids[1]');
    expectFieldError(await bulk(1, { member_ids: 1 }), 'member_ids');
    expectFieldError(await bulk(1, { import_id: 'x' }), 'import_id');
    expect((await bulk(1, { members: [a] })).status).toBe(400);
    expect(snapshot()).toBe(before);
  });

  it('is all or none: an unknown member is a 404 and subscribes nobody', async () => {
    const [a] = await members('a@example.com');
    await create('News');
    const before = snapshot();
    expect(await bulk(1, { member_ids: [a, 99] })).toEqual({ status: 404, body: { error: 'member 99 not found' } });
    expect(snapshot()).toBe(before);
  });

  it('subscribes the members an import added or updated, not those it skipped', async () => {
    const [a, b, c, d] = await members('a@example.com', 'b@example.com', 'c@example.com', 'd@example.com');
    await create('News');
    const importId = simulateImport([
      [a, 'a'],
      [b, 'u'],
      [c, 's'],
    ]);
    simulateImport([[d, 'a']]);
    expect(await bulk(1, { import_id: importId })).toEqual({ status: 200, body: true });
    expect(await subscribed(1)).toEqual([a, b]);
    expect(await counts(1)).toEqual([2, 0]);
  });

  it('refuses unknown imports, imports of other accounts, and imports not yet finished', async () => {
    const [a] = await members('a@example.com');
    await create('News');
    s.db.prepare("INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'other', 'x')").run();
    const foreign = simulateImport([[a, 'a']], { account: 2 });
    const running = simulateImport([[a, 'a']], { status: 'p' });
    const queued = simulateImport([], { status: 'q' });
    const failed = simulateImport([[a, 'a']], { status: 'e' });
    const before = snapshot();
    expect(await bulk(1, { import_id: 99 })).toEqual({ status: 404, body: { error: 'import 99 not found' } });
    expect(await bulk(1, { import_id: foreign })).toEqual({ status: 404, body: { error: `import ${foreign} not found` } });
    expect(await bulk(1, { import_id: running })).toEqual({
      status: 400,
      body: { error: `import_id: import ${running} has not finished (status p); try again when it has`, field: 'import_id' },
    });
    expectFieldError(await bulk(1, { import_id: queued }), 'import_id');
    expect(snapshot()).toBe(before);
    // An import that ended in error still applied the members it recorded.
    expect(await bulk(1, { import_id: failed })).toEqual({ status: 200, body: true });
    expect(await subscribed(1)).toEqual([a]);
  });
});

describe('counts, members and opt-outs', () => {
  it('counts stay right through status changes, archive, restore and purge', async () => {
    const [a, b, c, d] = await members('a@example.com', 'b@example.com', 'c@example.com', 'd@example.com');
    await create('News');
    await create('Offers');
    await bulk(1, { member_ids: [a, b, c, d] });
    await bulk(2, { member_ids: [a] });
    expect(await counts(1)).toEqual([4, 0]);

    // Opting out of everything (status o) counts as an opt-out of every subscription.
    await setStatus(s, [b], 'o');
    expect(await counts(1)).toEqual([3, 1]);
    expect(await optedOut(1)).toEqual([b]);
    // An address in error is still a subscriber.
    await setStatus(s, [c], 'e');
    expect(await counts(1)).toEqual([3, 1]);
    // Active again: subscribed again (the subscription row never changed).
    await setStatus(s, [b], 'a');
    expect(await counts(1)).toEqual([4, 0]);

    // Archived members count nowhere and are in neither list; restoring brings them back.
    await ok(s, 'DELETE', `/1/members/${d}`);
    expect(await counts(1)).toEqual([3, 0]);
    expect(await subscribed(1)).toEqual([a, b, c]);
    await addMember(s, 'd@example.com');
    expect(await counts(1)).toEqual([4, 0]);

    // Purge removes the member from every subscription.
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [a] } })).toBe(true);
    expect(countRows(s, 'subscription_members', 'member_id = ?', a)).toBe(0);
    expect(await counts(1)).toEqual([3, 0]);
    expect(await counts(2)).toEqual([0, 0]);
    expect(await ok(s, 'GET', '/1/subscriptions')).toEqual([listItem(1, 'News', { member_count: 3 }), listItem(2, 'Offers')]);
  });

  it('a subscription opt-out (extension) moves one member out of one subscription only', async () => {
    const [a, b] = await members('a@example.com', 'b@example.com');
    await create('News');
    await create('Offers');
    await bulk(1, { member_ids: [a, b] });
    await bulk(2, { member_ids: [a, b] });
    expect(await s.call('PUT', `/1/subscriptions/1/members/${a}/optout`, { body: {} })).toEqual({ status: 200, body: true });
    expect(await counts(1)).toEqual([1, 1]);
    expect(await counts(2)).toEqual([2, 0]);
    expect(await subscribed(1)).toEqual([b]);
    expect(await optedOut(1)).toEqual([a]);
    // Not an account-wide opt-out.
    expect((await ok(s, 'GET', `/1/members/${a}`)).member_status_id).toBe('a');
    expect(await ok(s, 'GET', `/1/members/${a}/optout`)).toEqual([]);
    // Again: true, and the first opt-out time is kept.
    s.clock.set(LATER);
    expect(await ok(s, 'PUT', `/1/subscriptions/1/members/${a}/optout`, { body: {} })).toBe(true);
    expect(s.db.prepare('SELECT opted_out_at FROM subscription_members WHERE subscription_id = 1 AND member_id = ?').get(a)).toEqual({
      opted_out_at: '2026-03-04T05:06:07.000000',
    });
    // A bulk add never overrides the member's choice.
    await bulk(1, { member_ids: [a] });
    expect(await counts(1)).toEqual([1, 1]);
    // Opted out of the subscription and of everything: counted once.
    await setStatus(s, [a], 'o');
    expect(await counts(1)).toEqual([1, 1]);
    await setStatus(s, [a], 'a');
    // Removing the row forgets the opt-out; a later bulk add subscribes again.
    expect(await s.call('DELETE', `/1/subscriptions/1/members/${a}`)).toEqual({ status: 200, body: true });
    expect(await counts(1)).toEqual([1, 0]);
    expect(await s.call('DELETE', `/1/subscriptions/1/members/${a}`)).toEqual({ status: 200, body: true });
    await bulk(1, { member_ids: [a] });
    expect(await counts(1)).toEqual([2, 0]);
  });

  it('a member can opt out of a subscription it was never in; bulk adds then leave it out', async () => {
    const [a] = await members('a@example.com');
    await create('News');
    expect(await ok(s, 'PUT', `/1/subscriptions/1/members/${a}/optout`, { body: {} })).toBe(true);
    expect(await counts(1)).toEqual([0, 1]);
    expect(s.db.prepare('SELECT status, subscribed_at, opted_out_at FROM subscription_members').get()).toEqual({
      status: 'opted_out',
      subscribed_at: null,
      opted_out_at: '2026-03-04T05:06:07.000000',
    });
    await bulk(1, { member_ids: [a] });
    expect(await counts(1)).toEqual([0, 1]);
  });

  it('opt-out and remove name a missing member or subscription', async () => {
    await members('a@example.com');
    await create('News');
    const before = snapshot();
    expect(await s.call('PUT', '/1/subscriptions/1/members/42/optout', { body: {} })).toEqual({
      status: 404,
      body: { error: 'member 42 not found' },
    });
    expect(await s.call('PUT', '/1/subscriptions/7/members/1/optout', { body: {} })).toEqual({
      status: 404,
      body: { error: 'subscription 7 not found' },
    });
    expect(await s.call('DELETE', '/1/subscriptions/1/members/42')).toEqual({ status: 404, body: { error: 'member 42 not found' } });
    expect(snapshot()).toBe(before);
  });

  it('members and optouts are windows [start, end), 500 long by default, ordered by member id', async () => {
    const ids = await members(...Array.from({ length: 6 }, (_, i) => `m${i}@example.com`));
    await create('News');
    await bulk(1, { member_ids: [...ids].reverse() });
    for (const id of ids.slice(3)) await ok(s, 'PUT', `/1/subscriptions/1/members/${id}/optout`, { body: {} });
    expect(await ok(s, 'GET', '/1/subscriptions/1/members')).toEqual(ids.slice(0, 3).map((member_id) => ({ member_id })));
    expect(await subscribed(1, { start: '1' })).toEqual(ids.slice(1, 3));
    expect(await subscribed(1, { start: '0', end: '2' })).toEqual(ids.slice(0, 2));
    expect(await subscribed(1, { start: '5', end: '9' })).toEqual([]);
    expect(await optedOut(1)).toEqual(ids.slice(3));
    expect(await optedOut(1, { start: '1', end: '2' })).toEqual([ids[4]]);
    expectFieldError(await s.call('GET', '/1/subscriptions/1/members', { query: { start: '-1' } }), 'start');
    expectFieldError(await s.call('GET', '/1/subscriptions/1/optouts', { query: { start: '3', end: '1' } }), 'end');
    // count is not a parameter here: ignored, the list answers.
    expect(Array.isArray((await s.call('GET', '/1/subscriptions/1/members', { query: { count: 'true' } })).body)).toBe(true);
  });

  it('the default window is 500 members', async () => {
    await create('News');
    const insert = s.db.prepare("INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, 'x', 'x')");
    const ids = s.db.transaction(() => Array.from({ length: 501 }, (_, i) => Number(insert.run(`w${i}@example.com`).lastInsertRowid)))();
    expect(await bulk(1, { member_ids: ids })).toEqual({ status: 200, body: true });
    expect(await counts(1)).toEqual([501, 0]);
    expect(await subscribed(1)).toHaveLength(500);
    expect(await subscribed(1, { start: '500' })).toEqual([ids[500]]);
  });
});

describe('the route table', () => {
  it('lists the eight spec operations, and marks only the opt-out and remove routes as extensions', async () => {
    const doc = (await s.call('GET', '/openapi.json')).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>)
      .filter(([path]) => path.startsWith('/{account_id}/subscriptions'))
      .flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => [`${m.toUpperCase()} ${path}`, !!op['x-amsg-extension']]));
    expect(Object.fromEntries(ops)).toEqual({
      'GET /{account_id}/subscriptions': false,
      'POST /{account_id}/subscriptions': false,
      'GET /{account_id}/subscriptions/{subscription_id}': false,
      'PUT /{account_id}/subscriptions/{subscription_id}': false,
      'DELETE /{account_id}/subscriptions/{subscription_id}': false,
      'GET /{account_id}/subscriptions/{subscription_id}/members': false,
      'GET /{account_id}/subscriptions/{subscription_id}/optouts': false,
      'POST /{account_id}/subscriptions/{subscription_id}/members/bulk': false,
      'PUT /{account_id}/subscriptions/{subscription_id}/members/{member_id}/optout': true,
      'DELETE /{account_id}/subscriptions/{subscription_id}/members/{member_id}': true,
    });
    expect(T0).toBe('2026-03-04T05:06:07.000Z');
  });
});
