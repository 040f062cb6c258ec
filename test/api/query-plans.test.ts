/**
 * Query plans of the list routes (DESIGN.md "Scale"): a page must cost the same at 1k
 * and at 1M members, so no statement a list runs may sort its rows
 * (`USE TEMP B-TREE FOR ORDER BY`) or read a whole large table row by row. SQLite
 * prints `SCAN t` for a full table scan, `SCAN t USING [COVERING] INDEX i` for a walk
 * in index order (a window stops it early) and `SEARCH t USING …` for a lookup by key;
 * only the first is refused. Each route is called on a small account, the statements
 * it ran are captured, and `EXPLAIN QUERY PLAN` is asked of every read among them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { addMember, createField, createGroups, ok } from './util.js';

/** Tables that grow with the audience (members) or with what is sent to it. */
const LARGE_TABLES = ['members', 'mailing_messages', 'import_ledger'];

let s: TestService;
const id: Record<string, number> = {};

beforeAll(async () => {
  s = makeService(undefined, { trace: true });
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  await createField(s, { shortcut_name: 'city', field_type: 'text' });
  [id.gold, id.silver] = await createGroups(s, 'Gold', 'Silver');
  // Members through a streamed import, so the import has ledger ranges.
  const imp = await ok(s, 'POST', '/1/members/imports', { body: { group_ids: [id.gold] } });
  id.import = imp.import_id;
  await ok(s, 'POST', `/1/members/imports/${id.import}/rows`, {
    body: {
      members: [
        { email: 'ann@example.com', first_name: 'Ann', city: 'Oslo' },
        { email: 'bob@example.com', city: 'Bergen' },
        { email: 'cid@example.com', first_name: 'Cid', city: 'Oslo' },
        { email: 'dot@example.com' },
      ],
    },
  });
  await ok(s, 'POST', `/1/members/imports/${id.import}/finish`, { body: {} });
  const byEmail = async (email: string) => (await ok(s, 'GET', `/1/members/email/${email}`)).member_id as number;
  [id.ann, id.bob, id.cid, id.dot] = await Promise.all(['ann', 'bob', 'cid', 'dot'].map((n) => byEmail(`${n}@example.com`)));
  id.eve = await addMember(s, 'eve@example.com', { group_ids: [id.silver] });
  id.gone = await addMember(s, 'gone@example.com', { group_ids: [id.silver] });
  await ok(s, 'DELETE', `/1/members/${id.gone}`);
  await ok(s, 'PUT', '/1/members/status', { body: { member_ids: [id.dot], status_to: 'o' } });

  id.sub = (await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News' } })).subscription_id;
  await ok(s, 'POST', `/1/subscriptions/${id.sub}/members/bulk`, { body: { member_ids: [id.ann, id.bob, id.eve] } });
  await ok(s, 'PUT', `/1/subscriptions/${id.sub}/members/${id.bob}/optout`);
  id.search = (await ok(s, 'POST', '/1/searches', { body: { name: 'Oslo', criteria: ['member_field:city', 'eq', 'Oslo'] } }));

  id.mailing = (
    await ok(s, 'POST', '/1/mailings', {
      body: {
        name: 'Spring',
        subject: 'Hi [% member:first_name | default:"friend" %]',
        sender: 'shop@example.com',
        html_body: '<p>Hi</p><a href="[% optout_url %]">opt out</a>',
        recipient_groups: [id.gold],
        recipient_subscriptions: [id.sub],
        recipient_searches: [id.search],
        recipient_member_ids: [id.eve],
        suppressed_member_ids: [id.cid],
        heads_up_emails: ['boss@example.com'],
      },
    })
  ).mailing_id;
  for (let i = 0; i < 100 && advanceJobs(s.db, s.clock, 1_000); i++);
  expect((await ok(s, 'GET', `/1/mailings/${id.mailing}`)).mailing_status).toBe('c');
});
afterAll(() => s.close());

/** The plan lines of a statement that read a large table whole, or sorted for ORDER BY. */
function offending(sql: string): string[] {
  const plan = s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
  // `FROM members m` plans as `SCAN m`: the aliases of the large tables count too.
  const names = new Set(LARGE_TABLES);
  for (const m of sql.matchAll(new RegExp(`\\b(?:${LARGE_TABLES.join('|')})\\s+(?:AS\\s+)?([a-z_]\\w*)`, 'gi')))
    if (!/^(WHERE|ON|JOIN|LEFT|INNER|CROSS|USING|ORDER|GROUP|LIMIT|INDEXED|NOT|SET|VALUES|WINDOW|UNION|EXCEPT|INTERSECT)$/i.test(m[1]))
      names.add(m[1]);
  return plan
    .map((p) => p.detail)
    .filter((d) => {
      if (d.includes('USE TEMP B-TREE FOR ORDER BY')) return true;
      const scan = /^SCAN (\w+)/.exec(d);
      return !!scan && names.has(scan[1]) && !/ USING (COVERING )?INDEX /.test(d);
    });
}

interface ListRoute {
  /** The path, with `{name}` standing for the seeded record of that name. */
  path: string;
  query?: Record<string, string>;
  /** The list is its owner's to fix (issue 9): a one-line switch back on when it lands. */
  skip?: string;
}

const ROUTES: ListRoute[] = [
  // Members, groups, subscriptions and searches (owned elsewhere).
  { path: '/1/members' },
  { path: '/1/members', query: { deleted: 'true' } },
  { path: '/1/members', query: { deleted_only: 'true' } },
  { path: '/1/members', query: { count: 'true' } },
  { path: '/1/groups' },
  { path: '/1/groups/{gold}' },
  { path: '/1/groups/{gold}/members' },
  { path: '/1/members/{ann}/groups' },
  { path: '/1/subscriptions/{sub}/members' },
  { path: '/1/subscriptions/{sub}/optouts' },
  { path: '/1/searches/{search}' },
  { path: '/1/searches/{search}/members' },
  // A member's mailing history, a mailing's lists, an import's members.
  { path: '/1/members/{ann}/mailings' },
  { path: '/1/members/{ann}/mailings', query: { start: '1', end: '3' } },
  { path: '/1/mailings/{mailing}/members' },
  { path: '/1/mailings/{mailing}/members', query: { start: '1', end: '2' } },
  { path: '/1/mailings/{mailing}/suppressed_members' },
  { path: '/1/mailings/{mailing}' },
  { path: '/1/mailings/{mailing}/groups' },
  { path: '/1/mailings/{mailing}/subscriptions' },
  { path: '/1/mailings/{mailing}/searches' },
  { path: '/1/mailings/{mailing}/suppressed_searches' },
  { path: '/1/mailings/{mailing}/headsup' },
  { path: '/1/mailings/{mailing}/messages/{ann}' },
  { path: '/1/members/imports' },
  { path: '/1/members/imports/{import}/members' },
  { path: '/1/members/imports/{import}/members', query: { start: '2', end: '4' } },
  { path: '/1/members/imports/{import}/members', query: { added_only: 'true' } },
  { path: '/1/members/imports/{import}/members', query: { added_to_groups: '1' } },
  // Field relationships (a field belongs to one at most, so they are few).
  { path: '/1/fields/relationships' },
];

describe('list routes read in index order, without a sort or a scan of the audience', () => {
  for (const r of ROUTES)
    (r.skip ? it.skip : it)(`GET ${r.path}${r.query ? `?${new URLSearchParams(r.query)}` : ''}`, async () => {
      const path = r.path.replace(/\{(\w+)\}/g, (_, name: string) => String(id[name]));
      // Called once before the capture, so reads memoized per database generation (the
      // field catalog) are not in it: they cost the same whatever the audience.
      await s.call('GET', path, { query: r.query });
      const { result, statements } = await s.capture(() => s.call('GET', path, { query: r.query }));
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      const reads = statements.filter((sql) => /^\s*(SELECT|WITH)\b/i.test(sql));
      expect(reads.length).toBeGreaterThan(0);
      for (const sql of reads) {
        const bad = offending(sql);
        expect(bad, `${sql.replace(/\s+/g, ' ').trim()}\n  plan: ${bad.join('; ')}`).toEqual([]);
      }
    });
});

describe('the plan check itself', () => {
  it('refuses a full scan of a large table (by name or alias) and a sort, and lets key lookups and index order through', () => {
    expect(offending("SELECT * FROM members m WHERE m.email LIKE 'a%'")).toEqual(['SCAN m']);
    expect(offending("SELECT * FROM mailing_messages WHERE email = 'a@example.com'")).toEqual(['SCAN mailing_messages']);
    expect(offending('SELECT email FROM members ORDER BY email')).toEqual(['USE TEMP B-TREE FOR ORDER BY']);
    expect(offending('SELECT member_id FROM members m WHERE member_id BETWEEN 1 AND 3')).toEqual([]);
    expect(offending('SELECT email FROM members WHERE account_id = 1 ORDER BY email')).toEqual([]);
  });
});
