#!/usr/bin/env node
// Scale figure of issue 9 ("Reads at a million members"): does a read that answers one
// page or one record cost the same at 1,000 and at N (default 1,000,000) members?
//
//   every one-page or one-record route through `amsg serve`, median at N / at 1k     goal ≤ 3×
//   the deep page (start = N-500) at N / the first page at N                            goal ≤ 10×
//   local `amsg members list` (first page) on the N database vs `node -e 0`             goal ≤ 2.0×
//   the same against `amsg serve` of the N database (remote mode)  vs `node -e 0`       goal ≤ 2.0×
//
// Both databases are built the same way: the bench CSV with three groups imported by
// the CLI, a subscription of the import's members, a mailing sent to the group of the
// member in the middle (also named with --to, so the mailing's member list has one row)
// and a saved search (city eq Oslo). Every id asked for is picked the same way in both.
// For each route that misses its goal, the statements one request runs are logged
// (AMSG_SQL_LOG, on a second server: logging slows the timed one) and their
// EXPLAIN QUERY PLAN is printed, with the time each takes run alone.
//
//   node bench/scale.js                       (after `npm run build`)
//   BENCH_SCALE_N=100000 node bench/scale.js  (quick)
//   BENCH_SCALE_CACHE=/var/tmp/amsg-scale node bench/scale.js   (keeps the databases between runs)
//   AMSG_BENCH_BIN=/tmp/x/bin/amsg.js node bench/scale.js       (a private build)
//
// Knobs (environment): BENCH_SCALE_N (default 1000000), BENCH_SCALE_REQUESTS (timed
// requests per route and size, default 15), BENCH_SCALE_WARMUP (default 3),
// BENCH_SCALE_ROUTE_SECONDS (a route stops early, after at least 5 requests, once its
// requests have taken this long; default 8), BENCH_SCALE_RUNS (CLI runs per side,
// default 10), BENCH_SCALE_CACHE (a directory to keep the databases in; delete it after
// a change to how they are built or to the import).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { envInt, median, stopChild, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const NODE = process.execPath;

function fail(message) {
  process.stderr.write(`bench/scale: ${message}\n`);
  process.exit(1);
}
const int = (name, dflt) => envInt(name, dflt, fail);

const SMALL = 1000;
const BIG = int('BENCH_SCALE_N', 1_000_000);
const REQUESTS = int('BENCH_SCALE_REQUESTS', 15);
const WARMUP = int('BENCH_SCALE_WARMUP', 3);
const ROUTE_SECONDS = int('BENCH_SCALE_ROUTE_SECONDS', 8);
const CLI_RUNS = int('BENCH_SCALE_RUNS', 10);
const CACHE = process.env.BENCH_SCALE_CACHE || undefined;
const PAGE = 500;
const GOAL = 3;
const DEEP_GOAL = 10;
const CLI_GOAL = 2;
// Bump when the databases are built differently, so a cache is rebuilt.
const SETUP_VERSION = 3;

if (BIG < 2 * SMALL) fail(`BENCH_SCALE_N must be at least ${2 * SMALL}, got ${BIG}`);
if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) fail('dist/ is missing: run `npm run build` first');
const Database = createRequire(import.meta.url)('better-sqlite3');

// ---------------------------------------------------------------- cleanup

const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-scale-'));
const children = new Set();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.once(signal, () => {
    process.stderr.write(`\nbench/scale: ${signal}, cleaning up\n`);
    process.exit(130);
  });
process.on('unhandledRejection', (err) => fail(err?.stack ?? String(err)));

const started = Date.now();
const say = (m) => process.stderr.write(`bench/scale: ${m} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
const label = (n) => (n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 100 === 0 ? `${n / 1e3}k` : String(n));

// No AMSG_* settings or config profile of the person running the bench.
const CONFIG_HOME = join(TMP, 'config');
mkdirSync(CONFIG_HOME);
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AMSG_') && k !== 'NODE_OPTIONS'));
const ENV = { ...baseEnv, XDG_CONFIG_HOME: CONFIG_HOME, AMSG_QUIET: '1' };

/** Runs `amsg ...args` on a local database to completion; answers stdout (JSON parsed with json). */
function amsg(db, args, { json = false } = {}) {
  const r = spawnSync(NODE, [BIN, ...args], {
    env: { ...ENV, AMSG_DB: db },
    encoding: 'utf8',
    cwd: TMP,
    timeout: 600_000,
    maxBuffer: 64 << 20,
  });
  if (r.error) fail(`amsg ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) fail(`amsg ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr.slice(-2000)}`);
  return json ? JSON.parse(r.stdout) : r.stdout;
}

// ---------------------------------------------------------------- the databases

const HTML =
  '<p>Hello [% member:first_name | default:"friend" %] in [% member:city %]</p><p><a href="[% optout_url %]">Unsubscribe</a></p>';

/**
 * Builds (or finds in the cache) the n-member database; answers its file, key pair and
 * the ids the timed requests use.
 */
async function database(n) {
  const dir = CACHE ?? TMP;
  mkdirSync(dir, { recursive: true });
  const db = join(dir, `scale-${n}.db`);
  const metaFile = join(dir, `scale-${n}.json`);
  if (CACHE && existsSync(metaFile) && existsSync(db)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.version === SETUP_VERSION && meta.n === n) {
      say(`reusing the ${label(n)} database in ${dir}`);
      return { ...meta, db, cached: true };
    }
  }
  for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  rmSync(metaFile, { force: true });
  const t0 = Date.now();
  const csv = join(TMP, `members-${n}.csv`);
  say(`building the ${label(n)} database: CSV, init, import`);
  await writeMembersCsv(csv, n, { groups: 3 });
  const init = amsg(db, ['init', '--json'], { json: true });
  if (!init.public_key || !init.private_key) fail(`amsg init --json answered no key pair: ${JSON.stringify(init)}`);
  amsg(db, ['fields', 'create', 'city', '--type', 'text']);
  amsg(db, ['fields', 'create', 'birthday', '--type', 'date']);
  amsg(db, ['fields', 'create', 'score', '--type', 'numeric']);
  const imp = amsg(db, ['members', 'import', csv, '--json', '-q'], { json: true });
  if (imp.num_members_added !== n) fail(`the import of ${n} rows added ${imp.num_members_added}: ${JSON.stringify(imp).slice(0, 500)}`);
  rmSync(csv, { force: true });

  // The member in the middle, at a row in the first group and in Oslo (i % 24 = 0).
  const half = Math.floor(n / 2);
  const email = `user${half - (half % 24)}@example.com`;
  const member = amsg(db, ['api', 'call', 'GET', `/1/members/email/${email}`], { json: true });
  const groups = amsg(db, ['api', 'call', 'GET', `/1/members/${member.member_id}/groups`], { json: true });
  if (groups.length !== 1) fail(`${email} is in ${groups.length} groups, not 1`);
  const group = groups[0].member_group_id;

  say(`building the ${label(n)} database: subscription, mailing, search`);
  const sub = amsg(db, ['subscriptions', 'create', 'Weekly', '--json'], { json: true });
  amsg(db, ['subscriptions', 'add-members', String(sub.subscription_id), '--import', String(imp.import_id)]);
  const html = join(TMP, 'mailing.html');
  writeFileSync(html, HTML);
  const mailing = amsg(
    db,
    [
      'mailings',
      'create',
      '--name',
      'Spring',
      '--subject',
      'Hello [% member:first_name %]',
      '--sender',
      'shop@example.com',
      '--html',
      html,
      '--group',
      String(group),
      '--to',
      email,
      '--wait',
      '--json',
    ],
    { json: true },
  );
  if (mailing.mailing_status !== 'c') fail(`the mailing ended in status ${mailing.mailing_status}, not c`);
  const activity = seedActivity(db, n, { member: member.member_id, email, group });
  // Saved last: a search's stored result is refreshed in the background once anything is
  // written after it, which would run in the timed servers.
  const search = amsg(db, ['searches', 'create', 'Oslo', '--criteria', '["member_field:city", "eq", "Oslo"]', '--json'], { json: true });

  const meta = {
    version: SETUP_VERSION,
    n,
    key: `${init.public_key}:${init.private_key}`,
    ids: {
      member: member.member_id,
      email,
      group,
      import: imp.import_id,
      subscription: sub.subscription_id,
      // `searches create --json` answers the bare id (it once answered the record).
      search: typeof search === 'number' ? search : search.search_id,
      mailing: mailing.mailing_id,
      ...activity,
    },
    recipients: mailing.recipient_count,
    buildSeconds: (Date.now() - t0) / 1000,
  };
  writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return { ...meta, db };
}

/** `amsg api call` on a local database, the answer parsed. */
const call = (db, method, path, data) =>
  amsg(db, ['api', 'call', method, path, ...(data === undefined ? [] : ['--data', JSON.stringify(data)])], { json: true });

/**
 * The records of last round's lists, in proportion to the audience so a page is read
 * from a table that grew with it: an event and a touchpoint for every member, an ingested
 * event and its workflow run for every tenth, a webhook event and delivery for every
 * tenth, an SMS campaign sent to the mailing's group (the send itself, by the job
 * runner) and clicked by every tenth recipient. Bulk rows go in by SQL (the service's
 * routes take ten events a call), with the triggers that keep the counts; the records
 * each route names are made through the CLI. Sub-accounts and field relationships are a
 * handful at both sizes: what is measured is that the audience does not slow them.
 */
function seedActivity(db, n, ids) {
  say(`building the ${label(n)} database: events, touchpoints, workflow runs, webhooks, SMS, sub-accounts, relationships`);
  const eventType = call(db, 'POST', '/1/events', { event_type: 'purchase', display_name: 'Purchase' }).event_type_id;
  const touchpointType = call(db, 'POST', '/1/touchpoints', { type_name: 'web', display_name: 'Web' }).touchpoint_type_id;
  const workflow = call(db, 'POST', '/1/workflows', {
    name: 'Buyers',
    match: { type: 'purchase' },
    actions: [{ type: 'record_event', event_type_id: eventType }],
  });
  const webhook = call(db, 'POST', '/1/webhooks', { url: 'http://127.0.0.1:9/hook', event: 'member_update' });
  call(db, 'POST', '/1/webhooks', { url: 'http://127.0.0.1:9/groups', event: 'group_create' });
  call(db, 'PUT', `/1/members/${ids.member}`, { sms: { phone_number: '+15550000001', promotional_status: 'a' } });

  const sql = new Database(db);
  sql.pragma('foreign_keys = ON');
  const at = '2026-11-01T12:00:00.000000';
  sql.transaction(() => {
    sql
      .prepare(`INSERT INTO member_events (account_id, member_id, event_type_id, event_monetary_value, event_timestamp, inserted_at)
                 SELECT 1, member_id, ?, member_id % 100, ?, ? FROM members WHERE account_id = 1 ORDER BY member_id`)
      .run(eventType, at, at);
    sql
      .prepare(`INSERT INTO touchpoints (account_id, member_id, touchpoint_type_id, touchpoint_timestamp, inserted_at)
                 SELECT 1, member_id, ?, ?, ? FROM members WHERE account_id = 1 ORDER BY member_id`)
      .run(touchpointType, at, at);
    sql
      .prepare(`INSERT INTO inbound_events (inbound_id, account_id, email, payload, received_at, status, processed_at, outcome, member_id, workflow_ids)
                 SELECT member_id, 1, email, '{"type":"purchase"}', ?, 'o', ?, 'ran', member_id, json_array(?)
                   FROM members WHERE account_id = 1 AND member_id % 10 = 0 ORDER BY member_id`)
      .run(at, at, workflow);
    sql
      .prepare(`INSERT INTO workflow_runs (workflow_id, account_id, inbound_id, member_id, ran_at, actions)
                 SELECT ?, 1, inbound_id, member_id, ?, '[{"type":"record_event","ok":true}]' FROM inbound_events ORDER BY inbound_id`)
      .run(workflow, at);
    sql
      .prepare(`INSERT INTO webhook_events (event_id, account_id, event, data, occurred_at)
                 SELECT member_id, 1, 'member_update', json_object('members', json_array(json_object('member_id', member_id, 'email', email)), 'member_count', 1), ?
                   FROM members WHERE account_id = 1 AND member_id % 10 = 0 ORDER BY member_id`)
      .run(at);
    sql
      .prepare(`INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, status, attempts, last_status_code, created_at, delivered_at)
                 SELECT 1, ?, event_id, 'o', 1, 200, ?, ? FROM webhook_events ORDER BY event_id`)
      .run(webhook, at, at);
    // Phones for the mailing's group, so the campaign below goes to a third of the audience.
    sql
      .prepare(`UPDATE members SET sms_phone_number = '+1555' || printf('%07d', member_id), sms_promotional_status = 'a'
                  WHERE member_id IN (SELECT member_id FROM group_members WHERE member_group_id = ?) AND sms_phone_number IS NULL`)
      .run(ids.group);
  })();
  sql.close();

  // A member's own records and an ingested event through the service, processed by the job runner.
  call(db, 'POST', '/1/events/members', {
    events: [1, 2, 3].map((v) => ({ member_id: ids.member, event_type_id: eventType, event_monetary_value: v })),
  });
  call(db, 'POST', '/1/touchpoints/members', { touchpoints: [{ member_id: ids.member, touchpoint_type_id: touchpointType }] });
  amsg(db, ['init', '--hq']);
  for (const name of ['North', 'South', 'East', 'West', 'Central']) call(db, 'POST', '/1/enterprise/subaccount', { account_name: name });
  const region = call(db, 'POST', '/1/fields', {
    shortcut_name: 'region',
    display_name: 'Region',
    field_type: 'text',
    widget_type: 'select one',
    options: ['EU', 'US'],
  });
  const office = call(db, 'POST', '/1/fields', {
    shortcut_name: 'office',
    display_name: 'Office',
    field_type: 'text',
    widget_type: 'radio',
    options: ['Oslo', 'Paris', 'Austin'],
  });
  call(db, 'POST', '/1/fields/relationships', {
    relationship_name: 'Region → Office',
    parent_field_id: region,
    child_field_id: office,
    options: { EU: ['Oslo', 'Paris'], US: ['Austin'] },
  });

  const campaign = call(db, 'POST', '/1/sms/campaigns', {
    sms_campaign_name: 'Sale',
    message: 'Sale today https://shop.example.com/',
    from_phone_number: '+15555550100',
    recipients: { groups: [ids.group] },
    is_promotional: true,
    shorten_links: true,
  });
  call(db, 'POST', `/1/sms/campaigns/${campaign}/send`, {});
  // Each local call advances the send for its budget after it.
  let status = '';
  for (let i = 0; i < 2000 && status !== 'c'; i++) status = call(db, 'GET', `/1/sms/campaigns/${campaign}`).send_status;
  if (status !== 'c') fail(`the SMS campaign ended in status ${status}, not c`);
  const clicks = new Database(db);
  clicks.pragma('foreign_keys = ON');
  clicks
    .prepare(`INSERT INTO sms_clicks (sms_campaign_id, member_id, sms_link_id, to_phone_number, click_timestamp)
                  SELECT d.sms_campaign_id, d.member_id, (SELECT min(sms_link_id) FROM sms_links l WHERE l.sms_campaign_id = d.sms_campaign_id), d.to_phone_number, ?
                    FROM sms_deliveries d WHERE d.sms_campaign_id = ? AND d.member_id % 10 = 0 ORDER BY d.member_id`)
    .run(at, campaign);
  clicks.close();
  return { eventType, touchpointType, workflow, webhook, campaign };
}

// ---------------------------------------------------------------- servers and requests

/** Starts `amsg serve` on a database; resolves once it prints its base URL. */
function serve(db, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [BIN, 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0'], {
      env: { ...ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: TMP,
    });
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Generous: a cached database made by an older build is migrated on open.
    const timer = setTimeout(() => reject(new Error(`amsg serve --db ${db} printed no URL within 300 s\n${stderr}`)), 300_000);
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const url = line.trim();
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) return reject(new Error(`amsg serve printed "${url}", not an http://127.0.0.1 URL`));
      resolve({ child, url, agent: new Agent({ keepAlive: true, maxSockets: 1 }) });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`amsg serve exited (${code ?? signal})\n${stderr}`));
    });
  });
}

function stop(server) {
  server.agent.destroy();
  return stopChild(server.child, children);
}

/** One GET on a kept-alive connection: status, body and wall ms until the last byte. */
function get(server, path, key) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = httpRequest(
      `${server.url}${path}`,
      { agent: server.agent, headers: key ? { authorization: `Basic ${Buffer.from(key).toString('base64')}` } : {} },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), ms: Number(process.hrtime.bigint() - t0) / 1e6 }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(120_000, () => req.destroy(new Error(`GET ${path} took over 120 s`)));
    req.on('error', reject);
    req.end();
  });
}

// ---------------------------------------------------------------- the routes

// One row per route. `path` fills in one database's ids; `template` is the route's path in
// the OpenAPI document: a `list` route is asked for the window [start, end) when the
// document says it takes `start`, and for its whole list otherwise (noted in the table).
const ROUTES = [
  { name: 'members, first page', template: '/{account_id}/members', path: () => '/1/members', list: true },
  { name: 'members, count', template: '/{account_id}/members', path: () => '/1/members?count=true' },
  { name: 'members, deep page', template: '/{account_id}/members', path: () => '/1/members', list: true, deep: true },
  { name: 'member', template: '/{account_id}/members/{member_id}', path: (i) => `/1/members/${i.member}` },
  {
    name: 'member by email',
    template: '/{account_id}/members/email/{email}',
    path: (i) => `/1/members/email/${encodeURIComponent(i.email)}`,
  },
  {
    name: "member's groups",
    template: '/{account_id}/members/{member_id}/groups',
    path: (i) => `/1/members/${i.member}/groups`,
    list: true,
  },
  {
    name: "member's mailings",
    template: '/{account_id}/members/{member_id}/mailings',
    path: (i) => `/1/members/${i.member}/mailings`,
    list: true,
  },
  { name: 'groups', template: '/{account_id}/groups', path: () => '/1/groups', list: true },
  { name: 'group', template: '/{account_id}/groups/{member_group_id}', path: (i) => `/1/groups/${i.group}` },
  {
    name: "group's members",
    template: '/{account_id}/groups/{member_group_id}/members',
    path: (i) => `/1/groups/${i.group}/members`,
    list: true,
  },
  { name: 'subscription', template: '/{account_id}/subscriptions/{subscription_id}', path: (i) => `/1/subscriptions/${i.subscription}` },
  {
    name: "subscription's members",
    template: '/{account_id}/subscriptions/{subscription_id}/members',
    path: (i) => `/1/subscriptions/${i.subscription}/members`,
    list: true,
  },
  { name: 'search', template: '/{account_id}/searches/{search_id}', path: (i) => `/1/searches/${i.search}` },
  {
    name: "search's members",
    template: '/{account_id}/searches/{search_id}/members',
    path: (i) => `/1/searches/${i.search}/members`,
    list: true,
  },
  { name: 'mailing', template: '/{account_id}/mailings/{mailing_id}', path: (i) => `/1/mailings/${i.mailing}` },
  {
    name: "mailing's members",
    template: '/{account_id}/mailings/{mailing_id}/members',
    path: (i) => `/1/mailings/${i.mailing}/members`,
    list: true,
  },
  { name: 'import', template: '/{account_id}/members/imports/{import_id}', path: (i) => `/1/members/imports/${i.import}` },
  {
    name: "import's members",
    template: '/{account_id}/members/imports/{import_id}/members',
    path: (i) => `/1/members/imports/${i.import}/members`,
    list: true,
  },
  { name: 'fields', template: '/{account_id}/fields', path: () => '/1/fields', list: true },
  // Last round's lists.
  {
    name: "member's events",
    template: '/{account_id}/events/members/{member_id}',
    path: (i) => `/1/events/members/${i.member}`,
    list: true,
  },
  {
    name: "member's events, count",
    template: '/{account_id}/events/members/{member_id}',
    path: (i) => `/1/events/members/${i.member}?count=true`,
  },
  {
    name: "member's touchpoints",
    template: '/{account_id}/touchpoints/members/{member_id}',
    path: (i) => `/1/touchpoints/members/${i.member}`,
    list: true,
  },
  {
    name: 'workflow runs',
    template: '/{account_id}/workflows/{workflow_id}/runs',
    path: (i) => `/1/workflows/${i.workflow}/runs`,
    list: true,
  },
  {
    name: 'SMS deliveries',
    template: '/{account_id}/sms/campaigns/{campaign_id}/deliveries',
    path: (i) => `/1/sms/campaigns/${i.campaign}/deliveries`,
    list: true,
  },
  {
    name: 'SMS deliveries, count',
    template: '/{account_id}/sms/campaigns/{campaign_id}/deliveries',
    path: (i) => `/1/sms/campaigns/${i.campaign}/deliveries?count=true`,
  },
  {
    name: 'SMS clicks',
    template: '/{account_id}/sms/campaigns/{campaign_id}/clicks',
    path: (i) => `/1/sms/campaigns/${i.campaign}/clicks`,
    list: true,
  },
  { name: 'webhooks', template: '/{account_id}/webhooks', path: () => '/1/webhooks', list: true },
  { name: 'webhook deliveries', template: '/{account_id}/webhooks/deliveries', path: () => '/1/webhooks/deliveries', list: true },
  { name: 'inbound events', template: '/{account_id}/events/inbound', path: () => '/1/events/inbound', list: true },
  {
    name: 'inbound events, one outcome',
    template: '/{account_id}/events/inbound',
    path: () => '/1/events/inbound?outcome=ran',
    list: true,
  },
  { name: 'response reports', template: '/{account_id}/response', path: () => '/1/response', list: true },
  {
    name: "a mailing's sends",
    template: '/{account_id}/response/{mailing_id}/sends',
    path: (i) => `/1/response/${i.mailing}/sends`,
    list: true,
  },
  { name: 'sub-accounts', template: '/{parent_account_id}/enterprise/subaccounts', path: () => '/1/enterprise/subaccounts', list: true },
  { name: 'field relationships', template: '/{account_id}/fields/relationships', path: () => '/1/fields/relationships', list: true },
];

/** The request path of a route on one database, with a window of `size` when the route takes one. */
function pathOf(route, db, windowed, size = PAGE) {
  const base = route.path(db.ids);
  if (!route.list || !windowed) return base;
  const start = route.deep ? db.n - size : 0;
  return `${base}${base.includes('?') ? '&' : '?'}start=${start}&end=${start + size}`;
}

const rowsOf = (body) => {
  try {
    const v = JSON.parse(body);
    // A list wrapped in an object (`{"subaccounts": [...]}`) counts its records.
    const wrapped = v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).length === 1 && Array.isArray(Object.values(v)[0]);
    return Array.isArray(v) ? String(v.length) : wrapped ? String(Object.values(v)[0].length) : typeof v === 'number' ? 'int' : '1';
  } catch {
    return '?';
  }
};

/**
 * Times one route on both databases: warm-up, then requests interleaved (small, big;
 * big, small; …) so noise hits both alike. Stops early, after at least five, once the
 * requests have taken ROUTE_SECONDS.
 */
async function timeRoute(_route, paths, servers, dbs) {
  const sides = ['small', 'big'];
  const t0 = Date.now();
  const last = {};
  for (let i = 0; i < WARMUP && (i === 0 || Date.now() - t0 < (ROUTE_SECONDS * 1000) / 4); i++)
    for (const side of sides) last[side] = await get(servers[side], paths[side], dbs[side].key);
  for (const side of sides)
    if (last[side].status !== 200)
      return { error: `${side === 'small' ? label(SMALL) : label(BIG)}: HTTP ${last[side].status} ${last[side].body.slice(0, 200)}` };
  const ms = { small: [], big: [] };
  const t1 = Date.now();
  for (let i = 0; i < REQUESTS && (i < 5 || Date.now() - t1 < ROUTE_SECONDS * 1000); i++)
    for (const side of i % 2 ? [...sides].reverse() : sides) {
      const r = await get(servers[side], paths[side], dbs[side].key);
      if (r.status !== 200) return { error: `${side}: HTTP ${r.status} ${r.body.slice(0, 200)}` };
      ms[side].push(r.ms);
    }
  return {
    small: median(ms.small),
    big: median(ms.big),
    count: ms.big.length,
    rows: `${rowsOf(last.small.body)}/${rowsOf(last.big.body)}`,
  };
}

// ---------------------------------------------------------------- the CLI

/** Wall ms of one `node ...args` run, output discarded; must exit 0. */
function timeOnce(args, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(NODE, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000, cwd: TMP });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) fail(`node ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) fail(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${String(r.stderr).slice(-2000)}`);
  return ms;
}

/** Medians of several commands, each run CLI_RUNS times, the order rotating every round (after two warm-up rounds). */
function compareRuns(commands) {
  const all = commands.map(() => []);
  for (let round = -2; round < CLI_RUNS; round++)
    for (let k = 0; k < commands.length; k++) {
      const c = (k + Math.max(round, 0)) % commands.length;
      const ms = timeOnce(commands[c].args, commands[c].env);
      if (round >= 0) all[c].push(ms);
    }
  return all.map((xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }));
}

// ---------------------------------------------------------------- query plans

/** Statements of a line of the SQL log that are worth a plan: reads, not pragmas or a trigger's steps. */
const isRead = (line) => /^(SELECT|WITH)\b/i.test(line) && /\bFROM\b/i.test(line);
// The server's background jobs (due sends, queued imports) poll on a timer; their lines
// are told apart from a request's by their shape, timestamps aside.
const shape = (line) => line.replace(/'[^']*'|\d+(\.\d+)?/g, '#');

/** The statements the second of two identical requests ran (the first warms the memos, as the timed requests were warm). */
async function statementsOf(server, path, key, logFile, idle) {
  await get(server, path, key);
  const before = statSync(logFile).size;
  const r = await get(server, path, key);
  const text = readFileSync(logFile, 'utf8').slice(before);
  const lines = [...new Set(text.split('\n').filter((l) => isRead(l) && !idle.has(shape(l))))];
  return { status: r.status, lines };
}

function explain(db, sql) {
  let plan;
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all();
    const depth = new Map([[0, -1]]);
    plan = rows.map((r) => {
      const d = (depth.get(r.parent) ?? 0) + 1;
      depth.set(r.id, d);
      return `${'  '.repeat(d)}${r.detail}`;
    });
  } catch (err) {
    return { plan: [`(no plan: ${err.message})`] };
  }
  // Its own cost, run alone on the same file: which statement is the slow one.
  let cost = '';
  try {
    const stmt = db.prepare(sql);
    const t0 = process.hrtime.bigint();
    const n = stmt.reader ? stmt.all().length : 0;
    cost = `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(2)} ms alone, ${n} row${n === 1 ? '' : 's'}`;
  } catch (err) {
    // The log shortens long bound values (`'[1,9,…'/*+2329 bytes*/`): such a text plans but does not run.
    cost = /\/\*\+\d+ bytes\*\//.test(sql) ? 'not run: the log shortened a bound value' : `not run: ${err.message}`;
  }
  return { plan, cost };
}

// ---------------------------------------------------------------- the run

console.log(`amsg scale figure (issue 9) — ${label(SMALL)} vs ${label(BIG)} members, node ${process.version}`);
const small = await database(SMALL);
const big = await database(BIG);
const dbs = { small, big };
console.log(
  `databases: 3 groups, a subscription of the import, a mailing to one group, a saved search (city eq Oslo) ` +
    `(${small.recipients} / ${big.recipients} recipients); member ${small.ids.member} / ${big.ids.member} (${small.ids.email} / ${big.ids.email})` +
    `; built in ${small.buildSeconds.toFixed(0)} s / ${big.buildSeconds.toFixed(0)} s${big.cached ? ' (from the cache)' : ''}`,
);
console.log(
  `requests: median of up to ${REQUESTS} per route and size after ${WARMUP} warm-up, interleaved, one kept-alive connection each; ` +
    `pages of ${PAGE}, or at both sizes of as many as the ${label(SMALL)} list holds when it holds fewer than the ${label(BIG)} one; ` +
    `CLI: median of ${CLI_RUNS} runs per side, interleaved\n`,
);

say('starting amsg serve on both databases');
const servers = { small: await serve(small.db), big: await serve(big.db) };

// Which routes take a window today, from the service's own OpenAPI document.
const openapi = JSON.parse((await get(servers.big, '/openapi.json')).body);
const windowed = (route) => (openapi.paths[route.template]?.get?.parameters ?? []).some((p) => p.in === 'query' && p.name === 'start');

const results = [];
for (const route of ROUTES) {
  const w = windowed(route);
  // Both pages hold as many records: a list shorter at 1k than a page at N (a group, the
  // search) is asked for as many as the 1k one has, at both sizes, or the ratio would
  // time the encoding of more records.
  let size = PAGE;
  if (w && route.list && !route.deep) {
    const count = async (side) => {
      const r = await get(servers[side], pathOf(route, dbs[side], w), dbs[side].key);
      return r.status === 200 ? Number(rowsOf(r.body)) : NaN;
    };
    const [s, b] = [await count('small'), await count('big')];
    if (s > 0 && s < b) size = s;
  }
  const paths = { small: pathOf(route, small, w, size), big: pathOf(route, big, w, size) };
  say(`timing ${paths.big}`);
  results.push({ route, windowed: w, paths, ...(await timeRoute(route, paths, servers, dbs)) });
}

say('timing the CLI: node -e 0, local members list, remote members list');
const cli = compareRuns([
  { args: ['-e', '0'], env: ENV },
  { args: [BIN, 'members', 'list'], env: { ...ENV, AMSG_DB: big.db } },
  { args: [BIN, 'members', 'list'], env: { ...ENV, AMSG_BASE_URL: servers.big.url, AMSG_API_KEY: big.key } },
]);
await Promise.all([stop(servers.small), stop(servers.big)]);

// ---------------------------------------------------------------- verdicts

const first = results.find((r) => r.route.name === 'members, first page');
const deep = results.find((r) => r.route.deep);
for (const r of results) {
  if (r.error) r.pass = false;
  else if (r.route.deep) r.pass = !first.error && r.big / first.big <= DEEP_GOAL;
  else r.pass = r.big / r.small <= GOAL;
}

const ms = (v) => (v < 10 ? v.toFixed(2) : v.toFixed(1));
const HEAD = ['Route', `${label(SMALL)} (ms)`, `${label(BIG)} (ms)`, 'Rows', `${label(BIG)}/${label(SMALL)}`, 'Goal', 'Result'];
const rows = results.map((r) => {
  const name = `GET ${r.paths.big}${r.route.list && !r.windowed ? ' (no window)' : ''}`;
  if (r.error) return [name, '—', '—', '—', '—', r.route.deep ? `≤ ${DEEP_GOAL}× p1` : `≤ ${GOAL}×`, `FAIL (${r.error})`];
  const ratio = `${(r.big / r.small).toFixed(2)}×`;
  if (r.route.deep)
    return [
      name,
      ms(r.small),
      ms(r.big),
      r.rows,
      ratio,
      `≤ ${DEEP_GOAL}× first page`,
      `${r.pass ? 'pass' : 'FAIL'} (${(r.big / first.big).toFixed(1)}× first page)`,
    ];
  return [name, ms(r.small), ms(r.big), r.rows, ratio, `≤ ${GOAL}×`, r.pass ? 'pass' : 'FAIL'];
});
const node0 = cli[0].median;
const cliRows = [
  [`local \`amsg members list\` (${label(BIG)})`, cli[1]],
  [`remote \`amsg members list\` (amsg serve, ${label(BIG)})`, cli[2]],
].map(([name, c]) => [
  name,
  `node -e 0: ${ms(node0)} ms`,
  `${ms(c.median)} ms`,
  `${(c.median / node0).toFixed(2)}×`,
  `≤ ${CLI_GOAL}×`,
  c.median / node0 <= CLI_GOAL ? 'pass' : 'FAIL',
]);

function table(head, body) {
  const widths = head.map((h, c) => Math.max(h.length, ...body.map((r) => r[c].length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of body) console.log(line(r));
}
table(HEAD, rows);
const cut = results.filter((r) => r.count !== undefined && r.count < REQUESTS);
console.log(
  `\nrows: records answered at ${label(SMALL)}/${label(BIG)} (int: a count). ${REQUESTS} requests per route and size` +
    (cut.length
      ? `, fewer where BENCH_SCALE_ROUTE_SECONDS (${ROUTE_SECONDS} s) ran out: ${cut.map((r) => `${r.paths.big} ${r.count}`).join(', ')}`
      : ''),
);
if (deep && !deep.error && !first.error)
  console.log(
    `deep page vs first page at ${label(BIG)}: ${ms(deep.big)} ms / ${ms(first.big)} ms = ${(deep.big / first.big).toFixed(1)}×, goal ≤ ${DEEP_GOAL}×: ${deep.pass ? 'pass' : 'FAIL'}`,
  );
console.log();
table(['CLI figure', 'Baseline (median)', 'amsg (median)', 'Ratio', 'Goal', 'Result'], cliRows);
console.log(
  `  min–max: node -e 0 ${cli[0].min.toFixed(0)}–${cli[0].max.toFixed(0)} ms, local ${cli[1].min.toFixed(0)}–${cli[1].max.toFixed(0)} ms, remote ${cli[2].min.toFixed(0)}–${cli[2].max.toFixed(0)} ms`,
);
const failed = results.filter((r) => !r.pass).length + cliRows.filter((r) => r[5] === 'FAIL').length;
console.log(`\n${failed ? `${failed} of ${results.length + cliRows.length} figures FAIL` : 'every figure passes'}`);

const md = (cells) => `| ${cells.join(' | ')} |`;
console.log('\n--- markdown ---\n');
console.log(md(HEAD));
console.log(md(HEAD.map(() => '---')));
for (const r of rows) console.log(md(r.map((c, i) => (i === 0 ? `\`${c}\`` : c))));
console.log();
for (const r of cliRows) console.log(md(r));

// ---------------------------------------------------------------- plans of the failures

const failing = results.filter((r) => !r.pass);
if (failing.length) {
  say('query plans of the failing routes');
  const logFile = join(TMP, 'sql.log');
  writeFileSync(logFile, '');
  const logged = await serve(big.db, { AMSG_SQL_LOG: logFile });
  // What the server runs on its own (timers), to leave out of each request's statements.
  await new Promise((r) => setTimeout(r, 1500));
  const idle = new Set(readFileSync(logFile, 'utf8').split('\n').map(shape));
  const requests = [];
  try {
    for (const r of failing) requests.push({ r, ...(await statementsOf(logged, r.paths.big, big.key, logFile, idle)) });
  } finally {
    await stop(logged);
  }
  const ro = new Database(big.db, { readonly: true, fileMustExist: true });
  console.log(`\n--- EXPLAIN QUERY PLAN of each read a failing route runs (${label(BIG)} database; one warm request) ---`);
  for (const { r, status, lines } of requests) {
    console.log(`\nGET ${r.paths.big}  (HTTP ${status}; ${lines.length} read${lines.length === 1 ? '' : 's'})`);
    for (const sql of lines) {
      const { plan, cost } = explain(ro, sql);
      console.log(`  ${sql.length > 1500 ? `${sql.slice(0, 1500)}…` : sql}`);
      if (cost) console.log(`    -- ${cost}`);
      for (const p of plan) console.log(`  ${p}`);
    }
  }
  ro.close();
}
say('done');
