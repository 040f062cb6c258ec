#!/usr/bin/env node
// The amsg benchmark suite: `npm run bench` (builds first) or `node bench/run.js`.
//
// Every figure is a ratio between amsg and a baseline measured in the same run,
// interleaved, so the noise of a small shared machine hits both sides alike. Never
// read the absolute numbers as goals.
//
//   1. `amsg --version` vs `node -e 0`                      wall time    goal ≤ 1.3×
//   2. local `amsg members get ID --json` vs `node -e 0`    wall time    goal ≤ 1.6×
//   3. `amsg serve` GET /1/members/{id} vs bare node:http   requests/s   goal ≥ 0.5×
//
// Plus: which packages `members get` loads (ink? react? undici?). Then the bulk figures
// (bench/import.js, export.js, send.js …), the console's (bench/console-server.js and
// bench/console.js) and the scale figure (bench/scale.js).
//
// Knobs (environment): BENCH_RUNS (runs per side for 1 and 2, default 15),
// BENCH_SECONDS (seconds per autocannon run, default 2), BENCH_ROUNDS (rounds, each
// loading both servers back to back, default 5), BENCH_CONNECTIONS (default 10).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadedModules } from './check-modules.js';
import { cpuMsOf, envInt, median, stopChild } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'amsg.js');
const BASELINE_SERVER = join(ROOT, 'bench', 'baseline-server.js');
const NODE = process.execPath;

const int = (name, dflt) => envInt(name, dflt, fail);

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- preconditions

if (!existsSync(join(ROOT, 'dist', 'amsg.cjs')))
  fail(`${join(ROOT, 'dist')} is missing or incomplete: run \`npm run build\` first (or use \`npm run bench\`, which builds)`);
let autocannon;
try {
  ({ default: autocannon } = await import('autocannon'));
} catch (err) {
  fail(`cannot load autocannon (a devDependency): run \`npm install\` (${err.message})`);
}

const RUNS = int('BENCH_RUNS', 15);
const SECONDS = int('BENCH_SECONDS', 2);
const ROUNDS = int('BENCH_ROUNDS', 5);
const CONNECTIONS = int('BENCH_CONNECTIONS', 10);

// ---------------------------------------------------------------- cleanup

const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-'));
const children = new Set();

function cleanup() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  rmSync(TMP, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
    process.exit(130);
  });

// ---------------------------------------------------------------- environment

// A clean environment: no AMSG_* settings and no config profile of the person
// running the bench, so the local engine over our temp database is what runs.
const CONFIG_HOME = join(TMP, 'config');
mkdirSync(CONFIG_HOME);
const DB = join(TMP, 'bench.db');
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AMSG_') && k !== 'NODE_OPTIONS'));
const ENV = { ...baseEnv, XDG_CONFIG_HOME: CONFIG_HOME, AMSG_DB: DB, AMSG_QUIET: '1' };

/** Runs a command to completion, failing the bench when it does not exit 0. */
function run(args, { env = ENV, input } = {}) {
  const r = spawnSync(NODE, args, { env, encoding: 'utf8', input, timeout: 60_000, cwd: TMP });
  if (r.error) fail(`node ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) fail(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
  return r.stdout;
}

/** Wall time (ms) of one run of `node ...args`, output discarded; must exit 0. */
function timeOnce(args, env = ENV) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(NODE, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000, cwd: TMP });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) fail(`node ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) fail(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
  return ms;
}

/**
 * Median wall times of A and B over RUNS runs each, interleaved ABBA so drift and
 * noise hit both sides alike, after two unmeasured warm-up runs of each.
 */
function compareStartup(a, b, env = ENV) {
  for (let i = 0; i < 2; i++) timeOnce(a, env), timeOnce(b, env);
  const as = [];
  const bs = [];
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) as.push(timeOnce(a, env)), bs.push(timeOnce(b, env));
    else bs.push(timeOnce(b, env)), as.push(timeOnce(a, env));
  }
  return { a: median(as), b: median(bs), aAll: as, bAll: bs };
}

const spread = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

// ---------------------------------------------------------------- servers

/** Starts `node ...args`, resolves with its first stdout line (its base URL). */
function startServer(label, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: TMP });
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => reject(new Error(`${label} printed no URL within 15 s\n${stderr}`)), 15_000);
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      const url = line.trim();
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) return reject(new Error(`${label} printed "${url}", not an http://127.0.0.1 URL`));
      resolve({ child, url, stderr: () => stderr });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited early (${code ?? signal})\n${stderr}`));
    });
  });
}

function stopServer(server) {
  return stopChild(server.child, children);
}

/**
 * One autocannon run against a server, bounded by a watchdog; fails on any error or
 * non-2xx answer. Also answers the CPU time the server process spent (ms), which
 * does not depend on how much CPU the load generator or neighbours took.
 */
async function load(server, path, headers, seconds) {
  const url = `${server.url}${path}`;
  const cpu0 = cpuMsOf(server.child.pid);
  const instance = autocannon({ url, headers, connections: CONNECTIONS, duration: seconds, timeout: 10 });
  let watchdog;
  const timeout = new Promise((_, reject) => {
    watchdog = setTimeout(
      () => {
        instance.stop?.();
        reject(new Error(`autocannon against ${url} did not finish within ${seconds + 20} s`));
      },
      (seconds + 20) * 1000,
    );
  });
  try {
    const r = await Promise.race([instance, timeout]);
    if (r.errors || r.timeouts || r.non2xx)
      throw new Error(`${url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx answers`);
    const cpu1 = cpuMsOf(server.child.pid);
    return {
      rps: r.requests.average,
      latencyP50: r.latency.p50,
      total: r.requests.total,
      cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
    };
  } finally {
    clearTimeout(watchdog);
  }
}

/** Server CPU microseconds per request over several runs, or undefined when unknown. */
function cpuPerRequest(results) {
  if (results.some((r) => r.cpuMs === undefined)) return undefined;
  const requests = results.reduce((n, r) => n + r.total, 0);
  return (results.reduce((n, r) => n + r.cpuMs, 0) * 1000) / requests;
}

// ---------------------------------------------------------------- the run

const started = Date.now();
const step = (msg) => process.stderr.write(`bench: ${msg} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
const figures = [];

console.log(`amsg benchmark — node ${process.version}, ${availableParallelism()} CPU(s) (${cpus()[0]?.model.trim() ?? 'unknown'})`);
console.log(
  `startup figures: median of ${RUNS} runs per side, interleaved; HTTP: ${ROUNDS} rounds × ${SECONDS} s per server, ${CONNECTIONS} connections; ratio 3 is the median of per-round ratios\n`,
);

// Setup: a database with one member.
step('setting up a temp database');
const init = JSON.parse(run([BIN, 'init', '--json']));
if (!init.public_key || !init.private_key) fail(`amsg init --json answered no key pair: ${JSON.stringify(init)}`);
const added = JSON.parse(run([BIN, 'members', 'add', 'bench@example.com', '--json']));
const ID = added.member_id;
if (!Number.isInteger(ID)) fail(`amsg members add answered no member_id: ${JSON.stringify(added)}`);
const got = JSON.parse(run([BIN, 'members', 'get', String(ID), '--json']));
if (got.member_id !== ID) fail(`amsg members get ${ID} answered ${JSON.stringify(got)}`);

// 1. --version
step('figure 1: amsg --version vs node -e 0');
{
  const r = compareStartup(['-e', '0'], [BIN, '--version']);
  figures.push({
    figure: '`amsg --version` wall time',
    baselineName: 'node -e 0',
    baseline: r.a,
    amsg: r.b,
    unit: 'ms',
    ratio: r.b / r.a,
    goal: 1.3,
    lowerIsBetter: true,
    note: `min–max: node -e 0 ${spread(r.aAll)} ms, amsg ${spread(r.bAll)} ms`,
  });
}

// 2. local members get
step('figure 2: amsg members get (local) vs node -e 0');
{
  const r = compareStartup(['-e', '0'], [BIN, 'members', 'get', String(ID), '--json']);
  figures.push({
    figure: '`amsg members get ID --json` (local) wall time',
    baselineName: 'node -e 0',
    baseline: r.a,
    amsg: r.b,
    unit: 'ms',
    ratio: r.b / r.a,
    goal: 1.6,
    lowerIsBetter: true,
    note: `min–max: node -e 0 ${spread(r.aAll)} ms, amsg ${spread(r.bAll)} ms${withoutExtraCerts()}`,
  });
}

/**
 * NODE_EXTRA_CA_CERTS makes every node process parse that certificate file as it
 * starts, before any of its code runs: on these machines (the system bundle, ~140
 * certificates) ~70 ms of a 100 ms `node -e 0`, which the anchor carries and amsg's
 * own start does not grow. When it is set, the figure is measured again without it,
 * as context (not a goal), so the ratio of amsg's own start stays in sight.
 */
function withoutExtraCerts() {
  if (!ENV.NODE_EXTRA_CA_CERTS) return '';
  const { NODE_EXTRA_CA_CERTS: _, ...env } = ENV;
  const r = compareStartup(['-e', '0'], [BIN, 'members', 'get', String(ID), '--json'], env);
  return `; context: NODE_EXTRA_CA_CERTS is set (${ENV.NODE_EXTRA_CA_CERTS}), without it node -e 0 ${r.a.toFixed(1)} ms, amsg ${r.b.toFixed(1)} ms, ${(r.b / r.a).toFixed(2)}×`;
}

// 3. HTTP throughput
step('figure 3: amsg serve vs bare node:http under autocannon');
{
  const headers = { authorization: `Basic ${Buffer.from(`${init.public_key}:${init.private_key}`).toString('base64')}` };
  const amsg = await startServer('amsg serve', [BIN, 'serve', '--db', DB, '--host', '127.0.0.1', '--port', '0'], ENV).catch((e) =>
    fail(e.message),
  );
  const PATH = `/1/members/${ID}`;
  const memberUrl = `${amsg.url}${PATH}`;
  const res = await fetch(memberUrl, { headers });
  const body = await res.text();
  if (res.status !== 200) fail(`GET ${memberUrl} answered ${res.status}: ${body}`);
  // The baseline answers the very bytes amsg answered.
  const bare = await startServer('baseline server', [BASELINE_SERVER], { ...ENV, AMSG_BENCH_BODY: body }).catch((e) => fail(e.message));
  const bareUrl = `${bare.url}${PATH}`;
  const check = await fetch(bareUrl, { headers });
  if (check.status !== 200 || (await check.text()) !== body) fail(`the baseline server at ${bare.url} does not answer like amsg`);

  const results = { bare: [], amsg: [] };
  try {
    // Warm-up (JIT, SQLite page cache, keep-alive sockets), not measured.
    await load(bare, PATH, headers, 1);
    await load(amsg, PATH, headers, 1);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      const order = round % 2 === 0 ? ['bare', 'amsg'] : ['amsg', 'bare'];
      for (const which of order) results[which].push(await load(which === 'bare' ? bare : amsg, PATH, headers, SECONDS));
    }
  } catch (err) {
    fail(`${err.message}\namsg serve stderr:\n${amsg.stderr()}`);
  } finally {
    await Promise.all([stopServer(amsg), stopServer(bare)]);
  }
  const b = median(results.bare.map((r) => r.rps));
  const a = median(results.amsg.map((r) => r.rps));
  const cpuBare = cpuPerRequest(results.bare);
  const cpuAmsg = cpuPerRequest(results.amsg);
  const cpuNote =
    cpuBare && cpuAmsg
      ? `; server CPU per request ${cpuBare.toFixed(0)} / ${cpuAmsg.toFixed(0)} µs (amsg uses ${(cpuAmsg / cpuBare).toFixed(1)}×)`
      : '';
  figures.push({
    figure: '`amsg serve` GET /1/members/{id} throughput',
    baselineName: 'bare node:http',
    baseline: b,
    amsg: a,
    unit: 'req/s',
    // Each round loads both servers back to back; the median of the per-round ratios
    // resists a neighbour's load better than a ratio of medians over the whole run.
    ratio: median(results.amsg.map((r, i) => r.rps / results.bare[i].rps)),
    goal: 0.5,
    lowerIsBetter: false,
    note: `bare / amsg: req/s per round ${results.bare.map((r) => Math.round(r.rps)).join(', ')} / ${results.amsg.map((r) => Math.round(r.rps)).join(', ')}; p50 latency ${median(results.bare.map((r) => r.latencyP50))} / ${median(results.amsg.map((r) => r.latencyP50))} ms; ${body.length}-byte body${cpuNote}`,
  });
}

// Modules loaded by members get.
step('which modules members get loads');
const mods = loadedModules(['members', 'get', String(ID), '--json'], ENV);
if (!mods.packages.includes('better-sqlite3')) fail('the module log saw no better-sqlite3 addon: the module check does not work here');

step('done');

// ---------------------------------------------------------------- report

const pass = (f) => (f.lowerIsBetter ? f.ratio <= f.goal : f.ratio >= f.goal);
const fmt = (v, unit) => (unit === 'ms' ? `${v.toFixed(1)} ms` : `${Math.round(v).toLocaleString('en-US')} ${unit}`);
const rows = figures.map((f, i) => [
  `${i + 1}. ${f.figure}`,
  `${f.baselineName}: ${fmt(f.baseline, f.unit)}`,
  fmt(f.amsg, f.unit),
  `${f.ratio.toFixed(2)}×`,
  `${f.lowerIsBetter ? '≤' : '≥'} ${f.goal}×`,
  pass(f) ? 'pass' : 'FAIL',
]);
const HEAD = ['Figure', 'Baseline (median)', 'amsg (median)', 'Ratio', 'Goal', 'Result'];

const widths = HEAD.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(line(HEAD));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
console.log();
for (const [i, f] of figures.entries()) console.log(`  ${i + 1}. ${f.note}`);

const yesNo = (name) => (mods.packages.includes(name) ? 'yes' : 'no');
console.log(
  `\nmodules loaded by local \`members get\`: ${mods.fileCount} files (${mods.distFiles.length} from dist/, ${mods.packageFileCount} from node_modules)`,
);
console.log(`  packages: ${mods.packages.join(', ')}`);
console.log(`  bundled into dist/amsg.cjs (initialized on first use): ${mods.corePackages.join(', ')}`);
console.log(`  ink loaded: ${yesNo('ink')}`);
console.log(`  react loaded: ${yesNo('react')}`);
console.log(`  undici loaded: ${yesNo('undici')}`);
console.log(`  nodemailer loaded: ${yesNo('nodemailer')}`);

const md = (cells) => `| ${cells.join(' | ')} |`;
console.log('\n--- markdown ---\n');
console.log(md(HEAD));
console.log(md(HEAD.map(() => '---')));
for (const r of rows) console.log(md(r));
console.log();
console.log(`ink loaded: ${yesNo('ink')}, react loaded: ${yesNo('react')}, undici loaded: ${yesNo('undici')} (local \`members get\`)`);

// The bulk figures of issues 3, 4 and 14 (imports and exports of a million members, a
// mailing and an SMS send to 100,000 by default; BENCH_BULK=0 skips them, BENCH_IMPORT_ROWS /
// BENCH_EXPORT_ROWS / BENCH_SEND_ROWS / BENCH_SMS_ROWS scale them down). Each is its own script, so it
// can also be run alone.
if (process.env.BENCH_BULK !== '0') {
  for (const script of ['import.js', 'export.js', 'send.js', 'sms.js', ...(process.env.BENCH_SEED === '0' ? [] : ['seed.js'])]) {
    console.log(`\n--- bench/${script} ---`);
    const r = spawnSync(NODE, [join(ROOT, 'bench', script)], { stdio: 'inherit', env: process.env });
    if (r.status !== 0) fail(`bench/${script} exited ${r.status}`);
  }
}

// The response-report figures of issue 19 (BENCH_RESPONSE=0 skips them; BENCH_RESPONSE_ROWS scales them down).
if (process.env.BENCH_RESPONSE !== '0') {
  console.log('\n--- bench/response.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'response.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/response.js exited ${r.status}`);
}

// The mixed-load figure (issue 10): 16 connections of reads, pages, adds, updates,
// group changes and small imports against the GET-only throughput of the same server
// (BENCH_MIXED=0 skips it).
if (process.env.BENCH_MIXED !== '0') {
  console.log('\n--- bench/mixed.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'mixed.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/mixed.js exited ${r.status}`);
}

// Event ingestion (issue 13): accepting POST /v1/{account}/events against a bare
// node:http server, processing keeping up, and \`amsg events ingest\` (BENCH_INGEST=0
// skips it; BENCH_INGEST_EVENTS and BENCH_INGEST_MEMBERS scale it down).
if (process.env.BENCH_INGEST !== '0') {
  console.log('\n--- bench/ingest.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'ingest.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/ingest.js exited ${r.status}`);
}

// The webhook figures of issue 12: an import with webhooks registered against one with
// none, and `amsg serve` delivering a burst of events (BENCH_WEBHOOKS=0 skips them;
// BENCH_WEBHOOK_IMPORT_ROWS, BENCH_WEBHOOK_RUNS and BENCH_WEBHOOK_EVENTS scale them down).
if (process.env.BENCH_WEBHOOKS !== '0') {
  console.log('\n--- bench/webhooks.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'webhooks.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/webhooks.js exited ${r.status}`);
}

// The SMTP figure of issue 34: amsg serve relaying a mailing of 10,000 personalized
// messages to a local smtp-server that discards them, against a bare nodemailer pooled
// loop of the same messages (BENCH_SMTP=0 skips it; BENCH_SMTP_MESSAGES scales it down).
if (process.env.BENCH_SMTP !== '0') {
  console.log('\n--- bench/smtp.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'smtp.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/smtp.js exited ${r.status}`);
}

// The console figures of issue 33, each on a database of 1,000 members against one of a
// million: the server's reads behind the pages (bench/console-server.js; BENCH_CONSOLE_SERVER=0
// skips it, BENCH_CONSOLE_SERVER_N scales it down) and the pages in Chromium from navigation to
// data shown (bench/console.js; BENCH_CONSOLE=0 skips it, BENCH_CONSOLE_N scales it down; it says
// so and passes where no Chromium is installed).
for (const [script, knob] of [
  ['console-server.js', 'BENCH_CONSOLE_SERVER'],
  ['console.js', 'BENCH_CONSOLE'],
]) {
  if (process.env[knob] === '0') continue;
  console.log(`\n--- bench/${script} ---`);
  const r = spawnSync(NODE, [join(ROOT, 'bench', script)], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/${script} exited ${r.status}`);
}

// The scale figure of issue 9: every one-page or one-record read at 1,000 and at a
// million members (BENCH_SCALE=0 skips it, BENCH_SCALE_N scales it down). Last, as it
// builds its own million-member database.
if (process.env.BENCH_SCALE !== '0') {
  console.log('\n--- bench/scale.js ---');
  const r = spawnSync(NODE, [join(ROOT, 'bench', 'scale.js')], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) fail(`bench/scale.js exited ${r.status}`);
}
