import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg sms` and `amsg sim sms-click|sms-reply`, end to end: every scenario runs in local
 * mode and against a spawned `amsg serve`, and the two transcripts (exit code and stdout
 * of every run) must be identical. A campaign is read only once it has settled
 * (`send --wait`): before that, the two modes may be at different steps.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

/** NOW of the harness (2026-05-06T07:08:09Z) in the two encodings of SMS records. */
const AT_NOW = '@D:2026-05-06T07:08:09';
const ISO_NOW = '2026-05-06T07:08:09.000000+00:00';
const MESSAGE = 'Hi [% member:first_name | default:"there" %], 20% off today: https://shop.example.com/sale';

describe.each<Mode>(['local', 'remote'])('amsg sms (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { run, json } = recorder(box, log);

  beforeAll(async () => {
    await box.start();
    const setup = [
      [
        'members',
        'add',
        'ada@example.com',
        '--field',
        'first_name=Ada',
        '--group',
        'Newsletter',
        '--phone',
        '+4791234501',
        '--sms-promotional',
        'a',
      ],
      ['members', 'add', 'bob@example.com', '--group', 'Newsletter', '--phone', '+4791234502'],
      ['members', 'add', 'cy@example.com', '--group', 'Newsletter'],
      ['members', 'add', 'dud@example.com', '--group', 'Newsletter', '--phone', '+99912345678', '--sms-promotional', 'a'],
    ];
    for (const args of setup) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('create a draft, send it and wait, read its deliveries; a second send is refused', async () => {
    expect(
      await json(
        'sms',
        'campaigns',
        'create',
        '--name',
        'Sale',
        '--from',
        '+1 555 555 0100',
        '--group',
        'newsletter',
        '--promotional',
        '--shorten-links',
        '--message',
        MESSAGE,
      ),
    ).toBe(1);
    const draft = await json('sms', 'campaigns', 'get', '1');
    expect(draft).toMatchObject({
      sms_campaign_id: 1,
      send_status: 'd',
      from_phone_number: '+15555550100',
      created_at: ISO_NOW,
      updated_at: ISO_NOW,
    });
    const sent = await json('sms', 'campaigns', 'send', '1', '--wait');
    expect(sent).toEqual({
      ...draft,
      send_status: 'c',
      // Ada and the +999 number (it bounces); Bob has no promotional consent, Cy no phone.
      total_sent: 2,
      deliveries: 1,
      bounces: 1,
      message_segments: 2,
      pending_at: AT_NOW,
      send_started: AT_NOW,
      send_finished: AT_NOW,
      results_message: 'sent to 2 recipients: 1 delivered, 1 bounced, 2 segments',
    });
    expect(await json('sms', 'campaigns', 'deliveries', '1')).toEqual([
      {
        account_id: 1,
        sms_campaign_id: 1,
        member_id: 1,
        delivery_type: 'd',
        bounce_type: null,
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+4791234501',
      },
      {
        account_id: 1,
        sms_campaign_id: 1,
        member_id: 4,
        delivery_type: 'b',
        bounce_type: 'h',
        opted_out_at: null,
        from_phone_number: '+15555550100',
        to_phone_number: '+99912345678',
      },
    ]);
    const table = await run('sms', 'campaigns', 'deliveries', '1', '-o', 'table');
    expect(table.stdout.split('\n')[1]).toMatch(/Member\s*│\s*Delivery\s*│\s*Bounce\s*│\s*Phone\s*│\s*Opted out/);
    const again = await run('sms', 'campaigns', 'send', '1');
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('send_status: SMS campaign 1 is complete (c): only a draft (d) can be sent');
    expect(await json('sms', 'usage', '--from', '2026-05-06', '--to', '2026-05-07')).toBe(2);
    expect(await json('sms', 'usage', '--from', '2026-05-07', '--to', '2026-06-01')).toBe(0);
    const badDate = await run('sms', 'usage', '--from', '2026-13-01', '--to', '2026-12-01');
    expect(badDate.exitCode).toBe(1);
    expect(badDate.stderr).toContain('from_date: 2026-13-01 is not a calendar date');
    expect((await run('sms', 'usage', '--from', '2026-05-01')).exitCode).toBe(2);
  });

  test('clicks and STOP/START through amsg sim', async () => {
    expect(await json('sim', 'sms-click', '1', 'ada@example.com')).toBe(true);
    expect(await json('sim', 'sms-click', '1', '1', '1')).toBe(true);
    expect(await json('sms', 'campaigns', 'clicks', '1')).toEqual([
      {
        sms_campaign_id: 1,
        member_id: 1,
        sms_link_id: 1,
        sms_link_target: 'https://shop.example.com/sale',
        to_phone_number: '+4791234501',
        click_timestamp: ISO_NOW,
      },
      {
        sms_campaign_id: 1,
        member_id: 1,
        sms_link_id: 1,
        sms_link_target: 'https://shop.example.com/sale',
        to_phone_number: '+4791234501',
        click_timestamp: ISO_NOW,
      },
    ]);
    const firstClick = await run('sms', 'campaigns', 'clicks', '1', '--limit', '1', '--json');
    expect(JSON.parse(firstClick.stdout)).toHaveLength(1);
    expect(firstClick.stderr).toContain('1 of 2 shown; --all for every row, --start 1 for the rows after these');
    const bounced = await run('sim', 'sms-click', '1', 'dud@example.com');
    expect(bounced.exitCode).toBe(1);
    expect(bounced.stderr).toContain('bounced; it cannot be clicked or answered');

    expect(await json('sim', 'sms-reply', '1', 'ada@example.com', 'STOP')).toBe(true);
    expect(await json('sms', 'campaigns', 'get', '1')).toMatchObject({ total_clicks: 2, unique_clicks: 1, opt_outs: 1 });
    expect((await json('members', 'get', 'ada@example.com')).sms.promotional_status).toBe('o');
    expect((await json('sms', 'campaigns', 'deliveries', '1'))[0].opted_out_at).toBe(AT_NOW);

    // The copy is a draft; sent, it skips Ada (opted out) until she answers START.
    expect(await json('sms', 'campaigns', 'copy', '1')).toBe(2);
    expect((await json('sms', 'campaigns', 'send', '2', '--wait')).total_sent).toBe(1);
    expect(await json('sim', 'sms-reply', '1', 'ada@example.com', 'start')).toBe(true);
    expect((await json('members', 'get', 'ada@example.com')).sms.promotional_status).toBe('a');
    expect(await json('sms', 'campaigns', 'copy', '1', '--name', 'Third')).toBe(3);
    expect(await json('sms', 'campaigns', 'send', '3', '--wait')).toMatchObject({
      sms_campaign_name: 'Third',
      total_sent: 2,
      copied_from_sms_campaign_id: 1,
    });
    const chat = await run('sim', 'sms-reply', '1', 'ada@example.com', 'thanks');
    expect(chat.exitCode).toBe(1);
    expect(chat.stderr).toContain('text: the simulation answers the keywords STOP');
  });

  test('update a draft, schedule it, cancel with --yes, archive; the list', async () => {
    expect(
      await json(
        'sms',
        'campaigns',
        'create',
        '--name',
        'Later',
        '--from',
        '+15555550100',
        '--member',
        'bob@example.com',
        '--message',
        'Your order shipped',
      ),
    ).toBe(4);
    expect(await json('sms', 'campaigns', 'update', '4', '--name', 'Receipt', '--group', 'Newsletter')).toBe(true);
    expect(await json('sms', 'campaigns', 'get', '4')).toMatchObject({
      sms_campaign_name: 'Receipt',
      recipients: { groups: [1], members: [], segments: [], suppression_segments: [] },
      is_promotional: false,
    });
    expect(await json('sms', 'campaigns', 'send', '4', '--at', '2027-01-01T09:00:00Z')).toBe(true);
    expect(await json('sms', 'campaigns', 'get', '4')).toMatchObject({
      send_status: 's',
      scheduled_at: '@D:2027-01-01T09:00:00',
      scheduled_by_user_id: 1,
    });
    const noYes = await run('sms', 'campaigns', 'cancel', '4');
    expect(noYes.exitCode).toBe(2);
    expect(noYes.stderr).toContain('refusing to cancel SMS campaign 4 "Receipt" without --yes');
    expect(await json('sms', 'campaigns', 'cancel', '4', '--yes')).toBe(true);
    expect(await json('sms', 'campaigns', 'archive', '4')).toBe(true);
    expect((await json('sms', 'campaigns', 'list')).map((c: any) => [c.sms_campaign_id, c.send_status])).toEqual([
      [1, 'c'],
      [2, 'c'],
      [3, 'c'],
    ]);
    expect((await json('sms', 'campaigns', 'list', '--archived')).map((c: any) => c.send_status)).toEqual(['c', 'c', 'c', 'x']);
    const done = await run('sms', 'campaigns', 'cancel', '1', '--yes');
    expect(done.exitCode).toBe(1);
    expect(done.stderr).toContain('HTTP 403');
    const bad = await run('sms', 'campaigns', 'create', '--name', 'x', '--from', '555 0100', '--message', 'x');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('from_phone_number: "555 0100" is not a phone number in international form');
    const tags = await run('sms', 'campaigns', 'create', '--name', 'x', '--from', '+15555550100', '--message', 'Hi [% member:nope %]');
    expect(tags.exitCode).toBe(1);
    expect(tags.stderr).toContain('invalid personalization tags: 1 problem, the first in message at line 1, column 4');
  });

  test('settings, the segment limit at send, and counting a message', async () => {
    expect(await json('sms', 'settings', 'get')).toEqual({ sub_message_segment_limit: 0, sub_message_segment_limit_visible: false });
    expect(await json('sms', 'settings', 'set', '--segment-limit', '1', '--visible')).toEqual({
      sub_message_segment_limit: 1,
      sub_message_segment_limit_visible: true,
    });
    expect(
      await json(
        'sms',
        'campaigns',
        'create',
        '--name',
        'Long',
        '--from',
        '+15555550100',
        '--group',
        'Newsletter',
        '--message',
        'x'.repeat(200),
      ),
    ).toBe(5);
    const over = await run('sms', 'campaigns', 'send', '5');
    expect(over.exitCode).toBe(1);
    expect(over.stderr).toContain("message: takes 2 segments, over the account's sub_message_segment_limit of 1 by 1");
    expect((await json('sms', 'campaigns', 'get', '5')).send_status).toBe('d');
    const negative = await run('api', 'call', 'PATCH', '/1/accounts/sms_settings', '--data', '{"sub_message_segment_limit": -1}');
    expect(negative.exitCode).toBe(1);
    expect(negative.stderr).toContain('sub_message_segment_limit: must be at least 0');

    expect(await json('sms', 'count', 'Hi [% member:first_name | default:"there" %] 😀', '--member', 'ada@example.com')).toEqual({
      encoding: 'UCS-2',
      characters: 8,
      units: 9,
      segments: 1,
      per_segment: 70,
      non_gsm_characters: ['😀'],
      message: 'Hi Ada 😀',
    });
    const table = await run('sms', 'count', 'x'.repeat(161), '-o', 'table');
    expect(table.stdout).toMatch(/encoding\s*│ GSM-7/);
    expect(table.stdout).toMatch(/segments\s*│ 2 /);
    const help = await run('sms', '--help');
    expect(help.stdout).toContain('campaigns');
    expect((await run('sms', 'campaigns', 'create', '--help')).stdout).toContain('Examples:\n  $ amsg sms campaigns create --name Sale');
  });

  test.runIf(mode === 'remote')('a key whose user lacks billing access is refused the settings (403); with it, allowed', async () => {
    for (const [email, extra] of [
      ['clerk@example.com', []],
      ['finance@example.com', ['--billing-access']],
    ] as const) {
      const user = await box.json('users', 'create', email, '--role', 'user', ...extra);
      const key = await box.json('keys', 'create', '--user', String(user.user_id));
      const as = (...args: string[]) => box.raw(args, { ...box.env, AMSG_API_KEY: `${key.public_key}:${key.private_key}` });
      const r = await as('sms', 'settings', 'get', '--json');
      if (extra.length) {
        expect(r.exitCode).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ sub_message_segment_limit: 1, sub_message_segment_limit_visible: true });
      } else {
        expect(r.exitCode).toBe(1);
        // --json: the error is one JSON object on stderr (after the note of where it acted).
        const error = JSON.parse(r.stderr.trim().split('\n').at(-1)!);
        expect(error).toMatchObject({ status: 403, exit_code: 1, details: { operation: 'sms.settings.get', access: 'billing' } });
        expect(error.error).toContain('sms.settings.get needs an owner, or a user with billing access');
      }
    }
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
