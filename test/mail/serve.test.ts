import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../e2e/harness.js';
import { header, PASS, startSmtp, type TestSmtp } from './smtp-server.js';

/**
 * `amsg serve --smtp` as a process: killed mid-delivery, started against a server that is
 * down, following a confirmation link; and the CLI's refusal of a bad SMTP URL. The real
 * clock runs (no AMSG_NOW), so retries come due.
 */
const dir = mkdtempSync(join(tmpdir(), 'amsg-mail-'));
let n = 0;
const env = (extra: Record<string, string | undefined> = {}) => ({
  ...process.env,
  XDG_CONFIG_HOME: join(dir, 'config'),
  AMSG_NOW: undefined,
  AMSG_BASE_URL: '',
  AMSG_API_KEY: '',
  AMSG_DB: '',
  AMSG_SMTP_URL: undefined,
  AMSG_SMTP_ALLOW: undefined,
  ...extra,
});

interface Served {
  url: string;
  proc: ResultPromise;
  stderr: () => string;
  auth: string;
}

async function newDb(): Promise<{ db: string; auth: string }> {
  const db = join(dir, `amsg-${++n}.db`);
  const init = await execa('node', [BIN, 'init', '--json'], { env: env({ AMSG_DB: db }) });
  const k = JSON.parse(init.stdout);
  return { db, auth: `Basic ${Buffer.from(`${k.public_key}:${k.private_key}`).toString('base64')}` };
}

async function serve(db: string, auth: string, args: string[]): Promise<Served> {
  const proc = execa('node', [BIN, 'serve', '--port', '0', '--db', db, ...args], { env: env(), reject: false });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15_000);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(out.split('\n')[0].trim());
      }
    });
  });
  return { url, proc, stderr: () => err, auth };
}

async function call(s: Served, method: string, path: string, body?: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: s.auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const MAILING = {
  name: 'Kill test',
  subject: 'Hello',
  sender: 'news@shop.example',
  html_body: '<p>Hi</p><p>[% optout_url %]</p>',
  plaintext: 'Hi [% optout_url %]',
  send_at: '@D:2030-01-01T00:00:00',
  recipient_emails: ['reader@example.test'],
};

const servers: Served[] = [];
let smtp: TestSmtp | undefined;
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.proc.kill('SIGKILL');
    await s.proc;
  }
  await smtp?.close();
  smtp = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('amsg serve --smtp', () => {
  it('a SIGKILL while the server holds a DATA loses nothing: after a restart every message is delivered, a repeat under its own Message-ID', async () => {
    let stall: (() => void) | undefined;
    let stalled: string | undefined;
    smtp = await startSmtp({
      // The first message's DATA is held (the server has it all, and has not answered) until released.
      onData: (raw) => {
        if (stalled) return undefined;
        stalled = header(raw, 'Message-ID');
        return new Promise((r) => (stall = () => r(undefined)));
      },
    });
    const { db, auth } = await newDb();
    const first = await serve(db, auth, ['--smtp', smtp.url, '--smtp-tls-insecure']);
    servers.push(first);
    const { mailing_id } = (await call(first, 'POST', '/1/mailings', MAILING)).body;
    const queued = await call(first, 'POST', `/1/mailings/${mailing_id}/test`, {
      recipient_emails: ['a@desk.example', 'b@desk.example', 'c@desk.example'],
    });
    expect(queued.status).toBe(200);
    await until('the stalled DATA', () => stall !== undefined);
    first.proc.kill('SIGKILL');
    await first.proc;
    servers.length = 0;
    // The server goes on to accept what it held: the client that sent it is gone, so amsg never heard the 250.
    stall!();
    const log = () =>
      new Database(db, { readonly: true })
        .prepare('SELECT to_email, message_id, status, attempts, lease_pid FROM mail_outbox ORDER BY mail_id')
        .all() as any[];
    const held = log().filter((r) => r.status === 'q');
    expect(held.length).toBeGreaterThanOrEqual(1);
    expect(held.every((r) => r.lease_pid !== null && r.attempts === 1)).toBe(true);

    const second = await serve(db, auth, ['--smtp', smtp.url, '--smtp-tls-insecure']);
    servers.push(second);
    await until('every message sent', () => log().every((r) => r.status === 's'));
    const rows = log();
    const ids = new Map(rows.map((r) => [r.message_id, r.to_email]));
    expect(ids.size).toBe(3);
    // Every message arrived; each copy carries its row's Message-ID, so a repeat is one message to a mail store.
    const arrived = smtp.received.map((m) => m.parsed.messageId!);
    expect(new Set(arrived)).toEqual(new Set(ids.keys()));
    for (const m of smtp.received) expect(ids.get(m.parsed.messageId!)).toBe(m.envelopeTo[0]);
    expect(arrived.length).toBeLessThanOrEqual(3 + held.length);
    // The one the kill caught between the server's having it and amsg's hearing the 250 came twice, under one Message-ID.
    expect(held.map((r) => r.message_id)).toContain(stalled);
    expect(arrived.filter((id) => id === stalled)).toHaveLength(2);
    // The redelivered ones count the attempt the kill cut short.
    for (const r of rows) expect(r.attempts).toBe(held.some((h) => h.message_id === r.message_id) ? 2 : 1);
  }, 60_000);

  it('with the SMTP server down it keeps serving, says so once on stderr, and delivers when the server is back', async () => {
    const probe = await startSmtp();
    const port = probe.port;
    await probe.close();
    const { db, auth } = await newDb();
    const s = await serve(db, auth, ['--smtp', `smtp://amsg:${encodeURIComponent(PASS)}@127.0.0.1:${port}`, '--smtp-tls-insecure']);
    servers.push(s);
    expect(s.stderr()).toContain(`real mail goes out through smtp://amsg:••••@127.0.0.1:${port}; no mailing's own send (no --smtp-allow)`);
    const { mailing_id } = (await call(s, 'POST', '/1/mailings', MAILING)).body;
    await call(s, 'POST', `/1/mailings/${mailing_id}/test`, { recipient_emails: ['a@desk.example'] });
    await until('the note', () => s.stderr().includes('cannot deliver mail'));
    expect((await call(s, 'GET', '/1/mail/log')).body).toMatchObject([
      { to: 'a@desk.example', state: 'queued', last_reply: expect.stringMatching(/ECONNREFUSED/) },
    ]);
    expect((await call(s, 'GET', '/1/members')).status).toBe(200);
    smtp = await startSmtp({ port });
    await smtp.waitFor(1, 20_000);
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual(['[Test] Hello']);
    await until('the log says sent', async () => (await call(s, 'GET', '/1/mail/log')).body[0].state === 'sent');
    expect(s.stderr().match(/cannot deliver mail/g)).toHaveLength(1);
    expect(s.stderr()).toContain('delivering mail through');
    expect(s.stderr()).not.toContain(PASS);
  }, 60_000);

  it('an opt-in confirmation links to this server: the page asks, the button confirms', async () => {
    smtp = await startSmtp();
    const { db, auth } = await newDb();
    const s = await serve(db, auth, ['--smtp', smtp.url, '--smtp-tls-insecure']);
    servers.push(s);
    expect((await call(s, 'POST', '/1/members/signup', { email: 'new@example.test', group_ids: [] })).status).toBe(200);
    const [m] = await smtp.waitFor(1);
    const link = new RegExp(`${s.url}/_mail/confirm/[0-9a-f]{32}`).exec(m.parsed.text!)![0];
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<form method="post"><button type="submit">Yes, subscribe me</button></form>');
    const done = await fetch(link, { method: 'POST' });
    expect(await done.text()).toContain('<strong>new@example.test</strong> is confirmed');
    expect((await fetch(`${s.url}/_mail/confirm/${'f'.repeat(32)}`, { method: 'POST' })).status).toBe(404);
  }, 60_000);
});

describe('fast start', () => {
  /**
   * The files a command reads whose path names nodemailer: bin/amsg.js reads the vendor
   * file itself (to compile it from its code cache), so a preload that watches readFileSync
   * sees it where the require cache would not.
   */
  async function nodemailerReads(args: string[], extra: Record<string, string>) {
    const hook = join(dir, 'watch-reads.cjs');
    const out = join(dir, `reads-${++n}.txt`);
    writeFileSync(
      hook,
      `const fs = require('node:fs'); const read = fs.readFileSync; const seen = [];
fs.readFileSync = function (p, ...rest) { if (String(p).includes('nodemailer')) seen.push(String(p)); return read.call(this, p, ...rest); };
process.on('exit', () => fs.writeFileSync(process.env.READS_OUT, seen.join('\\n')));`,
    );
    await execa('node', ['--require', hook, BIN, ...args], { env: env({ ...extra, READS_OUT: out }), reject: false });
    return readFileSync(out, 'utf8').split('\n').filter(Boolean);
  }

  it('a plain local command with an SMTP server set, and --version, read no nodemailer; a command with mail to send does', async () => {
    const { db, auth } = await newDb();
    const smtpEnv = { AMSG_DB: db, AMSG_SMTP_URL: 'smtp://u:p@127.0.0.1:1' };
    expect(await nodemailerReads(['members', 'list', '--json'], smtpEnv)).toEqual([]);
    expect(await nodemailerReads(['--version'], smtpEnv)).toEqual([]);
    // The control: a test send delivers before the command ends, and loads it.
    const s = await serve(db, auth, []);
    const { mailing_id } = (await call(s, 'POST', '/1/mailings', MAILING)).body;
    s.proc.kill('SIGTERM');
    await s.proc;
    const reads = await nodemailerReads(['mailings', 'test', String(mailing_id), '--to', 'q@desk.example'], smtpEnv);
    expect(reads.some((f) => f.endsWith('dist/nodemailer.cjs'))).toBe(true);
  }, 60_000);
});

describe('a bad SMTP setting', () => {
  it('is a usage error (exit 2) at start that names the problem and never prints the password', async () => {
    const { db } = await newDb();
    const r = await execa('node', [BIN, 'serve', '--port', '0', '--db', db, '--smtp', 'http://amsg:hunter2@mail.example'], {
      env: env(),
      reject: false,
    });
    expect(r.exitCode).toBe(2);
    // Piped, the error is JSON (the CLI's convention since the rate-limit merge).
    expect(JSON.parse(r.stderr)).toEqual({
      error: '--smtp: SMTP URL must start with smtp:// or smtps://, got "http://amsg:••••@mail.example"',
      status: null,
      field: null,
      exit_code: 2,
    });
    const local = await execa('node', [BIN, 'members', 'list'], {
      env: env({ AMSG_DB: db, AMSG_SMTP_URL: 'smtp://amsg:hunter2@mail.example/x' }),
      reject: false,
    });
    expect(local.exitCode).toBe(2);
    expect(JSON.parse(local.stderr).error).toContain('SMTP URL takes no path (/x): "smtp://amsg:••••@mail.example/x"');
    expect(local.stderr + local.stdout).not.toContain('hunter2');
    const allow = await execa(
      'node',
      [BIN, 'serve', '--port', '0', '--db', db, '--smtp', 'smtp://127.0.0.1:1', '--smtp-allow', 'example.test'],
      {
        env: env(),
        reject: false,
      },
    );
    expect(allow.exitCode).toBe(2);
    expect(JSON.parse(allow.stderr).error).toContain(
      'an allow pattern is an address with * or ? wildcards, as in *@example.test; got "example.test"',
    );
    const set = await execa('node', [BIN, 'config', 'set', 'smtp', 'smtp://amsg:hunter2@mail.example:2525'], { env: env(), reject: false });
    expect(JSON.parse(set.stdout)).toEqual({ profile: 'default', smtp: 'smtp://amsg:••••@mail.example:2525' });
    expect(set.stdout + set.stderr).not.toContain('hunter2');
  }, 60_000);
});
