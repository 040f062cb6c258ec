import { describe, expect, it, test } from 'vitest';
import { TABLES } from '../../src/cli/columns.js';
import { fitTable, fitWidths, MIN_CELL, render, tableWidth, thousands, type View } from '../../src/cli/output.js';

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
    expect(lines(text)[1]).toMatch(/^│ Member ID │ Email\s+│ Status │ City\s+│ Note\s+│ Member since\s+│$/);
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
    expect(lines(text)[1]).toContain('Member since');
  });

  test('narrow: the last columns are left out, named, and the rest fits; a date is left out rather than cut', async () => {
    const { text, leftOut } = await table(50);
    expect(widest(text)).toBeLessThanOrEqual(50);
    expect(leftOut).toEqual([['note', 'member_since']]);
    expect(lines(text)[1]).toMatch(/^│ Member ID │ Email\s+│ Status\s+│ City\s+│$/);
    expect(text).toMatch(/│ hans\.weber\.2@\S*… │/);
    expect(text).not.toContain('2026-05');
  });

  test('very narrow: the first column always stays, cut to fit', async () => {
    const { text, leftOut } = await table(12);
    expect(leftOut).toEqual([['email', 'status', 'city', 'note', 'member_since']]);
    expect(widest(text)).toBeLessThanOrEqual(12);
    expect(lines(text)[1]).toBe('│ Member … │');
  });

  test('fitWidths takes from the widest first, down to MIN_CELL; fitTable keeps what fits', () => {
    expect(fitWidths([4, 30, 20], 40)).toEqual([4, 13, 13]);
    expect(tableWidth([4, 13, 13])).toBe(40);
    expect(fitWidths([20, 20, 20], 10)).toEqual([MIN_CELL, MIN_CELL, MIN_CELL]);
    const text = (natural: number) => ({ natural, floor: MIN_CELL });
    expect(fitTable([text(20), text(20), text(20)], 30)).toEqual({ kept: [0, 1], widths: [11, 12] });
    expect(fitTable([text(5), text(5), text(5)], 100)).toEqual({ kept: [0, 1, 2], widths: [5, 5, 5] });
    // Free text gives first; an identifying column neither gives nor goes; the last other column goes first.
    expect(fitTable([{ natural: 20, floor: 8, role: 'id' }, { natural: 20, floor: 8, role: 'free' }, text(20)], 50)).toEqual({
      kept: [0, 1, 2],
      widths: [20, 8, 12],
    });
    expect(fitTable([text(20), { natural: 20, floor: 8, role: 'id' }, text(20)], 30)).toEqual({ kept: [1], widths: [20] });
    // An empty column goes before anything is cut; a number or date (floor = its width) goes whole rather than cut.
    expect(fitTable([text(20), { natural: 10, floor: 10, empty: true }, text(20)], 45)).toEqual({ kept: [0, 2], widths: [19, 19] });
    expect(fitTable([text(20), { natural: 16, floor: 16 }], 30)).toEqual({ kept: [0], widths: [20] });
  });
});

/** The cases support staff met on an 80-column terminal (issue 35), drawn with the commands' own table specs. */
describe('what a person sees on an 80-column terminal', () => {
  const aishas = [1, 2, 3].map((n) => ({
    member_id: 100 + n,
    email: `aisha.857${n}@example-longdomain.com`,
    status: 'a',
    fields: { first_name: 'Aisha', last_name: `Khan-${n}`, city: 'Stavanger' },
    member_since: '@D:2026-05-06T07:08:09',
    last_modified_at: '@D:2026-05-07T07:08:09',
    deleted_at: null,
  }));
  async function draw(value: unknown, view: View, width = 80) {
    const leftOut: string[][] = [];
    const text = await render(value, 'table', { ...view, width, leftOut: (c) => leftOut.push(c) });
    return { text, leftOut, head: lines(text)[1] };
  }

  test('members find: every address whole, the empty deleted_at dropped (not named), fields cut first', async () => {
    const { text, leftOut, head } = await draw(aishas, { table: TABLES.members });
    expect(widest(text)).toBeLessThanOrEqual(80);
    for (const m of aishas) expect(text).toContain(`│ ${m.member_id} │ ${m.email} │`);
    expect(head).not.toContain('Deleted');
    expect(head).toMatch(/^│ ID {2}│ Email\s+│ Status │ Fields\s+│/);
    expect(text).toMatch(/│ first_name=Aisha; \S+… │/);
    expect(leftOut).toEqual([['member_since', 'last_modified_at']]);
    expect(leftOut.flat()).not.toContain('deleted_at');
    expect(leftOut.flat()).not.toContain('email');
  });

  test('members mailings: which mailing each row is (mailing_id, name, subject) stays', async () => {
    const history = [
      {
        delivery_type: 'h',
        clicked: null,
        opened: '@D:2026-05-06T08:00:00',
        delivery_ts: '@D:2026-05-06T07:08:09',
        sent: '@D:2026-05-06T07:08:09',
        forwarded: null,
        shared: null,
        mailing_id: 7,
        name: 'Spring sale 2026 for loyal customers',
        subject: 'Our spring sale starts now, with twenty percent off',
        account_id: 1,
      },
    ];
    const { text, head } = await draw(history, { table: TABLES.memberMailings });
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(head).toMatch(/^│ Mailing │ Name\s+│ Subject\s+│ Sent\s+│/);
    expect(text).toContain('│ 7       │ Spring sale 2026 for loyal customers │ Our spr');
  });

  test('mailings list: headers a person tells apart; JSON and CSV keep the wire names', async () => {
    const list = [
      {
        mailing_id: 12,
        mailing_type: 'm',
        mailing_status: 'c',
        name: 'Spring',
        subject: 'Hello',
        recipient_count: 3,
        send_at: null,
        send_finished: '@D:2026-05-06T07:08:09',
        archived_ts: null,
      },
    ];
    const { head } = await draw(list, { table: TABLES.mailings });
    expect(head).toMatch(/^│ ID │ Name\s+│ Status │ Type │ Subject │ Recipients │ Finished\s+│$/);
    expect(await render(list, 'csv', { table: TABLES.mailings })).toMatch(/^mailing_id,mailing_type,mailing_status,name,/);
    expect(JSON.parse(await render(list, 'json', { table: TABLES.mailings }))).toEqual(list);
  });

  test('members get: fields wrap one entry a line, long values wrap; nothing is cut', async () => {
    const long = `${'word '.repeat(40)}end`;
    const { text } = await draw({ member_id: 1, email: 'a@example.com', fields: { first_name: 'Ada', note: long } }, {});
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(text).toMatch(/│ fields\s+│ first_name=Ada\s+│\n│\s+│ note=word word/);
    expect(text).toContain('end');
    expect(text).not.toContain('…');
  });

  test('--columns chooses the columns of a table (and CSV), in that order; an unknown name is refused', async () => {
    const chosen = ['email', 'fields.last_name', 'member_id'];
    const { head, text } = await draw(aishas, { table: TABLES.members, chosen });
    expect(head).toMatch(/^│ Email\s+│ Fields last name │ ID {2}│$/);
    expect(text).toContain('│ aisha.8571@example-longdomain.com │ Khan-1           │ 101 │');
    expect((await render(aishas, 'csv', { chosen })).split('\n')[1]).toBe('aisha.8571@example-longdomain.com,Khan-1,101');
    const refuse = (unknown: string[]): never => {
      throw new Error(`unknown ${unknown.join(',')}`);
    };
    await expect(render(aishas, 'table', { chosen: ['email', 'nope'], unknownColumns: refuse })).rejects.toThrow('unknown nope');
    await expect(render(aishas, 'csv', { chosen: ['nope'], unknownColumns: refuse })).rejects.toThrow('unknown nope');
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
