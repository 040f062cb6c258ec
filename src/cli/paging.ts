import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Api } from '../client/api.js';
import { RateLimitedError, type QueryValue } from '../client/transport.js';
import type { RunContext } from './context.js';
import { listWriter, thousands, type ListWriter, type View } from './output.js';

/** The longest window a list answers (the spec's default end of 500). */
export const PAGE_SIZE = 500;

/**
 * The records of a list that the service answers a window at a time, page by page:
 * asks for start/end windows of `pageSize` in turn until a page comes back short.
 * A service that ignores the window answers the whole list every time, so a page
 * longer than asked for, or one that starts with the record the last page started
 * with, ends it. Only one page is held at a time, so a million rows stream in flat memory.
 */
export async function* pages<T>(
  api: Api,
  path: string,
  query: Record<string, QueryValue> = {},
  { pageSize = PAGE_SIZE, start = 0, limit = Infinity, key }: { pageSize?: number; start?: number; limit?: number; key?: string } = {},
): AsyncGenerator<T[]> {
  let first: string | undefined;
  let left = limit;
  for (let at = start; left > 0; at += pageSize) {
    const size = Math.min(pageSize, left);
    const page = unwrap(await api.get<unknown>(path, { ...query, start: at, end: at + size }), key) as T[];
    if (!Array.isArray(page) || page.length > size) {
      // The service answered the whole list: hand it out once, cut to the limit.
      if (Array.isArray(page) && at === start) yield page.slice(start, start + left);
      return;
    }
    const head = page.length ? JSON.stringify(page[0]) : undefined;
    if (at > start && head !== undefined && head === first) return;
    first = head;
    if (page.length) yield page;
    left -= page.length;
    if (page.length < size) return;
  }
}

/** The list of an answer that holds it under a key (`{subaccounts: [...]}`), or the answer itself. */
const unwrap = (answer: unknown, key?: string): unknown =>
  key && answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Record<string, unknown>)[key] : answer;

/** Every record of a windowed list, in one array (for name lookups; lists to print go through printList). */
export async function allPages<T>(api: Api, path: string, query: Record<string, QueryValue> = {}, pageSize = PAGE_SIZE): Promise<T[]> {
  const all: T[] = [];
  for await (const page of pages<T>(api, path, query, { pageSize })) all.push(...page);
  return all;
}

/** The flags every list command takes (see listOptions); numbers are checked as the flags are parsed. */
export interface ListFlags {
  all?: boolean;
  limit?: number;
  start?: number;
  end?: number;
  count?: boolean;
}

export interface ListShape {
  /** The service answers start/end windows (false: it answers the whole list at once). */
  windowed?: boolean;
  /** The service answers `count=true` with the number of records (also used for the "N of M shown" note). */
  countable?: boolean;
  /** Without --start/--end/--limit, print every record (lists of an account's own things: groups, searches). */
  allByDefault?: boolean;
  /** The service answers the list under this key (`{subaccounts: [...]}`); JSON output keeps that shape. */
  key?: string;
  /** How many records the list holds, where the command knows a cheaper way than count=true (a group's kept counts). */
  total?: () => Promise<number | undefined>;
  /** Each row as printed, where a format wants other columns than the service's (a member report as importable CSV). */
  // biome-ignore lint/suspicious/noExplicitAny: each list passes its own record type
  row?: (record: any) => unknown;
}

/** A commander parser for a whole-number flag: a bad value is a usage error (exit 2) before any request. */
export const wholeNumber =
  (min = 0) =>
  (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min)
      throw new InvalidArgumentError(`expected a whole number${min ? ` of at least ${min}` : ''}, got "${value}".`);
    return Number(value);
  };

/**
 * Adds the list flags to a command: --all and --limit always; --start and --end
 * where the service answers windows; --count where it counts. Flags that do not
 * go together are refused before the action runs.
 */
export function listOptions(cmd: Command, shape: ListShape = {}): Command {
  const { windowed = true, countable = false } = shape;
  cmd
    .option('--all', 'every record, fetched a page at a time and printed as it comes')
    .addOption(new Option('--limit <n>', 'at most this many records').argParser(wholeNumber(1)));
  if (windowed)
    cmd
      .addOption(new Option('--start <n>', 'zero-based position of the first record (default 0)').argParser(wholeNumber()))
      .addOption(new Option('--end <n>', `end of the window (default start+${PAGE_SIZE})`).argParser(wholeNumber()));
  if (countable) cmd.option('--count', 'print only how many there are');
  return cmd.hook('preAction', (_program, self) => {
    const o = self.opts<ListFlags>();
    if (o.all && (o.limit !== undefined || o.end !== undefined))
      self.error('error: --all goes with neither --limit nor --end', { exitCode: 2 });
    if (o.count && (o.all || o.limit !== undefined)) self.error('error: --count goes with neither --all nor --limit', { exitCode: 2 });
    if (o.start !== undefined && o.end !== undefined && o.end < o.start)
      self.error(`error: --end (${o.end}) must not be before --start (${o.start})`, { exitCode: 2 });
  });
}

/**
 * Prints a list: one window by default, every record with --all, at most N with
 * --limit. Rows are written as they come (json, ndjson and csv), so --all over a
 * million members holds one page at a time. When the output stops at a page
 * boundary and more records remain, a note on stderr says so: a list is never
 * cut silently.
 */
export async function printList(
  ctx: RunContext,
  path: string,
  query: Record<string, QueryValue>,
  flags: ListFlags,
  view: View = {},
  shape: ListShape = {},
): Promise<void> {
  const { windowed = true, countable = false, allByDefault = false } = shape;
  const { start, end, limit } = flags;
  const api = await ctx.api();
  if (flags.count) return ctx.print(await api.get(path, { ...query, count: true }));

  const from = start ?? 0;
  const wanted = flags.all
    ? Infinity
    : (limit ?? (end !== undefined ? end - from : allByDefault && start === undefined ? Infinity : PAGE_SIZE));
  const { key } = shape;
  const out = key && ctx.format === 'json' ? keptUnder(ctx, key, view) : await ctx.listWriter(view);
  let shown = 0;
  if (!windowed) {
    const whole = unwrap(await api.get<unknown>(path, query), key);
    if (!Array.isArray(whole)) return ctx.print(whole, view);
    const cut = whole.slice(from, from + (wanted === Infinity ? whole.length : wanted));
    await out.write(shape.row ? cut.map(shape.row) : cut);
    await out.end();
    shown = cut.length;
    if (from + shown < whole.length) ctx.note(`${thousands(shown)} of ${thousands(whole.length)} shown; --all for every row`);
    return;
  }
  try {
    for await (const page of pages(api, path, query, { start: from, limit: wanted, key })) {
      await out.write(shape.row ? page.map(shape.row) : page);
      shown += page.length;
    }
  } catch (err) {
    // Stopped by the rate limit: what was printed is complete records, closed as a
    // whole list, and the message says where to go on from.
    if (err instanceof RateLimitedError) {
      await out.end();
      const next = from + shown;
      const printed = shown ? `${thousands(shown)} records printed (positions ${from} to ${next - 1})` : 'no record printed';
      const rest = wanted === Infinity ? '--all' : `--limit ${wanted - shown}`;
      const header = ctx.format === 'csv' ? ' (its CSV starts with the header line again)' : '';
      err.continueWith = `${printed}; continue with --start ${next} ${rest}${header}`;
    }
    throw err;
  }
  await out.end();
  if (wanted === Infinity || shown < wanted) return;
  // Stopped at the window's end: say whether more remain, and how many in all when the service counts.
  const total = shape.total
    ? await shape.total()
    : countable
      ? await api.get<unknown>(path, { ...query, count: true }).catch(() => undefined)
      : undefined;
  if (typeof total === 'number') {
    if (total > from + shown)
      ctx.note(`${thousands(shown)} of ${thousands(total)} shown; --all for every row, --start ${from + shown} for the rows after these`);
    return;
  }
  const next = unwrap(await api.get<unknown>(path, { ...query, start: from + shown, end: from + shown + 1 }), key);
  if (Array.isArray(next) && next.length)
    ctx.note(`${thousands(shown)} shown and more remain; --all for every row, --start ${from + shown} for the rows after these`);
}

/**
 * A streamed JSON list inside the object the service answers (`{"subaccounts": [...]}`),
 * byte for byte what printing the whole object prints.
 */
function keptUnder(ctx: RunContext, key: string, view: View): ListWriter {
  let opened = false;
  const indented = (text: string) => text.replaceAll('\n', '\n  ');
  return listWriter(
    'json',
    view,
    async (text) => {
      // Only the list's end comes with a line end: close the object after it.
      const body = text.endsWith('\n') ? `${indented(text.slice(0, -1))}\n}\n` : indented(text);
      await ctx.write(opened ? body : `{\n  ${JSON.stringify(key)}: ${body}`);
      opened = true;
    },
    (m) => ctx.note(m),
  );
}
