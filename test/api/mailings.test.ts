import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { extractLinks } from '../../src/service/mailings/mailings.js';
import { addMember, atD, countRows, createField, createGroups, expectFieldError, ok, setStatus } from './util.js';

let s: TestService;
let gold: number;
let silver: number;
let ids: Record<string, number>;

const HTML =
  '<p>Hi [% member:first_name | default:"friend" %]</p><a href="https://shop.example.com/sale">The sale</a> <a href="[% optout_url %]">opt out</a>';
const TEXT = 'Hi [% member:first_name | default:"friend" %], see https://shop.example.com/sale\nOpt out: [% optout_url %]';

beforeEach(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  await createField(s, { shortcut_name: 'city', field_type: 'text' });
  [gold, silver] = await createGroups(s, 'Gold', 'Silver');
  ids = {
    ann: await addMember(s, 'ann@example.com', { fields: { first_name: 'Ann', city: 'Oslo' }, group_ids: [gold] }),
    bob: await addMember(s, 'bob@example.com', { fields: { city: 'Bergen' }, group_ids: [gold, silver] }),
    cid: await addMember(s, 'cid@example.com', { fields: { first_name: 'Cid' }, group_ids: [silver] }),
    out: await addMember(s, 'out@example.com', { group_ids: [gold] }),
    err: await addMember(s, 'err@example.com', { group_ids: [gold] }),
  };
  await setStatus(s, [ids.out], 'o');
  await setStatus(s, [ids.err], 'e');
});
afterEach(() => s.close());

const base = (over: Record<string, unknown> = {}) => ({
  name: 'Spring sale',
  subject: 'Hello [% member:first_name | default:"friend" %]',
  sender: 'shop@example.com',
  html_body: HTML,
  plaintext: TEXT,
  recipient_groups: [gold],
  ...over,
});

async function create(over: Record<string, unknown> = {}): Promise<number> {
  const body = await ok(s, 'POST', '/1/mailings', { body: base(over) });
  expect(Object.keys(body)).toEqual(['mailing_id']);
  return body.mailing_id;
}

const get = (id: number, query?: Record<string, string>) => ok(s, 'GET', `/1/mailings/${id}`, query ? { query } : undefined);
const status = async (id: number) => (await get(id)).mailing_status;
/** Runs the job runner as `amsg serve` would, until nothing is due. */
const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};
const setRaw = (id: number, mailing_status: string) =>
  s.db.prepare('UPDATE mailings SET mailing_status = ? WHERE mailing_id = ?').run(mailing_status, id);

describe('creating and reading a mailing', () => {
  it('answers the detail shape of the spec, with links, names and @D: dates', async () => {
    const id = await create({
      recipient_emails: ['New@Example.com', 'ann@example.com'],
      heads_up_emails: ['boss@example.com'],
      reply_to: 'help@example.com',
    });
    const newMember = (await ok(s, 'GET', '/1/members/email/new@example.com')).member_id;
    expect(await get(id)).toEqual({
      mailing_id: id,
      account_id: 1,
      mailing_type: 'm',
      mailing_status: 'p',
      name: 'Spring sale',
      subject: 'Hello [% member:first_name | default:"friend" %]',
      sender: 'shop@example.com',
      reply_to: 'help@example.com',
      plaintext_only: false,
      disabled: false,
      recipient_count: 0,
      created_ts: atD(T0),
      send_at: null,
      send_started: null,
      send_finished: null,
      cancel_ts: null,
      failure_ts: null,
      archived_ts: null,
      purged_at: null,
      cancel_by_user_id: null,
      parent_mailing_id: null,
      signup_form_id: null,
      failure_message: null,
      month: null,
      year: null,
      datacenter: null,
      started_or_finished: null,
      deleted_at: null,
      plaintext: TEXT,
      html_body: HTML,
      public_webview_url: `https://view.amsg.example.com/1/${id}`,
      recipient_groups: [{ member_group_id: gold, name: 'Gold' }],
      recipient_subscriptions: [],
      recipient_segments: [],
      recipient_searches: [],
      recipient_members: [
        { email: 'new@example.com', member_id: newMember },
        { email: 'ann@example.com', member_id: ids.ann },
      ],
      heads_up_emails: ['boss@example.com'],
      links: [
        {
          mailing_id: id,
          plaintext: false,
          link_id: 1,
          link_name: 'The sale',
          link_target: 'https://shop.example.com/sale',
          link_order: 1,
        },
        {
          mailing_id: id,
          plaintext: true,
          link_id: 2,
          link_name: 'https://shop.example.com/sale',
          link_target: 'https://shop.example.com/sale',
          link_order: 2,
        },
      ],
    });
  });

  it('names subscriptions and segments only when asked', async () => {
    const sub = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
    const seg = await ok(s, 'POST', '/1/searches', { body: { name: 'Oslo', criteria: ['member_field:city', 'eq', 'Oslo'] } });
    const id = await create({ recipient_subscriptions: [sub], recipient_segments: [seg] });
    const plain = await get(id);
    expect(plain.recipient_subscriptions).toEqual([{ subscription_id: sub }]);
    expect(plain.recipient_segments).toEqual([{ segment_id: seg }]);
    const named = await get(id, { include_segment_names: 'true', include_subscription_names: '1' });
    expect(named.recipient_subscriptions).toEqual([{ subscription_id: sub, subscription_name: 'News' }]);
    expect(named.recipient_segments).toEqual([{ segment_id: seg, name: 'Oslo' }]);
  });

  it('refuses bad templates, missing opt-out links, missing audiences and unknown references, and stores nothing', async () => {
    const bad = await s.call('POST', '/1/mailings', { body: base({ html_body: '<p>[% member:frist_name %]</p>[% optout_url %]' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.invalid_tags).toEqual([
      { part: 'html_body', tag: '[% member:frist_name %]', line: 1, column: 4, reason: expect.stringContaining('frist_name') },
    ]);
    const noOptout = await s.call('POST', '/1/mailings', { body: base({ html_body: '<p>Hi</p>' }) });
    expect(noOptout.status).toBe(400);
    expect(noOptout.body.missing_tags).toEqual(['html_body lacks [% optout_url %]']);
    const noAudience = await s.call('POST', '/1/mailings', { body: base({ recipient_groups: [] }) });
    expect(noAudience.status).toBe(400);
    expect(noAudience.body.error).toMatch(/^recipients: a mailing needs recipients/);
    expect((await s.call('POST', '/1/mailings', { body: base({ recipient_groups: [999] }) })).status).toBe(404);
    expectFieldError(await s.call('POST', '/1/mailings', { body: base({ recipient_groups: ['Gold'] }) }), 'recipient_groups[0]');
    expectFieldError(await s.call('POST', '/1/mailings', { body: base({ recipient_emails: ['not-an-address'] }) }), 'recipient_emails[0]');
    expectFieldError(await s.call('POST', '/1/mailings', { body: base({ send_at: 'tomorrow' }) }), 'send_at');
    expect(countRows(s, 'mailings')).toBe(0);
    expect(countRows(s, 'mailing_audience')).toBe(0);
    expect(countRows(s, 'members')).toBe(5);
  });

  it('keeps an unapproved draft (u) without recipients or opt-out link', async () => {
    const id = await create({ status: 'u', html_body: '<p>draft</p>', plaintext: undefined, recipient_groups: [] });
    expect(await status(id)).toBe('u');
    runJobs();
    expect(await status(id)).toBe('u');
  });

  it("answers 404 for another account's mailing", async () => {
    const id = await create();
    s.db.prepare("INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', ?)").run(T0);
    s.db.prepare('UPDATE mailings SET account_id = 2 WHERE mailing_id = ?').run(id);
    const res = await s.call('GET', `/1/mailings/${id}`);
    expect(res).toEqual({ status: 404, body: { error: `mailing ${id} not found` } });
    expect((await s.call('DELETE', `/1/mailings/cancel/${id}`)).status).toBe(404);
    expect((await s.call('PUT', `/1/mailings/${id}`, { body: { status: 'paused' } })).status).toBe(404);
  });
});

describe('the list', () => {
  it('defaults to types m,t and every status but canceled, without archived ones', async () => {
    const a = await create({ name: 'A' });
    const b = await create({ name: 'B', mailing_type: 't' });
    const x = await create({ name: 'X' });
    const arch = await create({ name: 'Archived' });
    await ok(s, 'DELETE', `/1/mailings/cancel/${x}`);
    expect(await ok(s, 'DELETE', `/1/mailings/${arch}`)).toBe(true);
    const names = async (query: Record<string, string> = {}) => (await ok(s, 'GET', '/1/mailings', { query })).map((m: any) => m.name);
    expect(await names()).toEqual(['A', 'B']);
    expect(await names({ mailing_types: 'm' })).toEqual(['A']);
    expect(await names({ include_archived: 'true' })).toEqual(['A', 'B', 'Archived']);
    expect(await names({ mailing_statuses: 'x' })).toEqual(['X']);
    const archived = await get(arch);
    expect(archived.mailing_status).toBe('p');
    expect(archived.archived_ts).toBe(atD(T0));
    expect([a, b].length).toBe(2);
  });

  it('adds html_body and plaintext only when asked, and filters scheduled mailings', async () => {
    await create({ name: 'Now' });
    await create({ name: 'Later', send_at: '2026-12-01T09:00:00Z' });
    const [now, later] = await ok(s, 'GET', '/1/mailings', { query: { with_html_body: 'true' } });
    expect(now.html_body).toBe(HTML);
    expect('plaintext' in now).toBe(false);
    expect(later.send_at).toBe('@D:2026-12-01T09:00:00');
    const scheduled = await ok(s, 'GET', '/1/mailings', { query: { is_scheduled: '1', with_plaintext: '1' } });
    expect(scheduled.map((m: any) => [m.name, m.plaintext])).toEqual([['Later', TEXT]]);
  });

  it('answers 400 for an unknown type or status letter', async () => {
    expectFieldError(await s.call('GET', '/1/mailings', { query: { mailing_types: 'm,q' } }), 'mailing_types');
    expectFieldError(await s.call('GET', '/1/mailings', { query: { mailing_statuses: 'p,z' } }), 'mailing_statuses');
  });
});

describe('the status table', () => {
  const put = (id: number, word: unknown) => s.call('PUT', `/1/mailings/${id}`, { body: { status: word } });

  it.each(['p', 'a'])('DELETE cancel from %s → x, true', async (from) => {
    const id = await create({ send_at: '2027-01-01T00:00:00Z' });
    setRaw(id, from);
    expect(await s.call('DELETE', `/1/mailings/cancel/${id}`)).toEqual({ status: 200, body: true });
    const m = await get(id);
    expect([m.mailing_status, m.cancel_ts, m.cancel_by_user_id]).toEqual(['x', atD(T0), s.actor.user_id]);
  });

  it.each(['i', 's', 'x', 'c', 'w', 'u', 'f'])('DELETE cancel from %s → 403, unchanged', async (from) => {
    const id = await create({ send_at: '2027-01-01T00:00:00Z' });
    setRaw(id, from);
    const res = await s.call('DELETE', `/1/mailings/cancel/${id}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe(`mailing ${id} is ${from}: only a pending (p) or paused (a) mailing can be canceled`);
    expect(await status(id)).toBe(from);
  });

  it('DELETE cancel of a missing mailing → 404', async () => {
    expect((await s.call('DELETE', '/1/mailings/cancel/999')).status).toBe(404);
  });

  it.each(['p', 'u'])('PUT canceled from %s with tags and recipients → x, answers the mailing', async (from) => {
    const id = await create({ send_at: '2027-01-01T00:00:00Z' });
    setRaw(id, from);
    const res = await put(id, 'canceled');
    expect(res.status).toBe(200);
    expect(res.body.mailing_id).toBe(id);
    expect(res.body.mailing_status).toBe('x');
    expect(res.body.cancel_ts).toBe(atD(T0));
  });

  it('PUT on a pending or unapproved mailing lacking a required tag → 400', async () => {
    const id = await create({ status: 'u', html_body: '<p>no link</p>', plaintext: undefined });
    for (const word of ['canceled', 'paused', 'ready']) {
      const res = await put(id, word);
      expect(res.status).toBe(400);
      expect(res.body.missing_tags).toEqual(['html_body lacks [% optout_url %]']);
    }
    expect(await status(id)).toBe('u');
  });

  it('PUT on an unapproved mailing that cannot be scheduled (no recipients) → 400', async () => {
    const id = await create({ status: 'u', recipient_groups: [] });
    const res = await put(id, 'ready');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`status: mailing ${id} cannot be scheduled: it has no recipients`);
  });

  it('PUT paused → a, PUT ready → p; an unapproved mailing becomes pending when ready', async () => {
    const id = await create({ send_at: '2027-01-01T00:00:00Z' });
    expect((await put(id, 'paused')).body.mailing_status).toBe('a');
    expect((await put(id, 'ready')).body.mailing_status).toBe('p');
    const draft = await create({ status: 'u' });
    expect((await put(draft, 'ready')).body.mailing_status).toBe('p');
  });

  it('PUT on a canceled mailing → 400: it cannot be resumed', async () => {
    const id = await create();
    await ok(s, 'DELETE', `/1/mailings/cancel/${id}`);
    for (const word of ['canceled', 'paused', 'ready']) {
      const res = await put(id, word);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`status: a canceled mailing cannot be resumed (mailing ${id} is x)`);
    }
  });

  it.each([
    ['c', 'the mailing is complete'],
    ['s', 'the mailing is sending'],
  ])('PUT on %s → 400 for every word', async (from, reason) => {
    const id = await create();
    setRaw(id, from);
    for (const word of ['canceled', 'paused', 'ready']) {
      const res = await put(id, word);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(`status: ${reason} (mailing ${id} is ${from})`);
      expect(await status(id)).toBe(from);
    }
  });

  it('PUT with a status word that is not canceled, paused or ready → 400 naming status', async () => {
    const id = await create();
    for (const word of ['sent', 'x', 'Canceled', 3]) expectFieldError(await put(id, word), 'status');
    expect(await status(id)).toBe('p');
  });
});

describe('sending', () => {
  it('moves a due mailing p → i → s → c to the audience after de-duplication, skipping opted-out and error members', async () => {
    const id = await create({
      recipient_groups: [gold, silver],
      recipient_emails: ['ann@example.com'],
      heads_up_emails: ['boss@example.com'],
    });
    runJobs();
    const m = await get(id);
    expect(m.mailing_status).toBe('c');
    expect(m.recipient_count).toBe(3);
    expect([m.send_started, m.send_finished]).toEqual([atD(T0), atD(T0)]);
    const recipients = s.db.prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ? ORDER BY member_id').pluck().all(id);
    expect(recipients).toEqual([ids.ann, ids.bob, ids.cid]);
    expect(await ok(s, 'GET', `/1/mailings/${id}/headsup`)).toEqual([{ sent_ts: atD(T0), email: 'boss@example.com', mailing_id: id }]);
    expect(countRows(s, 'mailing_queue')).toBe(0);
  });

  it('goes through i and s as separate steps', async () => {
    const id = await create();
    const steps: string[] = [];
    const { advanceMailings } = await import('../../src/service/mailings/sending.js');
    // A budget of 0 takes exactly one step.
    for (let i = 0; i < 10; i++) {
      const before = await status(id);
      advanceMailings(s.db, s.clock, 0);
      const after = await status(id);
      if (after !== before) steps.push(after);
      if (after === 'c') break;
    }
    expect(steps[0]).toBe('i');
    expect(steps.at(-1)).toBe('c');
    expect(steps).toContain('s');
  });

  it('waits for send_at on the clock', async () => {
    const id = await create({ send_at: '2026-03-04T06:00:00Z' });
    runJobs();
    expect(await status(id)).toBe('p');
    s.clock.set('2026-03-04T06:00:00Z');
    runJobs();
    expect(await status(id)).toBe('c');
    expect((await get(id)).send_started).toBe('@D:2026-03-04T06:00:00');
  });

  it('keeps suppressed members and suppressed searches out', async () => {
    const oslo = await ok(s, 'POST', '/1/searches', { body: { name: 'Oslo', criteria: ['member_field:city', 'eq', 'Oslo'] } });
    const id = await create({ recipient_groups: [gold, silver], suppressed_member_ids: [ids.cid], suppressed_searches: [oslo] });
    runJobs();
    expect(s.db.prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ?').pluck().all(id)).toEqual([ids.bob]);
    expect((await ok(s, 'GET', `/1/mailings/${id}/suppressed_members`)).map((m: any) => m.email)).toEqual(['cid@example.com']);
    expect((await ok(s, 'GET', `/1/mailings/${id}/suppressed_searches`)).map((x: any) => x.search_id)).toEqual([oslo]);
  });

  it('sends to searches and segments and to subscribed members of subscriptions', async () => {
    const oslo = await ok(s, 'POST', '/1/searches', { body: { name: 'Oslo', criteria: ['member_field:city', 'eq', 'Oslo'] } });
    const sub = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
    await ok(s, 'POST', `/1/subscriptions/${sub}/members/bulk`, { body: { member_ids: [ids.cid, ids.out] } });
    const id = await create({ recipient_groups: [], recipient_searches: [oslo], recipient_subscriptions: [sub] });
    runJobs();
    expect(s.db.prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ? ORDER BY member_id').pluck().all(id)).toEqual([
      ids.ann,
      ids.cid,
    ]);
    expect((await ok(s, 'GET', `/1/mailings/${id}/searches`)).map((x: any) => x.name)).toEqual(['Oslo']);
    expect((await ok(s, 'GET', `/1/mailings/${id}/subscriptions`)).map((x: any) => x.subscription_name)).toEqual(['News']);
    expect(await ok(s, 'GET', `/1/mailings/${id}/groups`)).toEqual([]);
  });

  it('personalizes each message and appears in member history', async () => {
    const id = await create();
    runJobs();
    const msg = await ok(s, 'GET', `/1/mailings/${id}/messages/${ids.ann}`);
    expect(msg).toEqual({
      plaintext: `Hi Ann, see https://shop.example.com/sale\nOpt out: https://view.amsg.example.com/optout/1/${id}/${ids.ann}`,
      subject: 'Hello Ann',
      html_body: `<p>Hi Ann</p><a href="https://shop.example.com/sale">The sale</a> <a href="https://view.amsg.example.com/optout/1/${id}/${ids.ann}">opt out</a>`,
      webview_url: `https://view.amsg.example.com/1/${id}/${ids.ann}`,
    });
    // Bob has no first name: the default.
    expect(await ok(s, 'GET', `/1/mailings/${id}/messages/${ids.bob}`, { query: { type: 'subject' } })).toEqual({
      subject: 'Hello friend',
    });
    expect(Object.keys(await ok(s, 'GET', `/1/mailings/${id}/messages/${ids.bob}`, { query: { type: 'html' } }))).toEqual(['html_body']);
    expect(await ok(s, 'GET', `/1/members/${ids.ann}/mailings`)).toEqual([
      {
        delivery_type: 'h',
        clicked: null,
        opened: null,
        delivery_ts: atD(T0),
        sent: atD(T0),
        forwarded: null,
        shared: null,
        mailing_id: id,
        name: 'Spring sale',
        subject: 'Hello Ann',
        account_id: 1,
      },
    ]);
    // The message keeps the values it was built with.
    await ok(s, 'PUT', `/1/members/${ids.ann}`, { body: { fields: { first_name: 'Annie' } } });
    expect((await ok(s, 'GET', `/1/mailings/${id}/messages/${ids.ann}`, { query: { type: 'plaintext' } })).plaintext).toMatch(/^Hi Ann,/);
  });

  it('answers 404 when there is no message and 500 for a type that is not allowed', async () => {
    const id = await create();
    expect((await s.call('GET', `/1/mailings/${id}/messages/${ids.ann}`)).status).toBe(404);
    runJobs();
    expect((await s.call('GET', `/1/mailings/${id}/messages/${ids.out}`)).status).toBe(404);
    const res = await s.call('GET', `/1/mailings/${id}/messages/${ids.ann}`, { query: { type: 'pdf' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'type: "pdf" is not an allowed type (all, html, plaintext, subject, webview_url)', field: 'type' });
  });

  it('a pause stops a send between batches and ready resumes it', async () => {
    const id = await create();
    const { advanceMailings } = await import('../../src/service/mailings/sending.js');
    advanceMailings(s.db, s.clock, 0); // p → i
    expect(await status(id)).toBe('i');
    expect((await s.call('PUT', `/1/mailings/${id}`, { body: { status: 'paused' } })).body.mailing_status).toBe('a');
    runJobs();
    expect(await status(id)).toBe('a');
    expect(countRows(s, 'mailing_messages')).toBe(0);
    await ok(s, 'PUT', `/1/mailings/${id}`, { body: { status: 'ready' } });
    runJobs();
    expect(await status(id)).toBe('c');
    expect(countRows(s, 'mailing_messages')).toBe(2);
  });

  it('lists the members sent to individually', async () => {
    const id = await create({ recipient_groups: [], recipient_emails: ['bob@example.com'] });
    expect((await ok(s, 'GET', `/1/mailings/${id}/members`)).map((m: any) => [m.member_id, m.status])).toEqual([[ids.bob, 'active']]);
    expect((await s.call('GET', '/1/mailings/999/members')).status).toBe(404);
  });
});

describe('erasure and portability', () => {
  it("puts the history in the member's export, and purging erases the member's messages", async () => {
    const id = await create();
    runJobs();
    const exportId = (await ok(s, 'POST', `/1/exports/members/${ids.ann}`)).export_id;
    const res = await s.router.handle({ method: 'GET', path: `/1/exports/${exportId}/download`, query: {}, actor: s.actor });
    const files = unzipSync(new Uint8Array(res.raw!.data as Buffer));
    expect(JSON.parse(strFromU8(files['mailings.json']))).toEqual(await ok(s, 'GET', `/1/members/${ids.ann}/mailings`));
    expect(JSON.parse(strFromU8(files['mailings.json']))[0].subject).toBe('Hello Ann');
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ids.ann] } });
    expect(countRows(s, 'mailing_messages', 'member_id = ?', ids.ann)).toBe(0);
    expect(countRows(s, 'mailing_messages', 'mailing_id = ?', id)).toBe(1);
    expect((await s.call('GET', `/1/mailings/${id}/messages/${ids.ann}`)).status).toBe(404);
  });
});

describe('validate', () => {
  it('answers true for valid tags and 400 listing each invalid tag with its place', async () => {
    expect(await ok(s, 'POST', '/1/mailings/validate', { body: { subject: 'Hi [% member:city %]', html_body: HTML } })).toBe(true);
    const res = await s.call('POST', '/1/mailings/validate', {
      body: { subject: 'Hi [% member:nope %]', plaintext: 'line one\n  [% if member:city %]x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.invalid_tags.map((p: any) => [p.part, p.line, p.column])).toEqual([
      ['subject', 1, 4],
      ['plaintext', 2, 3],
    ]);
    expect(res.body.error).toMatch(/^invalid personalization tags: 2 problems, the first in subject at line 1, column 4: /);
  });
});

describe('resend, forward and recipients', () => {
  it('resends the content to a new audience as a new pending mailing', async () => {
    const id = await create();
    const res = await ok(s, 'POST', `/1/mailings/${id}`, { body: { recipient_groups: [silver], sender: 'other@example.com' } });
    const copy = await get(res.mailing_id);
    expect([copy.parent_mailing_id, copy.sender, copy.html_body, copy.subject, copy.mailing_status]).toEqual([
      id,
      'other@example.com',
      HTML,
      base().subject,
      'p',
    ]);
    expect(copy.recipient_groups).toEqual([{ member_group_id: silver, name: 'Silver' }]);
    expect((await s.call('POST', '/1/mailings/999', { body: { recipient_groups: [silver] } })).status).toBe(404);
  });

  it('forwards to new addresses, which join with status f', async () => {
    const id = await create();
    runJobs();
    const res = await ok(s, 'POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['pal@example.com', 'bob@example.com'] } });
    const pal = await ok(s, 'GET', '/1/members/email/pal@example.com');
    expect([pal.member_status_id, pal.status]).toEqual(['f', 'forwarded']);
    expect((await ok(s, 'GET', `/1/members/${ids.bob}`)).member_status_id).toBe('a');
    const fwd = await get(res.mailing_id);
    expect(fwd.parent_mailing_id).toBe(id);
    expect(fwd.recipient_members).toEqual([
      { email: 'pal@example.com', member_id: pal.member_id },
      { email: 'bob@example.com', member_id: ids.bob },
    ]);
    expect((await ok(s, 'GET', `/1/members/${ids.ann}/mailings`))[0].forwarded).toBe(atD(T0));
    runJobs();
    expect((await get(res.mailing_id)).recipient_count).toBe(2);
  });

  it('refuses forwards to invalid addresses and from members without the message, changing nothing', async () => {
    const id = await create();
    runJobs();
    expectFieldError(
      await s.call('POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['pal@example.com', 'nope'] } }),
      'recipient_emails[1]',
    );
    expect((await s.call('POST', `/1/forwards/${id}/${ids.out}`, { body: { recipient_emails: ['pal@example.com'] } })).status).toBe(404);
    expect((await s.call('POST', `/1/forwards/999/${ids.ann}`, { body: { recipient_emails: ['pal@example.com'] } })).status).toBe(404);
    expect(countRows(s, 'members', 'email = ?', 'pal@example.com')).toBe(0);
    expect(countRows(s, 'mailings')).toBe(1);
  });

  it('names recipient lists and refuses lists that are not integers', async () => {
    const seg = await ok(s, 'POST', '/1/searches', { body: { name: 'Oslo', criteria: ['member_field:city', 'eq', 'Oslo'] } });
    const sub = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
    expect(
      await ok(s, 'POST', '/1/mailings/recipients', {
        body: { recipient_groups: [gold, silver], recipient_segments: [seg], recipient_subscriptions: [sub], suppressed_segments: [seg] },
      }),
    ).toEqual({
      recipient_groups: [
        { member_group_id: gold, name: 'Gold' },
        { member_group_id: silver, name: 'Silver' },
      ],
      recipient_segments: [{ segment_id: seg, name: 'Oslo' }],
      recipient_subscriptions: [{ subscription_id: sub, name: 'News' }],
      suppressed_segments: [{ segment_id: seg, name: 'Oslo' }],
    });
    expectFieldError(await s.call('POST', '/1/mailings/recipients', { body: { recipient_groups: [gold, '2'] } }), 'recipient_groups[1]');
    expectFieldError(await s.call('POST', '/1/mailings/recipients', { body: { recipient_segments: 5 } }), 'recipient_segments');
    expectFieldError(await s.call('POST', '/1/mailings/recipients', { body: { suppressed_segments: [1.5] } }), 'suppressed_segments[0]');
  });
});

describe('split tests', () => {
  async function splitTest() {
    for (let i = 0; i < 16; i++) await addMember(s, `m${i}@example.com`, { group_ids: [gold] });
    const id = await create({
      mailing_type: 's',
      split_test: { variants: [{ subject: 'Subject A' }, { subject: 'Subject B' }], test_percent: 50, test_duration_seconds: 3600 },
    });
    const variants = (await get(id)).split_test.variants.map((v: any) => v.mailing_id);
    return { id, variants };
  }

  it('sends the test share with the variants, waits (w), and sends the winner to the rest', async () => {
    const { id, variants } = await splitTest();
    runJobs();
    expect((await get(id)).failure_message).toBe(null);
    expect(await status(id)).toBe('w');
    const split = (await get(id)).split_test;
    expect(split).toMatchObject({ test_percent: 50, test_duration: '@I:3600', test_sent_at: atD(T0), winner_mailing_id: null });
    // The subject each recipient got, as the service renders it.
    const bySubject = async () => {
      const members = s.db.prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ?').pluck().all(id) as number[];
      const counts: Record<string, number> = {};
      for (const m of members) {
        const { subject } = await ok(s, 'GET', `/1/mailings/${id}/messages/${m}`, { query: { type: 'subject' } });
        counts[subject] = (counts[subject] ?? 0) + 1;
      }
      return Object.entries(counts)
        .sort()
        .map(([subject, n]) => ({ subject, n }));
    };
    // 18 recipients (Ann, Bob and 16 more; the opted-out and error members are skipped): half is the test share.
    expect(await bySubject()).toEqual([
      { subject: 'Subject A', n: 5 },
      { subject: 'Subject B', n: 4 },
    ]);
    expect(await ok(s, 'POST', `/1/mailings/${id}/winner/${variants[1]}`, { body: {} })).toBe(true);
    runJobs();
    expect(await status(id)).toBe('c');
    expect(await bySubject()).toEqual([
      { subject: 'Subject A', n: 5 },
      { subject: 'Subject B', n: 13 },
    ]);
    expect((await get(id)).recipient_count).toBe(18);
    // Each variant counts the messages built with its content.
    expect([(await get(variants[0])).recipient_count, (await get(variants[1])).recipient_count]).toEqual([5, 13]);
    expect([(await get(variants[0])).mailing_status, (await get(variants[1])).mailing_status]).toEqual(['c', 'c']);
    expect((await get(id)).split_test.results).toEqual({
      [variants[0]]: { sent: 5, opened: 0, clicked: 0 },
      [variants[1]]: { sent: 4, opened: 0, clicked: 0 },
    });
  });

  it('picks the variant with the most opens when the test time is up', async () => {
    const { id, variants } = await splitTest();
    runJobs();
    const openers = s.db
      .prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ? AND content_mailing_id = ?')
      .pluck()
      .all(id, variants[1]) as number[];
    await ok(s, 'POST', '/1/sim/open', { body: { mailing_id: id, member_id: openers[0] } });
    s.clock.advance(3_599_000);
    runJobs();
    expect(await status(id)).toBe('w');
    s.clock.advance(1_000);
    runJobs();
    expect(await status(id)).toBe('c');
    expect((await get(id)).split_test.winner_mailing_id).toBe(variants[1]);
  });

  it('refuses winners that are not variants (404), before the test share is sent (403), and twice (403)', async () => {
    const { id, variants } = await splitTest();
    expect((await s.call('POST', `/1/mailings/${id}/winner/${variants[0]}`, { body: {} })).status).toBe(403);
    runJobs();
    const notVariant = await s.call('POST', `/1/mailings/${id}/winner/${id}`, { body: {} });
    expect(notVariant.status).toBe(404);
    expect(notVariant.body.error).toMatch(/^winner mailing \d+ not found among the variants/);
    expect((await s.call('POST', `/1/mailings/999/winner/${variants[0]}`, { body: {} })).status).toBe(404);
    await ok(s, 'POST', `/1/mailings/${id}/winner/${variants[0]}`, { body: {} });
    expect((await s.call('POST', `/1/mailings/${id}/winner/${variants[1]}`, { body: {} })).status).toBe(403);
    const plain = await create({ name: 'plain' });
    expect((await s.call('POST', `/1/mailings/${plain}/winner/${variants[0]}`, { body: {} })).status).toBe(403);
  });

  it('a paused test resumes to w, not p', async () => {
    const { id } = await splitTest();
    runJobs();
    expect((await s.call('PUT', `/1/mailings/${id}`, { body: { status: 'paused' } })).body.mailing_status).toBe('a');
    expect((await s.call('PUT', `/1/mailings/${id}`, { body: { status: 'ready' } })).body.mailing_status).toBe('w');
  });
});

describe('simulated engagement', () => {
  it('records opens, clicks, shares and bounces on the history, and a hard bounce sets status e', async () => {
    const id = await create();
    runJobs();
    s.clock.advance(60_000);
    expect(await ok(s, 'POST', '/1/sim/click', { body: { mailing_id: id, email: 'ann@example.com', link_id: 1 } })).toBe(true);
    await ok(s, 'POST', '/1/sim/share', { body: { mailing_id: id, member_id: ids.ann } });
    await ok(s, 'POST', '/1/sim/bounce', { body: { mailing_id: id, member_id: ids.bob, hard: true } });
    const [ann] = await ok(s, 'GET', `/1/members/${ids.ann}/mailings`);
    expect([ann.opened, ann.clicked, ann.shared]).toEqual(Array(3).fill('@D:2026-03-04T05:07:07'));
    const bob = await ok(s, 'GET', `/1/members/${ids.bob}`);
    expect([bob.member_status_id, bob.bounce_count]).toEqual(['e', 1]);
    expect((await s.call('POST', '/1/sim/click', { body: { mailing_id: id, member_id: ids.ann, link_id: 99 } })).status).toBe(404);
    expect((await s.call('POST', '/1/sim/open', { body: { mailing_id: id, member_id: ids.out } })).status).toBe(404);
    expectFieldError(await s.call('POST', '/1/sim/open', { body: { mailing_id: id } }), 'member_id');
    expectFieldError(await s.call('POST', '/1/sim/wave', { body: { mailing_id: id, member_id: ids.ann } }), 'kind');
  });

  it('an opt-out through a mailing names the mailing in the opt-out history', async () => {
    const id = await create();
    runJobs();
    await ok(s, 'POST', '/1/sim/optout', { body: { mailing_id: id, member_id: ids.bob } });
    expect(await ok(s, 'GET', `/1/members/${ids.bob}/optout`)).toEqual([{ timestamp: atD(T0), mailing_id: id }]);
  });
});

describe('triggers', () => {
  it('creates, reads, renames, fires and deletes a trigger with the spec shape', async () => {
    const parent = await create({ status: 'u', recipient_groups: [] });
    const birthday = await createField(s, { shortcut_name: 'birthday', field_type: 'date' });
    const id = await ok(s, 'POST', '/1/triggers', {
      body: { name: 'Birthday', parent_mailing_id: parent, event_type: 'r', field_id: birthday, push_offset: 93_784 },
    });
    expect(typeof id).toBe('number');
    const t = await ok(s, 'GET', `/1/triggers/${id}`);
    expect({ ...t, parent_mailing: undefined }).toEqual({
      trigger_id: id,
      account_id: 1,
      name: 'Birthday',
      event_type: 'r',
      field_id: birthday,
      parent_mailing_id: parent,
      parent_mailing: undefined,
      start_ts: atD(T0),
      push_offset: '@I:93784',
      push_offset_units: '1:2:3:4',
      signups: null,
      groups: null,
      links: null,
      surveys: null,
      signup_integrations: null,
      deleted_at: null,
      is_disabled: false,
    });
    expect(t.parent_mailing).toMatchObject({ mailing_id: parent, html_body: HTML, plaintext: TEXT });
    expect(await ok(s, 'PUT', `/1/triggers/${id}`, { body: { name: 'Happy birthday' } })).toBe(id);
    expect((await ok(s, 'GET', '/1/triggers')).map((x: any) => x.name)).toEqual(['Happy birthday']);

    const fired = await ok(s, 'POST', `/1/triggers/${id}/members/${ids.ann}`);
    runJobs();
    expect(await status(fired.mailing_id)).toBe('p');
    s.clock.advance(93_784_000);
    runJobs();
    const sent = await ok(s, 'GET', `/1/triggers/${id}/mailings`);
    expect(sent.map((m: any) => [m.mailing_id, m.mailing_type, m.mailing_status, m.recipient_count, m.parent_mailing_id])).toEqual([
      [fired.mailing_id, 'r', 'c', 1, parent],
    ]);
    expect((await ok(s, 'GET', `/1/mailings/${fired.mailing_id}/members`)).map((m: any) => m.member_id)).toEqual([ids.ann]);

    expect(await ok(s, 'DELETE', `/1/triggers/${id}`)).toBe(true);
    for (const [method, path] of [
      ['GET', `/1/triggers/${id}`],
      ['PUT', `/1/triggers/${id}`],
      ['DELETE', `/1/triggers/${id}`],
      ['GET', `/1/triggers/${id}/mailings`],
    ])
      expect((await s.call(method, path, method === 'PUT' ? { body: { name: 'x' } } : undefined)).status).toBe(404);
  });

  it('refuses a date trigger without a date field', async () => {
    const parent = await create({ status: 'u' });
    expectFieldError(await s.call('POST', '/1/triggers', { body: { name: 'T', parent_mailing_id: parent, event_type: 'r' } }), 'field_id');
    expect((await s.call('POST', '/1/triggers', { body: { name: 'T', parent_mailing_id: 999, event_type: 's' } })).status).toBe(404);
  });
});

describe('the links of a mailing (extractLinks)', () => {
  it('every anchor with an href is a link, quoted or not, closed or not; only the system links are not the mailing’s', () => {
    const html =
      '<a href="https://a.example.com/?m=[% mailing_id %]">A</a> <A HREF=https://b.example.com/>B</A>' +
      " <a class='x' href='https://c.example.com/[% member:first_name | default:\"x\" %]'>C <b>bold</b></a>" +
      ' <a href="https://d.example.com/">D, never closed <p><a href="[% webview_url %]">web</a> <a href="[%optout_url%]">out</a>' +
      ' <a href="https://e.example.com/">E to the end';
    expect(extractLinks({ html_body: html, plaintext: 'See https://f.example.com/?n=[% member:first_name %]. End' })).toEqual([
      { plaintext: false, link_name: 'A', link_target: 'https://a.example.com/?m=[% mailing_id %]' },
      { plaintext: false, link_name: 'B', link_target: 'https://b.example.com/' },
      { plaintext: false, link_name: 'C bold', link_target: 'https://c.example.com/[% member:first_name | default:"x" %]' },
      { plaintext: false, link_name: 'D, never closed', link_target: 'https://d.example.com/' },
      { plaintext: false, link_name: 'E to the end', link_target: 'https://e.example.com/' },
      {
        plaintext: true,
        link_name: 'https://f.example.com/?n=[% member:first_name %].',
        link_target: 'https://f.example.com/?n=[% member:first_name %].',
      },
    ]);
  });
});
