import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { inTransaction } from '../../src/store/db.js';
import { addMember as addMemberService } from '../../src/service/audience/members.js';
import { EVENT_NAMES, MAX_LISTED_MEMBERS } from '../../src/service/webhooks/webhooks.js';
import { addMember, atD, countRows, createField, createGroups, expectFieldError, ok, setStatus } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const AT = atD(T0);
const hook = (body: Record<string, unknown>, query?: Record<string, string>) => s.call('POST', '/1/webhooks', { body, query });

// ------------------------------------------------------------------ registrations

describe('the /webhooks endpoints, with the real service shapes', () => {
  it('POST answers the bare webhook_id; GET lists {webhook_id, url, method, event, public_key}', async () => {
    const a = await hook({ url: 'https://example.com/a', event: 'member_add' });
    expect(a).toEqual({ status: 200, body: 1 });
    const b = await hook({ url: 'http://127.0.0.1:8000/b', event: 'import_finish', method: 'get', public_key: 'pk_1' });
    expect(b).toEqual({ status: 200, body: 2 });
    expect(await ok(s, 'GET', '/1/webhooks')).toEqual([
      { webhook_id: 1, url: 'https://example.com/a', method: 'POST', event: 'member_add', public_key: null },
      { webhook_id: 2, url: 'http://127.0.0.1:8000/b', method: 'GET', event: 'import_finish', public_key: 'pk_1' },
    ]);
    expect(await ok(s, 'GET', '/1/webhooks/2')).toEqual({
      webhook_id: 2,
      url: 'http://127.0.0.1:8000/b',
      method: 'GET',
      event: 'import_finish',
      public_key: 'pk_1',
    });
    expect(await ok(s, 'GET', '/1/webhooks', { query: { count: 'true' } })).toBe(2);
    expect(await ok(s, 'GET', '/1/webhooks', { query: { start: '1', end: '2' } })).toEqual([expect.objectContaining({ webhook_id: 2 })]);
    expect(await s.call('GET', '/1/webhooks/9')).toEqual({ status: 404, body: { error: 'webhook 9 not found' } });
  });

  it('the secret is answered once, with include_secret, and can be rolled', async () => {
    const created = await ok(s, 'POST', '/1/webhooks', {
      body: { url: 'https://example.com/a', event: 'member_add' },
      query: { include_secret: 'true' },
    });
    expect(created).toEqual({ webhook_id: 1, secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{32}$/) });
    // Reads never show it.
    expect(JSON.stringify(await ok(s, 'GET', '/1/webhooks/1'))).not.toContain('whsec_');
    const rolled = await ok(s, 'POST', '/1/webhooks/1/secret');
    expect(rolled).toEqual({ webhook_id: 1, secret: expect.stringMatching(/^whsec_/) });
    expect(rolled.secret).not.toBe(created.secret);
    expect(s.db.prepare('SELECT secret FROM webhooks').pluck().get()).toBe(rolled.secret);
    // One's own secret (what `amsg webhooks listen` does for its webhooks).
    expect(await ok(s, 'POST', '/1/webhooks/1/secret', { body: { secret: 'whsec_my_own_secret_1234' } })).toEqual({
      webhook_id: 1,
      secret: 'whsec_my_own_secret_1234',
    });
  });

  it('PUT changes any field and answers the bare id; DELETE and DELETE all answer true', async () => {
    await hook({ url: 'https://example.com/a', event: 'member_add' });
    await hook({ url: 'https://example.com/b', event: 'member_add' });
    expect(await s.call('PUT', '/1/webhooks/1', { body: { event: 'member_update', method: 'GET' } })).toEqual({ status: 200, body: 1 });
    expect(await ok(s, 'PUT', '/1/webhooks/1', { body: { url: 'https://example.com/z', public_key: 'pk' } })).toBe(1);
    expect(await ok(s, 'GET', '/1/webhooks/1')).toEqual({
      webhook_id: 1,
      url: 'https://example.com/z',
      method: 'GET',
      event: 'member_update',
      public_key: 'pk',
    });
    expect(await s.call('DELETE', '/1/webhooks/1')).toEqual({ status: 200, body: true });
    expect(await s.call('DELETE', '/1/webhooks/1')).toEqual({ status: 404, body: { error: 'webhook 1 not found' } });
    expect(await s.call('DELETE', '/1/webhooks')).toEqual({ status: 200, body: true });
    expect(await ok(s, 'GET', '/1/webhooks')).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    await hook({ url: 'https://example.com/a', event: 'member_add' });
    s.db.prepare("INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', ?)").run(T0);
    s.db
      .prepare(
        "INSERT INTO webhooks (account_id, url, method, event, secret, created_at) VALUES (2, 'https://other.example.com', 'POST', 'member_add', 'whsec_x', ?)",
      )
      .run(T0);
    const before = JSON.stringify(s.db.prepare('SELECT * FROM webhooks ORDER BY 1').all());
    expectFieldError(await hook({ url: 'https://example.com/a', event: 'member_added' }), 'event');
    expectFieldError(await hook({ url: 'ftp://example.com/a', event: 'member_add' }), 'url');
    expectFieldError(await hook({ url: 'example.com/a', event: 'member_add' }), 'url');
    expectFieldError(await hook({ url: 'https://example.com/a', event: 'member_add', method: 'PUT' }), 'method');
    expectFieldError(await hook({ event: 'member_add' }), 'url');
    expectFieldError(await s.call('PUT', '/1/webhooks/1', { body: { event: 'nope' } }), 'event');
    expectFieldError(await s.call('PUT', '/1/webhooks/1', { body: { url: 'javascript:alert(1)' } }), 'url');
    // A webhook of another account is as missing as one that never was, for writes and reads
    // alike (the isolation rule: nothing tells which ids another account holds), even with a bad body.
    const missing = { status: 404, body: { error: 'webhook 2 not found' } };
    expect(await s.call('PUT', '/1/webhooks/2', { body: { url: 'https://example.com/x' } })).toMatchObject(missing);
    expect(await s.call('PUT', '/1/webhooks/2', { body: { url: 'javascript:alert(1)' } })).toMatchObject(missing);
    expect(await s.call('DELETE', '/1/webhooks/2')).toMatchObject(missing);
    expect(await s.call('POST', '/1/webhooks/2/secret')).toMatchObject(missing);
    expect(await s.call('GET', '/1/webhooks/2')).toMatchObject(missing);
    expect(await s.call('PUT', '/1/webhooks/999', { body: { url: 'https://example.com/x' } })).toMatchObject({
      status: 404,
      body: { error: 'webhook 999 not found' },
    });
    expect(JSON.stringify(s.db.prepare('SELECT * FROM webhooks ORDER BY 1').all())).toBe(before);
    // DELETE all leaves the other account's alone.
    await ok(s, 'DELETE', '/1/webhooks');
    expect(countRows(s, 'webhooks')).toBe(1);
  });

  it('marks every webhook route but the event types (the spec lists that one) as an extension in openapi.json', async () => {
    const doc = (await s.call('GET', '/openapi.json')).body;
    const ops = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/{account_id}/webhooks'))
      .flatMap(([, methods]) => Object.values(methods as Record<string, any>));
    expect(ops.map((o) => o.operationId).sort()).toEqual([
      'webhooks.create',
      'webhooks.delete',
      'webhooks.deleteAll',
      'webhooks.deliveries',
      'webhooks.delivery',
      'webhooks.events',
      'webhooks.get',
      'webhooks.list',
      'webhooks.replay',
      'webhooks.rollSecret',
      'webhooks.trigger',
      'webhooks.update',
    ]);
    for (const o of ops) expect(o['x-amsg-extension'] === true, o.operationId).toBe(o.operationId !== 'webhooks.events');
  });

  it('GET /webhooks/events still answers the catalogue', async () => {
    const events = await ok(s, 'GET', '/1/webhooks/events');
    expect(events.map((e: any) => e.event_name)).toEqual(EVENT_NAMES);
  });
});

// ------------------------------------------------------------------ every event fired

/** Registers a webhook for each of the 22 events (nothing delivers in these tests). */
async function hookEverything() {
  for (const event of EVENT_NAMES) await hook({ url: 'http://127.0.0.1:9/hook', event });
}

let seen = 0;
/** The events fired since the last call, as [event, data], in order. */
function fired(): [string, any][] {
  const rows = s.db.prepare('SELECT event_id, event, data FROM webhook_events WHERE event_id > ? ORDER BY event_id').all(seen) as {
    event_id: number;
    event: string;
    data: string;
  }[];
  if (rows.length) seen = rows[rows.length - 1].event_id;
  return rows.map((r) => [r.event, JSON.parse(r.data)]);
}

const one = (member_id: number, email: string) => ({ members: [{ member_id, email }], member_count: 1 });

describe('every event is fired by the operations that cause it, with its documented payload', () => {
  let gold: number;
  let silver: number;
  beforeEach(async () => {
    seen = 0;
    await hookEverything();
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    [gold, silver] = await createGroups(s, 'Gold', 'Silver');
    fired();
  });

  it('member_add: a single add of a new address (not of one that exists)', async () => {
    const id = await addMember(s, 'ada@example.com');
    expect(fired()).toEqual([['member_add', one(id, 'ada@example.com')]]);
    await addMember(s, 'ada@example.com');
    expect(fired()).toEqual([]);
  });

  it('member_update: a change to a member (PUT, or an add that changes one)', async () => {
    const id = await addMember(s, 'ada@example.com');
    fired();
    await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { first_name: 'Ada' }, email: 'ada@new.example.com' } });
    expect(fired()).toEqual([['member_update', { changed: ['fields', 'email'], ...one(id, 'ada@new.example.com') }]]);
    await addMember(s, 'ada@new.example.com', { fields: { first_name: 'Ad' } });
    expect(fired()).toEqual([['member_update', { changed: ['fields'], ...one(id, 'ada@new.example.com') }]]);
  });

  it('member_signup: a signup, with its groups (and the add and the group joins it makes)', async () => {
    const res = await ok(s, 'POST', '/1/members/signup', { body: { email: 'sig@example.com', group_ids: [gold] } });
    const id = res.member_id;
    expect(fired()).toEqual([
      ['member_add', one(id, 'sig@example.com')],
      ['member_add_to_group', { group_ids: [gold], ...one(id, 'sig@example.com') }],
      ['member_signup', { group_ids: [gold], added: true, ...one(id, 'sig@example.com') }],
    ]);
  });

  it('member_delete: archive (single and bulk) and purge, one event listing the members', async () => {
    const a = await addMember(s, 'a@example.com');
    const b = await addMember(s, 'b@example.com');
    const c = await addMember(s, 'c@example.com');
    fired();
    await ok(s, 'DELETE', `/1/members/${a}`);
    expect(fired()).toEqual([['member_delete', { purged: false, ...one(a, 'a@example.com') }]]);
    await ok(s, 'PUT', '/1/members/delete', { body: { member_ids: [a, b, c] } });
    expect(fired()).toEqual([
      [
        'member_delete',
        {
          purged: false,
          members: [
            { member_id: b, email: 'b@example.com' },
            { member_id: c, email: 'c@example.com' },
          ],
          member_count: 2,
        },
      ],
    ]);
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [a, b] } });
    expect(fired()).toEqual([
      [
        'member_delete',
        {
          purged: true,
          members: [
            { member_id: a, email: 'a@example.com' },
            { member_id: b, email: 'b@example.com' },
          ],
          member_count: 2,
        },
      ],
    ]);
  });

  it('member_status_update: each status change, bulk changes as one event', async () => {
    const a = await addMember(s, 'a@example.com');
    const b = await addMember(s, 'b@example.com');
    fired();
    await setStatus(s, [a, b], 'e');
    expect(fired()).toEqual([
      [
        'member_status_update',
        {
          member_status_id: 'e',
          members: [
            { member_id: a, email: 'a@example.com' },
            { member_id: b, email: 'b@example.com' },
          ],
          member_count: 2,
        },
      ],
    ]);
    // Members already in the status are not listed; nobody changing fires nothing.
    await setStatus(s, [a], 'e');
    expect(fired()).toEqual([]);
    await ok(s, 'PUT', '/1/members/status/e/to/a', { body: {} });
    expect(fired()).toEqual([
      [
        'member_status_update',
        {
          member_status_id: 'a',
          members: [
            { member_id: a, email: 'a@example.com' },
            { member_id: b, email: 'b@example.com' },
          ],
          member_count: 2,
        },
      ],
    ]);
  });

  it('member_optout: on every opt-out path (by id, by e-mail, a status change, through a mailing, a subscription)', async () => {
    const a = await addMember(s, 'a@example.com');
    const b = await addMember(s, 'b@example.com');
    fired();
    await ok(s, 'PUT', `/1/members/email/optout/${encodeURIComponent('a@example.com')}`);
    expect(fired()).toEqual([
      ['member_status_update', { member_status_id: 'o', ...one(a, 'a@example.com') }],
      ['member_optout', { mailing_id: null, ...one(a, 'a@example.com') }],
    ]);
    await ok(s, 'PUT', `/1/members/${b}`, { body: { status_to: 'o' } });
    expect(fired().map((e) => e[0])).toEqual(['member_status_update', 'member_optout']);
    const sub = await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } });
    const c = await addMember(s, 'c@example.com');
    fired();
    await ok(s, 'PUT', `/1/subscriptions/${sub.subscription_id}/members/${c}/optout`);
    expect(fired()).toEqual([['member_optout', { mailing_id: null, subscription_id: sub.subscription_id, ...one(c, 'c@example.com') }]]);
  });

  it('member_add_to_group: from either side, only members that were not in the group, one event per call', async () => {
    const a = await addMember(s, 'a@example.com');
    const b = await addMember(s, 'b@example.com');
    fired();
    await ok(s, 'PUT', `/1/members/${a}/groups`, { body: { group_ids: [gold, silver] } });
    expect(fired()).toEqual([['member_add_to_group', { group_ids: [gold, silver], ...one(a, 'a@example.com') }]]);
    await ok(s, 'PUT', `/1/groups/${gold}/members`, { body: { member_ids: [a, b] } });
    expect(fired()).toEqual([['member_add_to_group', { group_ids: [gold], ...one(b, 'b@example.com') }]]);
    await ok(s, 'PUT', `/1/groups/${gold}/${silver}/members/copy`, { body: {} });
    expect(fired()).toEqual([['member_add_to_group', { group_ids: [silver], ...one(b, 'b@example.com') }]]);
    const c = await addMember(s, 'c@example.com');
    fired();
    await ok(s, 'PUT', `/1/members/${gold}/copy`, { body: { member_status_id: ['a'] } });
    expect(fired()).toEqual([['member_add_to_group', { group_ids: [gold], ...one(c, 'c@example.com') }]]);
    await ok(s, 'PUT', `/1/groups/${gold}/members`, { body: { member_ids: [a, b, c] } });
    expect(fired()).toEqual([]);
  });

  it('member_remove_from_group: from either side, only members that were in the group, one event per call', async () => {
    const a = await addMember(s, 'a@example.com', { group_ids: [gold, silver] });
    const b = await addMember(s, 'b@example.com', { group_ids: [gold, silver] });
    fired();
    await ok(s, 'PUT', '/1/members/groups/remove', { body: { member_ids: [a, b], group_ids: [silver] } });
    expect(fired()).toEqual([
      [
        'member_remove_from_group',
        {
          group_ids: [silver],
          members: [
            { member_id: a, email: 'a@example.com' },
            { member_id: b, email: 'b@example.com' },
          ],
          member_count: 2,
        },
      ],
    ]);
    await ok(s, 'PUT', `/1/groups/${gold}/members/remove`, { body: { member_ids: [a] } });
    expect(fired()).toEqual([['member_remove_from_group', { group_ids: [gold], ...one(a, 'a@example.com') }]]);
    await ok(s, 'DELETE', `/1/groups/${gold}/members`);
    expect(fired()).toEqual([['member_remove_from_group', { group_ids: [gold], ...one(b, 'b@example.com') }]]);
    await ok(s, 'PUT', `/1/members/${a}/groups`, { body: { group_ids: [gold, silver] } });
    fired();
    await ok(s, 'PUT', `/1/members/${a}/groups/remove`, { body: { group_ids: [silver] } });
    expect(fired()).toEqual([['member_remove_from_group', { group_ids: [silver], ...one(a, 'a@example.com') }]]);
    await ok(s, 'DELETE', `/1/members/${a}/groups`);
    expect(fired()).toEqual([['member_remove_from_group', { group_ids: [gold], ...one(a, 'a@example.com') }]]);
    // Nothing changed, nothing fired.
    await ok(s, 'PUT', `/1/groups/${gold}/members/remove`, { body: { member_ids: [a] } });
    expect(fired()).toEqual([]);
  });

  it('group_create: one event for all the groups of a call', async () => {
    const created = await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'A' }, { group_name: 'B' }] } });
    expect(created.length).toBe(2);
    expect(fired()).toEqual([['group_create', { groups: created }]]);
  });

  it('group_update: a rename, with the previous name', async () => {
    await ok(s, 'PUT', `/1/groups/${gold}`, { body: { group_name: 'Gold2' } });
    expect(fired()).toEqual([['group_update', { groups: [{ member_group_id: gold, group_name: 'Gold2' }], previous_name: 'Gold' }]]);
  });

  it('group_delete', async () => {
    await ok(s, 'DELETE', `/1/groups/${gold}`);
    expect(fired()).toEqual([['group_delete', { groups: [{ member_group_id: gold, group_name: 'Gold' }] }]]);
  });

  const city = (field_id: number, display_name = 'city') => ({
    field: { field_id, shortcut_name: 'city', display_name, field_type: 'text' },
  });

  it('field_create', async () => {
    const id = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    expect(fired()).toEqual([['field_create', city(id)]]);
  });

  it('field_update: a change of definition, and a clear of its values', async () => {
    const id = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    fired();
    await ok(s, 'PUT', `/1/fields/${id}`, { body: { display_name: 'City' } });
    expect(fired()).toEqual([['field_update', city(id, 'City')]]);
    await ok(s, 'POST', `/1/fields/${id}/clear`);
    expect(fired()).toEqual([['field_update', { ...city(id, 'City'), cleared: true }]]);
  });

  it('field_delete', async () => {
    const id = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    fired();
    await ok(s, 'DELETE', `/1/fields/${id}`);
    expect(fired()).toEqual([['field_delete', city(id)]]);
  });

  it('import_finish: once per import, never a member_add per row', async () => {
    const members = Array.from({ length: 30 }, (_, i) => ({ email: `m${i}@example.com` }));
    const { import_id } = await ok(s, 'POST', '/1/members', { body: { members } });
    for (let i = 0; i < 100 && advanceJobs(s.db, s.clock, 1_000); i++);
    expect(fired()).toEqual([
      [
        'import_finish',
        {
          import_id,
          import_status: 'o',
          num_members: 30,
          num_added: 30,
          num_updated: 0,
          num_skipped: 0,
          num_errors: 0,
          num_duplicates: 0,
          error_message: null,
        },
      ],
    ]);
    // A streamed import too (the CLI's), however many batches.
    const opened = await ok(s, 'POST', '/1/members/imports', { body: {} });
    for (const offset of [0, 2])
      await ok(s, 'POST', `/1/members/imports/${opened.import_id}/rows`, {
        body: { columns: ['email'], rows: [[`s${offset}@example.com`], [`s${offset + 1}@example.com`]], offset },
      });
    expect(fired()).toEqual([]);
    await ok(s, 'POST', `/1/members/imports/${opened.import_id}/finish`);
    expect(fired()).toEqual([
      ['import_finish', expect.objectContaining({ import_id: opened.import_id, import_status: 'o', num_members: 4, num_added: 4 })],
    ]);
  });

  describe('mailings and messages', () => {
    const HTML = '<p>Hi</p><a href="https://shop.example.com/sale">The sale</a> <a href="[% optout_url %]">opt out</a>';
    let mailingId: number;
    let ada: number;
    beforeEach(async () => {
      ada = await addMember(s, 'ada@example.com', { group_ids: [gold] });
      const created = await ok(s, 'POST', '/1/mailings', {
        body: {
          name: 'Spring',
          subject: 'Hi',
          sender: 'shop@example.com',
          html_body: HTML,
          plaintext: 'Hi [% optout_url %]',
          recipient_groups: [gold],
        },
      });
      mailingId = created.mailing_id;
      fired();
      for (let i = 0; i < 100 && advanceJobs(s.db, s.clock, 1_000); i++);
    });

    const spring = (recipient_count: number) => ({
      mailing_id: mailingId,
      name: 'Spring',
      subject: 'Hi',
      mailing_type: 'm',
      recipient_count,
    });

    it('mailing_start: from the sender, when it starts', async () => {
      expect(fired()[0]).toEqual(['mailing_start', spring(1)]);
    });

    it('mailing_finish: from the sender, when it completes', async () => {
      expect(fired()).toEqual([
        ['mailing_start', spring(1)],
        ['mailing_finish', spring(1)],
      ]);
    });

    /** Records engagement of kind with `amsg sim` (POST /sim/{kind}) and answers the events it fired. */
    const sim = async (kind: string, extra: Record<string, unknown> = {}) => {
      fired();
      await ok(s, 'POST', `/1/sim/${kind}`, { body: { mailing_id: mailingId, member_id: ada, ...extra } });
      return fired();
    };

    it('message_open: amsg sim open, each time', async () => {
      expect(await sim('open')).toEqual([['message_open', { mailing_id: mailingId, ...one(ada, 'ada@example.com') }]]);
      expect(await sim('open')).toEqual([['message_open', { mailing_id: mailingId, ...one(ada, 'ada@example.com') }]]);
    });

    it('message_click: amsg sim click, with the link', async () => {
      const link = s.db.prepare('SELECT MIN(link_id) FROM mailing_links WHERE mailing_id = ?').pluck().get(mailingId) as number;
      expect(await sim('click')).toEqual([['message_click', { mailing_id: mailingId, link_id: link, ...one(ada, 'ada@example.com') }]]);
    });

    it('message_share: amsg sim share', async () => {
      expect(await sim('share')).toEqual([['message_share', { mailing_id: mailingId, ...one(ada, 'ada@example.com') }]]);
    });

    it('message_share_click: amsg sim share_click', async () => {
      expect(await sim('share_click')).toEqual([['message_share_click', { mailing_id: mailingId, ...one(ada, 'ada@example.com') }]]);
    });

    it('member_optout through a mailing names it; a hard bounce is a member_status_update', async () => {
      expect(await sim('optout')).toEqual([
        ['member_status_update', { member_status_id: 'o', ...one(ada, 'ada@example.com') }],
        ['member_optout', { mailing_id: mailingId, ...one(ada, 'ada@example.com') }],
      ]);
      expect(await sim('bounce', { hard: true })).toEqual([
        ['member_status_update', { member_status_id: 'e', ...one(ada, 'ada@example.com') }],
      ]);
    });

    it('message_forward: a member forwards its message', async () => {
      fired();
      const res = await ok(s, 'POST', `/1/forwards/${mailingId}/${ada}`, { body: { recipient_emails: ['Friend@Example.com'] } });
      expect(fired()).toEqual([
        [
          'message_forward',
          {
            mailing_id: mailingId,
            forward_mailing_id: res.mailing_id,
            forwarded_to: ['friend@example.com'],
            ...one(ada, 'ada@example.com'),
          },
        ],
      ]);
    });
  });

  it('has a test of its own for each of the 22 event types', () => {
    const titles = (expect.getState().testPath ? readFileSync(expect.getState().testPath!, 'utf8') : '').match(/\bit\('(\w+)[:' ]/g) ?? [];
    const named = new Set(titles.map((t) => t.slice(4, -1)));
    expect(EVENT_NAMES.filter((e) => !named.has(e))).toEqual([]);
  });

  it('each event reaches only the webhooks registered for it, as one pending delivery each', async () => {
    await hook({ url: 'http://127.0.0.1:9/second', event: 'member_add' });
    await addMember(s, 'ada@example.com');
    const rows = s.db
      .prepare(
        'SELECT d.webhook_id, w.event, d.status, d.attempts FROM webhook_deliveries d JOIN webhooks w USING (webhook_id) WHERE d.event_id = (SELECT MAX(event_id) FROM webhook_events) ORDER BY d.delivery_id',
      )
      .all();
    expect(rows).toEqual([
      { webhook_id: EVENT_NAMES.indexOf('member_add') + 1, event: 'member_add', status: 'p', attempts: 0 },
      { webhook_id: 23, event: 'member_add', status: 'p', attempts: 0 },
    ]);
  });

  it('a bulk event lists at most MAX_LISTED_MEMBERS members and counts them all', async () => {
    const n = MAX_LISTED_MEMBERS + 5;
    s.db
      .prepare(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
      INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at, field_values)
      SELECT 1, 'bulk' || i || '@example.com', 'a', ?, ?, '{}' FROM k`)
      .run(T0, T0);
    fired();
    await ok(s, 'PUT', '/1/members/status/a/to/e', { body: {} });
    const [[event, data]] = fired();
    expect(event).toBe('member_status_update');
    expect(data.member_count).toBe(n);
    expect(data.members.length).toBe(MAX_LISTED_MEMBERS);
  });
});

describe('the outbox is transactional', () => {
  it('a change that rolls back fires nothing', async () => {
    await hookEverything();
    const before = countRows(s, 'webhook_events');
    const ctx = { db: s.db, clock: s.clock, actor: s.actor, accountId: 1 };
    expect(() =>
      inTransaction(s.db, () => {
        addMemberService(ctx, { email: 'ghost@example.com' });
        expect(countRows(s, 'webhook_events')).toBe(before + 1); // written, inside the transaction
        throw new Error('the rest of the change failed');
      }),
    ).toThrow('the rest of the change failed');
    expect(countRows(s, 'webhook_events')).toBe(before);
    expect(countRows(s, 'webhook_deliveries')).toBe(0);
    expect(countRows(s, 'members')).toBe(0);
    // A refused request, through the routes: a group create whose second name is taken.
    await createGroups(s, 'Taken');
    const after = countRows(s, 'webhook_events');
    expect((await s.call('POST', '/1/groups', { body: { groups: [{ group_name: 'New' }, { group_name: 'taken' }] } })).status).toBe(400);
    expect(countRows(s, 'webhook_events')).toBe(after);
  });

  it('an account with no webhook for an event writes nothing', async () => {
    await hook({ url: 'http://127.0.0.1:9/hook', event: 'group_create' });
    await addMember(s, 'ada@example.com');
    expect(countRows(s, 'webhook_events')).toBe(0);
    await createGroups(s, 'G');
    expect(countRows(s, 'webhook_events')).toBe(1);
  });
});

describe('trigger, the delivery log and replay', () => {
  it('trigger fires a sample event to the webhooks for it', async () => {
    expect(await ok(s, 'POST', '/1/webhooks/trigger', { body: { event: 'member_add' } })).toEqual({ event_id: null, deliveries: 0 });
    await hook({ url: 'http://127.0.0.1:9/hook', event: 'member_add' });
    expect(await ok(s, 'POST', '/1/webhooks/trigger', { body: { event: 'member_add' } })).toEqual({ event_id: 1, deliveries: 1 });
    expect(JSON.parse(s.db.prepare('SELECT data FROM webhook_events').pluck().get() as string)).toEqual({
      members: [{ member_id: 0, email: 'sample@example.com' }],
      member_count: 1,
      sample: true,
    });
    expectFieldError(await s.call('POST', '/1/webhooks/trigger', { body: { event: 'nope' } }), 'event');
  });

  it('lists deliveries newest first with their attempts; replay makes a new delivery of the same event', async () => {
    await hook({ url: 'http://127.0.0.1:9/hook', event: 'member_add' });
    await addMember(s, 'a@example.com');
    await addMember(s, 'b@example.com');
    const list = await ok(s, 'GET', '/1/webhooks/deliveries');
    expect(list).toEqual([
      {
        delivery_id: 2,
        webhook_id: 1,
        event_id: 2,
        event: 'member_add',
        status: 'p',
        attempts: 0,
        next_attempt_at: AT,
        last_status_code: null,
        last_error: null,
        created_at: AT,
        delivered_at: null,
        replay_of: null,
        attempt_log: [],
      },
      expect.objectContaining({ delivery_id: 1, event_id: 1 }),
    ]);
    expect(await ok(s, 'GET', '/1/webhooks/deliveries', { query: { count: 'true', webhook_id: '1' } })).toBe(2);
    expect(await ok(s, 'GET', '/1/webhooks/deliveries', { query: { status: 'e' } })).toEqual([]);
    expect(await ok(s, 'GET', '/1/webhooks/deliveries/1')).toEqual(expect.objectContaining({ delivery_id: 1, event_id: 1 }));
    expect(await s.call('POST', '/1/webhooks/deliveries/1/replay')).toEqual({ status: 200, body: 3 });
    expect(await ok(s, 'GET', '/1/webhooks/deliveries/3')).toEqual(
      expect.objectContaining({ delivery_id: 3, event_id: 1, replay_of: 1, status: 'p' }),
    );
    expect((await s.call('POST', '/1/webhooks/deliveries/99/replay')).status).toBe(404);
    expectFieldError(await s.call('GET', '/1/webhooks/deliveries', { query: { status: 'x' } }), 'status');
  });
});
