import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * The end-to-end CLI suite. It runs twice, in local mode and against a spawned
 * `amsg serve`, and every run's exit code and stdout go into a transcript; the two
 * transcripts must be identical (a difference between the modes is a bug).
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('amsg CLI (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { run, json } = recorder(box, log);

  beforeAll(async () => {
    await box.start();
  }, 30_000);
  afterAll(() => box.stop());

  test('says where it acts on stderr, data on stdout', async () => {
    const r = await run('webhooks', 'events');
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(mode === 'local' ? `acting on local database ${box.db} (account 1)` : `acting on ${box.url} (account 1)`);
    const events = JSON.parse(r.stdout);
    expect(events).toHaveLength(22);
    expect(events[0]).toEqual({ webhook_event_id: 1, event_name: 'mailing_finish', description: expect.any(String) });
    expect(events[21].event_name).toBe('field_update');
    const quiet = await box.amsg('webhooks', 'events', '--quiet');
    expect(quiet.stderr).toBe('');
  });

  test('fields: create, list, the widget table, unique names', async () => {
    // first_name and last_name come with every new account.
    expect(await json('fields', 'create', 'birthday', '--type', 'date', '--display-name', 'Birthday')).toBe(3);
    expect(await json('fields', 'create', 'score', '--type', 'numeric')).toBe(4);
    expect(await json('fields', 'create', 'interests', '--type', 'text[]', '--widget', 'check_multiple', '--options', 'news,offers')).toBe(
      5,
    );
    const dup = await run('fields', 'create', 'First_Name', '--type', 'text');
    expect(dup.exitCode).toBe(1);
    expect(dup.stderr).toContain('HTTP 400');
    expect(dup.stderr).toContain('shortcut_name: a field named "First_Name" already exists');
    const widget = await run('fields', 'create', 'flag', '--type', 'boolean', '--widget', 'text');
    expect(widget.exitCode).toBe(1);
    expect(widget.stderr).toContain('widget_type: "text" is not allowed for field_type boolean (allowed: checkbox)');
    const list = await json('fields', 'list');
    expect(list.map((f: any) => [f.field_id, f.shortcut_name, f.display_name, f.field_type, f.widget_type])).toEqual([
      [1, 'first_name', 'First Name', 'text', 'text'],
      [2, 'last_name', 'Last Name', 'text', 'text'],
      [3, 'birthday', 'Birthday', 'date', 'date'],
      [4, 'score', 'score', 'numeric', 'number'],
      [5, 'interests', 'interests', 'text[]', 'check_multiple'],
    ]);
    expect(list[4]).toEqual({
      field_id: 5,
      account_id: 1,
      shortcut_name: 'interests',
      display_name: 'interests',
      short_display_name: null,
      field_type: 'text[]',
      widget_type: 'check_multiple',
      required: false,
      column_order: 5,
      deleted_at: null,
      options: ['news', 'offers'],
    });
  });

  test('members add, get by id and e-mail, with groups and typed fields', async () => {
    const added = await json(
      'members',
      'add',
      'Ada@Example.com',
      '--field',
      'first_name=Ada',
      '--field',
      'birthday=1815-12-10',
      '--field',
      'score=9.5',
      '--field',
      'interests=["news"]',
      '--group',
      'Newsletter',
      '--phone',
      '+47 912 34 567',
    );
    expect(added).toEqual({ member_id: 1, added: true, status: 'a' });
    const again = await json('members', 'add', 'ada@example.com', '--field', 'score=10');
    expect(again).toEqual({ member_id: 1, added: false, status: 'a' });
    expect(await json('members', 'add', 'bob+news@example.com', '--group', 'Newsletter', '--group', 'VIP')).toEqual({
      member_id: 2,
      added: true,
      status: 'a',
    });
    const ada = await json('members', 'get', '1');
    expect(ada).toEqual({
      member_id: 1,
      account_id: 1,
      email: 'ada@example.com',
      status: 'active',
      member_status_id: 'a',
      confirmed_opt_in: null,
      fields: { first_name: 'Ada', birthday: '1815-12-10', score: 10, interests: ['news'] },
      sms: {
        phone_number: '+4791234567',
        region_code: 'NO',
        transactional_status: 'a',
        transactional_status_updated_at: '2026-05-06T07:08:09.000000+00:00',
        promotional_status: 'o',
        promotional_status_updated_at: '2026-05-06T07:08:09.000000+00:00',
      },
      last_modified_at: '@D:2026-05-06T07:08:09',
      member_since: '@D:2026-05-06T07:08:09',
      deleted_at: null,
      plaintext_preferred: false,
      email_error: null,
      bounce_count: 0,
    });
    // A + in an address is a plus, whatever the transport does with it.
    expect((await json('members', 'get', 'bob+news@example.com')).member_id).toBe(2);
    const bad = await run('members', 'add', 'not-an-email');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('email: "not-an-email" is not a valid e-mail address');
    const badField = await run('members', 'add', 'c@example.com', '--field', 'birthday=2026-02-30');
    expect(badField.exitCode).toBe(1);
    expect(badField.stderr).toContain('fields.birthday: must be a date YYYY-MM-DD');
    const unknown = await run('members', 'add', 'c@example.com', '--field', 'shoe_size=44');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('fields.shoe_size: unknown field "shoe_size"');
    // A refused add changed nothing.
    expect(await json('members', 'list', '--count')).toBe(2);
  });

  test('groups: counts stay right through status changes', async () => {
    const groups = await json('groups', 'list');
    expect(groups).toEqual([
      {
        member_group_id: 1,
        account_id: 1,
        group_name: 'Newsletter',
        group_type: 'g',
        active_count: 2,
        error_count: 0,
        optout_count: 0,
        deleted_at: null,
        purged_at: null,
      },
      {
        member_group_id: 2,
        account_id: 1,
        group_name: 'VIP',
        group_type: 'g',
        active_count: 1,
        error_count: 0,
        optout_count: 0,
        deleted_at: null,
        purged_at: null,
      },
    ]);
    expect(await json('members', 'optout', 'ada@example.com')).toBe(true);
    expect(await json('members', 'optout', 'ada@example.com')).toBe(true);
    const history = await json('members', 'optouts', '1');
    expect(history).toEqual([{ timestamp: '@D:2026-05-06T07:08:09', mailing_id: null }]);
    const newsletter = await json('groups', 'get', 'Newsletter');
    expect([newsletter.active_count, newsletter.error_count, newsletter.optout_count]).toEqual([1, 0, 1]);
    // Adding an opted-out member again never re-activates it.
    expect(await json('members', 'add', 'ada@example.com')).toEqual({ member_id: 1, added: false, status: 'o' });
    expect(await json('groups', 'create', 'Everyone', 'Staff')).toEqual([
      { member_group_id: 3, group_name: 'Everyone' },
      { member_group_id: 4, group_name: 'Staff' },
    ]);
    expect(await json('members', 'copy-to-group', 'Everyone', '--status', 'a,o')).toBe(true);
    expect((await json('groups', 'members', 'Everyone')).map((m: any) => m.member_id)).toEqual([1, 2]);
    expect(await json('groups', 'add-members', 'Staff', '2', 'ada@example.com')).toEqual([2, 1]);
    expect(await json('groups', 'remove-members', 'Staff', '2')).toEqual([2]);
    expect((await json('members', 'groups', 'list', '1')).map((g: any) => g.group_name)).toEqual(['Newsletter', 'Everyone', 'Staff']);
    expect(await json('members', 'groups', 'remove', '1', '--group', 'Staff')).toEqual([4]);
    expect(await json('groups', 'rename', 'Staff', 'Team')).toBe(true);
    expect((await json('groups', 'get', '4')).group_name).toBe('Team');
  });

  test('destructive commands need --yes off a terminal and change nothing without it', async () => {
    const refused = await run('members', 'delete', '2');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to archive member bob+news@example.com (2) without --yes (no terminal to confirm on)');
    for (const args of [
      ['members', 'purge', '2'],
      ['members', 'purge-archived'],
      ['members', 'status', '2', '--to', 'o'],
      ['members', 'move-status', '--from', 'a', '--to', 'e'],
      ['fields', 'clear', 'score'],
      ['fields', 'delete', 'score'],
      ['groups', 'delete', 'Team'],
    ]) {
      const r = await run(...args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('without --yes');
    }
    expect((await json('members', 'get', '2')).member_status_id).toBe('a');
    expect((await json('fields', 'get', 'score')).deleted_at).toBeNull();
  });

  test('status moves, archive, deleted reads and purge', async () => {
    expect(await json('members', 'status', '2', '--to', 'e', '--yes')).toBe(true);
    expect((await json('groups', 'get', 'VIP')).error_count).toBe(1);
    expect(await json('members', 'move-status', '--from', 'e', '--to', 'a', '--group', 'VIP', '--yes')).toBe(true);
    expect((await json('members', 'get', '2')).member_status_id).toBe('a');
    const badStatus = await run('members', 'api-typo');
    expect(badStatus.exitCode).toBe(2);
    expect(await json('members', 'delete', '2', '--yes')).toBe(true);
    const gone = await run('members', 'get', '2');
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
    expect((await json('members', 'get', '2', '--deleted')).deleted_at).toBe('@D:2026-05-06T07:08:09');
    expect((await json('members', 'list', '--deleted-only')).map((m: any) => m.member_id)).toEqual([2]);
    expect((await json('members', 'list', '--deleted-range', '2026-05-06')).map((m: any) => m.member_id)).toEqual([2]);
    expect(await json('members', 'list', '--deleted-range', '~2026-05-05')).toEqual([]);
    expect((await json('groups', 'get', 'VIP')).active_count).toBe(0);
    // Update works on an archived member and can change the address.
    expect(await json('members', 'update', '2', '--email', 'robert@example.com', '--field', 'first_name=Robert')).toBe(true);
    expect((await json('members', 'get', 'robert@example.com', '--deleted')).fields).toEqual({ first_name: 'Robert' });
    expect(await json('members', 'purge-archived', '--yes')).toBe(true);
    const purged = await run('members', 'get', '2', '--deleted');
    expect(purged.exitCode).toBe(1);
    expect(await json('groups', 'members', 'Newsletter', '--deleted')).toHaveLength(1);
  });

  test('fields clear and delete remove member values', async () => {
    expect(await json('fields', 'clear', 'score', '--yes')).toBe(true);
    expect((await json('members', 'get', '1')).fields).toEqual({ first_name: 'Ada', birthday: '1815-12-10', interests: ['news'] });
    expect(await json('fields', 'delete', 'interests', '--yes')).toBe(true);
    expect((await json('members', 'get', '1')).fields).toEqual({ first_name: 'Ada', birthday: '1815-12-10' });
    expect(await json('fields', 'update', 'first_name', '--display-name', 'Given name')).toBe(1);
    expect((await json('fields', 'get', '1')).display_name).toBe('Given name');
  });

  test('output formats: table, csv and ndjson are views of the same answer', async () => {
    const csv = await run('members', 'list', '--output', 'csv');
    expect(csv.stdout.split('\n')[0]).toBe(
      'member_id,account_id,email,status,member_status_id,confirmed_opt_in,fields.first_name,fields.birthday,sms.phone_number,sms.region_code,sms.transactional_status,sms.transactional_status_updated_at,sms.promotional_status,sms.promotional_status_updated_at,last_modified_at,member_since,deleted_at,plaintext_preferred,email_error,bounce_count',
    );
    expect(csv.stdout.split('\n')[1]).toMatch(/^1,1,ada@example.com,opt-out,o,,Ada,1815-12-10,\+4791234567,NO,/);
    const nd = await run('groups', 'list', '--output', 'ndjson');
    const lines = nd.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0]).group_name).toBe('Newsletter');
    const table = await run('groups', 'list', '-o', 'table');
    expect(table.stdout).toMatch(/│ ID │ Group\s+│ Type │ Active │ Errors │ Opted out │/);
    expect(table.stdout).toMatch(/│ 1\s+│ Newsletter\s+│ g\s+│ 0\s+│ 0\s+│ 1\s+│/);
    const done = await run('members', 'optout', 'ada@example.com', '-o', 'table');
    expect(done.stdout).toBe('Opted out ada@example.com.');
  });

  test('usage errors exit 2, refusals exit 1', async () => {
    const r = await run('members', 'get');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("missing required argument 'member'");
    const badOutput = await run('groups', 'list', '--output', 'xml');
    expect(badOutput.exitCode).toBe(2);
    const help = await run('members', 'add', '--help');
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Examples:\n  $ amsg members add ada@example.com --field first_name=Ada --group Newsletter');
    const missingGroup = await run('members', 'signup', 'x@example.com', '--group', 'Nope');
    expect(missingGroup.exitCode).toBe(1);
    expect(missingGroup.stderr).toContain('no group named "Nope"');
    const other = await run('--account', '2', 'groups', 'list');
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toContain('account 2 not found');
  });

  test('groups list is complete past one window of 500 (it pages); --count says how many', async () => {
    const before: { member_group_id: number }[] = await json('groups', 'list');
    const names = Array.from({ length: 520 }, (_, i) => ({ group_name: `Bulk ${String(i).padStart(3, '0')}` }));
    const created: { member_group_id: number }[] = await json(
      'api',
      'call',
      'POST',
      '/1/groups',
      '--data',
      JSON.stringify({ groups: names }),
    );
    expect(created.length).toBe(520);
    const all = await json('groups', 'list');
    expect(all.map((g: { member_group_id: number }) => g.member_group_id)).toEqual([...before, ...created].map((g) => g.member_group_id));
    expect(all.at(-1).group_name).toBe('Bulk 519');
    expect(await json('groups', 'list', '--count')).toBe(before.length + 520);
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
