#!/usr/bin/env node
// Response-report figures of issue 19, through `amsg serve` (medians of BENCH_RESPONSE_REQUESTS
// requests of each side, interleaved):
//
//   GET /response/{id} of a mailing sent to N members, after O simulated opens and C clicks
//                                                      vs  GET /mailings/{id} of the same mailing   goal ≤ 2×
//   GET /response over M sent mailings                 vs  GET /mailings/{id}                       goal ≤ 3×
//
// The figures are counters kept by the send and the simulated events, so neither read
// counts messages; the opens and clicks go through the service (POST /sim/open|click).
//
//   node bench/response.js          (after `npm run build`)
//   BENCH_RESPONSE_ROWS=20000 BENCH_RESPONSE_OPENS=6000 BENCH_RESPONSE_CLICKS=1000 node bench/response.js   (quick)
//   AMSG_BENCH_BIN=/tmp/x/bin/amsg.js node bench/response.js          (a private build)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInt, median, stopChild, timed, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const bad = (m) => {
  console.error(`bench: ${m}`);
  process.exit(2);
};
const ROWS = envInt('BENCH_RESPONSE_ROWS', 100_000, bad);
const OPENS = envInt('BENCH_RESPONSE_OPENS', 30_000, bad);
const CLICKS = envInt('BENCH_RESPONSE_CLICKS', 5_000, bad);
const MAILINGS = envInt('BENCH_RESPONSE_MAILINGS', 200, bad);
const REQUESTS = envInt('BENCH_RESPONSE_REQUESTS', 300, bad);
if (OPENS + CLICKS > ROWS)
  bad('openers and clickers are distinct members: BENCH_RESPONSE_OPENS + BENCH_RESPONSE_CLICKS ≤ BENCH_RESPONSE_ROWS');

if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) bad('dist/ is missing: run `npm run build` first');
const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-response-'));
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(TMP, { recursive: true, force: true });
});
process.once('SIGINT', () => process.exit(130));
const say = (m) => process.stderr.write(`bench: ${m}\n`);

const db = join(TMP, 'response.db');
const amsg = (...args) => timed(process.execPath, [BIN, ...args], { AMSG_DB: db, AMSG_BASE_URL: '', AMSG_QUIET: '1' });
const { public_key, private_key } = JSON.parse(amsg('init', '--json').stdout);
for (const [name, type] of [
  ['city', 'text'],
  ['birthday', 'date'],
  ['score', 'numeric'],
])
  amsg('fields', 'create', name, '--type', type);
const csv = join(TMP, 'members.csv');
say(`importing ${ROWS.toLocaleString('en-US')} members`);
await writeMembersCsv(csv, ROWS);
amsg('members', 'import', csv, '--group', 'Everyone', '-q');
const html = join(TMP, 'spring.html');
writeFileSync(
  html,
  '<h1>Hello [% member:first_name %]</h1><a href="https://shop.example.com/spring">Spring</a> <a href="https://shop.example.com/sale">Sale</a> <a href="[% optout_url %]">out</a>',
);
say(`sending a mailing to ${ROWS.toLocaleString('en-US')}`);
const sent = JSON.parse(
  amsg(
    'mailings',
    'create',
    '--name',
    'Spring',
    '--subject',
    'Hi',
    '--sender',
    'shop@example.com',
    '--html',
    html,
    '--group',
    'Everyone',
    '--wait',
    '--json',
  ).stdout,
);
const BIG = sent.mailing_id;

// ---------------------------------------------------------------- the server

const server = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, AMSG_BASE_URL: '', AMSG_QUIET: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    if (out.includes('\n')) resolve({ child, url: out.split('\n')[0].trim() });
  });
  child.on('exit', (code) => reject(new Error(`amsg serve exited ${code}`)));
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const auth = `Basic ${Buffer.from(`${public_key}:${private_key}`).toString('base64')}`;

function call(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${server.url}/1${path}`,
      { method, agent, headers: { authorization: auth, 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(JSON.parse(data)) : reject(new Error(`${method} ${path}: ${res.statusCode} ${data}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Runs `n` calls `make(i)` with 8 in flight. */
async function pool(n, make) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) await make(next++);
    }),
  );
}

const links = (await call('GET', `/mailings/${BIG}`)).links.map((l) => l.link_id);
// Members 1..N got the mailing: the first O open, every sixth of them clicks (distinct members).
say(`simulating ${OPENS.toLocaleString('en-US')} opens and ${CLICKS.toLocaleString('en-US')} clicks through the service`);
await pool(OPENS, (i) => call('POST', '/sim/open', { mailing_id: BIG, member_id: i + 1 }));
await pool(CLICKS, (i) => call('POST', '/sim/click', { mailing_id: BIG, member_id: ROWS - i, link_id: links[i % links.length] }));

say(`sending ${MAILINGS - 1} more mailings (to 10 members each), ${MAILINGS} in all`);
await pool(MAILINGS - 1, (i) =>
  call('POST', '/mailings', {
    name: `Small ${i}`,
    subject: 'Hi',
    sender: 'shop@example.com',
    html_body: '<p>Hi</p><a href="[% optout_url %]">out</a>',
    recipient_member_ids: Array.from({ length: 10 }, (_, k) => ((i * 10 + k) % ROWS) + 1),
  }),
);
for (let waited = 0; ; waited++) {
  const pending = (await call('GET', '/mailings?mailing_statuses=p,i,s')).length;
  if (pending === 0) break;
  if (waited > 600) throw new Error(`${pending} mailings still sending after 5 minutes`);
  await new Promise((r) => setTimeout(r, 500));
}

const report = await call('GET', `/response/${BIG}`);
const series = await call('GET', '/response');
const inSeries = series.reduce((n, m) => n + m.mailings, 0);
if (report.sent !== ROWS || report.opened !== OPENS + CLICKS || report.clicked !== CLICKS || inSeries !== MAILINGS)
  throw new Error(`unexpected figures: ${JSON.stringify({ sent: report.sent, opened: report.opened, clicked: report.clicked, inSeries })}`);

// ---------------------------------------------------------------- timing

async function timedGet(path) {
  const t = process.hrtime.bigint();
  await call('GET', path);
  return Number(process.hrtime.bigint() - t) / 1e6;
}
const sides = { mailing: `/mailings/${BIG}`, response: `/response/${BIG}`, series: '/response' };
const times = { mailing: [], response: [], series: [] };
for (const path of Object.values(sides)) for (let i = 0; i < 20; i++) await timedGet(path); // warm
for (let i = 0; i < REQUESTS; i++) for (const [side, path] of Object.entries(sides)) times[side].push(await timedGet(path));
agent.destroy();
await stopChild(server.child, children);

const ms = (x) => `${x.toFixed(3)} ms`;
const base = median(times.mailing);
const md = (cells) => `| ${cells.join(' | ')} |`;
console.log(
  `\nresponse reports through amsg serve: a mailing sent to ${ROWS.toLocaleString('en-US')}, ${OPENS.toLocaleString('en-US')} opens and ${CLICKS.toLocaleString('en-US')} clicks simulated, ${MAILINGS} sent mailings; medians of ${REQUESTS}\n`,
);
console.log(md(['Figure', 'Baseline (median)', 'amsg (median)', 'Ratio', 'Goal', 'Result']));
console.log(md(['---', '---', '---', '---', '---', '---']));
for (const [side, label, goal] of [
  ['response', `GET /response/{id}`, 2],
  ['series', `GET /response (${MAILINGS} mailings)`, 3],
]) {
  const v = median(times[side]);
  console.log(
    md([label, `GET /mailings/{id}: ${ms(base)}`, ms(v), `${(v / base).toFixed(2)}×`, `≤ ${goal}×`, v / base <= goal ? 'pass' : 'FAIL']),
  );
}
