import { describe, expect, it, test } from 'vitest';
import { fitColumns, fitWidths, MIN_CELL, render, tableWidth, thousands } from '../../src/cli/output.js';

/** Tables fitted to a fake terminal width: cells cut with …, the last columns left out and named. */
const rows = [
  {
    member_id: 1,
    email: 'hans.weber.2@example.com',
    status: 'a',
    city: 'Oslo',
    note: 'a long note about this member that goes on',
    member_since: '@D:2026-05-06T07:08:09',
  },
  { member_id: 22, email: 'tina.mueller@example.org', status: 'o', city: 'Bergen', note: '', member_since: '@D:2026-05-07T08:00:00' },
];
const columns = ['member_id', 'email', 'status', 'city', 'note', 'member_since'];

const lines = (text: string) => text.trimEnd().split('\n');
const widest = (text: string) => Math.max(...lines(text).map((l) => l.length));

async function table(width?: number) {
  const leftOut: string[][] = [];
  const text = await render(rows, 'table', { columns, width, leftOut: (c) => leftOut.push(c) });
  return { text, leftOut };
}

describe('tables fit the terminal', () => {
  test('without a width (not a terminal) every column and character stays, and nothing is reported', async () => {
    const { text, leftOut } = await table();
    expect(leftOut).toEqual([]);
    expect(lines(text)[1]).toMatch(/^│ member_id │ email\s+│ status │ city\s+│ note\s+│ member_since\s+│$/);
    expect(text).toContain('a long note about this member that goes on');
    expect(text).toContain('hans.weber.2@example.com');
  });

  test('a wide terminal draws the whole table untouched', async () => {
    const { text, leftOut } = await table(200);
    expect(leftOut).toEqual([]);
    expect(text).toBe((await table()).text);
  });

  test('a bit narrower: the widest cells are cut with … and no column is left out', async () => {
    const natural = widest((await table()).text);
    const { text, leftOut } = await table(natural - 20);
    expect(leftOut).toEqual([]);
    expect(widest(text)).toBeLessThanOrEqual(natural - 20);
    expect(text).toContain('…');
    expect(lines(text)[1]).toContain('member_since');
  });

  test('narrow: the last columns are left out, named, and the rest fits', async () => {
    const { text, leftOut } = await table(50);
    expect(widest(text)).toBeLessThanOrEqual(50);
    expect(leftOut).toEqual([['note', 'member_since']]);
    expect(lines(text)[1]).toMatch(/^│ member_id │ email\s+│ status\s+│ city\s+│$/);
    expect(text).toContain('│ hans.weber.2@ex… │');
    expect(text).not.toContain('2026-05-06');
  });

  test('very narrow: the first column always stays, cut to fit', async () => {
    const { text, leftOut } = await table(12);
    expect(leftOut).toEqual([['email', 'status', 'city', 'note', 'member_since']]);
    expect(widest(text)).toBeLessThanOrEqual(12);
    expect(lines(text)[1]).toBe('│ member_… │');
  });

  test('fitWidths takes from the widest first, down to MIN_CELL; fitColumns keeps a prefix that fits', () => {
    expect(fitWidths([4, 30, 20], 40)).toEqual([4, 13, 13]);
    expect(tableWidth([4, 13, 13])).toBe(40);
    expect(fitWidths([20, 20, 20], 10)).toEqual([MIN_CELL, MIN_CELL, MIN_CELL]);
    expect(fitColumns([20, 20, 20], 30)).toEqual({ kept: 2, widths: [11, 12] });
    expect(fitColumns([5, 5, 5], 100)).toEqual({ kept: 3, widths: [5, 5, 5] });
  });
});

describe('thousands', () => {
  it('groups as en-US does, without ICU (negative, fractions to three places)', () => {
    expect([0, 7, 999, 1000, 1234567, -1234567, 1_000_000, 12.5, 1234.5678, -0.5].map(thousands)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '1,234,567',
      '-1,234,567',
      '1,000,000',
      '12.5',
      '1,234.568',
      '-0.5',
    ]);
  });
});
