#!/usr/bin/env node
// SMS sending figure of issue 14, measured in one run (medians of BENCH_SMS_RUNS):
//
//   local send of a personalized SMS campaign to N members with phones   vs  local `amsg members import` of the same N   goal ≤ 1.0×
//   peak RSS of the send                                                                                                     goal ≤ 250 MB
//
// The send is `amsg sms campaigns create …` then `amsg sms campaigns send ID --wait`, timed
// together until the campaign is complete: the audience resolved, the message rendered
// per member to count its segments, one delivery row per recipient, totals and credit usage.
//
//   node bench/sms.js          (after `npm run build`)
//   BENCH_SMS_ROWS=20000 BENCH_SMS_RUNS=1 node bench/sms.js    (quick)
//   AMSG_BENCH_BIN=/tmp/x/bin/amsg.js node bench/sms.js         (a private build)
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measuresRss, median, timed } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const ROWS = Number(process.env.BENCH_SMS_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_SMS_RUNS ?? 3);

if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) {
  console.error('bench: dist/ is missing: run `npm run build` first');
  process.exit(1);
}
const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-sms-'));
process.on('exit', () => rmSync(TMP, { recursive: true, force: true }));
process.once('SIGINT', () => process.exit(130));

const say = (m) => process.stderr.write(`bench: ${m}\n`);
const amsg = (db, ...args) => timed(process.execPath, [BIN, ...args], { AMSG_DB: db, AMSG_BASE_URL: '', AMSG_QUIET: '1' });

/** Members with a phone number each (numbers from +4790000000 up), a first name and a city. */
async function writeCsv(file, rows, phones = true) {
  const out = createWriteStream(file);
  const cities = ['Oslo', 'Bergen', 'London', 'Paris', 'Berlin', 'New York', 'Tokyo', 'Lisbon'];
  out.write(`email,first_name,city${phones ? ',phone_number' : ''}\n`);
  let buf = '';
  for (let i = 0; i < rows; i++) {
    buf += `user${i}@example.com,First${i},${cities[i % 8]}${phones ? `,+47${90000000 + i}` : ''}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

const MESSAGE =
  'Hi [% member:first_name | default:"there" %]! [% if member:city == "Oslo" %]Our Karl Johan store[% else %]Our web shop[% end %] ' +
  'has 20% off this weekend: https://shop.example.com/spring Reply STOP to opt out';

const csv = join(TMP, `members-${ROWS}.csv`);
say(`writing a ${ROWS.toLocaleString('en-US')}-member CSV with phone numbers`);
await writeCsv(csv, ROWS);
// For context only: the same members without phone numbers take the import's fast path.
const plainCsv = join(TMP, `members-${ROWS}-no-phones.csv`);
await writeCsv(plainCsv, ROWS, false);

const imports = [];
const plainImports = [];
const sends = [];
const rss = [];
for (let run = 1; run <= RUNS; run++) {
  const db = join(TMP, `sms${run}.db`);
  amsg(db, 'init');
  amsg(db, 'fields', 'create', 'city', '--type', 'text');
  say(`run ${run}/${RUNS}: amsg members import`);
  imports.push(amsg(db, 'members', 'import', csv, '--group', 'Everyone', '-q').ms);
  const plainDb = join(TMP, `plain${run}.db`);
  amsg(plainDb, 'init');
  amsg(plainDb, 'fields', 'create', 'city', '--type', 'text');
  plainImports.push(amsg(plainDb, 'members', 'import', plainCsv, '--group', 'Everyone', '-q').ms);
  say(`run ${run}/${RUNS}: SMS to ${ROWS.toLocaleString('en-US')}`);
  const created = amsg(
    db,
    'sms',
    'campaigns',
    'create',
    '--name',
    'Spring',
    '--from',
    '+15555550100',
    '--group',
    'Everyone',
    '--shorten-links',
    '--message',
    MESSAGE,
    '--json',
  );
  const id = JSON.parse(created.stdout);
  const sent = amsg(db, 'sms', 'campaigns', 'send', String(id), '--wait', '--json');
  sends.push(created.ms + sent.ms);
  if (sent.rssMb) rss.push(Math.max(sent.rssMb, created.rssMb ?? 0));
  const c = JSON.parse(sent.stdout);
  if (c.send_status !== 'c' || c.total_sent !== ROWS)
    throw new Error(`the send ended in ${c.send_status} with ${c.total_sent} sent, not c with ${ROWS}`);
}

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const imp = median(imports);
const send = median(sends);
const md = (cells) => `| ${cells.join(' | ')} |`;
console.log(`\nsending a personalized SMS campaign to ${ROWS.toLocaleString('en-US')} members, median of ${RUNS}\n`);
console.log(md(['Figure', 'Baseline (median)', 'amsg (median)', 'Ratio', 'Goal', 'Result']));
console.log(md(['---', '---', '---', '---', '---', '---']));
console.log(
  md([
    'local SMS send (campaigns create + send --wait)',
    `import of the same members: ${fmt(imp)}`,
    fmt(send),
    `${(send / imp).toFixed(2)}×`,
    '≤ 1.0×',
    send / imp <= 1 ? 'pass' : 'FAIL',
  ]),
);
const plain = median(plainImports);
console.log(
  `\ncontext: the import of the same members without phone numbers took ${fmt(plain)}; the send is ${(send / plain).toFixed(2)}× that`,
);
if (measuresRss)
  console.log(`\npeak RSS of the send: ${median(rss).toFixed(0)} MB (goal ≤ 250 MB): ${median(rss) <= 250 ? 'pass' : 'FAIL'}`);
else console.log('\npeak RSS: /usr/bin/time is missing; not measured');
