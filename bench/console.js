#!/usr/bin/env node
// Console figure of issue 33: in Chromium, the time from a console page's navigation to its
// data shown (the `amsg:data-loaded` performance mark each page sets once its data is on
// screen), for each page, on a database of N (default 1,000,000) members and 1,000 mailings
// against the same pages on a database of 1,000 members and 1,000 mailings.
//
//   each page: median at N / median at 1k                                   goal ≤ 1.5×
//
// Both databases are built the same way: the bench CSV (three groups) imported by the CLI,
// one mailing sent to the group of the member in the middle with opens and clicks recorded,
// 999 more mailings scheduled for 2030 (created through the API), a webhook whose receiver
// refuses (its deliveries fail), and an SMS campaign sent to that member. Both servers run
// at once and each round loads every page on one and then the other, so the machine's noise
// hits both sides alike. Needs Chromium (/usr/bin/chromium, or AMSG_CHROMIUM).
//
//   node bench/console.js                          (after `npm run build`)
//   BENCH_CONSOLE_N=100000 node bench/console.js   (quick)
//   BENCH_CONSOLE_CACHE=/var/tmp/amsg-console node bench/console.js   (keeps the databases)
//
// Knobs: BENCH_CONSOLE_N (default 1000000), BENCH_CONSOLE_RUNS (loads per page and side,
// default 9), BENCH_CONSOLE_CACHE (a directory to keep the databases in).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { envInt, median, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const NODE = process.execPath;
const CHROMIUM = [process.env.AMSG_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));

function fail(message) {
  process.stderr.write(`bench/console: ${message}\n`);
  process.exit(1);
}
const int = (name, dflt) => envInt(name, dflt, fail);

const SMALL = 1000;
const BIG = int('BENCH_CONSOLE_N', 1_000_000);
const RUNS = int('BENCH_CONSOLE_RUNS', 9);
const MAILINGS = 1000;
const CACHE = process.env.BENCH_CONSOLE_CACHE || undefined;
const GOAL = 1.5;
const SETUP_VERSION = 1;

if (!CHROMIUM) {
  process.stderr.write('bench/console: skipped, no Chromium found (apt-get install chromium, or set AMSG_CHROMIUM)\n');
  process.exit(0);
}
if (!existsSync(join(ROOT, 'dist', 'console', 'console.js'))) fail('dist/console/ is missing: run `npm run build` first');
const { default: puppeteer } = await import('puppeteer-core');

const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-console-'));
const children = new Set();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => process.exit(130));
process.on('unhandledRejection', (err) => fail(err?.stack ?? String(err)));

const started = Date.now();
const say = (m) => process.stderr.write(`bench/console: ${m} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
const label = (n) => (n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 100 === 0 ? `${n / 1e3}k` : String(n));

const CONFIG_HOME = join(TMP, 'config');
mkdirSync(CONFIG_HOME);
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AMSG_') && k !== 'NODE_OPTIONS'));
const ENV = { ...baseEnv, XDG_CONFIG_HOME: CONFIG_HOME, AMSG_QUIET: '1' };

function amsg(db, args) {
  const r = spawnSync(NODE, [BIN, ...args], {
    env: { ...ENV, AMSG_DB: db },
    encoding: 'utf8',
    cwd: TMP,
    timeout: 1_200_000,
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) fail(`amsg ${args.join(' ')} exited ${r.status ?? r.signal}:\n${(r.stderr ?? '').slice(-2000)}`);
  return JSON.parse(r.stdout);
}

/** `amsg serve` on a database: its base URL, its console sign-in link, and an API caller. */
async function serve(db, key) {
  const child = spawn(NODE, [BIN, 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0'], {
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`amsg serve exited ${code}`)));
  });
  const link = await new Promise((resolve) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      const m = /^console: (\S+)/.exec(line);
      if (m) resolve(m[1]);
    });
  });
  const auth = `Basic ${Buffer.from(key).toString('base64')}`;
  const call = async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: auth },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) fail(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    children.delete(child);
  };
  return { url, link, call, stop };
}

const HTML =
  '<html><head><style>.hero{position:absolute}</style></head><body><p class="hero">Hello [% member:first_name | default:"friend" %] in [% member:city %]</p>' +
  '<p><a href="https://example.com/spring">Spring sale</a> <a href="https://example.com/shop">Shop</a></p><p><a href="[% optout_url %]">Unsubscribe</a></p></body></html>';

/** Builds (or finds in the cache) the n-member database; answers its file, key pair and ids. */
async function database(n) {
  const dir = CACHE ?? TMP;
  mkdirSync(dir, { recursive: true });
  const db = join(dir, `console-${n}.db`);
  const metaFile = join(dir, `console-${n}.json`);
  if (CACHE && existsSync(metaFile) && existsSync(db)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.version === SETUP_VERSION && meta.n === n) {
      say(`reusing the ${label(n)} database in ${dir}`);
      return { ...meta, db };
    }
  }
  for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  const t0 = Date.now();
  say(`building the ${label(n)} database: CSV, init, import`);
  const csv = join(TMP, `members-${n}.csv`);
  await writeMembersCsv(csv, n, { groups: 3 });
  const init = amsg(db, ['init', '--json']);
  const key = `${init.public_key}:${init.private_key}`;
  amsg(db, ['fields', 'create', 'city', '--type', 'text', '--json']);
  amsg(db, ['fields', 'create', 'birthday', '--type', 'date', '--json']);
  amsg(db, ['fields', 'create', 'score', '--type', 'numeric', '--json']);
  const imp = amsg(db, ['members', 'import', csv, '--json', '-q']);
  if (imp.num_members_added !== n) fail(`the import of ${n} rows added ${imp.num_members_added}`);
  rmSync(csv, { force: true });

  say(`building the ${label(n)} database: mailings, engagement, webhook, SMS`);
  const server = await serve(db, key);
  const half = Math.floor(n / 2);
  const email = `user${half - (half % 24)}@example.com`;
  const member = await server.call('GET', `/1/members/email/${email}`);
  const group = (await server.call('GET', `/1/members/${member.member_id}/groups`))[0].member_group_id;
  await server.call('POST', '/1/webhooks', { url: 'http://127.0.0.1:9/refused', event: 'message_open' });
  const { mailing_id: mailing } = await server.call('POST', '/1/mailings', {
    name: 'Spring',
    subject: 'Hello [% member:first_name %]',
    sender: 'shop@example.com',
    html_body: HTML,
    recipient_groups: [group],
  });
  for (let i = 0; ; i++) {
    const m = await server.call('GET', `/1/mailings/${mailing}`);
    if (m.mailing_status === 'c') break;
    if (i > 6000) fail(`the mailing did not finish sending (status ${m.mailing_status})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // Opens and clicks of 100 recipients spread over the group (row r of the CSV is in group r % 3).
  const links = (await server.call('GET', `/1/mailings/${mailing}`)).links;
  for (let i = 0; i < 100; i++) {
    const row = 3 * Math.floor((i * n) / 300);
    const who = (await server.call('GET', `/1/members/email/user${row}@example.com`)).member_id;
    await server.call('POST', '/1/sim/open', { mailing_id: mailing, member_id: who });
    if (i % 3 === 0) await server.call('POST', '/1/sim/click', { mailing_id: mailing, member_id: who, link_id: links[i % 2].link_id });
  }
  for (let i = 1; i < MAILINGS; i++)
    await server.call('POST', '/1/mailings', {
      name: `Planned ${i}`,
      subject: `Planned ${i}`,
      sender: 'shop@example.com',
      html_body: HTML,
      recipient_groups: [group],
      send_at: '2030-06-01T09:00:00Z',
    });
  await server.call('PUT', `/1/members/${member.member_id}`, { sms: { phone_number: '+15550000001', promotional_status: 'a' } });
  const sms = await server.call('POST', '/1/sms/campaigns', {
    sms_campaign_name: 'Flash',
    message: 'Flash sale today: https://example.com/sale',
    from_phone_number: '+15555550100',
    recipients: { members: [member.member_id] },
  });
  const smsId = typeof sms === 'number' ? sms : sms.sms_campaign_id;
  await server.call('POST', `/1/sms/campaigns/${smsId}/send`, {});
  await server.stop();
  const meta = {
    version: SETUP_VERSION,
    n,
    key,
    ids: { member: member.member_id, email, mailing, sms: smsId },
    buildSeconds: (Date.now() - t0) / 1000,
  };
  writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return { ...meta, db };
}

const small = await database(SMALL);
const big = await database(BIG);

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${join(TMP, 'chromium')}`,
  ],
});
process.on('exit', () => browser.process()?.kill('SIGKILL'));

/** A server over the database and a signed-in page of its own (own cookies: same host, two ports). */
async function side(d) {
  const server = await serve(d.db, d.key);
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(server.link);
  await page.waitForSelector('[data-loaded="true"]', { timeout: 60_000 });
  const local = d.ids.email.split('@')[0];
  const pages = {
    mailings: '/ui/1/mailings',
    mailing: `/ui/1/mailings/${d.ids.mailing}`,
    message: `/ui/1/mailings/${d.ids.mailing}/messages/${d.ids.member}`,
    'members search': `/ui/1/members?q=${local}`,
    member: `/ui/1/members/${d.ids.member}`,
    webhooks: '/ui/1/webhooks',
    sms: `/ui/1/sms/${d.ids.sms}`,
    imports: '/ui/1/imports',
  };
  /** Milliseconds from the navigation's start to the page's data shown. */
  const time = async (path) => {
    await page.goto(server.url + path, { waitUntil: 'domcontentloaded' });
    await page
      .waitForFunction(() => performance.getEntriesByName('amsg:data-loaded').length > 0, { timeout: 60_000, polling: 'raf' })
      .catch(async () =>
        fail(`${server.url}${path} did not show its data within 60 s: ${await page.$eval('main', (m) => m.textContent).catch(() => '')}`),
      );
    return page.evaluate(() => performance.getEntriesByName('amsg:data-loaded')[0].startTime);
  };
  return { server, pages, time };
}

const sides = { small: await side(small), big: await side(big) };
const times = Object.fromEntries(Object.keys(sides.small.pages).map((name) => [name, { small: [], big: [] }]));
say(`timing ${Object.keys(times).length} pages, ${RUNS} loads each at ${label(SMALL)} and ${label(BIG)} (one warm-up load each)`);
for (let run = -1; run < RUNS; run++) {
  for (const name of Object.keys(times)) {
    for (const which of run % 2 ? ['small', 'big'] : ['big', 'small']) {
      const ms = await sides[which].time(sides[which].pages[name]);
      if (run >= 0) times[name][which].push(ms);
    }
  }
}
await browser.close();
for (const s of Object.values(sides)) await s.server.stop();

console.log(
  `\nconsole pages: navigation to data shown, median of ${RUNS} (ms), ${label(BIG)} vs ${label(SMALL)} members, ${MAILINGS} mailings each`,
);
console.log(`${'page'.padEnd(16)} ${label(SMALL).padStart(8)} ${label(BIG).padStart(8)}   ratio  goal ≤ ${GOAL}×`);
let worst = 0;
for (const [name, t] of Object.entries(times)) {
  const a = median(t.small);
  const b = median(t.big);
  const ratio = b / a;
  worst = Math.max(worst, ratio);
  console.log(
    `${name.padEnd(16)} ${a.toFixed(0).padStart(8)} ${b.toFixed(0).padStart(8)}   ${ratio.toFixed(2)}×  ${ratio <= GOAL ? 'ok' : 'MISSED'}`,
  );
}
console.log(`worst ratio ${worst.toFixed(2)}× (goal ≤ ${GOAL}×)`);
