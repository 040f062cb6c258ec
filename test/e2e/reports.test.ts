import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg reports`, end to end: run in local mode and against a spawned `amsg serve`;
 * the two transcripts (exit code and stdout of every run) must be identical. The
 * live `--watch` view is drawn on a pseudo-terminal (util-linux `script`) in both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const AT_NOW = `@D:${NOW.slice(0, 19)}`;

describe.each<Mode>(['local', 'remote'])('amsg reports (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { record, run, json } = recorder(box, log);

  beforeAll(async () => {
    await box.start();
    const html = join(box.dir, 'spring.html');
    writeFileSync(
      html,
      '<p>Hi [% member:first_name %]</p><a href="https://shop.example.com/sale">Sale</a> <a href="https://shop.example.com/new">New</a> <a href="[% optout_url %]">out</a>',
    );
    for (const args of [
      ['members', 'add', 'ann@example.com', '--field', 'first_name=Ann', '--group', 'Gold'],
      ['members', 'add', 'bob@example.com', '--field', 'first_name=Bob', '--group', 'Gold'],
      ['members', 'add', 'cy@example.org', '--group', 'Gold'],
      ['members', 'add', 'di@example.com', '--field', 'last_name=Lee', '--group', 'Gold'],
      [
        'mailings',
        'create',
        '--name',
        'Spring',
        '--subject',
        'Hi',
        '--sender',
        'shop@example.com',
        '--html',
        html,
        '--group',
        'Gold',
        '--wait',
      ],
      [
        'mailings',
        'create',
        '--name',
        'Summer',
        '--subject',
        'Hey',
        '--sender',
        'shop@example.com',
        '--html',
        html,
        '--group',
        'Gold',
        '--wait',
      ],
      ['sim', 'open', '1', 'ann@example.com'],
      ['sim', 'click', '1', 'bob@example.com', '--link', '2'],
      ['sim', 'click', '1', 'bob@example.com', '--link', '2'],
      ['sim', 'click', '1', 'ann@example.com'],
      ['sim', 'bounce', '1', 'cy@example.org', '--hard'],
      ['sim', 'optout', '1', 'di@example.com'],
      ['sim', 'forward', '1', 'ann@example.com', '--to', 'friend@example.com'],
      ['sim', 'open', '2', 'bob@example.com'],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 90_000);
  afterAll(() => box.stop());

  test('mailing and account: the counts as the service answers them, and a table with rates', async () => {
    expect(await json('reports', 'mailing', '1')).toEqual({
      name: 'Spring',
      subject: 'Hi',
      recipient_count: 4,
      sent: 4,
      delivered: 3,
      bounced: 1,
      opened: 2,
      clicked_unique: 2,
      clicked: 3,
      forwarded: 1,
      opted_out: 1,
      signed_up: 0,
      shared: 0,
      share_clicked: 0,
      webview_shared: 0,
      webview_share_clicked: 0,
      in_progress: 0,
    });
    const table = await run('reports', 'mailing', '1', '-o', 'table');
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/│ delivered_rate\s+│ 75\.0%\s+│/);
    expect(table.stdout).toMatch(/│ open_rate\s+│ 66\.7%\s+│/);
    expect(table.stdout).toMatch(/│ clicks_per_open\s+│ 1\.50\s+│/);
    // The forward mailing is left out of the series.
    const series = await json('reports', 'account');
    expect(series).toEqual([
      expect.objectContaining({ account_id: 1, month: 5, year: 2026, mailings: 2, sent: 8, opened: 3, clicked: 3, forwarded: 1 }),
    ]);
    expect(await json('reports', 'account', '--range', '2026-06-01~')).toEqual([]);
    const bad = await run('reports', 'account', '--range', 'May');
    expect(bad.exitCode).toBe(1);
    const missing = await run('reports', 'mailing', '99');
    expect(missing.exitCode).toBe(1);
    expect((await box.amsg('reports', 'mailing', '99')).stderr).toContain('mailing 99 not found');
    expect((await run('reports', 'mailing', 'spring')).exitCode).toBe(2);
  });

  test('the lists, windows and --all, and --count agrees with the figures', async () => {
    const opens = await json('reports', 'opens', '1');
    expect(opens).toEqual([
      {
        member_id: 1,
        email: 'ann@example.com',
        email_user: 'ann',
        email_domain: 'example.com',
        timestamp: AT_NOW,
        member_since: AT_NOW,
        member_status_id: 'a',
        fields: { first_name: 'Ann' },
      },
      expect.objectContaining({ member_id: 2, email: 'bob@example.com' }),
    ]);
    expect(await json('reports', 'opens', '1', '--count')).toBe(2);
    expect((await json('reports', 'sends', '1', '--start', '1', '--end', '3')).map((m: any) => m.member_id)).toEqual([2, 3]);
    expect((await json('reports', 'sends', '1', '--all')).map((m: any) => m.member_id)).toEqual([1, 2, 3, 4]);
    const firstSend = await run('reports', 'sends', '1', '--limit', '1', '--json');
    expect(JSON.parse(firstSend.stdout).map((m: any) => m.member_id)).toEqual([1]);
    expect(firstSend.stderr).toContain('1 of 4 shown; --all for every row, --start 1 for the rows after these');
    expect((await json('reports', 'clicks', '1')).map((c: any) => [c.member_id, c.link_id])).toEqual([
      [2, 2],
      [2, 2],
      [1, 1],
    ]);
    expect(await json('reports', 'clicks', '1', '--link', '2', '--count')).toBe(2);
    expect((await json('reports', 'clicks', '1', '--member', '1')).map((c: any) => c.link_id)).toEqual([1]);
    expect((await json('reports', 'bounces', '1')).map((b: any) => [b.email, b.delivery_type, b.mailing_name])).toEqual([
      ['cy@example.org', 'hard', 'Spring'],
    ]);
    expect(await json('reports', 'bounces', '1', '--soft')).toEqual([]);
    expect((await json('reports', 'optouts', '1')).map((m: any) => [m.email, m.member_status_id])).toEqual([['di@example.com', 'o']]);
    expect(await json('reports', 'forwards', '1')).toEqual([
      { timestamp: AT_NOW, forward_mailing_id: 3, member_id: 1, email: 'ann@example.com' },
    ]);
    expect((await json('reports', 'links', '1')).map((l: any) => [l.link_id, l.unique_clicks, l.total_clicks])).toEqual([
      [1, 1, 1],
      [2, 1, 2],
    ]);
    const links = await run('reports', 'links', '1', '-o', 'table');
    expect(links.stdout).toContain('https://shop.example.com/new');
    expect((await run('reports', 'opens', '1', '--all', '--count')).exitCode).toBe(2);
    expect((await run('reports', 'bounces', '1', '--hard', '--soft')).exitCode).toBe(2);
  });

  test('compare: side by side in a table, the answers in JSON', async () => {
    const both = await json('reports', 'compare', '1', '2');
    expect(both.map((r: any) => [r.mailing_id, r.name, r.opened])).toEqual([
      [1, 'Spring', 2],
      [2, 'Summer', 1],
    ]);
    const table = await run('reports', 'compare', '1', '2', '-o', 'table');
    expect(table.stdout).toMatch(/│ Figure\s+│ 1 Spring\s+│ 2 Summer\s+│/);
    expect(table.stdout).toMatch(/│ opened\s+│ 2\s+│ 1\s+│/);
    expect((await run('reports', 'compare', '1')).exitCode).toBe(2);
  });

  test('the openers as CSV pipe into an import that makes a group of them', async () => {
    const csv = await run('reports', 'opens', '1', '--output', 'csv');
    expect(csv.stdout).toBe('email,first_name\nann@example.com,Ann\nbob@example.com,Bob');
    const imported = await box.raw(['members', 'import', '-', '--group', 'Engaged'], box.env, csv.stdout);
    record(imported);
    expect(imported.exitCode, imported.stderr).toBe(0);
    // As written in docs/guide/reports.md and the README, through a shell pipe.
    const piped = await execa('sh', ['-c', `node ${BIN} reports opens 2 --output csv | node ${BIN} members import - --group "Engaged"`], {
      env: { ...process.env, ...box.baseEnv, ...box.env },
      reject: false,
    });
    expect(piped.exitCode, piped.stderr).toBe(0);
    const engaged = await json('groups', 'members', 'Engaged');
    expect(engaged.map((m: any) => m.email)).toEqual(['ann@example.com', 'bob@example.com']);
    expect(engaged[0].fields).toMatchObject({ first_name: 'Ann' });
    // Columns the importer does not know would have stopped it: the sends of a member with another field too.
    const sends = await run('reports', 'sends', '1', '--output', 'csv');
    expect(sends.stdout.split('\n')[0]).toBe('email,first_name,last_name');
  });

  test('--watch draws on a terminal, redraws as engagement arrives, and ends cleanly on Ctrl-C', async () => {
    // The shell outlives the Ctrl-C (the terminal signals its whole foreground group) to print the exit code.
    const command = `stty cols 120 rows 30; trap : INT; node ${BIN} reports mailing 2 --watch; echo "exit=$?"`;
    const view = execa('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...box.baseEnv, ...box.env },
      reject: false,
      stdin: 'pipe',
    });
    let seen = '';
    view.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    const shows = async (text: string) => {
      for (let i = 0; i < 200 && !seen.includes(text); i++) await new Promise((r) => setTimeout(r, 50));
      expect(seen).toContain(text);
    };
    await shows('Ctrl-C to stop');
    expect((await box.amsg('sim', 'open', '2', 'ann@example.com')).exitCode).toBe(0);
    await shows('2 of 4 (50.0%)');
    // Ctrl-C, typed on the terminal.
    view.stdin!.write('\x03');
    const r = await view;
    // eslint-disable-next-line no-control-regex
    const screen = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(screen).toContain('Mailing 2 "Summer"  status c');
    expect(screen).toMatch(/sent\s+\[█{30}\] 4 of 4 \(100\.0%\)/);
    expect(screen).toMatch(/opened\s+\[[█░]{30}\] 1 of 4 \(25\.0%\)/);
    expect(screen).toMatch(/opened\s+\[[█░]{30}\] 2 of 4 \(50\.0%\)/);
    expect(screen).toContain('Top links');
    expect(screen).toContain('exit=0');
    // Off a terminal there is nothing to draw on.
    expect((await run('reports', 'mailing', '2', '--watch')).exitCode).toBe(2);
  }, 20_000);
});

test('local and remote transcripts are identical', () => {
  expect(transcripts.local.length).toBeGreaterThan(20);
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
