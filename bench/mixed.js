#!/usr/bin/env node
// Mixed load on `amsg serve` (issue 10, item 12), measured in one run:
//
//   throughput at BENCH_MIXED_CONNECTIONS (16) connections of mixed requests   vs   GET-only throughput of the same server   goal ≥ 0.25×
//   (BENCH_MIXED_ROUNDS rounds of both, BENCH_MIXED_SECONDS each; the median of the per-round ratios)
//   p99 latency of the mixed load                                               vs   its p50                                 goal ≤ 10×
//
// The mixed requests, in turn on every connection: one member by id, a page of 50
// members, an add of a new member, an update of one, a member added to a group, and a
// small bulk import (POST /members with 10 members, a job the server runs in the
// background), over an audience of BENCH_MIXED_MEMBERS (20,000) members. When the
// ratio fails, each kind is then loaded alone and its server CPU per request printed.
//
//   node bench/mixed.js             (after `npm run build`)
//   AMSG_BENCH_BIN=/tmp/x/bin/amsg.js node bench/mixed.js   (a private build)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { benchWorkspace, cpuMsOf, serveBench, stopChild, writeMembersCsv } from './common.js';

const { BIN, NODE, fail, int, autocannon, serveNodeArgs } = await serveBench('mixed');
const MEMBERS = int('BENCH_MIXED_MEMBERS', 20_000);
const CONNECTIONS = int('BENCH_MIXED_CONNECTIONS', 16);
const SECONDS = int('BENCH_MIXED_SECONDS', 5);
const ROUNDS = int('BENCH_MIXED_ROUNDS', 3);
/** Each kind's load when the ratio fails. */
const KIND_SECONDS = 2;

const {
  dir: TMP,
  db: DB,
  env: ENV,
  children,
  amsg,
} = await benchWorkspace({ name: 'mixed', bin: BIN, node: NODE, fail, timeoutMs: 300_000 });

// ---------------------------------------------------------------- the audience

const key = JSON.parse(amsg('init', '--json'));
for (const [name, type] of [
  ['city', 'text'],
  ['birthday', 'date'],
  ['score', 'numeric'],
])
  amsg('fields', 'create', name, '--type', type);
const csv = join(TMP, 'members.csv');
await writeMembersCsv(csv, MEMBERS);
amsg('members', 'import', csv);
const groups = JSON.parse(amsg('groups', 'list', '--json'));

function startServe() {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [...serveNodeArgs, BIN, 'serve', '--db', DB, '--port', '0'], {
      env: ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: TMP,
    });
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    createInterface({ input: child.stdout }).once('line', (line) => resolve({ child, url: line.trim() }));
    child.once('exit', (code) => reject(new Error(`amsg serve exited (${code})\n${stderr}`)));
  });
}

const server = await startServe();
const headers = {
  authorization: `Basic ${Buffer.from(`${key.public_key}:${key.private_key}`).toString('base64')}`,
  'content-type': 'application/json',
};

// ---------------------------------------------------------------- the loads

/** Runs autocannon; answers requests/s and the p50/p99 latency in ms; any error or non-2xx fails the bench. */
async function load(requests, seconds = SECONDS) {
  const cpu0 = cpuMsOf(server.child.pid);
  const r = await autocannon({ url: server.url, headers, connections: CONNECTIONS, duration: seconds, timeout: 30, requests });
  if (r.errors || r.timeouts || r.non2xx)
    fail(`${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx answers (by status: ${JSON.stringify(r.statusCodeStats)})`);
  const cpu1 = cpuMsOf(server.child.pid);
  const cpuUs = cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / r.requests.total;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, cpuUs };
}

const memberAt = (i) => 1 + (i % MEMBERS);
let n = 0;
const next = () => n++;
const getOnly = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/1/members/${memberAt(next() * 7919)}` }) }];
// Named, so a failing ratio can be broken down by kind (at the end).
const mixed = [
  { name: 'member by id', method: 'GET', setupRequest: (req) => ({ ...req, path: `/1/members/${memberAt(next() * 7919)}` }) },
  {
    name: 'page of 50 members',
    method: 'GET',
    setupRequest: (req) => {
      const start = (next() * 104729) % (MEMBERS - 50);
      return { ...req, path: `/1/members?start=${start}&end=${start + 50}` };
    },
  },
  {
    name: 'add a member',
    method: 'POST',
    setupRequest: (req) => ({
      ...req,
      path: '/1/members/add',
      body: JSON.stringify({ email: `mixed${next()}@example.com`, fields: { city: 'Oslo' } }),
    }),
  },
  {
    name: 'update a member',
    method: 'PUT',
    setupRequest: (req) => ({ ...req, path: `/1/members/${memberAt(next() * 31)}`, body: JSON.stringify({ fields: { score: n % 100 } }) }),
  },
  {
    name: 'a member into a group',
    method: 'PUT',
    setupRequest: (req) => ({
      ...req,
      path: `/1/members/${memberAt(next() * 131)}/groups`,
      body: JSON.stringify({ group_ids: [groups[n % groups.length].member_group_id] }),
    }),
  },
  {
    name: 'bulk add of 10 (a job)',
    method: 'POST',
    setupRequest: (req) => {
      const base = next();
      const members = Array.from({ length: 10 }, (_, i) => ({ email: `bulk${base}-${i}@example.com`, city: 'Bergen' }));
      return { ...req, path: '/1/members', body: JSON.stringify({ members }) };
    },
  },
];

await load(getOnly); // warm-up
// Rounds of both loads back to back, alternating which goes first: on a shared
// machine a neighbour's burst lands on one load of a round, and the median of the
// per-round ratios resists it better than one ratio of two runs far apart.
const rounds = [];
for (let round = 0; round < ROUNDS; round++) {
  const r = {};
  for (const which of round % 2 === 0 ? ['gets', 'mix'] : ['mix', 'gets']) r[which] = await load(which === 'gets' ? getOnly : mixed);
  rounds.push(r);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = median(rounds.map((r) => r.mix.rps / r.gets.rps));
// A failing ratio, broken down: each kind alone for a short load, its server CPU per
// request next to a GET's, so the output says which requests cost the most.
const kinds = [];
if (ratio < 0.25) for (const kind of mixed) kinds.push({ name: kind.name, ...(await load([kind], KIND_SECONDS)) });
await stopChild(server.child, children);

const gets = { rps: median(rounds.map((r) => r.gets.rps)) };
const mix = {
  rps: median(rounds.map((r) => r.mix.rps)),
  p50: median(rounds.map((r) => r.mix.p50)),
  p99: median(rounds.map((r) => r.mix.p99)),
};
const tail = mix.p99 / Math.max(mix.p50, 1);
// Server CPU per request of each load: their inverse ratio is what the throughput
// ratio would be on a machine where the server had a core to itself.
const cpuGets = median(rounds.map((r) => r.gets.cpuUs ?? NaN));
const cpuMix = median(rounds.map((r) => r.mix.cpuUs ?? NaN));
console.log(
  `\nmixed load on amsg serve, ${CONNECTIONS} connections, ${MEMBERS.toLocaleString('en')} members, ${ROUNDS} rounds of ${SECONDS} s each load (ratios per round: ${rounds.map((r) => (r.mix.rps / r.gets.rps).toFixed(2)).join(', ')}; medians below):\n`,
);
console.log('| Figure | Baseline | amsg | Ratio | Goal | Result |');
console.log('| --- | --- | --- | --- | --- | --- |');
console.log(
  `| mixed throughput (p50 ${mix.p50} ms, p99 ${mix.p99} ms) | GET-only: ${Math.round(gets.rps).toLocaleString('en')} req/s | ${Math.round(mix.rps).toLocaleString('en')} req/s | ${ratio.toFixed(2)}× | ≥ 0.25× | ${ratio >= 0.25 ? 'pass' : 'FAIL'} |`,
);
console.log(`| mixed p99 latency | p50: ${mix.p50} ms | ${mix.p99} ms | ${tail.toFixed(1)}× | ≤ 10× | ${tail <= 10 ? 'pass' : 'FAIL'} |`);
if (Number.isFinite(cpuGets) && Number.isFinite(cpuMix))
  console.log(
    `\nserver CPU per request: GET-only ${cpuGets.toFixed(0)} µs, mixed ${cpuMix.toFixed(0)} µs (CPU ratio ${(cpuGets / cpuMix).toFixed(2)}×)`,
  );
if (kinds.length) {
  console.log(
    `\nthe ratio failed; each kind of the mix alone (${KIND_SECONDS} s each), its server CPU per request, also in GETs (a mix at 0.25× averages 4 GETs):`,
  );
  for (const k of kinds)
    console.log(
      `  ${k.name.padEnd(24)} ${Math.round(k.rps).toLocaleString('en').padStart(7)} req/s  ` +
        (k.cpuUs === undefined
          ? '(no CPU figure)'
          : `${k.cpuUs.toFixed(0).padStart(4)} µs  ${(k.cpuUs / cpuGets).toFixed(1).padStart(5)} GETs`),
    );
}
