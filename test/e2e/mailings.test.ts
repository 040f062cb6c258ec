import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg mailings`, `amsg triggers` and `amsg sim`, end to end: every scenario runs in
 * local mode and against a spawned `amsg serve`, and the two transcripts (exit code and
 * stdout of every run) must be identical. A mailing is read only once it has settled
 * (`mailings wait` or `--wait`): before that, the two modes may be at different steps.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

/** NOW of the harness (2026-05-06T07:08:09Z) as mailings answer it. */
const AT_NOW = '@D:2026-05-06T07:08:09';

const HTML = `<p>Hi [% member:first_name | default:"friend" %],</p>
<p><a href="https://example.com/offer">The offer</a></p>
<p>[% if member:city == "Oslo" %]See you in Oslo[% else %]Come visit[% end %]</p>
<p><a href="[% optout_url %]">Unsubscribe</a></p>
`;
const TEXT = `Hi [% member:first_name | default:"friend" %],
The offer: https://example.com/offer
Unsubscribe: [% optout_url %]
`;
const BAD = `<p>Hi [% member:frist_name %]</p>
<p>[% if member:city %]x</p>
  [% optout_url`;

describe.each<Mode>(['local', 'remote'])('amsg mailings, triggers, sim (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { run, json } = recorder(box, log);
  const file = (name: string) => join(box.dir, name);
  const content = ['--sender', 'news@example.com', '--html', file('news.html'), '--plaintext', file('news.txt')];
  const pick = (m: Record<string, unknown>, keys: string[]) => keys.map((k) => m[k]);
  /** A member's history item for one mailing. */
  const history = async (member: string, mailingId: number) =>
    (await json('members', 'mailings', member)).find((h: { mailing_id: number }) => h.mailing_id === mailingId);

  beforeAll(async () => {
    await box.start();
    writeFileSync(file('news.html'), HTML);
    writeFileSync(file('news.txt'), TEXT);
    writeFileSync(file('bad.html'), BAD);
    writeFileSync(file('plain.html'), '<p>No way out</p>');
    writeFileSync(file('b.html'), HTML.replace('The offer', 'Another offer'));
    const setup = [
      ['fields', 'create', 'city', '--type', 'text'],
      ['fields', 'create', 'birthday', '--type', 'date'],
      ['members', 'add', 'ada@example.com', '--field', 'first_name=Ada', '--field', 'city=Oslo', '--group', 'Newsletter'],
      ['members', 'add', 'bob@example.com', '--group', 'Newsletter'],
      ['members', 'add', 'cy@example.com', '--group', 'Newsletter'],
      ['members', 'optout', 'cy@example.com'],
      ...Array.from({ length: 8 }, (_, i) => ['members', 'add', `p${i}@example.com`, '--group', 'Panel']),
    ];
    for (const args of setup) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('create, wait until complete, read it back; the opted-out member is skipped', async () => {
    const subject = 'News for [% member:first_name | default:"you" %]';
    expect(await json('mailings', 'create', '--name', 'May news', '--subject', subject, ...content, '--group', 'newsletter')).toEqual({
      mailing_id: 1,
    });
    const done = await json('mailings', 'wait', '1');
    expect(done).toMatchObject({
      mailing_id: 1,
      account_id: 1,
      mailing_type: 'm',
      mailing_status: 'c',
      name: 'May news',
      subject,
      sender: 'news@example.com',
      reply_to: null,
      plaintext_only: false,
      disabled: false,
      recipient_count: 2,
      created_ts: AT_NOW,
      send_at: null,
      send_started: AT_NOW,
      send_finished: AT_NOW,
      cancel_ts: null,
      archived_ts: null,
      deleted_at: null,
      html_body: HTML,
      plaintext: TEXT,
      public_webview_url: 'https://view.amsg.example.com/1/1',
      recipient_groups: [{ member_group_id: 1, name: 'Newsletter' }],
      recipient_subscriptions: [],
      recipient_members: [],
      heads_up_emails: [],
      links: [
        { mailing_id: 1, plaintext: false, link_id: 1, link_name: 'The offer', link_target: 'https://example.com/offer', link_order: 1 },
        {
          mailing_id: 1,
          plaintext: true,
          link_id: 2,
          link_name: 'https://example.com/offer',
          link_target: 'https://example.com/offer',
          link_order: 2,
        },
      ],
    });
    expect(await json('mailings', 'get', '1')).toEqual(done);

    // The member's history, with the subject as the member got it.
    expect(await json('members', 'mailings', 'ada@example.com')).toEqual([
      {
        delivery_type: 'h',
        clicked: null,
        opened: null,
        delivery_ts: AT_NOW,
        sent: AT_NOW,
        forwarded: null,
        shared: null,
        mailing_id: 1,
        name: 'May news',
        subject: 'News for Ada',
        account_id: 1,
      },
    ]);
    expect(await json('members', 'mailings', 'cy@example.com')).toEqual([]);

    // Rendered with the member's fields, and the defaults where a field is empty.
    expect(await json('mailings', 'message', '1', 'ada@example.com')).toEqual({
      plaintext: 'Hi Ada,\nThe offer: https://example.com/offer\nUnsubscribe: https://view.amsg.example.com/optout/1/1/1\n',
      subject: 'News for Ada',
      html_body:
        '<p>Hi Ada,</p>\n<p><a href="https://example.com/offer">The offer</a></p>\n<p>See you in Oslo</p>\n' +
        '<p><a href="https://view.amsg.example.com/optout/1/1/1">Unsubscribe</a></p>\n',
      webview_url: 'https://view.amsg.example.com/1/1/1',
    });
    const bob = await json('mailings', 'message', '1', '2');
    expect([bob.subject, bob.plaintext.split('\n')[0]]).toEqual(['News for you', 'Hi friend,']);
    expect(bob.html_body).toContain('<p>Come visit</p>');
    expect(await json('mailings', 'message', '1', '2', '--type', 'subject')).toEqual({ subject: 'News for you' });
    const text = await run('mailings', 'message', '1', '2', '--type', 'plaintext', '-o', 'table');
    expect(text.stdout).toBe('Hi friend,\nThe offer: https://example.com/offer\nUnsubscribe: https://view.amsg.example.com/optout/1/1/2\n');
    const badType = await run('mailings', 'message', '1', '2', '--type', 'pdf');
    expect(badType.exitCode).toBe(2);
    expect(badType.stderr).toContain('Allowed choices are all, html, plaintext, subject, webview_url');
    const noMessage = await run('mailings', 'message', '1', 'cy@example.com');
    expect(noMessage.exitCode).toBe(1);
    expect(noMessage.stderr).toContain('HTTP 404');
    expect(noMessage.stderr).toContain('no message of mailing 1 for member 3');

    const list = await json('mailings', 'list');
    expect(list.map((m: any) => pick(m, ['mailing_id', 'mailing_status', 'recipient_count']))).toEqual([[1, 'c', 2]]);
    expect(list[0].html_body).toBeUndefined();
    const withBodies = await json('mailings', 'list', '--with-html', '--with-plaintext');
    expect([withBodies[0].html_body, withBodies[0].plaintext]).toEqual([HTML, TEXT]);
    expect(await json('mailings', 'groups', '1')).toMatchObject([{ member_group_id: 1, group_name: 'Newsletter' }]);
    expect(await json('mailings', 'members', '1')).toEqual([]);
  });

  test('create --wait prints the settled mailing; a test send to one address, plaintext only', async () => {
    const sent = await json(
      'mailings',
      'create',
      '--name',
      'Proof',
      '--subject',
      'Proof',
      '--sender',
      'news@example.com',
      '--plaintext',
      file('news.txt'),
      '--plaintext-only',
      '--type',
      't',
      '--to',
      'ada@example.com',
      '--heads-up',
      'boss@example.com',
      '--wait',
    );
    expect(pick(sent, ['mailing_id', 'mailing_type', 'mailing_status', 'recipient_count', 'plaintext_only', 'html_body'])).toEqual([
      2,
      't',
      'c',
      1,
      true,
      '',
    ]);
    expect(sent.recipient_members).toEqual([{ email: 'ada@example.com', member_id: 1 }]);
    expect(sent.heads_up_emails).toEqual(['boss@example.com']);
    expect(await json('mailings', 'headsup', '2')).toEqual([{ sent_ts: AT_NOW, email: 'boss@example.com', mailing_id: 2 }]);
    expect((await json('mailings', 'members', '2')).map((m: any) => m.email)).toEqual(['ada@example.com']);
    expect(await json('mailings', 'message', '2', '1', '--type', 'html')).toEqual({ html_body: '' });
    expect((await json('members', 'mailings', '1')).map((h: any) => [h.mailing_id, h.delivery_type])).toEqual([
      [2, 't'],
      [1, 'h'],
    ]);
    expect((await json('mailings', 'list', '--type', 't')).map((m: any) => m.mailing_id)).toEqual([2]);

    // Usage errors name the flag and the fix; nothing is created.
    const noBody = await run('mailings', 'create', '--name', 'x', '--subject', 'x', '--sender', 'a@example.com', '--group', 'Newsletter');
    expect(noBody.exitCode).toBe(2);
    expect(noBody.stderr).toContain('give the body: --html FILE and/or --plaintext FILE');
    const badWhen = await run(
      'mailings',
      'create',
      '--name',
      'x',
      '--subject',
      'x',
      ...content,
      '--group',
      'Newsletter',
      '--send-at',
      'tomorrow',
    );
    expect(badWhen.exitCode).toBe(2);
    expect(badWhen.stderr).toContain('--send-at takes a date-time such as 2026-05-01T09:00:00Z');
    const noGroup = await run('mailings', 'create', '--name', 'x', '--subject', 'x', ...content, '--group', 'Nope');
    expect(noGroup.exitCode).toBe(1);
    expect(noGroup.stderr).toContain('no group named "Nope" (see amsg groups list)');
    const noFile = await run(
      'mailings',
      'create',
      '--name',
      'x',
      '--subject',
      'x',
      '--sender',
      'a@example.com',
      '--html',
      file('missing.html'),
      '--group',
      'Newsletter',
    );
    expect(noFile.exitCode).toBe(2);
    expect(noFile.stderr).toContain(`--html: cannot read ${file('missing.html')}: ENOENT`);
    // The service refuses a body without the opt-out link, and a mailing with no audience.
    const noOptout = await run(
      'mailings',
      'create',
      '--name',
      'x',
      '--subject',
      'x',
      '--sender',
      'a@example.com',
      '--html',
      file('plain.html'),
      '--group',
      'Newsletter',
    );
    expect(noOptout.exitCode).toBe(1);
    expect(noOptout.stderr).toContain('mailing: html_body lacks [% optout_url %] (every mailing must carry its opt-out link)');
    const third = await json(
      'mailings',
      'create',
      '--name',
      'Third',
      '--subject',
      'Third',
      ...content,
      '--to',
      'bob@example.com',
      '--wait',
      '--timeout',
      '1m',
    );
    expect(pick(third, ['mailing_id', 'mailing_status', 'recipient_count'])).toEqual([3, 'c', 1]);
    const noAudience = await run('mailings', 'create', '--name', 'x', '--subject', 'x', ...content);
    expect(noAudience.exitCode).toBe(1);
    expect(noAudience.stderr).toContain('a mailing needs recipients');
    expect((await json('mailings', 'list')).map((m: any) => m.mailing_id)).toEqual([1, 2, 3]);
  });

  test('cancel asks for --yes off a terminal; pause and resume; 403 once it is not pending or paused', async () => {
    const later = await json(
      'mailings',
      'create',
      '--name',
      'Later',
      '--subject',
      'Later',
      ...content,
      '--group',
      '1',
      '--send-at',
      '2027-01-01T09:00:00Z',
    );
    expect(later).toEqual({ mailing_id: 4 });
    const pending = await json('mailings', 'get', '4');
    expect(pick(pending, ['mailing_status', 'send_at', 'send_started'])).toEqual(['p', '@D:2027-01-01T09:00:00', null]);
    expect((await json('mailings', 'list', '--scheduled')).map((m: any) => m.mailing_id)).toEqual([4]);

    const refused = await run('mailings', 'cancel', '4');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to cancel mailing 4 "Later", scheduled for 2027-01-01 09:00 without --yes');
    expect((await json('mailings', 'get', '4')).mailing_status).toBe('p');

    const paused = await json('mailings', 'pause', '4');
    expect(pick(paused, ['mailing_id', 'mailing_status', 'send_at'])).toEqual([4, 'a', '@D:2027-01-01T09:00:00']);
    expect(paused.html_body).toBeUndefined(); // the list shape
    expect((await json('mailings', 'list', '--status', 'paused')).map((m: any) => m.mailing_id)).toEqual([4]);
    expect((await json('mailings', 'resume', '4')).mailing_status).toBe('p');
    expect((await run('mailings', 'resume', '4', '-o', 'table')).stdout).toBe('Resumed mailing 4: now pending (p).');

    expect(await json('mailings', 'cancel', '4', '--yes')).toBe(true);
    const canceled = await json('mailings', 'get', '4');
    expect(pick(canceled, ['mailing_status', 'cancel_ts', 'cancel_by_user_id'])).toEqual(['x', AT_NOW, 1]);
    expect((await json('mailings', 'list')).map((m: any) => m.mailing_id)).toEqual([1, 2, 3]);
    expect((await json('mailings', 'list', '--status', 'x')).map((m: any) => m.mailing_id)).toEqual([4]);

    const again = await run('mailings', 'cancel', '4', '--yes');
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('HTTP 403');
    const complete = await run('mailings', 'cancel', '1', '--yes');
    expect(complete.exitCode).toBe(1);
    expect(complete.stderr).toContain('HTTP 403');
    expect(complete.stderr).toMatch(/mailing 1 "[^"]+" is complete \(c\): only a pending \(p\) or paused \(a\) mailing can be canceled/);
    // Said before asking: no "refusing ... without --yes" for what the service would refuse anyway.
    const unasked = await run('mailings', 'cancel', '1');
    expect([unasked.exitCode, unasked.stderr.includes('without --yes')]).toEqual([1, false]);
    const resumeCanceled = await run('mailings', 'resume', '4');
    expect(resumeCanceled.exitCode).toBe(1);
    expect(resumeCanceled.stderr).toContain('a canceled mailing cannot be resumed');
    const pauseComplete = await run('mailings', 'pause', '1');
    expect(pauseComplete.exitCode).toBe(1);
    expect(pauseComplete.stderr).toContain('HTTP 400');
    const badStatus = await run('mailings', 'list', '--status', 'sent');
    expect(badStatus.exitCode).toBe(2);
    expect(badStatus.stderr).toContain('--status takes p (pending), a (paused)');
    // A mailing is named by id or by name; a name that matches none is not found (1).
    const badId = await run('mailings', 'cancel', 'May', '--yes');
    expect(badId.exitCode).toBe(1);
    expect(badId.stderr).toContain('no mailing named "May" (see amsg mailings list); did you mean "May news"?');
  });

  test('archive hides a mailing from the list; its status stays', async () => {
    expect(await json('mailings', 'archive', '3')).toBe(true);
    expect((await json('mailings', 'list')).map((m: any) => m.mailing_id)).toEqual([1, 2]);
    const all = await json('mailings', 'list', '--archived');
    expect(all.map((m: any) => [m.mailing_id, m.mailing_status, m.archived_ts])).toEqual([
      [1, 'c', null],
      [2, 'c', null],
      [3, 'c', AT_NOW],
    ]);
    expect((await run('mailings', 'archive', '99')).exitCode).toBe(1);
  });

  test('resend to a new audience, forward to new addresses (status f)', async () => {
    const resent = await json('mailings', 'resend', '1', '--to', 'dee@example.com', '--sender', 'other@example.com', '--wait');
    expect(
      pick(resent, ['mailing_id', 'mailing_status', 'recipient_count', 'parent_mailing_id', 'sender', 'subject', 'html_body']),
    ).toEqual([5, 'c', 1, 1, 'other@example.com', 'News for [% member:first_name | default:"you" %]', HTML]);
    expect((await json('members', 'get', 'dee@example.com')).member_status_id).toBe('a');
    expect((await json('mailings', 'message', '5', 'dee@example.com', '--type', 'subject')).subject).toBe('News for you');

    const forwarded = await json(
      'mailings',
      'forward',
      '1',
      'ada@example.com',
      '--to',
      'fay@example.com,gus@example.com',
      '--heads-up',
      'boss@example.com',
    );
    expect(forwarded).toEqual({ mailing_id: 6 });
    const sent = await json('mailings', 'wait', '6');
    expect(pick(sent, ['mailing_status', 'recipient_count', 'parent_mailing_id'])).toEqual(['c', 2, 1]);
    const newcomers = await json('mailings', 'members', '6');
    expect(newcomers.map((m: any) => [m.email, m.member_status_id, m.status])).toEqual([
      ['fay@example.com', 'f', 'forwarded'],
      ['gus@example.com', 'f', 'forwarded'],
    ]);
    expect(await json('mailings', 'headsup', '6')).toEqual([{ sent_ts: AT_NOW, email: 'boss@example.com', mailing_id: 6 }]);
    expect((await history('ada@example.com', 1)).forwarded).toBe(AT_NOW);
    const notSent = await run('mailings', 'forward', '1', 'cy@example.com', '--to', 'hal@example.com');
    expect(notSent.exitCode).toBe(1);
    expect(notSent.stderr).toContain('member 3 has no message of mailing 1 to forward');
    const noTo = await run('mailings', 'forward', '1', 'ada@example.com');
    expect(noTo.exitCode).toBe(2);
  });

  test('validate: true, or exit 1 listing each bad tag with its part, line and column', async () => {
    expect(
      await json('mailings', 'validate', '--html', file('news.html'), '--plaintext', file('news.txt'), '--subject', 'Hi [% member:city %]'),
    ).toBe(true);
    const bad = await run('mailings', 'validate', '--html', file('bad.html'), '--subject', 'Hi [% member:town %]');
    expect(bad.exitCode).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual([
      { part: 'subject', tag: '[% member:town %]', line: 1, column: 4, reason: 'unknown member field "town"' },
      { part: 'html_body', tag: '[% member:frist_name %]', line: 1, column: 7, reason: 'unknown member field "frist_name"' },
      { part: 'html_body', tag: '[% if member:city %]', line: 2, column: 4, reason: expect.stringContaining('"if" without') },
      { part: 'html_body', tag: '[% optout_url', line: 3, column: 3, reason: expect.stringContaining('unterminated tag') },
    ]);
    expect(bad.stderr).toContain('4 invalid personalization tags (part:line:column); fix them and validate again');
    const table = await run('mailings', 'validate', '--html', file('bad.html'), '-o', 'table');
    expect(table.exitCode).toBe(1);
    expect(table.stdout.split('\n')[0]).toBe(
      'html_body:1:7: unknown member field "frist_name" (did you mean first_name?): [% member:frist_name %]',
    );
    // A create with bad tags is refused the same way, and creates nothing.
    const create = await run(
      'mailings',
      'create',
      '--name',
      'x',
      '--subject',
      'x',
      '--sender',
      'a@example.com',
      '--html',
      file('bad.html'),
      '--group',
      'Newsletter',
    );
    expect(create.exitCode).toBe(1);
    expect(JSON.parse(create.stdout)).toHaveLength(3);
    const nothing = await run('mailings', 'validate');
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('give something to check: --html FILE, --plaintext FILE and/or --subject TEXT');
  });

  test('a subject split test waits for its winner, then sends the rest', async () => {
    const waiting = await json(
      'mailings',
      'create',
      '--name',
      'Subject test',
      ...content,
      '--group',
      'Panel',
      '--variant-subject',
      'Spring news',
      '--variant-subject',
      'News, spring edition',
      '--test-percent',
      '50',
      '--test-duration',
      '1h',
      '--wait',
    );
    expect(pick(waiting, ['mailing_id', 'mailing_type', 'mailing_status', 'subject', 'recipient_count'])).toEqual([
      7,
      's',
      'w',
      'Spring news',
      8,
    ]);
    expect(waiting.split_test).toEqual({
      test_percent: 50,
      test_duration: '@I:3600',
      variants: [
        { mailing_id: 8, name: 'Subject test (variant A)', subject: 'Spring news' },
        { mailing_id: 9, name: 'Subject test (variant B)', subject: 'News, spring edition' },
      ],
      test_sent_at: AT_NOW,
      winner_mailing_id: null,
      winner_declared_at: null,
      results: null,
    });
    const wrong = await run('mailings', 'winner', '7', '1');
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain('winner mailing 1 not found among the variants of split test 7 (8, 9)');
    expect(await json('mailings', 'winner', '7', '9')).toBe(true);
    const done = await json('mailings', 'wait', '7');
    expect(pick(done, ['mailing_status', 'recipient_count'])).toEqual(['c', 8]);
    expect(pick(done.split_test, ['winner_mailing_id', 'winner_declared_at', 'results'])).toEqual([
      9,
      AT_NOW,
      { 8: { sent: 2, opened: 0, clicked: 0 }, 9: { sent: 2, opened: 0, clicked: 0 } },
    ]);
    const subjects = await Promise.all(
      Array.from({ length: 8 }, (_, i) => box.amsg('mailings', 'message', '7', `p${i}@example.com`, '--type', 'subject')),
    );
    const counts = subjects
      .map((r) => JSON.parse(r.stdout).subject)
      .reduce((acc: Record<string, number>, s: string) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 'Spring news': 2, 'News, spring edition': 6 });
    const twice = await run('mailings', 'winner', '7', '8');
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toContain('HTTP 403');
    const both = await run(
      'mailings',
      'create',
      '--name',
      'x',
      ...content,
      '--group',
      'Panel',
      '--variant-subject',
      'a',
      '--variant-html',
      file('b.html'),
    );
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('--variant-subject');
  });

  test('triggers: create over a draft, read, rename, fire, list its mailings, delete', async () => {
    const draft = await json(
      'mailings',
      'create',
      '--name',
      'Welcome',
      '--subject',
      'Welcome [% member:first_name %]',
      ...content,
      '--draft',
    );
    expect(draft).toEqual({ mailing_id: 10 });
    expect((await json('mailings', 'get', '10')).mailing_status).toBe('u');

    expect(
      await json(
        'triggers',
        'create',
        '--name',
        'Birthday',
        '--mailing',
        '10',
        '--event',
        'date',
        '--field',
        'birthday',
        '--push-offset',
        '1d2h3m4s',
      ),
    ).toBe(1);
    expect(await json('triggers', 'create', '--name', 'Welcome', '--mailing', '10', '--event', 's')).toBe(2);
    const birthday = await json('triggers', 'get', '1');
    expect({ ...birthday, parent_mailing: undefined }).toEqual({
      trigger_id: 1,
      account_id: 1,
      name: 'Birthday',
      event_type: 'r',
      field_id: 4,
      parent_mailing_id: 10,
      parent_mailing: undefined,
      start_ts: AT_NOW,
      push_offset: '@I:93784',
      push_offset_units: '1:2:3:4',
      signups: null,
      groups: null,
      links: null,
      surveys: null,
      signup_integrations: null,
      deleted_at: null,
      is_disabled: false,
    });
    expect(pick(birthday.parent_mailing, ['mailing_id', 'mailing_status', 'html_body', 'plaintext'])).toEqual([10, 'u', HTML, TEXT]);
    expect(await json('triggers', 'rename', '1', 'Happy birthday')).toBe(1);
    expect((await json('triggers', 'list')).map((t: any) => [t.trigger_id, t.name, t.event_type])).toEqual([
      [1, 'Happy birthday', 'r'],
      [2, 'Welcome', 's'],
    ]);

    const noField = await run('triggers', 'create', '--name', 'x', '--mailing', '10', '--event', 'r');
    expect(noField.exitCode).toBe(1);
    expect(noField.stderr).toContain('a date trigger (event_type r) needs the date field');
    const badOffset = await run('triggers', 'create', '--name', 'x', '--mailing', '10', '--event', 's', '--push-offset', 'soon');
    expect(badOffset.exitCode).toBe(2);
    expect(badOffset.stderr).toContain('--push-offset takes seconds or units such as 1d2h');

    const fired = await json('triggers', 'fire', '2', 'bob@example.com');
    expect(fired).toEqual({ mailing_id: 11 });
    const sent = await json('mailings', 'wait', '11');
    expect(pick(sent, ['mailing_type', 'mailing_status', 'recipient_count', 'parent_mailing_id', 'send_at'])).toEqual([
      'r',
      'c',
      1,
      10,
      AT_NOW,
    ]);
    expect((await json('mailings', 'message', '11', '2', '--type', 'subject')).subject).toBe('Welcome ');
    expect((await json('triggers', 'mailings', '2')).map((m: any) => [m.mailing_id, m.mailing_type, m.mailing_status])).toEqual([
      [11, 'r', 'c'],
    ]);
    // Type r stays out of the default list.
    expect((await json('mailings', 'list', '--type', 'r')).map((m: any) => m.mailing_id)).toEqual([11]);

    const refused = await run('triggers', 'delete', '1');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to delete trigger 1 "Happy birthday" without --yes (no terminal to confirm on)');
    expect(await json('triggers', 'delete', '1', '--yes')).toBe(true);
    const gone = await run('triggers', 'get', '1');
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('trigger 1 not found');
    expect((await json('triggers', 'list')).map((t: any) => t.trigger_id)).toEqual([2]);
  });

  test('sim: opens, clicks, shares and bounces show in the history; a hard bounce sets status e', async () => {
    expect(await json('sim', 'open', '1', 'ada@example.com')).toBe(true);
    expect(await json('sim', 'click', '1', '2', '--link', '2')).toBe(true);
    expect(await json('sim', 'share', '1', 'bob@example.com')).toBe(true);
    expect(await json('sim', 'bounce', '5', 'dee@example.com', '--hard')).toBe(true);
    expect(pick(await history('ada@example.com', 1), ['opened', 'clicked', 'shared', 'forwarded'])).toEqual([AT_NOW, null, null, AT_NOW]);
    expect(pick(await history('bob@example.com', 1), ['opened', 'clicked', 'shared'])).toEqual([AT_NOW, AT_NOW, AT_NOW]);
    expect(pick(await history('bob@example.com', 3), ['opened', 'clicked', 'shared'])).toEqual([null, null, null]);
    const dee = await json('members', 'get', 'dee@example.com');
    expect([dee.member_status_id, dee.bounce_count]).toEqual(['e', 1]);

    expect(await json('sim', 'optout', '1', '2')).toBe(true);
    expect(await json('members', 'optouts', 'bob@example.com')).toEqual([{ timestamp: AT_NOW, mailing_id: 1 }]);

    const forward = await json('sim', 'forward', '2', 'ada@example.com', '--to', 'ivy@example.com');
    expect(forward).toEqual({ mailing_id: 12 });
    expect((await json('mailings', 'wait', '12')).recipient_count).toBe(1);
    expect((await json('members', 'get', 'ivy@example.com')).member_status_id).toBe('f');

    const badLink = await run('sim', 'click', '1', '1', '--link', '99');
    expect(badLink.exitCode).toBe(1);
    expect(badLink.stderr).toContain('link 99 is not a link of mailing 1');
    const notSent = await run('sim', 'open', '1', 'cy@example.com');
    expect(notSent.exitCode).toBe(1);
    expect(notSent.stderr).toContain('member 3 has no message of mailing 1');
    const hardOpen = await run('sim', 'open', '1', '1', '--hard');
    expect(hardOpen.exitCode).toBe(2);
    expect(hardOpen.stderr).toContain("unknown option '--hard'");
    expect((await run('sim', 'open', '1', 'ada')).exitCode).toBe(2);
  });

  test('searches and suppressions make the audience; a content split test', async () => {
    const search = await json(
      'api',
      'call',
      'POST',
      '/1/searches',
      '--data',
      '{"name":"Oslo","criteria":["and",["member_field:city","eq","Oslo"]]}',
    );
    expect(search).toBe(1);
    const sent = await json(
      'mailings',
      'create',
      '--name',
      'Panel and Oslo',
      '--subject',
      'Hi',
      ...content,
      '--group',
      'Panel',
      '--search',
      '1',
      '--suppress-member',
      'p0@example.com,p1@example.com',
      '--wait',
    );
    expect(pick(sent, ['mailing_id', 'mailing_status', 'recipient_count', 'recipient_searches'])).toEqual([
      13,
      'c',
      7,
      [{ search_id: 1, name: 'Oslo' }],
    ]);
    expect((await json('mailings', 'searches', '13')).map((x: any) => [x.search_id, x.name])).toEqual([[1, 'Oslo']]);
    expect(await json('mailings', 'searches', '13', '--suppressed')).toEqual([]);
    expect((await json('mailings', 'suppressed-members', '13')).map((m: any) => m.email)).toEqual(['p0@example.com', 'p1@example.com']);
    expect((await history('ada@example.com', 13)).subject).toBe('Hi');
    expect(await json('mailings', 'recipients', '--group', 'Panel', '--segment', '1', '--suppressed-segment', '1')).toEqual({
      recipient_groups: [{ member_group_id: 2, name: 'Panel' }],
      recipient_segments: [{ segment_id: 1, name: 'Oslo' }],
      recipient_subscriptions: [],
      suppressed_segments: [{ segment_id: 1, name: 'Oslo' }],
    });
    const unknown = await run('mailings', 'recipients', '--group', '99');
    expect(unknown.exitCode).toBe(1);

    // A content test decided at once (no test time): the first variant wins a tie.
    const decided = await json(
      'mailings',
      'create',
      '--name',
      'Content test',
      '--subject',
      'Offers',
      '--sender',
      'news@example.com',
      '--variant-html',
      file('news.html'),
      '--variant-html',
      file('b.html'),
      '--group',
      'Panel',
      '--test-duration',
      '0',
      '--wait',
    );
    expect(pick(decided, ['mailing_id', 'mailing_type', 'mailing_status', 'recipient_count', 'html_body'])).toEqual([
      14,
      'c',
      'c',
      8,
      HTML,
    ]);
    expect(pick(decided.split_test, ['test_duration', 'winner_mailing_id'])).toEqual(['@I:0', 15]);
    expect(decided.split_test.variants.map((v: any) => v.mailing_id)).toEqual([15, 16]);
  });

  test('tables for people, help with examples', async () => {
    const table = await run('mailings', 'list', '-o', 'table');
    expect(table.stdout).toMatch(/│ ID │ Name\s+│ Status\s+│ Type │ Subject\s+│/);
    // Status letters as words for people (JSON keeps the letter).
    expect(table.stdout).toMatch(/│ 1\s+│ May news\s+│ complete\s+│ m\s+│/);
    expect((await run('mailings', 'archive', '2', '-o', 'table')).stdout).toBe('Archived mailing 2.');
    expect((await run('mailings', 'wait', '1', '-o', 'table')).stdout).toBe('Mailing 1 is complete: sent to 2 recipients.');
    expect((await run('sim', 'open', '1', '1', '-o', 'table')).stdout).toBe('Recorded an open of mailing 1 by member 1.');
    const message = await run('mailings', 'message', '1', '1', '-o', 'table');
    expect(message.stdout.split('\n').slice(0, 4)).toEqual([
      'Subject: News for Ada',
      'Webview: https://view.amsg.example.com/1/1/1',
      '',
      '--- plaintext ---',
    ]);
    const recipients = await run('mailings', 'recipients', '--group', 'Newsletter,Panel', '-o', 'table');
    expect(recipients.stdout).toMatch(/│ recipient_groups │ 2\s+│ Panel\s+│/);
    expect(await json('mailings', 'recipients', '--group', 'Panel')).toEqual({
      recipient_groups: [{ member_group_id: 2, name: 'Panel' }],
      recipient_segments: [],
      recipient_subscriptions: [],
      suppressed_segments: [],
    });
    for (const [args, example] of [
      [['mailings', 'create'], '$ amsg mailings create --name "May news"'],
      [['mailings', 'cancel'], '$ amsg mailings cancel 12 --yes'],
      [['triggers', 'create'], '$ amsg triggers create --name Welcome --mailing 13 --event s --push-offset 1d'],
      [['sim', 'click'], '$ amsg sim click 12 42 --link 3'],
    ] as const) {
      const help = await run(...args, '--help');
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain(`Examples:\n  $ `);
      expect(help.stdout).toContain(example);
    }
    const top = await run('--help');
    expect(top.stdout).toContain('mailings: create, send, wait');
    expect(top.stdout).toContain('triggers');
    expect(top.stdout).toContain('sim ');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(100);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
