import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { createGroups, expectFieldError, ok } from './util.js';

/**
 * Simulating engagement with a whole send (POST /sim/mailing/{id}, `amsg sim mailing`):
 * one operation that draws shares of the send's messages with a seed and records each
 * event as the one-member sim operations do: history, report counts and lists, link
 * clicks, statuses, and one webhook event per kind listing the members.
 */
let s: TestService;
let mailingId: number;
const SIZE = 200;

const HTML = '<a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a> <a href="[% optout_url %]">opt out</a>';

async function sentMailing(svc: TestService): Promise<number> {
  const [gold] = await createGroups(svc, 'Gold');
  for (let i = 0; i < SIZE; i++) await ok(svc, 'POST', '/1/members/add', { body: { email: `m${i}@example.com`, group_ids: [gold] } });
  const { mailing_id } = await ok(svc, 'POST', '/1/mailings', {
    body: { name: 'Spring', subject: 'Hi', sender: 'shop@example.com', html_body: HTML, recipient_groups: [gold] },
  });
  for (let i = 0; i < 1000 && advanceJobs(svc.db, svc.clock, 1_000); i++);
  expect((await ok(svc, 'GET', `/1/mailings/${mailing_id}`)).mailing_status).toBe('c');
  return mailing_id;
}

/** The members of the send with each mark set, from their message histories' table. */
const marked = (svc: TestService, column: string) =>
  svc.db.prepare(`SELECT member_id FROM mailing_messages WHERE ${column} IS NOT NULL ORDER BY member_id`).pluck().all() as number[];

/** Every webhook event fired so far: [event, data]. */
const events = (svc: TestService) =>
  (svc.db.prepare('SELECT event, data FROM webhook_events ORDER BY event_id').all() as { event: string; data: string }[]).map(
    (e) => [e.event, JSON.parse(e.data)] as const,
  );

beforeEach(async () => {
  s = makeService();
  mailingId = await sentMailing(s);
});
afterEach(() => s.close());

describe('POST /sim/mailing/{id}', () => {
  it('records the shares in one call: history, reports, links, statuses, one webhook event per kind', async () => {
    for (const event of ['message_open', 'message_click', 'member_optout', 'member_status_update', 'message_share'])
      await ok(s, 'POST', '/1/webhooks', { body: { url: 'https://hooks.example.com/x', event } });
    const body = { opens: 0.4, clicks: 0.08, bounces: 0.01, optouts: 0.005, seed: 7 };
    const answer = await ok(s, 'POST', `/1/sim/mailing/${mailingId}`, { body });
    expect(answer).toEqual({ mailing_id: mailingId, seed: 7, messages: 200, opens: 80, clicks: 16, bounces: 2, optouts: 1, shares: 0 });

    const [opened, clicked, bounced] = [marked(s, 'opened'), marked(s, 'clicked'), marked(s, 'bounced')];
    expect([opened.length, clicked.length, bounced.length]).toEqual([80, 16, 2]);
    // Clickers opened; bounced messages were not opened.
    expect(clicked.every((id) => opened.includes(id))).toBe(true);
    expect(bounced.some((id) => opened.includes(id))).toBe(false);

    const report = await ok(s, 'GET', `/1/response/${mailingId}`);
    expect([report.opened, report.clicked_unique, report.clicked, report.bounced, report.opted_out]).toEqual([80, 16, 16, 2, 1]);
    // The clicks land on the links in turn.
    const links = await ok(s, 'GET', `/1/response/${mailingId}/links`);
    expect(links.map((l: any) => [l.link_target, l.unique_clicks])).toEqual([
      ['https://shop.example.com/a', 8],
      ['https://shop.example.com/b', 8],
    ]);
    // The opt-out is one of the openers who did not click, and its history names the mailing.
    const [optedOut] = s.db.prepare("SELECT member_id FROM members WHERE member_status_id = 'o'").pluck().all() as number[];
    expect(opened).toContain(optedOut);
    expect(clicked).not.toContain(optedOut);
    expect(await ok(s, 'GET', `/1/members/${optedOut}/optout`)).toEqual([{ timestamp: expect.any(String), mailing_id: mailingId }]);
    const bouncer = await ok(s, 'GET', `/1/members/${bounced[0]}`);
    expect([bouncer.member_status_id, bouncer.bounce_count]).toEqual(['a', 1]);
    const [history] = await ok(s, 'GET', `/1/members/${clicked[0]}/mailings`);
    expect([!!history.opened, !!history.clicked]).toEqual([true, true]);

    const fired = events(s);
    expect(fired.map(([event, data]) => [event, data.member_count, data.link_id])).toEqual([
      ['message_open', 80, undefined],
      ['message_click', 8, links[0].link_id],
      ['message_click', 8, links[1].link_id],
      ['member_status_update', 1, undefined],
      ['member_optout', 1, undefined],
    ]);
    expect(fired[0][1].members.map((m: any) => m.member_id)).toEqual(opened);
    expect(fired[4][1]).toMatchObject({ mailing_id: mailingId, members: [{ member_id: optedOut }] });
  });

  it('the same seed draws the same members from the same send; another seed others; no seed answers the one it drew with', async () => {
    await ok(s, 'POST', `/1/sim/mailing/${mailingId}`, { body: { opens: 0.3, clicks: 0.1, seed: 42 } });
    const first = [marked(s, 'opened'), marked(s, 'clicked')];
    const again = makeService();
    try {
      const id = await sentMailing(again);
      await ok(again, 'POST', `/1/sim/mailing/${id}`, { body: { opens: 0.3, clicks: 0.1, seed: 42 } });
      expect([marked(again, 'opened'), marked(again, 'clicked')]).toEqual(first);
    } finally {
      again.close();
    }
    const other = makeService();
    try {
      const id = await sentMailing(other);
      const drawn = await ok(other, 'POST', `/1/sim/mailing/${id}`, { body: { opens: 0.3 } });
      expect(Number.isSafeInteger(drawn.seed)).toBe(true);
      expect(marked(other, 'opened')).not.toEqual(first[0]);
    } finally {
      other.close();
    }
  });

  it('hard bounces set the status e, with one member_status_update listing them', async () => {
    await ok(s, 'POST', '/1/webhooks', { body: { url: 'https://hooks.example.com/x', event: 'member_status_update' } });
    expect((await ok(s, 'POST', `/1/sim/mailing/${mailingId}`, { body: { bounces: 0.05, hard: true, seed: 1 } })).bounces).toBe(10);
    expect(s.db.prepare("SELECT COUNT(*) FROM members WHERE member_status_id = 'e'").pluck().get()).toBe(10);
    expect(events(s).map(([e, d]) => [e, d.member_status_id, d.member_count])).toEqual([['member_status_update', 'e', 10]]);
    expect((await ok(s, 'GET', `/1/response/${mailingId}`)).bounced).toBe(10);
  });

  it('refuses shares out of range, more than the whole send, a mailing not sent, naming the field', async () => {
    expectFieldError(await s.call('POST', `/1/sim/mailing/${mailingId}`, { body: { opens: 1.5 } }), 'opens');
    expectFieldError(await s.call('POST', `/1/sim/mailing/${mailingId}`, { body: { clicks: '8%' } }), 'clicks');
    expectFieldError(await s.call('POST', `/1/sim/mailing/${mailingId}`, { body: { opens: 0.6, bounces: 0.5 } }), 'bounces');
    expect((await s.call('POST', '/1/sim/mailing/999', { body: { opens: 0.1 } })).status).toBe(404);
    const { mailing_id: draft } = await ok(s, 'POST', '/1/mailings', {
      body: { name: 'Draft', subject: 'Hi', sender: 'shop@example.com', html_body: HTML, status: 'u' },
    });
    const refused = await s.call('POST', `/1/sim/mailing/${draft}`, { body: { opens: 0.1 } });
    expect([refused.status, refused.body.error]).toEqual([404, `mailing ${draft} has no messages: only a sent mailing has engagement`]);
    expect(marked(s, 'opened')).toEqual([]);
  });
});

describe('a click costs the same however many clicks its link has', () => {
  it("the unique-clicks trigger's lookup is one probe of (mailing_id, member_id, link_id), not a walk of the link's clicks", () => {
    const plan = (
      s.db
        .prepare(
          'EXPLAIN QUERY PLAN SELECT 1 FROM mailing_clicks c WHERE c.mailing_id = ? AND c.member_id = ? AND c.link_id = ? AND c.click_id <> ?',
        )
        .all(1, 2, 3, 4) as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan).toEqual(['SEARCH c USING COVERING INDEX mailing_clicks_member_link (mailing_id=? AND member_id=? AND link_id=?)']);
  });
});
