import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox } from './harness.js';

/**
 * Remote mode against a rate limit like the real service's (403 Rate Limit Exceeded
 * past so many calls a window, with Retry-After): long commands wait it out, pace
 * themselves to it, and finish complete with nothing twice; one that may not wait
 * (AMSG_MAX_WAIT) stops with exit 5 and says how to continue, and continuing
 * finishes the job. Remote only: local mode has no rate limit. The window is a
 * second here (the real one is a minute) so the tests stay short.
 */
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;
const waits = (stderr: string) => stderr.split('\n').filter((l) => /^amsg: rate limited: waiting \d+ s$/.test(l)).length;

function csv(file: string, from: number, count: number) {
  const lines = ['email,first_name'];
  for (let i = from; i < from + count; i++) lines.push(`import${i}@example.com,Name${i}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
}

describe('a rate limit of 50 calls a second', () => {
  const box = new Sandbox('remote', ['--rate-limit', '50', '--rate-limit-window', '1']);
  beforeAll(async () => {
    await box.start();
  }, 30_000);
  afterAll(() => box.stop());

  test('seeding 50,000 members and listing them all: complete, each once, paced', async () => {
    const fixture = join(box.dir, 'big.yaml');
    writeFileSync(fixture, 'members:\n  - generate: {count: 50000, seed: 7, email: "user{n}@example.test"}\n');
    const seeded = await box.amsg('seed', fixture);
    expect(seeded.exitCode, seeded.stderr).toBe(0);
    expect(seeded.stderr).toContain('members: 50000 created');

    const started = Date.now();
    const list = await box.amsg('members', 'list', '--all', '-o', 'ndjson');
    expect(list.exitCode, list.stderr).toBe(0);
    const ids = list.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).member_id as number);
    expect(ids).toHaveLength(50_000);
    expect(new Set(ids).size).toBe(50_000);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // 100 pages at 50 a second met the limit, and then kept under it instead of hammering.
    expect(waits(list.stderr)).toBeGreaterThanOrEqual(1);
    expect(waits(list.stderr)).toBeLessThanOrEqual(3);
    expect(Date.now() - started).toBeGreaterThan(1_000);
  }, 60_000);

  test('a 20,000-row import in batches of 100 finishes, every row once', async () => {
    const file = join(box.dir, 'import.csv');
    csv(file, 0, 20_000);
    const r = await box.amsg('members', 'import', file, '--batch-size', '100', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(waits(r.stderr)).toBeGreaterThanOrEqual(1);
    expect(waits(r.stderr)).toBeLessThanOrEqual(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'o',
      num_members: 20_000,
      num_members_added: 20_000,
      num_members_updated: 0,
      num_duplicates: 0,
      num_errors: 0,
    });
    const emails = (await box.json<{ email: string }[]>('members', 'list', '--all', '--json'))
      .map((m) => m.email)
      .filter((e) => e.startsWith('import'));
    expect(emails).toHaveLength(20_000);
    expect(new Set(emails).size).toBe(20_000);
  }, 60_000);
});

describe('a command that may not wait (AMSG_MAX_WAIT=0) stops with exit 5, and continues', () => {
  // 4 calls a second: a stop is certain within the first window.
  const box = new Sandbox('remote', ['--rate-limit', '4', '--rate-limit-window', '1']);
  beforeAll(async () => {
    await box.start();
  }, 30_000);
  afterAll(() => box.stop());
  const noWait = (...args: string[]) => box.raw(args, { ...box.env, AMSG_MAX_WAIT: '0' });

  test('an import stops where it is, and --resume (with the same options, or none) finishes it with no row twice', async () => {
    const file = join(box.dir, 'import.csv');
    csv(file, 0, 3_000);
    const stopped = await noWait('members', 'import', file, '--batch-size', '300', '--group', 'Spring', '--json');
    expect(stopped.exitCode, stopped.stderr).toBe(5);
    const error = JSON.parse(lastLine(stopped.stderr));
    const id = Number(/--resume (\d+)/.exec(error.details.continue_with)![1]);
    expect(error).toEqual({
      error: "the service's rate limit asks to wait 1 s, longer than the 0 s amsg waits (AMSG_MAX_WAIT)",
      status: 403,
      field: null,
      exit_code: 5,
      details: {
        retry_after: expect.any(Number),
        continue_with: `continue with: amsg members import ${file} --resume ${id} (the rows imported stay imported)`,
      },
    });
    const partial = await box.json('members', 'imports', 'get', String(id));
    expect(partial.num_members).toBeLessThan(3_000);

    // An option given again must be the same: another group is refused, by name, before any row.
    const other = await box.amsg('members', 'import', file, '--batch-size', '300', '--group', 'Autumn', '--resume', String(id));
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(`amsg: --resume ${id} goes on with the options the import was started with`);
    expect(other.stderr).toMatch(/\n {2}- --group: first run group ids \d+, now Autumn \(no such group\)$/);
    expect((await box.json('groups', 'list')).map((g: { group_name: string }) => g.group_name)).toEqual(['Spring']);

    const resumed = await box.amsg('members', 'import', file, '--batch-size', '300', '--group', 'Spring', '--resume', String(id), '--json');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resuming import ${id}: skipping the ${partial.num_members} rows it already has`);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      import_id: id,
      status: 'o',
      num_members: 3_000,
      num_members_added: 3_000,
      num_duplicates: 0,
      num_errors: 0,
    });
    expect(await box.json('members', 'list', '--count')).toBe(3_000);
    expect((await box.json('groups', 'list'))[0]).toMatchObject({ group_name: 'Spring', active_count: 3_000 });
  }, 60_000);

  test('a list stops with the records so far, closed, and --start continues it', async () => {
    const first = await noWait('members', 'list', '--all', '-o', 'ndjson');
    expect(first.exitCode).toBe(5);
    // Off a terminal the error is JSON, as the data is; how to go on is in it.
    const error = JSON.parse(lastLine(first.stderr));
    expect(error).toMatchObject({ status: 403, exit_code: 5 });
    const next = Number(/; continue with --start (\d+) --all$/.exec(error.details.continue_with)![1]);
    expect(error.details.continue_with).toBe(
      `${next.toLocaleString('en-US')} records printed (positions 0 to ${next - 1}); continue with --start ${next} --all`,
    );
    const head = first.stdout.trim() ? first.stdout.trim().split('\n') : [];
    expect(head).toHaveLength(next);
    const rest = await box.amsg('members', 'list', '--all', '-o', 'ndjson', '--start', String(next));
    expect(rest.exitCode, rest.stderr).toBe(0);
    const ids = [...head, ...rest.stdout.trim().split('\n')].map((l) => JSON.parse(l).member_id as number);
    expect(ids).toHaveLength(3_000);
    expect(new Set(ids).size).toBe(3_000);
  }, 60_000);
});
