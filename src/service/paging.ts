/**
 * Windows over lists: `start`/`end` as a zero-based window [start, end) over a list
 * in id order, the spec's convention for every list that takes them. A window holds
 * at most PAGE_SIZE records (the default when `end` is not given), so every page
 * answers in bounded time; a client pages through a large list window by window. A
 * longer window asked for is answered with its first PAGE_SIZE records, not refused.
 */
import { badRequest } from '../errors.js';

export interface Window {
  start?: number;
  end?: number;
}

/** The default and largest window (the spec's default `end` of 500). */
export const PAGE_SIZE = 500;

/**
 * LIMIT and OFFSET of a window; a 400 naming `end` when it is before `start`. A window
 * longer than PAGE_SIZE holds its first PAGE_SIZE records (the route table cuts it
 * before the service sees it, and says so in a response header: Router's cutWindow).
 */
export function windowOf(w: Window): { limit: number; offset: number } {
  const offset = w.start ?? 0;
  const end = w.end ?? offset + PAGE_SIZE;
  if (end < offset) throw badRequest(`end: must not be before start (${offset}), got ${end}`, { field: 'end' });
  return { limit: Math.min(end - offset, PAGE_SIZE), offset };
}

/**
 * A window's LIMIT and OFFSET as bound values. A bare bound LIMIT or OFFSET makes
 * SQLite (3.47 on) prepare the statement again at every run: the planner reads the
 * value (sqlite3ExprIsInteger), so binding one expires the statement, even to the same
 * value (vdbeUnbind). A page of members paid a new prepare at every request, and a
 * small job's batch query at every job (9 µs a run against 2.4 µs cast, on a 1,000-row
 * table: bench/RESULTS.md). Cast, the values are used as they are, under the one plan.
 * The statements of windows take them in this order, last.
 */
export const LIMIT_OFFSET = 'LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)';
/** The same with named values, @limit and @offset. */
export const LIMIT_OFFSET_NAMED = 'LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER)';
/** A bound LIMIT alone (a step's size that varies), for the same reason. */
export const LIMIT_BOUND = 'LIMIT CAST(? AS INTEGER)';
