import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { localActor } from '../../src/service/accounts/accounts.js';
import { ROUTES } from '../../src/api/routes/index.js';
import { openapiDocument } from '../../src/api/openapi.js';
import { migrate } from '../../src/store/db.js';
import { addMember, atD, createField, createGroups, expectFieldError, ok, setStatus } from './util.js';

let s: TestService;
let gold: number;
let ids: Record<string, number>;

const HTML =
  '<p>Hi [% member:first_name %]</p><a href="https://shop.example.com/sale">The sale</a> <a href="https://shop.example.com/new">New</a> <a href="[% optout_url %]">opt out</a>';
const TEXT = 'Hi, see https://shop.example.com/sale\nOpt out: [% optout_url %]';

beforeEach(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  [gold] = await createGroups(s, 'Gold');
  ids = {
    ann: await addMember(s, 'ann@example.com', { fields: { first_name: 'Ann' }, group_ids: [gold] }),
    bob: await addMember(s, 'bob@example.com', { group_ids: [gold] }),
    cid: await addMember(s, 'cid@sub.example.org', { fields: { first_name: 'Cid' }, group_ids: [gold] }),
    dee: await addMember(s, 'dee@example.com', { group_ids: [gold] }),
    out: await addMember(s, 'out@example.com', { group_ids: [gold] }),
  };
  await setStatus(s, [ids.out], 'o');
});
afterEach(() => s.close());

async function create(over: Record<string, unknown> = {}): Promise<number> {
  const body = await ok(s, 'POST', '/1/mailings', {
    body: {
      name: 'Spring',
      subject: 'Hello',
      sender: 'shop@example.com',
      html_body: HTML,
      plaintext: TEXT,
      recipient_groups: [gold],
      ...over,
    },
  });
  return body.mailing_id;
}

const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};
const sim = (kind: string, mailing_id: number, member_id: number, extra: Record<string, unknown> = {}) =>
  ok(s, 'POST', `/1/sim/${kind}`, { body: { mailing_id, member_id, ...extra } });
const response = (id: number) => ok(s, 'GET', `/1/response/${id}`);
const list = (id: number, name: string, query: Record<string, string> = {}) => ok(s, 'GET', `/1/response/${id}/${name}`, { query });
const count = (id: number, name: string, query: Record<string, string> = {}) => list(id, name, { ...query, count: 'true' });
const linkIds = (id: number) =>
  s.db.prepare('SELECT link_id FROM mailing_links WHERE mailing_id = ? ORDER BY link_id').pluck().all(id) as number[];

/**
 * The identities every report keeps: each figure is the number of rows of its list
 * (walked page by page with a small window, and as count=true), and the counters
 * equal a COUNT(*) of the records behind them.
 */
async function expectIdentities(id: number) {
  const r = await response(id);
  const rows = async (name: string, query: Record<string, string> = {}) => {
    const all: unknown[] = [];
    for (let start = 0; ; start += 2) {
      const page = await list(id, name, { ...query, start: String(start), end: String(start + 2) });
      all.push(...page);
      if (page.length < 2) break;
    }
    expect(await count(id, name, query)).toBe(all.length);
    return all.length;
  };
  expect(await rows('sends')).toBe(r.sent);
  expect(await rows('in_progress')).toBe(r.in_progress);
  expect(await rows('deliveries')).toBe(r.sent);
  expect(await rows('deliveries', { result: 'delivered' })).toBe(r.delivered);
  expect(await rows('deliveries', { result: 'bounced' })).toBe(r.bounced);
  expect((await rows('deliveries', { result: 'hard' })) + (await rows('deliveries', { result: 'soft' }))).toBe(r.bounced);
  expect(r.delivered + r.bounced).toBe(r.sent);
  expect(await rows('opens')).toBe(r.opened);
  expect(await rows('clicks')).toBe(r.clicked);
  expect(await rows('optouts')).toBe(r.opted_out);
  expect(await rows('signups')).toBe(r.signed_up);
  expect(await rows('forwards')).toBe(r.forwarded);
  expect(await rows('shares')).toBe(r.shared);
  expect(await rows('customer_shares')).toBe(r.webview_shared);
  expect(await rows('customer_share_clicks')).toBe(r.webview_share_clicked);
  const links = await list(id, 'links');
  expect(links.reduce((n: number, l: any) => n + l.total_clicks, 0)).toBeLessThanOrEqual(r.clicked);
  for (const l of links) expect(await rows('clicks', { link_id: String(l.link_id) })).toBe(l.total_clicks);
  // Against the records themselves (the whole of a mailing; a variant by its content).
  const m = s.db.prepare('SELECT split_test_id FROM mailings WHERE mailing_id = ?').get(id) as { split_test_id: number | null };
  const where = m.split_test_id === null ? 'mailing_id = ?' : 'mailing_id = ? AND content_mailing_id = ?';
  const args = m.split_test_id === null ? [id] : [m.split_test_id, id];
  const recount = (table: string, extra = '1') =>
    s.db
      .prepare(`SELECT COUNT(*) FROM ${table} WHERE ${where} AND ${extra}`)
      .pluck()
      .get(...args) as number;
  expect({
    sent: r.sent,
    delivered: r.delivered,
    bounced: r.bounced,
    opened: r.opened,
    clicked_unique: r.clicked_unique,
    clicked: r.clicked,
    shared: r.shared,
    forwarded: r.forwarded,
    opted_out: r.opted_out,
  }).toEqual({
    sent: recount('mailing_messages'),
    delivered: recount('mailing_messages', 'bounced IS NULL'),
    bounced: recount('mailing_messages', 'bounced IS NOT NULL'),
    opened: recount('mailing_messages', 'opened IS NOT NULL'),
    clicked_unique: recount('mailing_messages', 'clicked IS NOT NULL'),
    clicked: recount('mailing_clicks'),
    shared: recount('mailing_messages', 'shared IS NOT NULL'),
    forwarded: recount('mailing_forwards'),
    opted_out: recount('mailing_optouts'),
  });
  const queue = m.split_test_id === null ? 'mailing_id = ?' : 'mailing_id = ? AND content_mailing_id = ?';
  expect(r.in_progress).toBe(
    s.db
      .prepare(`SELECT COUNT(*) FROM mailing_queue WHERE ${queue}`)
      .pluck()
      .get(...args),
  );
  for (const l of links) {
    const c = s.db
      .prepare('SELECT COUNT(*) AS total, COUNT(DISTINCT member_id) AS uniq FROM mailing_clicks WHERE link_id = ?')
      .get(l.link_id) as any;
    expect([l.total_clicks, l.unique_clicks]).toEqual([c.total, c.uniq]);
  }
  return r;
}

describe('GET /response/{mailing_id}', () => {
  it('answers the real service shape, all zero before the send, and a 404 for unknown mailings', async () => {
    const id = await create();
    expect(await response(id)).toEqual({
      name: 'Spring',
      subject: 'Hello',
      recipient_count: 0,
      sent: 0,
      delivered: 0,
      bounced: 0,
      opened: 0,
      clicked_unique: 0,
      clicked: 0,
      forwarded: 0,
      opted_out: 0,
      signed_up: 0,
      shared: 0,
      share_clicked: 0,
      webview_shared: 0,
      webview_share_clicked: 0,
      in_progress: 0,
    });
    const missing = await s.call('GET', '/1/response/999');
    expect(missing).toEqual({ status: 404, body: { error: 'mailing 999 not found' } });
    for (const name of ['sends', 'opens', 'clicks', 'links', 'deliveries', 'forwards', 'customer_shares'])
      expect((await s.call('GET', `/1/response/999/${name}`)).status).toBe(404);
    expectFieldError(await s.call('GET', `/1/response/${id}/deliveries`, { query: { result: 'lost' } }), 'result');
    expectFieldError(await s.call('GET', `/1/response/${id}/clicks`, { query: { link_id: 'x' } }), 'link_id');
    expectFieldError(await s.call('GET', `/1/response/${id}/opens`, { query: { start: '1', end: '0' } }), 'end');
    // A window longer than 500 is cut, not refused (test/api/window-cut.test.ts).
    expect((await s.call('GET', `/1/response/${id}/opens`, { query: { start: '0', end: '501' } })).status).toBe(200);
  });

  it('counts the send and every simulated event, and the lists agree with the figures', async () => {
    const id = await create();
    runJobs();
    expect(await expectIdentities(id)).toMatchObject({ recipient_count: 4, sent: 4, delivered: 4, in_progress: 0 });
    const [sale, fresh] = linkIds(id);
    s.clock.advance(60_000);
    await sim('open', id, ids.ann);
    await sim('open', id, ids.ann); // a second open of one message is not a second opener
    await sim('click', id, ids.bob, { link_id: fresh });
    await sim('click', id, ids.bob, { link_id: fresh });
    await sim('click', id, ids.bob, { link_id: sale });
    await sim('click', id, ids.ann); // the first link
    await sim('bounce', id, ids.cid, { hard: true });
    await sim('bounce', id, ids.dee);
    await sim('bounce', id, ids.dee, { hard: true }); // its first bounce was soft
    await sim('share', id, ids.ann);
    await sim('optout', id, ids.bob);
    await sim('optout', id, ids.bob); // already opted out: no second record
    await ok(s, 'POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['friend@example.com'] } });
    await ok(s, 'POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['pal@example.com'] } });
    const r = await expectIdentities(id);
    expect(r).toMatchObject({
      sent: 4,
      delivered: 2,
      bounced: 2,
      opened: 2,
      clicked_unique: 2,
      clicked: 4,
      forwarded: 2,
      opted_out: 1,
      shared: 1,
      signed_up: 0,
      in_progress: 0,
    });
    expect(await count(id, 'deliveries', { result: 'hard' })).toBe(1);
    expect(await list(id, 'links')).toEqual([
      {
        link_id: sale,
        link_order: 1,
        link_name: 'The sale',
        link_target: 'https://shop.example.com/sale',
        plaintext: false,
        unique_clicks: 2,
        total_clicks: 2,
      },
      {
        link_id: fresh,
        link_order: 2,
        link_name: 'New',
        link_target: 'https://shop.example.com/new',
        plaintext: false,
        unique_clicks: 1,
        total_clicks: 2,
      },
      {
        link_id: fresh + 1,
        link_order: 3,
        link_name: 'https://shop.example.com/sale',
        link_target: 'https://shop.example.com/sale',
        plaintext: true,
        unique_clicks: 0,
        total_clicks: 0,
      },
    ]);
    expect(await count(id, 'clicks', { member_id: String(ids.bob) })).toBe(3);
    // Another mailing's link has no clicks in this one.
    const other = await create({ name: 'Other' });
    expect(await count(other, 'clicks', { link_id: String(fresh) })).toBe(0);
    expect(await list(other, 'clicks', { link_id: String(fresh) })).toEqual([]);
    expect(await list(id, 'clicks', { member_id: String(ids.bob), link_id: String(fresh) })).toHaveLength(2);
  });

  it('tracks a link whose URL holds personalization tags: one link record, each click recorded against it', async () => {
    const html =
      '<a href="https://shop.example.com/spring?m=[% mailing_id %]">Spring</a> ' +
      '<a href="https://shop.example.com/?n=[% member:first_name | default:"friend" %]&amp;x=1">Hi</a> ' +
      '<a class=plain href=https://shop.example.com/plain>Plain</a> <a href="[% optout_url %]">opt out</a>';
    const text =
      'Spring: https://shop.example.com/spring?m=[% mailing_id %] and https://shop.example.com/?n=[% member:first_name %]!\nOpt out: [% optout_url %]';
    const id = await create({ html_body: html, plaintext: text });
    runJobs();
    const [spring, hi, plain, springText, hiText] = linkIds(id);
    s.clock.advance(60_000);
    await sim('click', id, ids.ann); // the first link: the personalized one
    await sim('click', id, ids.bob, { link_id: spring });
    await sim('click', id, ids.cid, { link_id: hi });
    await sim('click', id, ids.cid, { link_id: springText });
    const link = (link_id: number, link_order: number, link_name: string, link_target: string, plaintext: boolean, clicks: number) => ({
      link_id,
      link_order,
      link_name,
      link_target,
      plaintext,
      unique_clicks: clicks,
      total_clicks: clicks,
    });
    // Every link, as written (tags and all), in order; the opt-out link is the system's, not the mailing's.
    expect(await list(id, 'links')).toEqual([
      link(spring, 1, 'Spring', 'https://shop.example.com/spring?m=[% mailing_id %]', false, 2),
      link(hi, 2, 'Hi', 'https://shop.example.com/?n=[% member:first_name | default:"friend" %]&amp;x=1', false, 1),
      link(plain, 3, 'Plain', 'https://shop.example.com/plain', false, 0),
      link(
        springText,
        4,
        'https://shop.example.com/spring?m=[% mailing_id %]',
        'https://shop.example.com/spring?m=[% mailing_id %]',
        true,
        1,
      ),
      link(
        hiText,
        5,
        'https://shop.example.com/?n=[% member:first_name %]!',
        'https://shop.example.com/?n=[% member:first_name %]!',
        true,
        0,
      ),
    ]);
    expect((await list(id, 'clicks', { member_id: String(ids.ann) })).map((c: { link_id: number }) => c.link_id)).toEqual([spring]);
    expect(await count(id, 'clicks', { link_id: String(spring) })).toBe(2);
    await expectIdentities(id);
    // Each member's message carries the link with the tags filled in.
    const message = (await ok(s, 'GET', `/1/mailings/${id}/messages/${ids.ann}`, { query: { type: 'html' } })).html_body;
    expect(message).toContain(`href="https://shop.example.com/spring?m=${id}"`);
    expect(message).toContain('href="https://shop.example.com/?n=Ann&amp;x=1"');
  });

  it('answers each list in the real service shape, with @D: times', async () => {
    const id = await create();
    runJobs();
    s.clock.advance(60_000);
    const t1 = atD('2026-03-04T05:07:07');
    await sim('click', id, ids.ann, { link_id: linkIds(id)[1] });
    await sim('bounce', id, ids.cid);
    await sim('share', id, ids.ann);
    await sim('optout', id, ids.bob);
    const fwd = (await ok(s, 'POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['friend@example.com'] } })).mailing_id;
    const ann = {
      member_id: ids.ann,
      email: 'ann@example.com',
      email_user: 'ann',
      email_domain: 'example.com',
      timestamp: t1,
      member_since: atD(T0),
      member_status_id: 'a',
      fields: { first_name: 'Ann' },
    };
    expect(await list(id, 'opens')).toEqual([ann]);
    expect(await list(id, 'clicks')).toEqual([{ ...ann, link_id: linkIds(id)[1] }]);
    expect(await list(id, 'shares')).toEqual([{ ...ann, network: null, share_clicks: 0 }]);
    expect(await list(id, 'optouts')).toEqual([
      { ...ann, member_id: ids.bob, email: 'bob@example.com', email_user: 'bob', member_status_id: 'o', fields: {} },
    ]);
    const sends = await list(id, 'sends');
    expect(sends.map((m: any) => m.member_id)).toEqual([ids.ann, ids.bob, ids.cid, ids.dee]);
    expect(sends[2]).toEqual({
      member_id: ids.cid,
      email: 'cid@sub.example.org',
      email_user: 'cid',
      email_domain: 'sub.example.org',
      timestamp: atD(T0),
      member_since: atD(T0),
      member_status_id: 'a',
      fields: { first_name: 'Cid' },
    });
    const deliveries = await list(id, 'deliveries');
    expect(deliveries.map((d: any) => d.delivery_type)).toEqual(['delivered', 'delivered', 'soft', 'delivered']);
    expect(deliveries[2]).toEqual({ ...sends[2], timestamp: t1, delivery_type: 'soft', mailing_id: id, mailing_name: 'Spring' });
    expect(await list(id, 'deliveries', { result: 'soft' })).toEqual([deliveries[2]]);
    expect(await list(id, 'forwards')).toEqual([{ timestamp: t1, forward_mailing_id: fwd, member_id: ids.ann, email: 'ann@example.com' }]);
    expect(await list(id, 'signups')).toEqual([]);
    expect(await list(id, 'customer_shares')).toEqual([]);
    expect(await list(id, 'customer_share_clicks')).toEqual([]);
    expect(await list(id, 'in_progress')).toEqual([]);
  });

  it('counts recipients in progress while a send is paused, and none once it is canceled', async () => {
    for (let i = 0; i < 12; i++) await addMember(s, `p${i}@example.com`, { group_ids: [gold] });
    const id = await create();
    advanceJobs(s.db, s.clock, 0); // p -> i: the audience is queued
    const r = await expectIdentities(id);
    expect([r.in_progress, r.sent]).toEqual([16, 0]);
    const inProgress = await list(id, 'in_progress', { end: '1' });
    expect(inProgress).toEqual([
      {
        member_id: ids.ann,
        email: 'ann@example.com',
        email_user: 'ann',
        email_domain: 'example.com',
        member_since: atD(T0),
        member_status_id: 'a',
        fields: { first_name: 'Ann' },
      },
    ]);
    await ok(s, 'PUT', `/1/mailings/${id}`, { body: { status: 'paused' } });
    await ok(s, 'DELETE', `/1/mailings/cancel/${id}`);
    expect(await expectIdentities(id)).toMatchObject({ in_progress: 0, sent: 0 });
  });

  it('a purge takes the purged member out of every figure and list', async () => {
    const id = await create();
    runJobs();
    const [sale] = linkIds(id);
    await sim('click', id, ids.ann, { link_id: sale });
    await sim('click', id, ids.bob, { link_id: sale });
    await sim('bounce', id, ids.cid, { hard: true });
    await sim('optout', id, ids.ann);
    await sim('share', id, ids.ann);
    await ok(s, 'POST', `/1/forwards/${id}/${ids.ann}`, { body: { recipient_emails: ['friend@example.com'] } });
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [ids.ann, ids.cid] } });
    const r = await expectIdentities(id);
    expect(r).toMatchObject({ sent: 2, delivered: 2, bounced: 0, opened: 1, clicked: 1, opted_out: 0, shared: 0, forwarded: 0 });
    expect((await list(id, 'links'))[0]).toMatchObject({ unique_clicks: 1, total_clicks: 1 });
  });

  it('a split test reports each variant and the whole', async () => {
    for (let i = 0; i < 16; i++) await addMember(s, `m${i}@example.com`, { group_ids: [gold] });
    const { mailing_id: id } = await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Split',
        subject: 'Hello',
        sender: 'shop@example.com',
        html_body: HTML,
        recipient_groups: [gold],
        mailing_type: 'c',
        split_test: {
          variants: [{ html_body: HTML.replace('Hi', 'Hey') }, { html_body: HTML.replace('Hi', 'Yo') }],
          test_percent: 50,
          test_duration_seconds: 3600,
        },
      },
    });
    const variants = (await ok(s, 'GET', `/1/mailings/${id}`)).split_test.variants.map((v: any) => v.mailing_id);
    runJobs();
    // 20 recipients, the test share 10 (5 each), 10 waiting for the winner.
    expect(await expectIdentities(id)).toMatchObject({ sent: 10, in_progress: 10 });
    expect(await expectIdentities(variants[0])).toMatchObject({ sent: 5, in_progress: 0 });
    const got = (v: number) =>
      s.db.prepare('SELECT member_id FROM mailing_messages WHERE mailing_id = ? AND content_mailing_id = ?').pluck().all(id, v) as number[];
    const [a1, a2] = got(variants[0]);
    const [b1] = got(variants[1]);
    await sim('open', id, a1);
    await sim('click', id, a2, { link_id: linkIds(variants[0])[0] });
    await sim('click', id, b1);
    await sim('optout', id, b1);
    await ok(s, 'POST', `/1/mailings/${id}/winner/${variants[1]}`, { body: {} });
    expect(await expectIdentities(variants[1])).toMatchObject({ sent: 5, in_progress: 10 });
    runJobs();
    const whole = await expectIdentities(id);
    const [va, vb] = [await expectIdentities(variants[0]), await expectIdentities(variants[1])];
    expect([va.sent, vb.sent, whole.sent]).toEqual([5, 15, 20]);
    expect([va.opened, vb.opened, whole.opened]).toEqual([2, 1, 3]);
    expect([va.clicked, vb.clicked, whole.clicked]).toEqual([1, 1, 2]);
    expect([va.opted_out, vb.opted_out, whole.opted_out]).toEqual([0, 1, 1]);
    expect((await list(id, 'links')).length).toBe(linkIds(id).length + linkIds(variants[0]).length + linkIds(variants[1]).length);
    expect((await list(variants[1], 'links')).map((l: any) => l.link_id)).toEqual(linkIds(variants[1]));
    expect((await list(variants[1], 'clicks')).map((c: any) => c.member_id)).toEqual([b1]);
  });
});

describe('GET /response (by month)', () => {
  it('sums the sent mailings by the month their send started, without tests and forwards', async () => {
    const jan = await create({ name: 'Jan' });
    const t = await create({ name: 'Test', mailing_type: 't' });
    s.clock.set('2026-01-15T10:00:00.000Z');
    runJobs();
    await sim('open', jan, ids.ann);
    await ok(s, 'POST', `/1/forwards/${jan}/${ids.ann}`, { body: { recipient_emails: ['friend@example.com'] } });
    s.clock.set('2026-03-02T10:00:00.000Z');
    const mar1 = await create({ name: 'Mar 1' });
    const mar2 = await create({ name: 'Mar 2' });
    runJobs();
    await sim('bounce', mar1, ids.bob);
    await sim('click', mar2, ids.cid);
    const month = (year: number, m: number, over: Record<string, number>) => ({
      account_id: 1,
      month: m,
      year,
      mailings: 1,
      sent: 4,
      delivered: 4,
      bounced: 0,
      opened: 0,
      clicked_unique: 0,
      clicked: 0,
      forwarded: 0,
      shared: 0,
      share_clicked: 0,
      webview_shared: 0,
      webview_share_clicked: 0,
      opted_out: 0,
      signed_up: 0,
      ...over,
    });
    const jan26 = month(2026, 1, { opened: 1, forwarded: 1 });
    const mar26 = month(2026, 3, { mailings: 2, sent: 8, delivered: 7, bounced: 1, opened: 1, clicked_unique: 1, clicked: 1 });
    const series = await ok(s, 'GET', '/1/response');
    expect(series).toEqual([jan26, mar26]);
    expect(Object.keys(series[0])).toEqual(Object.keys(jan26));
    expect(Object.keys(jan26).slice(0, 4)).toEqual(['account_id', 'month', 'year', 'mailings']);
    expect(await ok(s, 'GET', '/1/response', { query: { range: '2026-02-01~' } })).toEqual([mar26]);
    expect(await ok(s, 'GET', '/1/response', { query: { range: '~2026-01-31' } })).toEqual([jan26]);
    expect(await ok(s, 'GET', '/1/response', { query: { range: '2026-01-15' } })).toEqual([jan26]);
    expect(await ok(s, 'GET', '/1/response', { query: { range: '2026-01-16' } })).toEqual([]);
    expectFieldError(await s.call('GET', '/1/response', { query: { range: '2026-13-01~' } }), 'range');
    // Archived mailings leave the series unless asked for.
    await ok(s, 'DELETE', `/1/mailings/${mar2}`);
    expect((await ok(s, 'GET', '/1/response', { query: { range: '2026-03-01~' } }))[0].mailings).toBe(1);
    expect((await ok(s, 'GET', '/1/response', { query: { range: '2026-03-01~', include_archived: 'true' } }))[0].mailings).toBe(2);
    // The test mailing has its own report.
    expect((await response(t)).sent).toBe(4);
  });

  it("another account's mailing is a 404", async () => {
    const id = await create();
    runJobs();
    s.db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', '2026-01-01T00:00:00.000000')`).run();
    s.db
      .prepare(
        `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at) VALUES (2, 'owner@other.org', 'owner', 1, 1, '2026-01-01T00:00:00.000000')`,
      )
      .run();
    const actor = localActor(s.db, 2);
    for (const path of [`/2/response/${id}`, `/2/response/${id}/opens`, `/2/response/${id}/links`]) {
      const res = await s.router.handle({ method: 'GET', path, query: {}, body: undefined, actor });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: `mailing ${id} not found` } });
    }
    expect(await ok(s, 'GET', '/1/response')).toHaveLength(1);
    const theirs = await s.router.handle({ method: 'GET', path: '/2/response', query: {}, body: undefined, actor });
    expect(theirs.body).toEqual([]);
  });
});

describe('the lists walk an index of their records', () => {
  it('an event list reads its partial index, not every message of the mailing', async () => {
    const plans: string[] = [];
    const outer = s;
    s = makeService(T0, { trace: true });
    try {
      await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
      [gold] = await createGroups(s, 'Gold');
      const ann = await addMember(s, 'ann@example.com', { group_ids: [gold] });
      const id = await create();
      runJobs();
      await sim('open', id, ann);
      for (const [name, query] of [
        ['opens', {}],
        ['shares', {}],
        ['deliveries', { result: 'hard' }],
        ['deliveries', { result: 'bounced' }],
      ] as const) {
        await list(id, name, query);
        const { statements } = await s.capture(() => list(id, name, query));
        for (const sql of statements.filter((q) => q.includes('FROM mailing_messages')))
          plans.push((s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((p) => p.detail).join(' | '));
      }
    } finally {
      s.close();
      s = outer;
    }
    expect(plans).toHaveLength(4);
    expect(plans[0]).toMatch(/USING INDEX mailing_messages_opened/);
    expect(plans[1]).toMatch(/USING INDEX mailing_messages_shared/);
    expect(plans[2]).toMatch(/USING INDEX mailing_messages_bounced/);
    expect(plans[3]).toMatch(/USING INDEX mailing_messages_bounced/);
    for (const p of plans) expect(p).not.toMatch(/TEMP B-TREE/);
  });
});

describe('the route table', () => {
  it('declares the response routes as extensions, readable by every user, and openapi.json marks them', () => {
    const response = ROUTES.filter((r) => r.path.startsWith('/{account_id}/response'));
    expect(response.map((r) => r.path.replace('/{account_id}/response', '') || '/')).toEqual([
      '/',
      '/{mailing_id}',
      // Opens and clicks over time (the console's chart).
      '/{mailing_id}/timeline',
      ...[
        'sends',
        'in_progress',
        'deliveries',
        'opens',
        'optouts',
        'signups',
        'links',
        'clicks',
        'forwards',
        'shares',
        'customer_shares',
        'customer_share_clicks',
      ].map((n) => `/{mailing_id}/${n}`),
    ]);
    for (const r of response) expect([r.method, r.access, r.extension]).toEqual(['GET', 'user', true]);
    const doc = openapiDocument(ROUTES, '0.0.0') as any;
    for (const r of response) expect(doc.paths[r.path].get['x-amsg-extension']).toBe(true);
  });
});

describe('migration 021 on a database that already has sends', () => {
  it('backfills the counts and records from the messages, so the identities hold', async () => {
    const id = await create();
    runJobs();
    const [sale] = linkIds(id);
    await sim('open', id, ids.ann);
    await sim('click', id, ids.bob, { link_id: sale });
    await sim('bounce', id, ids.cid, { hard: true });
    await sim('share', id, ids.ann);
    await sim('optout', id, ids.dee);
    const queued = await create({ name: 'Queued' });
    advanceJobs(s.db, s.clock, 0);
    // The database as it was before migration 021.
    s.db.exec(`
      ${(s.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'response_%'").pluck().all() as string[]).map((t) => `DROP TRIGGER ${t};`).join('\n')}
      DROP TABLE mailing_response; DROP TABLE mailing_clicks; DROP TABLE mailing_forwards; DROP TABLE mailing_optouts;
      DROP INDEX mailing_messages_opened; DROP INDEX mailing_messages_bounced; DROP INDEX mailing_messages_shared;
      ALTER TABLE mailing_messages DROP COLUMN bounce_type;
      ALTER TABLE mailing_links DROP COLUMN unique_clicks; ALTER TABLE mailing_links DROP COLUMN total_clicks;
      DELETE FROM schema_migrations WHERE name = '021-response-counters';
    `);
    migrate(s.db);
    const r = await expectIdentities(id);
    // The click made before is one click on no link; the bounce's kind was not kept, so it is soft.
    expect(r).toMatchObject({ sent: 4, delivered: 3, bounced: 1, opened: 2, clicked_unique: 1, clicked: 1, shared: 1, opted_out: 1 });
    expect(await count(id, 'deliveries', { result: 'soft' })).toBe(1);
    expect(await expectIdentities(queued)).toMatchObject({ sent: 0 });
    expect((await response(queued)).in_progress).toBe(await count(queued, 'in_progress'));
    expect((await ok(s, 'GET', '/1/response')).map((m: any) => m.mailings)).toEqual([2]);
  });
});
