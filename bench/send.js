#!/usr/bin/env node
// Sending figure of issue 4, measured in one run (medians of BENCH_SEND_RUNS):
//
//   local send of a personalized mailing to N members   vs  local `amsg members import` of the same N   goal ≤ 1.0×
//   peak RSS of the send                                                                                  goal ≤ 250 MB
//
// The send is `amsg mailings create … --group Everyone --wait`, timed until the mailing
// is complete: the audience resolved, one message per recipient built (each member's
// address and field values frozen, see docs/architecture.md) and the member histories
// written.
//
//   node bench/send.js          (after `npm run build`)
//   BENCH_SEND_ROWS=20000 BENCH_SEND_RUNS=1 node bench/send.js    (quick)
//   AMSG_BENCH_BIN=/tmp/x/bin/amsg.js node bench/send.js            (a private build)
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measuresRss, median, timed, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const ROWS = Number(process.env.BENCH_SEND_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_SEND_RUNS ?? 3);

if (!existsSync(join(BIN, '..', '..', 'dist', 'amsg.cjs'))) {
  console.error('bench: dist/ is missing: run `npm run build` first');
  process.exit(1);
}
const TMP = mkdtempSync(join(tmpdir(), 'amsg-bench-send-'));
process.on('exit', () => rmSync(TMP, { recursive: true, force: true }));
process.once('SIGINT', () => process.exit(130));

const say = (m) => process.stderr.write(`bench: ${m}\n`);

const amsg = (db, ...args) => timed(process.execPath, [BIN, ...args], { AMSG_DB: db, AMSG_BASE_URL: '', AMSG_QUIET: '1' });

// A realistic newsletter: about 2 KB of html with member fields, a default and a conditional.
const HTML = `<!doctype html><html><body style="font-family:sans-serif">
<h1>Hello [% member:first_name | default:"friend" %]!</h1>
${'<p>Our spring collection is here, with new colours and fabrics for every season. '.repeat(12)}</p>
[% if member:city == "Oslo" %]<p>Visit our store on Karl Johans gate.</p>[% else %]<p>Free shipping to [% member:city | default:"you" %].</p>[% end %]
<p>Your score: [% member:score %]</p>
<a href="https://shop.example.com/spring">Shop the collection</a>
<p><a href="[% webview_url %]">View online</a> · <a href="[% optout_url %]">Unsubscribe</a></p>
</body></html>`;
const TEXT = 'Hello [% member:first_name | default:"friend" %]!\nShop: https://shop.example.com/spring\nUnsubscribe: [% optout_url %]';

const htmlFile = join(TMP, 'spring.html');
const textFile = join(TMP, 'spring.txt');
writeFileSync(htmlFile, HTML);
writeFileSync(textFile, TEXT);
const csv = join(TMP, `members-${ROWS}.csv`);
say(`writing a ${ROWS.toLocaleString('en-US')}-member CSV`);
await writeMembersCsv(csv, ROWS);

const imports = [];
const sends = [];
const rss = [];
for (let run = 1; run <= RUNS; run++) {
  const db = join(TMP, `send${run}.db`);
  amsg(db, 'init');
  amsg(db, 'fields', 'create', 'city', '--type', 'text');
  amsg(db, 'fields', 'create', 'birthday', '--type', 'date');
  amsg(db, 'fields', 'create', 'score', '--type', 'numeric');
  say(`run ${run}/${RUNS}: amsg members import`);
  imports.push(amsg(db, 'members', 'import', csv, '--group', 'Everyone', '-q').ms);
  say(`run ${run}/${RUNS}: send to ${ROWS.toLocaleString('en-US')}`);
  const sent = amsg(
    db,
    'mailings',
    'create',
    '--name',
    'Spring',
    '--subject',
    'Hello [% member:first_name %], spring is here',
    '--sender',
    'shop@example.com',
    '--html',
    htmlFile,
    '--plaintext',
    textFile,
    '--group',
    'Everyone',
    '--wait',
    '--json',
  );
  sends.push(sent.ms);
  if (sent.rssMb) rss.push(sent.rssMb);
  const id = JSON.parse(sent.stdout).mailing_id;
  const m = JSON.parse(amsg(db, 'mailings', 'get', String(id), '--json').stdout);
  if (m.mailing_status !== 'c' || m.recipient_count !== ROWS)
    throw new Error(`the send ended in ${m.mailing_status} with ${m.recipient_count} recipients, not c with ${ROWS}`);
}

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const imp = median(imports);
const send = median(sends);
const md = (cells) => `| ${cells.join(' | ')} |`;
console.log(`\nsending a personalized mailing to ${ROWS.toLocaleString('en-US')} members, median of ${RUNS}\n`);
console.log(md(['Figure', 'Baseline (median)', 'amsg (median)', 'Ratio', 'Goal', 'Result']));
console.log(md(['---', '---', '---', '---', '---', '---']));
console.log(
  md([
    'local send (mailings create --wait)',
    `import of the same members: ${fmt(imp)}`,
    fmt(send),
    `${(send / imp).toFixed(2)}×`,
    '≤ 1.0×',
    send / imp <= 1 ? 'pass' : 'FAIL',
  ]),
);
if (measuresRss)
  console.log(`\npeak RSS of the send: ${median(rss).toFixed(0)} MB (goal ≤ 250 MB): ${median(rss) <= 250 ? 'pass' : 'FAIL'}`);
else console.log('\npeak RSS: /usr/bin/time is missing; not measured');
