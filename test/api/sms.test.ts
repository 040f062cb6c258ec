import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import type { Actor } from '../../src/service/context.js';
import { addMember, atD, createField, createGroups, expectFieldError, ok } from './util.js';

let s: TestService;
let gold: number;
let ids: Record<string, number>;

/** T0 (2026-03-04T05:06:07Z) as SMS records answer created_at and updated_at. */
const ISO_T0 = '2026-03-04T05:06:07.000000+00:00';

beforeEach(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  [gold] = await createGroups(s, 'Gold');
  const member = (email: string, extra: Record<string, unknown>) => addMember(s, email, { group_ids: [gold], ...extra });
  ids = {
    ann: await member('ann@example.com', { fields: { first_name: 'Ann' }, sms: { phone_number: '+4791234501', promotional_status: 'a' } }),
    bob: await member('bob@example.com', { sms: { phone_number: '+4791234502' } }),
    cid: await member('cid@example.com', { fields: { first_name: 'Cid' } }),
    dud: await member('dud@example.com', { sms: { phone_number: '+99912345678', promotional_status: 'a' } }),
    eve: await member('eve@example.com', { sms: { phone_number: '+4791234505', promotional_status: 'a', transactional_status: 'o' } }),
    out: await member('out@example.com', { sms: { phone_number: '+4791234506', promotional_status: 'a' } }),
  };
  // An e-mail opt-out says nothing about SMS consent.
  await ok(s, 'PUT', '/1/members/status', { body: { member_ids: [ids.out], status_to: 'o' } });
});
afterEach(() => s.close());

const base = (over: Record<string, unknown> = {}) => ({
  sms_campaign_name: 'Spring',
  message: 'Hi [% member:first_name | default:"there" %], the sale is on: https://shop.example.com/sale. Reply STOP to opt out',
  from_phone_number: '+1 555 555 0100',
  recipients: { groups: [gold] },
  ...over,
});

async function create(over: Record<string, unknown> = {}): Promise<number> {
  const id = await ok(s, 'POST', '/1/sms/campaigns', { body: base(over) });
  expect(typeof id).toBe('number');
  return id;
}
const get = (id: number) => ok(s, 'GET', `/1/sms/campaigns/${id}`);
const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};
async function sendAndRun(id: number, body: Record<string, unknown> = {}) {
  expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/send`, { body })).toBe(true);
  runJobs();
  return get(id);
}
const deliveries = async (id: number) => ok(s, 'GET', `/1/sms/campaigns/${id}/deliveries`);
const usage = (from: string, to: string) => ok(s, 'GET', '/1/sms/billing/credit_usage', { query: { from_date: from, to_date: to } });
const tables = () =>
  JSON.stringify(
    ['sms_campaigns', 'sms_links', 'sms_deliveries', 'sms_queue', 'sms_clicks', 'sms_usage', 'sms_settings', 'members'].map((t) =>
      s.db.prepare(`SELECT * FROM ${t}`).all(),
    ),
  );

describe('a campaign record', () => {
  it('answers the spec shape: ISO created_at/updated_at, @D: for the rest, recipients as id arrays', async () => {
    const id = await create({ scheduled_at: '2026-04-01T10:00:00Z', media_url: 'https://cdn.example.com/a.png', is_test: true });
    expect(await get(id)).toEqual({
      sms_campaign_id: id,
      account_id: 1,
      sms_campaign_name: 'Spring',
      sms_campaign_type: 'm',
      send_status: 'd',
      from_phone_number: '+15555550100',
      message: base().message,
      message_segments: 0,
      deliveries: 0,
      bounces: 0,
      opt_outs: 0,
      total_sent: 0,
      total_clicks: 0,
      unique_clicks: 0,
      is_promotional: false,
      is_test: true,
      shorten_links: false,
      media_url: 'https://cdn.example.com/a.png',
      recipients: { groups: [gold], members: [], segments: [], suppression_segments: [] },
      created_at: ISO_T0,
      updated_at: ISO_T0,
      archived_at: null,
      pending_at: null,
      scheduled_at: '@D:2026-04-01T10:00:00',
      send_started: null,
      send_finished: null,
      canceled_by_user_id: null,
      scheduled_by_user_id: null,
      copied_from_sms_campaign_id: null,
      results_message: null,
    });
    expect(await ok(s, 'GET', '/1/sms/campaigns')).toEqual([await get(id)]);
    expect(await ok(s, 'GET', '/1/sms/campaigns', { query: { count: 'true' } })).toBe(1);
  });

  it('lists in id order, windowed, archived ones only when asked for', async () => {
    const [a, b, c] = [await create(), await create({ sms_campaign_name: 'B' }), await create({ sms_campaign_name: 'C' })];
    expect(await ok(s, 'DELETE', `/1/sms/campaigns/${b}`)).toBe(true);
    const idsOf = (list: { sms_campaign_id: number }[]) => list.map((x) => x.sms_campaign_id);
    expect(idsOf(await ok(s, 'GET', '/1/sms/campaigns'))).toEqual([a, c]);
    expect(idsOf(await ok(s, 'GET', '/1/sms/campaigns', { query: { include_archived: 'true' } }))).toEqual([a, b, c]);
    expect(idsOf(await ok(s, 'GET', '/1/sms/campaigns', { query: { start: '1', end: '2' } }))).toEqual([c]);
    expect(await ok(s, 'GET', '/1/sms/campaigns', { query: { count: 'true', include_archived: '1' } })).toBe(3);
    expect((await get(b)).archived_at).toBe(atD(T0));
  });

  it('a draft takes updates; the clock moves updated_at only', async () => {
    const id = await create();
    s.clock.advance(60_000);
    const body = {
      sms_campaign_name: 'Renamed',
      message: 'New text',
      recipients: { members: [ids.ann] },
      is_promotional: true,
      shorten_links: true,
    };
    expect(await ok(s, 'PATCH', `/1/sms/campaigns/${id}`, { body })).toBe(true);
    expect(await get(id)).toMatchObject({
      ...body,
      recipients: { groups: [], members: [ids.ann], segments: [], suppression_segments: [] },
      created_at: ISO_T0,
      updated_at: '2026-03-04T05:07:07.000000+00:00',
    });
  });

  it('copies into a new draft that names its original', async () => {
    const id = await create({ is_promotional: true });
    await sendAndRun(id);
    const copy = await ok(s, 'POST', `/1/sms/campaigns/${id}/copy`, { body: {} });
    expect(await get(copy)).toMatchObject({
      sms_campaign_name: 'Spring (copy)',
      send_status: 'd',
      message: base().message,
      is_promotional: true,
      total_sent: 0,
      copied_from_sms_campaign_id: id,
    });
    const named = await ok(s, 'POST', `/1/sms/campaigns/${id}/copy`, { body: { sms_campaign_name: 'Again' } });
    expect((await get(named)).sms_campaign_name).toBe('Again');
  });
});

describe('sending', () => {
  it('reaches members with a phone and transactional consent, de-duplicated; bounces the +999 range; totals per delivery', async () => {
    const id = await create({ recipients: { groups: [gold], members: [ids.ann, ids.bob] } });
    const c = await sendAndRun(id);
    // ann, bob, dud (bounces), out; not cid (no phone), not eve (transactional opt-out).
    expect(c).toMatchObject({
      send_status: 'c',
      total_sent: 4,
      deliveries: 3,
      bounces: 1,
      pending_at: atD(T0),
      send_started: atD(T0),
      send_finished: atD(T0),
    });
    // "Hi Ann, …" is 105 characters; "Hi there, …" 107: one segment each.
    expect(c.message_segments).toBe(4);
    expect(c.results_message).toBe('sent to 4 recipients: 3 delivered, 1 bounced, 4 segments');
    expect(await deliveries(id)).toEqual([
      {
        account_id: 1,
        sms_campaign_id: id,
        member_id: ids.ann,
        delivery_type: 'd',
        bounce_type: null,
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+4791234501',
      },
      {
        account_id: 1,
        sms_campaign_id: id,
        member_id: ids.bob,
        delivery_type: 'd',
        bounce_type: null,
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+4791234502',
      },
      {
        account_id: 1,
        sms_campaign_id: id,
        member_id: ids.dud,
        delivery_type: 'b',
        bounce_type: 'h',
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+99912345678',
      },
      {
        account_id: 1,
        sms_campaign_id: id,
        member_id: ids.out,
        delivery_type: 'd',
        bounce_type: null,
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+4791234506',
      },
    ]);
    expect(await ok(s, 'GET', `/1/sms/campaigns/${id}/deliveries`, { query: { count: 'true' } })).toBe(4);
    expect(
      (await ok(s, 'GET', `/1/sms/campaigns/${id}/deliveries`, { query: { start: '1', end: '2' } })).map((d: any) => d.member_id),
    ).toEqual([ids.bob]);
  });

  it('a promotional campaign reaches only promotional consent (a new number starts without it)', async () => {
    const id = await create({ is_promotional: true });
    await sendAndRun(id);
    expect((await deliveries(id)).map((d: any) => d.member_id)).toEqual([ids.ann, ids.dud, ids.eve, ids.out]);
  });

  it('renders tags per member before counting: segments differ per delivery and are totalled', async () => {
    await ok(s, 'PUT', `/1/members/${ids.ann}`, { body: { fields: { first_name: 'A'.repeat(150) } } });
    const id = await create({ message: 'Hi [% member:first_name | default:"x" %]!', recipients: { members: [ids.ann, ids.bob] } });
    const c = await sendAndRun(id);
    // "Hi AAAA…A!" is 154 characters: one segment; raise it over 160 and it is two.
    expect(c.message_segments).toBe(2);
    await ok(s, 'PUT', `/1/members/${ids.ann}`, { body: { fields: { first_name: 'A'.repeat(160) } } });
    const again = await ok(s, 'POST', `/1/sms/campaigns/${id}/copy`, { body: {} });
    expect((await sendAndRun(again)).message_segments).toBe(3);
    expect(
      s.db.prepare('SELECT member_id, message_segments FROM sms_deliveries WHERE sms_campaign_id = ? ORDER BY member_id').all(again),
    ).toEqual([
      { member_id: ids.ann, message_segments: 2 },
      { member_id: ids.bob, message_segments: 1 },
    ]);
  });

  it('suppression segments keep their members out', async () => {
    const search = await ok(s, 'POST', '/1/searches', { body: { name: 'Ann', criteria: ['member_field:first_name', 'eq', 'Ann'] } });
    const id = await create({ recipients: { groups: [gold], suppression_segments: [search] } });
    await sendAndRun(id);
    expect((await deliveries(id)).map((d: any) => d.member_id)).toEqual([ids.bob, ids.dud, ids.out]);
    const only = await create({ recipients: { segments: [search] } });
    await sendAndRun(only);
    expect((await deliveries(only)).map((d: any) => d.member_id)).toEqual([ids.ann]);
  });

  it('waits in s until scheduled_at, then sends', async () => {
    const id = await create();
    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/send`, { body: { scheduled_at: '2026-03-04T06:00:00Z' } })).toBe(true);
    runJobs();
    expect(await get(id)).toMatchObject({
      send_status: 's',
      scheduled_at: '@D:2026-03-04T06:00:00',
      scheduled_by_user_id: s.actor.user_id,
      total_sent: 0,
    });
    s.clock.set('2026-03-04T06:00:00Z');
    runJobs();
    expect(await get(id)).toMatchObject({ send_status: 'c', total_sent: 4, send_started: '@D:2026-03-04T06:00:00' });
  });

  it('shortened links: each URL becomes a short link with its own id, and the shorter text is what is counted', async () => {
    const long = `https://shop.example.com/${'x'.repeat(150)}`;
    const id = await create({
      message: `Sale: ${long} and https://b.example.com/. Bye`,
      shorten_links: true,
      recipients: { members: [ids.ann] },
    });
    const c = await sendAndRun(id);
    const links = s.db
      .prepare('SELECT sms_link_id, link_target FROM sms_links WHERE sms_campaign_id = ? ORDER BY sms_link_id')
      .all(id) as any[];
    expect(links.map((l) => l.link_target)).toEqual([long, 'https://b.example.com/']);
    const sent = s.db.prepare('SELECT sent_message FROM sms_campaigns WHERE sms_campaign_id = ?').pluck().get(id);
    expect(sent).toBe(
      `Sale: https://amsg.example.com/s/${links[0].sms_link_id.toString(36)} and https://amsg.example.com/s/${links[1].sms_link_id.toString(36)}. Bye`,
    );
    expect(c.message_segments).toBe(1);
    // The record keeps the message as written.
    expect(c.message).toContain(long);
  });

  it('the segment limit refuses a send whose rendered message is over it, saying which limit and by how much', async () => {
    expect(await ok(s, 'PATCH', '/1/accounts/sms_settings', { body: { sub_message_segment_limit: 1 } })).toEqual({
      sub_message_segment_limit: 1,
      sub_message_segment_limit_visible: false,
    });
    await ok(s, 'PUT', `/1/members/${ids.ann}`, { body: { fields: { first_name: 'A'.repeat(320) } } });
    const id = await create({ message: 'Hi [% member:first_name %]' });
    const before = tables();
    const res = await s.call('POST', `/1/sms/campaigns/${id}/send`, { body: {} });
    expect(res).toEqual({
      status: 400,
      body: {
        error: `message: takes 3 segments for member ${ids.ann}, over the account's sub_message_segment_limit of 1 by 2`,
        field: 'message',
        sub_message_segment_limit: 1,
        message_segments: 3,
        member_id: ids.ann,
      },
    });
    expect(tables()).toBe(before);
    await ok(s, 'PATCH', '/1/accounts/sms_settings', { body: { sub_message_segment_limit: 3 } });
    expect((await sendAndRun(id)).send_status).toBe('c');
  });
});

describe('kept counts of the delivery and click lists', () => {
  it('count=true reads the kept counts, which the send, clicks and a member purge keep equal to the rows', async () => {
    const id = await create({ recipients: { groups: [gold] }, shorten_links: true });
    await sendAndRun(id);
    const rows = (table: string) => s.db.prepare(`SELECT COUNT(*) FROM ${table} WHERE sms_campaign_id = ?`).pluck().get(id);
    const counts = async () => [
      await ok(s, 'GET', `/1/sms/campaigns/${id}/deliveries`, { query: { count: 'true' } }),
      await ok(s, 'GET', `/1/sms/campaigns/${id}/clicks`, { query: { count: 'true' } }),
    ];
    expect(await counts()).toEqual([4, 0]);
    expect(s.db.prepare('SELECT delivery_rows, click_rows FROM sms_campaigns WHERE sms_campaign_id = ?').get(id)).toEqual({
      delivery_rows: 4,
      click_rows: 0,
    });
    for (const who of [ids.ann, ids.ann, ids.bob]) await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: who } });
    expect(await counts()).toEqual([4, 3]);
    // A purge takes the member's delivery and clicks with it (by cascade); the campaign's totals stay as sent.
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ids.ann] } })).toBe(true);
    expect(await counts()).toEqual([rows('sms_deliveries'), rows('sms_clicks')]);
    expect(await counts()).toEqual([3, 1]);
    expect(await get(id)).toMatchObject({ total_sent: 4, total_clicks: 3 });
  });
});

describe('the status letters', () => {
  it('cancel from d, s or p; 403 once sent; archive refused while on its way', async () => {
    const draft = await create();
    expect(await ok(s, 'POST', `/1/sms/campaigns/${draft}/cancel`)).toBe(true);
    expect(await get(draft)).toMatchObject({ send_status: 'x', canceled_by_user_id: s.actor.user_id });

    const scheduled = await create();
    await ok(s, 'POST', `/1/sms/campaigns/${scheduled}/send`, { body: { scheduled_at: '2026-05-01T00:00:00Z' } });
    const archiving = await s.call('DELETE', `/1/sms/campaigns/${scheduled}`);
    expectFieldError(archiving, 'send_status');
    expect(await ok(s, 'POST', `/1/sms/campaigns/${scheduled}/cancel`)).toBe(true);
    s.clock.set('2026-05-02T00:00:00Z');
    runJobs();
    expect((await get(scheduled)).send_status).toBe('x');

    const sent = await create();
    await sendAndRun(sent);
    const res = await s.call('POST', `/1/sms/campaigns/${sent}/cancel`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe(
      `SMS campaign ${sent} is complete (c): only a draft, scheduled or pending campaign (d, s, p) can be canceled`,
    );
    expect(await ok(s, 'DELETE', `/1/sms/campaigns/${sent}`)).toBe(true);
  });

  it('a send or an update of a campaign that is not a draft is a 400 that changes nothing', async () => {
    const id = await create();
    await sendAndRun(id);
    const before = tables();
    const again = await s.call('POST', `/1/sms/campaigns/${id}/send`, { body: {} });
    expectFieldError(again, 'send_status');
    expect(again.body.error).toBe(`send_status: SMS campaign ${id} is complete (c): only a draft (d) can be sent`);
    expectFieldError(await s.call('PATCH', `/1/sms/campaigns/${id}`, { body: { message: 'x' } }), 'send_status');
    expect(tables()).toBe(before);
  });

  it('a scheduled send whose segment was deleted meanwhile ends in f, saying why', async () => {
    const search = await ok(s, 'POST', '/1/searches', { body: { name: 'Ann', criteria: ['member_field:first_name', 'eq', 'Ann'] } });
    const id = await create({ recipients: { segments: [search] } });
    await ok(s, 'POST', `/1/sms/campaigns/${id}/send`, { body: { scheduled_at: '2026-03-05T00:00:00Z' } });
    expect(await ok(s, 'DELETE', `/1/searches/${search}`)).toBe(true);
    s.clock.set('2026-03-05T00:00:00Z');
    runJobs();
    expect(await get(id)).toMatchObject({ send_status: 'f', results_message: `search ${search} not found`, total_sent: 0 });
    expect(s.db.prepare('SELECT COUNT(*) FROM sms_queue').pluck().get()).toBe(0);
  });

  it('a send with no recipients is a 400 naming recipients', async () => {
    const id = await create({ recipients: {} });
    expectFieldError(await s.call('POST', `/1/sms/campaigns/${id}/send`, { body: {} }), 'recipients');
  });
});

describe('bad input gets a clear error and changes nothing', () => {
  const cases: [string, Record<string, unknown>, string, number?][] = [
    ['a phone number not in international form', { from_phone_number: '555 0100' }, 'from_phone_number'],
    ['an empty message', { message: '' }, 'message'],
    ['a blank message', { message: '   ' }, 'message'],
    ['recipients that are not lists', { recipients: { groups: 3 } }, 'recipients.groups'],
    ['recipients that are not integers', { recipients: { members: ['1'] } }, 'recipients.members[0]'],
    ['a non-boolean flag', { is_promotional: 'yes' }, 'is_promotional'],
    ['a date like 2026-13-01', { scheduled_at: '2026-13-01T00:00:00Z' }, 'scheduled_at'],
    ['a media_url that is not a URL', { media_url: 'cat.png' }, 'media_url'],
  ];
  it.each(cases)('%s', async (_, over, field) => {
    const before = tables();
    expectFieldError(await s.call('POST', '/1/sms/campaigns', { body: base(over) }), field);
    expect(tables()).toBe(before);
  });

  it('tags that do not parse: 400 with invalid_tags placed in the message', async () => {
    const res = await s.call('POST', '/1/sms/campaigns', { body: base({ message: 'Hi [% member:frist_name %]' }) });
    expect(res.status).toBe(400);
    expect(res.body.invalid_tags).toEqual([
      { part: 'message', tag: '[% member:frist_name %]', line: 1, column: 4, reason: 'unknown member field "frist_name"' },
    ]);
    expect(res.body.error).toMatch(/^invalid personalization tags: 1 problem, the first in message at line 1, column 4/);
  });

  it('unknown recipients are 404s naming them', async () => {
    expect((await s.call('POST', '/1/sms/campaigns', { body: base({ recipients: { groups: [999] } }) })).body).toEqual({
      error: 'group 999 not found',
    });
    expect((await s.call('POST', '/1/sms/campaigns', { body: base({ recipients: { segments: [999] } }) })).status).toBe(404);
    expect((await s.call('POST', '/1/sms/campaigns', { body: base({ recipients: { members: [999] } }) })).body).toEqual({
      error: 'member 999 not found',
    });
  });

  it("another account's campaign is a 404", async () => {
    const id = await create();
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', '2026-01-01T00:00:00.000000')`).run();
    s.db.prepare('UPDATE sms_campaigns SET account_id = 2 WHERE sms_campaign_id = ?').run(id);
    for (const [method, path] of [
      ['GET', `/1/sms/campaigns/${id}`],
      ['GET', `/1/sms/campaigns/${id}/deliveries`],
      ['GET', `/1/sms/campaigns/${id}/clicks`],
      ['POST', `/1/sms/campaigns/${id}/send`],
      ['POST', `/1/sms/campaigns/${id}/copy`],
      ['PATCH', `/1/sms/campaigns/${id}`],
    ])
      expect(await s.call(method, path, { body: {} }), `${method} ${path}`).toEqual({
        status: 404,
        body: { error: `SMS campaign ${id} not found` },
      });
    expect(await s.call('GET', '/2/sms/campaigns')).toEqual({ status: 404, body: { error: 'account 2 not found' } });
  });
});

describe('credit usage', () => {
  it('counts the segments sent in [from_date, to_date), by UTC day', async () => {
    s.clock.set('2026-11-30T23:59:59Z');
    await sendAndRun(await create({ recipients: { members: [ids.ann, ids.bob] } }));
    s.clock.set('2026-12-01T00:00:00Z');
    await sendAndRun(await create({ message: 'x'.repeat(161), recipients: { members: [ids.ann] } }));
    expect(await usage('2026-11-30', '2026-12-01')).toBe(2);
    expect(await usage('2026-12-01', '2026-12-02')).toBe(2);
    expect(await usage('2026-11-01', '2026-12-02')).toBe(4);
    expect(await usage('2026-11-01', '2026-11-30')).toBe(0);
    expect(await usage('2026-12-01', '2026-12-01')).toBe(0);
  });

  it('a missing or malformed date is a 400 naming it', async () => {
    expectFieldError(await s.call('GET', '/1/sms/billing/credit_usage', { query: { to_date: '2026-12-01' } }), 'from_date');
    expectFieldError(
      await s.call('GET', '/1/sms/billing/credit_usage', { query: { from_date: '2026-13-01', to_date: '2026-12-01' } }),
      'from_date',
    );
    expectFieldError(
      await s.call('GET', '/1/sms/billing/credit_usage', { query: { from_date: '2026-02-01', to_date: '2026-02-30' } }),
      'to_date',
    );
    expectFieldError(
      await s.call('GET', '/1/sms/billing/credit_usage', { query: { from_date: '2026-02-01', to_date: '01/03/2026' } }),
      'to_date',
    );
    expectFieldError(
      await s.call('GET', '/1/sms/billing/credit_usage', { query: { from_date: '2026-02-01', to_date: '2026-01-01' } }),
      'to_date',
    );
  });
});

describe('settings and billing access', () => {
  async function userWith(extra: { billing_access?: boolean }): Promise<Actor> {
    const email = `user${extra.billing_access ? '-billing' : ''}@example.com`;
    const u = await ok(s, 'POST', '/1/users', { body: { email, role: 'user', ...extra } });
    return { user_id: u.user_id, account_id: 1, email, role: 'user', manage_users: false, billing_access: !!extra.billing_access };
  }
  const as = async (actor: Actor, method: string, body?: unknown) => {
    const res = await s.router.handle({
      method,
      path: '/1/accounts/sms_settings',
      query: {},
      body: body === undefined ? undefined : JSON.stringify(body),
      actor,
    });
    return { status: res.status, body: res.body as any };
  };

  it('answers the defaults, then what PATCH set; a partial PATCH keeps the rest', async () => {
    expect(await ok(s, 'GET', '/1/accounts/sms_settings')).toEqual({
      sub_message_segment_limit: 0,
      sub_message_segment_limit_visible: false,
    });
    expect(
      await ok(s, 'PATCH', '/1/accounts/sms_settings', { body: { sub_message_segment_limit: 3, sub_message_segment_limit_visible: true } }),
    ).toEqual({
      sub_message_segment_limit: 3,
      sub_message_segment_limit_visible: true,
    });
    expect(await ok(s, 'PATCH', '/1/accounts/sms_settings', { body: { sub_message_segment_limit_visible: false } })).toEqual({
      sub_message_segment_limit: 3,
      sub_message_segment_limit_visible: false,
    });
    expect(await ok(s, 'GET', '/1/accounts/sms_settings')).toEqual({
      sub_message_segment_limit: 3,
      sub_message_segment_limit_visible: false,
    });
  });

  it('refuses a user without billing access (403), lets one with it through', async () => {
    const plain = await userWith({});
    const billing = await userWith({ billing_access: true });
    for (const method of ['GET', 'PATCH']) {
      const res = await as(plain, method, {});
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ operation: method === 'GET' ? 'sms.settings.get' : 'sms.settings.update', access: 'billing' });
      expect(res.body.error).toContain('needs an owner, or a user with billing access');
    }
    expect(await as(billing, 'PATCH', { sub_message_segment_limit: 2 })).toEqual({
      status: 200,
      body: { sub_message_segment_limit: 2, sub_message_segment_limit_visible: false },
    });
    expect((await as(billing, 'GET')).body.sub_message_segment_limit).toBe(2);
  });

  const errors: [string, Record<string, unknown>, string, string][] = [
    ['an unknown field name', { segment_limit: 3 }, 'segment_limit', 'unknown parameter'],
    [
      'a non-boolean visible flag',
      { sub_message_segment_limit_visible: 'true' },
      'sub_message_segment_limit_visible',
      'must be true or false, got "true"',
    ],
    ['a negative limit', { sub_message_segment_limit: -1 }, 'sub_message_segment_limit', 'must be at least 0'],
    ['a non-integer limit', { sub_message_segment_limit: 1.5 }, 'sub_message_segment_limit', 'must be an integer, got number 1.5'],
    ['a limit as text', { sub_message_segment_limit: '3' }, 'sub_message_segment_limit', 'must be an integer, got "3"'],
  ];
  it.each(errors)('PATCH refuses %s, naming the field', async (_, body, field, reason) => {
    const res = await s.call('PATCH', '/1/accounts/sms_settings', { body });
    expectFieldError(res, field);
    expect(res.body.error).toContain(reason);
    expect(await ok(s, 'GET', '/1/accounts/sms_settings')).toEqual({
      sub_message_segment_limit: 0,
      sub_message_segment_limit_visible: false,
    });
  });

  it('404 for an unknown account', async () => {
    expect(await s.call('GET', '/77/accounts/sms_settings')).toEqual({ status: 404, body: { error: 'account 77 not found' } });
    expect(await s.call('PATCH', '/77/accounts/sms_settings', { body: {} })).toEqual({
      status: 404,
      body: { error: 'account 77 not found' },
    });
  });
});

describe('simulated clicks and replies', () => {
  async function sentWithLinks(over: Record<string, unknown> = {}) {
    const id = await create({
      message: 'See https://a.example.com/x and https://b.example.com/y',
      shorten_links: true,
      is_promotional: true,
      ...over,
    });
    await sendAndRun(id);
    return id;
  }

  it("clicks count in total_clicks, a member's first in unique_clicks; the click record has its link and ISO timestamp", async () => {
    const id = await sentWithLinks();
    const links = s.db
      .prepare('SELECT sms_link_id FROM sms_links WHERE sms_campaign_id = ? ORDER BY sms_link_id')
      .pluck()
      .all(id) as number[];
    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: ids.ann } })).toBe(true);
    s.clock.advance(1_500);
    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/click`, { body: { email: 'ann@example.com', sms_link_id: links[1] } })).toBe(
      true,
    );
    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: ids.eve } })).toBe(true);
    expect(await get(id)).toMatchObject({ total_clicks: 3, unique_clicks: 2 });
    expect(await ok(s, 'GET', `/1/sms/campaigns/${id}/clicks`)).toEqual([
      {
        sms_campaign_id: id,
        member_id: ids.ann,
        sms_link_id: links[0],
        sms_link_target: 'https://a.example.com/x',
        to_phone_number: '+4791234501',
        click_timestamp: ISO_T0,
      },
      {
        sms_campaign_id: id,
        member_id: ids.ann,
        sms_link_id: links[1],
        sms_link_target: 'https://b.example.com/y',
        to_phone_number: '+4791234501',
        click_timestamp: '2026-03-04T05:06:08.500000+00:00',
      },
      {
        sms_campaign_id: id,
        member_id: ids.eve,
        sms_link_id: links[0],
        sms_link_target: 'https://a.example.com/x',
        to_phone_number: '+4791234505',
        click_timestamp: '2026-03-04T05:06:08.500000+00:00',
      },
    ]);
    expect(await ok(s, 'GET', `/1/sms/campaigns/${id}/clicks`, { query: { count: 'true' } })).toBe(3);
  });

  it('a click needs a delivered message and a short link of the campaign', async () => {
    const id = await sentWithLinks();
    expect((await s.call('POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: ids.bob } })).status).toBe(404);
    expectFieldError(await s.call('POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: ids.dud } }), 'member_id');
    expect((await s.call('POST', `/1/sms/campaigns/${id}/sim/click`, { body: { member_id: ids.ann, sms_link_id: 999 } })).status).toBe(404);
    const plain = await create({ recipients: { members: [ids.ann] } });
    await sendAndRun(plain);
    expectFieldError(await s.call('POST', `/1/sms/campaigns/${plain}/sim/click`, { body: { member_id: ids.ann } }), 'sms_link_id');
    expect((await get(id)).total_clicks).toBe(0);
  });

  it('STOP opts the member out of promotional SMS: opted_out_at, opt_outs, status; the next promotional campaign skips them; START opts back in', async () => {
    const id = await sentWithLinks();
    s.clock.advance(60_000);
    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/reply`, { body: { member_id: ids.ann, text: ' stop ' } })).toBe(true);
    expect(await get(id)).toMatchObject({ opt_outs: 1 });
    expect((await deliveries(id)).find((d: any) => d.member_id === ids.ann).opted_out_at).toBe('@D:2026-03-04T05:07:07');
    expect((await ok(s, 'GET', `/1/members/${ids.ann}`)).sms).toMatchObject({
      promotional_status: 'o',
      promotional_status_updated_at: '2026-03-04T05:07:07.000000+00:00',
    });
    // A second STOP counts once.
    await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/reply`, { body: { member_id: ids.ann, text: 'STOP' } });
    expect((await get(id)).opt_outs).toBe(1);

    const next = await sentWithLinks({ sms_campaign_name: 'Next' });
    expect((await deliveries(next)).map((d: any) => d.member_id)).toEqual([ids.dud, ids.eve, ids.out]);
    // Transactional messages still reach her.
    const receipt = await create({ recipients: { members: [ids.ann] } });
    expect((await sendAndRun(receipt)).total_sent).toBe(1);

    expect(await ok(s, 'POST', `/1/sms/campaigns/${id}/sim/reply`, { body: { email: 'ann@example.com', text: 'START' } })).toBe(true);
    expect((await ok(s, 'GET', `/1/members/${ids.ann}`)).sms.promotional_status).toBe('a');
    const third = await sentWithLinks({ sms_campaign_name: 'Third' });
    expect((await deliveries(third)).map((d: any) => d.member_id)).toEqual([ids.ann, ids.dud, ids.eve, ids.out]);
  });

  it('other reply text is a 400 naming text', async () => {
    const id = await sentWithLinks();
    expectFieldError(await s.call('POST', `/1/sms/campaigns/${id}/sim/reply`, { body: { member_id: ids.ann, text: 'thanks!' } }), 'text');
  });
});

describe('POST /sms/count', () => {
  it('answers the encoding and segments, rendered for a member when given', async () => {
    expect(await ok(s, 'POST', '/1/sms/count', { body: { message: 'Hi 😀' } })).toEqual({
      encoding: 'UCS-2',
      characters: 4,
      units: 5,
      segments: 1,
      per_segment: 70,
      non_gsm_characters: ['😀'],
      message: 'Hi 😀',
    });
    const msg = 'Hi [% member:first_name | default:"there" %]';
    expect(await ok(s, 'POST', '/1/sms/count', { body: { message: msg } })).toMatchObject({
      message: 'Hi there',
      units: 8,
      encoding: 'GSM-7',
    });
    expect(await ok(s, 'POST', '/1/sms/count', { body: { message: msg, member_id: ids.ann } })).toMatchObject({
      message: 'Hi Ann',
      units: 6,
    });
    expect((await s.call('POST', '/1/sms/count', { body: { message: 'Hi [% member:nope %]' } })).status).toBe(400);
  });
});
