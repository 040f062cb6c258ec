import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { makeService, type TestService } from '../helpers.js';

interface Audience {
  fields: Record<string, unknown>[];
  groups: string[];
  members: { email: string; fields: Record<string, unknown>; groups: string[]; status?: string; archived?: boolean; sms?: unknown }[];
}

const audience = JSON.parse(readFileSync(new URL('../../fixtures/audience.json', import.meta.url), 'utf8')) as Audience;
let s: TestService;

/** Loads the fixture the way a client would: fields, groups, members, statuses, archive. */
beforeAll(async () => {
  s = makeService();
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await s.call(method, path, { body });
    if (r.status !== 200) throw new Error(`${method} ${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  for (const f of audience.fields) await ok('POST', '/1/fields', f);
  const groups = await ok('POST', '/1/groups', { groups: audience.groups.map((group_name) => ({ group_name })) });
  const groupId = new Map(groups.map((g: any) => [g.group_name, g.member_group_id]));
  for (const m of audience.members) {
    const { member_id } = await ok('POST', '/1/members/add', {
      email: m.email,
      fields: m.fields,
      group_ids: m.groups.map((g) => groupId.get(g)),
      sms: m.sms,
    });
    if (m.status) await ok('PUT', `/1/members/${member_id}`, { status_to: m.status });
    if (m.archived) await ok('DELETE', `/1/members/${member_id}`);
  }
});
afterAll(() => s.close());

test('group counts of the fixture audience', async () => {
  const { body } = await s.call('GET', '/1/groups');
  expect(body.map((g: any) => [g.group_name, g.active_count, g.error_count, g.optout_count])).toEqual([
    ['Newsletter', 2, 1, 0],
    ['Customers', 2, 0, 0],
    ['Oslo office', 1, 0, 1],
  ]);
});

test('typed values come back as stored, in column order', async () => {
  const { body } = await s.call('GET', '/1/members/email/ada.lovelace%40example.com');
  expect(Object.keys(body.fields)).toEqual(['first_name', 'last_name', 'city', 'birthday', 'score', 'vip', 'interests', 'plan']);
  expect(body.fields).toMatchObject({ birthday: '1815-12-10', score: 98.5, vip: true, interests: ['news', 'events'] });
  const kari = await s.call('GET', '/1/members/email/kari.nordmann%40example.no');
  expect(kari.body.sms).toMatchObject({
    phone_number: '+4791234567',
    region_code: 'NO',
    promotional_status: 'a',
    transactional_status: 'a',
  });
});

test('live, archived and all member lists', async () => {
  expect((await s.call('GET', '/1/members', { query: { count: 'true' } })).body).toBe(5);
  expect((await s.call('GET', '/1/members', { query: { count: 'true', deleted: '1' } })).body).toBe(6);
  const archived = await s.call('GET', '/1/members', { query: { deleted_only: 'true' } });
  expect(archived.body.map((m: any) => m.email)).toEqual(['alan.turing@example.co.uk']);
});

test('an option outside the field options is refused', async () => {
  const r = await s.call('POST', '/1/members/add', { body: { email: 'x@example.com', fields: { plan: 'enterprise' } } });
  expect(r).toEqual({
    status: 400,
    body: { error: 'fields.plan: "enterprise" is not one of the options of plan (free, pro, team)', field: 'fields.plan' },
  });
});
