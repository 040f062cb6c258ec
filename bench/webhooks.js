#!/usr/bin/env node
// Webhook figures of issue 12, measured in one run:
//
//   local `amsg members import` of N members with webhooks for import_finish and member_add
//   vs the same import with no webhook                                        goal ≤ 1.05× (medians)
//   `amsg serve` delivering E events (member adds over HTTP) to a local receiver:
//   events per second, and the lag from commit to delivery (p50, p99)           recorded
//   the lag again with the adds paced below the delivery rate (P events, 50/s): what
//   a post costs when no queue has built up                                    recorded
//
//   node bench/webhooks.js          (after `npm run build`)
//   BENCH_WEBHOOK_IMPORT_ROWS=20000 BENCH_WEBHOOK_RUNS=3 BENCH_WEBHOOK_EVENTS=2000 BENCH_WEBHOOK_PACED=200 node bench/webhooks.js   (quick)
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { median, stopChild, timed, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const ROWS = Number(process.env.BENCH_WEBHOOK_IMPORT_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 3);
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const PACED = Number(process.env.BENCH_WEBHOOK_PACED ?? 500);

if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) {
  console.error('bench: dist/ is missing: run `npm run build` first');
  process.exit(1);
}
const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-webhooks-'));
const children = new Set();
process.on('exit', () => rmSync(TMP, { recursive: true, force: true }));
process.once('SIGINT', () => process.exit(130));
const say = (m) => process.stderr.write(`bench: ${m}\n`);
const ENV = { AMSG_BASE_URL: '', AMSG_QUIET: '1', AMSG_NOW: '' };
const amsg = (db, ...args) => timed(process.execPath, [BIN, ...args], { ...ENV, AMSG_DB: db });

/**
 * Wall time and CPU time (user + system, all threads) of an import. On a machine shared with
 * other sessions the wall time of one run swings by half; the CPU time it needed does not.
 */
function timedImport(db, file) {
  const started = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu=%U %S', process.execPath, BIN, 'members', 'import', file], {
    env: { ...process.env, ...ENV, AMSG_DB: db },
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`import exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /cpu=([\d.]+) ([\d.]+)/.exec(r.stderr);
  return { ms, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : NaN };
}

/** A receiver that answers 200 at once; the run's timings are its arrival times. */
async function receiver() {
  const arrivals = new Map();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.set(Number(req.headers['x-amsg-event-id']), performance.timeOrigin + performance.now());
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, arrivals, url: `http://127.0.0.1:${server.address().port}/` };
}

// ---------------------------------------------------------------- 1. import with and without webhooks

// The receiver of the import runs as a child: the timed import blocks this process.
const importReceiver = spawn(
  process.execPath,
  [
    '-e',
    "require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.end())}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})",
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
children.add(importReceiver);
const importHook = `http://127.0.0.1:${(await new Promise((r) => importReceiver.stdout.once('data', r))).toString().trim()}/`;

const csv = join(TMP, `members-${ROWS}.csv`);
say(`writing a ${ROWS.toLocaleString('en-US')}-member CSV`);
await writeMembersCsv(csv, ROWS);

function prepare(name, hooks) {
  const db = join(TMP, `${name}.db`);
  rmSync(db, { force: true });
  amsg(db, 'init');
  for (const [field, type] of [
    ['city', 'text'],
    ['birthday', 'date'],
    ['score', 'numeric'],
  ])
    amsg(db, 'fields', 'create', field, '--type', type);
  if (hooks) for (const event of ['import_finish', 'member_add']) amsg(db, 'webhooks', 'create', importHook, '--event', event);
  return db;
}

const plain = [];
const hooked = [];
const plainCpu = [];
const hookedCpu = [];
for (let run = 1; run <= RUNS; run++) {
  // Alternating sides, so drift on a shared machine falls on both.
  for (const [side, list, cpuList] of run % 2
    ? [
        ['plain', plain, plainCpu],
        ['hooked', hooked, hookedCpu],
      ]
    : [
        ['hooked', hooked, hookedCpu],
        ['plain', plain, plainCpu],
      ]) {
    const db = prepare(`${side}-${run}`, side === 'hooked');
    const { ms, cpuMs } = timedImport(db, csv);
    list.push(ms);
    cpuList.push(cpuMs);
    if (side === 'hooked') {
      const check = new Database(db, { readonly: true });
      const events = check.prepare('SELECT event, COUNT(*) AS n FROM webhook_events GROUP BY event').all();
      const delivered = check.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'o'").pluck().get();
      check.close();
      if (JSON.stringify(events) !== '[{"event":"import_finish","n":1}]' || delivered !== 1)
        throw new Error(`expected one import_finish event, delivered: ${JSON.stringify(events)}, delivered ${delivered}`);
    }
    say(`import run ${run} ${side}: ${(ms / 1000).toFixed(2)} s, CPU ${(cpuMs / 1000).toFixed(2)} s`);
    rmSync(join(TMP, `${side}-${run}.db`), { force: true });
  }
}
await stopChild(importReceiver, children);
const ratio = median(hooked) / median(plain);
console.log(
  `import of ${ROWS.toLocaleString('en-US')} members: no webhook ${(median(plain) / 1000).toFixed(2)} s, with webhooks for import_finish and member_add ${(median(hooked) / 1000).toFixed(2)} s: ${ratio.toFixed(3)}× (goal ≤ 1.05×, medians of ${RUNS})`,
);
console.log(
  `  CPU time (user + system): no webhook ${(median(plainCpu) / 1000).toFixed(2)} s, with webhooks ${(median(hookedCpu) / 1000).toFixed(2)} s: ${(median(hookedCpu) / median(plainCpu)).toFixed(3)}×`,
);

// ---------------------------------------------------------------- 2. serve delivering E events

const db = join(TMP, 'serve.db');
const init = JSON.parse(amsg(db, 'init', '--json').stdout);
const auth = `Basic ${Buffer.from(`${init.public_key}:${init.private_key}`).toString('base64')}`;
const recv = await receiver();
const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', db], {
  env: { ...process.env, ...ENV },
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.add(serve);
const base = (await new Promise((r) => serve.stdout.once('data', r))).toString().split('\n')[0].trim();
const post = (path, body) =>
  fetch(`${base}/1${path}`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => {
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  });
await post('/webhooks', { url: recv.url, event: 'member_add' });
say(`${EVENTS.toLocaleString('en-US')} member adds through amsg serve, each a member_add event`);
const started = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < EVENTS) await post('/members/add', { email: `m${next++}@example.com` });
  }),
);
const addsMs = Date.now() - started;
let until = Date.now() + 300_000;
while (recv.arrivals.size < EVENTS && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
const burstArrivals = new Map(recv.arrivals);
say(`${PACED.toLocaleString('en-US')} more adds, one every 20 ms`);
recv.arrivals.clear();
for (let i = 0; i < PACED; i++) {
  const t = Date.now();
  await post('/members/add', { email: `paced${i}@example.com` });
  await new Promise((r) => setTimeout(r, Math.max(0, 20 - (Date.now() - t))));
}
until = Date.now() + 60_000;
while (recv.arrivals.size < PACED && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
const pacedArrivals = new Map(recv.arrivals);
await stopChild(serve, children);
recv.server.closeAllConnections();
recv.server.close();
const check = new Database(db, { readonly: true });
const committed = new Map(
  check
    .prepare('SELECT event_id, occurred_at FROM webhook_events')
    .all()
    .map((e) => [e.event_id, Date.parse(`${e.occurred_at.slice(0, 23)}Z`)]),
);
check.close();
const lagsOf = (arrivals) => [...arrivals].map(([id, at]) => at - committed.get(id)).sort((a, b) => a - b);
const pct = (lags, p) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))].toFixed(0);
const lags = lagsOf(burstArrivals);
const first = Math.min(...[...burstArrivals.keys()].map((id) => committed.get(id)));
const last = Math.max(...burstArrivals.values());
console.log(
  `amsg serve delivering ${EVENTS.toLocaleString('en-US')} events to a local receiver (one webhook, in order): ` +
    `${burstArrivals.size.toLocaleString('en-US')} delivered, ${Math.round(burstArrivals.size / ((last - first) / 1000))} events/s ` +
    `(the adds took ${(addsMs / 1000).toFixed(2)} s, ${Math.round(EVENTS / (addsMs / 1000))}/s); lag from commit to delivery p50 ${pct(lags, 50)} ms, p99 ${pct(lags, 99)} ms`,
);
const paced = lagsOf(pacedArrivals);
console.log(
  `paced adds (${PACED.toLocaleString('en-US')}, 50/s): ${pacedArrivals.size.toLocaleString('en-US')} delivered; lag from commit to delivery p50 ${pct(paced, 50)} ms, p99 ${pct(paced, 99)} ms`,
);
if (burstArrivals.size < EVENTS || pacedArrivals.size < PACED) process.exitCode = 1;
