/**
 * Saved searches, and segments, which are saved searches seen from mailings and
 * exports (one table, one id space: a segment id is a search id).
 *
 * Criteria are the real service's nested JSON lists:
 *
 *   ["and", ["member_field:city", "eq", "Oslo"], ["group", "eq", "Gold"]]
 *
 * They are validated completely when saved, stored as compact JSON text, and compiled
 * to one SQL boolean expression over the member row `m` (with bound parameters) every
 * time the search runs, so a search never loads members into JS.
 *
 * Which reads are exact: mailing sends and exports run the criteria when they resolve
 * their audience (searchMembersSql), so they get the truth of that moment. Reading a
 * search (its counts) and its member list answer a stored result instead ("The stored
 * result" below), computed when the search is saved and refreshed in the background,
 * so a GET costs the same at 1k and at 1M members and never writes.
 *
 * Names are looked up when the search runs: a field, group or subscription renamed or
 * deleted after the search was saved makes the conditions that name it match nobody
 * (refer to groups and subscriptions by id to survive renames). Other searches are
 * referred to by id only, so a saved search can refuse a cycle and a search another
 * one uses cannot be deleted.
 */
import type { Statement } from 'better-sqlite3';
import { inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import { boundedJson } from '../../errors.js';
import { coerceValue, preview } from '../../values.js';
import { localActor, RETIRED_ACCOUNTS } from '../accounts/accounts.js';
import { stamp, type Clock } from '../clock.js';
import type { Ctx } from '../context.js';
import { FieldCatalog, type FieldRecord } from './fields.js';
import { MEMBER_STATUSES, toMember, type MemberRecord, type MemberRow } from './members.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';

export interface SearchRecord {
  search_id: number;
  account_id: number;
  name: string;
  /** The nested condition list as JSON text (the spec's "string containing a JSON-encoded nested condition list"). */
  criteria: string;
  active_count: number;
  error_count: number;
  optout_count: number;
  cached_at: string | null;
  last_run_at: string | null;
  deleted_at: string | null;
  purged_at: string | null;
}

interface SearchRow {
  search_id: number;
  account_id: number;
  name: string;
  criteria: string;
  /** When the stored result was computed (both; NULL before the first computation). */
  cached_at: string | null;
  last_run_at: string | null;
  created_at: string;
  deleted_at: string | null;
  purged_at: string | null;
  active_count: number;
  error_count: number;
  optout_count: number;
  /** Rows of the search in search_results. */
  member_count: number;
  compute_ms: number;
  stale_since: string | null;
}

interface Sql {
  sql: string;
  params: unknown[];
}

// ---------------------------------------------------------------- the criteria language

export const PREDICATES = ['and', 'or', 'not'] as const;
export const OPERATORS = ['eq', 'lt', 'gt', 'between', 'contains', 'in', 'any'] as const;
type Operator = (typeof OPERATORS)[number];

const SUBJECTS_HINT = 'member_field:<shortcut_name>, member:email, member_status_id, member_since, group, subscription, search, segment';

/** Limits that keep one search's SQL within SQLite's expression depth and parameter count. */
const MAX_DEPTH = 32;
const MAX_CONDITIONS = 1000;

const TEXT_OPERATORS: Operator[] = ['eq', 'lt', 'gt', 'between', 'contains', 'in'];
const ORDERED_OPERATORS: Operator[] = ['eq', 'lt', 'gt', 'between', 'in'];
const MEMBERSHIP_OPERATORS: Operator[] = ['eq', 'in', 'any'];
const FIELD_OPERATORS: Record<FieldRecord['field_type'], Operator[]> = {
  text: TEXT_OPERATORS,
  'text[]': ['eq', 'contains', 'in', 'any'],
  numeric: ORDERED_OPERATORS,
  boolean: ['eq'],
  date: ORDERED_OPERATORS,
  timestamp: ORDERED_OPERATORS,
};

const show = (v: unknown): string => preview(v, 60);

/** A 400 naming the place inside the criteria (criteria[2][1]) and the reason. */
const refuse = (path: string, reason: string) => badRequest(`${path}: ${reason}`, { field: path });

/** `*` any run of characters, `?` one character; the whole value must match (LIKE is case-insensitive for ASCII). */
function globToLike(glob: string): string {
  return glob
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, '%')
    .replace(/\?/g, '_');
}

/** Joins many operands as a balanced tree, so a long "and" does not nest SQL one level per operand. */
function combine(parts: string[], op: 'AND' | 'OR'): string {
  if (parts.length === 1) return parts[0];
  const half = Math.ceil(parts.length / 2);
  return `(${combine(parts.slice(0, half), op)} ${op} ${combine(parts.slice(half), op)})`;
}

const NEVER: Sql = { sql: '0', params: [] };
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Compiles criteria to SQL over the member row `m`.
 *
 * Saving (`strict`) refuses every problem with a 400 naming its path. Running is
 * lenient about what changed since the search was saved (a field, group or
 * subscription gone, a field's type changed): such a condition matches nobody.
 * Problems of shape cannot arise when running, since only valid criteria are stored.
 */
class Compiler {
  private conditions = 0;
  /** The searches being inlined, outermost first (the saved search itself first, when it has an id). */
  private readonly stack: number[];
  /** Path, in the criteria being compiled, of the search reference being inlined (cycles are reported there). */
  private referencePath: string | null = null;
  private readonly catalog: FieldCatalog;

  constructor(
    private readonly ctx: Ctx,
    private readonly strict: boolean,
    selfId?: number,
  ) {
    this.stack = selfId === undefined ? [] : [selfId];
    this.catalog = FieldCatalog.of(ctx);
  }

  compile(criteria: unknown, path = 'criteria'): Sql {
    return this.node(criteria, path, 0);
  }

  /** True while compiling the criteria being saved (not the stored searches they use). */
  private get checking(): boolean {
    return this.strict && this.referencePath === null;
  }

  /** A reference that does not resolve: refused when saving, matches nobody when running. */
  private unresolved(path: string, reason: string): Sql {
    if (this.checking) throw refuse(path, reason);
    return NEVER;
  }

  private node(v: unknown, path: string, depth: number): Sql {
    if (!Array.isArray(v))
      throw refuse(
        path,
        `must be a list: a predicate ["and" | "or" | "not", …] or a condition [subject, operator, value…], got ${show(v)}`,
      );
    if (!v.length) throw refuse(path, 'must not be an empty list');
    if (depth >= MAX_DEPTH)
      throw refuse(this.referencePath ?? path, `nests too deep (at most ${MAX_DEPTH} levels, nested searches included)`);
    const head = v[0];
    if (typeof head !== 'string')
      throw refuse(`${path}[0]`, `must be a predicate (and, or, not) or a subject (${SUBJECTS_HINT}), got ${show(head)}`);
    if ((PREDICATES as readonly string[]).includes(head)) return this.predicate(head, v, path, depth);
    if ((PREDICATES as readonly string[]).includes(head.toLowerCase()))
      throw refuse(`${path}[0]`, `predicates are lower case: "${head.toLowerCase()}", not "${head}"`);
    if (++this.conditions > MAX_CONDITIONS)
      throw refuse('criteria', `has too many conditions (at most ${MAX_CONDITIONS}, nested searches included)`);
    const sql = this.condition(v, path, depth);
    // A condition on a missing value is SQL NULL; "not" of it must still be true.
    return sql === NEVER ? sql : { sql: `COALESCE(${sql.sql}, 0)`, params: sql.params };
  }

  private predicate(name: string, v: unknown[], path: string, depth: number): Sql {
    const operands = v.slice(1);
    if (name === 'not' && operands.length !== 1) throw refuse(path, `"not" takes exactly one condition, got ${operands.length}`);
    if (!operands.length) throw refuse(path, `"${name}" takes at least one condition`);
    const parts = operands.map((operand, i) => this.node(operand, `${path}[${i + 1}]`, depth + 1));
    const params = parts.flatMap((p) => p.params);
    if (name === 'not') return { sql: `(NOT ${parts[0].sql})`, params };
    return {
      sql: combine(
        parts.map((p) => p.sql),
        name === 'and' ? 'AND' : 'OR',
      ),
      params,
    };
  }

  private condition(v: unknown[], path: string, depth: number): Sql {
    const subject = v[0] as string;
    if (v.length < 2) throw refuse(path, `a condition is [subject, operator, value…]; the operator is missing`);
    const op = v[1];
    if (typeof op !== 'string' || !(OPERATORS as readonly string[]).includes(op))
      throw refuse(`${path}[1]`, `unknown operator ${show(op)} (${OPERATORS.join(', ')})`);
    const operator = op as Operator;
    const values = v.slice(2);
    const applies = (label: string, allowed: Operator[]) => {
      if (!allowed.includes(operator))
        throw refuse(`${path}[1]`, `operator "${operator}" does not apply to ${label} (${allowed.join(', ')})`);
      checkArity(operator, values, path);
    };

    if (subject.startsWith('member_field:')) {
      const name = subject.slice('member_field:'.length);
      const field = this.catalog.byName.get(name.toLowerCase());
      if (!field) {
        if (!name) throw refuse(`${path}[0]`, 'names no field: write member_field:<shortcut_name>');
        // The shape is checked even for an unknown field, so the message names the first problem.
        checkArity(operator, values, path);
        return this.unresolved(`${path}[0]`, `unknown field "${name}" (see GET /fields)`);
      }
      try {
        applies(`${field.field_type} field "${field.shortcut_name}"`, FIELD_OPERATORS[field.field_type]);
        return this.field(field, operator, values, path);
      } catch (err) {
        // The field's type changed since the search was saved (allowed while it held no values).
        if (this.checking || !(err instanceof ApiError)) throw err;
        return NEVER;
      }
    }
    switch (subject) {
      case 'member:email':
      case 'email':
        applies('member:email', TEXT_OPERATORS);
        return this.text('m.email', operator, values, path);
      case 'member_status_id':
      case 'member:status': {
        applies('member_status_id', ['eq', 'in']);
        const status = (value: unknown, at: string) => {
          if (typeof value !== 'string' || !(MEMBER_STATUSES as readonly string[]).includes(value))
            throw refuse(at, `must be a member status (${MEMBER_STATUSES.join(', ')}), got ${show(value)}`);
          return value;
        };
        return operator === 'eq'
          ? { sql: 'm.member_status_id = ?', params: [status(values[0], `${path}[2]`)] }
          : {
              sql: 'm.member_status_id IN (SELECT value FROM json_each(?))',
              params: [JSON.stringify(listOf(values[0], `${path}[2]`, status))],
            };
      }
      case 'member_since':
        applies('member_since', ORDERED_OPERATORS);
        return this.moment('m.member_since', operator, values, path);
      case 'group':
        applies('group', MEMBERSHIP_OPERATORS);
        return this.membership(
          operator,
          values,
          path,
          'group',
          'SELECT member_group_id FROM member_groups WHERE account_id = ? AND deleted_at IS NULL AND',
          'member_group_id',
          'group_name',
          (ids) => ({
            sql: 'm.member_id IN (SELECT member_id FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?)))',
            params: [ids],
          }),
        );
      case 'subscription':
        applies('subscription', MEMBERSHIP_OPERATORS);
        return this.membership(
          operator,
          values,
          path,
          'subscription',
          'SELECT subscription_id FROM subscriptions WHERE account_id = ? AND deleted_at IS NULL AND',
          'subscription_id',
          'subscription_name',
          // Subscribed members only: one who opted out of the subscription is no longer in it.
          (ids) => ({
            sql: `m.member_id IN (SELECT member_id FROM subscription_members
                   WHERE subscription_id IN (SELECT value FROM json_each(?)) AND status = 'subscribed')`,
            params: [ids],
          }),
        );
      case 'search':
      case 'segment':
        applies(subject, MEMBERSHIP_OPERATORS);
        return this.searches(subject, operator, values, path, depth);
      default:
        throw refuse(`${path}[0]`, `unknown subject ${show(subject)} (${SUBJECTS_HINT})`);
    }
  }

  // ------------------------------------------------------------ custom fields

  private field(field: FieldRecord, operator: Operator, values: unknown[], path: string): Sql {
    // field_values is keyed by the field id as text. The id is an integer from the
    // fields table, so the JSON path is written into the SQL rather than bound: the
    // expression then stays whole wherever it is placed (inside json_each, a substr …).
    if (!Number.isSafeInteger(field.field_id)) throw new Error(`field id ${field.field_id} is not an integer`);
    const key = `'$."${field.field_id}"'`;
    const value = `json_extract(m.field_values, ${key})`;
    switch (field.field_type) {
      case 'text':
        return this.text(value, operator, values, path);
      case 'text[]': {
        // The member's list holds an item that satisfies the condition.
        const item = this.text('e.value', operator === 'any' ? 'in' : operator, values, path);
        return { sql: `EXISTS (SELECT 1 FROM json_each(m.field_values, ${key}) e WHERE ${item.sql})`, params: item.params };
      }
      case 'numeric':
        return this.ordered(value, operator, values, path, (v, at) => coerceValue(field, v, at) as number);
      case 'boolean':
        return { sql: `${value} = ?`, params: [coerceValue(field, values[0], `${path}[2]`) ? 1 : 0] };
      case 'date':
        return this.ordered(value, operator, values, path, (v, at) => coerceValue(field, v, at) as string);
      case 'timestamp':
        return this.moment(value, operator, values, path);
    }
  }

  /** Text compared case-insensitively (ASCII, as SQLite's NOCASE and LIKE do). */
  private text(expr: string, operator: Operator, values: unknown[], path: string): Sql {
    const text = (v: unknown, at: string) => {
      if (typeof v === 'number' && Number.isFinite(v)) return String(v);
      if (typeof v !== 'string') throw refuse(at, `must be text, got ${show(v)}`);
      return v;
    };
    if (operator === 'contains') {
      const glob = values[0];
      if (typeof glob !== 'string' || !glob)
        throw refuse(`${path}[2]`, `"contains" takes a glob pattern (* any run of characters, ? one character), got ${show(glob)}`);
      return { sql: `${expr} LIKE ? ESCAPE '\\'`, params: [globToLike(glob)] };
    }
    return this.ordered(`${expr} COLLATE NOCASE`, operator, values, path, text);
  }

  /** eq, lt, gt, between (inclusive) and in, on a value whose stored form compares as the SQL value does. */
  private ordered<T>(expr: string, operator: Operator, values: unknown[], path: string, read: (v: unknown, at: string) => T): Sql {
    switch (operator) {
      case 'eq':
        return { sql: `${expr} = ?`, params: [read(values[0], `${path}[2]`)] };
      case 'lt':
        return { sql: `${expr} < ?`, params: [read(values[0], `${path}[2]`)] };
      case 'gt':
        return { sql: `${expr} > ?`, params: [read(values[0], `${path}[2]`)] };
      case 'between':
        return { sql: `${expr} BETWEEN ? AND ?`, params: [read(values[0], `${path}[2]`), read(values[1], `${path}[3]`)] };
      default:
        return { sql: `${expr} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(listOf(values[0], `${path}[2]`, read))] };
    }
  }

  /**
   * Points in time stored as 'YYYY-MM-DDThh:mm:ss…'. A date compares the day, a date and
   * time compares to the second: the stored text is cut to the length of the value.
   */
  private moment(expr: string, operator: Operator, values: unknown[], path: string): Sql {
    const compare = (sign: string, at: number): Sql => {
      const v = dateOrDateTime(values[at - 2], `${path}[${at}]`);
      return { sql: `substr(${expr}, 1, ${v.length}) ${sign} ?`, params: [v] };
    };
    switch (operator) {
      case 'eq':
        return compare('=', 2);
      case 'lt':
        return compare('<', 2);
      case 'gt':
        return compare('>', 2);
      case 'between': {
        const [low, high] = [compare('>=', 2), compare('<=', 3)];
        return { sql: `(${low.sql} AND ${high.sql})`, params: [...low.params, ...high.params] };
      }
      default:
        return {
          sql: `EXISTS (SELECT 1 FROM json_each(?) v WHERE substr(${expr}, 1, length(v.value)) = v.value)`,
          params: [JSON.stringify(listOf(values[0], `${path}[2]`, dateOrDateTime))],
        };
    }
  }

  // ------------------------------------------------------------ groups, subscriptions, searches

  /**
   * Membership of groups or subscriptions given by id (an integer) or name (text, any
   * case; digits that name none are taken as an id). Names are resolved now, so a
   * rename changes what a name means.
   */
  private membership(
    operator: Operator,
    values: unknown[],
    path: string,
    what: string,
    live: string,
    idColumn: string,
    nameColumn: string,
    members: (idsJson: string) => Sql,
  ): Sql {
    const refs = operator === 'eq' ? [[values[0], `${path}[2]`] as const] : listOf(values[0], `${path}[2]`, (v, at) => [v, at] as const);
    const byId = stmt(this.ctx.db, `${live} ${idColumn} = ?`).pluck();
    const byName = stmt(this.ctx.db, `${live} ${nameColumn} = ? COLLATE NOCASE`).pluck();
    const ids: number[] = [];
    for (const [ref, at] of refs) {
      let id: number | undefined;
      if (typeof ref === 'number' && Number.isSafeInteger(ref)) id = byId.get(this.ctx.accountId, ref) as number | undefined;
      else if (typeof ref === 'string' && ref.trim()) {
        id = byName.get(this.ctx.accountId, ref.trim()) as number | undefined;
        if (id === undefined && /^\d{1,16}$/.test(ref.trim())) id = byId.get(this.ctx.accountId, Number(ref)) as number | undefined;
      } else throw refuse(at, `must be a ${what} id or name, got ${show(ref)}`);
      if (id === undefined) this.unresolved(at, `unknown ${what} ${typeof ref === 'number' ? ref : `"${ref}"`} (see GET /${what}s)`);
      else ids.push(id);
    }
    return ids.length ? members(JSON.stringify([...new Set(ids)])) : NEVER;
  }

  /** Members of other saved searches, by id: their criteria are compiled in place. */
  private searches(subject: string, operator: Operator, values: unknown[], path: string, depth: number): Sql {
    const refs = operator === 'eq' ? [[values[0], `${path}[2]`] as const] : listOf(values[0], `${path}[2]`, (v, at) => [v, at] as const);
    const parts: Sql[] = [];
    for (const [ref, at] of refs) {
      const id = typeof ref === 'number' ? ref : typeof ref === 'string' && /^\d{1,16}$/.test(ref) ? Number(ref) : NaN;
      if (!Number.isSafeInteger(id) || id < 1) throw refuse(at, `a ${subject} is referred to by its id (an integer), got ${show(ref)}`);
      const row = stmt(
        this.ctx.db,
        'SELECT search_id, name, criteria FROM searches WHERE account_id = ? AND search_id = ? AND deleted_at IS NULL',
      ).get(this.ctx.accountId, id) as Pick<SearchRow, 'search_id' | 'name' | 'criteria'> | undefined;
      if (!row) {
        this.unresolved(at, `unknown ${subject} ${id} (see GET /searches)`);
        continue;
      }
      if (this.stack.includes(id)) {
        const chain = [...this.stack.slice(this.stack.indexOf(id)), id].join(' → ');
        // Saving refuses it; a cycle in stored searches (which saving prevents) matches nobody.
        if (this.strict) throw refuse(this.referencePath ?? at, `a search cannot contain itself (search ${chain})`);
        continue;
      }
      const outer = this.referencePath;
      this.referencePath ??= at;
      this.stack.push(id);
      try {
        parts.push(this.node(JSON.parse(row.criteria), `${subject} ${id}`, depth + 1));
      } finally {
        this.stack.pop();
        this.referencePath = outer;
      }
    }
    if (!parts.length) return NEVER;
    return {
      sql: combine(
        parts.map((p) => p.sql),
        'OR',
      ),
      params: parts.flatMap((p) => p.params),
    };
  }
}

/** The operand count each operator takes (in and any take one list). */
function checkArity(operator: Operator, values: unknown[], path: string) {
  const want = operator === 'between' ? 2 : 1;
  if (values.length === want) return;
  if (operator === 'between') throw refuse(path, `"between" takes two values (low and high, inclusive), got ${values.length}`);
  if (operator === 'in' || operator === 'any')
    throw refuse(path, `"${operator}" takes one list of values, e.g. [subject, "${operator}", ["a", "b"]], got ${values.length} operands`);
  throw refuse(path, `"${operator}" takes one value, got ${values.length}`);
}

/** The operand of in and any: a non-empty list, each item read at its own path. */
function listOf<T>(value: unknown, path: string, read: (v: unknown, at: string) => T): T[] {
  if (!Array.isArray(value) || !value.length) throw refuse(path, `must be a non-empty list of values, got ${show(value)}`);
  return value.map((v, i) => read(v, `${path}[${i}]`));
}

/** A date (the day) or a date and time (to the second, in UTC), as stored timestamps begin. */
function dateOrDateTime(value: unknown, path: string): string {
  const kind = typeof value === 'string' && DATE_ONLY.test(value.trim()) ? 'date' : 'timestamp';
  const pseudo = { shortcut_name: path, field_type: kind, options: null } as unknown as FieldRecord;
  try {
    return coerceValue(pseudo, value, path) as string;
  } catch {
    throw refuse(path, `must be a date YYYY-MM-DD or a date-time YYYY-MM-DDThh:mm:ss, got ${show(value)}`);
  }
}

/** Criteria as JSON text or as the JSON value; answers the value and its stored text. */
function readCriteria(input: unknown): { value: unknown; text: string } {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (err) {
      throw refuse('criteria', `is not valid JSON (${(err as Error).message})`);
    }
  }
  // JSON text inside a body is bounded like the body (the compiler and stringify recurse).
  return { value: boundedJson(value, 'criteria'), text: JSON.stringify(value) };
}

// ---------------------------------------------------------------- ids named in stored criteria

/** The ids of the searches a stored criteria list refers to (search and segment conditions). */
function referencedSearches(criteriaText: string): number[] {
  const ids: number[] = [];
  const walk = (v: unknown) => {
    if (!Array.isArray(v) || typeof v[0] !== 'string') return;
    if ((PREDICATES as readonly string[]).includes(v[0])) return v.slice(1).forEach(walk);
    if (v[0] !== 'search' && v[0] !== 'segment') return;
    for (const ref of v[1] === 'eq' ? [v[2]] : Array.isArray(v[2]) ? v[2] : []) ids.push(Number(ref));
  };
  walk(JSON.parse(criteriaText));
  return ids;
}

// ---------------------------------------------------------------- running the criteria

function liveRow(ctx: Ctx, searchId: number): SearchRow {
  const row = stmt(ctx.db, 'SELECT * FROM searches WHERE account_id = ? AND search_id = ? AND deleted_at IS NULL').get(
    ctx.accountId,
    searchId,
  ) as SearchRow | undefined;
  if (!row) throw notFound(`search ${searchId} not found`);
  return row;
}

/** The condition on `m` for a stored search (lenient: what vanished since it was saved matches nobody). */
function conditionOf(ctx: Ctx, row: SearchRow): Sql {
  return new Compiler(ctx, false, row.search_id).compile(JSON.parse(row.criteria));
}

const LIVE_MEMBERS = 'FROM members m WHERE m.account_id = ? AND m.deleted_at IS NULL';

/**
 * SQL selecting `member_id` of the account's live (not deleted) members matching the
 * saved search, any status, run now: what mailing sends and exports resolve.
 */
export function searchMembersSql(ctx: Ctx, searchId: number): { sql: string; params: unknown[] } {
  const condition = conditionOf(ctx, liveRow(ctx, searchId));
  return { sql: `SELECT m.member_id ${LIVE_MEMBERS} AND ${condition.sql}`, params: [ctx.accountId, ...condition.params] };
}

// ---------------------------------------------------------------- the stored result

/*
 * Reading a search or its members answers a result computed before, so the read costs
 * the same at 1k and at 1M members and never writes (DESIGN.md "Scale"):
 *
 * - search_results holds the members the search matched; the search row holds the
 *   counts of that computation, and cached_at = last_run_at, when it began.
 * - Saving criteria (create, or an update that gives them) computes the search, and
 *   the searches that use it, inside that write: the client waits for a write anyway,
 *   and the answer is exact.
 * - Otherwise the job runner refreshes a search once the audience may have changed
 *   (stale_since, see noteChanges) and its result is older than ten times what
 *   computing it took (at least a second), so refreshing takes at most about a tenth
 *   of the time however busy the account is. A result a day old is refreshed anyway
 *   (a write nobody noticed: a process killed before its runner ran, the sqlite3 shell).
 *   A refresh goes through the members a range of ids per step, one short transaction
 *   each, bringing the stored result in line range by range; the counts and cached_at
 *   change when the last range is done.
 * - A page leaves out members archived since the result was computed (they count until
 *   the refresh); purged members leave the result by the cascade.
 */

/** Member ids one background step covers: a few milliseconds of work whatever the audience. */
const STEP_IDS = 10_000;
/** Member ids per statement when a write computes a search whole. */
const WRITE_SPAN_IDS = 100_000;
const MIN_REFRESH_MS = 1_000;
const REFRESH_FACTOR = 10;
const MAX_AGE_MS = 24 * 3_600_000;

interface Counts {
  active_count: number;
  error_count: number;
  optout_count: number;
}

interface RefreshRow extends Counts {
  search_id: number;
  started_at: string;
  done_to: number;
  ms: number;
}

const millisOf = (t: string) => Date.parse(`${t.slice(0, 23)}Z`);

const maxMemberId = (ctx: Ctx) => (stmt(ctx.db, 'SELECT max(member_id) FROM members').pluck().get() as number | null) ?? 0;

/**
 * The live members of the account matching, in a range of ids. The `+` keeps SQLite
 * from walking the account's index (the whole account, every step) instead of the range.
 */
function matchingInRange(ctx: Ctx, condition: Sql): Statement {
  return ctx.db
    .prepare(
      `SELECT m.member_id, m.member_status_id FROM members m
        WHERE m.member_id > ? AND m.member_id <= ? AND +m.account_id = ? AND m.deleted_at IS NULL AND ${condition.sql}`,
    )
    .raw();
}

/**
 * Makes the stored result agree with the search for the members with ids in (from, to],
 * writing only what changed; answers the counts there and the rows added and removed.
 */
function syncRange(ctx: Ctx, searchId: number, matching: Statement, condition: Sql, from: number, to: number) {
  const rows = matching.all(from, to, ctx.accountId, ...condition.params) as [number, string][];
  const c = { active_count: 0, error_count: 0, optout_count: 0, matched: rows.length, added: 0, removed: 0 };
  for (const [, status] of rows) {
    if (status === 'a') c.active_count++;
    else if (status === 'e') c.error_count++;
    else if (status === 'o') c.optout_count++;
  }
  const ids = JSON.stringify(rows.map((r) => r[0]));
  c.removed = stmt(
    ctx.db,
    `DELETE FROM search_results
      WHERE search_id = ? AND member_id > ? AND member_id <= ? AND member_id NOT IN (SELECT value FROM json_each(?))`,
  ).run(searchId, from, to, ids).changes;
  if (rows.length)
    c.added = stmt(ctx.db, 'INSERT OR IGNORE INTO search_results (search_id, member_id) SELECT ?, value FROM json_each(?)').run(
      searchId,
      ids,
    ).changes;
  return c;
}

/** Computes a search whole inside the caller's write: its stored result, counts and stamps. */
function computeNow(ctx: Ctx, row: SearchRow): void {
  const started = performance.now();
  const condition = conditionOf(ctx, row);
  const matching = matchingInRange(ctx, condition);
  const total = { active_count: 0, error_count: 0, optout_count: 0, matched: 0 };
  for (let from = 0, last = maxMemberId(ctx); from < last; from += WRITE_SPAN_IDS) {
    const c = syncRange(ctx, row.search_id, matching, condition, from, from + WRITE_SPAN_IDS);
    total.active_count += c.active_count;
    total.error_count += c.error_count;
    total.optout_count += c.optout_count;
    total.matched += c.matched;
  }
  const now = stamp(ctx.clock.now());
  stmt(
    ctx.db,
    `UPDATE searches SET active_count = ?, error_count = ?, optout_count = ?, member_count = ?, cached_at = ?, last_run_at = ?,
            stale_since = NULL, compute_ms = ?
      WHERE search_id = ?`,
  ).run(
    total.active_count,
    total.error_count,
    total.optout_count,
    total.matched,
    now,
    now,
    Math.round(performance.now() - started),
    row.search_id,
  );
  // A background refresh under way is overtaken.
  stmt(ctx.db, 'DELETE FROM search_refreshes WHERE search_id = ?').run(row.search_id);
}

/** One step of a background refresh, in one transaction: the next range of ids, and the new counts after the last one. */
function refreshStep(ctx: Ctx, searchId: number): void {
  inTransaction(ctx.db, () => {
    const row = stmt(ctx.db, 'SELECT * FROM searches WHERE search_id = ? AND deleted_at IS NULL').get(searchId) as SearchRow | undefined;
    if (!row) return;
    let r = stmt(ctx.db, 'SELECT * FROM search_refreshes WHERE search_id = ?').get(searchId) as RefreshRow | undefined;
    if (!r) {
      r = { search_id: searchId, started_at: stamp(ctx.clock.now()), done_to: 0, active_count: 0, error_count: 0, optout_count: 0, ms: 0 };
      stmt(ctx.db, 'INSERT INTO search_refreshes (search_id, started_at, done_to) VALUES (?, ?, 0)').run(searchId, r.started_at);
      // What changes from now on is the next refresh's to catch.
      stmt(ctx.db, 'UPDATE searches SET stale_since = NULL WHERE search_id = ?').run(searchId);
    }
    const started = performance.now();
    const condition = conditionOf(ctx, row);
    const to = r.done_to + STEP_IDS;
    const c = syncRange(ctx, searchId, matchingInRange(ctx, condition), condition, r.done_to, to);
    stmt(ctx.db, 'UPDATE searches SET member_count = member_count + ? WHERE search_id = ?').run(c.added - c.removed, searchId);
    const ms = r.ms + Math.round(performance.now() - started);
    if (to < maxMemberId(ctx)) {
      stmt(
        ctx.db,
        `UPDATE search_refreshes SET done_to = ?, active_count = active_count + ?, error_count = error_count + ?,
                optout_count = optout_count + ?, ms = ?
          WHERE search_id = ?`,
      ).run(to, c.active_count, c.error_count, c.optout_count, ms, searchId);
      return;
    }
    stmt(
      ctx.db,
      `UPDATE searches SET active_count = ?, error_count = ?, optout_count = ?, cached_at = ?, last_run_at = ?, compute_ms = ?
        WHERE search_id = ?`,
    ).run(
      r.active_count + c.active_count,
      r.error_count + c.error_count,
      r.optout_count + c.optout_count,
      r.started_at,
      r.started_at,
      ms,
      searchId,
    );
    stmt(ctx.db, 'DELETE FROM search_refreshes WHERE search_id = ?').run(searchId);
  });
}

/*
 * Noticing that the audience may have changed. Any committed write can change who
 * matches (a member, a membership, a field or group deleted), and a trigger on each
 * such row would cost an import about half a microsecond a row. Instead the runner
 * notices that the database changed at all: total_changes() counts this connection's
 * writes (requests, import jobs), PRAGMA data_version moves when another connection
 * commits (another process, the import writer's thread). Every process that writes
 * runs the runner (amsg serve in the background, the local CLI after each call), so
 * each write is noticed by some runner, which stamps stale_since on the live searches.
 * Writes that cannot change any search's members are left out (ownWrites): computing
 * searches, and mailing sends. A GET changes neither number, so it stamps nothing.
 */
interface Seen {
  /** data_version when last looked at (undefined: not yet in this process). */
  version?: number;
  /** total_changes() accounted for: noticed, or left out by ownWrites. */
  changes: number;
}
const seen = new WeakMap<Db, Seen>();
const seenOf = (db: Db): Seen => {
  let s = seen.get(db);
  if (!s) seen.set(db, (s = { changes: 0 }));
  return s;
};
const totalChanges = (db: Db) => stmt(db, 'SELECT total_changes()').pluck().get() as number;

/** Runs fn, whose writes on db change no search's members, so they make no search stale. */
export function ownWrites<T>(db: Db, fn: () => T): T {
  const s = seenOf(db);
  const before = totalChanges(db);
  try {
    return fn();
  } finally {
    s.changes += totalChanges(db) - before;
  }
}

/** Stamps stale_since on the live searches when the database changed since last looked at. */
function noteChanges(db: Db, clock: Clock): void {
  const s = seenOf(db);
  const version = stmt(db, 'PRAGMA data_version').pluck().get() as number;
  const changes = totalChanges(db);
  if (changes !== s.changes || (s.version !== undefined && s.version !== version)) {
    // Asked first, so a database whose searches are all stamped already takes no write lock.
    if (stmt(db, 'SELECT EXISTS (SELECT 1 FROM searches WHERE deleted_at IS NULL AND stale_since IS NULL)').pluck().get())
      stmt(db, 'UPDATE searches SET stale_since = ? WHERE deleted_at IS NULL AND stale_since IS NULL').run(stamp(clock.now()));
  }
  s.changes = totalChanges(db);
  s.version = version;
}

interface DueRow {
  search_id: number;
  account_id: number;
  cached_at: string | null;
  stale_since: string | null;
  compute_ms: number;
  refreshing: number;
}

/** Searches this process could not compute (it stops trying them; they keep their last result). */
const failed = new WeakMap<Db, Set<number>>();

/** The search to refresh next: one under way first, then in id order. */
function nextDue(db: Db, now: number): DueRow | undefined {
  const skip = failed.get(db);
  const rows = stmt(
    db,
    `SELECT s.search_id, s.account_id, s.cached_at, s.stale_since, s.compute_ms, r.search_id IS NOT NULL AS refreshing
       FROM searches s LEFT JOIN search_refreshes r ON r.search_id = s.search_id
      WHERE s.deleted_at IS NULL AND (r.search_id IS NOT NULL OR s.cached_at IS NULL OR s.stale_since IS NOT NULL OR s.cached_at <= ?)
        AND s.account_id NOT IN (${RETIRED_ACCOUNTS})
      ORDER BY s.search_id`,
  ).all(stamp(new Date(now - MAX_AGE_MS))) as DueRow[];
  const candidates = rows.filter((r) => !skip?.has(r.search_id));
  return (
    candidates.find((r) => r.refreshing) ??
    candidates.find((r) => {
      if (r.cached_at === null) return true;
      const age = now - millisOf(r.cached_at);
      return age >= MAX_AGE_MS || (r.stale_since !== null && age >= Math.max(MIN_REFRESH_MS, REFRESH_FACTOR * r.compute_ms));
    })
  );
}

/**
 * The job runner's part for searches: notices changes, then refreshes due searches a
 * step at a time (at least one step per call) for up to budgetMs. Answers whether a
 * refresh is left to do now.
 */
export function advanceSearches(db: Db, clock: Clock, budgetMs: number): boolean {
  const deadline = Date.now() + budgetMs;
  const busy = (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY';
  try {
    noteChanges(db, clock);
  } catch (err) {
    if (busy(err)) return true;
    throw err;
  }
  for (let first = true; ; first = false) {
    const due = nextDue(db, clock.now().getTime());
    if (!due) return false;
    if (!first && Date.now() >= deadline) return true;
    try {
      ownWrites(db, () => refreshStep({ db, clock, actor: localActor(db, due.account_id), accountId: due.account_id }, due.search_id));
    } catch (err) {
      if (busy(err)) return true;
      // It would fail again on every step and hold up the searches after it.
      let skip = failed.get(db);
      if (!skip) failed.set(db, (skip = new Set()));
      skip.add(due.search_id);
    }
  }
}

// ---------------------------------------------------------------- reads

function recordOf(row: SearchRow): SearchRecord {
  return {
    search_id: row.search_id,
    account_id: row.account_id,
    name: row.name,
    criteria: row.criteria,
    active_count: row.active_count,
    error_count: row.error_count,
    optout_count: row.optout_count,
    cached_at: row.cached_at,
    last_run_at: row.last_run_at,
    deleted_at: row.deleted_at,
    purged_at: row.purged_at,
  };
}

/** A live search of the account with its stored counts (as of cached_at); 404 when missing or deleted. */
export function getSearch(ctx: Ctx, searchId: number): SearchRecord {
  return recordOf(liveRow(ctx, searchId));
}

/** The live searches in id order, the window only, with their stored counts. */
export function listSearches(ctx: Ctx, w: Window = {}): SearchRecord[] {
  const { limit, offset } = windowOf(w);
  const rows = stmt(ctx.db, `SELECT * FROM searches WHERE account_id = ? AND deleted_at IS NULL ORDER BY search_id ${LIMIT_OFFSET}`).all(
    ctx.accountId,
    limit,
    offset,
  ) as SearchRow[];
  return rows.map(recordOf);
}

export function countSearches(ctx: Ctx): number {
  return stmt(ctx.db, 'SELECT COUNT(*) FROM searches WHERE account_id = ? AND deleted_at IS NULL').pluck().get(ctx.accountId) as number;
}

/** The names of live searches, one per id in the order given; 404 naming the first unknown id. */
export function searchNames(ctx: Ctx, ids: number[]): { search_id: number; name: string }[] {
  return ids.map((id) => {
    const row = liveRow(ctx, id);
    return { search_id: row.search_id, name: row.name };
  });
}

/** When the oldest part of the stored result was computed (a first refresh under way has no cached_at yet). */
function resultSince(ctx: Ctx, row: SearchRow): string {
  return (
    row.cached_at ??
    (stmt(ctx.db, 'SELECT started_at FROM search_refreshes WHERE search_id = ?').pluck().get(row.search_id) as string | undefined) ??
    // No result at all: nothing to leave out.
    '9999'
  );
}

/**
 * The members of the stored result archived since it was computed, in id order: in it
 * until the refresh, but not listed. Every member archived before then is in no result,
 * so the time bound keeps this to what changed since (found on members_deleted).
 */
function archivedSince(ctx: Ctx, row: SearchRow): number[] {
  const ids = stmt(
    ctx.db,
    `SELECT member_id FROM search_results WHERE search_id = ? AND member_id IN
       (SELECT member_id FROM members WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_at >= ?)`,
  )
    .pluck()
    .all(row.search_id, ctx.accountId, resultSince(ctx, row)) as number[];
  return ids.sort((a, b) => a - b);
}

/**
 * GET /searches/{id}/members: the stored result in id order, any status. A window skips
 * entries of the result's primary key and reads only the page's members. Members
 * archived since (`gone`, few) are dropped from a slightly longer run of ids rather
 * than tested on every entry skipped: those before the run's first id shift it by
 * their number.
 */
export function searchMembers(ctx: Ctx, searchId: number, w: Window): MemberRecord[] {
  const { limit, offset } = windowOf(w);
  const row = liveRow(ctx, searchId);
  const gone = archivedSince(ctx, row);
  let ids = stmt(ctx.db, `SELECT member_id FROM search_results WHERE search_id = ? ORDER BY member_id ${LIMIT_OFFSET}`)
    .pluck()
    .all(searchId, limit + gone.length, offset) as number[];
  if (gone.length && ids.length) {
    const before = gone.filter((id) => id < ids[0]).length;
    const skip = new Set(gone);
    ids = ids.filter((id) => !skip.has(id)).slice(before, before + limit);
  }
  if (!ids.length) return [];
  const rows = stmt(ctx.db, 'SELECT m.* FROM members m WHERE m.member_id IN (SELECT value FROM json_each(?)) ORDER BY m.member_id').all(
    JSON.stringify(ids),
  ) as MemberRow[];
  const catalog = FieldCatalog.of(ctx);
  return rows.map((r) => toMember(r, catalog));
}

/** How many members GET /searches/{id}/members lists: the stored count less those archived since. */
export function countSearchMembers(ctx: Ctx, searchId: number): number {
  const row = liveRow(ctx, searchId);
  return row.member_count - archivedSince(ctx, row).length;
}

// ---------------------------------------------------------------- writes

function cleanName(ctx: Ctx, name: string, exceptId?: number): string {
  const trimmed = name.trim();
  if (!trimmed) throw refuse('name', 'must not be empty');
  const taken = stmt(ctx.db, 'SELECT search_id FROM searches WHERE account_id = ? AND name = ? COLLATE NOCASE AND deleted_at IS NULL')
    .pluck()
    .get(ctx.accountId, trimmed) as number | undefined;
  if (taken !== undefined && taken !== exceptId) throw refuse('name', `a search named "${trimmed}" already exists (search ${taken})`);
  return trimmed;
}

/** Checks criteria completely (shape, names, values, cycles) and answers their stored text. */
function validCriteria(ctx: Ctx, input: unknown, selfId?: number): string {
  const { value, text } = readCriteria(input);
  new Compiler(ctx, true, selfId).compile(value);
  return text;
}

/**
 * A write of searches: one transaction, whose writes make no search stale (see
 * ownWrites). What this connection wrote before is noticed first, so it makes the other
 * searches stale but not the ones computed here after it.
 */
function searchWrite<T>(ctx: Ctx, fn: () => T): T {
  noteChanges(ctx.db, ctx.clock);
  return ownWrites(ctx.db, () => inTransaction(ctx.db, fn));
}

/** The live searches that use this one, directly or through others (their criteria inline its criteria). */
function usersOf(ctx: Ctx, searchId: number): number[] {
  const uses = (
    stmt(ctx.db, 'SELECT search_id, criteria FROM searches WHERE account_id = ? AND deleted_at IS NULL ORDER BY search_id').all(
      ctx.accountId,
    ) as Pick<SearchRow, 'search_id' | 'criteria'>[]
  ).map((r) => ({ id: r.search_id, refs: referencedSearches(r.criteria) }));
  const found = new Set<number>();
  for (let reached = [searchId]; reached.length; ) {
    const next = uses.filter((u) => u.id !== searchId && !found.has(u.id) && u.refs.some((ref) => reached.includes(ref))).map((u) => u.id);
    next.forEach((id) => found.add(id));
    reached = next;
  }
  return [...found].sort((a, b) => a - b);
}

/** Saves a search and computes it (its result, counts and stamps) in the same write. */
export function createSearch(ctx: Ctx, input: { name: string; criteria: unknown }): SearchRecord {
  return searchWrite(ctx, () => {
    const name = cleanName(ctx, input.name);
    const criteria = validCriteria(ctx, input.criteria);
    const id = stmt(ctx.db, 'INSERT INTO searches (account_id, name, criteria, created_at) VALUES (?, ?, ?, ?)').run(
      ctx.accountId,
      name,
      criteria,
      stamp(ctx.clock.now()),
    ).lastInsertRowid;
    computeNow(ctx, liveRow(ctx, Number(id)));
    return getSearch(ctx, Number(id));
  });
}

/**
 * Renames a search or changes its criteria. Criteria given (even the same ones) are
 * computed in the same write, with every search that uses this one, since what those
 * match changes with it; a rename alone keeps the stored result.
 */
export function updateSearch(ctx: Ctx, searchId: number, input: { name?: string; criteria?: unknown }): SearchRecord {
  if (input.name === undefined && input.criteria === undefined) throw badRequest('give name, criteria or both');
  return searchWrite(ctx, () => {
    const row = liveRow(ctx, searchId);
    const name = input.name === undefined ? row.name : cleanName(ctx, input.name, searchId);
    const criteria = input.criteria === undefined ? row.criteria : validCriteria(ctx, input.criteria, searchId);
    stmt(ctx.db, 'UPDATE searches SET name = ?, criteria = ? WHERE search_id = ?').run(name, criteria, searchId);
    if (input.criteria !== undefined) for (const id of [searchId, ...usersOf(ctx, searchId)]) computeNow(ctx, liveRow(ctx, id));
    return getSearch(ctx, searchId);
  });
}

/**
 * Deletes a search (it frees its name and reads as 404 from then on) and its stored
 * result. A search that another live search uses is refused: the other one would
 * silently match nobody.
 */
export function deleteSearch(ctx: Ctx, searchId: number): true {
  return searchWrite(ctx, () => {
    liveRow(ctx, searchId);
    const others = stmt(
      ctx.db,
      'SELECT search_id, name, criteria FROM searches WHERE account_id = ? AND deleted_at IS NULL AND search_id <> ? ORDER BY search_id',
    ).all(ctx.accountId, searchId) as Pick<SearchRow, 'search_id' | 'name' | 'criteria'>[];
    const user = others.find((o) => referencedSearches(o.criteria).includes(searchId));
    if (user)
      throw new ApiError(
        409,
        `search ${searchId} is used by search ${user.search_id} ("${user.name}"); change or delete that search first`,
      );
    stmt(ctx.db, 'UPDATE searches SET deleted_at = ?, member_count = 0 WHERE search_id = ?').run(stamp(ctx.clock.now()), searchId);
    stmt(ctx.db, 'DELETE FROM search_results WHERE search_id = ?').run(searchId);
    stmt(ctx.db, 'DELETE FROM search_refreshes WHERE search_id = ?').run(searchId);
    return true;
  });
}
