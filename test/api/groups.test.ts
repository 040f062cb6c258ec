import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { addMember, atD, countRows, createGroups, expectFieldError, groupMemberIds, ok, setStatus, snapshot } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const group = (member_group_id: number, group_name: string, over: Record<string, unknown> = {}) => ({
  member_group_id,
  account_id: 1,
  group_name,
  group_type: 'g',
  active_count: 0,
  error_count: 0,
  optout_count: 0,
  deleted_at: null,
  purged_at: null,
  ...over,
});

const counts = async (id: number) => {
  const g = await ok(s, 'GET', `/1/groups/${id}`);
  return [g.active_count, g.error_count, g.optout_count];
};

// ------------------------------------------------------------------ list and create

describe('GET and POST /{account_id}/groups', () => {
  it('lists no groups on a fresh account', async () => {
    expect(await s.call('GET', '/1/groups')).toEqual({ status: 200, body: [] });
  });

  it('creates several groups at once (200) and answers their ids and names', async () => {
    const res = await s.call('POST', '/1/groups', {
      body: { groups: [{ group_name: 'News' }, { group_name: '  Offers  ' }] },
    });
    expect(res).toEqual({
      status: 200,
      body: [
        { member_group_id: 1, group_name: 'News' },
        { member_group_id: 2, group_name: 'Offers' },
      ],
    });
    expect(await ok(s, 'GET', '/1/groups')).toEqual([group(1, 'News'), group(2, 'Offers')]);
  });

  it('is all or none: a name already taken (any case) creates nothing', async () => {
    await createGroups(s, 'News');
    const res = await s.call('POST', '/1/groups', { body: { groups: [{ group_name: 'Fresh' }, { group_name: 'NEWS' }] } });
    expect(res).toEqual({
      status: 400,
      body: { error: 'groups[1].group_name: a group named "NEWS" already exists (group 1)', field: 'groups[1].group_name' },
    });
    expect((await ok(s, 'GET', '/1/groups')).map((g: any) => g.group_name)).toEqual(['News']);
    expect(countRows(s, 'member_groups')).toBe(1);
  });

  it('is all or none: a name given twice in one request creates nothing', async () => {
    const res = await s.call('POST', '/1/groups', {
      body: { groups: [{ group_name: 'A' }, { group_name: 'B' }, { group_name: 'b' }] },
    });
    expectFieldError(res, 'groups[2].group_name');
    expect(countRows(s, 'member_groups')).toBe(0);
  });

  it('rejects blank names, an empty list and unknown group types', async () => {
    expectFieldError(await s.call('POST', '/1/groups', { body: { groups: [{ group_name: '   ' }] } }), 'groups[0].group_name');
    expectFieldError(await s.call('POST', '/1/groups', { body: { groups: [{ group_name: '' }] } }), 'groups[0].group_name');
    expectFieldError(await s.call('POST', '/1/groups', { body: { groups: [] } }), 'groups');
    expectFieldError(
      await s.call('POST', '/1/groups', { body: { groups: [{ group_name: 'X', group_type: 'z' }] } }),
      'groups[0].group_type',
    );
    expect(countRows(s, 'member_groups')).toBe(0);
  });

  it('lists only group_type g by default; group_types selects others', async () => {
    await ok(s, 'POST', '/1/groups', {
      body: { groups: [{ group_name: 'Plain' }, { group_name: 'Hidden', group_type: 'h' }, { group_name: 'Sig', group_type: 's' }] },
    });
    expect((await ok(s, 'GET', '/1/groups')).map((g: any) => g.group_name)).toEqual(['Plain']);
    expect(await ok(s, 'GET', '/1/groups', { query: { group_types: 's' } })).toEqual([group(3, 'Sig', { group_type: 's' })]);
    expect((await ok(s, 'GET', '/1/groups', { query: { group_types: 'g,h,s' } })).map((g: any) => g.member_group_id)).toEqual([1, 2, 3]);
    expectFieldError(await s.call('GET', '/1/groups', { query: { group_types: 'g,x' } }), 'group_types');
  });

  it('takes a start/end window and count=true', async () => {
    await createGroups(s, 'A', 'B', 'C', 'D');
    const names = async (query: Record<string, string>) => (await ok(s, 'GET', '/1/groups', { query })).map((g: any) => g.group_name);
    expect(await names({ start: '1', end: '3' })).toEqual(['B', 'C']);
    expect(await names({ start: '3' })).toEqual(['D']);
    expect(await s.call('GET', '/1/groups', { query: { count: 'true' } })).toEqual({ status: 200, body: 4 });
    expectFieldError(await s.call('GET', '/1/groups', { query: { start: '3', end: '1' } }), 'end');
  });
});

// ------------------------------------------------------------------ one group

describe('GET, PUT, DELETE /{account_id}/groups/{member_group_id}', () => {
  it('gets a group; 404 for an unknown one', async () => {
    await createGroups(s, 'News');
    expect(await s.call('GET', '/1/groups/1')).toEqual({ status: 200, body: group(1, 'News') });
    expect(await s.call('GET', '/1/groups/2')).toEqual({ status: 404, body: { error: 'group 2 not found' } });
  });

  it('renames a group (true); its own name in another case is no conflict', async () => {
    await createGroups(s, 'News', 'Offers');
    expect(await s.call('PUT', '/1/groups/1', { body: { group_name: 'Newsletter' } })).toEqual({ status: 200, body: true });
    expect((await ok(s, 'GET', '/1/groups/1')).group_name).toBe('Newsletter');
    expect(await ok(s, 'PUT', '/1/groups/1', { body: { group_name: 'NEWSLETTER' } })).toBe(true);
    expect((await ok(s, 'GET', '/1/groups/1')).group_name).toBe('NEWSLETTER');
  });

  it("renaming to another group's name is a 400 and changes nothing", async () => {
    await createGroups(s, 'News', 'Offers');
    expect(await s.call('PUT', '/1/groups/1', { body: { group_name: 'offers' } })).toEqual({
      status: 400,
      body: { error: 'group_name: a group named "offers" already exists (group 2)', field: 'group_name' },
    });
    expectFieldError(await s.call('PUT', '/1/groups/1', { body: { group_name: ' ' } }), 'group_name');
    expectFieldError(await s.call('PUT', '/1/groups/1', { body: {} }), 'group_name');
    expect((await ok(s, 'GET', '/1/groups/1')).group_name).toBe('News');
    expect(await s.call('PUT', '/1/groups/9', { body: { group_name: 'X' } })).toEqual({
      status: 404,
      body: { error: 'group 9 not found' },
    });
  });

  it('deletes a group: true, gone from every list, memberships removed, name free again', async () => {
    const [g1, g2] = await createGroups(s, 'News', 'Offers');
    await addMember(s, 'a@x.org', { group_ids: [g1, g2] });
    expect(await s.call('DELETE', `/1/groups/${g1}`)).toEqual({ status: 200, body: true });
    expect(await s.call('GET', `/1/groups/${g1}`)).toEqual({ status: 404, body: { error: `group ${g1} not found` } });
    expect((await ok(s, 'GET', '/1/groups')).map((g: any) => g.member_group_id)).toEqual([g2]);
    expect((await ok(s, 'GET', '/1/members/1/groups')).map((g: any) => g.member_group_id)).toEqual([g2]);
    expect(countRows(s, 'group_members', 'member_group_id = ?', g1)).toBe(0);
    expect(s.db.prepare('SELECT deleted_at FROM member_groups WHERE member_group_id = ?').get(g1)).toEqual({
      deleted_at: '2026-03-04T05:06:07.000000',
    });
    expect(await s.call('DELETE', `/1/groups/${g1}`)).toEqual({ status: 404, body: { error: `group ${g1} not found` } });
    expect(await createGroups(s, 'news')).toEqual([3]);
    // The member itself is untouched.
    expect((await ok(s, 'GET', '/1/members/1')).deleted_at).toBeNull();
  });

  it('a deleted group refuses every group-member route', async () => {
    const [g1, g2] = await createGroups(s, 'A', 'B');
    await addMember(s, 'a@x.org');
    await ok(s, 'DELETE', `/1/groups/${g1}`);
    const gone = { status: 404, body: { error: `group ${g1} not found` } };
    expect(await s.call('GET', `/1/groups/${g1}/members`)).toEqual(gone);
    expect(await s.call('PUT', `/1/groups/${g1}/members`, { body: { member_ids: [1] } })).toEqual(gone);
    expect(await s.call('PUT', `/1/groups/${g1}/members/remove`, { body: { member_ids: [1] } })).toEqual(gone);
    expect(await s.call('DELETE', `/1/groups/${g1}/members`)).toEqual(gone);
    expect(await s.call('PUT', `/1/groups/${g2}/${g1}/members/copy`, { body: {} })).toEqual(gone);
    expect(await s.call('PUT', `/1/members/1/groups`, { body: { group_ids: [g1] } })).toEqual(gone);
    expect(countRows(s, 'group_members')).toBe(0);
  });
});

// ------------------------------------------------------------------ group members

describe('group members', () => {
  let g: number;
  beforeEach(async () => {
    [g] = await createGroups(s, 'G');
    for (const e of ['a@x.org', 'b@x.org', 'c@x.org', 'd@x.org']) await addMember(s, e);
  });

  it('GET members lists the live members in id order with the member shape', async () => {
    expect(await s.call('GET', `/1/groups/${g}/members`)).toEqual({ status: 200, body: [] });
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [3, 1] } });
    const list = await ok(s, 'GET', `/1/groups/${g}/members`);
    expect(list.map((m: any) => m.member_id)).toEqual([1, 3]);
    expect(list[0]).toEqual({
      member_id: 1,
      account_id: 1,
      email: 'a@x.org',
      status: 'active',
      member_status_id: 'a',
      confirmed_opt_in: null,
      fields: {},
      sms: null,
      last_modified_at: atD(T0),
      member_since: atD(T0),
      deleted_at: null,
      plaintext_preferred: false,
      email_error: null,
      bounce_count: 0,
    });
  });

  it('archived members are listed only with deleted; start/end window the list', async () => {
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 2, 3, 4] } });
    await ok(s, 'DELETE', '/1/members/2');
    const idsOf = async (query: Record<string, string> = {}) =>
      (await ok(s, 'GET', `/1/groups/${g}/members`, { query })).map((m: any) => m.member_id);
    expect(await idsOf()).toEqual([1, 3, 4]);
    expect(await idsOf({ deleted: 'true' })).toEqual([1, 2, 3, 4]);
    expect(await idsOf({ start: '1', end: '2' })).toEqual([3]);
    expect(await idsOf({ start: '2' })).toEqual([4]);
  });

  it('PUT members answers the ids newly added', async () => {
    expect(await s.call('PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 2] } })).toEqual({
      status: 200,
      body: [1, 2],
    });
    expect(await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [2, 3, 3] } })).toEqual([3]);
    expect(groupMemberIds(s, g)).toEqual([1, 2, 3]);
  });

  it('PUT members with an unknown member is a 404 and adds nobody', async () => {
    expect(await s.call('PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 99] } })).toEqual({
      status: 404,
      body: { error: 'member 99 not found' },
    });
    expect(groupMemberIds(s, g)).toEqual([]);
    expectFieldError(await s.call('PUT', `/1/groups/${g}/members`, { body: { member_ids: [] } }), 'member_ids');
  });

  it('PUT members/remove answers the ids actually removed', async () => {
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 2, 3] } });
    expect(await s.call('PUT', `/1/groups/${g}/members/remove`, { body: { member_ids: [2, 4, 99] } })).toEqual({
      status: 200,
      body: [2],
    });
    expect(groupMemberIds(s, g)).toEqual([1, 3]);
  });

  it('DELETE members empties the group, or removes only one status, and answers how many left (as the real service)', async () => {
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 2, 3, 4] } });
    await setStatus(s, [2, 3], 'o');
    expect(await s.call('DELETE', `/1/groups/${g}/members`, { query: { member_status_id: 'o' } })).toEqual({
      status: 200,
      body: 2,
    });
    expect(groupMemberIds(s, g)).toEqual([1, 4]);
    expectFieldError(await s.call('DELETE', `/1/groups/${g}/members`, { query: { member_status_id: 'x' } }), 'member_status_id');
    expect(groupMemberIds(s, g)).toEqual([1, 4]);
    expect(await ok(s, 'DELETE', `/1/groups/${g}/members`)).toBe(2);
    expect(groupMemberIds(s, g)).toEqual([]);
    expect(await ok(s, 'DELETE', `/1/groups/${g}/members`)).toBe(0);
    // Members themselves are untouched.
    expect(countRows(s, 'members')).toBe(4);
  });

  it('copies the live members of one group into another, optionally only some statuses', async () => {
    const [to, other] = await createGroups(s, 'To', 'Other');
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [1, 2, 3, 4] } });
    await setStatus(s, [2], 'o');
    await setStatus(s, [3], 'e');
    await ok(s, 'DELETE', '/1/members/4');
    expect(await s.call('PUT', `/1/groups/${g}/${to}/members/copy`, { body: { member_status_id: ['a', 'e'] } })).toEqual({
      status: 200,
      body: true,
    });
    expect(groupMemberIds(s, to)).toEqual([1, 3]);
    expect(await ok(s, 'PUT', `/1/groups/${g}/${other}/members/copy`, { rawBody: '' })).toBe(true);
    expect(groupMemberIds(s, other)).toEqual([1, 2, 3]);
    expect(groupMemberIds(s, g)).toEqual([1, 2, 3, 4]);
  });

  it('copy with a missing group is a 404 and copies nothing', async () => {
    await ok(s, 'PUT', `/1/groups/${g}/members`, { body: { member_ids: [1] } });
    expect(await s.call('PUT', `/1/groups/${g}/42/members/copy`, { body: {} })).toEqual({
      status: 404,
      body: { error: 'group 42 not found' },
    });
    expect(await s.call('PUT', `/1/groups/42/${g}/members/copy`, { body: {} })).toEqual({
      status: 404,
      body: { error: 'group 42 not found' },
    });
    expect(countRows(s, 'group_members')).toBe(1);
  });
});

// ------------------------------------------------------------------ counts

describe('group counts', () => {
  let g: number, h: number;
  // members 1-2 active, 3 error, 4-5 opted out; all in g; 1 and 4 also in h
  beforeEach(async () => {
    [g, h] = await createGroups(s, 'G', 'H');
    for (const e of ['1@x.org', '2@x.org', '3@x.org', '4@x.org', '5@x.org']) await addMember(s, e, { group_ids: [g] });
    await ok(s, 'PUT', `/1/groups/${h}/members`, { body: { member_ids: [1, 4] } });
    await setStatus(s, [3], 'e');
    await setStatus(s, [4, 5], 'o');
  });

  it('counts members by status', async () => {
    expect(await counts(g)).toEqual([2, 1, 2]);
    expect(await counts(h)).toEqual([1, 0, 1]);
    const listed = await ok(s, 'GET', '/1/groups');
    expect(listed.map((x: any) => [x.active_count, x.error_count, x.optout_count])).toEqual([
      [2, 1, 2],
      [1, 0, 1],
    ]);
    expect((await ok(s, 'GET', '/1/members/1/groups')).map((x: any) => x.active_count)).toEqual([2, 1]);
  });

  it('follow single, bulk and moved status changes', async () => {
    await ok(s, 'PUT', '/1/members/1', { body: { status_to: 'e' } });
    expect(await counts(g)).toEqual([1, 2, 2]);
    await ok(s, 'PUT', '/1/members/status/o/to/a', { body: { group_id: h } });
    expect(await counts(g)).toEqual([2, 2, 1]);
    expect(await counts(h)).toEqual([1, 1, 0]);
    await ok(s, 'PUT', '/1/members/email/optout/2%40x.org', { body: {} });
    expect(await counts(g)).toEqual([1, 2, 2]);
  });

  it('archived members count nowhere, and count again once restored', async () => {
    await ok(s, 'DELETE', '/1/members/1');
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [3] } });
    await ok(s, 'DELETE', '/1/members', { query: { member_status_id: 'o' } });
    expect(await counts(g)).toEqual([1, 0, 0]);
    expect(await counts(h)).toEqual([0, 0, 0]);
    await ok(s, 'POST', '/1/members/add', { body: { email: '4@x.org' } });
    expect(await counts(g)).toEqual([1, 0, 1]);
    expect(await counts(h)).toEqual([0, 0, 1]);
  });

  it('purged members and removed memberships leave the counts', async () => {
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [1, 5] } });
    expect(await counts(g)).toEqual([1, 1, 1]);
    expect(await counts(h)).toEqual([0, 0, 1]);
    await ok(s, 'DELETE', '/1/members/3');
    await ok(s, 'PUT', '/1/members/purgeall', { body: {} });
    expect(await counts(g)).toEqual([1, 0, 1]);
    await ok(s, 'PUT', '/1/members/4/groups/remove', { body: { group_ids: [g] } });
    expect(await counts(g)).toEqual([1, 0, 0]);
    expect(await counts(h)).toEqual([0, 0, 1]);
    await ok(s, 'DELETE', '/1/members/4/groups');
    expect(await counts(h)).toEqual([0, 0, 0]);
  });

  it('forwarded members are in the group but in no count', async () => {
    s.db.prepare(`UPDATE members SET member_status_id = 'f' WHERE member_id = 2`).run();
    expect(await counts(g)).toEqual([1, 1, 2]);
    expect(groupMemberIds(s, g)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a deleted group takes no part in the counts of the others', async () => {
    const before = await counts(g);
    await ok(s, 'DELETE', `/1/groups/${h}`);
    expect(await counts(g)).toEqual(before);
  });

  it('a failed request leaves the counts as they were', async () => {
    const before = snapshot(s);
    expect((await s.call('PUT', '/1/members/groups/remove', { body: { member_ids: [1, 2, 404], group_ids: [g] } })).status).toBe(404);
    expect((await s.call('PUT', '/1/members/status/a/to/o', { body: { group_id: 404 } })).status).toBe(404);
    expect(await counts(g)).toEqual([2, 1, 2]);
    expect(snapshot(s)).toBe(before);
  });
});
