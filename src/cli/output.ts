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
}

type Row = Record<string, unknown>;

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
  return stringify(rows.map((r) => columns.map((c) => cell(r[c]))), { header: true, columns });
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
          await write(stringify(flat.map((r) => columns!.map((c) => cell(r[c]))), { header, columns }));
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
    const table = new Table({ head: columns, chars: CHARS, style: { head: [], border: [] } });
    for (const row of value as Row[]) table.push(columns.map((c) => cell(pick(row, c))));
    return table.toString() + '\n';
  }
  const table = new Table({ chars: CHARS, style: { head: [], border: [] } });
  for (const [k, v] of Object.entries(value)) table.push({ [k]: cell(v) });
  return table.toString() + '\n';
}
