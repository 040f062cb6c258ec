/**
 * Rendering answers for people and for pipes. JSON prints exactly what the service
 * answered; table, ndjson and csv are views of it. Nothing here knows the resources
 * except through the table spec a command names (columns.ts).
 */
import { MEMBER_STATUS_WORDS as MEMBER_STATUS_LETTERS } from '../status-words.js';
import { columnOf, type ColumnRole, type TableSpec } from './columns.js';

export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface View {
  /** The resource's table (columns.ts): its columns, the ones that identify a row, free text, headers. */
  table?: TableSpec;
  /** Columns for table output of a list where no spec names them (all keys by default). Dotted paths reach into objects. */
  columns?: string[];
  /** The columns the user chose (`--columns a,b,c`, wire names): tables and CSV show these, in this order. */
  chosen?: string[];
  /** Told the chosen columns no row or spec has (the caller makes it a usage error); rendering stops there. */
  unknownColumns?: (unknown: string[], known: string[]) => never;
  /** Words for a column's letters in a table (`mailing_status: {p: 'pending', …}`); JSON keeps the letters. */
  words?: Record<string, Record<string, string>>;
  /**
   * The terminal's width: a table is fitted to it (see fitTable), and a record's long
   * values wrap (never without a width).
   */
  width?: number;
  /** Told which columns a fitted table left out, so the command can say so on stderr. */
  leftOut?: (columns: string[]) => void;
}

/** Member statuses as people say them; every table shows these for member_status_id and a member's status. */
const MEMBER_STATUS_WORDS: Record<string, string> = { ...MEMBER_STATUS_LETTERS, 'opt-out': 'opted out' };
const DEFAULT_WORDS: Record<string, Record<string, string>> = { member_status_id: MEMBER_STATUS_WORDS, status: { 'opt-out': 'opted out' } };

/** `@D:2026-12-01T09:00:00` (UTC on the wire) as a local, readable time: `2026-12-01 09:00`. */
export function humanDate(wire: string): string {
  const m = /^@D:(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})$/.exec(wire);
  if (!m) return wire;
  const d = new Date(`${m[1]}Z`);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A value as a table shows it to people: readable dates, words for status letters. */
function tableCell(v: unknown, column: string, view: View): string {
  if (typeof v === 'string') {
    const words = view.words?.[column] ?? DEFAULT_WORDS[column];
    if (words?.[v]) return words[v];
    if (v.startsWith('@D:')) return humanDate(v);
  }
  return cell(v);
}

/** Cuts a cell to `width` characters, ending in … when cut (one line: a cut cell's line breaks become spaces). */
const cut = (text: string, width: number) => {
  if (text.length <= width && !text.includes('\n')) return text;
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length <= width ? line : `${line.slice(0, Math.max(width - 1, 0))}…`;
};

/** The narrowest a cut column gets: below this a cell says too little to be worth its room. */
export const MIN_CELL = 8;

/** The characters a table of these column widths takes on a line: cells, padding and borders. */
export const tableWidth = (widths: number[]) => widths.reduce((a, b) => a + b, 0) + 3 * widths.length + 1;

/**
 * Narrows `widths` (in place) until the table fits in `width` or no column may give
 * more: the widest column that may (`may(i)`) gives up room first, none below its floor.
 */
function shrink(widths: number[], floors: number[], width: number, may: (i: number) => boolean = () => true): number[] {
  let over = tableWidth(widths) - width;
  while (over > 0) {
    const open = widths.map((_, i) => i).filter((i) => may(i) && widths[i] > floors[i]);
    if (!open.length) break;
    const i = open.reduce((a, b) => (widths[b] > widths[a] ? b : a));
    const second = Math.max(floors[i], ...open.filter((j) => j !== i).map((j) => widths[j]));
    const take = Math.min(over, Math.max(1, widths[i] - second));
    widths[i] -= take;
    over -= take;
  }
  return widths;
}

/**
 * Column widths that fit a table in `width` characters: the widest columns give up
 * room first, none below `floor` characters (or its own width, if narrower). The
 * answer may still be too wide; fitTable then leaves columns out.
 */
export function fitWidths(natural: number[], width: number, floor = MIN_CELL): number[] {
  return shrink(
    [...natural],
    natural.map((n) => Math.min(n, floor)),
    width,
  );
}

/** A column as fitTable sees it: its natural width, how narrow a cut may make it, its role, and whether it is empty. */
export interface FitColumn {
  natural: number;
  /** Its natural width when a cut would make it say nothing or something false (an id, a number, a date). */
  floor: number;
  role?: ColumnRole;
  empty?: boolean;
}

/**
 * Which columns of a table fit in `width`, and how wide each is drawn. A table that
 * must shed width sheds what says least first:
 * 1. columns with nothing in them;
 * 2. room in long free text (`fields`, a subject), widest first, then in other text
 *    (ids, numbers and dates are never cut: their floor is their width);
 * 3. whole columns that do not identify a row, the last first (a command lists its
 *    columns most telling first), named to the caller;
 * 4. last resort, when the identifying columns alone do not fit: they are cut too.
 */
export function fitTable(columns: FitColumn[], width: number): { kept: number[]; widths: number[] } {
  const all = columns.map((_, i) => i);
  if (tableWidth(columns.map((c) => c.natural)) <= width) return { kept: all, widths: columns.map((c) => c.natural) };
  const kept = all.filter((i) => !columns[i].empty || columns[i].role === 'id');
  for (;;) {
    const cols = kept.map((i) => columns[i]);
    const floors = cols.map((c) => (c.role === 'id' ? c.natural : Math.min(c.natural, c.floor)));
    const widths = shrink(
      cols.map((c) => c.natural),
      floors,
      width,
      (j) => cols[j].role === 'free',
    );
    shrink(widths, floors, width);
    if (tableWidth(widths) <= width) return { kept, widths };
    const last = kept.findLastIndex((i) => columns[i].role !== 'id');
    if (last < 0 || kept.length === 1) break;
    kept.splice(last, 1);
  }
  // Only identifying columns are left (or one column): cut them, as little as can be.
  if (kept.length === 0) kept.push(0);
  return {
    kept,
    widths: fitWidths(
      kept.map((i) => columns[i].natural),
      width,
      1,
    ),
  };
}

type Row = Record<string, unknown>;

/**
 * A count with thousands separators (1,000,000), as en-US writes it. Not
 * toLocaleString: its first call sets up ICU's number formatting, ~17 ms of a
 * command that prints one count (`members list`'s "500 of 1,000,000 shown").
 */
export function thousands(n: number): string {
  const [whole, fraction] = String(Math.round(n * 1000) / 1000).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

const isRow = (v: unknown): v is Row => !!v && typeof v === 'object' && !Array.isArray(v);

/** Flattens nested objects one level into dotted keys (fields.first_name, sms.phone_number). */
export function flatten(row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (isRow(v) && Object.keys(v).length) for (const [k2, v2] of Object.entries(v)) out[`${k}.${k2}`] = v2;
    else out[k] = v;
  }
  return out;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null)) return v.join(', ');
  if (isRow(v)) {
    const entries = Object.entries(v);
    return entries.length ? entries.map(([k, x]) => `${k}=${typeof x === 'object' ? JSON.stringify(x) : x}`).join('; ') : '';
  }
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function pick(row: Row, path: string): unknown {
  let v: unknown = row;
  for (const part of path.split('.')) v = isRow(v) ? v[part] : undefined;
  return v;
}

export async function render(value: unknown, format: Format, view: View = {}): Promise<string> {
  switch (format) {
    case 'json':
      return JSON.stringify(value, null, 2) + '\n';
    case 'ndjson':
      return (Array.isArray(value) ? value : [value]).map((v) => JSON.stringify(v) + '\n').join('');
    case 'csv':
      return renderCsv(value, view);
    case 'table':
      return renderTable(value, view);
  }
}

/**
 * The CSV columns of flattened rows: every key, except a parent (`sms`) where some
 * row has its children (`sms.phone_number`), since its cells would only ever be empty.
 */
export function csvColumns(rows: Row[]): string[] {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const parents = new Set(keys.filter((k) => k.includes('.')).map((k) => k.slice(0, k.indexOf('.'))));
  return keys.filter((k) => !parents.has(k));
}

/** The CSV columns: those chosen with --columns (checked against the rows), or every key. */
function chosenCsvColumns(rows: Row[], view: View): string[] {
  if (!view.chosen) return csvColumns(rows);
  const known = new Set([...rows.flatMap((r) => Object.keys(r)), ...(view.table?.columns.map((c) => c.key) ?? [])]);
  const unknown = rows.length ? view.chosen.filter((c) => !known.has(c)) : [];
  if (unknown.length) view.unknownColumns?.(unknown, [...known]);
  return view.chosen;
}

async function renderCsv(value: unknown, view: View): Promise<string> {
  const { stringify } = await import('csv-stringify/sync');
  const items = Array.isArray(value) ? value : [value];
  if (!items.every(isRow)) return stringify(items.map((v) => [cell(v)]));
  const rows = items.map((r) => flatten(r as Row));
  const columns = chosenCsvColumns(rows, view);
  return stringify(
    rows.map((r) => columns.map((c) => cell(r[c]))),
    { header: true, columns },
  );
}

/** A list printed as its pages arrive (see printList in paging.ts). */
export interface ListWriter {
  write(rows: unknown[]): Promise<void>;
  end(): Promise<void>;
}

/**
 * Writes a list page by page. json and ndjson print exactly what render() prints for
 * the whole list, csv takes its header from the first page, and a table, which must
 * know every cell's width, is drawn at the end.
 */
export function listWriter(format: Format, view: View, write: (text: string) => Promise<void>, note: (m: string) => void): ListWriter {
  let count = 0;
  const buffered: unknown[] = [];
  let columns: string[] | undefined;
  let plain = false;
  const dropped = new Set<string>();
  return {
    async write(rows) {
      if (!rows.length) return;
      if (format === 'table') {
        for (const r of rows) buffered.push(r);
        return;
      }
      if (format === 'ndjson') await write(rows.map((v) => JSON.stringify(v) + '\n').join(''));
      else if (format === 'json') {
        const items = rows.map((v) => '  ' + JSON.stringify(v, null, 2).replaceAll('\n', '\n  '));
        await write((count ? ',\n' : '[\n') + items.join(',\n'));
      } else {
        const { stringify } = await import('csv-stringify/sync');
        if (!count) plain = !rows.every(isRow);
        if (plain) await write(stringify(rows.map((v) => [cell(v)])));
        else {
          const flat = rows.map((r) => flatten(r as Row));
          const header = !columns;
          columns ??= chosenCsvColumns(flat, view);
          if (!view.chosen)
            for (const r of flat) for (const [k, v] of Object.entries(r)) if (cell(v) !== '' && !columns.includes(k)) dropped.add(k);
          await write(
            stringify(
              flat.map((r) => columns!.map((c) => cell(r[c]))),
              { header, columns },
            ),
          );
        }
      }
      count += rows.length;
    },
    async end() {
      if (format === 'table') return write(await render(buffered, 'table', view));
      if (format === 'json') await write(count ? '\n]\n' : '[]\n');
      if (dropped.size) note(`columns that first appeared after the CSV header was written are left out: ${[...dropped].join(', ')}`);
    },
  };
}

/** Box drawing without a rule between rows: denser, and still aligned. */
const CHARS = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** The most lines a record's value wraps to on a terminal; past them it is cut with … (a last resort). */
const MAX_VALUE_LINES = 12;

/** Wraps text to `width` characters a line, at a space where one is near, else mid-word. */
export function wrap(text: string, width: number, maxLines = MAX_VALUE_LINES): string {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    let rest = paragraph;
    while (rest.length > width) {
      const space = rest.lastIndexOf(' ', width);
      const at = space > width / 2 ? space : width;
      out.push(rest.slice(0, at).trimEnd());
      rest = rest.slice(at).trimStart();
    }
    out.push(rest);
  }
  if (out.length > maxLines) return [...out.slice(0, maxLines - 1), cut(out[maxLines - 1] + ' …', width)].join('\n');
  return out.join('\n');
}

/** The columns a list table draws: those chosen (--columns), the spec's that some row has, the command's, or every key. */
function tableColumns(rows: Row[], view: View): string[] {
  const keys = () => [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (view.chosen) {
    const known = new Set([...(view.table?.columns.map((c) => c.key) ?? []), ...keys(), ...rows.flatMap((r) => Object.keys(flatten(r)))]);
    const unknown = view.chosen.filter((c) => !known.has(c));
    if (unknown.length) view.unknownColumns?.(unknown, [...known]);
    return view.chosen;
  }
  if (view.table) return view.table.columns.map((c) => c.key).filter((k) => rows.some((r) => pick(r, k) !== undefined));
  return view.columns ?? keys();
}

/** A cell a cut would make say nothing or something false: a number, a date, true/false. */
const uncuttable = (v: unknown) =>
  v === null ||
  v === undefined ||
  typeof v === 'number' ||
  typeof v === 'boolean' ||
  (typeof v === 'string' && /^(@D:)?\d{4}-\d\d-\d\d/.test(v));

async function renderTable(value: unknown, view: View): Promise<string> {
  if (!isRow(value) && !Array.isArray(value)) return `${cell(value)}\n`;
  const { default: Table } = await import('cli-table3');
  if (Array.isArray(value)) {
    if (!value.length) return '(none)\n';
    if (!value.every(isRow)) return value.map((v) => cell(v)).join('\n') + '\n';
    const records = value as Row[];
    const columns = tableColumns(records, view);
    const specs = columns.map((c) => columnOf(view.table, c));
    let rows = records.map((row) => columns.map((c) => tableCell(pick(row, c), c, view)));
    let head = specs.map((c) => c.label);
    if (view.width) {
      const lineWidth = (t: string) => Math.max(...t.split('\n').map((l) => l.length));
      const fit = specs.map((c, i) => {
        const natural = Math.max(head[i].length, ...rows.map((r) => lineWidth(r[i])));
        const atomic = records.every((r) => uncuttable(pick(r, c.key)));
        return { natural, floor: atomic ? natural : MIN_CELL, role: c.role, empty: rows.every((r) => r[i] === '') };
      });
      const { kept, widths } = fitTable(fit, view.width);
      const leftOut = columns.filter((_, i) => !kept.includes(i) && !fit[i].empty);
      if (leftOut.length) view.leftOut?.(leftOut);
      rows = rows.map((r) => kept.map((i, j) => cut(r[i], widths[j])));
      head = kept.map((i, j) => cut(head[i], widths[j]));
    }
    const table = new Table({ head, chars: CHARS, style: { head: [], border: [] } });
    for (const row of rows) table.push(row);
    return table.toString() + '\n';
  }
  const table = new Table({ chars: CHARS, style: { head: [], border: [] } });
  const record = view.chosen ? Object.fromEntries(view.chosen.map((k) => [k, pick(value, k)])) : value;
  if (view.chosen) {
    const known = [...new Set([...Object.keys(value), ...Object.keys(flatten(value))])];
    const unknown = view.chosen.filter((c) => !known.includes(c));
    if (unknown.length) view.unknownColumns?.(unknown, known);
  }
  const entries = Object.entries(record);
  const keyWidth = Math.max(...entries.map(([k]) => k.length));
  const valueWidth = view.width && Math.max(view.width - keyWidth - 7, 10);
  for (const [k, v] of entries) {
    // On a terminal an object's entries go one a line (`fields`), and long values wrap rather than lose their end.
    const text =
      valueWidth && isRow(v)
        ? Object.entries(v)
            .map((entry) => cell(Object.fromEntries([entry])))
            .join('\n')
        : tableCell(v, k, view);
    table.push({ [k]: valueWidth ? wrap(text, valueWidth) : text });
  }
  return table.toString() + '\n';
}
