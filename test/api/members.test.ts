import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import {
  addMember,
  atD,
  countRows,
  createField,
  createGroups,
  expectFieldError,
  getMember,
  groupMemberIds,
  ok,
  setStatus,
  snapshot,
  statuses,
} from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const T0D = atD(T0); // @D:2026-03-04T05:06:07
const DAY = 86_400_000;

const baseMember = (member_id: number, email: string, over: Record<string, unknown> = {}) => ({
  member_id,
  account_id: 1,
  email,
  status: 'active',
  member_status_id: 'a',
  confirmed_opt_in: null,
  fields: {},
  sms: null,
  last_modified_at: T0D,
  member_since: T0D,
  deleted_at: null,
  plaintext_preferred: false,
  email_error: null,
  bounce_count: 0,
  ...over,
});

const ids = (list: { member_id: number }[]) => list.map((m) => m.member_id);

// ------------------------------------------------------------------ list

describe('GET /{account_id}/members', () => {
  it('answers an empty array for an empty audience', async () => {
    expect(await s.call('GET', '/1/members')).toEqual({ status: 200, body: [] });
  });

  it('lists live members in id order with the full member shape', async () => {
    await addMember(s, 'b@x.org');
    await addMember(s, 'a@x.org');
    const res = await s.call('GET', '/1/members');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([baseMember(1, 'b@x.org'), baseMember(2, 'a@x.org')]);
  });

  describe('archived members', () => {
    beforeEach(async () => {
      await addMember(s, 'live@x.org');
      await addMember(s, 'gone@x.org');
      s.clock.advance(60_000);
      expect(await ok(s, 'DELETE', '/1/members/2')).toBe(true);
    });

    it('hides archived members by default', async () => {
      expect(ids(await ok(s, 'GET', '/1/members'))).toEqual([1]);
      expect(ids(await ok(s, 'GET', '/1/members', { query: { deleted: 'false' } }))).toEqual([1]);
    });

    it('includes them with deleted=true or deleted=1, with deleted_at as @D:', async () => {
      for (const deleted of ['true', '1']) {
        const list = await ok(s, 'GET', '/1/members', { query: { deleted } });
        expect(ids(list)).toEqual([1, 2]);
        expect(list[0].deleted_at).toBeNull();
        expect(list[1].deleted_at).toBe('@D:2026-03-04T05:07:07');
        expect(list[1].last_modified_at).toBe('@D:2026-03-04T05:07:07');
      }
    });

    it('answers only archived members with deleted_only', async () => {
      expect(ids(await ok(s, 'GET', '/1/members', { query: { deleted_only: 'true' } }))).toEqual([2]);
      expect(ids(await ok(s, 'GET', '/1/members', { query: { deleted_only: '1' } }))).toEqual([2]);
    });

    it('rejects a flag that is not true, 1, false or 0', async () => {
      expectFieldError(await s.call('GET', '/1/members', { query: { deleted: 'yes' } }), 'deleted');
    });
  });

  describe('deleted_range', () => {
    // m1 archived 2026-03-04, m2 on 2026-03-06, m3 on 2026-03-10 (= now); m4 stays live.
    beforeEach(async () => {
      for (const e of ['m1@x.org', 'm2@x.org', 'm3@x.org', 'm4@x.org']) await addMember(s, e);
      await ok(s, 'DELETE', '/1/members/1');
      s.clock.set('2026-03-06T23:59:59.000Z');
      await ok(s, 'DELETE', '/1/members/2');
      s.clock.set('2026-03-10T12:00:00.000Z');
      await ok(s, 'DELETE', '/1/members/3');
    });
    const range = async (deleted_range: string) => ids(await ok(s, 'GET', '/1/members', { query: { deleted_range } }));

    it('a single date means members deleted that day', async () => {
      expect(await range('2026-03-06')).toEqual([2]);
      expect(await range('2026-03-04')).toEqual([1]);
      expect(await range('2026-03-05')).toEqual([]);
    });

    it('two dates joined by ~ include both whole days', async () => {
      expect(await range('2026-03-04~2026-03-06')).toEqual([1, 2]);
      expect(await range('2026-03-05~2026-03-06')).toEqual([2]);
      expect(await range('2026-03-07~2026-03-09')).toEqual([]);
    });

    it('~YYYY-MM-DD starts at the minimum date', async () => {
      expect(await range('~2026-03-06')).toEqual([1, 2]);
      expect(await range('~2026-03-03')).toEqual([]);
    });

    it('YYYY-MM-DD~ runs up to now, including a member archived this very moment', async () => {
      expect(await range('2026-03-05~')).toEqual([2, 3]);
      expect(await range('2026-03-10~')).toEqual([3]);
    });

    it('never lists live members and counts the same members', async () => {
      expect(await range('~')).toEqual([1, 2, 3]);
      expect(await ok(s, 'GET', '/1/members', { query: { deleted_range: '2026-03-05~', count: 'true' } })).toBe(2);
    });

    it('rejects malformed ranges and impossible dates with a 400 naming deleted_range', async () => {
      for (const bad of ['2026-13-01', '2026-02-30', '2026-3-1', 'yesterday', '2026-03-01~2026-03-02~2026-03-03', '']) {
        expectFieldError(await s.call('GET', '/1/members', { query: { deleted_range: bad } }), 'deleted_range');
      }
    });
  });

  it('exclude_fields answers base attributes only (fields is an empty object)', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo' } });
    expect((await ok(s, 'GET', '/1/members'))[0].fields).toEqual({ city: 'Oslo' });
    for (const exclude_fields of ['true', '1']) {
      const list = await ok(s, 'GET', '/1/members', { query: { exclude_fields } });
      expect(list).toEqual([baseMember(1, 'a@x.org')]);
    }
  });

  it('start and end are a zero-based window', async () => {
    for (let i = 1; i <= 5; i++) await addMember(s, `m${i}@x.org`);
    const win = async (query: Record<string, string>) => ids(await ok(s, 'GET', '/1/members', { query }));
    expect(await win({ start: '1', end: '3' })).toEqual([2, 3]);
    expect(await win({ start: '4' })).toEqual([5]);
    expect(await win({ end: '2' })).toEqual([1, 2]);
    expect(await win({ start: '2', end: '2' })).toEqual([]);
    expect(await win({ start: '9' })).toEqual([]);
    expectFieldError(await s.call('GET', '/1/members', { query: { start: '3', end: '1' } }), 'end');
    expectFieldError(await s.call('GET', '/1/members', { query: { start: '-1' } }), 'start');
  });

  it('answers at most 500 members when no end is given', async () => {
    const insert = s.db.prepare('INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, ?, ?)');
    s.db.transaction(() => {
      for (let i = 1; i <= 501; i++) insert.run(`m${i}@x.org`, '2026-03-04T05:06:07.000000', '2026-03-04T05:06:07.000000');
    })();
    const page = await ok(s, 'GET', '/1/members');
    expect(page).toHaveLength(500);
    expect(page[499].member_id).toBe(500);
    expect(ids(await ok(s, 'GET', '/1/members', { query: { start: '500' } }))).toEqual([501]);
    expect(await ok(s, 'GET', '/1/members', { query: { count: 'true' } })).toBe(501);
  });

  it('count=true answers a bare integer under the same filters', async () => {
    expect(await s.call('GET', '/1/members', { query: { count: 'true' } })).toEqual({ status: 200, body: 0 });
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org']) await addMember(s, e);
    await ok(s, 'DELETE', '/1/members/3');
    expect(await ok(s, 'GET', '/1/members', { query: { count: 'true' } })).toBe(2);
    expect(await ok(s, 'GET', '/1/members', { query: { count: '1', deleted: '1' } })).toBe(3);
    expect(await ok(s, 'GET', '/1/members', { query: { count: 'true', deleted_only: 'true' } })).toBe(1);
  });
});

// ------------------------------------------------------------------ get

describe('GET /{account_id}/members/{member_id}', () => {
  it('answers the member', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('GET', '/1/members/1')).toEqual({ status: 200, body: baseMember(1, 'a@x.org') });
  });

  it('404 for an unknown member', async () => {
    expect(await s.call('GET', '/1/members/77')).toEqual({ status: 404, body: { error: 'member 77 not found' } });
  });

  it('an archived member is 404 unless deleted is true or 1', async () => {
    await addMember(s, 'a@x.org');
    s.clock.advance(DAY);
    await ok(s, 'DELETE', '/1/members/1');
    expect((await s.call('GET', '/1/members/1')).status).toBe(404);
    expect((await s.call('GET', '/1/members/1', { query: { deleted: 'false' } })).status).toBe(404);
    for (const deleted of ['true', '1']) {
      const m = await ok(s, 'GET', '/1/members/1', { query: { deleted } });
      expect(m).toEqual(baseMember(1, 'a@x.org', { deleted_at: '@D:2026-03-05T05:06:07', last_modified_at: '@D:2026-03-05T05:06:07' }));
    }
  });
});

describe('GET /{account_id}/members/email/{email}', () => {
  beforeEach(async () => {
    await addMember(s, 'plain@x.org');
    await addMember(s, 'a+b@x.org');
  });

  it('finds a member by a raw or percent-encoded address', async () => {
    expect(await ok(s, 'GET', '/1/members/email/plain@x.org')).toEqual(baseMember(1, 'plain@x.org'));
    expect((await ok(s, 'GET', '/1/members/email/plain%40x.org')).member_id).toBe(1);
  });

  it('a + in the address stays a plus, encoded or raw', async () => {
    expect((await ok(s, 'GET', '/1/members/email/a%2Bb%40x.org')).email).toBe('a+b@x.org');
    expect((await ok(s, 'GET', '/1/members/email/a+b@x.org')).member_id).toBe(2);
    // Had + been read as a space, "a b@x.org" would be refused as an address.
    expect((await s.call('GET', '/1/members/email/a%20b%40x.org')).status).toBe(400);
  });

  it('matches the address case-insensitively', async () => {
    expect((await ok(s, 'GET', '/1/members/email/PLAIN%40X.ORG')).member_id).toBe(1);
  });

  it('404 naming the address when nobody has it', async () => {
    expect(await s.call('GET', '/1/members/email/nobody%40x.org')).toEqual({
      status: 404,
      body: { error: 'member nobody@x.org not found' },
    });
  });

  it('an archived member is found only with deleted', async () => {
    await ok(s, 'DELETE', '/1/members/1');
    expect((await s.call('GET', '/1/members/email/plain%40x.org')).status).toBe(404);
    expect((await ok(s, 'GET', '/1/members/email/plain%40x.org', { query: { deleted: '1' } })).deleted_at).toBe(T0D);
  });
});

// ------------------------------------------------------------------ opt-outs

describe('opt-outs', () => {
  it('GET optout answers [] for a member who never opted out, 404 for no member', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('GET', '/1/members/1/optout')).toEqual({ status: 200, body: [] });
    expect(await s.call('GET', '/1/members/9/optout')).toEqual({ status: 404, body: { error: 'member 9 not found' } });
  });

  it('records each move to o with its timestamp and a null mailing_id', async () => {
    await addMember(s, 'a@x.org');
    await setStatus(s, [1], 'o');
    s.clock.advance(DAY);
    await setStatus(s, [1], 'a');
    s.clock.advance(DAY);
    expect(await ok(s, 'PUT', '/1/members/1', { body: { status_to: 'o' } })).toBe(true);
    expect(await ok(s, 'GET', '/1/members/1/optout')).toEqual([
      { timestamp: T0D, mailing_id: null },
      { timestamp: '@D:2026-03-06T05:06:07', mailing_id: null },
    ]);
  });

  it('PUT optout by e-mail answers true twice but records the opt-out once', async () => {
    await addMember(s, 'a+b@x.org');
    expect(await s.call('PUT', '/1/members/email/optout/a%2Bb%40x.org', { body: {} })).toEqual({ status: 200, body: true });
    s.clock.advance(60_000);
    expect(await s.call('PUT', '/1/members/email/optout/a+b@x.org', { body: {} })).toEqual({ status: 200, body: true });
    const m = await getMember(s, 1);
    expect(m.member_status_id).toBe('o');
    expect(m.status).toBe('opt-out');
    expect(m.last_modified_at).toBe(T0D);
    expect(await ok(s, 'GET', '/1/members/1/optout')).toEqual([{ timestamp: T0D, mailing_id: null }]);
    expect(countRows(s, 'member_optouts')).toBe(1);
  });

  it('PUT optout by e-mail is a 404 for an unknown or archived address', async () => {
    expect(await s.call('PUT', '/1/members/email/optout/nobody%40x.org', { body: {} })).toEqual({
      status: 404,
      body: { error: 'member nobody@x.org not found' },
    });
    await addMember(s, 'a@x.org');
    await ok(s, 'DELETE', '/1/members/1');
    expect((await s.call('PUT', '/1/members/email/optout/a%40x.org', { body: {} })).status).toBe(404);
    expect(statuses(s)).toEqual({ 1: 'a' });
  });
});

// ------------------------------------------------------------------ add

describe('POST /{account_id}/members/add', () => {
  it('adds a new member: {member_id, added: true, status: a}', async () => {
    expect(await s.call('POST', '/1/members/add', { body: { email: 'new@x.org' } })).toEqual({
      status: 200,
      body: { member_id: 1, added: true, status: 'a' },
    });
    expect(await getMember(s, 1)).toEqual(baseMember(1, 'new@x.org'));
  });

  it('stores the address trimmed and lower-cased; the same address updates (added false)', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: '  Mixed@Example.ORG ' } })).toEqual({
      member_id: 1,
      added: true,
      status: 'a',
    });
    s.clock.advance(DAY);
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: 'mixed@example.org', fields: { city: 'Oslo' } } })).toEqual({
      member_id: 1,
      added: false,
      status: 'a',
    });
    const m = await getMember(s, 1);
    expect(m.email).toBe('mixed@example.org');
    expect(m.fields).toEqual({ city: 'Oslo' });
    expect(m.member_since).toBe(T0D);
    expect(m.last_modified_at).toBe('@D:2026-03-05T05:06:07');
    expect(countRows(s, 'members')).toBe(1);
  });

  it('an update with nothing new leaves last_modified_at alone', async () => {
    await addMember(s, 'a@x.org');
    s.clock.advance(DAY);
    await addMember(s, 'a@x.org');
    expect((await getMember(s, 1)).last_modified_at).toBe(T0D);
  });

  it('never re-activates: an opted-out or error member keeps its status', async () => {
    await addMember(s, 'o@x.org');
    await addMember(s, 'e@x.org');
    await setStatus(s, [1], 'o');
    await setStatus(s, [2], 'e');
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: 'o@x.org' } })).toEqual({
      member_id: 1,
      added: false,
      status: 'o',
    });
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: 'e@x.org' } })).toEqual({
      member_id: 2,
      added: false,
      status: 'e',
    });
    expect(statuses(s)).toEqual({ 1: 'o', 2: 'e' });
    expect(countRows(s, 'member_optouts')).toBe(1);
  });

  it('restores an archived member (same id, deleted_at cleared, status kept)', async () => {
    await addMember(s, 'a@x.org');
    await setStatus(s, [1], 'o');
    await ok(s, 'DELETE', '/1/members/1');
    s.clock.advance(DAY);
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: 'a@x.org' } })).toEqual({
      member_id: 1,
      added: false,
      status: 'o',
    });
    const m = await getMember(s, 1);
    expect(m.deleted_at).toBeNull();
    expect(m.last_modified_at).toBe('@D:2026-03-05T05:06:07');
    expect(ids(await ok(s, 'GET', '/1/members'))).toEqual([1]);
  });

  it('joins the given groups', async () => {
    const [g1, g2] = await createGroups(s, 'One', 'Two');
    await addMember(s, 'a@x.org', { group_ids: [g1, g2, g1] });
    expect(groupMemberIds(s, g1)).toEqual([1]);
    expect(groupMemberIds(s, g2)).toEqual([1]);
  });

  it('a missing group is a 404 and no member is created', async () => {
    const [g1] = await createGroups(s, 'One');
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', group_ids: [g1, 99] } })).toEqual({
      status: 404,
      body: { error: 'group 99 not found' },
    });
    expect(countRows(s, 'members')).toBe(0);
    expect(countRows(s, 'group_members')).toBe(0);
  });

  it('accepts the workflow flags', async () => {
    const res = await s.call('POST', '/1/members/add', {
      body: { email: 'a@x.org', field_triggers: true, subscriber_consent_tracking: false },
    });
    expect(res).toEqual({ status: 200, body: { member_id: 1, added: true, status: 'a' } });
  });
});

// ------------------------------------------------------------------ sms object

describe('member sms object', () => {
  const AT = '2026-03-04T05:06:07.123Z';
  const ISO = '2026-03-04T05:06:07.123000+00:00';

  it('normalizes phone_number to international form, derives region_code, stamps ISO +00:00 with 6 digits', async () => {
    s.clock.set(AT);
    await addMember(s, 'a@x.org', { phone_number: '+1 (555) 555-0123' });
    expect((await getMember(s, 1)).sms).toEqual({
      phone_number: '+15555550123',
      region_code: 'US',
      transactional_status: 'a',
      transactional_status_updated_at: ISO,
      promotional_status: 'o',
      promotional_status_updated_at: ISO,
    });
  });

  it('reads 00 as +, picks the longest calling code, and leaves unknown codes without a region', async () => {
    await addMember(s, 'gb@x.org', { sms: { phone_number: '0044 20 7946 0958' } });
    await addMember(s, 'ie@x.org', { sms: { phone_number: '+353 1 234 5678' } });
    await addMember(s, 'zz@x.org', { sms: { phone_number: '+999 1234567' } });
    const sms = (await ok(s, 'GET', '/1/members')).map((m: any) => [m.sms.phone_number, m.sms.region_code]);
    expect(sms).toEqual([
      ['+442079460958', 'GB'],
      ['+35312345678', 'IE'],
      ['+9991234567', null],
    ]);
  });

  it('takes the statuses and an explicit region_code from the sms object', async () => {
    await addMember(s, 'a@x.org', {
      sms: { phone_number: '+16135550123', region_code: 'CA', promotional_status: 'a', transactional_status: 'o' },
    });
    expect((await getMember(s, 1)).sms).toEqual({
      phone_number: '+16135550123',
      region_code: 'CA',
      transactional_status: 'o',
      transactional_status_updated_at: '2026-03-04T05:06:07.000000+00:00',
      promotional_status: 'a',
      promotional_status_updated_at: '2026-03-04T05:06:07.000000+00:00',
    });
  });

  it('an explicit region_code is applied even when the number is unchanged', async () => {
    await addMember(s, 'a@x.org', { phone_number: '+16135550123' });
    expect((await getMember(s, 1)).sms.region_code).toBe('US');
    await ok(s, 'PUT', '/1/members/1', { body: { sms: { phone_number: '+1 613 555 0123', region_code: 'CA' } } });
    expect((await getMember(s, 1)).sms.region_code).toBe('CA');
    await ok(s, 'PUT', '/1/members/1', { body: { sms: { region_code: 'US' } } });
    expect((await getMember(s, 1)).sms.region_code).toBe('US');
    // Without any phone number a region_code has nothing to apply to.
    await addMember(s, 'b@x.org');
    expectFieldError(await s.call('PUT', '/1/members/2', { body: { sms: { region_code: 'CA' } } }), 'sms.region_code');
    expect((await getMember(s, 2)).sms).toBeNull();
  });

  it('a status change stamps only its own timestamp', async () => {
    s.clock.set(AT);
    await addMember(s, 'a@x.org', { phone_number: '+4722334455' });
    s.clock.set('2026-03-05T00:00:00.5Z');
    expect(await ok(s, 'PUT', '/1/members/1', { body: { sms: { promotional_status: 'a' } } })).toBe(true);
    expect((await getMember(s, 1)).sms).toEqual({
      phone_number: '+4722334455',
      region_code: 'NO',
      transactional_status: 'a',
      transactional_status_updated_at: ISO,
      promotional_status: 'a',
      promotional_status_updated_at: '2026-03-05T00:00:00.500000+00:00',
    });
    // Setting the same status again changes nothing.
    s.clock.advance(DAY);
    await ok(s, 'PUT', '/1/members/1', { body: { sms: { promotional_status: 'a' } } });
    expect((await getMember(s, 1)).sms.promotional_status_updated_at).toBe('2026-03-05T00:00:00.500000+00:00');
  });

  it('rejects numbers that are not international, naming the field that carried them', async () => {
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', phone_number: '5555550123' } }), 'phone_number');
    expectFieldError(
      await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', sms: { phone_number: '+12' } } }),
      'sms.phone_number',
    );
    expectFieldError(
      await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', sms: { promotional_status: 'x' } } }),
      'sms.promotional_status',
    );
    expect(countRows(s, 'members')).toBe(0);
  });

  it('a status without any phone number is a 400', async () => {
    await addMember(s, 'a@x.org');
    expectFieldError(await s.call('PUT', '/1/members/1', { body: { sms: { transactional_status: 'o' } } }), 'sms.transactional_status');
    expect((await getMember(s, 1)).sms).toBeNull();
  });
});

// ------------------------------------------------------------------ signup

describe('POST /{account_id}/members/signup', () => {
  const TAGS = '[rsvp_name] [rsvp_email] [opt_in_url] [opt_out_url]';

  it('signs a new member up into groups: {member_id, status}', async () => {
    const [g1] = await createGroups(s, 'News');
    expect(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g1] } })).toEqual({
      status: 200,
      body: { member_id: 1, status: 'a' },
    });
    expect(groupMemberIds(s, g1)).toEqual([1]);
  });

  it('an existing member with no new groups: only member_id and status, nothing changes', async () => {
    const [g1] = await createGroups(s, 'News');
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'a@x.org', { group_ids: [g1], fields: { city: 'Oslo' } });
    await setStatus(s, [1], 'o');
    const before = snapshot(s);
    s.clock.advance(DAY);
    expect(await ok(s, 'POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g1], fields: { city: 'Rome' } } })).toEqual({
      member_id: 1,
      status: 'o',
    });
    expect(snapshot(s)).toBe(before);
  });

  it('an existing member with a new group joins it, keeping its status', async () => {
    const [g1, g2] = await createGroups(s, 'News', 'Offers');
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'a@x.org', { group_ids: [g1] });
    await setStatus(s, [1], 'o');
    expect(await ok(s, 'POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [g1, g2], fields: { city: 'Rome' } } })).toEqual(
      { member_id: 1, status: 'o' },
    );
    expect(groupMemberIds(s, g2)).toEqual([1]);
    expect((await getMember(s, 1)).fields).toEqual({ city: 'Rome' });
  });

  it('opt_in_message lacking tags is a 400 naming the missing tags; nothing is created', async () => {
    const [g1] = await createGroups(s, 'News');
    const res = await s.call('POST', '/1/members/signup', {
      body: { email: 'a@x.org', group_ids: [g1], opt_in_message: 'Hi [rsvp_name] from [rsvp_email]' },
    });
    expect(res).toEqual({
      status: 400,
      body: { error: 'opt_in_message: must contain the tags [opt_in_url], [opt_out_url]', field: 'opt_in_message' },
    });
    expect(countRows(s, 'members')).toBe(0);
  });

  it('accepts an opt_in_message with all four tags and the optional parameters', async () => {
    const [g1] = await createGroups(s, 'News');
    const res = await s.call('POST', '/1/members/signup', {
      body: {
        email: 'a@x.org',
        group_ids: [g1],
        signup_form_id: 3,
        opt_in_subject: 'Please confirm',
        opt_in_message: `Hello ${TAGS}`,
        opt_in_confirmation: false,
        field_triggers: false,
        subscriber_consent_tracking: true,
      },
    });
    expect(res).toEqual({ status: 200, body: { member_id: 1, status: 'a' } });
  });

  it('an existing member with an empty group_ids: only member_id and status, nothing changes', async () => {
    await addMember(s, 'a@x.org');
    await setStatus(s, [1], 'e');
    const before = snapshot(s);
    s.clock.advance(DAY);
    expect(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [] } })).toEqual({
      status: 200,
      body: { member_id: 1, status: 'e' },
    });
    expect(snapshot(s)).toBe(before);
  });

  it('needs group_ids, and every group must exist', async () => {
    expectFieldError(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org' } }), 'group_ids');
    expectFieldError(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [0] } }), 'group_ids[0]');
    expect(await s.call('POST', '/1/members/signup', { body: { email: 'a@x.org', group_ids: [5] } })).toEqual({
      status: 404,
      body: { error: 'group 5 not found' },
    });
    expect(countRows(s, 'members')).toBe(0);
  });
});

// ------------------------------------------------------------------ bulk archive and status

describe('PUT /{account_id}/members/delete', () => {
  it('archives the listed members and answers true when all were found', async () => {
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org']) await addMember(s, e);
    expect(await s.call('PUT', '/1/members/delete', { body: { member_ids: [1, 3] } })).toEqual({ status: 200, body: true });
    expect(ids(await ok(s, 'GET', '/1/members'))).toEqual([2]);
    expect((await getMember(s, 1, true)).deleted_at).toBe(T0D);
  });

  it('answers false when some id is unknown (the known ones are archived)', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/delete', { body: { member_ids: [1, 42] } })).toEqual({ status: 200, body: false });
    expect(ids(await ok(s, 'GET', '/1/members', { query: { deleted_only: '1' } }))).toEqual([1]);
  });

  it('already archived members count as archived, and keep their first deleted_at', async () => {
    await addMember(s, 'a@x.org');
    await ok(s, 'DELETE', '/1/members/1');
    s.clock.advance(DAY);
    expect(await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [1] } })).toBe(true);
    expect((await getMember(s, 1, true)).deleted_at).toBe(T0D);
  });

  it('needs a non-empty member_ids', async () => {
    expectFieldError(await s.call('PUT', '/1/members/delete', { body: { member_ids: [] } }), 'member_ids');
    expectFieldError(await s.call('PUT', '/1/members/delete', { body: {} }), 'member_ids');
  });
});

describe('PUT /{account_id}/members/status', () => {
  it('sets status_to on the listed members and answers true', async () => {
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org']) await addMember(s, e);
    s.clock.advance(DAY);
    expect(await s.call('PUT', '/1/members/status', { body: { member_ids: [1, 2], status_to: 'e' } })).toEqual({
      status: 200,
      body: true,
    });
    expect(statuses(s)).toEqual({ 1: 'e', 2: 'e', 3: 'a' });
    const m = await getMember(s, 1);
    expect(m.status).toBe('error');
    expect(m.last_modified_at).toBe('@D:2026-03-05T05:06:07');
    expect((await getMember(s, 3)).last_modified_at).toBe(T0D);
  });

  it('answers false when some id is unknown (the known ones still move)', async () => {
    await addMember(s, 'a@x.org');
    expect(await ok(s, 'PUT', '/1/members/status', { body: { member_ids: [1, 9], status_to: 'o' } })).toBe(false);
    expect(statuses(s)).toEqual({ 1: 'o' });
    expect(countRows(s, 'member_optouts', 'member_id = 1')).toBe(1);
  });

  it('only a, e and o can be set', async () => {
    await addMember(s, 'a@x.org');
    for (const bad of ['f', 'x', 'active']) {
      expectFieldError(await s.call('PUT', '/1/members/status', { body: { member_ids: [1], status_to: bad } }), 'status_to');
    }
    expect(statuses(s)).toEqual({ 1: 'a' });
  });
});

// ------------------------------------------------------------------ update

describe('PUT /{account_id}/members/{member_id}', () => {
  beforeEach(async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'age', field_type: 'numeric' });
    await addMember(s, 'a@x.org', { fields: { city: 'Oslo', age: 30 } });
    await addMember(s, 'b@x.org');
  });

  it('merges fields (null removes one) and answers true', async () => {
    s.clock.advance(DAY);
    expect(await s.call('PUT', '/1/members/1', { body: { fields: { city: 'Rome', age: null } } })).toEqual({
      status: 200,
      body: true,
    });
    const m = await getMember(s, 1);
    expect(m.fields).toEqual({ city: 'Rome' });
    expect(m.last_modified_at).toBe('@D:2026-03-05T05:06:07');
  });

  it('works on an archived member, which stays archived', async () => {
    await ok(s, 'DELETE', '/1/members/1');
    s.clock.advance(DAY);
    expect(await ok(s, 'PUT', '/1/members/1', { body: { fields: { city: 'Rome' }, status_to: 'e' } })).toBe(true);
    const m = await getMember(s, 1, true);
    expect(m.fields).toEqual({ city: 'Rome', age: 30 });
    expect(m.member_status_id).toBe('e');
    expect(m.deleted_at).toBe(T0D);
  });

  it('changes the e-mail address', async () => {
    expect(await ok(s, 'PUT', '/1/members/1', { body: { email: 'New@X.org' } })).toBe(true);
    expect((await ok(s, 'GET', '/1/members/email/new%40x.org')).member_id).toBe(1);
    expect((await s.call('GET', '/1/members/email/a%40x.org')).status).toBe(404);
    // Its own address (any case) is no conflict.
    expect(await ok(s, 'PUT', '/1/members/1', { body: { email: 'NEW@x.org' } })).toBe(true);
  });

  it('an address that belongs to another member is a 400 and changes nothing', async () => {
    const before = snapshot(s);
    expect(await s.call('PUT', '/1/members/1', { body: { email: 'b@x.org', fields: { city: 'Rome' } } })).toEqual({
      status: 400,
      body: { error: 'email: b@x.org already belongs to member 2', field: 'email' },
    });
    expect(snapshot(s)).toBe(before);
  });

  it('an archived member still holds its address', async () => {
    await ok(s, 'DELETE', '/1/members/2');
    expectFieldError(await s.call('PUT', '/1/members/1', { body: { email: 'b@x.org' } }), 'email');
  });

  it('status_to moves the member and records an opt-out once', async () => {
    expect(await ok(s, 'PUT', '/1/members/1', { body: { status_to: 'o' } })).toBe(true);
    expect(await ok(s, 'PUT', '/1/members/1', { body: { status_to: 'o' } })).toBe(true);
    expect(statuses(s)).toEqual({ 1: 'o', 2: 'a' });
    expect(countRows(s, 'member_optouts')).toBe(1);
    expectFieldError(await s.call('PUT', '/1/members/1', { body: { status_to: 'f' } }), 'status_to');
  });

  it('404 for an unknown member', async () => {
    expect(await s.call('PUT', '/1/members/99', { body: { fields: { city: 'x' } } })).toEqual({
      status: 404,
      body: { error: 'member 99 not found' },
    });
  });

  it('an empty body changes nothing and answers true', async () => {
    const before = snapshot(s);
    s.clock.advance(DAY);
    expect(await ok(s, 'PUT', '/1/members/2', { body: {} })).toBe(true);
    expect(snapshot(s)).toBe(before);
  });
});

// ------------------------------------------------------------------ archive one / by status

describe('DELETE /{account_id}/members/{member_id}', () => {
  it('archives the member and answers true (also when already archived)', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('DELETE', '/1/members/1')).toEqual({ status: 200, body: true });
    s.clock.advance(DAY);
    expect(await s.call('DELETE', '/1/members/1')).toEqual({ status: 200, body: true });
    expect((await getMember(s, 1, true)).deleted_at).toBe(T0D);
    expect((await s.call('GET', '/1/members/1')).status).toBe(404);
  });

  it('404 for an unknown member', async () => {
    expect(await s.call('DELETE', '/1/members/3')).toEqual({ status: 404, body: { error: 'member 3 not found' } });
  });
});

describe('DELETE /{account_id}/members?member_status_id=', () => {
  it('archives every live member of that status', async () => {
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org', 'd@x.org']) await addMember(s, e);
    await setStatus(s, [2, 3], 'o');
    await setStatus(s, [4], 'e');
    expect(await s.call('DELETE', '/1/members', { query: { member_status_id: 'o' } })).toEqual({ status: 200, body: true });
    expect(ids(await ok(s, 'GET', '/1/members'))).toEqual([1, 4]);
    expect(ids(await ok(s, 'GET', '/1/members', { query: { deleted_only: '1' } }))).toEqual([2, 3]);
  });

  it('needs a status of a, o or e', async () => {
    await addMember(s, 'a@x.org');
    expectFieldError(await s.call('DELETE', '/1/members'), 'member_status_id');
    expectFieldError(await s.call('DELETE', '/1/members', { query: { member_status_id: 'f' } }), 'member_status_id');
    expect(ids(await ok(s, 'GET', '/1/members'))).toEqual([1]);
  });
});

// ------------------------------------------------------------------ member groups

describe("a member's groups", () => {
  let g1: number, g2: number, g3: number;
  beforeEach(async () => {
    [g1, g2, g3] = await createGroups(s, 'One', 'Two', 'Three');
    await addMember(s, 'a@x.org');
  });

  it('GET answers [] and then the groups with their counts', async () => {
    expect(await s.call('GET', '/1/members/1/groups')).toEqual({ status: 200, body: [] });
    await ok(s, 'PUT', '/1/members/1/groups', { body: { group_ids: [g2] } });
    expect(await ok(s, 'GET', '/1/members/1/groups')).toEqual([
      {
        member_group_id: g2,
        account_id: 1,
        group_name: 'Two',
        group_type: 'g',
        active_count: 1,
        error_count: 0,
        optout_count: 0,
        deleted_at: null,
        purged_at: null,
      },
    ]);
  });

  it('PUT groups answers the ids of the groups newly joined', async () => {
    expect(await s.call('PUT', '/1/members/1/groups', { body: { group_ids: [g1, g2] } })).toEqual({
      status: 200,
      body: [g1, g2],
    });
    expect(await ok(s, 'PUT', '/1/members/1/groups', { body: { group_ids: [g1, g3, g3] } })).toEqual([g3]);
    expect((await ok(s, 'GET', '/1/members/1/groups')).map((g: any) => g.member_group_id)).toEqual([g1, g2, g3]);
  });

  it('a missing group is a 404 and joins nothing', async () => {
    expect(await s.call('PUT', '/1/members/1/groups', { body: { group_ids: [g1, 404] } })).toEqual({
      status: 404,
      body: { error: 'group 404 not found' },
    });
    expect(countRows(s, 'group_members')).toBe(0);
  });

  it('PUT groups/remove answers the ids of the groups actually left', async () => {
    await ok(s, 'PUT', '/1/members/1/groups', { body: { group_ids: [g1, g2] } });
    expect(await ok(s, 'PUT', '/1/members/1/groups/remove', { body: { group_ids: [g2, g3] } })).toEqual([g2]);
    expect(await ok(s, 'PUT', '/1/members/1/groups/remove', { body: { group_ids: [g2] } })).toEqual([]);
    expect(groupMemberIds(s, g1)).toEqual([1]);
    expect((await s.call('PUT', '/1/members/1/groups/remove', { body: { group_ids: [g1, 77] } })).status).toBe(404);
    expect(groupMemberIds(s, g1)).toEqual([1]);
  });

  it('DELETE groups removes the member from all groups', async () => {
    const other = await addMember(s, 'b@x.org', { group_ids: [g1] });
    await ok(s, 'PUT', '/1/members/1/groups', { body: { group_ids: [g1, g2, g3] } });
    expect(await s.call('DELETE', '/1/members/1/groups')).toEqual({ status: 200, body: true });
    expect(await ok(s, 'GET', '/1/members/1/groups')).toEqual([]);
    expect(groupMemberIds(s, g1)).toEqual([other]);
  });

  it('404 for an unknown member on every member-group route', async () => {
    const notFound = { status: 404, body: { error: 'member 9 not found' } };
    expect(await s.call('GET', '/1/members/9/groups')).toEqual(notFound);
    expect(await s.call('PUT', '/1/members/9/groups', { body: { group_ids: [g1] } })).toEqual(notFound);
    expect(await s.call('PUT', '/1/members/9/groups/remove', { body: { group_ids: [g1] } })).toEqual(notFound);
    expect(await s.call('DELETE', '/1/members/9/groups')).toEqual(notFound);
  });
});

describe('PUT /{account_id}/members/groups/remove', () => {
  let g1: number, g2: number;
  beforeEach(async () => {
    [g1, g2] = await createGroups(s, 'One', 'Two');
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org']) await addMember(s, e, { group_ids: [g1, g2] });
  });

  it('removes the members from the groups and answers true', async () => {
    expect(await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1, 2], group_ids: [g1] } })).toEqual({
      status: 200,
      body: true,
    });
    expect(groupMemberIds(s, g1)).toEqual([3]);
    expect(groupMemberIds(s, g2)).toEqual([1, 2, 3]);
  });

  it('404 if any member or group does not exist, and nothing is removed', async () => {
    const before = snapshot(s);
    expect(await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1, 50], group_ids: [g1] } })).toEqual({
      status: 404,
      body: { error: 'member 50 not found' },
    });
    expect(await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1], group_ids: [g1, 60] } })).toEqual({
      status: 404,
      body: { error: 'group 60 not found' },
    });
    expect(snapshot(s)).toBe(before);
  });
});

// ------------------------------------------------------------------ mailings, copy

describe('GET /{account_id}/members/{member_id}/mailings', () => {
  it('answers [] for a member without mailings, 404 for no member', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('GET', '/1/members/1/mailings')).toEqual({ status: 200, body: [] });
    expect(await s.call('GET', '/1/members/2/mailings')).toEqual({ status: 404, body: { error: 'member 2 not found' } });
  });
});

describe('PUT /{account_id}/members/{group_id}/copy', () => {
  it('copies every live member of the given statuses into the group', async () => {
    const [g] = await createGroups(s, 'Copy');
    for (const e of ['a@x.org', 'e@x.org', 'o@x.org', 'gone@x.org', 'in@x.org']) await addMember(s, e);
    await setStatus(s, [2], 'e');
    await setStatus(s, [3], 'o');
    await ok(s, 'DELETE', '/1/members/4');
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [5] } });
    expect(await s.call('PUT', `/1/members/${g}/copy`, { body: { member_status_id: ['a', 'e'] } })).toEqual({
      status: 200,
      body: true,
    });
    expect(groupMemberIds(s, g)).toEqual([1, 2, 5]);
    expect(await ok(s, 'PUT', `/1/members/${g}/copy`, { body: { member_status_id: ['o'] } })).toBe(true);
    expect(groupMemberIds(s, g)).toEqual([1, 2, 3, 5]);
  });

  it('404 when the group is missing; 400 for a status outside a, o, e', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/8/copy', { body: { member_status_id: ['a'] } })).toEqual({
      status: 404,
      body: { error: 'group 8 not found' },
    });
    const [g] = await createGroups(s, 'Copy');
    expectFieldError(await s.call('PUT', `/1/members/${g}/copy`, { body: { member_status_id: ['f'] } }), 'member_status_id[0]');
    expectFieldError(await s.call('PUT', `/1/members/${g}/copy`, { body: { member_status_id: [] } }), 'member_status_id');
    expect(countRows(s, 'group_members')).toBe(0);
  });
});

// ------------------------------------------------------------------ status moves

describe('PUT /{account_id}/members/status/{status_from}/to/{status_to}', () => {
  beforeEach(async () => {
    for (const e of ['a1@x.org', 'a2@x.org', 'e1@x.org', 'o1@x.org', 'a3@x.org']) await addMember(s, e);
    await setStatus(s, [3], 'e');
    await setStatus(s, [4], 'o');
  });

  it('moves every live member of status_from to status_to', async () => {
    await ok(s, 'DELETE', '/1/members/5');
    expect(await s.call('PUT', '/1/members/status/a/to/e', { body: {} })).toEqual({ status: 200, body: true });
    expect(statuses(s)).toEqual({ 1: 'e', 2: 'e', 3: 'e', 4: 'o', 5: 'a' });
  });

  it('a move to o records an opt-out for each member moved', async () => {
    expect(await ok(s, 'PUT', '/1/members/status/e/to/o')).toBe(true);
    expect(statuses(s)).toEqual({ 1: 'a', 2: 'a', 3: 'o', 4: 'o', 5: 'a' });
    expect(await ok(s, 'GET', '/1/members/3/optout')).toEqual([{ timestamp: T0D, mailing_id: null }]);
    expect(countRows(s, 'member_optouts')).toBe(2);
  });

  it('group_id limits the move to one group', async () => {
    const [g] = await createGroups(s, 'Some');
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [2, 4] } });
    expect(await ok(s, 'PUT', '/1/members/status/a/to/o', { body: { group_id: g } })).toBe(true);
    expect(statuses(s)).toEqual({ 1: 'a', 2: 'o', 3: 'e', 4: 'o', 5: 'a' });
  });

  it('a missing group is a 404 and moves nobody', async () => {
    expect(await s.call('PUT', '/1/members/status/a/to/o', { body: { group_id: 31 } })).toEqual({
      status: 404,
      body: { error: 'group 31 not found' },
    });
    expect(statuses(s)).toEqual({ 1: 'a', 2: 'a', 3: 'e', 4: 'o', 5: 'a' });
  });

  it('moves forwarded members out of f', async () => {
    s.db.prepare(`UPDATE members SET member_status_id = 'f' WHERE member_id = 5`).run();
    expect(await ok(s, 'PUT', '/1/members/status/f/to/a')).toBe(true);
    expect(statuses(s)[5]).toBe('a');
  });

  it('400 for invalid status letters, naming the path parameter', async () => {
    expectFieldError(await s.call('PUT', '/1/members/status/x/to/a'), 'status_from');
    expectFieldError(await s.call('PUT', '/1/members/status/a/to/f'), 'status_to');
    expectFieldError(await s.call('PUT', '/1/members/status/a/to/active'), 'status_to');
    expect(statuses(s)).toEqual({ 1: 'a', 2: 'a', 3: 'e', 4: 'o', 5: 'a' });
  });
});

// ------------------------------------------------------------------ purge

describe('POST /{account_id}/members/purge', () => {
  it('erases the members from every table', async () => {
    const [g] = await createGroups(s, 'G');
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await addMember(s, 'a@x.org', { group_ids: [g], fields: { city: 'Oslo' }, phone_number: '+4722334455' });
    await addMember(s, 'b@x.org', { group_ids: [g] });
    await addMember(s, 'c@x.org', { group_ids: [g] });
    await setStatus(s, [1, 2, 3], 'o');
    await ok(s, 'DELETE', '/1/members/2');

    expect(await s.call('POST', '/1/members/purge', { body: { member_ids: [1, 2] } })).toEqual({ status: 200, body: true });

    expect(countRows(s, 'members', 'member_id IN (1, 2)')).toBe(0);
    expect(countRows(s, 'group_members', 'member_id IN (1, 2)')).toBe(0);
    expect(countRows(s, 'member_optouts', 'member_id IN (1, 2)')).toBe(0);
    expect(countRows(s, 'members', "email = 'a@x.org'")).toBe(0);
    expect(groupMemberIds(s, g)).toEqual([3]);
    expect(countRows(s, 'member_optouts', 'member_id = 3')).toBe(1);
    expect((await s.call('GET', '/1/members/1', { query: { deleted: 'true' } })).status).toBe(404);
    expect((await s.call('GET', '/1/members/2', { query: { deleted: 'true' } })).status).toBe(404);
    // The address is free again: adding it creates a new member.
    expect(await ok(s, 'POST', '/1/members/add', { body: { email: 'a@x.org' } })).toEqual({
      member_id: 4,
      added: true,
      status: 'a',
    });
  });

  it('an unknown id is a 400 naming it (the spec lists only 400 here) and erases nothing', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('POST', '/1/members/purge', { body: { member_ids: [1, 2] } })).toEqual({
      status: 400,
      body: { error: 'member_ids: no member 2', field: 'member_ids' },
    });
    expect(countRows(s, 'members')).toBe(1);
  });

  it('needs a non-empty list of integer ids', async () => {
    expectFieldError(await s.call('POST', '/1/members/purge', { body: { member_ids: [] } }), 'member_ids');
    expectFieldError(await s.call('POST', '/1/members/purge', { body: { member_ids: ['1'] } }), 'member_ids[0]');
  });
});

describe('PUT /{account_id}/members/purgeall', () => {
  let g: number;
  // 1 live a, 2 archived a, 3 archived o, 4 archived o in group g, 5 live o in group g
  beforeEach(async () => {
    [g] = await createGroups(s, 'G');
    for (const e of ['1@x.org', '2@x.org', '3@x.org', '4@x.org', '5@x.org']) await addMember(s, e);
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [4, 5] } });
    await setStatus(s, [3, 4, 5], 'o');
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [2, 3, 4] } });
  });
  const remaining = () =>
    (s.db.prepare('SELECT member_id FROM members ORDER BY member_id').all() as { member_id: number }[]).map((r) => r.member_id);

  it('erases every archived member and only those', async () => {
    expect(await s.call('PUT', '/1/members/purgeall', { body: {} })).toEqual({ status: 200, body: true });
    expect(remaining()).toEqual([1, 5]);
    expect(groupMemberIds(s, g)).toEqual([5]);
    expect(countRows(s, 'member_optouts', 'member_id IN (3, 4)')).toBe(0);
  });

  it('an empty body is the same as {}', async () => {
    expect(await s.call('PUT', '/1/members/purgeall', { rawBody: '' })).toEqual({ status: 200, body: true });
    expect(remaining()).toEqual([1, 5]);
  });

  it('member_status_id limits it to archived members of that status', async () => {
    expect(await ok(s, 'PUT', '/1/members/purgeall', { body: { member_status_id: 'a' } })).toBe(true);
    expect(remaining()).toEqual([1, 3, 4, 5]);
  });

  it('member_group_id (a string or an integer) limits it to one group', async () => {
    expect(await ok(s, 'PUT', '/1/members/purgeall', { body: { member_group_id: String(g) } })).toBe(true);
    expect(remaining()).toEqual([1, 2, 3, 5]);
    expect(await ok(s, 'PUT', '/1/members/purgeall', { body: { member_group_id: g, member_status_id: 'o' } })).toBe(true);
    expect(remaining()).toEqual([1, 2, 3, 5]);
  });

  it('a missing group is a 404; a bad status or group id a 400; nothing is erased', async () => {
    expect(await s.call('PUT', '/1/members/purgeall', { body: { member_group_id: '99' } })).toEqual({
      status: 404,
      body: { error: 'group 99 not found' },
    });
    expectFieldError(await s.call('PUT', '/1/members/purgeall', { body: { member_status_id: 'f' } }), 'member_status_id');
    expectFieldError(await s.call('PUT', '/1/members/purgeall', { body: { member_group_id: 'one' } }), 'member_group_id');
    expect(remaining()).toEqual([1, 2, 3, 4, 5]);
  });
});
