import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg fields relationships`, end to end, and the rules it makes on member writes
 * (add, update, CSV import with line numbers): run in local mode and against a
 * spawned `amsg serve`; the two transcripts must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const AT_NOW = `@D:${NOW.slice(0, 19)}`;

describe.each<Mode>(['local', 'remote'])('amsg fields relationships (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  const fieldIds: Record<string, number> = {};

  beforeAll(async () => {
    await box.start();
    for (const args of [
      ['fields', 'create', 'region', '--type', 'text', '--widget', 'select one', '--options', 'EU,US,Asia'],
      ['fields', 'create', 'office', '--type', 'text', '--widget', 'radio', '--options', 'Oslo,Paris,Austin,Tokyo'],
      ['fields', 'create', 'city', '--type', 'text'],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
      fieldIds[args[2]] = JSON.parse(r.stdout);
    }
  }, 60_000);
  afterAll(() => box.stop());

  const related = (name: string, widget: string, options: string[]) => ({
    field_id: fieldIds[name],
    shortcut_name: name,
    display_name: name,
    options,
    widget_type: widget,
  });

  test('create by field names with --allow; get by id and name; list', async () => {
    const created = await json(
      'fields',
      'relationships',
      'create',
      'Region → Office',
      '--parent',
      'region',
      '--child',
      'office',
      '--allow',
      'EU=Oslo,Paris',
      '--allow',
      'US=Austin',
    );
    const record = {
      relationship_id: 1,
      relationship_name: 'Region → Office',
      account_id: 1,
      created_at: AT_NOW,
      parent_field: related('region', 'select one', ['EU', 'US', 'Asia']),
      child_field: related('office', 'radio', ['Oslo', 'Paris', 'Austin', 'Tokyo']),
      options: { EU: ['Oslo', 'Paris'], US: ['Austin'] },
    };
    expect(created).toEqual(record);
    expect(await json('fields', 'relationships', 'get', '1')).toEqual(record);
    expect(await json('fields', 'relationships', 'get', 'region → office')).toEqual(record);
    expect(await json('fields', 'relationships', 'list')).toEqual([record]);
  });

  test('the rules are refused with the reason (exit 1)', async () => {
    const dup = await run('fields', 'relationships', 'create', 'Region → Office', '--parent', 'city', '--child', 'office');
    expect(dup.exitCode).toBe(1);
    expect(dup.stderr).toContain('relationship_name: a relationship named "Region → Office" already exists (relationship 1)');
    const bad = await run('fields', 'relationships', 'create', 'Other', '--parent', 'office', '--child', 'region', '--allow', 'Rome=EU');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('already belongs to relationship 1');
    const usage = await run('fields', 'relationships', 'create', 'X', '--parent', 'region', '--child', 'office', '--allow', 'EU');
    expect([usage.exitCode, usage.stderr]).toEqual([2, expect.stringContaining('--allow takes PARENT=CHILD,CHILD, got "EU"')]);
    const del = await run('fields', 'delete', 'office', '--yes');
    expect(del.exitCode).toBe(1);
    expect(del.stderr).toContain('field office is in relationship 1 ("Region → Office"); delete the relationship first');
  });

  test('member writes follow it: add, update, and a CSV import names the line', async () => {
    const refused = await run('members', 'add', 'ann@example.com', '--field', 'region=EU', '--field', 'office=Austin');
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      'fields.office: "Austin" is not allowed when region is "EU" (relationship "Region → Office": "EU" allows "Oslo", "Paris")',
    );
    expect((await json('members', 'add', 'ann@example.com', '--field', 'region=EU', '--field', 'office=Oslo')).status).toBe('a');
    const update = await run('members', 'update', 'ann@example.com', '--field', 'region=US');
    expect(update.exitCode).toBe(1);
    expect(update.stderr).toContain('"Oslo" is not allowed when region is "US"');
    const csv = join(box.dir, 'offices.csv');
    writeFileSync(csv, 'email,region,office\nbob@example.com,US,Austin\ncy@example.com,US,Paris\ndi@example.com,Asia,\n');
    const imported = await run('members', 'import', csv);
    expect(imported.exitCode).toBe(4);
    expect(imported.stderr).toContain(
      'line 3: office: "Paris" is not allowed when region is "US" (relationship "Region → Office": "US" allows "Austin")',
    );
    expect(JSON.parse(imported.stdout)).toMatchObject({ num_members_added: 2, num_errors: 1 });
  });

  test('update replaces the options; delete; tables and help', async () => {
    const updated = await json('fields', 'relationships', 'update', 'Region → Office', '--name', 'Offices', '--allow', 'Asia=Tokyo');
    expect([updated.relationship_name, updated.options]).toEqual(['Offices', { Asia: ['Tokyo'] }]);
    const table = await run('fields', 'relationships', 'list', '-o', 'table');
    expect(table.stdout).toMatch(/│ 1\s+│ Offices\s+│ region\s+│ office\s+│/);
    const nothing = await run('fields', 'relationships', 'update', 'Offices');
    expect(nothing.exitCode).toBe(2);
    await json('fields', 'create', 'tier', '--type', 'text', '--widget', 'select one', '--options', 'A,B');
    await json('fields', 'create', 'perk', '--type', 'text', '--widget', 'radio', '--options', 'X,Y');
    expect((await json('fields', 'relationships', 'create', 'Tier → Perk', '--parent', 'tier', '--child', 'perk')).relationship_id).toBe(2);
    const first = await run('fields', 'relationships', 'list', '--limit', '1', '--json');
    expect(JSON.parse(first.stdout).map((r: any) => r.relationship_name)).toEqual(['Offices']);
    expect(first.stderr).toContain('1 of 2 shown; --all for every row');
    expect(await json('fields', 'relationships', 'delete', 'Tier → Perk', '--yes')).toBe(true);
    const refused = await run('fields', 'relationships', 'delete', 'Offices');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to delete field relationship "Offices" (1) of region → office without --yes');
    expect((await run('fields', 'relationships', 'delete', 'Offices', '--yes', '-o', 'table')).stdout).toBe(
      'Deleted field relationship 1.',
    );
    expect(await json('fields', 'relationships', 'list')).toEqual([]);
    const missing = await run('fields', 'relationships', 'get', '1');
    expect([missing.exitCode, missing.stderr]).toEqual([1, expect.stringContaining('field relationship 1 not found')]);
    const help = await run('fields', 'relationships', 'create', '--help');
    expect(help.stdout).toContain(
      'Examples:\n  $ amsg fields relationships create "Region → Office" --parent region --child office --allow "EU=Oslo,Paris" --allow "US=Austin"',
    );
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(15);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
