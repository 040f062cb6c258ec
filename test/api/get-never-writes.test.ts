/**
 * A GET never writes (DESIGN.md, "Scale"): every GET route of the table, called on an
 * account that holds one of everything, leaves the database as it was: no change
 * counted on the connection (`total_changes()`), nothing different in any table.
 * A write inside a GET would take the write lock on every read and could never be
 * served from a read-only copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { ROUTES } from '../../src/api/routes/index.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { initialize } from '../../src/service/accounts/accounts.js';
import { addMember, createField, createGroups, ok } from './util.js';

let s: TestService;
const ids: Record<string, number | string> = { account_id: 1 };

beforeAll(async () => {
  s = makeService(T0);
  const birthday = await createField(s, { shortcut_name: 'birthday', field_type: 'date' });
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  const [gold] = await createGroups(s, 'Gold');
  const member = await addMember(s, 'ann@example.com', { fields: { first_name: 'Ann' }, group_ids: [gold] });
  await addMember(s, 'bob@example.com', { group_ids: [gold] });
  const subscription = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
  await ok(s, 'POST', `/1/subscriptions/${subscription}/members/bulk`, { body: { member_ids: [member] } });
  const search = await ok(s, 'POST', '/1/searches', { body: { name: 'Gold', criteria: ['group', 'eq', 'Gold'] } });
  const html = '<p>Hi [% member:first_name %]</p><a href="https://shop.example.com/">shop</a> <a href="[% optout_url %]">out</a>';
  const mailing = (
    await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Spring',
        subject: 'Hi',
        sender: 'shop@example.com',
        html_body: html,
        recipient_groups: [gold],
        recipient_member_ids: [member],
      },
    })
  ).mailing_id;
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
  const parent = (
    await ok(s, 'POST', '/1/mailings', {
      body: { name: 'Parent', subject: 'Hi', sender: 'shop@example.com', html_body: html, status: 'u' },
    })
  ).mailing_id;
  const trigger = await ok(s, 'POST', '/1/triggers', {
    body: { name: 'Birthday', parent_mailing_id: parent, event_type: 'r', field_id: birthday, push_offset: 60 },
  });
  const imp = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id;
  await ok(s, 'POST', `/1/members/imports/${imp}/rows`, { body: { columns: ['email'], rows: [['cy@example.com'], ['ann@example.com']] } });
  await ok(s, 'POST', `/1/members/imports/${imp}/finish`, { body: {} });
  const exp = (await ok(s, 'POST', '/1/exports', { body: { user_id: 'owner@localhost' } })).export_id;
  await ok(s, 'PUT', `/1/members/${member}`, { body: { sms: { phone_number: '+4791234501', promotional_status: 'a' } } });
  const campaign = await ok(s, 'POST', '/1/sms/campaigns', {
    body: {
      sms_campaign_name: 'Sale',
      message: 'https://shop.example.com/',
      from_phone_number: '+15555550100',
      recipients: { members: [member] },
      shorten_links: true,
    },
  });
  await ok(s, 'POST', `/1/sms/campaigns/${campaign}/send`, { body: {} });
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
  await ok(s, 'POST', `/1/sms/campaigns/${campaign}/sim/click`, { body: { member_id: member } });
  initialize(s.db, s.clock, { hq: true });
  const subaccount = (await ok(s, 'POST', '/1/enterprise/subaccount', { body: { account_name: 'Branch' } })).account_id;
  // Member events, touchpoints, a workflow and an ingested event it ran for.
  const eventType = (await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } })).event_type_id;
  const touchpointType = (await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'web', display_name: 'Web' } })).touchpoint_type_id;
  await ok(s, 'POST', '/1/events/members', { body: { events: [{ member_id: member, event_type_id: eventType }] } });
  const [touchpoint] = await ok(s, 'POST', '/1/touchpoints/members', {
    body: { touchpoints: [{ member_id: member, touchpoint_type_id: touchpointType }] },
  });
  const workflow = await ok(s, 'POST', '/1/workflows', {
    body: { name: 'Buyers', match: { type: 'purchase' }, actions: [{ type: 'add_to_groups', group_ids: [gold] }] },
  });
  await ok(s, 'POST', '/v1/1/events', { body: { email: 'ann@example.com', type: 'purchase' } });
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
  const webhook = await ok(s, 'POST', '/1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', event: 'member_add' } });
  await ok(s, 'POST', '/1/webhooks/trigger', { body: { event: 'member_add' } });
  const region = await createField(s, { shortcut_name: 'region', field_type: 'text', widget_type: 'select one', options: ['EU', 'US'] });
  const office = await createField(s, { shortcut_name: 'office', field_type: 'text', widget_type: 'radio', options: ['Oslo', 'Austin'] });
  const relationship = (
    await ok(s, 'POST', '/1/fields/relationships', {
      body: { relationship_name: 'Region', parent_field_id: region, child_field_id: office, options: { EU: ['Oslo'] } },
    })
  ).relationship_id;
  Object.assign(ids, {
    parent_account_id: 1,
    subaccount_id: subaccount,
    user_id: 1,
    event_type_id: eventType,
    touchpoint_type_id: touchpointType,
    touchpoint_id: touchpoint.touchpoint_id,
    workflow_id: workflow,
    inbound_id: 1,
    member_id: member,
    email: 'ann%40example.com',
    member_group_id: gold,
    group_id: gold,
    subscription_id: subscription,
    search_id: search,
    segment_id: search,
    mailing_id: mailing,
    trigger_id: trigger,
    import_id: imp,
    export_id: exp,
    field_id: birthday,
    campaign_id: campaign,
    webhook_id: webhook,
    delivery_id: 1,
    relationship_id: relationship,
  });
});
afterAll(() => s.close());

const snapshot = () =>
  (s.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[]).map((t) =>
    JSON.stringify(s.db.prepare(`SELECT * FROM "${t}"`).all()),
  );

/** The query a GET route requires. */
const QUERIES: Record<string, Record<string, string>> = {
  '/{account_id}/sms/billing/credit_usage': { from_date: '2026-03-01', to_date: '2026-04-01' },
  '/{account_id}/members/search': { q: 'example' },
};

describe('every GET route leaves the database as it was', () => {
  const gets = ROUTES.filter((r) => r.method === 'GET');
  it('covers the GET routes of the table', () => {
    expect(gets.length).toBeGreaterThan(40);
  });
  it.each(gets.map((r) => [r.op, r.path] as const))('%s (%s)', async (_, path) => {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (!(name in ids)) throw new Error(`no id seeded for {${name}}`);
      return String(ids[name]);
    });
    const before = snapshot();
    const changes = s.db.prepare('SELECT total_changes()').pluck();
    const counted = changes.get();
    const res = await s.call('GET', url, { query: QUERIES[path] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(changes.get()).toBe(counted);
    expect(snapshot()).toEqual(before);
  });
});
