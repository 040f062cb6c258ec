import { execa } from 'execa';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { BIN, Sandbox } from './harness.js';

/**
 * The live Ink view of `amsg members import`, drawn on a real pseudo-terminal
 * (util-linux `script`), through the built bundle: the view only exists on a
 * terminal, so the rest of the suite never draws it.
 */
const box = new Sandbox('local');
beforeAll(async () => {
  await box.start();
  for (const [name, type] of [
    ['city', 'text'],
    ['birthday', 'date'],
    ['score', 'numeric'],
  ])
    expect((await box.amsg('fields', 'create', name, '--type', type)).exitCode).toBe(0);
});
afterAll(() => box.stop());

test('on a terminal, the import draws its progress view and ends with the summary', async () => {
  const command = `stty cols 120 rows 30; node ${BIN} members import fixtures/members-clean.csv -o table`;
  const r = await execa('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, ...box.baseEnv, ...box.env },
    reject: false,
    stdin: 'ignore',
  });
  // eslint-disable-next-line no-control-regex
  const screen = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  expect(r.exitCode).toBe(0);
  expect(screen).toContain('Importing (import 1)');
  expect(screen).toMatch(/10 rows read, 10 sent, [\d,]+ rows\/s/);
  expect(screen).toContain('0 rejected');
  expect(screen).toContain('Import 1 (status o): 10 rows, 10 added, 0 updated, 0 duplicates, 0 skipped, 0 errors.');
});
