import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg searches`, end to end: run in local mode and against a spawned `amsg serve`;
 * the two transcripts (exit code and stdout of every run) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

/** NOW of the harness as searches answer it. */
const AT_NOW = `@D:${NOW.slice(0, 19)}`;

describe.each<Mode>(['local', 'remote'])('amsg searches (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { record, run, json } = recorder(box, log);
  const ids = (rows: { member_id: number }[]) => rows.map((r) => r.member_id);
  /** Runs amsg with stdin, recorded like the others. */
  const withInput = async (input: string, ...args: string[]) => {
    const r = await box.raw(args, box.env, input);
    record(r);
    return r;
  };

  beforeAll(async () => {
    await box.start();
    for (const args of [
      ['fields', 'create', 'city', '--type', 'text'],
      ['fields', 'create', 'age', '--type', 'numeric'],
      ['members', 'add', 'ada@example.com', '--field', 'city=Oslo', '--field', 'age=36', '--group', 'Gold'],
      ['members', 'add', 'bob@example.com', '--field', 'city=Bergen', '--field', 'age=20'],
      ['members', 'add', 'cy@test.org', '--field', 'city=oslo', '--field', 'age=50', '--group', 'Gold'],
      ['members', 'add', 'di@example.com'],
      ['members', 'optout', 'cy@test.org'],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('create from JSON text, a file and stdin; get by id and name; list', async () => {
    // create answers the bare id, as the real service does; get reads the record.
    expect(await json('searches', 'create', 'Oslo', '--criteria', '["member_field:city", "eq", "OSLO"]')).toBe(1);
    const oslo = await json('searches', 'get', '1');
    expect(oslo).toEqual({
      search_id: 1,
      account_id: 1,
      name: 'Oslo',
      criteria: '["member_field:city","eq","OSLO"]',
      active_count: 1,
      error_count: 0,
      optout_count: 1,
      cached_at: AT_NOW,
      last_run_at: AT_NOW,
      deleted_at: null,
      purged_at: null,
    });
    const file = join(box.dir, 'example.json');
    writeFileSync(file, '["member:email", "contains", "*@example.com"]\n');
    expect(await json('searches', 'create', 'Example', '--criteria', `@${file}`)).toBe(2);
    const example = await json('searches', 'get', '2');
    expect([example.search_id, example.criteria, example.active_count]).toEqual([2, '["member:email","contains","*@example.com"]', 3]);
    const piped = await withInput(
      '["and", ["search", "eq", 1], ["group", "eq", "Gold"]]',
      'searches',
      'create',
      'Gold in Oslo',
      '--criteria',
      '-',
    );
    expect(piped.exitCode).toBe(0);
    expect(JSON.parse(piped.stdout)).toBe(3);
    expect(await json('searches', 'get', '3')).toMatchObject({ search_id: 3, active_count: 1, optout_count: 1 });

    expect(await json('searches', 'get', 'oslo')).toEqual(oslo);
    expect(await json('searches', 'get', '1')).toEqual(oslo);
    expect((await json('searches', 'list')).map((s: any) => [s.search_id, s.name])).toEqual([
      [1, 'Oslo'],
      [2, 'Example'],
      [3, 'Gold in Oslo'],
    ]);
    expect(await json('searches', 'list', '--count')).toBe(3);
  });

  test('members of a search: records, windows, --count', async () => {
    expect(ids(await json('searches', 'members', 'Oslo'))).toEqual([1, 3]);
    expect(ids(await json('searches', 'members', 'Example', '--start', '1'))).toEqual([2, 4]);
    expect(await json('searches', 'members', '2', '--count')).toBe(3);
    const [ada] = await json('searches', 'members', 'Gold in Oslo', '--end', '1');
    expect(ada).toEqual(await json('members', 'get', '1'));
  });

  test('refusals: the service names the place in the criteria; amsg refuses what it can check itself', async () => {
    const operator = await run(
      'searches',
      'create',
      'Bad',
      '--criteria',
      '["and", ["member_field:city", "eq", "Oslo"], ["group", "equals", "Gold"]]',
    );
    expect(operator.exitCode).toBe(1);
    expect(operator.stderr).toContain(
      'the service refused (HTTP 400): criteria[2][1]: unknown operator "equals" (eq, lt, gt, between, contains, in, any)',
    );
    const arity = await run('searches', 'create', 'Bad', '--criteria', '["member_field:age", "between", 18]');
    expect(arity.stderr).toContain('criteria: "between" takes two values (low and high, inclusive), got 1');
    const field = await run('searches', 'create', 'Bad', '--criteria', '["member_field:town", "eq", "Oslo"]');
    expect(field.stderr).toContain('criteria[0]: unknown field "town" (see GET /fields)');
    const taken = await run('searches', 'create', 'OSLO', '--criteria', '["group", "eq", "Gold"]');
    expect(taken.exitCode).toBe(1);
    expect(taken.stderr).toContain('name: a search named "OSLO" already exists (search 1)');

    const notJson = await run('searches', 'create', 'Bad', '--criteria', '[oops');
    expect(notJson.exitCode).toBe(2);
    expect(notJson.stderr).toContain('--criteria is not JSON');
    const noFile = await run('searches', 'create', 'Bad', '--criteria', '@nowhere.json');
    expect(noFile.exitCode).toBe(2);
    expect(noFile.stderr).toContain('--criteria @nowhere.json: cannot read the file (ENOENT)');
    const missing = await run('searches', 'create', 'Bad');
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("required option '--criteria <json|@file|->' not specified");
    const unknown = await run('searches', 'get', 'Nope');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('no search named "Nope" (see amsg searches list)');
    const gone = await run('searches', 'get', '99');
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
    expect(gone.stderr).toContain('search 99 not found');
    const nothing = await run('searches', 'update', 'Oslo');
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('give --name, --criteria or both');
    expect(await json('searches', 'list', '--count')).toBe(3);
  });

  test('update: rename, change criteria, and a cycle is refused', async () => {
    expect(await json('searches', 'update', 'Oslo', '--name', 'Oslo people')).toBe(true);
    const renamed = await json('searches', 'get', '1');
    expect([renamed.search_id, renamed.name, renamed.criteria]).toEqual([1, 'Oslo people', '["member_field:city","eq","OSLO"]']);
    expect(await json('searches', 'update', '1', '--criteria', '["member_field:age", "gt", 30]')).toBe(true);
    const older = await json('searches', 'get', '1');
    expect([older.name, older.criteria, older.active_count, older.optout_count]).toEqual([
      'Oslo people',
      '["member_field:age","gt",30]',
      1,
      1,
    ]);
    const cycle = await run('searches', 'update', '1', '--criteria', '["segment", "eq", 3]');
    expect(cycle.exitCode).toBe(1);
    expect(cycle.stderr).toContain('criteria[2]: a search cannot contain itself (search 1 → 3 → 1)');
    expect((await json('searches', 'get', '1')).criteria).toBe('["member_field:age","gt",30]');
  });

  test('segments are the saved searches, and exports take them', async () => {
    expect(await json('searches', 'segments')).toEqual([
      { segment_id: 1, name: 'Oslo people', active_count: 1, error_count: 0, optout_count: 1 },
      { segment_id: 2, name: 'Example', active_count: 3, error_count: 0, optout_count: 0 },
      { segment_id: 3, name: 'Gold in Oslo', active_count: 1, error_count: 0, optout_count: 1 },
    ]);
    expect(await json('searches', 'segments', 'example')).toEqual({
      segment_id: 2,
      name: 'Example',
      active_count: 3,
      error_count: 0,
      optout_count: 0,
    });
    const created = await json(
      'api',
      'call',
      'POST',
      '/1/exports',
      '--data',
      '{"user_id": "owner@localhost", "criteria": {"segments": [2, 3], "member_status_ids": ["a", "o"]}}',
    );
    const csv = await run('exports', 'download', String(created.export_id));
    expect(csv.exitCode).toBe(0);
    expect(
      csv.stdout
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual(['ada@example.com', 'bob@example.com', 'cy@test.org', 'di@example.com']);
    const unknown = await run(
      'api',
      'call',
      'POST',
      '/1/exports',
      '--data',
      '{"user_id": "owner@localhost", "criteria": {"segments": [9]}}',
    );
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('segment 9 not found');
  });

  test('delete needs --yes, and a search another one uses stays', async () => {
    const refused = await run('searches', 'delete', 'Oslo people');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to delete search "Oslo people" (1) without --yes');
    const used = await run('searches', 'delete', 'Oslo people', '--yes');
    expect(used.exitCode).toBe(1);
    expect(used.stderr).toContain('HTTP 409');
    expect(used.stderr).toContain('search 1 is used by search 3 ("Gold in Oslo"); change or delete that search first');
    expect(await json('searches', 'delete', 'Gold in Oslo', '--yes')).toBe(true);
    expect(await json('searches', 'delete', '1', '--yes')).toBe(true);
    expect((await json('searches', 'list')).map((s: any) => s.name)).toEqual(['Example']);
    // The name is free again.
    expect(await json('searches', 'create', 'Oslo people', '--criteria', '["member_field:city", "eq", "Oslo"]')).toBe(4);
  });

  test('tables for people, help with examples', async () => {
    const table = await run('searches', 'list', '-o', 'table');
    // Tables show readable local times (the suite's clock is UTC); JSON keeps @D:.
    expect(table.stdout).toMatch(/│ ID │ Name\s+│ Active │ Errors │ Opted out │ Last run\s+│ Criteria\s+│/);
    expect(table.stdout).toMatch(/│ 4\s+│ Oslo people\s+│ 1\s+│ 0\s+│ 1\s+│ 2026-05-06 07:08 │ \["member_field:city","eq","Oslo"\]\s+│/);
    const members = await run('searches', 'members', 'Oslo people', '-o', 'table');
    expect(members.stdout).toMatch(/│ 1\s+│ ada@example\.com │ active\s+│ city=Oslo; age=36 │/);
    const deleted = await run('searches', 'delete', 'Example', '--yes', '-o', 'table');
    expect(deleted.stdout).toBe('Deleted search 2.');
    const help = await run('searches', 'create', '--help');
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain(
      `Examples:\n  $ amsg searches create "Oslo VIPs" --criteria '["and", ["member_field:city", "eq", "Oslo"], ["group", "eq", "VIP"]]'`,
    );
    const overview = await run('searches', '--help');
    expect(overview.stdout).toContain('Predicates: and, or (one or more conditions), not (exactly one).');
    const top = await run('--help');
    expect(top.stdout).toContain('searches');
    expect(top.stdout).toContain('saved searches and segments');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
