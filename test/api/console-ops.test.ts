/**
 * The extension operations the console's pages read (docs/console-contract.md §5): a
 * member's timeline and subscriptions, a mailing's preview with headers, its HTML check,
 * opens and clicks over time, the mailing list's response figures, the webhook log's
 * failures, payloads and answers, and an SMS campaign's preview. Each is an operation of
 * the route table, so the CLI and remote mode have them too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { Deliverer } from '../../src/service/webhooks/deliver.js';
import { ROUTES } from '../../src/api/routes/index.js';
import { openapiDocument } from '../../src/api/openapi.js';
import { addMember, atD, createField, createGroups, ok } from './util.js';
import { startReceiver } from './receiver.js';

let s: TestService;
let gold: number;
let ann: number;
let bob: number;

const HTML =
  '<html><body><p>Hi [% member:first_name | default:"friend" %]</p><video src="https://x.example/v.mp4"></video>' +
  '<a href="https://shop.example.com/sale">Sale</a> <a href="[% optout_url %]">opt out</a></body></html>';
const TEXT = 'Hi [% member:first_name %], https://shop.example.com/sale\nOpt out: [% optout_url %]';

beforeEach(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', display_name: 'First Name', field_type: 'text' });
  [gold] = await createGroups(s, 'Gold');
  ann = await addMember(s, 'ann@example.com', { fields: { first_name: 'Ann' }, group_ids: [gold] });
  bob = await addMember(s, 'bob@example.com', { fields: { first_name: 'Bob' }, group_ids: [gold] });
});
afterEach(() => s.close());

const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};

async function mailing(over: Record<string, unknown> = {}): Promise<number> {
  return (
    await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Spring',
        subject: 'Hi [% member:first_name %]',
        sender: 'shop@example.com',
        html_body: HTML,
        plaintext: TEXT,
        ...over,
      },
    })
  ).mailing_id;
}

describe('every new operation is an extension in the route table and openapi.json', () => {
  const NEW = [
    'members.search',
    'members.timeline',
    'members.subscriptions',
    'mailings.preview',
    'mailings.htmlCheck',
    'response.timeline',
    'sms.campaigns.preview',
  ];
  it.each(NEW)('%s', (op) => {
    const route = ROUTES.find((r) => r.op === op)!;
    expect(route.extension).toBe(true);
    expect(route.method).toBe('GET');
    const doc = openapiDocument(ROUTES, 'test') as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.paths[route.path].get['x-amsg-extension']).toBe(true);
  });
});

describe("a member's timeline", () => {
  it('lists joined, mailings, opens, clicks, bounces, opt-outs, events, touchpoints and SMS, newest first, windowed', async () => {
    const at = (minutes: number) => s.clock.set(new Date(Date.parse(T0) + minutes * 60_000));
    at(1);
    const m = await mailing({ recipient_groups: [gold] });
    runJobs();
    const link = (await ok(s, 'GET', `/1/mailings/${m}`)).links[0].link_id;
    at(2);
    await ok(s, 'POST', '/1/sim/open', { body: { mailing_id: m, member_id: ann } });
    at(3);
    await ok(s, 'POST', '/1/sim/click', { body: { mailing_id: m, member_id: ann, link_id: link } });
    at(4);
    const type = (await ok(s, 'POST', '/1/events', { body: { event_type: 'purchase', display_name: 'Purchase' } })).event_type_id;
    const [event] = await ok(s, 'POST', '/1/events/members', {
      body: { events: [{ member_id: ann, event_type_id: type, event_timestamp: '2026-03-04T05:10:07', attributes: { sku: '<b>x</b>' } }] },
    });
    at(5);
    await ok(s, 'POST', '/1/sim/optout', { body: { mailing_id: m, member_id: ann } });
    const timeline = await ok(s, 'GET', `/1/members/${ann}/timeline`);
    expect(timeline.map((e: { kind: string }) => e.kind)).toEqual(['optout', 'event', 'clicked', 'opened', 'mailing', 'joined']);
    expect(timeline[1]).toMatchObject({
      kind: 'event',
      at: '@D:2026-03-04T05:10:07',
      id: `event:${event.event_id}`,
      event_type: 'purchase',
      display_name: 'Purchase',
      attributes: { sku: '<b>x</b>' },
    });
    expect(timeline[0]).toEqual({
      at: atD('2026-03-04T05:11:07'),
      kind: 'optout',
      id: expect.stringMatching(/^optout:\d+$/),
      mailing_id: m,
    });
    expect(timeline[2]).toEqual({
      at: atD('2026-03-04T05:09:07'),
      kind: 'clicked',
      id: expect.stringMatching(/^clicked:\d+$/),
      mailing_id: m,
      name: 'Spring',
      link_id: link,
      url: 'https://shop.example.com/sale',
    });
    expect(timeline[3]).toEqual({ at: atD('2026-03-04T05:08:07'), kind: 'opened', id: `opened:${m}`, mailing_id: m, name: 'Spring' });
    expect(timeline[4]).toEqual({
      at: atD('2026-03-04T05:07:07'),
      kind: 'mailing',
      id: `mailing:${m}`,
      mailing_id: m,
      name: 'Spring',
      delivery_type: 'h',
    });
    expect(timeline[5]).toEqual({ at: atD(T0), kind: 'joined', id: 'joined', member_status_id: 'o' });
    expect(await ok(s, 'GET', `/1/members/${ann}/timeline`, { query: { start: '1', end: '3' } })).toEqual(timeline.slice(1, 3));
    expect((await s.call('GET', '/1/members/999/timeline')).status).toBe(404);
  });
});

describe("a member's subscriptions", () => {
  it('answers each live subscription the member is in or opted out of', async () => {
    const news = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
    const deals = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'Deals' } })).subscription_id;
    await ok(s, 'POST', `/1/subscriptions/${news}/members/bulk`, { body: { member_ids: [ann] } });
    await ok(s, 'POST', `/1/subscriptions/${deals}/members/bulk`, { body: { member_ids: [ann] } });
    await ok(s, 'PUT', `/1/subscriptions/${deals}/members/${ann}/optout`);
    expect(await ok(s, 'GET', `/1/members/${ann}/subscriptions`)).toEqual([
      { subscription_id: news, subscription_name: 'News', status: 'subscribed', subscribed_at: atD(T0), opted_out_at: null },
      { subscription_id: deals, subscription_name: 'Deals', status: 'opted_out', subscribed_at: atD(T0), opted_out_at: atD(T0) },
    ]);
    expect(await ok(s, 'GET', `/1/members/${bob}/subscriptions`)).toEqual([]);
    expect((await s.call('GET', '/1/members/999/subscriptions')).status).toBe(404);
  });
});

describe("a mailing's preview", () => {
  it('before the send: sample values in every tag, or a member’s current fields', async () => {
    const m = await mailing({ status: 'u' });
    const sample = await ok(s, 'GET', `/1/mailings/${m}/preview`);
    expect(sample).toMatchObject({ member_id: null, source: 'sample', subject: 'Hi [First Name]' });
    expect(sample.html_body).toContain('<p>Hi [First Name]</p>');
    expect(sample.plaintext).toBe(`Hi [First Name], https://shop.example.com/sale\nOpt out: https://view.amsg.example.com/optout/1/${m}/0`);
    const forAnn = await ok(s, 'GET', `/1/mailings/${m}/preview`, { query: { member_id: String(ann) } });
    expect(forAnn).toMatchObject({ member_id: ann, source: 'member', subject: 'Hi Ann' });
    // The headers the SMTP deliverer sends (src/service/mail/message.ts), in its order; no Date before a send.
    expect(forAnn.headers).toEqual([
      [
        'List-Unsubscribe',
        `<https://view.amsg.example.com/optout/1/${m}/${ann}>, <mailto:unsubscribe@view.amsg.example.com?subject=unsubscribe-1-${m}-${ann}>`,
      ],
      ['List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'],
      ['From', 'shop@example.com'],
      ['To', 'ann@example.com'],
      ['Subject', 'Hi Ann'],
      ['Message-ID', `<preview.${m}.${ann}@mail.amsg.example.com>`],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'multipart/alternative'],
    ]);
  });

  it('after the send: the message each member got, as GET …/messages answers it, with the send’s date', async () => {
    const m = await mailing({ recipient_groups: [gold], reply_to: 'help@example.com' });
    runJobs();
    // A change after the send does not change what was sent.
    await ok(s, 'PUT', `/1/members/${ann}`, { body: { fields: { first_name: 'Annie' } } });
    for (const [who, name] of [
      [ann, 'Ann'],
      [bob, 'Bob'],
    ] as const) {
      const p = await ok(s, 'GET', `/1/mailings/${m}/preview`, { query: { member_id: String(who) } });
      const sent = await ok(s, 'GET', `/1/mailings/${m}/messages/${who}`);
      expect(p).toMatchObject({ source: 'sent', subject: `Hi ${name}`, html_body: sent.html_body, plaintext: sent.plaintext });
      expect(p.headers.slice(2, 8)).toEqual([
        ['From', 'shop@example.com'],
        ['To', `${name.toLowerCase()}@example.com`],
        ['Reply-To', 'help@example.com'],
        ['Subject', `Hi ${name}`],
        ['Message-ID', `<preview.${m}.${who}@mail.amsg.example.com>`],
        ['Date', 'Wed, 04 Mar 2026 05:06:07 +0000'],
      ]);
    }
  });

  it('a member who prefers plain text gets no HTML part', async () => {
    const m = await mailing({ status: 'u' });
    await ok(s, 'PUT', `/1/members/${bob}`, { body: {} });
    s.db.prepare('UPDATE members SET plaintext_preferred = 1 WHERE member_id = ?').run(bob);
    const p = await ok(s, 'GET', `/1/mailings/${m}/preview`, { query: { member_id: String(bob) } });
    expect(p.html_body).toBe('');
    expect(p.headers.at(-1)).toEqual(['Content-Type', 'text/plain; charset=utf-8']);
  });

  it('another account’s mailing or an unknown member is a 404', async () => {
    const m = await mailing({ status: 'u' });
    expect((await s.call('GET', `/1/mailings/${m}/preview`, { query: { member_id: '999' } })).status).toBe(404);
    expect((await s.call('GET', '/1/mailings/999/preview')).status).toBe(404);
  });
});

describe('the HTML check', () => {
  it('names the unsupported features and the clients they fail in, with a score', async () => {
    const m = await mailing({ status: 'u' });
    const check = await ok(s, 'GET', `/1/mailings/${m}/html_check`);
    expect(check.clients_checked).toBe(32);
    expect(check.score).toBeGreaterThanOrEqual(0);
    expect(check.score).toBeLessThan(100);
    const video = check.features.find((f: { title: string }) => f.title === '<video> element');
    expect(video).toMatchObject({ feature: 'html-video', url: 'https://www.caniemail.com/features/html-video/', support: 'n' });
    expect(video.unsupported_in.map((c: { client: string }) => c.client)).toContain('gmail.desktop-webmail');
    expect(video.unsupported_in.find((c: { client: string }) => c.client === 'gmail.desktop-webmail').name).toBe('Gmail Desktop Webmail');
    const gmail = check.clients.find((c: { client: string }) => c.client === 'gmail.desktop-webmail');
    expect(gmail).toMatchObject({ name: 'Gmail Desktop Webmail', status: 'fail' });
    expect(gmail.unsupported).toBeGreaterThan(0);
  });

  it('takes a list of clients, and scores 100 for HTML that fails nowhere', async () => {
    const m = await mailing({ status: 'u', html_body: '<p>Plain words and <a href="[% optout_url %]">a link</a></p>' });
    const check = await ok(s, 'GET', `/1/mailings/${m}/html_check`, { query: { clients: 'gmail.*,*.ios' } });
    expect(check.clients.map((c: { client: string }) => c.client)).toEqual([
      'apple-mail.ios',
      'gmail.desktop-webmail',
      'gmail.ios',
      'gmail.android',
      'gmail.mobile-webmail',
      'orange.ios',
      'outlook.ios',
      'yahoo.ios',
      'aol.ios',
      'sfr.ios',
      'protonmail.ios',
    ]);
    expect(check).toMatchObject({ score: 100, clients_checked: 11, features: [] });
    const bad = await s.call('GET', `/1/mailings/${m}/html_check`, { query: { clients: 'nokia.*' } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('clients');
  });
});

describe('opens and clicks over time', () => {
  it('counts unique opens and every click in the bucket they happened in, from the kept counts', async () => {
    const m = await mailing({ recipient_groups: [gold] });
    runJobs();
    const link = (await ok(s, 'GET', `/1/mailings/${m}`)).links[0].link_id;
    const at = (minutes: number) => s.clock.set(new Date(Date.parse(T0) + minutes * 60_000));
    at(2);
    await ok(s, 'POST', '/1/sim/open', { body: { mailing_id: m, member_id: ann } });
    await ok(s, 'POST', '/1/sim/open', { body: { mailing_id: m, member_id: ann } });
    at(3);
    await ok(s, 'POST', '/1/sim/click', { body: { mailing_id: m, member_id: bob, link_id: link } });
    await ok(s, 'POST', '/1/sim/click', { body: { mailing_id: m, member_id: bob, link_id: link } });
    at(70);
    const minutes = await ok(s, 'GET', `/1/response/${m}/timeline`);
    expect(minutes).toMatchObject({ started_at: atD(T0), bucket: 'minute', bucket_seconds: 60 });
    expect(minutes.buckets).toHaveLength(71);
    expect(minutes.buckets[0]).toEqual({ at: '@D:2026-03-04T05:06:00', opens: 0, clicks: 0 });
    expect(minutes.buckets[2]).toEqual({ at: '@D:2026-03-04T05:08:00', opens: 1, clicks: 0 });
    // A click is an open too (sim click stamps the open of a message not yet opened).
    expect(minutes.buckets[3]).toEqual({ at: '@D:2026-03-04T05:09:00', opens: 1, clicks: 2 });
    const hours = await ok(s, 'GET', `/1/response/${m}/timeline`, { query: { bucket: 'hour' } });
    expect(hours.buckets).toEqual([
      { at: '@D:2026-03-04T05:00:00', opens: 2, clicks: 2 },
      { at: '@D:2026-03-04T06:00:00', opens: 0, clicks: 0 },
    ]);
    const r = await ok(s, 'GET', `/1/response/${m}`);
    expect([r.opened, r.clicked]).toEqual([2, 2]);
    at(60 * 24 * 3);
    expect((await ok(s, 'GET', `/1/response/${m}/timeline`)).bucket).toBe('hour');
    at(60 * 24 * 60);
    const days = await ok(s, 'GET', `/1/response/${m}/timeline`);
    expect(days.bucket).toBe('day');
    expect(days.buckets[0]).toEqual({ at: '@D:2026-03-04T00:00:00', opens: 2, clicks: 2 });
  });

  it('a purge takes its opens and clicks away', async () => {
    const m = await mailing({ recipient_groups: [gold] });
    runJobs();
    await ok(s, 'POST', '/1/sim/click', { body: { mailing_id: m, member_id: bob } });
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [bob] } });
    expect((await ok(s, 'GET', `/1/response/${m}/timeline`)).buckets[0]).toEqual({ at: '@D:2026-03-04T05:06:00', opens: 0, clicks: 0 });
  });

  it('a mailing not sent has no buckets', async () => {
    const m = await mailing({ status: 'u' });
    expect(await ok(s, 'GET', `/1/response/${m}/timeline`)).toEqual({
      started_at: null,
      bucket: 'minute',
      bucket_seconds: 60,
      buckets: [],
    });
  });
});

describe('the mailing list with response figures', () => {
  it('adds each mailing’s kept figures on request, null for one never sent', async () => {
    const sent = await mailing({ recipient_groups: [gold] });
    runJobs();
    await ok(s, 'POST', '/1/sim/open', { body: { mailing_id: sent, member_id: ann } });
    const draft = await mailing({ status: 'u', name: 'Draft' });
    const list = await ok(s, 'GET', '/1/mailings', { query: { with_response: 'true' } });
    const byId = Object.fromEntries(list.map((m: { mailing_id: number }) => [m.mailing_id, m]));
    expect(byId[sent].response).toEqual({ sent: 2, delivered: 2, opened: 1, clicked_unique: 0, bounced: 0, opted_out: 0 });
    expect(byId[draft].response).toBeNull();
    expect((await ok(s, 'GET', '/1/mailings'))[0]).not.toHaveProperty('response');
  });
});

describe('the webhook log', () => {
  it('filters to failures and shows one delivery’s payload and the start of each answer', async () => {
    const receiver = await startReceiver((req, res) => {
      req.resume();
      const broken = req.url === '/broken';
      res.writeHead(broken ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(broken ? `broken: ${'x'.repeat(3000)}` : 'ok');
    });
    try {
      const good = await ok(s, 'POST', '/1/webhooks', { body: { url: `${receiver.base}/fine`, event: 'member_add' } });
      await ok(s, 'POST', '/1/webhooks', { body: { url: `${receiver.base}/broken`, event: 'member_add' } });
      await addMember(s, 'cy@example.com');
      await new Deliverer(s.db, s.clock).runFor(2_000);
      const all = await ok(s, 'GET', '/1/webhooks/deliveries');
      expect(all.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([
        ['p', 1],
        ['o', 1],
      ]);
      const failed = await ok(s, 'GET', '/1/webhooks/deliveries', { query: { failing: 'true' } });
      expect(failed.map((d: { delivery_id: number }) => d.delivery_id)).toEqual([all[0].delivery_id]);
      expect(await ok(s, 'GET', '/1/webhooks/deliveries', { query: { failing: 'true', count: 'true' } })).toBe(1);
      expect(await ok(s, 'GET', '/1/webhooks/deliveries', { query: { failing: 'true', webhook_id: String(good) } })).toEqual([]);
      const detail = await ok(s, 'GET', `/1/webhooks/deliveries/${all[0].delivery_id}`);
      expect(detail.payload).toMatchObject({ event: 'member_add', account_id: 1, data: { members: [{ email: 'cy@example.com' }] } });
      expect(detail.attempt_log).toHaveLength(1);
      expect(detail.attempt_log[0].status_code).toBe(500);
      expect(detail.attempt_log[0].response_body).toBe(`broken: ${'x'.repeat(2048 - 8)}`);
      const fine = await ok(s, 'GET', `/1/webhooks/deliveries/${all[1].delivery_id}`);
      expect(fine.attempt_log[0].response_body).toBe('ok');
      // The list keeps its shape: no payloads or answers in it.
      expect(all[0]).not.toHaveProperty('payload');
      expect(all[0].attempt_log[0]).not.toHaveProperty('response_body');
    } finally {
      await receiver.close();
    }
  });
});

describe('an SMS campaign’s preview', () => {
  it('answers the message as sent or written, its encoding and segments, for a member or nobody', async () => {
    await ok(s, 'PUT', `/1/members/${ann}`, { body: { sms: { phone_number: '+4791234501', promotional_status: 'a' } } });
    const campaign = await ok(s, 'POST', '/1/sms/campaigns', {
      body: {
        sms_campaign_name: 'Sale',
        message: 'Hej [% member:first_name %] — ﬁne',
        from_phone_number: '+15555550100',
        recipients: { members: [ann] },
      },
    });
    const nobody = await ok(s, 'GET', `/1/sms/campaigns/${campaign}/preview`);
    expect(nobody).toMatchObject({ encoding: 'UCS-2', segments: 1 });
    const forAnn = await ok(s, 'GET', `/1/sms/campaigns/${campaign}/preview`, { query: { member_id: String(ann) } });
    expect(forAnn).toMatchObject({ encoding: 'UCS-2', message: 'Hej Ann — ﬁne', segments: 1, characters: 13 });
    const same = await ok(s, 'POST', '/1/sms/count', { body: { message: 'Hej [% member:first_name %] — ﬁne', member_id: ann } });
    expect(forAnn).toEqual(same);
    expect((await s.call('GET', '/1/sms/campaigns/999/preview')).status).toBe(404);
  });
});

describe('an import’s row errors', () => {
  it('keeps each refused row with its number in the import and why, streamed or bulk', async () => {
    await createField(s, { shortcut_name: 'score', field_type: 'numeric' });
    const imp = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id;
    await ok(s, 'POST', `/1/members/imports/${imp}/rows`, {
      body: { members: [{ email: 'ok@example.com' }, { email: 'not-an-address' }, { email: 'cy@example.com', score: 'abc' }] },
    });
    await ok(s, 'POST', `/1/members/imports/${imp}/rows`, {
      body: { members: [{ email: 'dee@example.com', score: 'x' }, { email: 'eve@example.com' }] },
    });
    await ok(s, 'POST', `/1/members/imports/${imp}/finish`, { body: {} });
    const errors = await ok(s, 'GET', `/1/members/imports/${imp}/errors`);
    expect(errors).toEqual([
      { row: 2, email: 'not-an-address', error: expect.stringMatching(/e-mail|address/) },
      { row: 3, email: 'cy@example.com', error: expect.stringMatching(/score/) },
      { row: 4, email: 'dee@example.com', error: expect.stringMatching(/score/) },
    ]);
    expect((await ok(s, 'GET', `/1/members/imports/${imp}`)).num_errors).toBe(3);
    expect(await ok(s, 'GET', `/1/members/imports/${imp}/errors`, { query: { count: 'true' } })).toBe(3);
    expect(await ok(s, 'GET', `/1/members/imports/${imp}/errors`, { query: { start: '1', end: '2' } })).toEqual([errors[1]]);
    // The bulk POST /members (a job) keeps them too.
    const bulk = (
      await ok(s, 'POST', '/1/members', { body: { members: [{ email: 'fay@example.com', score: 'no' }, { email: 'gus@example.com' }] } })
    ).import_id;
    runJobs();
    expect(await ok(s, 'GET', `/1/members/imports/${bulk}/errors`)).toEqual([
      { row: 1, email: 'fay@example.com', error: expect.stringMatching(/score/) },
    ]);
    expect((await s.call('GET', '/1/members/imports/999/errors')).status).toBe(404);
  });
});
