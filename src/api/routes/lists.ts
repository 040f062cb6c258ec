/**
 * The windowed lists of one parent record (a campaign's deliveries, a member's events,
 * a workflow's runs, a mailing's opens): GET, `start`/`end`, and `count=true` for how
 * many. Declared once here, so each such route says only what differs.
 */
import * as s from '../schema.js';
import { route, type Route } from '../route.js';
import type { Ctx } from '../../service/context.js';
import type { Window } from '../../service/paging.js';

/** The query of a windowed list: its window and count=true. */
export const listParams = { ...s.windowParams(), count: s.optional(s.flag()) };
export const listQuery = s.object(listParams);

export interface WindowedList<Row> {
  op: string;
  /** With `{<id>}` for the parent record. */
  path: string;
  /** The path parameter naming the parent record. */
  id: string;
  summary: string;
  extension?: boolean;
  /** What one row is, for openapi.json's `returns`. */
  item: string;
  list(ctx: Ctx, id: number, window: Window): Row[];
  count(ctx: Ctx, id: number): number;
  /** A row on the wire (default: as the service answers it). */
  encode?: (row: Row) => unknown;
}

/** A `user` GET of a parent record's rows in a window, or their count with count=true. */
export function windowedList<Row>(r: WindowedList<Row>): Route {
  const encode = r.encode ?? ((row: Row) => row);
  return route({
    op: r.op,
    access: 'user',
    method: 'GET',
    path: r.path,
    summary: r.summary,
    ...(r.extension ? { extension: true } : {}),
    params: s.object({ [r.id]: s.idText() }),
    query: listQuery,
    returns: `array of ${r.item}, or an integer with count=true`,
    handler: ({ ctx, params, query }) => {
      const id = (params as Record<string, number>)[r.id];
      return query.count ? r.count(ctx, id) : r.list(ctx, id, query).map(encode);
    },
  });
}
