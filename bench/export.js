#!/usr/bin/env node
// Audience export figure: `node bench/export.js` (after `npm run build`).
//
//   `amsg exports create --fields all --download FILE` (local mode, end to end: start,
//   snapshot of the member ids, CSV written to FILE)  vs  `sqlite3 -csv` writing the same
//   columns from the same members table to a file.                          goal ≤ 1.5×
//
// The members are generated straight into a fresh amsg database (one prepared INSERT in
// one transaction): first_name, last_name, city, birthday, score as field values.
//
// Knobs (environment): BENCH_EXPORT_ROWS (members, default 1000000; 100000 for a quick
// run), BENCH_EXPORT_RUNS (runs per side, default 3), BENCH_SQLITE3 (default
// /usr/bin/sqlite3).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { envInt, median } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'amsg.js');
const NODE = process.execPath;

function fail(message) {
  process.stderr.write(`bench/export: ${message}\n`);
  process.exit(1);
}
const int = (name, dflt) => envInt(name, dflt, fail);

const Database = createRequire(join(ROOT, 'package.json'))('better-sqlite3');

// Set by exportBench for the run in progress.
let ROWS = 0;
let TMP = '';
let DB = '';
let env = {};

function amsgSync(...args) {
  const r = spawnSync(NODE, [BIN, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) fail(`amsg ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// ---------------------------------------------------------------- the audience

function generate() {
  const t0 = performance.now();
  amsgSync('init', '--json');
  amsgSync('fields', 'create', 'city', '--type', 'text');
  amsgSync('fields', 'create', 'birthday', '--type', 'date');
  amsgSync('fields', 'create', 'score', '--type', 'numeric');
  const db = new Database(DB);
  const ids = Object.fromEntries(
    db
      .prepare('SELECT shortcut_name, field_id FROM fields WHERE account_id = 1')
      .all()
      .map((f) => [f.shortcut_name, f.field_id]),
  );
  const firsts = ['Ada', 'Bo', 'Chloé', 'Dmitri', 'Eve', 'Fatima', 'Grace', 'Hiro', 'Ines', 'José'];
  const lasts = ['Lovelace', 'Berg', "O'Neil", 'Smith, Jr', 'Nakamura', 'Okafor', 'Hopper', 'Svensson'];
  const cities = ['Oslo', 'London', 'Paris', 'São Paulo', 'New York', 'Tokyo', 'Lagos', 'Lima'];
  const insert = db.prepare(
    `INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at, field_values, sms_phone_number)
     VALUES (1, ?, ?, ?, ?, ?, ?)`,
  );
  const stampOf = (i) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().slice(0, 23) + '000';
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const values = {
        [ids.first_name]: firsts[i % firsts.length],
        [ids.last_name]: lasts[i % lasts.length],
        [ids.city]: cities[i % cities.length],
        [ids.birthday]: `19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 10}`,
        [ids.score]: (i % 1000) / 10,
      };
      const at = stampOf(i);
      insert.run(`member${i}@example.com`, 'a', at, at, JSON.stringify(values), i % 4 === 0 ? `+4790${String(i).padStart(6, '0')}` : null);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { ms: performance.now() - t0, ids };
}

// ---------------------------------------------------------------- the two sides

function timed(cmd, args, outFile) {
  return new Promise((resolve, reject) => {
    const fd = outFile ? openSync(outFile, 'w') : 'ignore';
    const t0 = performance.now();
    const child = spawn(cmd, args, { env, stdio: ['ignore', fd, 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (typeof fd === 'number') closeSync(fd);
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`));
      else resolve(ms);
    });
  });
}

/** Each amsg run starts from no exports, so every run inserts into the same empty snapshot table. */
function dropExports() {
  const db = new Database(DB);
  db.pragma('foreign_keys = ON');
  db.exec('DELETE FROM exports');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * Runs the figure and answers it. `bench/run.js` can import and call this; run alone,
 * the file calls it with the BENCH_EXPORT_* settings.
 */
export async function exportBench({
  rows = int('BENCH_EXPORT_ROWS', 1_000_000),
  runs = int('BENCH_EXPORT_RUNS', 3),
  sqlite3 = process.env.BENCH_SQLITE3 || '/usr/bin/sqlite3',
} = {}) {
  if (!existsSync(join(ROOT, 'dist', 'amsg.cjs'))) fail('dist/ is missing: run `npm run build` first');
  if (!existsSync(sqlite3)) fail(`no sqlite3 command-line shell at ${sqlite3} (apt-get install sqlite3, or set BENCH_SQLITE3)`);
  ROWS = rows;
  TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-export-'));
  DB = join(TMP, 'amsg.db');
  env = { ...process.env, AMSG_DB: DB, AMSG_QUIET: '1', AMSG_BASE_URL: '', AMSG_NOW: '' };
  const cleanup = () => rmSync(TMP, { recursive: true, force: true });
  process.once('exit', cleanup);
  try {
    return await measure(runs, sqlite3);
  } finally {
    cleanup();
    process.off('exit', cleanup);
  }
}

async function measure(RUNS, SQLITE3) {
  process.stderr.write(`bench/export: generating ${ROWS.toLocaleString('en')} members…\n`);
  const { ms: genMs, ids } = generate();
  process.stderr.write(`bench/export: generated in ${(genMs / 1000).toFixed(1)} s\n`);

  const amsgOut = join(TMP, 'amsg.csv');
  const sqliteOut = join(TMP, 'sqlite3.csv');
  const field = (name) => `json_extract(field_values, '$."${ids[name]}"')`;
  const query = `SELECT email, member_id, member_since, plaintext_preferred, bounce_count, member_status_id, last_modified_at,
    ${['first_name', 'last_name', 'city', 'birthday', 'score'].map(field).join(', ')}
    FROM members WHERE account_id = 1 AND deleted_at IS NULL AND member_status_id = 'a' ORDER BY member_id`;

  const amsgTimes = [];
  const sqliteTimes = [];
  // Interleaved, so the noise of a shared machine hits both sides alike.
  for (let run = 0; run < RUNS; run++) {
    dropExports();
    // Both sides write a new file: replacing a large file costs a flush on ext4
    // (auto_da_alloc), which would land on one side only.
    rmSync(amsgOut, { force: true });
    rmSync(sqliteOut, { force: true });
    amsgTimes.push(await timed(NODE, [BIN, 'exports', 'create', '--fields', 'all', '--download', amsgOut]));
    sqliteTimes.push(await timed(SQLITE3, ['-csv', '-header', DB, query], sqliteOut));
    process.stderr.write(
      `bench/export: run ${run + 1}/${RUNS}: amsg ${(amsgTimes[run] / 1000).toFixed(2)} s, sqlite3 ${(sqliteTimes[run] / 1000).toFixed(2)} s\n`,
    );
  }

  const lines = (file) => {
    const bytes = readFileSync(file);
    let n = 0;
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) n++;
    return n;
  };
  const amsgLines = lines(amsgOut);
  if (amsgLines !== ROWS + 1) fail(`amsg wrote ${amsgLines} lines, expected ${ROWS + 1}`);
  const sqliteLines = lines(sqliteOut);
  if (sqliteLines !== ROWS + 1) fail(`sqlite3 wrote ${sqliteLines} lines, expected ${ROWS + 1}`);
  const a = median(amsgTimes);
  const q = median(sqliteTimes);
  const ratio = a / q;
  const mb = (f) => (statSync(f).size / 1e6).toFixed(1);
  console.log(`audience export of ${ROWS.toLocaleString('en')} members, median of ${RUNS}:`);
  console.log(`  amsg exports create --fields all --download FILE  ${(a / 1000).toFixed(2)} s  (${mb(amsgOut)} MB)`);
  console.log(`  sqlite3 -csv, same columns, to a file              ${(q / 1000).toFixed(2)} s  (${mb(sqliteOut)} MB)`);
  // The goal is for a million members: on small exports amsg's start (~0.25 s of node and
  // the bundle, against ~5 ms for sqlite3) weighs more.
  if (ROWS >= 1_000_000) console.log(`  ratio ${ratio.toFixed(2)}×  (goal ≤ 1.5×) ${ratio <= 1.5 ? 'ok' : 'MISSED'}`);
  else console.log(`  ratio ${ratio.toFixed(2)}×  (the goal, ≤ 1.5×, is for 1,000,000 members)`);
  return { rows: ROWS, amsgMs: a, sqliteMs: q, ratio };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => process.exit(130));
  await exportBench();
}
