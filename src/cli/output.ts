/**
 * Rendering answers for people and for pipes. JSON prints exactly what the service
 * answered; table, ndjson and csv are views of it. Nothing here knows the resources
 * except through the optional column list a command passes.
 */
export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface View {
  /** Columns for table output of a list (all keys by default). Dotted paths reach into objects. */
  columns?: string[];
  /** Words for a column's letters in a table (`mailing_status: {p: 'pending', …}`); JSON keeps the letters. */
  words?: Record<string, Record<string, string>>;
  /**
   * The terminal's width: a table is fitted to it, long cells cut with …, and
   * the last columns left out when even cut cells do not fit (never without a width).
   */
  width?: number;
  /** Told which columns a fitted table left out, so the command can say so on stderr. */
  leftOut?: (columns: string[]) => void;
}

/** Member statuses as people say them; every table shows these for member_status_id and a member's status. */
const MEMBER_STATUS_WORDS: Record<string, string> = { a: 'active', e: 'error', o: 'opted out', f: 'forwarded', 'opt-out': 'opted out' };
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
 * Column widths that fit a table in `width` characters: the widest columns give up
 * room first, none below `floor` characters (or its own width, if narrower). The
 * answer may still be too wide; fitColumns then leaves columns out.
 */
export function fitWidths(natural: number[], width: number, floor = MIN_CELL): number[] {
  const widths = [...natural];
  let over = tableWidth(widths) - width;
  while (over > 0) {
    const widest = Math.max(...widths);
    if (widest <= floor) break;
    const i = widths.indexOf(widest);
    const second = Math.max(floor, ...widths.filter((_, j) => j !== i));
    const take = Math.min(over, Math.max(1, widest - second));
    widths[i] -= take;
    over -= take;
  }
  return widths;
}

/**
 * Which columns of a table fit in `width`, and how wide each is drawn. Columns come
 * in the order the command chose them, most telling first: when cut cells still do
 * not fit, the last ones are left out (never the first), and the caller says so.
 */
export function fitColumns(natural: number[], width: number): { kept: number; widths: number[] } {
  for (let kept = natural.length; kept > 1; kept--) {
    const widths = fitWidths(natural.slice(0, kept), width);
    if (tableWidth(widths) <= width) return { kept, widths };
  }
  return { kept: Math.min(1, natural.length), widths: fitWidths(natural.slice(0, 1), width, 1) };
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
      return renderCsv(value);
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

async function renderCsv(value: unknown): Promise<string> {
  const { stringify } = await import('csv-stringify/sync');
  const items = Array.isArray(value) ? value : [value];
  if (!items.every(isRow)) return stringify(items.map((v) => [cell(v)]));
  const rows = items.map((r) => flatten(r as Row));
  const columns = csvColumns(rows);
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
          columns ??= csvColumns(flat);
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

async function renderTable(value: unknown, view: View): Promise<string> {
  if (!isRow(value) && !Array.isArray(value)) return `${cell(value)}\n`;
  const { default: Table } = await import('cli-table3');
  if (Array.isArray(value)) {
    if (!value.length) return '(none)\n';
    if (!value.every(isRow)) return value.map((v) => cell(v)).join('\n') + '\n';
    const columns = view.columns ?? [...new Set(value.flatMap((r) => Object.keys(r as Row)))];
    let rows = (value as Row[]).map((row) => columns.map((c) => tableCell(pick(row, c), c, view)));
    let head = columns;
    if (view.width) {
      const lineWidth = (t: string) => Math.max(...t.split('\n').map((l) => l.length));
      const { kept, widths } = fitColumns(
        columns.map((c, i) => Math.max(c.length, ...rows.map((r) => lineWidth(r[i])))),
        view.width,
      );
      if (kept < columns.length) view.leftOut?.(columns.slice(kept));
      rows = rows.map((r) => r.slice(0, kept).map((text, i) => cut(text, widths[i])));
      head = columns.slice(0, kept).map((c, i) => cut(c, widths[i]));
    }
    const table = new Table({ head, chars: CHARS, style: { head: [], border: [] } });
    for (const row of rows) table.push(row);
    return table.toString() + '\n';
  }
  const table = new Table({ chars: CHARS, style: { head: [], border: [] } });
  const entries = Object.entries(value).map(([k, v]) => [k, tableCell(v, k, view)] as const);
  const keyWidth = Math.max(...entries.map(([k]) => k.length));
  for (const [k, text] of entries) table.push({ [k]: view.width ? cut(text, Math.max(view.width - keyWidth - 7, 10)) : text });
  return table.toString() + '\n';
}
