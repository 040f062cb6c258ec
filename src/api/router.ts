import { addRoute, createRouter, findRoute, type RouterContext } from 'rou3';
import { compileRouter } from 'rou3/compiler';
import type { Db } from '../store/db.js';
import type { Clock } from '../service/clock.js';
import type { Actor, Ctx } from '../service/context.js';
import type { ImportWriter } from '../service/imports/import-writer.js';
import { accountAccessible, ACCESS_NEEDS, mayCall } from '../service/accounts/accounts.js';
import { ApiError, WINDOW_CUT_HEADER, windowCutText } from '../errors.js';
import { PAGE_SIZE, type Window } from '../service/paging.js';
import { boundedJson, idText, invalid, object, parseLenient } from './schema.js';
import { WithHeaders, type Method, type RawBody, type Route } from './route.js';
import { ROUTES } from './routes/index.js';
import { openapiDocument } from './openapi.js';
import { readInTurn } from '../store/memo.js';
import { VERSION } from '../version.js';

export interface ApiRequest {
  method: string;
  /** The path without the query string, still percent-encoded. */
  path: string;
  query: Record<string, string>;
  /** The request body text; JSON whatever the Content-Type said. Empty means `{}`. */
  body?: string;
  /**
   * The body already as a value (the local transport): the same as `body` would
   * parse to, without writing and reading the JSON text of a large import batch.
   */
  json?: unknown;
  actor: Actor;
}

export interface ApiResponse {
  status: number;
  body?: unknown;
  raw?: RawBody;
  /** Extra HTTP headers (the local transport has no use for them). */
  headers?: Record<string, string>;
  /** Query and body keys the operation does not know and ignored (named in IGNORED_HEADER). */
  ignored?: string[];
}

/** The response header that names the request's ignored parameters, so a typo stays visible. */
export const IGNORED_HEADER = 'x-amsg-ignored-parameters';

export interface RouterOptions {
  /** Unknown query and body keys are a 400 (`amsg serve --strict`), as they were before the real clients ran here. */
  strict?: boolean;
}

const NO_INPUT = object({});
const ACCOUNT_ID = idText();

interface Match {
  route: Route;
  /** Placeholder names in path order; the matcher sees them as p0, p1, … */
  names: string[];
}

/**
 * The route table bound to one database: turns a request into a service call and
 * its answer into a status and JSON body. Used by `amsg serve` and by the local
 * transport, so both answer the same for the same request.
 */
export class Router {
  // rou3 (the h3 router): static segments win over parameters, so
  // /members/imports is never member "imports". Chosen over find-my-way, which
  // cost ~50 ms of every local command's start (bench/RESULTS.md).
  private readonly matcher: RouterContext<Match> = createRouter<Match>();

  constructor(
    readonly db: Db,
    readonly clock: Clock,
    readonly routes: Route[] = ROUTES,
    /** Writes streamed-import batches on its own thread (none: they are written here). */
    readonly importWriter?: ImportWriter,
    readonly options: RouterOptions = {},
  ) {
    for (const route of routes) {
      const key = resourceSegment(route.path);
      if (key === undefined) this.add(route);
      else this.pending.set(key, [...(this.pending.get(key) ?? []), route]);
    }
  }

  /**
   * Routes not yet in the matcher, by their first literal segment ("members" of
   * /{account_id}/members/{member_id}). A local command makes one or two requests,
   * so building the tree of every route cost it more than its request did; a
   * resource's routes go in before the first request that can match them.
   */
  private readonly pending = new Map<string, Route[]>();

  private add(route: Route) {
    const names: string[] = [];
    // Placeholders become positional names: two routes may call the same position
    // {member_id} and {group_id} (e.g. /members/{member_id}/groups and
    // /members/{group_id}/copy), and a radix tree wants one name per position.
    const pattern = route.path.replace(/\{(\w+)\}/g, (_, name: string) => `:p${names.push(name) - 1}`);
    addRoute(this.matcher, route.method, pattern, { route, names });
  }

  /**
   * Every route in the matcher now: a server answers many requests, so it builds the
   * tree once at start instead of looking at each path for routes still pending.
   */
  addAllRoutes() {
    for (const routes of this.pending.values()) routes.forEach((route) => this.add(route));
    this.pending.clear();
    // rou3's compiled matcher: one generated function for the whole table, answering
    // what findRoute answers without splitting the path and walking the tree (a
    // measurable share of a member GET's cost, bench/RESULTS.md).
    this.compiled = compileRouter(this.matcher);
  }

  /** The whole table as one function, once every route is in (addAllRoutes). */
  private compiled?: (method: string, path: string) => ReturnType<typeof findRoute<Match>>;

  private match(method: string, path: string) {
    if (this.compiled) return this.compiled(method, path);
    if (this.pending.size) this.addRoutesFor(path);
    return findRoute(this.matcher, method, path);
  }

  /** A route's literal segment is the same text in every path it matches: the path's first or second segment. */
  private addRoutesFor(path: string) {
    const [, first, second] = path.split('/', 3);
    for (const segment of [first, second]) {
      const routes = segment === undefined ? undefined : this.pending.get(segment);
      if (!routes) continue;
      this.pending.delete(segment);
      routes.forEach((route) => this.add(route));
    }
  }

  /**
   * Answers a request. Synchronous handlers (nearly all: better-sqlite3 is
   * synchronous) answer synchronously, so the server can write the response in the
   * same tick as the request arrived; only handlers that stream or wait answer a
   * promise.
   */
  handle(req: ApiRequest): ApiResponse | Promise<ApiResponse> {
    try {
      const found = this.match(req.method, req.path);
      // A GET never writes (test/api/get-never-writes.test.ts), so its reads share one
      // snapshot: one read lock instead of one a statement, one memo check. An
      // answer that streams (a download) reads after this, outside it.
      const result =
        req.method === 'GET'
          ? readInTurn(this.db, () => this.dispatch(req, found), found?.data.route.snapshot !== false)
          : this.dispatch(req, found);
      return result instanceof Promise ? result.catch(errorResponse) : result;
    } catch (err) {
      return errorResponse(err);
    }
  }

  private dispatch(req: ApiRequest, found: ReturnType<typeof findRoute<Match>>): ApiResponse | Promise<ApiResponse> {
    if (req.method === 'GET' && req.path === '/openapi.json') return { status: 200, body: openapiDocument(this.routes, VERSION) };
    if (!found) {
      const other = this.allowedMethods(req.path);
      // HTTP requires a 405 to list the allowed methods in an Allow header too.
      if (other.length)
        return {
          ...errorResponse(new ApiError(405, `${req.method} is not allowed on ${req.path} (allowed: ${other.join(', ')})`)),
          headers: { allow: other.join(', ') },
        };
      throw new ApiError(404, `no such operation: ${req.method} ${req.path}`);
    }
    const { route, names } = found.data;
    // The HQ routes name their account {parent_account_id}; it is checked the same way.
    let accountText: string | undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const value = decodeSegment(found.params![`p${i}`], req.path);
      if (names[i] === 'account_id' || names[i] === 'parent_account_id') accountText ??= value;
      else params[names[i]] = value;
    }
    const ctx = this.context(req.actor, accountText);
    // After the account check: another account's id is a 404 whoever asks.
    if (!mayCall(req.actor, route.access))
      throw new ApiError(
        403,
        `forbidden: ${route.op} needs ${ACCESS_NEEDS[route.access]} (this key's user ${req.actor.email} has role ${req.actor.role})`,
        { operation: route.op, access: route.access },
      );
    const { value: input, ignored } = parseLenient(
      () => ({
        ctx,
        params: route.params ? route.params.parse(params, '') : params,
        query: (route.query ?? NO_INPUT).parse(req.query, ''),
        body: route.body ? route.body.parse(bodyOf(req), '') : {},
        text: req.json === undefined ? req.body : undefined,
      }),
      !!this.options.strict,
    );
    const cut = isWindowed(route) ? cutWindow(input.query as Window & { count?: boolean }) : undefined;
    if (!ignored.length && !cut) {
      const result = route.handler(input);
      return result instanceof Promise ? result.then(answer) : answer(result);
    }
    // The ignored keys are named on every answer, an error too: a typo may be its cause.
    // Encoded before the handler runs: a name is request data, and a header value that
    // node refuses would be found only after the handler's writes (see headerSafeName).
    const safeNames = ignored.length ? ignored.map(headerSafeName) : undefined;
    const header = safeNames?.join(', ');
    const named = (r: ApiResponse): ApiResponse => ({
      ...r,
      ignored: safeNames,
      headers: {
        ...r.headers,
        ...(header !== undefined ? { [IGNORED_HEADER]: header } : {}),
        // A cut window is said on the list it cut, not on an error.
        ...(cut && r.status < 400 ? { [WINDOW_CUT_HEADER]: cut } : {}),
      },
    });
    let result: unknown;
    try {
      result = route.handler(input);
    } catch (err) {
      return named(errorResponse(err));
    }
    return result instanceof Promise ? result.then(answer, errorResponse).then(named) : named(answer(result));
  }

  private context(actor: Actor, accountText: string | undefined): Ctx {
    if (accountText === undefined)
      return { db: this.db, clock: this.clock, actor, accountId: actor.account_id, importWriter: this.importWriter };
    const accountId = ACCOUNT_ID.parse(accountText, 'account_id');
    // Another account's id answers as if it did not exist: a key never learns what
    // accounts there are beyond its own reach.
    if (!accountAccessible(this.db, actor, accountId)) throw new ApiError(404, `account ${accountId} not found`);
    return { db: this.db, clock: this.clock, actor, accountId, importWriter: this.importWriter };
  }

  private allowedMethods(path: string): string[] {
    const methods: Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    return methods.filter((m) => findRoute(this.matcher, m, path));
  }
}

/** Routes whose query takes a start/end window (windowParams), found once per route. */
const WINDOWED = new WeakMap<Route, boolean>();
function isWindowed(route: Route): boolean {
  let windowed = WINDOWED.get(route);
  if (windowed === undefined) {
    const properties = (route.query?.json() as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    WINDOWED.set(route, (windowed = 'start' in properties && 'end' in properties));
  }
  return windowed;
}

/**
 * A window asked longer than PAGE_SIZE is cut to its first PAGE_SIZE records, never
 * refused (DESIGN.md: real clients ask for large windows, and the real service pages at
 * 500): the query's end is moved in, and the answer says so in WINDOW_CUT_HEADER
 * (the header's text, or undefined when the window was not cut). A count answers the
 * number of records, not a window: cut, but not said.
 */
function cutWindow(query: Window & { count?: boolean }): string | undefined {
  if (query.end === undefined) return undefined;
  const start = query.start ?? 0;
  if (query.end - start <= PAGE_SIZE) return undefined;
  const asked = query.end;
  query.end = start + PAGE_SIZE;
  return query.count ? undefined : windowCutText({ start, end: query.end, asked });
}

/** Printable ASCII but `%` (the escape) and `,` (the separator of the header's list). */
const PLAIN_NAME = /^[\x20-\x24\x26-\x2b\x2d-\x7e]*$/;
const PLAIN_CHAR = /^[\x20-\x24\x26-\x2b\x2d-\x7e]$/;

/**
 * A parameter name as it can go into a header and a log line: a header value is
 * Latin-1 without control characters (node throws on anything else), and a name is
 * whatever a client sent (`北京`, a lone surrogate, `a\nb`). Each other character is
 * percent-encoded as UTF-8 (a lone surrogate as U+FFFD), so `北京` reads
 * `%E5%8C%97%E4%BA%AC` as it would in a URL.
 */
export function headerSafeName(name: string): string {
  if (PLAIN_NAME.test(name)) return name;
  let out = '';
  for (const ch of name)
    out += PLAIN_CHAR.test(ch)
      ? ch
      : Array.from(Buffer.from(ch, 'utf8'), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  return out;
}

/** The first literal segment of a route's path if it is the first or second segment (all of the table's are). */
function resourceSegment(path: string): string | undefined {
  const [, first, second] = path.split('/', 3);
  for (const segment of [first, second]) if (segment !== undefined && !segment.startsWith('{')) return segment;
  return undefined;
}

/**
 * Decodes one path segment once: an e-mail arrives as `a%40b.org` or `a@b.org`, and
 * a `+` is a plus (this is a path, not a form).
 */
function decodeSegment(segment: string, path: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalid('', `the path ${path} is not valid percent-encoding`);
  }
}

/**
 * The body as a value: the value the local transport handed over, or the text parsed.
 * Either way its depth is bounded here, once for every route (JSON.parse itself
 * does not recurse, but the checks and messages after it do).
 */
function bodyOf(req: ApiRequest): unknown {
  return boundedJson(req.json !== undefined && req.json !== null ? req.json : parseBody(req.body), '');
}

/** An empty body and a JSON null are `{}`: the real service's clients send both for "no parameters". */
function parseBody(text: string | undefined): unknown {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid('', `request body is not valid JSON (${(err as Error).message})`);
  }
  return value === null ? {} : value;
}

function answer(result: unknown): ApiResponse {
  if (isRaw(result)) return { status: 200, raw: result };
  if (result instanceof WithHeaders) return { ...answer(result.body), headers: result.headers };
  // A bare null or an empty body is never an answer (see the spec's conventions).
  return { status: 200, body: result === undefined || result === null ? true : result };
}

function isRaw(v: unknown): v is RawBody {
  return !!v && typeof v === 'object' && 'contentType' in v && 'data' in v;
}

export function errorResponse(err: unknown): ApiResponse {
  if (err instanceof ApiError) return { status: err.status, body: err.body };
  const code = (err as { code?: string }).code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
    return { status: 503, body: { error: 'the database is busy with another writer; retry' } };
  // Anything else is a bug in amsg: say so without leaking a stack trace to the caller.
  process.emitWarning(err instanceof Error ? (err.stack ?? err.message) : String(err), 'AmsgInternalError');
  return { status: 500, body: { error: `internal error: ${(err as Error)?.message ?? String(err)}` } };
}
