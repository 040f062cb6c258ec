import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `--resume` goes on with the options the import was started with: the service keeps
 * its own (groups, add-only, source name, file name), and the CLI records its --map,
 * --ignore and --delimiter on the import (client_options). Each may be left out or
 * given again; one given with another value is refused, by name, before any row.
 * Both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('import --resume options (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  beforeAll(async () => {
    await box.start();
  }, 30_000);
  afterAll(() => box.stop());

  test("refuses options that differ, naming each; the same ones, or none, go on with the first run's", async () => {
    // A file that breaks on its last row: the import stops (exit 2) and can be resumed once it is fixed.
    const file = join(box.dir, 'people.csv');
    const rows = Array.from({ length: 6 }, (_, i) => `p${i}@example.com;P${i};x`);
    writeFileSync(file, ['E-mail;Given;Junk', ...rows, 'p6@example.com;"Unclosed'].join('\n'));
    const first = ['--map', 'E-mail=email', '--map', 'Given=first_name', '--ignore', 'Junk', '--delimiter', ';', '--source-name', 'CRM'];
    const stopped = await run('members', 'import', file, ...first, '--group', 'Spring', '--batch-size', '2', '--json');
    expect(stopped.exitCode).toBe(2);
    const record = JSON.parse(stopped.stdout);
    expect(record).toMatchObject({
      status: 'e',
      num_members: 6,
      source_name: 'CRM',
      client_options: { map: { 'E-mail': 'email', Given: 'first_name' }, ignore: ['Junk'], delimiter: ';' },
    });
    const id = String(record.import_id);
    writeFileSync(file, `${readFileSync(file, 'utf8')} End";x\n`);

    const differ = await run(
      'members',
      'import',
      file,
      '--resume',
      id,
      '--map',
      'E-mail=email',
      '--source-name',
      'ERP',
      '--add-only',
      '--group',
      'Autumn',
      '--delimiter',
      ',',
    );
    expect(differ.exitCode).toBe(2);
    expect(differ.stderr).toContain(
      `amsg: --resume ${id} goes on with the options the import was started with (leave them out, or give the same); these differ:\n` +
        '  - --map: first run e-mail=email, given=first_name, now e-mail=email\n' +
        '  - --delimiter: first run ";", now ","\n' +
        '  - --add-only: the first run added and updated members\n' +
        '  - --source-name: first run "CRM", now "ERP"\n' +
        `  - --group: first run group ids ${record.group_ids[0]}, now Autumn (no such group)`,
    );
    const renamed = join(box.dir, 'other.csv');
    writeFileSync(renamed, readFileSync(file));
    const otherFile = await run('members', 'import', renamed, '--resume', id);
    expect(otherFile.exitCode).toBe(2);
    expect(otherFile.stderr).toContain(`  - the file: import ${id} is of people.csv, this is other.csv`);
    expect((await json('members', 'imports', 'get', id)).num_members).toBe(6);

    // No options: the first run's --map, --ignore and --delimiter (without them the header would not import).
    const resumed = await run('members', 'import', file, '--resume', id, '--json');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'o', num_members: 7, num_members_added: 7, num_duplicates: 0 });
    expect((await json('members', 'get', 'p6@example.com')).fields).toEqual({ first_name: 'Unclosed End' });
  });

  test('the same options given again are taken', async () => {
    const file = join(box.dir, 'again.csv');
    writeFileSync(file, ['Mail,Name', 'q0@example.com,Q0', 'q1@example.com,Q1', 'q2@example.com,"Open'].join('\n'));
    const opts = ['--map', 'Mail=email', '--map', 'Name=first_name', '--group', 'Summer', '--batch-size', '1'];
    const stopped = await run('members', 'import', file, ...opts, '--json');
    expect(stopped.exitCode).toBe(2);
    const id = String(JSON.parse(stopped.stdout).import_id);
    writeFileSync(file, `${readFileSync(file, 'utf8')}"\n`);
    const resumed = await run('members', 'import', file, ...opts, '--resume', id, '--json');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'o', num_members: 3, num_members_added: 3 });
  });
});

test('import --resume: local and remote transcripts match', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
