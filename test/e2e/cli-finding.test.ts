import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Finding things: suggestions for mistyped names (fields, tags), members by part of
 * their address, the archived-member hint, mailings by name, opt-out by id. Both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('finding things (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  let html = '';

  beforeAll(async () => {
    await box.start();
    for (const email of ['tina.mueller@example.com', 'hans.weber@example.com', 'Tina.Mueller.2@example.org', 'ola@example.com'])
      expect((await box.amsg('members', 'add', email, '--group', 'Gold')).exitCode).toBe(0);
    expect((await box.amsg('members', 'delete', 'ola@example.com', '--yes')).exitCode).toBe(0);
    html = join(box.dir, 'body.html');
    writeFileSync(html, '<p>Hi <a href="[% optout_url %]">opt out</a></p>');
  }, 30_000);
  afterAll(() => box.stop());

  test('mistyped field names and tags get a suggestion', async () => {
    const add = await run('members', 'add', 'new@example.com', '--field', 'firstname=X');
    expect(add.exitCode).toBe(1);
    expect(add.stderr).toContain('unknown field "firstname" (define it with amsg fields create) (did you mean first_name?)');
    const field = await run('fields', 'get', 'frist_name');
    expect(field.exitCode).toBe(1);
    expect(field.stderr).toContain('no field named "frist_name" (see amsg fields list); did you mean first_name?');
    const validate = await run('mailings', 'validate', '--html', html, '--subject', 'Hi [% member:frist_name %]', '-o', 'table');
    expect(validate.stdout).toBe('subject:1:4: unknown member field "frist_name" (did you mean first_name?): [% member:frist_name %]');
    // JSON stays the service's answer; the suggestion is a note.
    const validateJson = await run('mailings', 'validate', '--html', html, '--subject', 'Hi [% member:frist_name %]', '--json');
    expect(JSON.parse(validateJson.stdout)[0].reason).toBe('unknown member field "frist_name"');
    expect(validateJson.stderr).toContain('subject:1:4: unknown member field "frist_name" (did you mean first_name?)');
  });

  test('members find TEXT and --email-contains: part of an address, any case', async () => {
    const found = await json('members', 'find', 'tina.mueller');
    expect(found.map((m: any) => m.email)).toEqual(['tina.mueller@example.com', 'tina.mueller.2@example.org']);
    const listed = await json('members', 'list', '--email-contains', 'WEBER');
    expect(listed.map((m: any) => m.member_id)).toEqual([2]);
    // find sees archived members too (support staff look them up); list does so with --deleted.
    expect((await json('members', 'find', 'ola@')).map((m: any) => m.member_id)).toEqual([4]);
    expect(await json('members', 'list', '--email-contains', 'ola@')).toEqual([]);
    const one = await run('members', 'find', 'example', '--limit', '1', '--json');
    expect(JSON.parse(one.stdout)).toHaveLength(1);
    expect(one.stderr).toContain('the first 1 matches shown; --all finds every one');
    const none = await run('members', 'find', 'nobody');
    expect(none.stderr).toContain(`no member's address contains "nobody"`);
  });

  test('an archived member looked up without --deleted: the 404 says it is archived and how to see it', async () => {
    for (const ref of ['4', 'ola@example.com']) {
      const r = await run('members', 'get', ref);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`member ${ref} not found: it is archived (amsg members get ${ref} --deleted shows it)`);
    }
    const gone = await run('members', 'get', '99');
    expect(gone.stderr).toContain('member 99 not found');
    expect(gone.stderr).not.toContain('archived');
  });

  test('mailings by name where unambiguous; members optout by id', async () => {
    const create = (name: string) =>
      json(
        'mailings',
        'create',
        '--name',
        name,
        '--subject',
        'S',
        '--sender',
        'news@example.com',
        '--html',
        html,
        '--group',
        'Gold',
        '--send-at',
        '2027-01-01T09:00:00Z',
      );
    expect(await create('Spring sale')).toEqual({ mailing_id: 1 });
    expect((await json('mailings', 'get', 'spring SALE')).mailing_id).toBe(1);
    // The prompt's description, as a dry run: the name, and when it was to go out (local time; the suite's is UTC).
    expect(await json('mailings', 'cancel', 'Spring sale', '--dry-run')).toEqual({
      dry_run: true,
      would: 'cancel mailing 1 "Spring sale", scheduled for 2027-01-01 09:00',
      count: 1,
    });
    expect((await json('mailings', 'get', '1')).mailing_status).toBe('p');
    await create('Twice');
    await create('Twice');
    const ambiguous = await run('mailings', 'get', 'Twice');
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toContain('2 mailings are named "Twice" (2, 3): give the id');
    const missing = await run('mailings', 'get', 'Spring');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('no mailing named "Spring" (see amsg mailings list); did you mean "Spring sale"?');

    expect(await json('members', 'optout', '2')).toBe(true);
    expect((await json('members', 'get', '2')).member_status_id).toBe('o');
  });
});

test('the two modes find the same', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
