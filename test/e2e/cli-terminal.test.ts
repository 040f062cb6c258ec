import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Terminal output for people: tables fit the terminal, show readable dates and
 * status words (JSON keeps the wire format), NO_COLOR is honoured, and the import
 * view keeps its notes, draws nothing before a refusal and ends with one summary line.
 */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Runs amsg on a pseudo-terminal `cols` wide; `interrupt` sends Ctrl-C once the text shows. */
async function onTerminal(box: Sandbox, args: string[], opts: { cols?: number; env?: Record<string, string>; interruptAt?: string } = {}) {
  const quoted = args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const child = execa('script', ['-qec', `stty cols ${opts.cols ?? 100} rows 40; node ${BIN} ${quoted}`, '/dev/null'], {
    env: { ...process.env, ...box.baseEnv, ...box.env, TERM: 'xterm-256color', FORCE_COLOR: '', ...opts.env },
    reject: false,
    stdin: 'pipe',
  });
  let seen = '';
  let sent = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
    if (opts.interruptAt && !sent && seen.replace(ANSI, '').includes(opts.interruptAt)) {
      sent = true;
      child.stdin!.write('\x03');
    }
  });
  const r = await child;
  child.stdin!.end();
  const raw = String(r.stdout);
  return { exitCode: r.exitCode, raw, screen: raw.replace(ANSI, '').replace(/\r/g, '') };
}

const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('tables for people (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  beforeAll(async () => {
    await box.start();
    expect((await box.amsg('members', 'add', 'ada@example.com', '--group', 'Gold')).exitCode).toBe(0);
    expect((await box.amsg('members', 'add', 'bo@example.com', '--group', 'Gold')).exitCode).toBe(0);
    expect((await box.amsg('members', 'status', 'bo@example.com', '--to', 'o', '--yes')).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('tables show local readable dates and status words; JSON keeps the wire format', async () => {
    const table = await run('members', 'get', 'bo@example.com', '-o', 'table');
    expect(table.stdout).toMatch(/│ status\s+│ opted out\s+│/);
    expect(table.stdout).toMatch(/│ member_status_id\s+│ opted out\s+│/);
    expect(table.stdout).toMatch(/│ member_since\s+│ 2026-05-06 07:08\s+│/);
    expect(table.stdout).not.toContain('@D:');
    const list = await run('members', 'list', '-o', 'table');
    expect(list.stdout).toMatch(/│ 2\s+│ bo@example\.com\s+│ opted out\s+│/);
    const wire = await json('members', 'get', 'bo@example.com');
    expect([wire.status, wire.member_status_id, wire.member_since]).toEqual(['opt-out', 'o', '@D:2026-05-06T07:08:09']);
  });

  test('on a narrow terminal a table drops its empty columns, leaves its last columns out and says which; piped, it keeps them all', async () => {
    const narrow = await onTerminal(box, ['members', 'list', '-o', 'table'], { cols: 40 });
    expect(narrow.exitCode).toBe(0);
    expect(narrow.screen).toContain(
      "amsg: left out 2 columns to fit the terminal's 40 characters: member_since, last_modified_at; --output json (or csv) shows every column, --columns chooses them",
    );
    const drawn = narrow.screen.split('\n').filter((l) => l.startsWith('│') || l.startsWith('┌'));
    expect(drawn[1]).toMatch(/^│ ID │ Email\s+│ Status\s+│$/);
    expect(Math.max(...drawn.map((l) => l.length))).toBeLessThanOrEqual(40);
    const piped = await run('members', 'list', '-o', 'table');
    expect(piped.stdout.split('\n')[1]).toMatch(/^│ ID │ Email\s+│ Status\s+│ Fields\s+│ Member since\s+│ Modified\s+│ Deleted\s+│$/);
    expect(piped.stderr).not.toContain('left out');
  });
});

describe.each<Mode>(['local', 'remote'])('csv (%s)', (mode) => {
  const box = new Sandbox(mode);
  beforeAll(async () => {
    await box.start();
    expect((await box.amsg('members', 'add', 'plain@example.com')).exitCode).toBe(0);
    expect((await box.amsg('members', 'add', 'phone@example.com', '--phone', '+4791234567', '--sms-promotional', 'a')).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('CSV flattens an object into its children, without an empty parent column beside them', async () => {
    const r = await box.amsg('members', 'list', '--output', 'csv');
    const [header, plain, phone] = r.stdout.split('\n');
    const columns = header.split(',');
    expect(columns).not.toContain('sms');
    expect(columns).toEqual(expect.arrayContaining(['sms.phone_number', 'sms.promotional_status']));
    expect(plain.split(',')[columns.indexOf('sms.phone_number')]).toBe('');
    expect(phone.split(',')[columns.indexOf('sms.phone_number')]).toBe('+4791234567');
  });
});

test('the two modes draw the same tables', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});

describe('on a terminal', () => {
  const box = new Sandbox('local');
  beforeAll(async () => {
    await box.start();
    const long = 'x'.repeat(150);
    expect((await box.amsg('members', 'add', 'long@example.com', '--field', `first_name=${long}`)).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('a table fits the terminal, long cells cut with …; piped, nothing is cut', async () => {
    const r = await onTerminal(box, ['members', 'list', '-o', 'table', '-q'], { cols: 80 });
    expect(r.exitCode).toBe(0);
    const lines = r.screen.split('\n').filter((l) => l.includes('│'));
    expect(lines.length).toBe(2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(r.screen).toContain('…');
    const piped = await box.amsg('members', 'list', '-o', 'table');
    expect(piped.stdout).toContain('x'.repeat(150));
  });

  test('NO_COLOR turns colour off in the import view, as --no-color does', async () => {
    const csv = join(box.dir, 'one-bad.csv');
    writeFileSync(csv, 'email\ngood@example.com\nnot-an-address\n');
    const coloured = await onTerminal(box, ['members', 'import', csv, '-o', 'table']);
    expect(coloured.exitCode).toBe(4);
    expect(coloured.raw).toContain('\x1b[33m');
    for (const env of [{ NO_COLOR: '1' }, { AMSG_NO_COLOR: '1' }]) {
      const plain = await onTerminal(box, ['members', 'import', csv, '-o', 'table'], { env });
      expect(plain.exitCode).toBe(4);
      expect(plain.screen).toContain('1 rejected');
      expect(plain.raw).not.toContain('\x1b[33m');
    }
    const flag = await onTerminal(box, ['--no-color', 'members', 'import', csv, '-o', 'table']);
    expect(flag.raw).not.toContain('\x1b[33m');
  });

  test('the import view draws nothing before a refusal, keeps its notes on Ctrl-C, and ends with one summary line', async () => {
    const refused = await onTerminal(box, ['members', 'import', join(box.dir, 'one-bad.csv'), '--resume', '999']);
    expect(refused.exitCode).toBe(1);
    expect(refused.screen).toContain('import 999 not found');
    expect(refused.screen).not.toContain('Importing');
    expect(refused.screen).not.toContain('rows read');

    const big = join(box.dir, 'big.csv');
    writeFileSync(big, ['email', ...Array.from({ length: 300_000 }, (_, i) => `big${i}@example.com`)].join('\n') + '\n');
    const stopped = await onTerminal(box, ['members', 'import', big, '--batch-size', '200', '-o', 'table'], { interruptAt: 'rows read' });
    if (stopped.exitCode !== 130) console.log(stopped.screen.slice(-1500));
    expect(stopped.exitCode).toBe(130);
    // The note said at Ctrl-C is still on the screen after the view's last redraw.
    expect(stopped.screen).toContain('amsg: stopping after the rows in flight (Ctrl-C again to quit at once)');
    const id = /continue with --resume (\d+)/.exec(stopped.screen)?.[1];
    expect(id).toBeDefined();
    const summaries = stopped.screen.split('\n').filter((l) => new RegExp(`^Import ${id} \\(status e\\): [\\d,]+ rows`).test(l));
    expect(summaries).toHaveLength(1);

    // Piped, the answer is JSON on stdout, and people still get one summary line on stderr.
    const piped = await box.amsg('members', 'import', join(box.dir, 'one-bad.csv'));
    const lines = piped.stderr.split('\n').filter((l) => l.startsWith('amsg: Import '));
    expect(lines).toEqual([`amsg: Import ${Number(id) + 1} (status o): 2 rows, 0 added, 1 updated, 0 duplicates, 1 skipped, 1 errors.`]);
  }, 120_000);
});

/**
 * What support staff met on an 80-column terminal (issue 35): tables that must shed
 * width keep the columns that identify a row whole, drop empty columns first, cut
 * long free text first, and head their columns in words a person reads.
 */
describe('support staff on an 80-column terminal', () => {
  const box = new Sandbox('local');
  const table = (screen: string) => screen.split('\n').filter((l) => /^[│┌└]/.test(l));
  beforeAll(async () => {
    await box.start();
    for (let n = 1; n <= 3; n++)
      expect(
        (
          await box.amsg(
            'members',
            'add',
            `aisha.857${n}@example-longdomain.com`,
            '--field',
            'first_name=Aisha',
            '--field',
            `last_name=Khan-Rahman ${n}`,
            '--group',
            'Gold',
          )
        ).exitCode,
      ).toBe(0);
    const html = join(box.dir, 'spring.html');
    writeFileSync(html, '<p>Hi <a href="https://shop.example.com/spring">Spring</a> [% optout_url %]</p>');
    const created = await box.amsg(
      ...[
        'mailings',
        'create',
        '--name',
        'Spring sale 2026 for loyal customers',
        '--subject',
        'Our spring sale starts now, with twenty percent off',
      ],
      ...['--sender', 'shop@example.com', '--html', html, '--group', 'Gold'],
    );
    expect(created.exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('members find: every address whole, the empty deleted_at column dropped, fields cut first', async () => {
    const r = await onTerminal(box, ['members', 'find', 'aisha.857', '-q'], { cols: 80 });
    expect(r.exitCode).toBe(0);
    const drawn = table(r.screen);
    for (const line of drawn) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(drawn[1]).toMatch(/^│ ID │ Email\s+│ Status │ Fields\s+│$/);
    for (let n = 1; n <= 3; n++) expect(r.screen).toContain(`│ ${n}  │ aisha.857${n}@example-longdomain.com │ active │ first_name=Aisha;`);
    expect(r.screen).not.toContain('Deleted');
  });

  test('members mailings: the mailing id, name and subject say which mailing a row is', async () => {
    const r = await onTerminal(box, ['members', 'mailings', 'aisha.8571@example-longdomain.com', '-q'], { cols: 80 });
    expect(r.exitCode).toBe(0);
    const drawn = table(r.screen);
    for (const line of drawn) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(drawn[1]).toMatch(/^│ Mailing │ Name\s+│ Subject\s+│ Sent\s+│/);
    expect(drawn[2]).toMatch(/^│ 1\s+│ Spring sale 2026 for loyal customers │ Our spr\S*… │ 2026-05-06 07:08 │/);
  });

  test('mailings list: headers a person tells apart (JSON keeps the wire names)', async () => {
    const r = await onTerminal(box, ['mailings', 'list', '-q'], { cols: 80 });
    expect(r.exitCode).toBe(0);
    const drawn = table(r.screen);
    expect(drawn[1]).toMatch(/^│ ID │ Name\s+│ Status\s+│ Type │ Subject\s+│/);
    expect(drawn[2]).toContain('│ Spring sale 2026 for loyal customers │ complete │');
    const [wire] = JSON.parse((await box.amsg('mailings', 'list')).stdout);
    expect(Object.keys(wire)).toEqual(expect.arrayContaining(['mailing_id', 'mailing_type', 'mailing_status']));
  });

  test('members get: fields show one a line and long values wrap, never cut', async () => {
    const long = `a note that runs on and on ${'and on '.repeat(20)}to its very end`;
    expect((await box.amsg('members', 'update', 'aisha.8572@example-longdomain.com', '--field', `last_name=${long}`)).exitCode).toBe(0);
    const r = await onTerminal(box, ['members', 'get', 'aisha.8572@example-longdomain.com', '-q'], { cols: 80 });
    expect(r.exitCode).toBe(0);
    for (const line of table(r.screen)) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(r.screen).toMatch(/│ fields\s+│ first_name=Aisha\s+│\n│\s+│ last_name=a note that runs on/);
    expect(r.screen).toContain('to its very end');
    expect(r.screen).not.toContain('…');
  });

  test('--columns chooses the columns (wire names, dotted for a field); an unknown one is a usage error naming the columns', async () => {
    const r = await onTerminal(box, ['members', 'find', 'aisha.857', '--columns', 'email,fields.last_name', '-q'], { cols: 80 });
    expect(table(r.screen)[1]).toMatch(/^│ Email\s+│ Fields last name\s+│$/);
    expect(r.screen).toContain('│ aisha.8573@example-longdomain.com │ Khan-Rahman 3');
    const csv = await box.amsg('members', 'find', 'aisha.857', '--columns', 'member_id,email', '-o', 'csv');
    expect(csv.stdout.split('\n').slice(0, 2)).toEqual(['member_id,email', '1,aisha.8571@example-longdomain.com']);
    const bad = await box.amsg('members', 'find', 'aisha.857', '--columns', 'email,nope', '-o', 'table');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('amsg: --columns: no column "nope" here; the columns are member_id, ');
  });
});
