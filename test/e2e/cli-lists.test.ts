import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Lists are never cut silently: every list command takes --all (streamed page by
 * page), --limit, --start/--end where the service windows, and says on stderr when
 * the output stops at a page boundary while more remain. Both modes; the
 * transcripts (exit codes and stdout) must match.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const MEMBERS = 1203;

const csvOf = (n: number, from = 0) =>
  ['email,first_name', ...Array.from({ length: n }, (_, i) => `m${from + i}@example.com,N${from + i}`)].join('\n') + '\n';

describe.each<Mode>(['local', 'remote'])('list commands (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run } = recorder(box, transcripts[mode]);

  beforeAll(async () => {
    await box.start();
    const file = join(box.dir, 'audience.csv');
    writeFileSync(file, csvOf(MEMBERS));
    const r = await box.amsg('members', 'import', file, '--group', 'Gold');
    expect(r.exitCode, r.stderr).toBe(0);
  }, 60_000);
  afterAll(() => box.stop());

  test('one window by default, with a note naming how many there are in all', async () => {
    const r = await run('members', 'list', '--json');
    expect(r.exitCode).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows.map((m: any) => m.member_id)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(r.stderr).toContain('amsg: 500 of 1,203 shown; --all for every row, --start 500 for the rows after these');

    // The help's own example: a group's members as CSV, cut at 500 -- and said so.
    const csv = await run('groups', 'members', 'Gold', '--output', 'csv');
    expect(csv.exitCode).toBe(0);
    expect(csv.stdout.trim().split('\n')).toHaveLength(501);
    expect(csv.stderr).toContain('500 of 1,203 shown; --all for every row');
  });

  test('--all streams every row once, in every format', async () => {
    const ids = Array.from({ length: MEMBERS }, (_, i) => i + 1);
    const csv = await run('groups', 'members', 'Gold', '--all', '--output', 'csv');
    expect(csv.exitCode).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'member_id,account_id,email,status,member_status_id,confirmed_opt_in,fields.first_name,sms,last_modified_at,member_since,deleted_at,plaintext_preferred,email_error,bounce_count',
    );
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(ids);
    expect(csv.stderr).not.toContain('shown');

    const nd = await run('members', 'list', '--all', '--output', 'ndjson');
    expect(
      nd.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).member_id),
    ).toEqual(ids);
    const json = await run('members', 'list', '--all', '--json');
    const whole = JSON.parse(json.stdout);
    expect(whole.map((m: any) => m.member_id)).toEqual(ids);
    // Streamed JSON is byte for byte what printing the whole array prints.
    expect(json.stdout).toBe(JSON.stringify(whole, null, 2));
  });

  test('--limit and --start pick a part, across page boundaries', async () => {
    const r = await run('members', 'list', '--limit', '700', '--output', 'ndjson');
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).member_id);
    expect(ids).toEqual(Array.from({ length: 700 }, (_, i) => i + 1));
    expect(r.stderr).toContain('700 of 1,203 shown; --all for every row, --start 700 for the rows after these');
    const tail = await run('members', 'list', '--start', '1200', '--json');
    expect(JSON.parse(tail.stdout).map((m: any) => m.member_id)).toEqual([1201, 1202, 1203]);
    expect(tail.stderr).not.toContain('shown');
    const upTo = await run('members', 'list', '--start', '1000', '--all', '--output', 'ndjson');
    expect(upTo.stdout.trim().split('\n')).toHaveLength(203);
    // A list the service answers whole is cut by the CLI, with the same note.
    const fields = await run('fields', 'list', '--limit', '1', '--json');
    expect(JSON.parse(fields.stdout).map((f: any) => f.shortcut_name)).toEqual(['first_name']);
    expect(fields.stderr).toContain('1 of 2 shown; --all for every row');
    // Small lists of the account's own things come whole, as before.
    const groups = await run('groups', 'list', '--json');
    expect(JSON.parse(groups.stdout).map((g: any) => g.group_name)).toEqual(['Gold']);
  });

  test('a window longer than 500 asked with `api call` is answered with its first 500, and stderr says it was cut', async () => {
    const r = await run('api', 'call', 'GET', '/1/members', '--query', 'start=100', '--query', 'end=1000000', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).map((m: any) => m.member_id)).toEqual(Array.from({ length: 500 }, (_, i) => i + 101));
    expect(r.stderr).toContain(
      "amsg: the service answers at most 500 records at a time: records 100 to 600 of the 100 to 1000000 asked for; ask for the next window from start=600 (a list command's --all pages through)",
    );
    // A list command asks a page at a time, so --end past 500 is never cut: every row comes.
    const listed = await run('members', 'list', '--start', '100', '--end', '1100', '--json');
    expect(JSON.parse(listed.stdout)).toHaveLength(1000);
    expect(listed.stderr).not.toContain('at most 500');
  });

  test('a bad list flag is a usage error before any request', async () => {
    for (const args of [
      ['members', 'list', '--start', 'abc'],
      ['members', 'list', '--limit', '0'],
      ['groups', 'members', 'Gold', '--end', '-3'],
      ['members', 'list', '--all', '--limit', '5'],
      ['searches', 'list', '--count', '--all'],
    ]) {
      const r = await run(...args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).not.toContain('acting on');
      expect(r.stdout).toBe('');
    }
    const r = await box.amsg('members', 'list', '--start', 'abc');
    expect(r.stderr).toContain(`option '--start <n>' argument 'abc' is invalid. expected a whole number, got "abc".`);
  });
});

test('the two modes print the same lists', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});

/** Peak resident memory of a child process, sampled from /proc while it runs. */
async function peakRss(args: string[], env: Record<string, string>, onLine: (line: string) => void) {
  const child = execa('node', [BIN, ...args], { env, reject: false, stdin: 'ignore', buffer: false });
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch {
      // The child has exited.
    }
  }, 10);
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString();
    const lines = text.split('\n');
    rest = lines.pop()!;
    lines.forEach(onLine);
  });
  const r = await child;
  clearInterval(timer);
  return { peak, exitCode: r.exitCode };
}

describe.runIf(process.platform === 'linux')('--all over 20,000 members in remote mode', () => {
  const box = new Sandbox('remote');
  const N = 20_000;
  beforeAll(async () => {
    await box.start();
    const file = join(box.dir, 'big.csv');
    writeFileSync(file, csvOf(N));
    const r = await box.amsg('members', 'import', file);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 120_000);
  afterAll(() => box.stop());

  test('emits every row once and keeps memory flat', async () => {
    const env = { ...process.env, ...box.baseEnv, ...box.env } as Record<string, string>;
    const seen = new Set<number>();
    let lines = 0;
    const all = await peakRss(['members', 'list', '--all', '--output', 'ndjson'], env, (l) => {
      lines++;
      seen.add(JSON.parse(l).member_id);
    });
    expect(all.exitCode).toBe(0);
    expect(lines).toBe(N);
    expect(seen.size).toBe(N);
    const one = await peakRss(['members', 'list', '--limit', '500', '--output', 'ndjson'], env, () => {});
    // 20,000 members as parsed objects and JSON text are well over 20 MB; one page at a time is not.
    console.log(`peak RSS: --all over ${N} ${(all.peak / 2 ** 20).toFixed(1)} MB, one page ${(one.peak / 2 ** 20).toFixed(1)} MB`);
    expect(all.peak - one.peak).toBeLessThan(20 * 2 ** 20);
  }, 120_000);
});
