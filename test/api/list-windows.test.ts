/**
 * start/end windows (an extension here) over a member's mailing history, a mailing's
 * individually named and suppressed members, and an import's members: pages in id
 * order, the default window of 500 (a longer one cut to it), the 400s naming `end`, and the CLI's paging
 * through them until a short page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { Api } from '../../src/client/api.js';
import { queryString, type ApiCall, type Transport } from '../../src/client/transport.js';
import { allPages } from '../../src/cli/paging.js';
import { atD, createField, createGroups, expectFieldError, ok } from './util.js';

/** Ids from..to, inclusive, in order (descending when from > to). */
const ids = (from: number, to: number) => Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => (from <= to ? from + i : from - i));
const memberIds = (list: { member_id: number }[]) => list.map((m) => m.member_id);

let s: TestService;
let gold: number;
/** Import a: 600 new members (ids 1–600) in two batches of 300; member 10 purged since. */
let importA: number;
/** Import b: updates members 5 and 7, adds 601 and 602. */
let importB: number;
/** Named individually: 600 down to 1 (10 purged since); suppressed: 3, 1, 2. */
let mailing: number;
/** Member 1 got these 505 mailings, in id order. */
let sent: number[];

const emails = (from: number, to: number) => ids(from, to).map((i) => ({ email: `m${i}@example.com`, first_name: `M${i}` }));

beforeAll(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  [gold] = await createGroups(s, 'Gold');
  importA = (await ok(s, 'POST', '/1/members/imports', { body: { group_ids: [gold] } })).import_id;
  await ok(s, 'POST', `/1/members/imports/${importA}/rows`, { body: { members: emails(1, 300) } });
  await ok(s, 'POST', `/1/members/imports/${importA}/rows`, { body: { members: emails(301, 600), offset: 300 } });
  await ok(s, 'POST', `/1/members/imports/${importA}/finish`, { body: {} });
  expect(s.db.prepare("SELECT member_id FROM members WHERE email = 'm600@example.com'").pluck().get()).toBe(600);

  const html = '<p>Hi</p><a href="[% optout_url %]">opt out</a>';
  mailing = (
    await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Named',
        subject: 'Named',
        sender: 'shop@example.com',
        html_body: html,
        recipient_member_ids: ids(600, 1),
        suppressed_member_ids: [3, 1, 2],
      },
    })
  ).mailing_id;

  importB = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id;
  await ok(s, 'POST', `/1/members/imports/${importB}/rows`, {
    body: {
      members: [{ email: 'm5@example.com' }, { email: 'new1@example.com' }, { email: 'm7@example.com' }, { email: 'new2@example.com' }],
    },
  });
  await ok(s, 'POST', `/1/members/imports/${importB}/finish`, { body: {} });

  sent = [];
  for (let i = 1; i <= 505; i++)
    sent.push(
      (
        await ok(s, 'POST', '/1/mailings', {
          body: {
            name: `News ${i}`,
            subject: `News ${i} for [% member:first_name %]`,
            sender: 'shop@example.com',
            html_body: html,
            recipient_member_ids: [1],
          },
        })
      ).mailing_id,
    );
  for (let i = 0; i < 10_000 && advanceJobs(s.db, s.clock, 1_000); i++);

  await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [10] } });
}, 120_000);
afterAll(() => s.close());

/** The 400 of a bad window (end before start, a negative start); a window longer than 500 is cut, not refused. */
async function refusesBadWindows(path: string) {
  expectFieldError(await s.call('GET', path, { query: { start: '10', end: '9' } }), 'end');
  expect((await s.call('GET', path, { query: { start: '-1' } })).status).toBe(400);
  expect((await s.call('GET', path, { query: { start: '100', end: '600' } })).status).toBe(200);
  const cut = await s.call('GET', path, { query: { start: '0', end: '501' } });
  expect([cut.status, cut.body]).toEqual([200, (await s.call('GET', path, { query: { start: '0', end: '500' } })).body]);
  expect((await s.call('GET', path, { query: { end: '600' } })).body).toEqual(cut.body);
}

describe('GET /members/imports/{id}/members', () => {
  const page = (importId: number, query: Record<string, string> = {}) => ok(s, 'GET', `/1/members/imports/${importId}/members`, { query });

  it('walks the ranges the purge left', () => {
    const ranges = s.db.prepare('SELECT first_id, last_id, change_type FROM import_ledger WHERE import_id = ? ORDER BY first_id').raw();
    expect(ranges.all(importA)).toEqual([
      [1, 9, 'a'],
      [11, 300, 'a'],
      [301, 600, 'a'],
    ]);
    expect(ranges.all(importB)).toEqual([
      [5, 5, 'u'],
      [7, 7, 'u'],
      [601, 602, 'a'],
    ]);
  });

  it('answers the first 500 by default, in member id order, with the spec item shape', async () => {
    const first = await page(importA);
    expect(memberIds(first)).toEqual([...ids(1, 9), ...ids(11, 501)]);
    expect(first[0]).toEqual({ member_id: 1, change_type: 'a', member_status_id: 'a', email: 'm1@example.com' });
  });

  it('answers exact windows across the purged id and the batch boundary, and the short last page', async () => {
    expect(memberIds(await page(importA, { start: '7', end: '11' }))).toEqual([8, 9, 11, 12]);
    expect(memberIds(await page(importA, { start: '295', end: '302' }))).toEqual(ids(297, 303));
    expect(memberIds(await page(importA, { start: '500' }))).toEqual(ids(502, 600));
    expect(memberIds(await page(importA, { start: '598', end: '700' }))).toEqual([600]);
    expect(await page(importA, { start: '599' })).toEqual([]);
    expect(await page(importA, { start: '100000', end: '100001' })).toEqual([]);
    expect(await page(importA, { start: '3', end: '3' })).toEqual([]);
  });

  it('windows the filtered list, each member with the change type of its range', async () => {
    expect(await page(importB)).toEqual([
      { member_id: 5, change_type: 'u', member_status_id: 'a', email: 'm5@example.com' },
      { member_id: 7, change_type: 'u', member_status_id: 'a', email: 'm7@example.com' },
      { member_id: 601, change_type: 'a', member_status_id: 'a', email: 'new1@example.com' },
      { member_id: 602, change_type: 'a', member_status_id: 'a', email: 'new2@example.com' },
    ]);
    expect(memberIds(await page(importB, { start: '1', end: '3' }))).toEqual([7, 601]);
    expect(memberIds(await page(importB, { added_only: 'true' }))).toEqual([601, 602]);
    expect(memberIds(await page(importB, { added_only: 'true', start: '1' }))).toEqual([602]);
    expect(memberIds(await page(importB, { added_only: 'true', all: 'true', start: '1', end: '2' }))).toEqual([7]);
    expect(await page(importB, { added_to_groups: 'true' })).toEqual([]);
    expect(memberIds(await page(importA, { added_to_groups: 'true', start: '8', end: '10' }))).toEqual([9, 11]);
  });

  it('refuses windows that end before they start or hold more than 500', async () => {
    await refusesBadWindows(`/1/members/imports/${importA}/members`);
  });
});

describe('GET /mailings/{id}/members and /suppressed_members', () => {
  const page = (which: string, query: Record<string, string> = {}) => ok(s, 'GET', `/1/mailings/${mailing}/${which}`, { query });

  it('answers the first 500 in member id order (not the order given), as member records', async () => {
    const first = await page('members');
    expect(memberIds(first)).toEqual([...ids(1, 9), ...ids(11, 501)]);
    expect(first[0]).toEqual(await ok(s, 'GET', '/1/members/1'));
    // The mailing's own record keeps the order it was given.
    expect((await ok(s, 'GET', `/1/mailings/${mailing}`)).recipient_members.slice(0, 2)).toEqual([
      { email: 'm600@example.com', member_id: 600 },
      { email: 'm599@example.com', member_id: 599 },
    ]);
  });

  it('answers exact windows, leaving out the purged member before the window is taken', async () => {
    expect(memberIds(await page('members', { start: '7', end: '10' }))).toEqual([8, 9, 11]);
    expect(memberIds(await page('members', { start: '500' }))).toEqual(ids(502, 600));
    expect(await page('members', { start: '599' })).toEqual([]);
    expect(await page('members', { start: '5000', end: '5010' })).toEqual([]);
    expect(memberIds(await page('suppressed_members'))).toEqual([1, 2, 3]);
    expect(memberIds(await page('suppressed_members', { start: '1', end: '2' }))).toEqual([2]);
    expect(await page('suppressed_members', { start: '3' })).toEqual([]);
  });

  it('refuses windows that end before they start or hold more than 500', async () => {
    await refusesBadWindows(`/1/mailings/${mailing}/members`);
    await refusesBadWindows(`/1/mailings/${mailing}/suppressed_members`);
  });
});

describe('GET /members/{id}/mailings', () => {
  const page = (query: Record<string, string> = {}) => ok(s, 'GET', '/1/members/1/mailings', { query });
  const mailingIds = (list: { mailing_id: number }[]) => list.map((h) => h.mailing_id);
  const newestFirst = () => [...sent].reverse();

  it('answers the newest 500 mailings by default, newest mailing first, in the history item shape', async () => {
    const first = await page();
    expect(mailingIds(first)).toEqual(newestFirst().slice(0, 500));
    expect(first[0]).toEqual({
      delivery_type: 'h',
      clicked: null,
      opened: null,
      delivery_ts: atD(T0),
      sent: atD(T0),
      forwarded: null,
      shared: null,
      mailing_id: sent[504],
      name: 'News 505',
      subject: 'News 505 for M1',
      account_id: 1,
    });
  });

  it('answers exact windows and the short last page', async () => {
    expect(mailingIds(await page({ start: '2', end: '5' }))).toEqual(newestFirst().slice(2, 5));
    expect(mailingIds(await page({ start: '500' }))).toEqual(sent.slice(0, 5).reverse());
    expect(mailingIds(await page({ start: '504', end: '505' }))).toEqual([sent[0]]);
    expect(await page({ start: '505' })).toEqual([]);
    expect(await page({ start: '9999', end: '10000' })).toEqual([]);
  });

  it('refuses windows that end before they start or hold more than 500', async () => {
    await refusesBadWindows('/1/members/1/mailings');
  });
});

describe('allPages (the CLI prints whole lists)', () => {
  /** A transport over the route table that records the windows asked for. */
  const transport = (request: Transport['request']): Transport => ({
    request,
    download: () => Promise.reject(new Error('no downloads here')),
    target: 'test',
    runsJobs: false,
    close: async () => {},
  });
  const api = (asked: string[]) =>
    new Api(
      transport(async (call: ApiCall) => {
        const query = queryString(call.query);
        asked.push(`${query.start}-${query.end}`);
        return ok(s, call.method, call.path, { query });
      }),
      1,
    );

  it('pages through with start and end until a short page', async () => {
    const asked: string[] = [];
    const all = await allPages<{ member_id: number }>(api(asked), `/mailings/${mailing}/members`);
    expect(memberIds(all)).toEqual([...ids(1, 9), ...ids(11, 600)]);
    expect(asked).toEqual(['0-500', '500-1000']);
  });

  it('keeps the other query parameters, and asks once more after a full last page', async () => {
    const asked: string[] = [];
    expect(memberIds(await allPages(api(asked), `/members/imports/${importA}/members`, { added_only: true }, 299))).toEqual([
      ...ids(1, 9),
      ...ids(11, 600),
    ]);
    expect(asked).toEqual(['0-299', '299-598', '598-897']);
    const history: string[] = [];
    expect(await allPages(api(history), '/members/1/mailings', {}, 101)).toHaveLength(505);
    expect(history).toEqual(['0-101', '101-202', '202-303', '303-404', '404-505', '505-606']);
  });

  it('takes a page longer than asked for, or one that repeats the last, as a service that ignores windows', async () => {
    const whole = Array.from({ length: 4 }, (_, i) => ({ id: i }));
    const asked: string[] = [];
    const ignoring = new Api(
      transport(async (call: ApiCall) => (asked.push(`${call.query?.start}-${call.query?.end}`), whole)),
      1,
    );
    expect(await allPages(ignoring, '/x', {}, 3)).toEqual(whole);
    expect(await allPages(ignoring, '/x', {}, 4)).toEqual(whole);
    expect(asked).toEqual(['0-3', '0-4', '4-8']);
  });
});
