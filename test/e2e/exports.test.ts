import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Exports end to end, in local mode and against a spawned `amsg serve`; the two
 * transcripts (exit codes, stdout, and the files written) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const ISO = NOW.replace('Z', '.000000+00:00');

describe.each<Mode>(['local', 'remote'])('amsg exports (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { run, json } = recorder(box, log);
  /** A file the CLI wrote, recorded in the transcript as well. */
  const file = (name: string) => {
    const bytes = readFileSync(join(box.dir, name));
    log.push({ args: [`<file ${name}>`], exitCode: 0, stdout: createHash('sha256').update(bytes).digest('hex'), stderr: '' });
    return bytes;
  };

  beforeAll(async () => {
    await box.start();
    for (const args of [
      ['fields', 'create', 'city', '--type', 'text'],
      ['fields', 'create', 'tags', '--type', 'text[]', '--widget', 'check_multiple', '--options', 'news,offers'],
      [
        'members',
        'add',
        'ada@example.com',
        '--field',
        'first_name=Ada',
        '--field',
        'city=London, UK',
        '--field',
        'tags=["news","offers"]',
        '--group',
        'Newsletter',
        '--phone',
        '+4791234567',
      ],
      ['members', 'add', 'bo@example.com', '--field', 'first_name=Bo "the best"', '--group', 'Newsletter', '--group', 'VIP'],
      ['members', 'add', 'cy@example.com', '--group', 'VIP'],
      ['members', 'add', 'dee@example.com'],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('create --wait --download FILE writes the CSV and prints the export', async () => {
    const out = join(box.dir, 'news.csv');
    const record = await json(
      'exports',
      'create',
      '--group',
      'Newsletter',
      '--member',
      'dee@example.com',
      '--sms-fields',
      'region_code,phone_number',
      '--delimiter',
      ';',
      '--wait',
      '--download',
      out,
    );
    expect(record).toEqual({
      export_id: 1,
      account_id: 1,
      export_name: 'audience_export_1',
      export_type: 'a',
      status: 'o',
      user_id: 'owner@localhost',
      created_at: ISO,
      completed_at: ISO,
      criteria: {
        groups: [1],
        segments: null,
        subscriptions: null,
        member_ids: [4],
        member_status_ids: ['a'],
        include_fields: true,
        mfv_delimiter: ';',
        sms: { fields: ['phone_number', 'region_code'] },
      },
    });
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(file('news.csv').toString()).toBe(
      [
        'email,member_id,member_since,plaintext_preferred,bounce_count,status_name,last_modified_at,first_name,last_name,city,tags,sms_phone_number,region_code',
        `ada@example.com,1,${ISO},false,0,active,${ISO},Ada,,"London, UK",news;offers,+4791234567,NO`,
        `bo@example.com,2,${ISO},false,0,active,${ISO},"Bo ""the best""",,,,,`,
        `dee@example.com,4,${ISO},false,0,active,${ISO},,,,,,`,
        '',
      ].join('\n'),
    );
  });

  test('create without --wait answers the id; list, get, and download to stdout', async () => {
    expect(await json('exports', 'create', '--group', 'VIP', '--fields', 'first_name', '--status', 'active,o')).toEqual({ export_id: 2 });
    const list = await json('exports', 'list');
    expect(list.map((e: any) => [e.export_id, e.export_type, e.status])).toEqual([
      [1, 'a', 'o'],
      [2, 'a', 'o'],
    ]);
    expect(await json('exports', 'list', '--type', 'm')).toEqual([]);
    const got = await json('exports', 'get', '2');
    expect(got.criteria).toMatchObject({ groups: [2], member_status_ids: ['a', 'o'], include_fields: ['first_name'] });
    const csv = await run('exports', 'download', '2');
    expect(csv.exitCode).toBe(0);
    expect(csv.stdout).toBe(
      [
        'email,member_id,member_since,plaintext_preferred,bounce_count,status_name,last_modified_at,first_name',
        `bo@example.com,2,${ISO},false,0,active,${ISO},"Bo ""the best"""`,
        `cy@example.com,3,${ISO},false,0,active,${ISO},`,
      ].join('\n'),
    );
    const dash = await run('exports', 'download', '2', '--file', '-');
    expect(dash.stdout).toBe(csv.stdout);
    expect(csv.stderr).toContain('wrote');
  });

  test('member export: a zip of JSON files, saved with --download', async () => {
    const out = join(box.dir, 'ada.zip');
    const record = await json('exports', 'member', 'ada@example.com', '--download', out);
    expect(record).toMatchObject({ export_id: 3, export_type: 'm', export_name: 'member_1_export_3', status: 'o' });
    const files = unzipSync(new Uint8Array(file('ada.zip')));
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['README.txt', 'member.json', 'fields.json', 'groups.json', 'optouts.json', 'mailings.json', 'sms.json']),
    );
    const member = JSON.parse(strFromU8(files['member.json']));
    expect(member).toEqual(await json('members', 'get', '1'));
    expect(JSON.parse(strFromU8(files['groups.json']))).toEqual([
      { member_group_id: 1, group_name: 'Newsletter', added_at: `@D:${NOW.slice(0, 19)}` },
    ]);
    expect(await json('exports', 'member', '2')).toEqual({ export_id: 4 });
    expect((await json('exports', 'list', '--type', 'm')).map((e: any) => e.export_id)).toEqual([3, 4]);
    const again = await run('exports', 'download', '3', '--file', join(box.dir, 'again.zip'));
    expect(again.exitCode).toBe(0);
    expect(file('again.zip').equals(readFileSync(out))).toBe(true);
  });

  test('purge erases the member from exports', async () => {
    expect(await json('members', 'purge', '1', '--yes')).toBe(true);
    const csv = await run('exports', 'download', '1');
    expect(csv.stdout).not.toContain('ada@example.com');
    expect(csv.stdout.split('\n')).toHaveLength(3);
    const gone = await run('exports', 'get', '3');
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('export 3 not found');
  });

  test('errors: refusals exit 1, usage errors exit 2', async () => {
    const missing = await run('exports', 'download', '99');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('HTTP 404): export 99 not found');
    const field = await run('exports', 'create', '--fields', 'first_name,shoe_size');
    expect(field.exitCode).toBe(1);
    expect(field.stderr).toContain('criteria.include_fields[1]: unknown field "shoe_size"');
    const group = await run('exports', 'create', '--group', 'Nope');
    expect(group.exitCode).toBe(1);
    expect(group.stderr).toContain('no group named "Nope"');
    const type = await run('exports', 'list', '--type', 'x');
    expect(type.exitCode).toBe(2);
    const id = await run('exports', 'get', 'abc');
    expect(id.exitCode).toBe(2);
    const help = await run('exports', 'create', '--help');
    expect(help.stdout).toContain('Examples:\n  $ amsg exports create --download members.csv');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(20);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
