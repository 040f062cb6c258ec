import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { addMember, countRows, createField, createGroups, expectFieldError, ok, snapshot, statuses } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const MAX_SAFE = '9007199254740991'; // 2^53 - 1
const BEYOND = '9007199254740993'; // 2^53 + 1: not exact in a double

/** Another account in the same file, with a member and a group of its own. */
function seedAccount2(parent: number | null = null) {
  s.db.prepare(`INSERT INTO accounts (account_id, account_name, parent_account_id, created_at) VALUES (2, 'Other', ?, 'x')`).run(parent);
  s.db
    .prepare(
      `INSERT INTO members (member_id, account_id, email, member_since, last_modified_at)
       VALUES (500, 2, 'theirs@x.org', '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')`,
    )
    .run();
  s.db.prepare(`INSERT INTO member_groups (member_group_id, account_id, group_name, created_at) VALUES (600, 2, 'Theirs', 'x')`).run();
}

// ------------------------------------------------------------------ value checks

describe('bad values', () => {
  it('a malformed e-mail address is a 400 naming email, in a body or a path', async () => {
    for (const email of ['not-an-email', 'a@b', 'a b@x.org', '@x.org', 'a@x.', 'a@@x.org', '']) {
      const res = await s.call('POST', '/1/members/add', { body: { email } });
      expectFieldError(res, 'email');
    }
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 42 } }), 'email');
    expectFieldError(await s.call('POST', '/1/members/add', { body: {} }), 'email');
    expectFieldError(await s.call('GET', '/1/members/email/nope'), 'email');
    expectFieldError(await s.call('PUT', '/1/members/email/optout/nope%40x', { body: {} }), 'email');
    expectFieldError(await s.call('PUT', '/1/members/1', { body: { email: 'x@' } }), 'email');
    expect(countRows(s, 'members')).toBe(0);
  });

  it('says what was wrong with the address', async () => {
    expect(await s.call('POST', '/1/members/add', { body: { email: 'not-an-email' } })).toEqual({
      status: 400,
      body: { error: 'email: "not-an-email" is not a valid e-mail address', field: 'email' },
    });
  });

  it('a status letter outside the set is a 400 naming the field', async () => {
    await addMember(s, 'a@x.org');
    expectFieldError(await s.call('PUT', '/1/members/status', { body: { member_ids: [1], status_to: 'x' } }), 'status_to');
    expectFieldError(await s.call('PUT', '/1/members/status', { body: { member_ids: [1], status_to: 'A' } }), 'status_to');
    expectFieldError(await s.call('PUT', '/1/members/1', { body: { status_to: 'f' } }), 'status_to');
    expectFieldError(await s.call('DELETE', '/1/members', { query: { member_status_id: 'z' } }), 'member_status_id');
    expectFieldError(await s.call('PUT', '/1/members/status/q/to/a'), 'status_from');
    expectFieldError(await s.call('PUT', '/1/members/purgeall', { body: { member_status_id: 'f' } }), 'member_status_id');
    expect(statuses(s)).toEqual({ 1: 'a' });
  });

  it('a string where an integer belongs is a 400: in the body', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/delete', { body: { member_ids: [1, '2'] } })).toEqual({
      status: 400,
      body: { error: 'member_ids[1]: must be an integer, got "2"', field: 'member_ids[1]' },
    });
    expectFieldError(await s.call('PUT', '/1/members/status/a/to/o', { body: { group_id: '1' } }), 'group_id');
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'b@x.org', group_ids: '1' } }), 'group_ids');
    expectFieldError(await s.call('PUT', '/1/members/delete', { body: { member_ids: [1.5] } }), 'member_ids[0]');
    expectFieldError(await s.call('PUT', '/1/members/delete', { body: { member_ids: [0] } }), 'member_ids[0]');
    expectFieldError(await s.call('PUT', '/1/members/delete', { body: { member_ids: [-1] } }), 'member_ids[0]');
    expect((await ok(s, 'GET', '/1/members')).length).toBe(1);
  });

  it('a string where an integer belongs is a 400: in the path', async () => {
    expect(await s.call('GET', '/1/members/abc')).toEqual({
      status: 400,
      body: { error: 'member_id: must be a positive integer id, got "abc"', field: 'member_id' },
    });
    expectFieldError(await s.call('GET', '/1/members/0'), 'member_id');
    expectFieldError(await s.call('GET', '/1/members/-3'), 'member_id');
    expectFieldError(await s.call('GET', '/1/members/1.0'), 'member_id');
    expectFieldError(await s.call('GET', '/1/groups/x'), 'member_group_id');
    expectFieldError(await s.call('GET', '/1/fields/ten'), 'field_id');
    expectFieldError(await s.call('GET', '/one/members'), 'account_id');
  });

  it('a string where an integer belongs is a 400: in the query', async () => {
    expectFieldError(await s.call('GET', '/1/members', { query: { start: 'abc' } }), 'start');
    expectFieldError(await s.call('GET', '/1/members', { query: { end: '1e3' } }), 'end');
    expectFieldError(await s.call('GET', '/1/groups', { query: { start: 'x' } }), 'start');
  });

  it('under amsg serve --strict, an unknown body, nested or query parameter is a 400 naming it', async () => {
    s.close();
    s = makeService(T0, { strict: true });
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', colour: 'red' } })).toEqual({
      status: 400,
      body: {
        error:
          'colour: unknown parameter (expected one of: email, phone_number, fields, group_ids, sms, field_triggers, subscriber_consent_tracking)',
        field: 'colour',
      },
    });
    expectFieldError(
      await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', sms: { phone_number: '+4722334455', carrier: 'x' } } }),
      'sms.carrier',
    );
    expectFieldError(await s.call('POST', '/1/groups', { body: { groups: [{ group_name: 'A', size: 1 }] } }), 'groups[0].size');
    expectFieldError(await s.call('GET', '/1/members', { query: { limit: '10' } }), 'limit');
    expectFieldError(await s.call('PUT', '/1/members/email/optout/a%40x.org', { body: { reason: 'spam' } }), 'reason');
    expect(countRows(s, 'members')).toBe(0);
    expect(countRows(s, 'member_groups')).toBe(0);
  });

  it('a body that is not a JSON object is a 400', async () => {
    await addMember(s, 'a@x.org');
    // A JSON null is {} (test/api/client-fidelity.test.ts).
    for (const rawBody of ['[]', '"x"', '42', 'true']) {
      const res = await s.call('PUT', '/1/members/status/a/to/o', { rawBody });
      expect(res.status, rawBody).toBe(400);
      expect(res.body.error).toMatch(/^must be a JSON object, got /);
    }
    expect(statuses(s)).toEqual({ 1: 'a' });
  });

  it('invalid JSON is a 400 and changes nothing', async () => {
    await addMember(s, 'a@x.org');
    const before = snapshot(s);
    for (const rawBody of ['{bad', '{"member_ids": [1],}', "{'member_ids': [1]}", 'member_ids=1']) {
      const res = await s.call('PUT', '/1/members/delete', { rawBody });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatch(/^request body is not valid JSON \(/);
    }
    expect(snapshot(s)).toBe(before);
  });

  it('an empty body is {}', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/status/a/to/e', { rawBody: '' })).toEqual({ status: 200, body: true });
    expect(statuses(s)).toEqual({ 1: 'e' });
    expect(await s.call('PUT', '/1/members/email/optout/a%40x.org', { rawBody: '  \n' })).toEqual({ status: 200, body: true });
    expect(await s.call('PUT', '/1/members/email/optout/a%40x.org')).toEqual({ status: 200, body: true });
    // ... so a route that needs parameters says which one is missing.
    expect(await s.call('PUT', '/1/members/delete', { rawBody: '' })).toEqual({
      status: 400,
      body: { error: 'member_ids: is required', field: 'member_ids' },
    });
  });
});

// ------------------------------------------------------------------ accounts

describe('accounts', () => {
  it('an id of another account is a 404 "account N not found", whether it exists or not', async () => {
    expect(await s.call('GET', '/2/members')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
    seedAccount2();
    expect(await s.call('GET', '/2/members')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
    expect(await s.call('GET', '/2/members/500')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
    expect(await s.call('POST', '/2/members/add', { body: { email: 'a@x.org' } })).toEqual({
      status: 404,
      body: { error: 'account 2 not found' },
    });
    expect(countRows(s, 'members', 'account_id = 2')).toBe(1);
    expect(countRows(s, 'members', 'account_id = 1')).toBe(0);
  });

  it("another account's records are not found through one's own account", async () => {
    seedAccount2();
    const mine = await addMember(s, 'mine@x.org');
    const before = snapshot(s);
    expect(await s.call('GET', '/1/members/500')).toEqual({ status: 404, body: { error: 'member 500 not found' } });
    expect((await s.call('GET', '/1/members/email/theirs%40x.org')).status).toBe(404);
    expect(await s.call('GET', '/1/groups/600')).toEqual({ status: 404, body: { error: 'group 600 not found' } });
    expect((await s.call('PUT', `/1/members/${mine}/groups`, { body: { group_ids: [600] } })).status).toBe(404);
    expect((await s.call('PUT', '/1/groups/600/members', { body: { member_ids: [mine] } })).status).toBe(404);
    expect((await s.call('POST', '/1/members/purge', { body: { member_ids: [500] } })).status).toBe(400);
    expect((await s.call('DELETE', '/1/members/500')).status).toBe(404);
    expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [500] } })).toBe(false);
    expect(await ok(s, 'PUT', '/1/members/status', { body: { member_ids: [500], status_to: 'o' } })).toBe(false);
    expect(await ok(s, 'PUT', '/1/members/status/a/to/e', { body: {} })).toBe(true);
    expect(await ok(s, 'GET', '/1/members', { query: { count: 'true', deleted: 'true' } })).toBe(1);
    // Only the own member moved.
    expect(statuses(s)).toEqual({ 500: 'a', [mine]: 'e' });
    expect(s.db.prepare('SELECT deleted_at FROM members WHERE member_id = 500').get()).toEqual({ deleted_at: null });
    expect(countRows(s, 'member_optouts')).toBe(0);
    expect(countRows(s, 'group_members')).toBe(0);
    expect(before).not.toBe(snapshot(s));
  });

  it('a sub-account of the own account is reachable', async () => {
    seedAccount2(1);
    const list = await ok(s, 'GET', '/2/members');
    expect(list.map((m: any) => [m.member_id, m.account_id])).toEqual([[500, 2]]);
  });
});

// ------------------------------------------------------------------ routing

describe('routing', () => {
  it('an unknown route is a 404 with a JSON error', async () => {
    expect(await s.call('GET', '/1/nothing')).toEqual({ status: 404, body: { error: 'no such operation: GET /1/nothing' } });
    expect(await s.call('GET', '/')).toEqual({ status: 404, body: { error: 'no such operation: GET /' } });
    expect((await s.call('GET', '/1/members/1/optout/extra')).status).toBe(404);
  });

  it('a known path with the wrong method is a 405 listing the allowed ones', async () => {
    expect(await s.call('PATCH', '/1/members')).toEqual({
      status: 405,
      body: { error: 'PATCH is not allowed on /1/members (allowed: GET, POST, DELETE)' },
    });
    expect(await s.call('POST', '/1/members/1')).toEqual({
      status: 405,
      body: { error: 'POST is not allowed on /1/members/1 (allowed: GET, PUT, DELETE)' },
    });
    expect(await s.call('GET', '/1/members/1/groups/remove')).toEqual({
      status: 405,
      body: { error: 'GET is not allowed on /1/members/1/groups/remove (allowed: PUT)' },
    });
    expect((await s.call('DELETE', '/1/fields/1/clear')).status).toBe(405);
  });

  it('PUT /members/status is the bulk status route, not a member called "status"', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/status', { body: { member_ids: [1], status_to: 'e' } })).toEqual({
      status: 200,
      body: true,
    });
    expect(statuses(s)).toEqual({ 1: 'e' });
  });

  it('PUT /members/delete is the bulk archive route', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/delete', { body: { member_ids: [1] } })).toEqual({ status: 200, body: true });
    expect(countRows(s, 'members', 'deleted_at IS NOT NULL')).toBe(1);
  });

  it('the other static member paths win over {member_id} too', async () => {
    const [g] = await createGroups(s, 'G');
    await addMember(s, 'a@x.org', { group_ids: [g] });
    expect(await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1], group_ids: [g] } })).toEqual({
      status: 200,
      body: true,
    });
    expect(await s.call('PUT', '/1/members/purgeall', { body: {} })).toEqual({ status: 200, body: true });
    expect(await s.call('POST', '/1/members/add', { body: { email: 'b@x.org' } })).toEqual({
      status: 200,
      body: { member_id: 2, added: true, status: 'a' },
    });
  });

  it('a trailing slash is the same route', async () => {
    await addMember(s, 'a@x.org');
    expect((await s.call('GET', '/1/members/1/')).body.member_id).toBe(1);
  });
});

// ------------------------------------------------------------------ 64-bit ids

describe('64-bit ids', () => {
  it('an id beyond 2^53 is a 400 in the path, the account, the body and the query', async () => {
    expectFieldError(await s.call('GET', `/1/members/${BEYOND}`), 'member_id');
    expectFieldError(await s.call('GET', '/1/members/123456789012345678901'), 'member_id');
    expectFieldError(await s.call('GET', `/${BEYOND}/members`), 'account_id');
    expectFieldError(await s.call('PUT', '/1/members/delete', { rawBody: `{"member_ids":[${BEYOND}]}` }), 'member_ids[0]');
    expectFieldError(await s.call('PUT', '/1/members/delete', { rawBody: '{"member_ids":[9007199254740992]}' }), 'member_ids[0]');
    expectFieldError(await s.call('PUT', '/1/members/delete', { rawBody: '{"member_ids":[1e300]}' }), 'member_ids[0]');
    expectFieldError(await s.call('GET', '/1/members', { query: { start: BEYOND } }), 'start');
    expectFieldError(await s.call('PUT', '/1/members/purgeall', { body: { member_group_id: BEYOND } }), 'member_group_id');
  });

  it('ids up to 2^53 - 1 work exactly', async () => {
    s.db
      .prepare(
        `INSERT INTO members (member_id, account_id, email, member_since, last_modified_at)
         VALUES (${MAX_SAFE}, 1, 'big@x.org', '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')`,
      )
      .run();
    const m = await ok(s, 'GET', `/1/members/${MAX_SAFE}`);
    expect(m.member_id).toBe(Number(MAX_SAFE));
    expect(String(m.member_id)).toBe(MAX_SAFE);
    expect(await ok(s, 'PUT', '/1/members/status', { rawBody: `{"member_ids":[${MAX_SAFE}],"status_to":"o"}` })).toBe(true);
    expect((await ok(s, 'GET', `/1/members/${MAX_SAFE}`)).member_status_id).toBe('o');
    // A new member after it gets the next id: beyond 32 bits, still exact.
    expect(await s.call('GET', '/1/members/4294967296')).toEqual({ status: 404, body: { error: 'member 4294967296 not found' } });
  });
});

// ------------------------------------------------------------------ failed requests change nothing

describe('a failed request changes nothing', () => {
  it('add with a bad group id creates no member', async () => {
    const [g] = await createGroups(s, 'G');
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const before = snapshot(s);
    const res = await s.call('POST', '/1/members/add', {
      body: { email: 'a@x.org', fields: { city: 'Oslo' }, group_ids: [g, 12], phone_number: '+4722334455' },
    });
    expect(res).toEqual({ status: 404, body: { error: 'group 12 not found' } });
    expect(snapshot(s)).toBe(before);
  });

  it('add with a bad field value after valid ones creates no member', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    const before = snapshot(s);
    expectFieldError(
      await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { city: 'Oslo', age: 'old' } } }),
      'fields.age',
    );
    expect(snapshot(s)).toBe(before);
  });

  it('createGroups with a duplicate creates none', async () => {
    await createGroups(s, 'Taken');
    const before = snapshot(s);
    const res = await s.call('POST', '/1/groups', {
      body: { groups: [{ group_name: 'New 1' }, { group_name: 'New 2' }, { group_name: 'taken' }] },
    });
    expectFieldError(res, 'groups[2].group_name');
    expect(snapshot(s)).toBe(before);
  });

  it('update with a bad phone number does not apply the fields given with it', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo' } });
    const before = snapshot(s);
    s.clock.advance(1000);
    expectFieldError(
      await s.call('PUT', '/1/members/1', { body: { fields: { city: 'Rome' }, status_to: 'o', phone_number: '12' } }),
      'phone_number',
    );
    expect(snapshot(s)).toBe(before);
  });

  it('purge and group removals with one unknown id touch nothing', async () => {
    const [g] = await createGroups(s, 'G');
    await addMember(s, 'a@x.org', { group_ids: [g] });
    await addMember(s, 'b@x.org', { group_ids: [g] });
    const before = snapshot(s);
    expect((await s.call('POST', '/1/members/purge', { body: { member_ids: [1, 2, 3] } })).status).toBe(400);
    expect((await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1, 3], group_ids: [g] } })).status).toBe(404);
    expect((await s.call('PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 3] } })).status).toBe(404);
    expect((await s.call('PUT', '/1/members/1/groups/remove', { body: { group_ids: [g, 9] } })).status).toBe(404);
    expect(snapshot(s)).toBe(before);
  });
});

// ------------------------------------------------------------------ error shape

describe('error bodies', () => {
  it('every error is {error: string, ...}; validation errors also name the field', async () => {
    await addMember(s, 'a@x.org');
    const cases: [string, string, Parameters<TestService['call']>[2], number, string | undefined][] = [
      ['GET', '/1/members/9', undefined, 404, undefined],
      ['GET', '/1/nowhere', undefined, 404, undefined],
      ['PATCH', '/1/members', undefined, 405, undefined],
      ['GET', '/2/members', undefined, 404, undefined],
      ['PUT', '/1/members/delete', { rawBody: '{' }, 400, undefined],
      ['POST', '/1/members/add', { body: { email: 'bad' } }, 400, 'email'],
      ['POST', '/1/members/add', { body: { email: 'a@x.org', group_ids: [0] } }, 400, 'group_ids[0]'],
      ['POST', '/1/members/add', { body: { email: 'a@x.org', fields: { nope: 1 } } }, 400, 'fields.nope'],
      ['GET', '/1/members', { query: { deleted_range: 'x' } }, 400, 'deleted_range'],
      [
        'POST',
        '/1/fields',
        { body: { shortcut_name: 'n', display_name: 'N', field_type: 'numeric', widget_type: 'text' } },
        400,
        'widget_type',
      ],
      ['POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [1], opt_in_message: '' } }, 400, 'opt_in_message'],
      ['PUT', '/1/members/status/a/to/z', undefined, 400, 'status_to'],
    ];
    for (const [method, path, opts, status, field] of cases) {
      const res = await s.call(method, path, opts);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(typeof res.body.error, `${method} ${path}`).toBe('string');
      expect(res.body.error.length).toBeGreaterThan(0);
      if (field) expectFieldError(res, field, status);
    }
  });

  it('no successful answer has a top-level error key', async () => {
    await addMember(s, 'a@x.org');
    for (const [method, path] of [
      ['GET', '/1/members'],
      ['GET', '/1/members/1'],
      ['GET', '/1/groups'],
      ['GET', '/1/fields'],
      ['GET', '/1/webhooks/events'],
    ]) {
      const res = await s.call(method, path);
      expect(res.status).toBe(200);
      expect(res.body !== null && typeof res.body === 'object' && !Array.isArray(res.body) && 'error' in res.body).toBe(false);
    }
  });
});

describe('paths that cannot be decoded', () => {
  it('broken percent-encoding is a 400 that says so', async () => {
    const s = makeService();
    try {
      const r = await s.call('GET', '/1/members/email/a%E0%A4%A');
      expect(r).toEqual({ status: 400, body: { error: 'the path /1/members/email/a%E0%A4%A is not valid percent-encoding' } });
    } finally {
      s.close();
    }
  });
});

// ------------------------------------------------------------------ nesting depth

describe('deeply nested JSON', () => {
  /** JSON text of `inner` inside n arrays, built as text: JSON.stringify of it would run out of stack. */
  const nested = (n: number, inner = '"x"') => '['.repeat(n) + inner + ']'.repeat(n);
  /** The same as a value, built without recursion (the local transport hands values over). */
  const nestedValue = (n: number, inner: unknown = 'x') => {
    let v = inner;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const TOO_DEEP = (field: string) => ({
    status: 400,
    body: { error: `${field}: nested too deep: JSON in a request may nest arrays and objects 64 levels deep at most`, field },
  });

  it('search criteria and a member value nested 5,000 levels are a 400 naming the limit, not a 500', async () => {
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const search = await ok(s, 'POST', '/1/searches', { body: { name: 'All', criteria: ['member_status_id', 'eq', 'a'] } });
    const before = snapshot(s);
    for (const n of [3_000, 5_000, 100_000]) {
      expect(await s.call('POST', '/1/searches', { rawBody: `{"name":"Deep","criteria":${nested(n)}}` })).toEqual(TOO_DEEP('criteria'));
      expect(await s.call('PUT', `/1/searches/${search}`, { rawBody: `{"criteria":${nested(n)}}` })).toEqual(TOO_DEEP('criteria'));
      for (const field of ['age', 'city'])
        expect(await s.call('POST', '/1/members/add', { rawBody: `{"email":"a@x.org","fields":{"${field}":${nested(n)}}}` })).toEqual(
          TOO_DEEP('fields'),
        );
      // Criteria may come as JSON text (the spec's form): the text inside is bounded too.
      expect(await s.call('POST', '/1/searches', { body: { name: 'Deep', criteria: nested(n, '["member_status_id","eq","a"]') } })).toEqual(
        TOO_DEEP('criteria'),
      );
    }
    expect(snapshot(s)).toBe(before);
    expect(countRows(s, 'searches')).toBe(1);
  });

  it('applies to every route with a body, and to a body that is itself too deep', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/delete', { rawBody: `{"member_ids":${nested(70, '1')}}` })).toEqual(TOO_DEEP('member_ids'));
    expect(await s.call('POST', '/1/groups', { rawBody: `{"groups":[{"group_name":"G","x":${nested(70)}}]}` })).toEqual(TOO_DEEP('groups'));
    expect(await s.call('PUT', '/1/members/status', { rawBody: nested(5_000) })).toEqual({
      status: 400,
      body: { error: 'request body nested too deep: JSON in a request may nest arrays and objects 64 levels deep at most' },
    });
    // An object inside objects counts the same as arrays.
    const objects = '{"a":'.repeat(70) + '1' + '}'.repeat(70);
    expect(await s.call('POST', '/1/members/add', { rawBody: `{"email":"b@x.org","fields":${objects}}` })).toEqual(TOO_DEEP('fields'));
    expect(countRows(s, 'members')).toBe(1);
  });

  it('the limit is 64 levels counting the body: 64 pass on to the route, 65 do not', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    // {fields: {city: [[…["x"]…]]}}: the body, fields, then the arrays.
    const at = (levels: number) => `{"email":"a@x.org","fields":{"city":${nested(levels - 2)}}}`;
    expect(await s.call('POST', '/1/members/add', { rawBody: at(64) })).toEqual({
      status: 400,
      body: { error: 'fields.city: must be text for a text field', field: 'fields.city' },
    });
    expect(await s.call('POST', '/1/members/add', { rawBody: at(65) })).toEqual(TOO_DEEP('fields'));
    // Criteria nested past the searches' own limit (32) but within the body's get the searches' message.
    const criteria = Array.from({ length: 40 }).reduce<unknown>((inner) => ['not', inner], ['member_status_id', 'eq', 'a']);
    const res = await s.call('POST', '/1/searches', { body: { name: 'Deep', criteria } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/nests too deep \(at most 32 levels, nested searches included\)$/);
  });

  it('a body handed over as a value (the local transport) is bounded the same', async () => {
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    const handle = async (method: string, path: string, json: unknown) => {
      const res = await s.router.handle({ method, path, query: {}, json, actor: s.actor });
      return { status: res.status, body: res.body };
    };
    expect(await handle('POST', '/1/members/add', { email: 'a@x.org', fields: { age: nestedValue(5_000) } })).toEqual(TOO_DEEP('fields'));
    expect(await handle('POST', '/1/searches', { name: 'Deep', criteria: nestedValue(5_000) })).toEqual(TOO_DEEP('criteria'));
    expect(countRows(s, 'members')).toBe(0);
  });

  it('an error message shows a bad value cut short, however large the value', async () => {
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    const huge = Array.from({ length: 200_000 }, (_, i) => i);
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { age: huge } } })).toEqual({
      status: 400,
      body: {
        error: `fields.age: must be a number for a numeric field, got [${huge.slice(0, 40).join(',').slice(0, 59)}…`,
        field: 'fields.age',
      },
    });
    const deep = nestedValue(60, 'x');
    expect((await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: { age: deep } } })).body.error).toBe(
      `fields.age: must be a number for a numeric field, got ${'['.repeat(60)}…`,
    );
    expect(await s.call('POST', '/1/searches', { body: { name: 'S', criteria: ['group', 'eq', huge] } })).toEqual({
      status: 400,
      body: { error: `criteria[2]: must be a group id or name, got [${huge.slice(0, 40).join(',').slice(0, 59)}…`, field: 'criteria[2]' },
    });
  });
});

describe('dateTime and preview (schema)', () => {
  it('a bad date-time names the value, cut short', async () => {
    const { dateTime, preview } = await import('../../src/api/schema.js');
    expect(() => dateTime().parse('x'.repeat(1_000), 'send_at')).toThrow(
      `send_at: must be a date-time such as 2026-05-01T09:00:00Z or @D:2026-05-01T09:00:00, got "${'x'.repeat(59)}…`,
    );
    expect(() => dateTime().parse(['2026-05-01T09:00:00Z'], 'send_at')).toThrow('got ["2026-05-01T09:00:00Z"]');
    expect(preview({ a: [1, 'two', null, true], b: { c: undefined, d: -0.5 } })).toBe('{"a":[1,"two",null,true],"b":{"d":-0.5}}');
    expect(preview('a'.repeat(100), 10)).toBe(`"${'a'.repeat(9)}…`);
    expect(preview(undefined)).toBe('undefined');
    expect(preview([Infinity, NaN, -0])).toBe('[Infinity,NaN,0]');
  });
});
