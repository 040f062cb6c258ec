import type { Ctx } from '../service/context.js';
import type { Access } from '../service/accounts/accounts.js';
import type { Schema, Infer } from './schema.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A non-JSON answer (CSV, zip): the content type and the bytes or a stream of them.
 * A stream is read as it is sent, so a handler checks everything that can fail with
 * an ordinary error answer before returning one (a generator's body runs late).
 */
export interface RawBody {
  contentType: string;
  filename?: string;
  data: Buffer | string | Iterable<Buffer | string> | AsyncIterable<Buffer | string>;
}

/** An answer with response headers of its own (e.g. how much a search could not look at); the local transport sees only the body. */
export class WithHeaders {
  constructor(
    readonly body: unknown,
    readonly headers: Record<string, string>,
  ) {}
}

export interface RouteInput<P, Q, B> {
  ctx: Ctx;
  params: P;
  query: Q;
  body: B;
  /**
   * The body as the JSON text it came in (HTTP), for a handler that stores it as it
   * is instead of writing the parsed value out again; undefined from the local
   * transport, which hands over the value.
   */
  text?: string;
}

/**
 * One operation of the service interface: the single declaration that the HTTP
 * server, the local transport and /openapi.json all read.
 */
// biome-ignore lint/suspicious/noExplicitAny: a route of any schema fits the table; each route's own types are inferred by route()
export interface Route<P = any, Q = any, B = any> {
  /** Operation id, `resource.verb`, used by openapi.json and error messages. */
  op: string;
  method: Method;
  /** Spec notation, with `{name}` placeholders; `{account_id}` is the first segment (second in the ingestion route's `/v1/{account_id}/events`). */
  path: string;
  summary: string;
  /** True for operations the spec does not list (groups, keys, users …). */
  extension?: boolean;
  /**
   * Who may call it (the permission table: `mayCall` in src/service/accounts/accounts.ts):
   * `user` reads and day-to-day writes, `manager` bulk and destructive work, `people`
   * users and keys (owners, managers with manage_users), `billing` billing access.
   */
  access: Access;
  params?: Schema<P>;
  query?: Schema<Q>;
  body?: Schema<B>;
  /**
   * false: a GET whose answer is one statement after the memos (a member by id) reads
   * without a read snapshot: one statement is its own snapshot, and the snapshot's
   * BEGIN, generation check and COMMIT cost more than that read (bench/RESULTS.md).
   */
  snapshot?: false;
  /** What the answer is, for openapi.json (e.g. 'member', 'true', 'integer'). */
  returns: string;
  handler(input: RouteInput<P, Q, B>): unknown | Promise<unknown>;
}

/** Declares a route with its input types inferred from its schemas. */
// biome-ignore lint/suspicious/noExplicitAny: a route of any schema fits the table; each route's own types are inferred by route()
export function route<PS extends Schema<any> | undefined, QS extends Schema<any> | undefined, BS extends Schema<any> | undefined>(
  r: Omit<Route, 'params' | 'query' | 'body' | 'handler'> & {
    params?: PS;
    query?: QS;
    body?: BS;
    handler(
      input: RouteInput<
        PS extends Schema<unknown> ? Infer<PS> : Record<string, never>,
        QS extends Schema<unknown> ? Infer<QS> : Record<string, never>,
        BS extends Schema<unknown> ? Infer<BS> : Record<string, never>
      >,
    ): unknown | Promise<unknown>;
  },
): Route {
  return r as Route;
}
