import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { addMember, createField, createGroups, ok } from '../api/util.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { configureMail, type MailSettings } from '../../src/service/mail/settings.js';
import { DUE_SQL, HELD_SQL, MailDeliverer, MAX_ATTEMPTS } from '../../src/service/mail/deliver.js';
import { parseSmtpUrl, maskSmtpUrl, SmtpUrlError } from '../../src/client/smtp-url.js';
import { answerMailLink } from '../../src/api/mail-links.js';
import { header, headerLines, PASS, smtpError, startSmtp, type TestSmtp } from './smtp-server.js';

/**
 * Real mail out, in-process: the route table over a fresh database, a MailDeliverer over
 * it, and a real SMTP server (AUTH after STARTTLS on a self-signed certificate) whose
 * messages are parsed with mailparser.
 */
let s: TestService;
let smtp: TestSmtp;
let settings: MailSettings;
const HTML = '<p>Hi [% member:first_name | default:"friend" %] from [% member:city %]</p><p><a href="[% optout_url %]">Opt out</a></p>';
const TEXT = 'Hi [% member:first_name | default:"friend" %] from [% member:city %]\nOpt out: [% optout_url %]';

async function setUp(hooks: Parameters<typeof startSmtp>[0] = {}, allow: string[] = ['*@example.test']) {
  smtp = await startSmtp(hooks);
  settings = { smtp: parseSmtpUrl(smtp.url, { tlsInsecure: true }), allow };
  configureMail(s.db, settings);
}

/** Delivers what is due now, as a local command does after its call. */
const deliver = (opts: ConstructorParameters<typeof MailDeliverer>[3] = {}) =>
  new MailDeliverer(s.db, s.clock, settings, opts).runFor(8_000);
const log = async () => ok(s, 'GET', '/1/mail/log');
const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};

let group: number;
beforeEach(async () => {
  s = makeService();
  await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
  await createField(s, { shortcut_name: 'city', field_type: 'text' });
  [group] = await createGroups(s, 'Readers');
  await addMember(s, 'ada@example.test', { fields: { first_name: 'Ada', city: 'Oslo' }, group_ids: [group] });
  await addMember(s, 'bob@example.test', { fields: { city: 'Bergen' }, group_ids: [group] });
  await addMember(s, 'cy@real.example.com', { fields: { first_name: 'Cy' }, group_ids: [group] });
});
afterEach(async () => {
  await smtp?.close();
  s.close();
});

async function createMailing(over: Record<string, unknown> = {}): Promise<number> {
  const body = await ok(s, 'POST', '/1/mailings', {
    body: {
      name: 'Spring',
      subject: 'Spring for [% member:first_name | default:"you" %]',
      sender: 'News <news@shop.example>',
      reply_to: 'help@shop.example',
      html_body: HTML,
      plaintext: TEXT,
      recipient_groups: [group],
      ...over,
    },
  });
  return body.mailing_id;
}

describe('test sends', () => {
  it('mails the content with [Test], personalized per member, as multipart/alternative with the unsubscribe headers, over STARTTLS with AUTH', async () => {
    await setUp();
    const id = await createMailing({ send_at: '@D:2030-01-01T00:00:00' });
    const ada = await ok(s, 'POST', `/1/mailings/${id}/test`, {
      body: { recipient_emails: ['Me@Desk.example'], member_email: 'ada@example.test' },
    });
    expect(ada).toEqual([
      {
        mail_id: 1,
        to: 'me@desk.example',
        subject: '[Test] Spring for Ada',
        message_id: expect.stringMatching(/^<[0-9a-f]{24}@mail\.amsg\.example\.com>$/),
      },
    ]);
    await ok(s, 'POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['me@desk.example'], member_email: 'bob@example.test' } });
    await deliver();
    const got = await smtp.waitFor(2);
    expect(got).toHaveLength(2);
    const [a, b] = got;
    for (const m of got) {
      expect(m.secure).toBe(true); // STARTTLS
      expect(m.user).toBe('amsg'); // AUTH
      expect(m.envelopeTo).toEqual(['me@desk.example']);
      expect(m.parsed.from?.value).toEqual([{ name: 'News', address: 'news@shop.example' }]);
      expect(m.parsed.replyTo?.value).toEqual([{ name: '', address: 'help@shop.example' }]);
      expect(m.parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
      expect(m.parsed.date?.toISOString()).toBe('2026-03-04T05:06:07.000Z');
      expect(header(m.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    }
    expect(a.parsed.messageId).toBe(ada[0].message_id);
    expect(a.parsed.subject).toBe('[Test] Spring for Ada');
    expect(b.parsed.subject).toBe('[Test] Spring for you');
    const adaId = s.db.prepare("SELECT member_id FROM members WHERE email = 'ada@example.test'").pluck().get() as number;
    const optout = `https://view.amsg.example.com/optout/1/${id}/${adaId}`;
    expect(header(a.raw, 'List-Unsubscribe')).toBe(
      `<${optout}>, <mailto:unsubscribe@view.amsg.example.com?subject=unsubscribe-1-${id}-${adaId}>`,
    );
    expect(a.parsed.text).toBe(
      `View this message in a browser: https://view.amsg.example.com/1/${id}/${adaId}\n\nHi Ada from Oslo\nOpt out: ${optout}`,
    );
    expect(a.parsed.html).toContain(`<p>Hi Ada from Oslo</p><p><a href="${optout}">Opt out</a></p>`);
    expect(a.parsed.html).toContain(`<a href="https://view.amsg.example.com/1/${id}/${adaId}">View this message in a browser</a>`);
    expect(b.parsed.text).toContain('Hi friend from Bergen');
    expect((await log()).map((r: any) => [r.to, r.subject, r.state, r.attempts, r.last_reply?.slice(0, 3), r.kind])).toEqual([
      ['me@desk.example', '[Test] Spring for you', 'sent', 1, '250', 'test'],
      ['me@desk.example', '[Test] Spring for Ada', 'sent', 1, '250', 'test'],
    ]);
  });

  it("without a member: each field's sample value; a bad member or no SMTP server is a clear error", async () => {
    await setUp();
    const id = await createMailing({ send_at: '@D:2030-01-01T00:00:00' });
    await ok(s, 'POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['qa@desk.example'] } });
    await deliver();
    const [m] = await smtp.waitFor(1);
    expect(m.parsed.subject).toBe('[Test] Spring for [first_name]');
    expect(m.parsed.text).toContain('Hi [first_name] from [city]');
    const bad = await s.call('POST', `/1/mailings/${id}/test`, {
      body: { recipient_emails: ['qa@desk.example'], member_email: 'nobody@example.test' },
    });
    expect(bad).toEqual({
      status: 400,
      body: { error: 'member_email: no member with the address nobody@example.test', field: 'member_email' },
    });
    const none = await s.call('POST', `/1/mailings/${id}/test`, { body: { recipient_emails: [] } });
    expect(none.status).toBe(400);
    expect(none.body.field).toBe('recipient_emails');
    configureMail(s.db, undefined);
    const off = await s.call('POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['qa@desk.example'] } });
    expect(off.status).toBe(409);
    expect(off.body.error).toMatch(/^no SMTP server is configured.*--smtp URL.*AMSG_SMTP_URL/);
  });
});

describe("a mailing's own sends", () => {
  it('go to the allowed addresses only, personalized per member; the rest stay simulated', async () => {
    await setUp();
    const id = await createMailing();
    runJobs();
    expect((await ok(s, 'GET', `/1/mailings/${id}`)).mailing_status).toBe('c');
    await deliver();
    const got = await smtp.waitFor(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(got.map((m) => m.envelopeTo[0]).sort()).toEqual(['ada@example.test', 'bob@example.test']);
    expect(smtp.rcpts).not.toContain('cy@real.example.com');
    const byTo = Object.fromEntries(got.map((m) => [m.envelopeTo[0], m.parsed]));
    expect(byTo['ada@example.test'].subject).toBe('Spring for Ada');
    expect(byTo['bob@example.test'].subject).toBe('Spring for you');
    expect(byTo['ada@example.test'].text).toContain('Hi Ada from Oslo');
    expect(byTo['bob@example.test'].text).toContain('Hi friend from Bergen');
    // Each its own member's opt-out link.
    const ids = Object.fromEntries(
      (s.db.prepare('SELECT email, member_id FROM members').all() as any[]).map((r) => [r.email, r.member_id]),
    );
    const raw = (to: string) => got.find((m) => m.envelopeTo[0] === to)!.raw;
    expect(header(raw('bob@example.test'), 'List-Unsubscribe')).toMatch(
      new RegExp(`^<https://view\\.amsg\\.example\\.com/optout/1/${id}/${ids['bob@example.test']}>, <mailto:`),
    );
    expect(header(raw('ada@example.test'), 'List-Unsubscribe')).toMatch(
      new RegExp(`^<https://view\\.amsg\\.example\\.com/optout/1/${id}/${ids['ada@example.test']}>, <mailto:`),
    );
    // All three messages are in the simulated history as before.
    expect(s.db.prepare('SELECT COUNT(*) FROM mailing_messages WHERE mailing_id = ?').pluck().get(id)).toBe(3);
    expect((await log()).map((r: any) => [r.kind, r.to, r.state])).toEqual([
      ['send', 'bob@example.test', 'sent'],
      ['send', 'ada@example.test', 'sent'],
    ]);
  });

  it("carry exactly the headers the console's preview shows for the member (apart from Message-ID and Date values); a text-preferring member gets text only", async () => {
    await setUp();
    const bobId = s.db.prepare("SELECT member_id FROM members WHERE email = 'bob@example.test'").pluck().get() as number;
    s.db.prepare('UPDATE members SET plaintext_preferred = 1 WHERE member_id = ?').run(bobId);
    const id = await createMailing();
    runJobs();
    await deliver();
    const got = await smtp.waitFor(2);
    expect(got).toHaveLength(2);
    const ids = Object.fromEntries(
      (s.db.prepare('SELECT email, member_id FROM members').all() as any[]).map((r) => [r.email, r.member_id]),
    );
    for (const [to, contentType] of [
      ['ada@example.test', 'multipart/alternative'],
      ['bob@example.test', 'text/plain; charset=utf-8'],
    ]) {
      const preview = await ok(s, 'GET', `/1/mailings/${id}/preview`, { query: { member_id: String(ids[to]) } });
      expect(preview.source).toBe('sent');
      const sent = headerLines(got.find((m) => m.envelopeTo[0] === to)!.raw).filter(
        // nodemailer's pick of a single part's encoding, from its content: not a header the preview decides.
        ([name]) => name !== 'Content-Transfer-Encoding',
      );
      expect(sent.map(([name]) => name)).toEqual(preview.headers.map(([name]: string[]) => name));
      // The values, but the send's own Message-ID and Date, and the MIME boundary nodemailer draws.
      const values = (list: string[][]) =>
        Object.fromEntries(
          list.map(([name, value]) => [
            name,
            name === 'Message-ID' || name === 'Date' ? '(its own)' : value.replace(/;\s*boundary="[^"]*"$/, ''),
          ]),
        );
      expect(values(sent)).toEqual(values(preview.headers));
      expect(values(preview.headers)['Content-Type']).toBe(contentType);
      expect(preview.headers.find(([n]: string[]) => n === 'Date')?.[1]).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    }
    expect(got.find((m) => m.envelopeTo[0] === 'bob@example.test')!.parsed.html).toBe(false);
  });

  it('cost a send nothing without an SMTP server: no statement of the send touches the outbox', async () => {
    s.close();
    s = makeService(undefined, { trace: true });
    [group] = await createGroups(s, 'Readers');
    await addMember(s, 'ada@example.test', { group_ids: [group] });
    await createMailing({ subject: 'Plain', html_body: '<p>[% optout_url %]</p>', plaintext: '[% optout_url %]' });
    const { statements } = await s.capture(() => runJobs());
    expect(statements.some((sql) => /INSERT INTO mailing_messages/.test(sql))).toBe(true);
    expect(
      statements.filter((sql) =>
        /mail_outbox|mailing_queue WHERE mailing_id = \d+ AND content_mailing_id IS NOT NULL ORDER BY member_id LIMIT 1$/.test(sql.trim()),
      ),
    ).toEqual([]);
  });

  it('go to nobody without an allow pattern', async () => {
    await setUp({}, []);
    await createMailing();
    runJobs();
    await deliver();
    expect(await log()).toEqual([]);
    expect(smtp.rcpts).toEqual([]);
  });

  it('a 550 to RCPT for one member records a hard bounce on it (report, status e); the others are delivered', async () => {
    await setUp({ onRcpt: (a) => (a === 'bob@example.test' ? smtpError(550, '5.1.1 No such user here') : undefined) });
    const id = await createMailing();
    runJobs();
    await deliver();
    await smtp.waitFor(1);
    const rows = await log();
    const bob = rows.find((r: any) => r.to === 'bob@example.test');
    expect(bob).toMatchObject({ state: 'failed', attempts: 1, bounced: true, last_reply: '550 5.1.1 No such user here' });
    expect(rows.find((r: any) => r.to === 'ada@example.test')).toMatchObject({ state: 'sent', bounced: false });
    // failed=true: the failures only (the console's mail page filter), along their own index.
    expect((await ok(s, 'GET', '/1/mail/log', { query: { failed: 'true' } })).map((r: any) => [r.to, r.state])).toEqual([
      ['bob@example.test', 'failed'],
    ]);
    expect(await ok(s, 'GET', '/1/mail/log', { query: { failed: 'true', count: 'true' } })).toBe(1);
    expect(await ok(s, 'GET', '/1/mail/log', { query: { count: 'true' } })).toBe(2);
    expect(smtp.received.map((m) => m.envelopeTo[0])).toEqual(['ada@example.test']);
    const member = s.db
      .prepare("SELECT member_id, member_status_id, bounce_count FROM members WHERE email = 'bob@example.test'")
      .get() as any;
    expect(member).toMatchObject({ member_status_id: 'e', bounce_count: 1 });
    const report = await ok(s, 'GET', `/1/response/${id}`);
    expect(report).toMatchObject({ sent: 3, bounced: 1, delivered: 2 });
    expect(await ok(s, 'GET', `/1/response/${id}/deliveries`, { query: { result: 'hard' } })).toMatchObject([
      { email: 'bob@example.test', delivery_type: 'hard' },
    ]);
  });
});

describe('retries', () => {
  it('a 451 is retried after its backoff and then accepted, under the same Message-ID', async () => {
    let refusals = 1;
    await setUp({ onData: () => (refusals-- > 0 ? smtpError(451, '4.3.0 Try again later') : undefined) });
    const id = await createMailing({ send_at: '@D:2030-01-01T00:00:00' });
    const [queued] = await ok(s, 'POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['me@desk.example'] } });
    await deliver();
    expect(await log()).toMatchObject([
      { state: 'queued', attempts: 1, last_reply: '451 4.3.0 Try again later', next_attempt_at: '@D:2026-03-04T05:06:09' },
    ]);
    expect(smtp.received).toHaveLength(0);
    // Not due before its backoff (2 s on the service clock)...
    await deliver();
    expect((await log())[0].attempts).toBe(1);
    s.clock.advance(2_000);
    await deliver();
    const [m] = await smtp.waitFor(1);
    expect(m.parsed.messageId).toBe(queued.message_id);
    expect(await log()).toMatchObject([{ state: 'sent', attempts: 2, next_attempt_at: null }]);
    expect(smtp.dataStarts).toBe(2);
  });

  it(`a 4xx that never ends fails after ${MAX_ATTEMPTS} attempts`, async () => {
    await setUp({ onRcpt: () => smtpError(452, '4.2.2 Mailbox full') });
    const id = await createMailing({ send_at: '@D:2030-01-01T00:00:00' });
    await ok(s, 'POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['me@desk.example'] } });
    for (let i = 0; i < MAX_ATTEMPTS + 2; i++) {
      await deliver();
      s.clock.advance(10 * 60_000);
    }
    expect(await log()).toMatchObject([{ state: 'failed', attempts: MAX_ATTEMPTS, bounced: false, last_reply: '452 4.2.2 Mailbox full' }]);
  });

  it('a server that is down keeps the mail queued (said once), and it goes when the server is back', async () => {
    // A port with nothing on it: take one, then free it.
    const probe = await startSmtp();
    const port = probe.port;
    await probe.close();
    settings = { smtp: parseSmtpUrl(`smtp://amsg:${encodeURIComponent(PASS)}@127.0.0.1:${port}`, { tlsInsecure: true }), allow: [] };
    configureMail(s.db, settings);
    const id = await createMailing({ send_at: '@D:2030-01-01T00:00:00' });
    await ok(s, 'POST', `/1/mailings/${id}/test`, { body: { recipient_emails: ['me@desk.example'] } });
    const said: string[] = [];
    const background = new MailDeliverer(s.db, s.clock, settings, { report: (l) => said.push(l) });
    background.start(20);
    await new Promise((r) => setTimeout(r, 300));
    expect(await log()).toMatchObject([{ state: 'queued', attempts: 1, last_reply: expect.stringMatching(/ECONNREFUSED/) }]);
    // Retries while down (the clock moves on) are not said again.
    for (let i = 0; i < 3; i++) {
      s.clock.advance(60_000);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect((await log())[0].attempts).toBeGreaterThanOrEqual(3);
    expect(said).toEqual([
      expect.stringMatching(/^cannot deliver mail through smtp:\/\/amsg:••••@127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\): messages stay queued/),
    ]);
    smtp = await startSmtp({ port });
    s.clock.advance(5 * 60_000);
    await smtp.waitFor(1);
    await new Promise((r) => setTimeout(r, 100));
    await background.stop();
    expect(smtp.received).toHaveLength(1);
    expect(await log()).toMatchObject([{ state: 'sent' }]);
    expect(said[1]).toMatch(/^delivering mail through smtp:\/\/amsg:••••@127\.0\.0\.1:\d+ again$/);
    expect(said.join('\n')).not.toContain(PASS);
  });
});

describe('heads-ups and confirmations', () => {
  it("a heads-up's sent_ts is when the server accepted it, not the start", async () => {
    await setUp();
    const id = await createMailing({ heads_up_emails: ['boss@desk.example'] });
    runJobs();
    expect(await ok(s, 'GET', `/1/mailings/${id}/headsup`)).toEqual([{ sent_ts: null, email: 'boss@desk.example', mailing_id: id }]);
    s.clock.advance(3_000);
    await deliver();
    const [m] = await smtp.waitFor(1);
    expect(m.envelopeTo).toEqual(['boss@desk.example']);
    expect(m.parsed.subject).toBe('Spring for [first_name]');
    expect(await ok(s, 'GET', `/1/mailings/${id}/headsup`)).toEqual([
      { sent_ts: '@D:2026-03-04T05:06:10', email: 'boss@desk.example', mailing_id: id },
    ]);
  });

  it('without an SMTP server a heads-up stays simulated (sent at the start)', async () => {
    const id = await createMailing({ heads_up_emails: ['boss@desk.example'] });
    runJobs();
    expect(await ok(s, 'GET', `/1/mailings/${id}/headsup`)).toEqual([
      { sent_ts: '@D:2026-03-04T05:06:07', email: 'boss@desk.example', mailing_id: id },
    ]);
    expect(await log()).toEqual([]);
  });

  it('a signup mails its opt-in confirmation with the tags filled; its links confirm or opt out (POST; a GET changes nothing)', async () => {
    await setUp();
    settings.publicUrl = 'http://127.0.0.1:9';
    s.db.prepare("UPDATE accounts SET account_rsvp_name = 'Shop', account_rsvp_email = 'hello@shop.example' WHERE account_id = 1").run();
    const message = '<p>[rsvp_name] ([rsvp_email]) asks: <a href="[opt_in_url]">yes</a> or <a href="[opt_out_url]">no</a></p>';
    const { member_id } = await ok(s, 'POST', '/1/members/signup', {
      body: { email: 'New@Example.test', group_ids: [group], opt_in_subject: 'Confirm, please', opt_in_message: message },
    });
    await ok(s, 'POST', '/1/members/signup', { body: { email: 'quiet@example.test', group_ids: [group], opt_in_confirmation: false } });
    await deliver();
    const [m] = await smtp.waitFor(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(smtp.received).toHaveLength(1);
    expect(m.envelopeTo).toEqual(['new@example.test']);
    expect(m.parsed.subject).toBe('Confirm, please');
    expect(m.parsed.from?.value).toEqual([{ name: 'Shop', address: 'hello@shop.example' }]);
    const token = /\/_mail\/confirm\/([0-9a-f]{32})/.exec(m.parsed.html as string)![1];
    expect(m.parsed.html).toBe(
      `<p>Shop (hello@shop.example) asks: <a href="http://127.0.0.1:9/_mail/confirm/${token}">yes</a> or <a href="http://127.0.0.1:9/_mail/optout/${token}">no</a></p>`,
    );
    expect(m.parsed.text).toBe(`Shop (hello@shop.example) asks: yes or no`);
    expect(header(m.raw, 'List-Unsubscribe')).toMatch(new RegExp(`^<http://127\\.0\\.0\\.1:9/_mail/optout/${token}>, <mailto:`));
    const page = (method: string, path: string) => answerMailLink(s.db, s.clock, method, path);
    expect(page('GET', `/_mail/confirm/${token}`)).toMatchObject({ status: 200, html: expect.stringContaining('<form method="post">') });
    expect(s.db.prepare('SELECT confirmed_at FROM signup_confirmations').pluck().get()).toBeNull();
    expect(page('POST', `/_mail/confirm/${token}`)).toMatchObject({
      status: 200,
      html: expect.stringContaining('<strong>new@example.test</strong> is confirmed'),
    });
    expect(s.db.prepare('SELECT confirmed_at FROM signup_confirmations').pluck().get()).toBe('2026-03-04T05:06:07.000000');
    expect(page('POST', `/_mail/confirm/${token}`).html).toContain('is already confirmed');
    expect(page('POST', `/_mail/optout/${token}`).html).toContain('is opted out');
    expect((await ok(s, 'GET', `/1/members/${member_id}`)).member_status_id).toBe('o');
    expect(page('POST', `/_mail/confirm/${'0'.repeat(32)}`).status).toBe(404);
    expect(page('GET', '/_mail/confirm/nope').status).toBe(404);
  });

  it('the default confirmation message fills the tags as plain text and linked HTML', async () => {
    await setUp();
    await ok(s, 'POST', '/1/members/signup', { body: { email: 'new@example.test', group_ids: [group] } });
    await deliver();
    const [m] = await smtp.waitFor(1);
    expect(m.parsed.subject).toBe('Please confirm your subscription');
    expect(m.parsed.text).toMatch(
      /asked to receive e-mail from .+\.\nPlease confirm that you want it: https:\/\/view\.amsg\.example\.com\/_mail\/confirm\/[0-9a-f]{32}\n/,
    );
    expect(m.parsed.text).not.toMatch(/\[(rsvp_name|rsvp_email|opt_in_url|opt_out_url)\]/);
    expect(m.parsed.html).toMatch(/<a href="https:\/\/view\.amsg\.example\.com\/_mail\/optout\/[0-9a-f]{32}">/);
  });
});

describe('SMTP URLs', () => {
  it('reads smtp:// and smtps:// URLs and says what is wrong with a bad one, never printing the password', () => {
    expect(parseSmtpUrl('smtp://u%40x:p%3Aw@mail.example:2525')).toEqual({
      host: 'mail.example',
      port: 2525,
      secure: false,
      user: 'u@x',
      pass: 'p:w',
      display: 'smtp://u%40x:••••@mail.example:2525',
    });
    expect(parseSmtpUrl('smtps://mail.example', { tlsInsecure: true })).toEqual({
      host: 'mail.example',
      port: 465,
      secure: true,
      tlsInsecure: true,
      display: 'smtps://mail.example',
    });
    expect(parseSmtpUrl('smtp://localhost').port).toBe(587);
    const bad = (url: string) => {
      try {
        parseSmtpUrl(url);
      } catch (err) {
        expect(err).toBeInstanceOf(SmtpUrlError);
        return (err as Error).message;
      }
      throw new Error(`${url} was taken`);
    };
    expect(bad('http://u:secret@mail.example')).toBe('SMTP URL must start with smtp:// or smtps://, got "http://u:••••@mail.example"');
    expect(bad('not a url secret')).toBe('SMTP URL must look like smtp://user:password@host:port or smtps://…, got "not a url secret"');
    expect(bad('smtp://u:secret@mail.example/path')).toBe('SMTP URL takes no path (/path): "smtp://u:••••@mail.example/path"');
    expect(maskSmtpUrl('smtp://user:hunter2@h:25')).toBe('smtp://user:••••@h:25');
  });
});

describe('query plans', () => {
  it("the deliverer finds due and held messages along the outbox's partial indexes, and a send batch reads its own messages by key", () => {
    const plan = (sql: string) => (s.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((p) => p.detail).join('; ');
    // The deliverer's own statements, with values in place of their parameters.
    expect(plan(DUE_SQL.replace('?', "'2026'").replace('?', '64'))).toBe(
      'SEARCH o USING INDEX mail_outbox_due (next_attempt_at<?); SEARCH mm USING PRIMARY KEY (mailing_id=? AND member_id=?) LEFT-JOIN',
    );
    expect(plan(HELD_SQL.replace('?', '64'))).toBe(
      'SEARCH o USING INDEX mail_outbox_leased (lease_pid>?); SEARCH mm USING PRIMARY KEY (mailing_id=? AND member_id=?) LEFT-JOIN',
    );
    expect(plan("SELECT MIN(next_attempt_at) FROM mail_outbox WHERE status = 'q'")).toMatch(/mail_outbox_due/);
    expect(plan('SELECT * FROM mail_outbox WHERE account_id = 1 ORDER BY mail_id DESC LIMIT 500 OFFSET 0')).toBe(
      'SEARCH mail_outbox USING INDEX mail_outbox_account (account_id=?)',
    );
    expect(
      plan(
        "SELECT mm.member_id FROM mailing_messages mm WHERE mm.mailing_id = 1 AND mm.member_id > 5 AND mm.member_id <= 10 AND EXISTS (SELECT 1 FROM json_each('[]') WHERE lower(mm.email) GLOB json_each.value)",
      ),
    ).toMatch(/^SEARCH mm USING PRIMARY KEY \(mailing_id=\? AND member_id>\? AND member_id<\?\)/);
  });
});
