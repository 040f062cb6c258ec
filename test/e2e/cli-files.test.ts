import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Files round-trip: the --errors-out file re-imports once its rows are fixed (a
 * ragged row keeps exactly its cells), an exported CSV re-imports, columns can be
 * skipped, and a dry run reports the counts the real import then reports. Both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('files round-trip (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  const file = (name: string, content: string) => {
    const path = join(box.dir, name);
    writeFileSync(path, content);
    return path;
  };
  const counts = (r: Record<string, unknown>) => ({
    num_members: r.num_members,
    num_members_added: r.num_members_added,
    num_members_updated: r.num_members_updated,
    num_duplicates: r.num_duplicates,
    num_skipped: r.num_skipped,
    num_errors: r.num_errors,
  });

  beforeAll(async () => {
    await box.start();
    expect((await box.amsg('fields', 'create', 'score', '--type', 'numeric')).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('a dry run and the real import report the same counts in the same shape', async () => {
    const csv = file('mixed.csv', 'email,first_name,score\nann@example.com,Ann,1\nbad,Bad,2\nann@example.com,Again,3\nshort@example.com\n');
    const dry = await run('members', 'import', csv, '--dry-run');
    const real = await run('members', 'import', csv);
    expect(dry.exitCode).toBe(4);
    expect(real.exitCode).toBe(4);
    const dryAnswer = JSON.parse(dry.stdout);
    expect(dryAnswer.dry_run).toBe(true);
    expect(counts(dryAnswer)).toEqual(counts(JSON.parse(real.stdout)));
    expect(counts(dryAnswer)).toEqual({
      num_members: 4,
      num_members_added: 1,
      num_members_updated: 0,
      num_duplicates: 1,
      num_skipped: 2,
      num_errors: 2,
    });
    // For people: the same sentence of counts.
    const dryTable = await run('members', 'import', csv, '--dry-run', '-o', 'table');
    expect(dryTable.stdout).toBe('Dry run, nothing written: 4 rows, 0 added, 1 updated, 1 duplicates, 2 skipped, 2 errors.');
  });

  test('the --errors-out file says where it went, and re-imports once its rows are fixed', async () => {
    const csv = file('scores.csv', 'email,first_name,score\nok@example.com,Ok,1\nten@example.com,Ten,ten\nragged@example.com,Rag\n');
    const rejected = join(box.dir, 'rejected.csv');
    const first = await run('members', 'import', csv, '--errors-out', rejected);
    expect(first.exitCode).toBe(4);
    expect(first.stderr).toContain(`amsg: wrote the 2 rows not imported to ${rejected} (fix them and import that file again)`);
    const written = readFileSync(rejected, 'utf8');
    expect(written).toBe(
      [
        'email,first_name,score,line,error',
        'ten@example.com,Ten,ten,3,"score: must be a number for a numeric field, got ""ten"""',
        'ragged@example.com,Rag,4,has 2 columns; the header has 3',
        '',
      ].join('\n'),
    );
    // Unfixed, the file comes back with the same rows and reasons, on its own lines: the
    // line and error columns are the importer's own, and the ragged row has exactly its two cells again.
    const again = join(box.dir, 'rejected-again.csv');
    const unfixed = await run('members', 'import', rejected, '--errors-out', again);
    expect(unfixed.exitCode).toBe(4);
    expect(unfixed.stderr).toContain(
      'the last columns, "line" and "error", are the line and the reason amsg gave for rejecting each row: ignored',
    );
    expect(readFileSync(again, 'utf8')).toBe(written.replace(',ten,3,', ',ten,2,').replace(',Rag,4,', ',Rag,3,'));
    // A file from before the line column (error alone) comes back too.
    const older = file('older.csv', 'email,first_name,score,error\nten@example.com,Ten,ten,"score: bad"\n');
    const fromOlder = await run('members', 'import', older, '--errors-out', join(box.dir, 'older-again.csv'));
    expect(fromOlder.stderr).toContain('the last column, "error", is the reason amsg gave for rejecting each row: ignored');
    expect(readFileSync(join(box.dir, 'older-again.csv'), 'utf8').split('\n')[1]).toBe(
      'ten@example.com,Ten,ten,2,"score: must be a number for a numeric field, got ""ten"""',
    );
    // Fixed (a value corrected, the missing cell added), it imports with no hand edit of the error column.
    const fixedFile = file(
      'fixed.csv',
      written
        .replace('ten@example.com,Ten,ten,', 'ten@example.com,Ten,10,')
        .replace('ragged@example.com,Rag,', 'ragged@example.com,Rag,7,'),
    );
    const nothing = join(box.dir, 'nothing.csv');
    const fixed = await run('members', 'import', fixedFile, '--errors-out', nothing);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(counts(JSON.parse(fixed.stdout))).toMatchObject({ num_members: 2, num_members_added: 2, num_errors: 0 });
    expect((await json('members', 'get', 'ten@example.com')).fields).toEqual({ first_name: 'Ten', score: 10 });
    expect((await json('members', 'get', 'ragged@example.com')).fields.score).toBe(7);
    // Nothing rejected: nothing written, and said so.
    expect(existsSync(nothing)).toBe(false);
    expect(fixed.stderr).toContain(`every row was imported: nothing written to ${nothing}`);
  });

  test('past the 20 rows told, --errors-out given means no hint to give it; without it, the hint', async () => {
    const csv = file('many-bad.csv', ['email', ...Array.from({ length: 25 }, (_, i) => `bad${i}`)].join('\n') + '\n');
    const rejected = join(box.dir, 'many-rejected.csv');
    const withFile = await run('members', 'import', csv, '--errors-out', rejected);
    expect(withFile.exitCode).toBe(4);
    expect(withFile.stderr).toContain('amsg: … and 5 more rows not imported\n');
    expect(withFile.stderr).not.toContain('--errors-out FILE');
    expect(withFile.stderr).toContain(`amsg: wrote the 25 rows not imported to ${rejected}`);
    expect(readFileSync(rejected, 'utf8').split('\n').slice(0, 2)).toEqual([
      'email,line,error',
      'bad0,2,"""bad0"" is not a valid e-mail address"',
    ]);
    const without = await run('members', 'import', csv);
    expect(without.stderr).toContain('amsg: … and 5 more rows not imported (--errors-out FILE writes them all)');
  });

  test("an exported list re-imports: the service's own columns are skipped with a note", async () => {
    const listed = await run('members', 'list', '--all', '--output', 'csv');
    const exported = file('exported.csv', listed.stdout + '\n');
    const r = await run('members', 'import', exported, '--dry-run');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "skipped the service's own columns member_id, account_id, status, member_status_id, confirmed_opt_in, sms, last_modified_at, member_since, deleted_at, plaintext_preferred, email_error, bounce_count (the service sets them; they are not imported)",
    );
    const members = (await json('members', 'list')).length;
    expect(JSON.parse(r.stdout)).toMatchObject({ num_members: members, num_members_updated: members, num_errors: 0 });
  });

  test('--ignore COLUMN and --map COLUMN= skip a column; a misspelt header gets a suggestion', async () => {
    const csv = file('notes.csv', 'email,frist_name,notes\nnote@example.com,Nora,call her\n');
    const refused = await run('members', 'import', csv);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('unknown columns "frist_name" (did you mean first_name?), "notes"');
    const ignored = await run('members', 'import', csv, '--ignore', 'notes', '--map', 'frist_name=first_name', '--dry-run');
    expect(ignored.exitCode, ignored.stderr).toBe(0);
    expect(ignored.stderr).toContain('skipped column notes (--ignore or --map column=)');
    const mapped = await run('members', 'import', csv, '--map', 'notes=', '--map', 'frist_name=first_name');
    expect(mapped.exitCode, mapped.stderr).toBe(0);
    expect((await json('members', 'get', 'note@example.com')).fields.first_name).toBe('Nora');
    const typo = await run('members', 'import', csv, '--ignore', 'nots');
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain(
      '--ignore names column "nots", which is not in the header (email, frist_name, notes); did you mean "notes"?',
    );
  });
});

test('the two modes import the same', () => {
  expect(
    transcriptView(transcripts.remote).map((r) => ({ ...r, stdout: r.stdout.replace(/"import_(started|finished)": "[^"]*"/g, '') })),
  ).toEqual(
    transcriptView(transcripts.local).map((r) => ({ ...r, stdout: r.stdout.replace(/"import_(started|finished)": "[^"]*"/g, '') })),
  );
});
