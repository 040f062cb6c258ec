/**
 * Event ingestion (POST /v1/{account_id}/events) and the workflows it runs, through
 * the route table: the answer and refusals, the four rules of the spec's "Inbound
 * events" each refusing a run on its own, every action checked through the records
 * it leaves, and processing that survives a crash half way without doing anything twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { openDb } from '../../src/store/db.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { advanceInbound, INBOUND_LIMIT } from '../../src/service/events/workflows.js';
import { addMember, atD, countRows, createField, createGroups, expectFieldError, groupMemberIds, ok, setStatus } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => {
  s.close();
});

const AT = atD(T0);
const ingest = (body: unknown) => s.call('POST', '/v1/1/events', { body });

/** Runs due jobs until none is left. */
function runJobs() {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
}

/** What ingestion and workflows wrote, to prove a refusal wrote nothing. */
const fingerprint = () =>
  JSON.stringify(
    ['inbound_events', 'workflows', 'workflow_runs', 'group_members', 'member_events'].map((t) => s.db.prepare(`SELECT * FROM ${t}`).all()),
  );

async function workflow(body: Record<string, unknown>): Promise<number> {
  const id = await ok(s, 'POST', '/1/workflows', { body });
  expect(typeof id).toBe('number');
  return id;
}

describe('accepting events', () => {
  it('answers {success: true}, stores the event queued, and processes it in the background', async () => {
    await addMember(s, 'ada@example.com');
    const payload = { email: 'Ada@Example.com', type: 'purchase', order: { total: 12.5, lines: [1, 2] } };
    expect(await ingest(payload)).toEqual({ status: 200, body: { success: true } });
    const queued = {
      inbound_id: 1,
      account_id: 1,
      email: 'ada@example.com',
      payload,
      received_at: AT,
      status: 'q',
      processed_at: null,
      outcome: null,
      member_id: null,
      workflow_ids: [],
    };
    expect(await ok(s, 'GET', '/1/events/inbound')).toEqual([queued]);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'queued', count: 'true' } })).toBe(1);
    runJobs();
    expect(await ok(s, 'GET', '/1/events/inbound/1')).toEqual({
      ...queued,
      status: 'o',
      processed_at: AT,
      outcome: 'no workflow matched',
      member_id: 1,
      runs: [],
    });
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'queued', count: 'true' } })).toBe(0);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'no-match', count: 'true' } })).toBe(1);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { count: 'true' } })).toBe(1);
    expect(await s.call('GET', '/1/events/inbound/2')).toEqual({ status: 404, body: { error: 'inbound event 2 not found' } });
    expectFieldError(await s.call('GET', '/1/events/inbound', { query: { outcome: 'maybe' } }), 'outcome');
  });

  it('refuses what is not an object with an email key, or not JSON, with a 400; nothing is stored', async () => {
    const before = fingerprint();
    expectFieldError(await ingest([{ email: 'a@b.co' }]), 'body');
    expectFieldError(await ingest('a@b.co'), 'body');
    expectFieldError(await ingest({ mail: 'a@b.co' }), 'email');
    const notJson = await s.call('POST', '/v1/1/events', { rawBody: '{"email": "a@b.co",' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatch(/^request body is not valid JSON/);
    expectFieldError(await s.call('POST', '/v1/1/events', { rawBody: '' }), 'email');
    expect(fingerprint()).toBe(before);
  });

  it('takes 262,035 bytes and refuses one more with a 413', async () => {
    const padded = (size: number) => {
      const base = JSON.stringify({ email: 'a@b.co', pad: '' });
      return { email: 'a@b.co', pad: 'x'.repeat(size - base.length) };
    };
    expect(JSON.stringify(padded(INBOUND_LIMIT)).length).toBe(262_035);
    expect(await ingest(padded(INBOUND_LIMIT))).toEqual({ status: 200, body: { success: true } });
    expect(await ingest(padded(INBOUND_LIMIT + 1))).toEqual({
      status: 413,
      body: { error: 'an event payload may be at most 262035 bytes (this one is 262036)', limit: 262_035 },
    });
    expect(countRows(s, 'inbound_events')).toBe(1);
  });

  it("another account's path is a 404 whoever asks", async () => {
    expect(await s.call('POST', '/v1/2/events', { body: { email: 'a@b.co' } })).toEqual({
      status: 404,
      body: { error: 'account 2 not found' },
    });
  });
});

describe('workflows', () => {
  it('create, get, list, update, delete; the answers', async () => {
    const [gold] = await createGroups(s, 'Gold');
    const id = await workflow({
      name: 'Buyers',
      match: { type: 'purchase', 'order.channel': 'web' },
      actions: [{ type: 'add_to_groups', group_ids: [gold] }],
    });
    const record = {
      workflow_id: id,
      account_id: 1,
      name: 'Buyers',
      match: { type: 'purchase', 'order.channel': 'web' },
      actions: [{ type: 'add_to_groups', group_ids: [gold] }],
      run_count: 0,
      created_at: AT,
      modified_at: AT,
    };
    expect(await ok(s, 'GET', `/1/workflows/${id}`)).toEqual(record);
    expect(await ok(s, 'GET', '/1/workflows')).toEqual([record]);
    expect(await ok(s, 'GET', '/1/workflows', { query: { count: '1' } })).toBe(1);
    s.clock.advance(1000);
    expect(await ok(s, 'PUT', `/1/workflows/${id}`, { body: { name: 'Web buyers' } })).toBe(true);
    expect(await ok(s, 'GET', `/1/workflows/${id}`)).toEqual({
      ...record,
      name: 'Web buyers',
      modified_at: atD(new Date(Date.parse(T0) + 1000).toISOString()),
    });
    expect(await ok(s, 'GET', `/1/workflows/${id}/runs`)).toEqual([]);
    expect(await ok(s, 'GET', `/1/workflows/${id}/runs`, { query: { count: '1' } })).toBe(0);
    expect(await ok(s, 'DELETE', `/1/workflows/${id}`)).toBe(true);
    for (const [method, path] of [
      ['GET', `/1/workflows/${id}`],
      ['PUT', `/1/workflows/${id}`],
      ['DELETE', `/1/workflows/${id}`],
      ['GET', `/1/workflows/${id}/runs`],
    ])
      expect(await s.call(method, path, { body: {} }), `${method} ${path}`).toEqual({
        status: 404,
        body: { error: `workflow ${id} not found` },
      });
  });

  it('refuses an empty match and actions that name groups, fields, types or mailings that do not exist, naming the field', async () => {
    const [gold] = await createGroups(s, 'Gold');
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const add = { type: 'add_to_groups', group_ids: [gold] };
    const before = fingerprint();
    const cases: [Record<string, unknown>, string][] = [
      [{ match: {}, actions: [add] }, 'match'],
      [{ match: [], actions: [add] }, 'match'],
      [{ match: { type: { nested: 1 } }, actions: [add] }, 'match.type'],
      [{ match: { 'a..b': 1 }, actions: [add] }, 'match.a..b'],
      [{ match: { type: 'x' }, actions: [] }, 'actions'],
      [{ match: { type: 'x' }, actions: [{ type: 'explode' }] }, 'actions[0].type'],
      [{ match: { type: 'x' }, actions: [add, { type: 'add_to_groups', group_ids: [gold, 99] }] }, 'actions[1].group_ids[1]'],
      [{ match: { type: 'x' }, actions: [{ type: 'set_fields', values: { town: 'Oslo' } }] }, 'actions[0].values.town'],
      [{ match: { type: 'x' }, actions: [{ type: 'set_fields', from: { town: 'address.town' } }] }, 'actions[0].from.town'],
      [{ match: { type: 'x' }, actions: [{ type: 'set_fields', from: { city: 'a..b' } }] }, 'actions[0].from.city'],
      [{ match: { type: 'x' }, actions: [{ type: 'set_fields' }] }, 'actions[0]'],
      [{ match: { type: 'x' }, actions: [{ type: 'send_mailing', mailing_id: 5 }] }, 'actions[0].mailing_id'],
      [{ match: { type: 'x' }, actions: [{ type: 'record_event', event_type_id: 3 }] }, 'actions[0].event_type_id'],
      [{ match: { type: 'x' }, actions: [{ type: 'record_touchpoint', touchpoint_type_id: 3 }] }, 'actions[0].touchpoint_type_id'],
      [{ match: { type: 'x' }, actions: [{ ...add, extra: 1 }] }, 'actions[0].extra'],
      [{ actions: [add] }, 'match'],
      [{ match: { type: 'x' } }, 'actions'],
    ];
    for (const [body, field] of cases) expectFieldError(await s.call('POST', '/1/workflows', { body: { name: 'W', ...body } }), field);
    expectFieldError(await s.call('POST', '/1/workflows', { body: { match: { a: 1 }, actions: [add] } }), 'name');
    expect(fingerprint()).toBe(before);
    const id = await workflow({ name: 'W', match: { type: 'x' }, actions: [add] });
    expectFieldError(await s.call('PUT', `/1/workflows/${id}`, { body: { match: {} } }), 'match');
    expect((await ok(s, 'GET', `/1/workflows/${id}`)).match).toEqual({ type: 'x' });
  });
});

describe('the four rules: each on its own keeps a workflow from running', () => {
  let gold: number;
  beforeEach(async () => {
    [gold] = await createGroups(s, 'Gold');
    await addMember(s, 'ada@example.com');
    const bob = await addMember(s, 'bob@example.com');
    await setStatus(s, [bob], 'o');
    await workflow({ name: 'Buyers', match: { type: 'purchase' }, actions: [{ type: 'add_to_groups', group_ids: [gold] }] });
  });

  const outcomeOf = async (payload: unknown) => {
    const before = countRows(s, 'inbound_events');
    const res = await ingest(payload);
    runJobs();
    if (res.status !== 200) return { status: res.status, stored: countRows(s, 'inbound_events') - before };
    const [last] = await ok(s, 'GET', '/1/events/inbound', { query: { start: String(before) } });
    return { outcome: last.outcome, workflow_ids: last.workflow_ids, runs: countRows(s, 'workflow_runs'), gold: groupMemberIds(s, gold) };
  };

  it('all four hold: the workflow runs', async () => {
    expect(await outcomeOf({ email: 'ada@example.com', type: 'purchase' })).toEqual({
      outcome: 'ran',
      workflow_ids: [1],
      runs: 1,
      gold: [1],
    });
  });
  it('1. an email key that is not a valid address', async () => {
    expect(await outcomeOf({ email: 'ada-at-example.com', type: 'purchase' })).toEqual({
      outcome: 'invalid email',
      workflow_ids: [],
      runs: 0,
      gold: [],
    });
    expect(await outcomeOf({ email: 42, type: 'purchase' })).toEqual({ outcome: 'invalid email', workflow_ids: [], runs: 0, gold: [] });
  });
  it('2. no member with the address, or one not active', async () => {
    expect(await outcomeOf({ email: 'eve@example.com', type: 'purchase' })).toEqual({
      outcome: 'no member',
      workflow_ids: [],
      runs: 0,
      gold: [],
    });
    expect(await outcomeOf({ email: 'bob@example.com', type: 'purchase' })).toEqual({
      outcome: 'member not active',
      workflow_ids: [],
      runs: 0,
      gold: [],
    });
    // Archived is no member either.
    expect(await ok(s, 'DELETE', '/1/members/1')).toBe(true);
    expect(await outcomeOf({ email: 'ada@example.com', type: 'purchase' })).toEqual({
      outcome: 'no member',
      workflow_ids: [],
      runs: 0,
      gold: [],
    });
  });
  it('3. no workflow matches every pair', async () => {
    expect(await outcomeOf({ email: 'ada@example.com', type: 'refund' })).toEqual({
      outcome: 'no workflow matched',
      workflow_ids: [],
      runs: 0,
      gold: [],
    });
    expect(await outcomeOf({ email: 'ada@example.com', type: ['purchase'] })).toMatchObject({ outcome: 'no workflow matched', runs: 0 });
  });
  it('4. a payload over 262,035 bytes', async () => {
    expect(await outcomeOf({ email: 'ada@example.com', type: 'purchase', pad: 'x'.repeat(INBOUND_LIMIT) })).toEqual({
      status: 413,
      stored: 0,
    });
    expect(groupMemberIds(s, gold)).toEqual([]);
  });
});

describe('actions, each checked through the records it leaves', () => {
  it('groups, fields (literal and from the payload), events, touchpoints and a copy of a mailing', async () => {
    const [gold, web] = await createGroups(s, 'Gold', 'Web');
    await createField(s, { shortcut_name: 'tier', field_type: 'text' });
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await createField(s, { shortcut_name: 'spent', field_type: 'numeric' });
    const ada = await addMember(s, 'ada@example.com');
    await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } });
    await ok(s, 'POST', '/1/touchpoints', { body: { type_name: 'web', display_name: 'Web' } });
    const { mailing_id: welcome } = await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Thanks',
        subject: 'Thanks [% member:city | default:"friend" %]',
        sender: 'shop@example.com',
        html_body: '<p>Thanks! [% optout_url %]</p>',
        status: 'u',
      },
    });
    const buyers = await workflow({
      name: 'Web buyers',
      match: { type: 'purchase', 'order.channel': 'web' },
      actions: [
        { type: 'add_to_groups', group_ids: [gold, web] },
        { type: 'set_fields', values: { tier: 'gold' }, from: { city: 'address.city', spent: 'order.total' } },
        { type: 'record_event', event_type_id: 1, value_from: 'order.total' },
        { type: 'record_touchpoint', touchpoint_type_id: 1 },
        { type: 'send_mailing', mailing_id: welcome },
      ],
    });
    const everyone = await workflow({
      name: 'All purchases',
      match: { type: 'purchase' },
      actions: [{ type: 'add_to_groups', group_ids: [gold] }],
    });
    // A workflow whose match is not met by the event: no run.
    await workflow({ name: 'Store', match: { 'order.channel': 'store' }, actions: [{ type: 'add_to_groups', group_ids: [web] }] });

    const payload = { email: 'ada@example.com', type: 'purchase', order: { channel: 'web', total: 42.5 }, address: { city: 'Oslo' } };
    expect(await ingest(payload)).toEqual({ status: 200, body: { success: true } });
    runJobs();

    expect(groupMemberIds(s, gold)).toEqual([ada]);
    expect(groupMemberIds(s, web)).toEqual([ada]);
    expect((await ok(s, 'GET', `/1/members/${ada}`)).fields).toEqual({ tier: 'gold', city: 'Oslo', spent: 42.5 });
    expect(await ok(s, 'GET', `/1/events/members/${ada}`)).toEqual([
      {
        event_id: 1,
        account_id: 1,
        member_id: ada,
        event_type_id: 1,
        event_monetary_value: 42.5,
        event_timestamp: AT,
        inserted_at: AT,
        mailing_id: null,
        attributes: { inbound_id: 1 },
      },
    ]);
    expect(
      (await ok(s, 'GET', `/1/touchpoints/members/${ada}`)).map((t: any) => [t.touchpoint_type_id, t.touchpoint_monetary_value]),
    ).toEqual([[1, 0]]);
    // The copy: an automated (r) mailing of the parent's content to this member alone, sent by the job runner.
    const copy = s.db.prepare('SELECT * FROM mailings WHERE parent_mailing_id = ?').get(welcome) as any;
    expect([copy.mailing_type, copy.mailing_status, copy.subject, copy.html_body]).toEqual([
      'r',
      'c',
      'Thanks [% member:city | default:"friend" %]',
      '<p>Thanks! [% optout_url %]</p>',
    ]);
    expect((await ok(s, 'GET', `/1/members/${ada}/mailings`)).map((m: any) => m.mailing_id)).toEqual([copy.mailing_id]);
    expect(await ok(s, 'GET', `/1/mailings/${copy.mailing_id}/messages/${ada}`, { query: { type: 'subject' } })).toEqual({
      subject: 'Thanks Oslo',
    });

    const inbound = await ok(s, 'GET', '/1/events/inbound/1');
    expect([inbound.outcome, inbound.workflow_ids]).toEqual(['ran', [buyers, everyone]]);
    expect(inbound.runs).toEqual([
      {
        run_id: 1,
        workflow_id: buyers,
        inbound_id: 1,
        member_id: ada,
        ran_at: AT,
        actions: [
          { type: 'add_to_groups', ok: true, added_to: [gold, web] },
          { type: 'set_fields', ok: true, fields: ['tier', 'city', 'spent'] },
          { type: 'record_event', ok: true, event_id: 1 },
          { type: 'record_touchpoint', ok: true, touchpoint_id: 1 },
          { type: 'send_mailing', ok: true, mailing_id: copy.mailing_id },
        ],
      },
      {
        run_id: 2,
        workflow_id: everyone,
        inbound_id: 1,
        member_id: ada,
        ran_at: AT,
        actions: [{ type: 'add_to_groups', ok: true, added_to: [] }],
      },
    ]);
    expect(await ok(s, 'GET', `/1/workflows/${buyers}/runs`)).toEqual([inbound.runs[0]]);
    expect((await ok(s, 'GET', `/1/workflows/${buyers}`)).run_count).toBe(1);
    expect(await ok(s, 'GET', `/1/workflows/${everyone}/runs`, { query: { count: 'true' } })).toBe(1);
  });

  it('an action that fails at run time is recorded with its reason; its own writes are undone, the others kept', async () => {
    const [gold, gone] = await createGroups(s, 'Gold', 'Gone');
    await createField(s, { shortcut_name: 'spent', field_type: 'numeric' });
    const ada = await addMember(s, 'ada@example.com');
    await workflow({
      name: 'W',
      match: { type: 'purchase' },
      actions: [
        { type: 'add_to_groups', group_ids: [gone] },
        { type: 'set_fields', from: { spent: 'total' } },
        { type: 'add_to_groups', group_ids: [gold] },
      ],
    });
    expect(await ok(s, 'DELETE', `/1/groups/${gone}`)).toBe(true);
    await ingest({ email: 'ada@example.com', type: 'purchase', total: 'lots' });
    runJobs();
    const [run] = (await ok(s, 'GET', '/1/events/inbound/1')).runs;
    expect(run.actions).toEqual([
      { type: 'add_to_groups', ok: false, error: `group ${gone} not found` },
      { type: 'set_fields', ok: false, error: expect.stringMatching(/^fields\.spent: /) },
      { type: 'add_to_groups', ok: true, added_to: [gold] },
    ]);
    expect((await ok(s, 'GET', `/1/members/${ada}`)).fields).toEqual({});
    expect(groupMemberIds(s, gold)).toEqual([ada]);
  });
});

describe('processing is idempotent and crash-safe', () => {
  async function setUp(n: number) {
    const [gold] = await createGroups(s, 'Gold');
    await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } });
    for (let i = 0; i < n; i++) await addMember(s, `m${i}@example.com`);
    await workflow({
      name: 'W',
      match: { type: 'purchase' },
      actions: [
        { type: 'record_event', event_type_id: 1, value_from: 'total' },
        { type: 'add_to_groups', group_ids: [gold] },
      ],
    });
    for (let i = 0; i < n; i++) expect((await ingest({ email: `m${i}@example.com`, type: 'purchase', total: i })).status).toBe(200);
  }

  const processedOnce = (n: number) => {
    expect(countRows(s, 'inbound_events', "status = 'o' AND outcome = 'ran'")).toBe(n);
    expect(countRows(s, 'workflow_runs')).toBe(n);
    expect(countRows(s, 'member_events')).toBe(n);
    // One run and one event per inbound event, none twice.
    expect(countRows(s, '(SELECT inbound_id FROM workflow_runs GROUP BY inbound_id HAVING COUNT(*) > 1)')).toBe(0);
    expect(countRows(s, '(SELECT member_id FROM member_events GROUP BY member_id HAVING COUNT(*) > 1)')).toBe(0);
  };

  it('a crash in the middle of a batch leaves every event of it queued and nothing of its work; the next run does it once', async () => {
    await setUp(30);
    // The 20th event's work is done and its mark fails: a crash after 19 events and a
    // half of the batch's work (a temporary trigger: this connection's alone, gone on close).
    s.db.exec(`CREATE TEMP TRIGGER crash_mid_batch BEFORE UPDATE OF status ON main.inbound_events WHEN NEW.inbound_id = 20
                 BEGIN SELECT RAISE(ABORT, 'killed'); END`);
    expect(() => advanceJobs(s.db, s.clock, 1_000)).toThrow('killed');
    expect(countRows(s, 'inbound_events', "status = 'q'")).toBe(30);
    expect(countRows(s, 'workflow_runs')).toBe(0);
    expect(countRows(s, 'member_events')).toBe(0);
    expect(countRows(s, 'group_members')).toBe(0);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'queued', count: '1' } })).toBe(30);
    s.db.exec('DROP TRIGGER crash_mid_batch');
    runJobs();
    processedOnce(30);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'ran', count: '1' } })).toBe(30);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'queued', count: '1' } })).toBe(0);
    expect(await ok(s, 'GET', '/1/workflows/1')).toMatchObject({ run_count: 30 });
  });

  it('two processes on one file take turns and process each event once', async () => {
    await setUp(40);
    const other = openDb(s.file);
    try {
      // Zero budgets: each call does one slice and stops.
      let turns = 0;
      for (let more = true; more && turns < 1000; turns++) {
        more = advanceInbound(turns % 2 ? other : s.db, s.clock, 0);
      }
      processedOnce(40);
    } finally {
      other.close();
    }
  });

  it('an erased member takes its inbound events and their runs along; the counts follow', async () => {
    await setUp(2);
    runJobs();
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [1] } })).toBe(true);
    expect((await ok(s, 'GET', '/1/events/inbound')).map((e: any) => e.email)).toEqual(['m1@example.com']);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { count: '1' } })).toBe(1);
    expect(await ok(s, 'GET', '/1/events/inbound', { query: { outcome: 'ran', count: '1' } })).toBe(1);
    expect(await ok(s, 'GET', '/1/workflows/1')).toMatchObject({ run_count: 1 });
  });
});
