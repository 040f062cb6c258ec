import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execa } from 'execa';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';
import { fixture } from '../fixtures.js';

/**
 * `amsg members import` end to end, in local mode and against a spawned `amsg
 * serve`; the two transcripts (exit codes and stdout) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const CLEAN = fixture('members-clean.csv');
const BAD = fixture('members-bad.csv');
const SEMICOLON = fixture('members-semicolon-bom-crlf.csv');

describe.each<Mode>(['local', 'remote'])('amsg members import (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const file = (name: string, content: string | Buffer) => {
    const path = join(box.dir, name);
    writeFileSync(path, content);
    return path;
  };
  const { record, run, json } = recorder(box, log);
  /** Runs an import that must succeed; answers its JSON summary, checked against `imports get`. */
  const importOk = async (...args: string[]) => {
    const r = await run('members', 'import', ...args);
    expect(r.exitCode, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toEqual(await json('members', 'imports', 'get', String(summary.import_id)));
    return summary;
  };
  /** What a refused import must leave as it was. */
  const state = async () => ({
    members: await json('members', 'list', '--deleted'),
    imports: await json('members', 'imports', 'list'),
    groups: await json('groups', 'list'),
  });
  const member = (email: string) => json('members', 'get', email);

  beforeAll(async () => {
    await box.start();
    // first_name and last_name come with every account amsg init makes.
    for (const [name, type] of [
      ['city', 'text'],
      ['birthday', 'date'],
      ['score', 'numeric'],
    ])
      await json('fields', 'create', name, '--type', type);
  }, 30_000);
  afterAll(() => box.stop());

  test('the clean fixture: one import record, groups from the group_name column, summary = imports get', async () => {
    const summary = await importOk(CLEAN);
    expect(summary).toEqual({
      import_id: 1,
      account_id: 1,
      import_started: '@D:2026-05-06T07:08:09',
      import_finished: '@D:2026-05-06T07:08:09',
      source_name: null,
      source_filename: 'members-clean.csv',
      num_members_added: 10,
      num_members_updated: 0,
      num_duplicates: 0,
      num_skipped: 0,
      num_members: 10,
      num_errors: 0,
      num_added_by_group: [
        { member_group_id: 1, num_added: 5 },
        { member_group_id: 2, num_added: 4 },
      ],
      groups_updated: [1, 2],
      fields_updated: ['first_name', 'last_name', 'city', 'birthday', 'score'],
      status: 'o',
      error_message: null,
      style: null,
      automated_field_changes: null,
      mode: 'stream',
      add_only: false,
      group_ids: [],
      // The CLI's own options, recorded for a resume (none given here).
      client_options: { map: {}, ignore: [] },
    });
    expect(await json('members', 'list', '--count')).toBe(10);
    expect((await json('groups', 'list')).map((g: any) => [g.group_name, g.active_count])).toEqual([
      ['Newsletter', 5],
      ['Customers', 4],
    ]);
    const margaret = await member('margaret.hamilton@example.com');
    expect(margaret.fields).toEqual({
      first_name: 'Margaret',
      last_name: 'Hamilton',
      city: 'Boston, MA',
      birthday: '1936-08-17',
      score: 95.25,
    });
    expect((await json('members', 'groups', 'list', 'kari.nordmann@example.no')).map((g: any) => g.group_name)).toEqual([
      'Newsletter',
      'Customers',
    ]);
    // A clean file with --errors-out writes nothing, and says so.
    const errorsOut = join(box.dir, 'clean-errors.csv');
    const again = await run('members', 'import', CLEAN, '--errors-out', errorsOut);
    expect(again.exitCode).toBe(0);
    expect(existsSync(errorsOut)).toBe(false);
    expect(existsSync(`${errorsOut}.partial`)).toBe(false);
    expect(again.stderr).toContain(`amsg: every row was imported: nothing written to ${errorsOut}`);
  });

  test('re-importing the same file updates every member and adds none', async () => {
    const before = await json('members', 'list', '--count');
    const summary = await importOk(CLEAN);
    expect(summary).toMatchObject({
      num_members: 10,
      num_members_added: 0,
      num_members_updated: 10,
      num_duplicates: 0,
      num_skipped: 0,
      num_errors: 0,
      num_added_by_group: [],
      groups_updated: [],
    });
    expect(await json('members', 'list', '--count')).toBe(before);
    const r = await run('members', 'import', CLEAN, '--output', 'table');
    expect(r.stdout).toBe(`Import ${summary.import_id + 1} (status o): 10 rows, 0 added, 10 updated, 0 duplicates, 0 skipped, 0 errors.`);
  });

  test('the bad fixture: exit 4, every rejected line with its reason, --errors-out with the original columns', async () => {
    const errorsOut = join(box.dir, 'rejected.csv');
    const r = await run('members', 'import', BAD, '--errors-out', errorsOut);
    expect(r.exitCode).toBe(4);
    const summary = JSON.parse(r.stdout);
    expect(summary).toEqual(await json('members', 'imports', 'get', String(summary.import_id)));
    // Every data row of the file is counted, the ones the CLI refused (column count) too.
    expect(summary).toMatchObject({
      status: 'o',
      source_filename: 'members-bad.csv',
      num_members: 10,
      num_members_added: 3,
      num_members_updated: 0,
      num_duplicates: 1,
      num_skipped: 6,
      num_errors: 6,
      num_added_by_group: [{ member_group_id: 1, num_added: 2 }],
    });
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('amsg: line '));
    expect(lines).toEqual([
      'amsg: line 3: "not-an-email" is not a valid e-mail address',
      'amsg: line 4: email is missing',
      'amsg: line 5: birthday: must be a date YYYY-MM-DD for a date field, got "1990-02-30"',
      'amsg: line 6: score: must be a number for a numeric field, got "ten"',
      'amsg: line 7: has 3 columns; the header has 7',
      'amsg: line 8: has 8 columns; the header has 7',
      'amsg: line 9: duplicate of line 2, the row imported for this address',
    ]);
    expect(readFileSync(errorsOut, 'utf8')).toBe(
      [
        'email,first_name,last_name,city,birthday,score,group_name,line,error',
        'not-an-email,Bad,Email,Oslo,1990-01-01,10,Newsletter,3,"""not-an-email"" is not a valid e-mail address"',
        ',No,Email,Oslo,1990-01-01,10,Newsletter,4,email is missing',
        'bad.date@example.com,Bad,Date,Oslo,1990-02-30,10,Newsletter,5,"birthday: must be a date YYYY-MM-DD for a date field, got ""1990-02-30"""',
        'bad.score@example.com,Bad,Score,Oslo,1990-01-01,ten,Newsletter,6,"score: must be a number for a numeric field, got ""ten"""',
        // A ragged row keeps exactly its cells (so it re-imports as it was), then its reason.
        'too.few@example.com,Too,Few,7,has 3 columns; the header has 7',
        'too.many@example.com,Too,Many,Oslo,1990-01-01,10,Newsletter,extra,8,has 8 columns; the header has 7',
        // A duplicate is no error (the exit code is 4 for the rows above), but it was not imported either.
        'good.one@example.com,Good,Again,Bergen,1990-01-01,11,Newsletter,9,"duplicate of line 2, the row imported for this address"',
        '',
      ].join('\n'),
    );
    // The first of two rows for one address wins; a quoted newline stays in its value.
    expect((await member('good.one@example.com')).fields).toMatchObject({ last_name: 'One', city: 'Oslo', score: 10 });
    expect((await member('quoted.newline@example.com')).fields.last_name).toBe('Multi\nLine');
    expect((await member('good.two@example.com')).fields.city).toBe('Oslo, Norway');
    for (const email of ['bad.date@example.com', 'bad.score@example.com', 'too.few@example.com', 'too.many@example.com'])
      expect((await run('members', 'get', email)).exitCode).toBe(1);
  });

  test('the semicolon / BOM / CRLF fixture: values with umlauts and quotes come through exactly', async () => {
    const summary = await importOk(SEMICOLON);
    expect(summary).toMatchObject({ num_members: 3, num_members_added: 3, num_errors: 0 });
    expect((await member('semi.colon@example.de')).fields).toEqual({
      first_name: 'Semi',
      last_name: 'Colon',
      city: 'Köln; Altstadt',
      birthday: '1970-01-01',
      score: 1.5,
    });
    expect((await member('umlaut@example.de')).fields).toMatchObject({ first_name: 'Jürgen', last_name: 'Müller', city: 'München' });
    expect((await member('crlf.quoted@example.de')).fields).toMatchObject({ first_name: 'Quote "inside"', city: 'Berlin' });
    // No "\r" made its way into a group name: the rows joined the existing groups.
    expect((await json('groups', 'list')).map((g: any) => g.group_name)).toEqual(['Newsletter', 'Customers']);
  });

  test('--dry-run writes nothing, counts what would happen, and exits 4 on the bad fixture', async () => {
    const before = await state();
    const dry = await json('members', 'import', CLEAN, '--dry-run');
    const counts = (n: number, added: number, updated: number, dups: number, skipped: number, errors: number) => ({
      dry_run: true,
      num_members: n,
      num_members_added: added,
      num_members_updated: updated,
      num_duplicates: dups,
      num_skipped: skipped,
      num_errors: errors,
    });
    expect(dry).toEqual(counts(10, 0, 10, 0, 0, 0));
    const fresh = file('fresh.csv', 'email,first_name,group_name\nnew.one@example.com,New,Brand New Group\nnew.one@example.com,Again,\n');
    expect(await json('members', 'import', fresh, '--dry-run')).toEqual(counts(2, 1, 0, 1, 0, 0));
    const bad = await run('members', 'import', BAD, '--dry-run', '--errors-out', join(box.dir, 'dry-rejected.csv'));
    expect(bad.exitCode).toBe(4);
    expect(JSON.parse(bad.stdout)).toEqual(counts(10, 0, 3, 1, 6, 6));
    expect(bad.stderr).toContain('amsg: line 7: has 3 columns; the header has 7');
    // The header, six rejected rows, the duplicate, and the end of the last line.
    expect(readFileSync(join(box.dir, 'dry-rejected.csv'), 'utf8').split('\n')).toHaveLength(9);
    // A group the import would create is not created by a dry run.
    const group = await run('members', 'import', CLEAN, '--dry-run', '--group', 'Not Yet', '--group', 'Newsletter');
    expect(group.exitCode, group.stderr).toBe(0);
    expect(group.stderr).toContain('there is no group "Not Yet" yet: the import would create it');
    expect(JSON.parse(group.stdout)).toMatchObject({ num_members: 10, num_members_updated: 10 });
    expect(await state()).toEqual(before);
  });

  test('- reads stdin; --batch-size 3 still makes one import record; --source-name', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => `stdin${i}@example.com,Stdin${i},${i}`);
    const input = ['email,first_name,score', ...rows, 'stdin0@example.com,Dup,0'].join('\n') + '\n';
    const piped = await box.raw(['members', 'import', '-', '--batch-size', '3', '--source-name', 'pipe'], box.env, input);
    record(piped);
    expect(piped.exitCode, piped.stderr).toBe(0);
    const summary = JSON.parse(piped.stdout);
    expect(summary).toMatchObject({
      source_filename: 'stdin',
      source_name: 'pipe',
      num_members: 11,
      num_members_added: 10,
      num_duplicates: 1,
      status: 'o',
    });
    const imports = await json('members', 'imports', 'list');
    expect(imports.filter((i: any) => i.source_name === 'pipe')).toHaveLength(1);
    expect(imports.at(-1)).toEqual(summary);
    expect((await member('stdin9@example.com')).fields).toEqual({ first_name: 'Stdin9', score: 9 });
  });

  test('--add-only, --group (created when missing), --map, and imports members with its filters', async () => {
    const csv = file('add-only.csv', 'E-Mail,Town\nada.lovelace@example.com,Paris\nnew.member@example.com,Oslo\n');
    const r = await run(
      'members',
      'import',
      csv,
      '--add-only',
      '--group',
      'Imported',
      '--group',
      'Newsletter',
      '--map',
      'E-Mail=email',
      '--map',
      'town=city',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    const groups = await json('groups', 'list');
    const imported = groups.find((g: any) => g.group_name === 'Imported').member_group_id;
    expect(summary).toMatchObject({
      add_only: true,
      group_ids: [imported, 1],
      num_members: 2,
      num_members_added: 1,
      num_members_updated: 0,
      num_skipped: 1,
      num_errors: 0,
      num_added_by_group: [
        { member_group_id: 1, num_added: 1 },
        { member_group_id: imported, num_added: 1 },
      ],
    });
    expect((await member('ada.lovelace@example.com')).fields.city).toBe('London');
    const created = await member('new.member@example.com');
    expect(created.fields).toEqual({ city: 'Oslo' });
    const id = String(summary.import_id);
    const ada = (await member('ada.lovelace@example.com')).member_id;
    expect(await json('members', 'imports', 'members', id)).toEqual([
      { member_id: ada, change_type: 's', member_status_id: 'a', email: 'ada.lovelace@example.com' },
      { member_id: created.member_id, change_type: 'a', member_status_id: 'a', email: 'new.member@example.com' },
    ]);
    expect(await json('members', 'imports', 'members', id, '--added-only')).toEqual([
      { member_id: created.member_id, change_type: 'a', member_status_id: 'a', email: 'new.member@example.com' },
    ]);
    expect((await json('members', 'imports', 'members', id, '--added-to-groups')).map((m: any) => m.email)).toEqual([
      'new.member@example.com',
    ]);
    const list = await json('members', 'imports', 'list');
    expect(list.map((i: any) => i.import_id)).toEqual(list.map((_: unknown, n: number) => n + 1));
    const table = await run('members', 'imports', 'list', '--output', 'table');
    expect(table.stdout).toContain('add-only.csv');
  });

  test('bad files: a clear message, exit 2, nothing written (not even a --group)', async () => {
    const before = await state();
    const binary = Buffer.alloc(4096);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919) % 256;
    const dir = join(box.dir, 'a-directory');
    mkdirSync(dir, { recursive: true });
    const cases: [string, string | RegExp][] = [
      [file('empty.csv', ''), 'is empty: there is no header line'],
      [file('bom-only.csv', '\uFEFF\r\n'), 'is empty: there is no header line'],
      [file('binary.csv', binary), 'looks like a binary file, not a CSV file'],
      [
        file('no-email.csv', 'first_name,city\nAda,London\n'),
        'no email column in the header (first_name, city); name one with --map column=email',
      ],
      [file('dup-header.csv', 'email,city,City\na@example.com,x,y\n'), 'column "City" appears twice (columns 2 and 3)'],
      [
        file('unknown.csv', 'email,shoe_size\na@example.com,44\n'),
        'unknown column "shoe_size": map each to a field with --map column=field',
      ],
      // Broken in the first row: there is no complete row to import.
      [
        file('truncated.csv', 'email,city\r\nb@example.com,"Ber\nlin'),
        'truncated.csv, line 2: the quoted field that opens on this line is not closed by the end of the file (a missing quote, or a truncated file?)',
      ],
      [
        file('utf16-nul.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('email\n\0\0', 'utf16le')])),
        'looks like a binary file',
      ],
      [file('encoding.csv', 'email\na@example.com\n'), 'not an encoding amsg knows'],
      [dir, 'is a directory, not a CSV file'],
      [join(box.dir, 'missing.csv'), 'cannot read'],
    ];
    for (const [path, message] of cases) {
      const encoding = path.endsWith('encoding.csv') ? ['--encoding', 'klingon'] : [];
      const r = await run('members', 'import', path, '--group', 'Should Not Exist', ...encoding);
      expect(r.exitCode, `${path}: ${r.stderr}`).toBe(2);
      if (typeof message === 'string') expect(r.stderr, path).toContain(message);
      else expect(r.stderr, path).toMatch(message);
      expect(r.stdout, path).toBe('');
    }
    expect(await state()).toEqual(before);
  });

  test('a file that breaks half way: every row before the broken one is written, its line is named, and --resume continues once it is fixed', async () => {
    const good = Array.from({ length: 5 }, (_, i) => `half${i}@example.com,Half${i}`);
    const broken = file('half.csv', ['email,first_name', ...good, 'half5@example.com,"Unclosed'].join('\n'));
    const r = await run('members', 'import', broken, '--batch-size', '2');
    expect(r.exitCode).toBe(2);
    const record = JSON.parse(r.stdout);
    expect(record).toEqual(await json('members', 'imports', 'get', String(record.import_id)));
    // Rows 1-4 went in two batches; row 5, read into the next, goes in before the import ends.
    const message = `${broken}, line 7: the quoted field that opens on this line is not closed by the end of the file (a missing quote, or a truncated file?)`;
    expect(record).toMatchObject({
      status: 'e',
      num_members: 5,
      num_members_added: 5,
      error_message: `${message} (stopped after line 6)`,
    });
    expect(r.stderr).toContain(
      `import ${record.import_id} stopped after line 6, which is written with every row before it; continue with --resume ${record.import_id} once the problem is fixed`,
    );
    expect(r.stderr.split('\n')).toContain(`amsg: ${message}`);
    writeFileSync(broken, readFileSync(broken, 'utf8') + ' End"\n');
    const resumed = await run('members', 'import', broken, '--resume', String(record.import_id));
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resuming import ${record.import_id}: skipping the 5 rows it already has`);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'o', error_message: null, num_members: 6, num_members_added: 6 });
    expect((await member('half5@example.com')).fields.first_name).toBe('Unclosed End');
    // Invalid UTF-8 after the first chunk (which settled that the file is UTF-8) likewise: the
    // rows before its line are in, and --errors-out says why it holds nothing.
    const head = `email,first_name\n${Array.from({ length: 15_000 }, (_, i) => `utf${i}@example.com,A\n`).join('')}utfx@example.com,M`;
    const latin1 = file(
      'half-latin1.csv',
      Buffer.concat([Buffer.from(head), Buffer.from([0xfc]), Buffer.from('ller\nutfy@example.com,C\n')]),
    );
    const errorsOut = join(box.dir, 'half-latin1-errors.csv');
    const bad = await run('members', 'import', latin1, '--errors-out', errorsOut);
    expect(bad.exitCode).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      status: 'e',
      num_members: 15_000,
      error_message: `${latin1} is not valid UTF-8 (line 15002, byte ${head.length + 1}): save it as UTF-8 (in a spreadsheet, "CSV UTF-8") and try again, or name its encoding with --encoding (e.g. --encoding windows-1252) (stopped after line 15001)`,
    });
    expect(bad.stderr).toContain(`amsg: the import stopped before any row was refused: nothing written to ${errorsOut}`);
    expect(bad.stderr).not.toContain('every row was imported');
    expect(existsSync(errorsOut)).toBe(false);
    // Its encoding named, the same file imports whole.
    const named = await run('members', 'import', latin1, '--encoding', 'windows-1252');
    expect(named.exitCode, named.stderr).toBe(0);
    expect(named.stderr).toContain(`amsg: read ${latin1} as Windows-1252 (Latin-1) (--encoding)`);
    expect((await member('utfx@example.com')).fields.first_name).toBe('Müller');
  });

  test('files spreadsheets write: UTF-16 with a BOM (both byte orders) and Windows-1252 are read as such; a record over 1,000,000 characters and stray quotes are bad rows, and the rows after them go in', async () => {
    const body = (tag: string) => `email,first_name,city\r\n${tag}1@example.com,Zoë,München\r\n${tag}2@example.com,Åse,Tromsø\r\n`;
    const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();
    for (const [tag, bytes, read] of [
      ['le', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body('le'), 'utf16le')]), 'UTF-16LE (its byte order mark)'],
      ['be', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(body('be'))]), 'UTF-16BE (its byte order mark)'],
      ['cp', Buffer.from(body('cp'), 'latin1'), 'Windows-1252 (Latin-1) (it is not UTF-8)'],
    ] as const) {
      const path = file(`enc-${tag}.csv`, bytes);
      const r = await run('members', 'import', path);
      expect(r.exitCode, `${tag}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toContain(`amsg: read ${path} as ${read}`);
      expect(JSON.parse(r.stdout)).toMatchObject({ num_members: 2, num_members_added: 2, num_errors: 0 });
      expect((await member(`${tag}1@example.com`)).fields).toMatchObject({ first_name: 'Zoë', city: 'München' });
      expect((await member(`${tag}2@example.com`)).fields).toMatchObject({ first_name: 'Åse', city: 'Tromsø' });
    }

    // A record over the limit (an unclosed quote, say) and stray quotes: each a bad row with its line; every other row goes in.
    const huge = 'x'.repeat(1_200_000);
    const csv = file(
      'bad-rows.csv',
      [
        'email,first_name,last_name\n',
        'row1@example.com,Ann,Lee\n',
        `row2@example.com,"${huge}\nstill,inside\n",Long\n`,
        'row3@example.com,Bo,O"Brien\n',
        'row4@example.com,"Cy"x,Doe\n',
        'row5@example.com,"Di","O""Brien"\n',
        'row6@example.com,Ed,Fox\n',
      ].join(''),
    );
    const errorsOut = join(box.dir, 'bad-rows-errors.csv');
    const r = await run('members', 'import', csv, '--errors-out', errorsOut);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'o', num_members_added: 3, num_errors: 3 });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('amsg: line '))).toEqual([
      'amsg: line 3: is longer than 1,000,000 characters (1,200,038): not imported (a quote opened in it and not closed where it should be?)',
      'amsg: line 6: has a quote inside the unquoted value O"Brien: a value with a quote in it is written in quotes, the quote doubled ("O""Brien")',
      'amsg: line 7: has text after the closing quote of the quoted value "Cy"x: a value with a quote in it is written in quotes, the quote doubled ("O""Brien")',
    ]);
    const rejected = readFileSync(errorsOut, 'utf8').split('\n');
    expect(rejected[0]).toBe('email,first_name,last_name,line,error');
    expect(rejected[1].startsWith(`"row2@example.com,""${'x'.repeat(80)}`)).toBe(true);
    expect(rejected.slice(2)).toEqual([
      'row3@example.com,Bo,"O""Brien",6,"has a quote inside the unquoted value O""Brien: a value with a quote in it is written in quotes, the quote doubled (""O""""Brien"")"',
      'row4@example.com,"""Cy""x",Doe,7,"has text after the closing quote of the quoted value ""Cy""x: a value with a quote in it is written in quotes, the quote doubled (""O""""Brien"")"',
      '',
    ]);
    for (const email of ['row1@example.com', 'row5@example.com', 'row6@example.com'])
      expect((await run('members', 'get', email)).exitCode).toBe(0);
    expect((await member('row5@example.com')).fields.last_name).toBe('O"Brien');
    for (const email of ['row2@example.com', 'row3@example.com', 'row4@example.com'])
      expect((await run('members', 'get', email)).exitCode).toBe(1);
  });

  test('mixed line ends, a stray quote (a bad row), hexadecimal numbers and a duplicate: every good row in, every other row told by its line', async () => {
    // The issue's file: CRLF, then LF, then CRLF again.
    const issue = await importOk(
      file('issue-crlf-lf.csv', 'email,first_name\r\na1@example.com,A\r\na2@example.com,B\na3@example.com,C\na4@example.com,D\r\n'),
    );
    expect(issue).toMatchObject({ num_members: 4, num_members_added: 4, num_skipped: 0, num_errors: 0 });
    expect((await member('a4@example.com')).fields).toEqual({ first_name: 'D' });
    const csv = file(
      'hardening.csv',
      [
        'email,first_name,last_name,score\r\n',
        'mix1@example.com,Mix,One,1\r\n',
        'mix2@example.com,Mix,Two,2\n',
        'mix3@example.com,Mix,Three,3\r',
        'mix4@example.com,Mix,O"Brien,4\r\n',
        'mix5@example.com,Mix,Hex,0x10\n',
        'mix6@example.com,Mix,Bin,0b101\n',
        'MIX1@example.com,Mix,Again,9\n',
        'mix7@example.com,Mix,"Quoted\r\nName",7\r',
        'mix8@example.com,Mix,Last,8\n',
      ].join(''),
    );
    const errorsOut = join(box.dir, 'hardening-errors.csv');
    const r = await run('members', 'import', csv, '--errors-out', errorsOut);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'o',
      num_members: 9,
      num_members_added: 5,
      num_duplicates: 1,
      num_skipped: 3,
      num_errors: 3,
    });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('amsg: line '))).toEqual([
      'amsg: line 5: has a quote inside the unquoted value O"Brien: a value with a quote in it is written in quotes, the quote doubled ("O""Brien")',
      'amsg: line 6: score: must be a number for a numeric field, got "0x10"',
      'amsg: line 7: score: must be a number for a numeric field, got "0b101"',
      'amsg: line 8: duplicate of line 2, the row imported for this address',
    ]);
    expect(readFileSync(errorsOut, 'utf8')).toBe(
      [
        'email,first_name,last_name,score,line,error',
        'mix4@example.com,Mix,"O""Brien",4,5,"has a quote inside the unquoted value O""Brien: a value with a quote in it is written in quotes, the quote doubled (""O""""Brien"")"',
        'mix5@example.com,Mix,Hex,0x10,6,"score: must be a number for a numeric field, got ""0x10"""',
        'mix6@example.com,Mix,Bin,0b101,7,"score: must be a number for a numeric field, got ""0b101"""',
        'MIX1@example.com,Mix,Again,9,8,"duplicate of line 2, the row imported for this address"',
        '',
      ].join('\n'),
    );
    expect((await member('mix1@example.com')).fields).toEqual({ first_name: 'Mix', last_name: 'One', score: 1 });
    expect((await member('mix3@example.com')).fields).toEqual({ first_name: 'Mix', last_name: 'Three', score: 3 });
    expect((await member('mix7@example.com')).fields.last_name).toBe('Quoted\r\nName');
    expect((await member('mix8@example.com')).fields.score).toBe(8);
    for (const email of ['mix4@example.com', 'mix5@example.com', 'mix6@example.com'])
      expect((await run('members', 'get', email)).exitCode).toBe(1);
    // From the command line, a numeric field takes decimal notation only too.
    const hex = await run('members', 'add', 'hex@example.com', '--field', 'score=0x10');
    expect(hex.exitCode).toBe(1);
    expect(hex.stderr).toContain('fields.score: must be a number for a numeric field, got "0x10"');
    expect((await run('members', 'get', 'hex@example.com')).exitCode).toBe(1);
    expect((await json('members', 'add', 'dec@example.com', '--field', 'score=-1.5e1')).member_id).toBeGreaterThan(0);
    expect((await member('dec@example.com')).fields.score).toBe(-15);
  });

  test('bad flags: exit 2, nothing written', async () => {
    const before = await state();
    for (const [args, message] of [
      [['--errors-out', join(box.dir, 'no-such-dir', 'rejected.csv')], 'cannot write --errors-out'],
      [['--batch-size', '100001'], '--batch-size must be at most 100000'],
      [['--batch-size', '0'], '--batch-size must be a positive whole number'],
      [['--delimiter', 'x'], '--delimiter must be one of'],
      [['--map', 'nope'], '--map takes column=field'],
      [['--resume', '1', '--dry-run'], '--resume and --dry-run do not go together'],
      [['--map', 'missing=city'], '--map names column "missing", which is not in the header'],
    ] as [string[], string][]) {
      const r = await run('members', 'import', CLEAN, ...args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const twoCities = file('two-cities.csv', 'email,city,Town\na@example.com,Oslo,Bergen\n');
    const both = await run('members', 'import', twoCities, '--map', 'Town=city');
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('columns "city" and "Town" both map to city');
    // A finished import cannot be resumed.
    const done = await run('members', 'import', CLEAN, '--resume', '1');
    expect(done.exitCode).toBe(2);
    expect(done.stderr).toContain('import 1 is already finished');
    expect(await state()).toEqual(before);
  });

  test("POST /members (the spec's bulk call) is a job the service runs to o; it cannot be resumed by the CLI", async () => {
    const body = {
      members: [
        { email: 'job.one@example.com', city: 'Lima' },
        { email: 'ada.lovelace@example.com', score: 1 },
      ],
      source_filename: 'api.json',
    };
    const answer = await json('api', 'call', 'POST', '/1/members', '--data', JSON.stringify(body));
    const id = String(answer.import_id);
    expect(Object.keys(answer)).toEqual(['import_id']);
    // amsg serve runs jobs in the background, the local CLI after each call: wait for it (off the transcript).
    for (let i = 0; i < 50; i++) {
      if ((await box.json('members', 'imports', 'get', id)).status === 'o') break;
      await sleep(100);
    }
    expect(await json('members', 'imports', 'get', id)).toMatchObject({
      mode: 'job',
      status: 'o',
      source_filename: 'api.json',
      num_members: 2,
      num_members_added: 1,
      num_members_updated: 1,
      fields_updated: ['city', 'score'],
    });
    expect((await member('job.one@example.com')).fields).toEqual({ city: 'Lima' });
    const resume = await run('members', 'import', CLEAN, '--resume', id);
    expect(resume.exitCode).toBe(2);
    expect(resume.stderr).toContain(`import ${id} was not made by amsg members import; it cannot be resumed`);
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});

/**
 * Stopping an import half way, in local mode: Ctrl-C stops cleanly after the batch in
 * flight; SIGKILL stops anywhere. Either way what was written is whole batches from
 * the start of the file, and --resume finishes the import with every row once.
 */
describe('interrupted imports (local)', () => {
  const box = new Sandbox('local');
  const ROWS = 200_000;
  const BATCH = 2_000;
  /** A generated audience of ROWS members whose addresses start with `prefix`. */
  const audience = (prefix: string) => {
    const path = join(box.dir, `${prefix}.csv`);
    const lines = ['email,first_name,last_name,city,birthday,score,group_name'];
    for (let i = 0; i < ROWS; i++)
      lines.push(
        `${prefix}${i}@example.com,First${i},Last${i},City${i % 100},19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 9},${i % 1000},G${i % 5}`,
      );
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  };
  const spawnImport = (...args: string[]) =>
    execa('node', [BIN, 'members', 'import', ...args], {
      env: { ...process.env, ...box.baseEnv, ...box.env },
      reject: false,
      stdin: 'ignore',
    });
  const query = <T>(sql: string, ...params: unknown[]): T => {
    const db = new Database(box.db, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).get(...params) as T;
    } finally {
      db.close();
    }
  };
  /**
   * Waits until an import has committed at least `rows` rows. The signal goes then,
   * not after a fixed time, so the test still stops the import half way however
   * fast imports become.
   */
  const committed = async (importId: number, rows: number) => {
    const started = Date.now();
    for (;;) {
      const row = query<{ num_members: number } | undefined>('SELECT num_members FROM member_imports WHERE import_id = ?', importId);
      if (row && row.num_members >= rows) return;
      if (Date.now() - started > 15_000) throw new Error(`the import did not write ${rows} rows in 15 s`);
      await sleep(20);
    }
  };
  /**
   * The members from one file: how many, how many addresses, and the highest row
   * number among them (n distinct rows up to row n-1 are rows 0..n-1: a prefix).
   */
  const membersFrom = (prefix: string) =>
    query<{ n: number; distinct: number; last: number | null }>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT email) AS "distinct",
              MAX(CAST(substr(email, ?, instr(email, '@') - ?) AS INTEGER)) AS last
         FROM members WHERE email LIKE ?`,
      prefix.length + 1,
      prefix.length + 1,
      `${prefix}%`,
    );

  beforeAll(async () => {
    await box.start();
    for (const [name, type] of [
      ['city', 'text'],
      ['birthday', 'date'],
      ['score', 'numeric'],
    ])
      expect((await box.amsg('fields', 'create', name, '--type', type)).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  /** Resumes an import and checks that every row of the file is then there exactly once. */
  const resume = async (importId: number, path: string, prefix: string, skipped: number) => {
    const r = await box.amsg('members', 'import', path, '--resume', String(importId));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`resuming import ${importId}: skipping the ${skipped} rows it already has`);
    const done = JSON.parse(r.stdout);
    expect(done).toEqual(await box.json('members', 'imports', 'get', String(importId)));
    expect(done).toMatchObject({
      status: 'o',
      error_message: null,
      num_members: ROWS,
      num_members_added: ROWS,
      num_duplicates: 0,
      num_errors: 0,
    });
    expect(membersFrom(prefix)).toEqual({ n: ROWS, distinct: ROWS, last: ROWS - 1 });
    expect(query('SELECT COUNT(*) AS n FROM import_members WHERE import_id = ?', importId)).toEqual({ n: ROWS });
  };

  test('Ctrl-C: exit 130, a note saying how to resume, whole batches written, then --resume completes it', async () => {
    const path = audience('sigint');
    const child = spawnImport(path);
    await committed(1, 2 * BATCH);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(130);
    const summary = JSON.parse(r.stdout);
    expect(summary).toEqual(await box.json('members', 'imports', 'get', '1'));
    const n = summary.num_members;
    expect(summary.status).toBe('e');
    expect(n % BATCH).toBe(0);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(ROWS);
    expect(summary.error_message).toBe(`interrupted after line ${n + 1}; resume with --resume`);
    expect(summary.num_members_added).toBe(n);
    expect(r.stderr).toContain('stopping after the rows in flight');
    expect(r.stderr).toContain(`stopped after line ${n + 1}, which is written with every row before it; continue with --resume 1`);
    // A consistent prefix: exactly the first n rows of the file are members.
    expect(membersFrom('sigint')).toEqual({ n, distinct: n, last: n - 1 });
    await resume(1, path, 'sigint', n);
  }, 120_000);

  test('SIGKILL: the database opens, the import is in progress with whole batches, and --resume completes it', async () => {
    const path = audience('sigkill');
    const child = spawnImport(path);
    await committed(2, 2 * BATCH);
    child.kill('SIGKILL');
    const r = await child;
    expect(r.signal).toBe('SIGKILL');
    expect(query('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
    const record = await box.json('members', 'imports', 'get', '2');
    const n = record.num_members;
    expect(record).toMatchObject({ status: 'p', import_finished: null, num_members_added: n });
    expect(n % BATCH).toBe(0);
    expect(n).toBeLessThan(ROWS);
    expect(membersFrom('sigkill')).toEqual({ n, distinct: n, last: n - 1 });
    await resume(2, path, 'sigkill', n);
  }, 120_000);
});
