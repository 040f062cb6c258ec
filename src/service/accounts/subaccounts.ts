/**
 * HQ accounts and their sub-accounts (the spec's Sub-accounts part and Subaccount
 * status table): creating, listing, reading and retiring sub-accounts, the access lists
 * of HQ users, and the purge of a retired sub-account 30 days later.
 *
 * Who reaches a sub-account at all is not decided here but once for every request,
 * in `accountAccessible` (accounts.ts), which the Router calls with the path's account.
 */
import { inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound, ApiError } from '../../errors.js';
import { stamp, type Clock } from '../clock.js';
import type { Ctx } from '../context.js';
import { getUser, ROLE_RANK, setUpAccount } from './accounts.js';
import { LIMIT_BOUND, LIMIT_OFFSET, type Window, windowOf } from '../paging.js';

export const SUBACCOUNT_STATUSES = ['active', 'trial', 'pending_retirement', 'retired'] as const;
export type SubaccountStatus = (typeof SUBACCOUNT_STATUSES)[number];

/** How long a retired sub-account's data is kept before the purge (the spec's limit). */
export const RETIREMENT_DAYS = 30;
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------- what a value may be

const US_STATES: Record<string, string> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
};
const STATE_NAMES = new Set(Object.values(US_STATES));

export const isUsState = (v: string) => v in US_STATES || STATE_NAMES.has(v);

/**
 * Region codes Intl knows that are not countries of ISO 3166-1: groupings (EU, UN),
 * private-use and pseudo codes, and the exceptionally reserved ones (UK is GB's).
 */
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'QU', 'ZZ', 'XA', 'XB', 'XK', 'AC', 'CP', 'CQ', 'DG', 'EA', 'IC', 'TA', 'UK']);

let countries: Map<string, string> | undefined;
/**
 * ISO code → English name, from the runtime's CLDR data (Intl.DisplayNames) rather
 * than a hand-kept list of 249 names; deprecated codes (SU, YU, …) are those whose
 * canonical form is another code.
 */
export function countryNames(): Map<string, string> {
  if (countries) return countries;
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
  countries = new Map();
  for (let a = 65; a <= 90; a++)
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      const name = names.of(code);
      if (!name || name === code || NOT_COUNTRIES.has(code)) continue;
      if (Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue;
      countries.set(code, name);
    }
  return countries;
}

/** The ISO code of a country given as its code or its capitalized English name, or undefined. */
export function countryCode(v: string): string | undefined {
  const all = countryNames();
  if (all.has(v)) return v;
  for (const [code, name] of all) if (name === v) return code;
  return undefined;
}

let zones: Set<string> | undefined;
export function isTimezone(v: string): boolean {
  zones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  return zones.has(v);
}

// ---------------------------------------------------------------- records

export interface SubaccountInput {
  account_name: string;
  account_rsvp_email?: string;
  account_rsvp_name?: string;
  account_rsvp_address_1?: string;
  account_rsvp_address_2?: string;
  account_rsvp_city?: string;
  account_rsvp_province?: string;
  account_rsvp_state?: string;
  account_rsvp_zip_code?: string;
  account_rsvp_country?: string;
  account_status?: 'active' | 'trial';
  account_timezone?: string;
  country_abbrev?: 'true' | 'false';
  send_response_summary?: boolean;
  show_code_your_own?: boolean;
  show_blank_template?: boolean;
}

const TEXT_SETTINGS = [
  'account_rsvp_email',
  'account_rsvp_name',
  'account_rsvp_address_1',
  'account_rsvp_address_2',
  'account_rsvp_city',
  'account_rsvp_province',
  'account_rsvp_state',
  'account_rsvp_zip_code',
  'account_rsvp_country',
  'account_timezone',
  'country_abbrev',
] as const;
const FLAG_SETTINGS = ['send_response_summary', 'show_code_your_own', 'show_blank_template'] as const;

interface AccountRow {
  account_id: number;
  account_name: string;
  parent_account_id: number | null;
  account_status: SubaccountStatus;
  is_hq: number;
  created_at: string;
  retired_at: string | null;
  purge_after: string | null;
  purged_at: string | null;
  [setting: string]: unknown;
}

export interface SubaccountListItem {
  account_id: number;
  account_name: string;
  account_status: SubaccountStatus;
}

export interface SubaccountRecord extends SubaccountListItem {
  parent_account_id: number;
  created_at: string;
  retired_at: string | null;
  purge_after: string | null;
  [setting: string]: unknown;
}

const fail = (field: string, reason: string) => badRequest(`${field}: ${reason}`, { field });

/** The route's account as an HQ parent: sub-account operations apply to nothing else (400). */
function hqOf(ctx: Ctx): AccountRow {
  const row = stmt(ctx.db, 'SELECT * FROM accounts WHERE account_id = ?').get(ctx.accountId) as AccountRow | undefined;
  if (!row) throw notFound(`account ${ctx.accountId} not found`);
  if (row.is_hq !== 1)
    throw badRequest(`parent_account_id: account ${ctx.accountId} is not an HQ parent account`, { field: 'parent_account_id' });
  return row;
}

/** Whether the caller's access list reaches a sub-account (the HQ's owners reach them all). */
function reaches(ctx: Ctx, accountId: number): boolean {
  if (ctx.actor.account_id !== ctx.accountId) return false;
  if (ctx.actor.role === 'owner') return true;
  return !!stmt(ctx.db, 'SELECT 1 FROM user_account_access WHERE user_id = ? AND account_id = ?').get(ctx.actor.user_id, accountId);
}

/**
 * A sub-account of the route's HQ that the caller reaches, retired or not (until
 * purged). Any other id, the HQ's own included, is a 404 that says nothing more.
 */
function subaccountOf(ctx: Ctx, subaccountId: number): AccountRow {
  const row = stmt(ctx.db, 'SELECT * FROM accounts WHERE account_id = ? AND parent_account_id = ?').get(subaccountId, ctx.accountId) as
    | AccountRow
    | undefined;
  if (!row || row.purged_at !== null || !reaches(ctx, subaccountId)) throw notFound(`subaccount ${subaccountId} not found`);
  return row;
}

function checkAddress(input: SubaccountInput): void {
  const { account_rsvp_country: country, account_rsvp_state: state, account_rsvp_province: province } = input;
  if (input.account_timezone !== undefined && !isTimezone(input.account_timezone))
    throw fail(
      'account_timezone',
      `"${input.account_timezone}" is not a tz database time zone name (e.g. America/New_York, Europe/Oslo, UTC)`,
    );
  if (state !== undefined && !isUsState(state))
    throw fail(
      'account_rsvp_state',
      `"${state}" is not a US state: give its capitalized name (e.g. California) or its 2-letter abbreviation in capitals (e.g. CA)`,
    );
  if (country === undefined) return;
  const code = countryCode(country);
  if (!code)
    throw fail(
      'account_rsvp_country',
      `"${country}" is not a country: give its 2-letter ISO code (e.g. US, NO) or its capitalized English name (e.g. Norway)`,
    );
  if (!input.account_rsvp_city) throw fail('account_rsvp_city', 'is required when account_rsvp_country is given');
  if (code === 'US') {
    if (province !== undefined) throw fail('account_rsvp_province', 'is for addresses outside the US; give account_rsvp_state');
    if (state === undefined) throw fail('account_rsvp_state', 'is required when account_rsvp_country is the US');
  } else if (state === undefined && province === undefined)
    throw fail('account_rsvp_province', `is required (or account_rsvp_state) when account_rsvp_country is ${country}`);
}

const toListItem = (r: AccountRow): SubaccountListItem => ({
  account_id: r.account_id,
  account_name: r.account_name,
  account_status: r.account_status,
});

function toRecord(r: AccountRow): SubaccountRecord {
  const out: SubaccountRecord = {
    ...toListItem(r),
    parent_account_id: r.parent_account_id!,
    created_at: r.created_at,
    retired_at: r.retired_at,
    purge_after: r.purge_after,
  };
  for (const k of TEXT_SETTINGS) out[k] = r[k] ?? null;
  for (const k of FLAG_SETTINGS) out[k] = r[k] === null || r[k] === undefined ? null : r[k] === 1;
  return out;
}

// ---------------------------------------------------------------- operations

/**
 * Creates a sub-account with what `amsg init` gives an account (an owner, the standard
 * fields). Its status follows the spec's table: trial unless asked to be active, and
 * trial whatever was asked while the HQ itself is in trial. A caller who is not an
 * owner of the HQ gets the new account on its access list, or it could not reach it.
 */
export function createSubaccount(ctx: Ctx, input: SubaccountInput) {
  const hq = hqOf(ctx);
  checkAddress(input);
  const status: SubaccountStatus = hq.account_status === 'trial' ? 'trial' : (input.account_status ?? 'trial');
  return inTransaction(ctx.db, () => {
    const now = stamp(ctx.clock.now());
    const columns = ['account_name', 'parent_account_id', 'account_status', 'created_at', ...TEXT_SETTINGS, ...FLAG_SETTINGS];
    const values = [
      input.account_name,
      ctx.accountId,
      status,
      now,
      ...TEXT_SETTINGS.map((k) => (k === 'account_rsvp_country' && input[k] !== undefined ? countryCode(input[k]!) : (input[k] ?? null))),
      ...FLAG_SETTINGS.map((k) => (input[k] === undefined ? null : input[k] ? 1 : 0)),
    ];
    const accountId = Number(
      stmt(ctx.db, `INSERT INTO accounts (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(...values)
        .lastInsertRowid,
    );
    setUpAccount(ctx.db, accountId, ctx.actor.email, now);
    if (ctx.actor.role !== 'owner')
      stmt(ctx.db, 'INSERT INTO user_account_access (user_id, account_id) VALUES (?, ?)').run(ctx.actor.user_id, accountId);
    return { account_name: input.account_name, account_id: accountId, parent_account_id: ctx.accountId };
  });
}

/**
 * Retires a sub-account: at once it leaves the HQ's list and no key reaches it (its
 * data stays as it was); RETIREMENT_DAYS later the job runner purges it. Not reversible.
 */
export function retireSubaccount(ctx: Ctx, subaccountId: number) {
  hqOf(ctx);
  if (subaccountId === ctx.accountId)
    throw fail('subaccount_id', `account ${subaccountId} is the HQ account itself, not one of its sub-accounts; it cannot be retired`);
  const row = subaccountOf(ctx, subaccountId);
  if (row.retired_at !== null) throw notFound(`subaccount ${subaccountId} not found (it was retired on ${row.retired_at.slice(0, 10)})`);
  const now = ctx.clock.now();
  stmt(
    ctx.db,
    `UPDATE accounts SET account_status = 'retired', retired_at = ?, purge_after = ? WHERE account_id = ? AND retired_at IS NULL`,
  ).run(stamp(now), stamp(new Date(now.getTime() + RETIREMENT_DAYS * DAY_MS)), subaccountId);
  return { account_name: row.account_name, status: 'retired' as const };
}

/** One sub-account's record, its settings and retirement included (until it is purged). */
export function getSubaccount(ctx: Ctx, subaccountId: number): SubaccountRecord {
  hqOf(ctx);
  return toRecord(subaccountOf(ctx, subaccountId));
}

export interface ListFilter extends Window {
  status?: SubaccountStatus[];
  searchterm?: string;
}

/**
 * The HQ's live sub-accounts the caller reaches, in id order: an owner's walk the
 * HQ's sub-accounts on accounts_parent, anyone else's their access list (its primary
 * key), so a page costs the same however many sub-accounts there are. Retired ones
 * have left the HQ (the spec's table), so none is listed.
 */
function subaccountsQuery(ctx: Ctx, userId: number | undefined, filter: ListFilter, select: string) {
  const where: string[] = ['a.retired_at IS NULL'];
  const params: unknown[] = [];
  if (filter.status?.length) {
    where.push(`a.account_status IN (${filter.status.map(() => '?').join(', ')})`);
    params.push(...filter.status);
  }
  if (filter.searchterm) {
    where.push(`a.account_name LIKE ? ESCAPE '\\'`);
    params.push(`%${filter.searchterm.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  const sql =
    userId === undefined
      ? `SELECT ${select} FROM accounts a WHERE a.parent_account_id = ? AND ${where.join(' AND ')}`
      : // CROSS JOIN keeps the access list's primary key as the outer walk (in account id order).
        `SELECT ${select} FROM user_account_access x CROSS JOIN accounts a ON a.account_id = x.account_id
          WHERE x.user_id = ? AND a.parent_account_id = ? AND ${where.join(' AND ')}`;
  return {
    sql,
    params: userId === undefined ? [ctx.accountId, ...params] : [userId, ctx.accountId, ...params],
    order: userId === undefined ? 'a.account_id' : 'x.account_id',
  };
}

function listFor(ctx: Ctx, user: { user_id: number; role: string }, filter: ListFilter, count: boolean) {
  const who = user.role === 'owner' ? undefined : user.user_id;
  if (count) {
    const { sql, params } = subaccountsQuery(ctx, who, filter, 'COUNT(*)');
    return stmt(ctx.db, sql)
      .pluck()
      .get(...params) as number;
  }
  const { limit, offset } = windowOf(filter);
  const { sql, params, order } = subaccountsQuery(ctx, who, filter, 'a.account_id, a.account_name, a.account_status');
  const rows = stmt(ctx.db, `${sql} ORDER BY ${order} ${LIMIT_OFFSET}`).all(...params, limit, offset) as AccountRow[];
  return { subaccounts: rows.map(toListItem) };
}

export function listSubaccounts(ctx: Ctx, filter: ListFilter, count = false) {
  hqOf(ctx);
  return listFor(ctx, ctx.actor, filter, count);
}

/** The sub-accounts a user of the HQ reaches (every one for an owner), as the list answers them. */
export function listAccess(ctx: Ctx, userId: number, window: Window, count = false) {
  hqOf(ctx);
  return listFor(ctx, getUser(ctx, userId), window, count);
}

/**
 * Replaces a user's whole access list (not merged). The caller may give only
 * sub-accounts it reaches itself, and only to a user of a lower role (the spec's 401).
 */
export function setAccess(ctx: Ctx, userId: number, accounts: number[]) {
  hqOf(ctx);
  const target = getUser(ctx, userId);
  if (ROLE_RANK[target.role] >= ROLE_RANK[ctx.actor.role])
    throw new ApiError(401, `a ${ctx.actor.role} cannot assign sub-accounts to a ${target.role}: only to users of a lower role`);
  const ids = [...new Set(accounts)];
  for (const id of ids) {
    const row = stmt(ctx.db, 'SELECT retired_at FROM accounts WHERE account_id = ? AND parent_account_id = ?').get(id, ctx.accountId) as
      | { retired_at: string | null }
      | undefined;
    if (!row || row.retired_at !== null || !reaches(ctx, id))
      throw fail(
        `accounts[${accounts.indexOf(id)}]`,
        `the requester has no access to account ${id} (not a live sub-account of this HQ that it reaches)`,
      );
  }
  inTransaction(ctx.db, () => {
    stmt(ctx.db, 'DELETE FROM user_account_access WHERE user_id = ?').run(userId);
    for (const id of ids) stmt(ctx.db, 'INSERT INTO user_account_access (user_id, account_id) VALUES (?, ?)').run(userId, id);
  });
  return { message: true as const };
}

// ---------------------------------------------------------------- the purge

/**
 * One bounded step of a purge. Derived from the schema, not listed by hand, so a
 * table added later by anyone is purged without an edit here:
 *
 * - `unlink`: a nullable reference between an account's own rows (a mailing to its
 *   parent or winner, a trigger to its field) is cleared first, so rows can then go in
 *   any order without a foreign-key failure;
 * - `rows of`: a table without account_id whose column names the key of a table with
 *   one (member_id, mailing_id, member_group_id, …, or a foreign key to it) loses the
 *   rows of the account's records, walking those keys in order with a cursor;
 * - `own`: a table with account_id loses the account's rows, referencing tables first.
 *
 * The accounts row itself stays as a tombstone (purged_at), so the id is never reused.
 */
type PurgeTask =
  | { name: string; kind: 'unlink'; table: string; column: string }
  | { name: string; kind: 'dependent'; table: string; column: string; owner: string; key: string }
  | { name: string; kind: 'own'; table: string };

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The purge's steps for the current schema (memoized until the schema changes). */
export function purgeTasks(db: Db): PurgeTask[] {
  const version = db.pragma('schema_version', { simple: true }) as number;
  const known = taskCache.get(db);
  if (known?.version === version) return known.tasks;
  const tasks = computePurgeTasks(db);
  taskCache.set(db, { version, tasks });
  return tasks;
}
const taskCache = new WeakMap<Db, { version: number; tasks: PurgeTask[] }>();

interface TableInfo {
  name: string;
  columns: { name: string; notnull: number; pk: number; type: string }[];
  fks: { table: string; from: string; to: string | null; on_delete: string }[];
  /** Columns that lead some index (the primary key's first column included). */
  leading: Set<string>;
}

function computePurgeTasks(db: Db): PurgeTask[] {
  const names = db
    .prepare(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'accounts' ORDER BY name`,
    )
    .pluck()
    .all() as string[];
  const tables: TableInfo[] = names.map((name) => {
    const columns = db.prepare(`SELECT name, "notnull", pk, type FROM pragma_table_info(?)`).all(name) as TableInfo['columns'];
    const fks = db.prepare(`SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?)`).all(name) as TableInfo['fks'];
    const leading = new Set<string>(columns.filter((c) => c.pk === 1).map((c) => c.name));
    for (const index of db.prepare(`SELECT name FROM pragma_index_list(?)`).pluck().all(name) as string[]) {
      const first = db.prepare(`SELECT name FROM pragma_index_info(?) WHERE seqno = 0`).pluck().get(index) as string | null;
      if (first) leading.add(first);
    }
    return { name, columns, fks, leading };
  });
  const owned = tables.filter((t) => t.columns.some((c) => c.name === 'account_id'));
  const ownedNames = new Set(owned.map((t) => t.name));
  // The rowid key of each account table: what its dependents name it by.
  const keys = new Map<string, string>();
  for (const t of owned) {
    const pk = t.columns.filter((c) => c.pk > 0);
    if (pk.length === 1 && pk[0].type.toUpperCase() === 'INTEGER') keys.set(t.name, pk[0].name);
  }
  const byKey = new Map([...keys].map(([table, key]) => [key, table]));

  const tasks: PurgeTask[] = [];
  for (const t of owned)
    for (const fk of t.fks)
      if (ownedNames.has(fk.table) && fk.on_delete !== 'CASCADE' && fk.on_delete !== 'SET NULL') {
        const column = t.columns.find((c) => c.name === fk.from);
        if (column && column.notnull === 0 && column.pk === 0)
          tasks.push({ name: `unlink ${t.name}.${fk.from}`, kind: 'unlink', table: t.name, column: fk.from });
      }

  for (const t of tables) {
    if (ownedNames.has(t.name)) continue;
    const links = new Map<string, string>(); // column → owner table
    for (const c of t.columns) if (byKey.has(c.name)) links.set(c.name, byKey.get(c.name)!);
    for (const fk of t.fks) if (keys.has(fk.table) && (fk.to === null || fk.to === keys.get(fk.table))) links.set(fk.from, fk.table);
    // One NOT NULL link names every row (all of a row's links are the same account's),
    // an indexed one if there is (an unindexed one is a scan of the table a step);
    // a nullable link may be empty, so each of those goes too.
    const notNull = (column: string) => t.columns.some((c) => c.name === column && (c.notnull === 1 || c.pk > 0));
    const required = [...links].filter(([column]) => notNull(column));
    const chosen = [
      ...required.filter(([column]) => t.leading.has(column)).slice(0, 1),
      ...(required.some(([column]) => t.leading.has(column)) ? [] : required.slice(0, 1)),
      ...[...links].filter(([column]) => !notNull(column)),
    ];
    for (const [column, owner] of chosen)
      tasks.push({ name: `rows of ${t.name}.${column}`, kind: 'dependent', table: t.name, column, owner, key: keys.get(owner)! });
  }

  // Referencing tables before the tables they reference (a cascade would cover the
  // rest, but a NOT NULL reference without one would fail).
  const ordered: TableInfo[] = [];
  const visiting = new Set<string>();
  const visit = (t: TableInfo) => {
    if (ordered.includes(t) || visiting.has(t.name)) return;
    visiting.add(t.name);
    for (const other of owned) if (other !== t && other.fks.some((fk) => fk.table === t.name)) visit(other);
    ordered.push(t);
  };
  for (const t of owned) visit(t);
  for (const t of ordered) tasks.push({ name: `own ${t.name}`, kind: 'own', table: t.name });
  return tasks;
}

/**
 * A step holds the write lock: it deletes in statements of PURGE_BATCH rows until
 * PURGE_STEP_MS have passed or PURGE_STEP_ROWS are gone. A member costs ~0.1 ms to
 * delete (its indexes, the foreign keys that name it, the count triggers), so rows
 * alone would not bound the time.
 */
export const PURGE_STEP_ROWS = 2_000;
const PURGE_STEP_MS = 20;
const PURGE_BATCH = 50;

/** Runs `batch(limit)` (answering the rows it changed) until the step's time or rows are spent; answers whether nothing is left. */
function boundedStep(batch: (limit: number) => number): boolean {
  const started = Date.now();
  for (let total = 0; total < PURGE_STEP_ROWS && Date.now() - started < PURGE_STEP_MS; ) {
    const n = batch(PURGE_BATCH);
    if (n < PURGE_BATCH) return true;
    total += n;
  }
  return false;
}
/** Record keys of the account one dependent step takes at most. */
const PURGE_KEYS_PER_STEP = 500;
/** Keys (rowids) of the owner table one dependent step reads at most, the account's or not. */
const PURGE_KEY_SPAN = 20_000;

interface DuePurge {
  account_id: number;
  purge_task: string | null;
  purge_cursor: number | null;
}

/** Runs one step of the purge of one account; answers whether that purge is finished. */
function purgeStep(db: Db, clock: Clock, due: DuePurge): boolean {
  const tasks = purgeTasks(db);
  let index = due.purge_task === null ? 0 : tasks.findIndex((t) => t.name === due.purge_task);
  // A task that no longer exists (the schema changed): start over; every step is idempotent.
  if (index < 0) index = 0;
  const task = tasks[index];
  const id = due.account_id;
  let next: { task: string | null; cursor: number | null } | undefined;
  const advance = () => (next = index + 1 < tasks.length ? { task: tasks[index + 1].name, cursor: null } : { task: null, cursor: null });
  if (!task) advance();
  else if (task.kind === 'unlink') {
    const unlink = db.prepare(
      `UPDATE ${q(task.table)} SET ${q(task.column)} = NULL WHERE account_id = ? AND ${q(task.column)} IS NOT NULL ${LIMIT_BOUND}`,
    );
    if (boundedStep((limit) => unlink.run(id, limit).changes)) advance();
  } else if (task.kind === 'own') {
    const remove = db.prepare(`DELETE FROM ${q(task.table)} WHERE account_id = ? ${LIMIT_BOUND}`);
    if (boundedStep((limit) => remove.run(id, limit).changes)) advance();
  } else {
    // The account's records are walked in key (rowid) order with a cursor that only
    // moves forward, a span of rowids a step (NOT INDEXED: a rowid range, never an
    // index of the whole account), so the purge reads the owner table's range once.
    const [key, owner] = [q(task.key), q(task.owner)];
    const from =
      due.purge_cursor ?? (db.prepare(`SELECT min(${key}) FROM ${owner} WHERE account_id = ?`).pluck().get(id) as number | null) ?? 0;
    const chunk = `SELECT ${key} FROM ${owner} NOT INDEXED WHERE ${key} >= ? AND ${key} < ? AND account_id = ? ORDER BY ${key} LIMIT ${PURGE_KEYS_PER_STEP}`;
    const remove = db.prepare(`DELETE FROM ${q(task.table)} WHERE ${q(task.column)} IN (${chunk}) ${LIMIT_BOUND}`);
    if (boundedStep((limit) => remove.run(from, from + PURGE_KEY_SPAN, id, limit).changes)) {
      const keys = db
        .prepare(chunk)
        .pluck()
        .all(from, from + PURGE_KEY_SPAN, id) as number[];
      const cursor = keys.length === PURGE_KEYS_PER_STEP ? keys[keys.length - 1] + 1 : from + PURGE_KEY_SPAN;
      const last = db.prepare(`SELECT max(${key}) FROM ${owner}`).pluck().get() as number | null;
      if (last === null || cursor > last) advance();
      else next = { task: task.name, cursor };
    }
  }
  if (next && next.task === null) {
    stmt(db, 'UPDATE accounts SET purged_at = ?, purge_task = NULL, purge_cursor = NULL WHERE account_id = ?').run(stamp(clock.now()), id);
    return true;
  }
  if (next) stmt(db, 'UPDATE accounts SET purge_task = ?, purge_cursor = ? WHERE account_id = ?').run(next.task, next.cursor, id);
  return false;
}

/** Purges this process could not go on with (it stops trying them; another run may). */
const failedPurges = new WeakMap<Db, Set<number>>();

/**
 * Advances the purges that are due (retired RETIREMENT_DAYS ago on the clock), one
 * bounded transaction a step, for up to budgetMs; answers whether one is still due.
 */
export function advancePurges(db: Db, clock: Clock, budgetMs: number): boolean {
  const started = Date.now();
  const failed = failedPurges.get(db) ?? new Set<number>();
  failedPurges.set(db, failed);
  const due = () =>
    (
      stmt(
        db,
        `SELECT account_id, purge_task, purge_cursor FROM accounts
          WHERE retired_at IS NOT NULL AND purged_at IS NULL AND purge_after <= ? ORDER BY purge_after ${LIMIT_BOUND}`,
      ).all(stamp(clock.now()), failed.size + 1) as DuePurge[]
    ).find((d) => !failed.has(d.account_id));
  // A read first: with no purge due (nearly every call) no write lock is taken, so a
  // local import's writer thread is never held up by the runner between its batches.
  if (!due()) return false;
  for (;;) {
    let account: number | undefined;
    try {
      // Read inside the step's transaction: another process may have taken the step already.
      const stepped = inTransaction(db, () => {
        const next = due();
        account = next?.account_id;
        if (next) purgeStep(db, clock, next);
        return !!next;
      });
      if (!stepped) return false;
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      // A step that fails would fail again on every call and hold up the purges after it.
      if (account === undefined) throw err;
      failed.add(account);
      process.emitWarning(`the purge of account ${account} stopped: ${(err as Error).message}`, 'AmsgPurgeWarning');
    }
    if (Date.now() - started >= budgetMs) return !!due();
  }
}
