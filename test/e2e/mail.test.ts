import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { header, PASS, startSmtp, type TestSmtp } from '../mail/smtp-server.js';
import { NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg mailings test` and `amsg mail log`, end to end, in local mode (the CLI sends before
 * it exits) and against a spawned `amsg serve` (which sends in the background), both with
 * AMSG_SMTP_URL naming a real SMTP server of the test's own (STARTTLS, AUTH). The
 * transcripts must match, Message-IDs aside (each message gets its own).
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const AT_NOW = `@D:${NOW.slice(0, 19)}`;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startSmtp();
  // Read by every amsg process the harness starts (amsg serve included).
  process.env.AMSG_SMTP_URL = smtp.url;
  process.env.AMSG_SMTP_TLS_INSECURE = '1';
});
afterAll(async () => {
  await smtp.close();
  delete process.env.AMSG_SMTP_URL;
  delete process.env.AMSG_SMTP_TLS_INSECURE;
});

describe.each<Mode>(['local', 'remote'])('amsg mailings test, amsg mail log (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  const to = `me+${mode}@desk.example`;
  const mine = () => smtp.received.filter((m) => m.envelopeTo[0] === to);

  beforeAll(async () => {
    await box.start();
    writeFileSync(join(box.dir, 'news.html'), '<p>Hi [% member:first_name | default:"friend" %]</p><p>[% optout_url %]</p>');
    writeFileSync(join(box.dir, 'news.txt'), 'Hi [% member:first_name | default:"friend" %]\n[% optout_url %]');
    for (const args of [
      ['members', 'add', 'ada@example.com', '--field', 'first_name=Ada', '--group', 'Readers'],
      [
        'mailings',
        'create',
        '--name',
        'May',
        '--subject',
        'May news for [% member:first_name | default:"you" %]',
        '--sender',
        'news@shop.example',
        '--reply-to',
        'help@shop.example',
        '--html',
        join(box.dir, 'news.html'),
        '--plaintext',
        join(box.dir, 'news.txt'),
        '--group',
        'Readers',
        '--send-at',
        '2030-01-01T00:00:00Z',
      ],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('a test send goes out personalized, with [Test], and the log shows it sent', async () => {
    const r = await run('mailings', 'test', '1', '--to', to, '--as', 'ada@example.com', '--json');
    expect(r.exitCode).toBe(0);
    const queued = JSON.parse(r.stdout);
    expect(queued).toEqual([
      {
        mail_id: 1,
        to,
        subject: '[Test] May news for Ada',
        message_id: expect.stringMatching(/^<[0-9a-f]{24}@mail\.amsg\.example\.com>$/),
      },
    ]);
    // Local mode sends before the command ends, and says so.
    if (mode === 'local') {
      expect(mine()).toHaveLength(1);
      expect(r.stderr).toContain(`amsg: mail through smtp://amsg:••••@127.0.0.1:${smtp.port}: 1 sent`);
    }
    expect(r.stderr).not.toContain(PASS);
    await smtp.waitFor(smtp.received.length + (mine().length ? 0 : 1));
    const [m] = mine();
    expect(m.secure).toBe(true);
    expect(m.parsed.messageId).toBe(queued[0].message_id);
    expect(m.parsed.subject).toBe('[Test] May news for Ada');
    expect(m.parsed.text).toMatch(/\nHi Ada\nhttps:\/\/view\.amsg\.example\.com\/optout\/1\/1\/\d+$/);
    expect(m.parsed.html).toContain('<p>Hi Ada</p>');
    expect(header(m.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(m.parsed.replyTo?.text).toBe('help@shop.example');
    // The server's background sender records the 250 a moment after the server got the message.
    let log: any[] = [];
    for (let i = 0; i < 100; i++) {
      log = await json('mail', 'log', '--json');
      if (log[0]?.state === 'sent') break;
      transcripts[mode].pop();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toEqual([
      {
        mail_id: 1,
        kind: 'test',
        mailing_id: 1,
        member_id: expect.any(Number),
        to,
        subject: '[Test] May news for Ada',
        message_id: queued[0].message_id,
        state: 'sent',
        attempts: 1,
        last_reply: expect.stringMatching(/^250 /),
        bounced: false,
        created_at: AT_NOW,
        sent_at: AT_NOW,
        next_attempt_at: null,
      },
    ]);
    expect(await json('mail', 'log', '--count')).toBe(1);
  });

  test('a member that is not there is a 400 naming member_email; nothing is queued', async () => {
    const r = await run('mailings', 'test', '1', '--to', to, '--as', 'nobody@example.com');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('member_email: no member with the address nobody@example.com');
    expect(await json('mail', 'log', '--count')).toBe(1);
  });
});

test('both modes print the same transcripts (Message-IDs aside)', () => {
  const view = (mode: Mode) =>
    transcriptView(transcripts[mode]).map((r) => ({
      ...r,
      args: r.args.replaceAll(mode, 'MODE'),
      stdout: r.stdout
        .replace(/<[0-9a-f]{24}@/g, '<ID@')
        .replaceAll(mode, 'MODE')
        .replace(/"last_reply": "250 [^"]*"/, '"last_reply": "250"'),
    }));
  expect(transcripts.local.length).toBeGreaterThan(3);
  expect(view('remote')).toEqual(view('local'));
});
