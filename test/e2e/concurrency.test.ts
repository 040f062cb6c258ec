import { afterAll, beforeAll, expect, test } from 'vitest';
import { Sandbox } from './harness.js';

const box = new Sandbox('local');
beforeAll(() => box.start());
afterAll(() => box.stop());

test('CLI processes writing the same database at once all succeed', async () => {
  // Eight writers at once, all creating-or-finding the same group by name.
  const runs = await Promise.all(
    Array.from({ length: 8 }, (_, i) => box.amsg('members', 'add', `writer${i}@example.com`, '--group', 'Shared')),
  );
  for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
  expect(await box.json('members', 'list', '--count')).toBe(8);
  const groups = await box.json('groups', 'list');
  expect(groups.map((g: any) => [g.group_name, g.active_count])).toEqual([['Shared', 8]]);
});

test('a fresh file initialized by two processes at once is set up exactly once', async () => {
  const db = `${box.dir}/race.db`;
  const [a, b] = await Promise.all([box.raw(['init', '--json'], { AMSG_DB: db }), box.raw(['init', '--json'], { AMSG_DB: db })]);
  expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
  const created = [JSON.parse(a.stdout), JSON.parse(b.stdout)].filter((r) => r.private_key);
  expect(created).toHaveLength(1);
  const keys = await box.raw(['keys', 'list', '--json'], { AMSG_DB: db });
  expect(JSON.parse(keys.stdout)).toHaveLength(1);
});
