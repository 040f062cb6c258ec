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
 * time the search runs, so a search is never stale and never loads members into JS.
 *
 * Names are looked up when the search runs: a field, group or subscription renamed or
 * deleted after the search was saved makes the conditions that name it match nobody
 * (refer to groups and subscriptions by id to survive renames). Other searches are
 * referred to by id only, so a saved search can refuse a cycle and a search another
 * one uses cannot be deleted.
 */
import { inTransaction } from '../store/db.js';
import { stmt } from '../store/statements.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { stamp } from './clock.js';
import type { Ctx } from './context.js';
import { coerceValue, FieldCatalog, type FieldRecord } from './fields.js';
import { MEMBER_STATUSES, toMember, type MemberRecord, type MemberRow } from './members.js';
import { windowOf, type Window } from './paging.js';

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
  cached_at: string | null;
  last_run_at: string | null;
  created_at: string;
  deleted_at: string | null;
  purged_at: string | null;
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

const show = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** A 400 naming the place inside the criteria (criteria[2][1]) and the reason. */
const refuse = (path: string, reason: string) => badRequest(`${path}: ${reason}`, { field: path });

/** `*` any run of characters, `?` one character; the whole value must match (LIKE is case-insensitive for ASCII). */
function globToLike(glob: string): string {
  return glob.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%').replace(/\?/g, '_');
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
      throw refuse(path, `must be a list: a predicate ["and" | "or" | "not", …] or a condition [subject, operator, value…], got ${show(v)}`);
    if (!v.length) throw refuse(path, 'must not be an empty list');
    if (depth >= MAX_DEPTH) throw refuse(this.referencePath ?? path, `nests too deep (at most ${MAX_DEPTH} levels, nested searches included)`);
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
    if (name === 'not' && operands.length !== 1)
      throw refuse(path, `"not" takes exactly one condition, got ${operands.length}`);
    if (!operands.length) throw refuse(path, `"${name}" takes at least one condition`);
    const parts = operands.map((operand, i) => this.node(operand, `${path}[${i + 1}]`, depth + 1));
    const params = parts.flatMap((p) => p.params);
    if (name === 'not') return { sql: `(NOT ${parts[0].sql})`, params };
    return { sql: combine(parts.map((p) => p.sql), name === 'and' ? 'AND' : 'OR'), params };
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
          : { sql: 'm.member_status_id IN (SELECT value FROM json_each(?))', params: [JSON.stringify(listOf(values[0], `${path}[2]`, status))] };
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
      const row = stmt(this.ctx.db, 'SELECT search_id, name, criteria FROM searches WHERE account_id = ? AND search_id = ? AND deleted_at IS NULL').get(
        this.ctx.accountId,
        id,
      ) as Pick<SearchRow, 'search_id' | 'name' | 'criteria'> | undefined;
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
    return { sql: combine(parts.map((p) => p.sql), 'OR'), params: parts.flatMap((p) => p.params) };
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
  return { value, text: JSON.stringify(value) };
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

// ---------------------------------------------------------------- reads

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

/** SQL selecting `member_id` of the account's live (not deleted) members matching the saved search, any status. */
export function searchMembersSql(ctx: Ctx, searchId: number): { sql: string; params: unknown[] } {
  const condition = conditionOf(ctx, liveRow(ctx, searchId));
  return { sql: `SELECT m.member_id ${LIVE_MEMBERS} AND ${condition.sql}`, params: [ctx.accountId, ...condition.params] };
}

/**
 * The record, with counts computed now by running the search (live members with status
 * a, e, o; forwarded ones are in no count). Counts are never cached, so every answer
 * that carries them is a run of the search: cached_at and last_run_at are set to now,
 * in the row too.
 */
function withCounts(ctx: Ctx, rows: SearchRow[]): SearchRecord[] {
  if (!rows.length) return [];
  const now = stamp(ctx.clock.now());
  return inTransaction(ctx.db, () => {
    const touch = stmt(ctx.db, 'UPDATE searches SET cached_at = ?, last_run_at = ? WHERE search_id = ?');
    return rows.map((row) => {
      const condition = conditionOf(ctx, row);
      const counts = ctx.db
        .prepare(
          `SELECT COUNT(CASE WHEN m.member_status_id = 'a' THEN 1 END) AS active_count,
                  COUNT(CASE WHEN m.member_status_id = 'e' THEN 1 END) AS error_count,
                  COUNT(CASE WHEN m.member_status_id = 'o' THEN 1 END) AS optout_count
             ${LIVE_MEMBERS} AND ${condition.sql}`,
        )
        .get(ctx.accountId, ...condition.params) as Pick<SearchRecord, 'active_count' | 'error_count' | 'optout_count'>;
      touch.run(now, now, row.search_id);
      return {
        search_id: row.search_id,
        account_id: row.account_id,
        name: row.name,
        criteria: row.criteria,
        ...counts,
        cached_at: now,
        last_run_at: now,
        deleted_at: row.deleted_at,
        purged_at: row.purged_at,
      };
    });
  });
}

/** A live search of the account with its counts; 404 when missing or deleted. */
export function getSearch(ctx: Ctx, searchId: number): SearchRecord {
  return withCounts(ctx, [liveRow(ctx, searchId)])[0];
}

/** The live searches in id order, the window only (counts are computed for those alone). */
export function listSearches(ctx: Ctx, w: Window = {}): SearchRecord[] {
  const { limit, offset } = windowOf(w);
  const rows = stmt(
    ctx.db,
    'SELECT * FROM searches WHERE account_id = ? AND deleted_at IS NULL ORDER BY search_id LIMIT ? OFFSET ?',
  ).all(ctx.accountId, limit, offset) as SearchRow[];
  return withCounts(ctx, rows);
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

/** GET /searches/{id}/members: the live members matching, any status, in id order. */
export function searchMembers(ctx: Ctx, searchId: number, w: Window): MemberRecord[] {
  const { limit, offset } = windowOf(w);
  const condition = conditionOf(ctx, liveRow(ctx, searchId));
  const rows = ctx.db
    .prepare(`SELECT m.* ${LIVE_MEMBERS} AND ${condition.sql} ORDER BY m.member_id LIMIT ? OFFSET ?`)
    .all(ctx.accountId, ...condition.params, limit, offset) as MemberRow[];
  const catalog = FieldCatalog.of(ctx);
  return rows.map((r) => toMember(r, catalog));
}

export function countSearchMembers(ctx: Ctx, searchId: number): number {
  const { sql, params } = searchMembersSql(ctx, searchId);
  return ctx.db.prepare(`SELECT COUNT(*) FROM (${sql})`).pluck().get(...params) as number;
}

// ---------------------------------------------------------------- writes

function cleanName(ctx: Ctx, name: string, exceptId?: number): string {
  const trimmed = name.trim();
  if (!trimmed) throw refuse('name', 'must not be empty');
  const taken = stmt(
    ctx.db,
    'SELECT search_id FROM searches WHERE account_id = ? AND name = ? COLLATE NOCASE AND deleted_at IS NULL',
  ).pluck().get(ctx.accountId, trimmed) as number | undefined;
  if (taken !== undefined && taken !== exceptId)
    throw refuse('name', `a search named "${trimmed}" already exists (search ${taken})`);
  return trimmed;
}

/** Checks criteria completely (shape, names, values, cycles) and answers their stored text. */
function validCriteria(ctx: Ctx, input: unknown, selfId?: number): string {
  const { value, text } = readCriteria(input);
  new Compiler(ctx, true, selfId).compile(value);
  return text;
}

export function createSearch(ctx: Ctx, input: { name: string; criteria: unknown }): SearchRecord {
  return inTransaction(ctx.db, () => {
    const name = cleanName(ctx, input.name);
    const criteria = validCriteria(ctx, input.criteria);
    const id = stmt(ctx.db, 'INSERT INTO searches (account_id, name, criteria, created_at) VALUES (?, ?, ?, ?)').run(
      ctx.accountId,
      name,
      criteria,
      stamp(ctx.clock.now()),
    ).lastInsertRowid;
    return getSearch(ctx, Number(id));
  });
}

export function updateSearch(ctx: Ctx, searchId: number, input: { name?: string; criteria?: unknown }): SearchRecord {
  if (input.name === undefined && input.criteria === undefined) throw badRequest('give name, criteria or both');
  return inTransaction(ctx.db, () => {
    const row = liveRow(ctx, searchId);
    const name = input.name === undefined ? row.name : cleanName(ctx, input.name, searchId);
    const criteria = input.criteria === undefined ? row.criteria : validCriteria(ctx, input.criteria, searchId);
    stmt(ctx.db, 'UPDATE searches SET name = ?, criteria = ? WHERE search_id = ?').run(name, criteria, searchId);
    return getSearch(ctx, searchId);
  });
}

/**
 * Deletes a search (it frees its name and reads as 404 from then on). A search that
 * another live search uses is refused: the other one would silently match nobody.
 */
export function deleteSearch(ctx: Ctx, searchId: number): true {
  return inTransaction(ctx.db, () => {
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
    stmt(ctx.db, 'UPDATE searches SET deleted_at = ? WHERE search_id = ?').run(stamp(ctx.clock.now()), searchId);
    return true;
  });
}
