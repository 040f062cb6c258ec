#!/usr/bin/env node
// Seeding figures of issue 16, medians of BENCH_SEED_RUNS, each side on a fresh database:
//
//   `amsg seed` of 10,000 generated members            vs  `amsg members import` of the same   goal ≤ 1.5×
//     members (fields, three groups, SMS numbers)          10,000 members as a CSV file
//   `amsg db restore` of a 100,000-member database     vs  seeding it (`amsg seed`)            goal ≤ 0.25×
//
// The CSV holds exactly the members the fixture generated (read back from the seeded
// database): the same addresses, field values, groups and phone numbers. Also printed,
// without a goal: seeding all of fixtures/audience-10k.yaml (members, a subscription,
// statuses, a search, and a mailing sent to 8,000 with engagement) and a second run of
// it (everything unchanged).
//
//   node bench/seed.js          (after `npm run build`)
//   BENCH_SEED_RUNS=1 BENCH_SEED_BIG=20000 node bench/seed.js     (quick)
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, timed } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const RUNS = Number(process.env.BENCH_SEED_RUNS ?? 3);
const BIG = Number(process.env.BENCH_SEED_BIG ?? 100_000);

if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) {
  console.error('bench: dist/ is missing: run `npm run build` first');
  process.exit(1);
}
const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-seed-'));
process.on('exit', () => rmSync(TMP, { recursive: true, force: true }));
process.once('SIGINT', () => process.exit(130));
const say = (m) => process.stderr.write(`bench: ${m}\n`);

const env = (db) => ({ AMSG_DB: db, AMSG_BASE_URL: '', AMSG_QUIET: '1', AMSG_YES: '1', AMSG_NOW: '2026-05-06T07:08:09Z' });
const amsg = (db, ...args) => timed(process.execPath, [BIN, ...args], env(db));
let n = 0;
const freshDb = () => {
  const db = join(TMP, `db${++n}.db`);
  amsg(db, 'init', '--json');
  return db;
};

const FIELDS = `fields:
  - { shortcut_name: city, display_name: City, field_type: text }
  - { shortcut_name: birthday, display_name: Birthday, field_type: date }
  - { shortcut_name: score, display_name: Score, field_type: numeric }
groups: [Newsletter, Gold, Silver]
`;
const generated = (count) => `${FIELDS}members:
  - generate:
      count: ${count}
      seed: 7
      email: "user{n}@example.test"
      fields: { first_name: first_name, last_name: last_name, city: city, birthday: birthdate, score: "int:0:100" }
      groups: { Newsletter: 0.8, Gold: 0.1, Silver: 0.25 }
      sms: 0.05
`;
const members10k = join(TMP, 'members-10k.yaml');
writeFileSync(members10k, generated(10_000));
const membersBig = join(TMP, 'members-big.yaml');
writeFileSync(membersBig, generated(BIG));

/** The members a seeded database holds, as the CSV `amsg members import` takes. */
function csvOf(db) {
  const sql = new Database(db, { readonly: true });
  const names = new Map(sql.prepare('SELECT field_id, shortcut_name FROM fields WHERE deleted_at IS NULL').raw().all());
  const groups = new Map(sql.prepare('SELECT member_group_id, group_name FROM member_groups').raw().all());
  const membership = new Map();
  for (const [g, m] of sql.prepare('SELECT member_group_id, member_id FROM group_members').raw().iterate())
    membership.set(m, [...(membership.get(m) ?? []), groups.get(g)]);
  const columns = ['first_name', 'last_name', 'city', 'birthday', 'score'];
  let out = `email,${columns.join(',')},groups,phone_number\n`;
  for (const [id, email, values, phone] of sql
    .prepare('SELECT member_id, email, field_values, sms_phone_number FROM members ORDER BY member_id')
    .raw()
    .iterate()) {
    const byName = {};
    for (const [fid, v] of Object.entries(JSON.parse(values))) byName[names.get(Number(fid))] = v;
    const cell = (v) =>
      v === undefined || v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v);
    out += `${email},${columns.map((c) => cell(byName[c])).join(',')},${cell((membership.get(id) ?? []).sort().join(';'))},${cell(phone)}\n`;
  }
  sql.close();
  return out;
}

// ---------------------------------------------------------------- 10,000: seed vs CSV import

say('seeding 10,000 generated members once, to write the same members as CSV');
const reference = freshDb();
amsg(reference, 'seed', members10k);
const csv = join(TMP, 'members-10k.csv');
writeFileSync(csv, csvOf(reference));

const seedMs = [];
const importMs = [];
for (let i = 0; i < RUNS; i++) {
  // Interleaved, so the noise of a shared machine hits both sides alike.
  const a = freshDb();
  seedMs.push(amsg(a, 'seed', members10k).ms);
  const b = freshDb();
  amsg(b, 'fields', 'create', 'city', '--type', 'text');
  amsg(b, 'fields', 'create', 'birthday', '--type', 'date');
  amsg(b, 'fields', 'create', 'score', '--type', 'numeric');
  amsg(b, 'groups', 'create', 'Newsletter', 'Gold', 'Silver');
  importMs.push(amsg(b, 'members', 'import', csv).ms);
  say(`run ${i + 1}: seed ${seedMs.at(-1).toFixed(0)} ms, import ${importMs.at(-1).toFixed(0)} ms`);
  // The same rows on both sides (the groups, fields and numbers too).
  if (i === 0) {
    const rows = (db) => csvOf(db);
    if (rows(a) !== rows(b)) throw new Error('the seeded and the imported members differ');
  }
}
const seed10k = median(seedMs);
const import10k = median(importMs);

// ---------------------------------------------------------------- the whole 10k fixture (no goal)

const fixtureMs = [];
const againMs = [];
for (let i = 0; i < RUNS; i++) {
  const db = freshDb();
  fixtureMs.push(amsg(db, 'seed', join(ROOT, 'fixtures', 'audience-10k.yaml')).ms);
  againMs.push(amsg(db, 'seed', join(ROOT, 'fixtures', 'audience-10k.yaml')).ms);
}

// ---------------------------------------------------------------- BIG: restore vs seed

say(`seeding ${BIG} generated members`);
const bigSeedMs = [];
let big;
for (let i = 0; i < RUNS; i++) {
  big = freshDb();
  bigSeedMs.push(amsg(big, 'seed', membersBig).ms);
  say(`run ${i + 1}: seed ${bigSeedMs.at(-1).toFixed(0)} ms`);
}
const snapshot = join(TMP, 'big-snapshot.db');
const snapMs = amsg(big, 'db', 'snapshot', snapshot).ms;
const restoreMs = [];
for (let i = 0; i < RUNS; i++) {
  const target = freshDb();
  amsg(target, 'members', 'add', 'scratch@example.com'); // a database with something to replace
  restoreMs.push(amsg(target, 'db', 'restore', snapshot).ms);
  if (i === 0) {
    const count = JSON.parse(amsg(target, 'members', 'list', '--count').stdout);
    if (count !== BIG) throw new Error(`the restored database has ${count} members, not ${BIG}`);
  }
}

const row = (label, ms, ratio, atMost) =>
  console.log(
    `${label.padEnd(58)} ${ms.toFixed(0).padStart(7)} ms${ratio === undefined ? '' : `   ${ratio.toFixed(2)}× (goal ≤ ${atMost}×) ${ratio <= atMost ? 'ok' : 'MISSED'}`}`,
  );
console.log(`\nseeding (median of ${RUNS}; a 2-core machine shared with other work, so read the ratios)`);
row('amsg members import, 10,000 members (CSV)', import10k);
row('amsg seed, the same 10,000 generated', seed10k, seed10k / import10k, 1.5);
row('amsg seed fixtures/audience-10k.yaml (send, engagement)', median(fixtureMs));
row('  the same again (everything unchanged)', median(againMs));
row(`amsg seed, ${BIG} generated members`, median(bigSeedMs));
row(`amsg db snapshot of it`, snapMs);
row(`amsg db restore of it`, median(restoreMs), median(restoreMs) / median(bigSeedMs), 0.25);
