/**
 * Member events and touchpoints through the route table: the spec's 16 operations of
 * the two parts, with every error they list, in the spec's exact shapes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { addMember, atD, countRows, expectFieldError, ok } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const AT = atD(T0);

/** Everything the two kinds write, to prove a refused call wrote nothing. */
const fingerprint = () =>
  JSON.stringify(
    ['member_event_types', 'member_events', 'touchpoint_types', 'touchpoints'].map((t) => s.db.prepare(`SELECT * FROM ${t}`).all()),
  );

async function mailing(): Promise<number> {
  const { mailing_id } = await ok(s, 'POST', '/1/mailings', {
    body: {
      name: 'Spring',
      subject: 'Hi',
      sender: 'shop@example.com',
      html_body: '<p>Hi [% optout_url %]</p>',
      recipient_emails: ['someone@example.com'],
    },
  });
  return mailing_id;
}

describe('member event types', () => {
  it('create, list, get, update, delete in the spec shape', async () => {
    const purchase = await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } });
    expect(purchase).toEqual({ event_type_id: 1, account_id: 1, event_type: 'purchase', display_name: 'Purchase', created_at: AT });
    await ok(s, 'POST', '/1/events', { body: { event_type: 'visit', display_name: 'Store visit' } });
    expect((await ok(s, 'GET', '/1/events')).map((t: any) => t.event_type)).toEqual(['purchase', 'visit']);
    expect(await ok(s, 'GET', '/1/events', { query: { count: 'true' } })).toBe(2);
    expect(await ok(s, 'GET', '/1/events', { query: { start: '1', end: '2' } })).toEqual([
      { event_type_id: 2, account_id: 1, event_type: 'visit', display_name: 'Store visit', created_at: AT },
    ]);
    expect(await ok(s, 'GET', '/1/events/1')).toEqual(purchase);
    s.clock.advance(1000);
    const renamed = await ok(s, 'PUT', '/1/events/1', { body: { event_type: 'order', display_name: 'Order' } });
    expect(renamed).toEqual({ ...purchase, event_type: 'order', display_name: 'Order' });
    // Same name, new display name: not a clash with itself.
    expect((await ok(s, 'PUT', '/1/events/1', { body: { event_type: 'ORDER', display_name: 'Orders' } })).event_type).toBe('ORDER');
    expect(await ok(s, 'DELETE', '/1/events/2')).toBe(true);
    expect((await s.call('GET', '/1/events/2')).status).toBe(404);
  });

  it('errors: a missing event_type or display_name, a taken name, an unknown id', async () => {
    expectFieldError(await s.call('POST', '/1/events', { body: { display_name: 'Purchase' } }), 'event_type');
    expectFieldError(await s.call('POST', '/1/events', { body: { event_type: 'purchase' } }), 'display_name');
    expectFieldError(await s.call('POST', '/1/events', { body: { event_type: '', display_name: 'P' } }), 'event_type');
    await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } });
    await ok(s, 'POST', '/1/events', { body: { event_type: 'visit', display_name: 'Visit' } });
    const before = fingerprint();
    const dup = await s.call('PUT', '/1/events/2', { body: { event_type: 'Purchase', display_name: 'X' } });
    expectFieldError(dup, 'event_type');
    expect(dup.body.error).toBe('event_type: the event type "Purchase" already exists (id 1)');
    expectFieldError(await s.call('POST', '/1/events', { body: { event_type: 'PURCHASE', display_name: 'X' } }), 'event_type');
    expectFieldError(await s.call('PUT', '/1/events/2', { body: { event_type: 'visit' } }), 'display_name');
    expect(await s.call('PUT', '/1/events/9', { body: { event_type: 'x', display_name: 'X' } })).toEqual({
      status: 404,
      body: { error: 'event type 9 not found' },
    });
    expect(await s.call('GET', '/1/events/9')).toEqual({ status: 404, body: { error: 'event type 9 not found' } });
    expect(await s.call('DELETE', '/1/events/9')).toEqual({ status: 404, body: { error: 'event type 9 not found' } });
    expect(fingerprint()).toBe(before);
  });
});

describe('recording member events', () => {
  let ada: number;
  let bob: number;
  beforeEach(async () => {
    ada = await addMember(s, 'ada@example.com');
    bob = await addMember(s, 'bob@example.com');
    await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } });
    await ok(s, 'POST', '/1/events', { body: { event_type: 'visit', display_name: 'Visit' } });
  });

  it('answers the created events; by id or address, type by id or name; defaults from the clock', async () => {
    const mailingId = await mailing();
    s.clock.advance(60_000);
    const created = await ok(s, 'POST', '/1/events/members', {
      body: {
        events: [
          {
            member_id: ada,
            event_type: 'Purchase',
            event_monetary_value: 19.99,
            mailing_id: mailingId,
            attributes: { sku: 'A1', lines: [{ qty: 2 }] },
            event_timestamp: '2026-03-01T10:00:00Z',
          },
          { email: 'BOB@example.com', event_type_id: 2 },
        ],
      },
    });
    const now = atD(new Date(Date.parse(T0) + 60_000).toISOString());
    expect(created).toEqual([
      {
        event_id: 1,
        account_id: 1,
        member_id: ada,
        event_type_id: 1,
        event_monetary_value: 19.99,
        event_timestamp: '@D:2026-03-01T10:00:00',
        inserted_at: now,
        mailing_id: mailingId,
        attributes: { sku: 'A1', lines: [{ qty: 2 }] },
      },
      {
        event_id: 2,
        account_id: 1,
        member_id: bob,
        event_type_id: 2,
        event_monetary_value: 0,
        event_timestamp: now,
        inserted_at: now,
        mailing_id: null,
        attributes: null,
      },
    ]);
    expect(await ok(s, 'GET', `/1/events/members/${ada}`)).toEqual([created[0]]);
    expect(await ok(s, 'GET', `/1/events/members/${bob}`)).toEqual([created[1]]);
    expect(await ok(s, 'GET', `/1/events/members/${bob}`, { query: { count: 'true' } })).toBe(1);
    // @D: input is taken too.
    const [third] = await ok(s, 'POST', '/1/events/members', {
      body: { events: [{ member_id: ada, event_type: 'visit', event_timestamp: '@D:2026-02-01T00:00:00' }] },
    });
    expect(third.event_timestamp).toBe('@D:2026-02-01T00:00:00');
    expect((await ok(s, 'GET', `/1/events/members/${ada}`, { query: { start: '1' } })).map((e: any) => e.event_id)).toEqual([3]);
  });

  it('an unknown member is a 404 on the list', async () => {
    expect(await s.call('GET', '/1/events/members/99')).toEqual({ status: 404, body: { error: 'member 99 not found' } });
    expect(await s.call('GET', '/1/events/members/99', { query: { count: '1' } })).toEqual({
      status: 404,
      body: { error: 'member 99 not found' },
    });
  });

  it('all items or none: each bad item is a 400 naming its index and field, and nothing is written', async () => {
    // A mailing of another account: it exists, but not for account 1.
    const foreign = await mailing();
    s.db.prepare("INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', ?)").run(T0);
    s.db.prepare('UPDATE mailings SET account_id = 2 WHERE mailing_id = ?').run(foreign);
    const good = { member_id: ada, event_type_id: 1 };
    const before = fingerprint();
    const cases: [unknown, string, string][] = [
      [[good, { member_id: 99, event_type_id: 1 }], 'events[1].member_id', 'events[1].member_id: member 99 not found'],
      [
        [good, { email: 'nobody@example.com', event_type_id: 1 }],
        'events[1].email',
        'events[1].email: no member has the address nobody@example.com',
      ],
      [[{ member_id: ada, event_type: 'refund' }], 'events[0].event_type', 'events[0].event_type: no event type is named "refund"'],
      [[good, good, { member_id: ada, event_type_id: 7 }], 'events[2].event_type_id', 'events[2].event_type_id: event type 7 not found'],
      [[{ ...good, mailing_id: foreign }], 'events[0].mailing_id', `events[0].mailing_id: mailing ${foreign} not found in account 1`],
      [[{ ...good, attributes: [1, 2] }], 'events[0].attributes', 'events[0].attributes: must be a JSON object, got an array'],
      [[{ ...good, attributes: 'x' }], 'events[0].attributes', 'events[0].attributes: must be a JSON object, got string'],
      [[{ event_type_id: 1 }], 'events[0].member_id', 'events[0].member_id: give member_id or email'],
      [[{ member_id: ada }], 'events[0].event_type_id', 'events[0].event_type_id: give event_type_id or event_type'],
      [
        [{ ...good, event_monetary_value: '5' }],
        'events[0].event_monetary_value',
        'events[0].event_monetary_value: must be a number, got "5"',
      ],
      [
        [{ ...good, event_timestamp: 'yesterday' }],
        'events[0].event_timestamp',
        expect.stringContaining('events[0].event_timestamp: must be a date-time'),
      ],
      [Array(11).fill(good), 'events', 'events: must hold at most 10 items'],
      [[], 'events', 'events: must not be empty'],
      ['x', 'events', 'events: must be an array, got "x"'],
    ];
    for (const [items, field, error] of cases) {
      const res = await s.call('POST', '/1/events/members', { body: { events: items } });
      expectFieldError(res, field);
      expect(res.body.error, field).toEqual(error);
    }
    expectFieldError(await s.call('POST', '/1/events/members', { body: {} }), 'events');
    expect(fingerprint()).toBe(before);
    // Ten is allowed.
    expect(await ok(s, 'POST', '/1/events/members', { body: { events: Array(10).fill(good) } })).toHaveLength(10);
  });

  it('deleting a type deletes its events in the same transaction; purging a member erases its events', async () => {
    await ok(s, 'POST', '/1/events/members', {
      body: {
        events: [
          { member_id: ada, event_type_id: 1 },
          { member_id: ada, event_type_id: 2 },
          { member_id: bob, event_type_id: 1 },
        ],
      },
    });
    expect(await ok(s, 'DELETE', '/1/events/1')).toBe(true);
    expect((await ok(s, 'GET', `/1/events/members/${ada}`)).map((e: any) => e.event_type_id)).toEqual([2]);
    expect(await ok(s, 'GET', `/1/events/members/${bob}`)).toEqual([]);
    expect(countRows(s, 'member_events')).toBe(1);
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ada] } })).toBe(true);
    expect(countRows(s, 'member_events')).toBe(0);
  });
});

describe('touchpoints', () => {
  let ada: number;
  beforeEach(async () => {
    ada = await addMember(s, 'ada@example.com');
  });

  it('the nine operations in the spec shape', async () => {
    const web = await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'web', display_name: 'Web visit' } });
    expect(web).toEqual({ touchpoint_type_id: 1, account_id: 1, type_name: 'web', display_name: 'Web visit', created_at: AT });
    await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'call', display_name: 'Call' } });
    expect(await ok(s, 'GET', '/1/touchpoints')).toHaveLength(2);
    expect(await ok(s, 'GET', '/1/touchpoints', { query: { count: '1' } })).toBe(2);
    expect(await ok(s, 'GET', '/1/touchpoints/1')).toEqual(web);
    expect(await ok(s, 'PUT', '/1/touchpoints/1', { body: { type_name: 'site', display_name: 'Site' } })).toEqual({
      ...web,
      type_name: 'site',
      display_name: 'Site',
    });
    const created = await ok(s, 'POST', '/1/touchpoints/members', {
      body: {
        touchpoints: [
          { email: 'ada@example.com', type_name: 'site', touchpoint_monetary_value: 5, attributes: { page: '/shoes' } },
          { member_id: ada, touchpoint_type_id: 2, touchpoint_timestamp: '2026-03-01T00:00:00+01:00' },
        ],
      },
    });
    expect(created).toEqual([
      {
        touchpoint_id: 1,
        account_id: 1,
        member_id: ada,
        touchpoint_type_id: 1,
        touchpoint_monetary_value: 5,
        touchpoint_timestamp: AT,
        inserted_at: AT,
        mailing_id: null,
        attributes: { page: '/shoes' },
      },
      {
        touchpoint_id: 2,
        account_id: 1,
        member_id: ada,
        touchpoint_type_id: 2,
        touchpoint_monetary_value: 0,
        touchpoint_timestamp: '@D:2026-02-28T23:00:00',
        inserted_at: AT,
        mailing_id: null,
        attributes: null,
      },
    ]);
    expect(await ok(s, 'GET', `/1/touchpoints/members/${ada}`)).toEqual(created);
    expect(await ok(s, 'GET', '/1/touchpoints/members/touchpoints/2')).toEqual(created[1]);
    expect(await ok(s, 'DELETE', '/1/touchpoints/members/touchpoints/2')).toBe(true);
    expect(await s.call('GET', '/1/touchpoints/members/touchpoints/2')).toEqual({ status: 404, body: { error: 'touchpoint 2 not found' } });
    expect(await s.call('DELETE', '/1/touchpoints/members/touchpoints/2')).toEqual({
      status: 404,
      body: { error: 'touchpoint 2 not found' },
    });
    expect(await ok(s, 'DELETE', '/1/touchpoints/1')).toBe(true);
    expect(await ok(s, 'GET', `/1/touchpoints/members/${ada}`)).toEqual([]);
    expect(countRows(s, 'touchpoints')).toBe(0);
  });

  it('the errors the spec lists', async () => {
    expectFieldError(await s.call('POST', '/1/touchpoints', { body: { display_name: 'Web' } }), 'type_name');
    expectFieldError(await s.call('POST', '/1/touchpoints', { body: { type_name: 'web' } }), 'display_name');
    await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'web', display_name: 'Web' } });
    await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'call', display_name: 'Call' } });
    expectFieldError(await s.call('PUT', '/1/touchpoints/2', { body: { type_name: 'WEB', display_name: 'x' } }), 'type_name');
    expect((await s.call('PUT', '/1/touchpoints/5', { body: { type_name: 'x', display_name: 'x' } })).status).toBe(404);
    expect(await s.call('GET', '/1/touchpoints/5')).toEqual({ status: 404, body: { error: 'touchpoint type 5 not found' } });
    expectFieldError(await s.call('POST', '/1/touchpoints/members', { body: { touchpoints: [] } }), 'touchpoints');
    expectFieldError(await s.call('POST', '/1/touchpoints/members', { body: {} }), 'touchpoints');
    const eleven = Array(11).fill({ member_id: ada, touchpoint_type_id: 1 });
    expectFieldError(await s.call('POST', '/1/touchpoints/members', { body: { touchpoints: eleven } }), 'touchpoints');
    expectFieldError(
      await s.call('POST', '/1/touchpoints/members', { body: { touchpoints: [{ member_id: ada, type_name: 'sms' }] } }),
      'touchpoints[0].type_name',
    );
    expect(await s.call('GET', '/1/touchpoints/members/77')).toEqual({ status: 404, body: { error: 'member 77 not found' } });
    expect(countRows(s, 'touchpoints')).toBe(0);
  });
});
