#!/usr/bin/env node
// The SMTP figure of issue 34, measured in one run against one local smtp-server that
// accepts and discards every message (no TLS, no AUTH: the same for both sides):
//
//   bare nodemailer: its pooled transport (4 connections, as amsg's) sending N prebuilt
//   personalized messages, all handed to the pool at once                      messages/s
//   amsg serve --smtp --smtp-allow '*@example.com': a mailing to N members, from its
//   creation to the server's last 250 (the send job, the outbox, composing each
//   message from its frozen values, claims and records in SQLite)              messages/s
//   the ratio amsg / bare                                                      goal ≥ 0.7×
//   RSS of amsg serve before the send and after it                             flat
//
//   node bench/smtp.js          (after `npm run build`)
//   BENCH_SMTP_MESSAGES=2000 node bench/smtp.js   (quick)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { benchWorkspace, cpuMsOf, envInt, writeMembersCsv } from './common.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
const fail = (m) => {
  process.stderr.write(`bench/smtp: ${m}\n`);
  process.exit(1);
};
const N = envInt('BENCH_SMTP_MESSAGES', 10_000, fail);
// ---------------------------------------------------------------- the audience and the message

const HTML = `<html><body><table width="100%"><tr><td>
<h1>Spring news for [% member:first_name | default:"you" %]</h1>
<p>Hello [% member:first_name %] [% member:last_name %] in [% member:city %],</p>
${'<p>Our spring collection has arrived: light jackets, linen shirts and the shoes you asked for. Come and see them in the shop, or online, where everything ships free this month.</p>\n'.repeat(8)}
<p><a href="https://shop.example/spring?m=[% member:member_id %]">See the collection</a></p>
<p><a href="[% optout_url %]">Unsubscribe</a> · <a href="[% webview_url %]">View online</a></p>
</td></tr></table></body></html>`;
const TEXT = `Spring news for [% member:first_name | default:"you" %]

Hello [% member:first_name %] [% member:last_name %] in [% member:city %],
${'Our spring collection has arrived: light jackets, linen shirts and the shoes you asked for.\n'.repeat(8)}
See the collection: https://shop.example/spring?m=[% member:member_id %]
Unsubscribe: [% optout_url %]`;

/** The same messages, personalized and composed up front, for the bare loop. */
function prebuilt() {
  const cities = ['Oslo', 'Bergen', 'London', 'Paris', 'Berlin', 'New York', 'Tokyo', 'Lisbon'];
  return Array.from({ length: N }, (_, i) => {
    const fill = (t) =>
      t
        .replaceAll('[% member:first_name | default:"you" %]', `First${i}`)
        .replaceAll('[% member:first_name %]', `First${i}`)
        .replaceAll('[% member:last_name %]', `Last${i % 997}`)
        .replaceAll('[% member:city %]', cities[i % 8])
        .replaceAll('[% member:member_id %]', String(i + 1))
        .replaceAll('[% optout_url %]', `https://view.amsg.example.com/optout/1/1/${i + 1}`)
        .replaceAll('[% webview_url %]', `https://view.amsg.example.com/1/1/${i + 1}`);
    return {
      from: 'news@shop.example',
      to: `user${i}@example.com`,
      subject: fill('Spring news for [% member:first_name | default:"you" %]'),
      text: fill(TEXT),
      html: fill(HTML),
      messageId: `<${i}.bench@mail.amsg.example.com>`,
      headers: {
        'List-Unsubscribe': `<https://view.amsg.example.com/optout/1/1/${i + 1}>, <mailto:unsubscribe@view.amsg.example.com>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    };
  });
}

async function bare(port) {
  const messages = prebuilt();
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    maxConnections: 4,
    maxMessages: Infinity,
  });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const sent = await Promise.all(messages.map((m) => transport.sendMail(m)));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  transport.close();
  if (sent.length !== N) fail(`the bare loop sent ${sent.length} of ${N}`);
  return { rate: (N / ms) * 1000, cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / N };
}

async function bareChild() {
  const start = received;
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare', String(port)], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const code = await new Promise((r) => child.once('exit', r));
  if (code !== 0) fail(`the bare loop exited ${code}`);
  if (received - start !== N) fail(`the bare loop delivered ${received - start} of ${N}`);
  return JSON.parse(out);
}

// `node bench/smtp.js --bare PORT`: the bare loop, in a process of its own as amsg serve is (not
// sharing the SMTP server's event loop), printing its rate.
if (process.argv[2] === '--bare') {
  process.stdout.write(`${JSON.stringify(await bare(Number(process.argv[3])))}\n`);
  process.exit(0);
}
const say = (m) => process.stderr.write(`bench: ${m}\n`);
const ws = await benchWorkspace({ name: 'smtp', bin: BIN, fail });
const csv = join(ws.dir, 'members.csv');
await writeMembersCsv(csv, N, { groups: 1 });
const keys = JSON.parse(ws.amsg('init', '--json'));
ws.amsg('fields', 'create', 'city', '--type', 'text');
ws.amsg('members', 'import', csv, '--ignore', 'birthday', '--ignore', 'score');
say(`${N.toLocaleString('en-US')} members imported`);

// ---------------------------------------------------------------- the server that discards

let received = 0;
let waiter;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  size: 0,
  onData(stream, _session, cb) {
    stream.on('data', () => {});
    stream.on('end', () => {
      received++;
      if (waiter && received >= waiter.until) waiter.resolve();
      cb(null);
    });
  },
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
server.on('error', () => {});
const port = server.server.address().port;
const allReceived = (until) => (received >= until ? Promise.resolve() : new Promise((resolve) => (waiter = { until, resolve })));

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function viaAmsg() {
  // BENCH_SMTP_NODE_ARGS: node options for the served process (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const nodeArgs = (process.env.BENCH_SMTP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, BIN, 'serve', '--port', '0', '--smtp', `smtp://127.0.0.1:${port}`, '--smtp-allow', '*@example.com'],
    {
      env: ws.env,
      cwd: ws.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  ws.children.add(child);
  let err = '';
  let stopping = false;
  child.stderr.on('data', (c) => (err += c));
  const url = await new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    child.once('exit', (code) => {
      if (!stopping) fail(`amsg serve exited ${code}: ${err}`);
    });
  });
  const auth = `Basic ${Buffer.from(`${keys.public_key}:${keys.private_key}`).toString('base64')}`;
  const post = async (path, body) => {
    const res = await fetch(`${url}/1${path}`, { method: 'POST', headers: { authorization: auth }, body: JSON.stringify(body) });
    if (res.status !== 200) fail(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const groups = await (await fetch(`${url}/1/groups`, { headers: { authorization: auth } })).json();
  // Warm: one test send through the whole path (nodemailer loaded, the pool open).
  const { mailing_id: draft } = await post('/mailings', {
    name: 'Warm-up',
    subject: 'Warm-up',
    sender: 'news@shop.example',
    html_body: HTML,
    plaintext: TEXT,
    recipient_groups: [groups[0].member_group_id],
    send_at: '@D:2099-01-01T00:00:00',
  });
  const until = received + 1;
  await post(`/mailings/${draft}/test`, { recipient_emails: ['warm@example.com'] });
  await allReceived(until);
  const before = rssMb(child.pid);
  /** One mailing to the whole audience, from its creation to the server's last 250: its rate. */
  const send = async (name) => {
    const until = received + N;
    const t0 = performance.now();
    await post('/mailings', {
      name,
      subject: 'Spring news for [% member:first_name | default:"you" %]',
      sender: 'news@shop.example',
      html_body: HTML,
      plaintext: TEXT,
      recipient_groups: [groups[0].member_group_id],
    });
    const cpu0 = cpuMsOf(child.pid);
    await allReceived(until);
    const rate = (N / (performance.now() - t0)) * 1000;
    return { rate, cpuMsPerMessage: (cpuMsOf(child.pid) - cpu0) / N };
  };
  const first = await send('Spring');
  const after = rssMb(child.pid);
  // A second send of the same size: flat memory means it ends where the first one did.
  const again = await send('Spring again');
  const afterAgain = rssMb(child.pid);
  stopping = true;
  child.kill('SIGTERM');
  return {
    rate: first.rate,
    cpuMsPerMessage: first.cpuMsPerMessage,
    again: again.rate,
    againCpu: again.cpuMsPerMessage,
    before,
    after,
    afterAgain,
  };
}

const bare1 = await bareChild();
say(`bare nodemailer: ${Math.round(bare1.rate)} messages/s`);
const amsg = await viaAmsg();
say(`amsg: ${Math.round(amsg.rate)} messages/s`);
const bare2 = await bareChild();
say(`bare nodemailer again: ${Math.round(bare2.rate)} messages/s`);
// The faster of the two bare runs: the ratio is not flattered by a slow moment of the machine.
const bareBefore = bare1.rate;
const bareAfter = bare2.rate;
const bareRate = Math.max(bareBefore, bareAfter);
const ratio = amsg.rate / bareRate;
// CPU per message does not depend on what a neighbour took: the steadier figure on a shared machine.
const bareCpu = Math.min(bare1.cpuMsPerMessage, bare2.cpuMsPerMessage);
console.log(`SMTP relay of ${N.toLocaleString('en-US')} personalized messages to a local smtp-server that discards them:`);
console.log(
  `  bare nodemailer pooled loop (prebuilt): ${Math.round(bareRate).toLocaleString('en-US')} messages/s (runs: ${Math.round(bareBefore)}, ${Math.round(bareAfter)})`,
);
console.log(
  `  amsg serve --smtp (mailing → outbox → SMTP): ${Math.round(amsg.rate).toLocaleString('en-US')} messages/s (a second send: ${Math.round(amsg.again).toLocaleString('en-US')})`,
);
console.log(`  ratio: ${ratio.toFixed(2)}× (goal ≥ 0.7×) ${ratio >= 0.7 ? 'ok' : 'BELOW GOAL'}`);
console.log(
  `  CPU per message: bare ${bareCpu.toFixed(2)} ms, amsg serve ${amsg.cpuMsPerMessage.toFixed(2)} ms (a second send ${amsg.againCpu.toFixed(2)} ms; it includes building the send): bare/amsg ${(bareCpu / amsg.cpuMsPerMessage).toFixed(2)}×`,
);
console.log(
  `  amsg serve RSS: ${amsg.before.toFixed(0)} MB before the send, ${amsg.after.toFixed(0)} MB after it, ${amsg.afterAgain.toFixed(0)} MB after a second one`,
);
server.close();
process.exit(0);
