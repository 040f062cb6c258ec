/**
 * Member imports. Two ways in, one way of applying rows:
 * - a job (POST /members, the spec's bulk call): the rows are staged in one
 *   transaction, answered with {import_id} at once, and applied q → p → o by whichever
 *   process holds the database (advanceImports);
 * - a stream (amsg members import, an extension): the client opens an import, sends
 *   the rows in batches that are each applied in one transaction, and finishes it.
 *   One file is one import record whatever the body limit, and a killed import
 *   leaves a consistent prefix that can be resumed.
 */
import type { Statement } from 'better-sqlite3';
import { inTransaction, type Db } from '../store/db.js';
import { stmt } from '../store/statements.js';
import { addActive, countJoined, countRestored, countsFollowWrites } from '../store/counters.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { windowOf, type Window } from './paging.js';
import { isEmail } from '../api/schema.js';
import { stamp, type Clock } from './clock.js';
import type { Ctx } from './context.js';
import { localActor } from './accounts.js';
import { coerceValue, FieldCatalog, type FieldRecord } from './fields.js';
import { createGroups, groupIdByName, requireGroups } from './groups.js';
import { normalizePhone, smsColumns, type SmsInput } from './members.js';

export type ImportStatus = 'q' | 'p' | 'o' | 'e';

export interface ImportOptions {
  add_only?: boolean;
  group_ids?: number[];
  source_filename?: string;
  source_name?: string;
  automate_field_changes?: boolean;
  automate_contact_imports?: boolean;
  /** criteria.sms: statuses for imported members that have a phone number. */
  sms?: { transactional_status?: 'a' | 'o'; promotional_status?: 'a' | 'o' };
}

interface ImportRow {
  import_id: number;
  account_id: number;
  status: ImportStatus;
  mode: 'job' | 'stream';
  source_name: string | null;
  source_filename: string | null;
  add_only: number;
  group_ids: string;
  automate_field_changes: number;
  automate_contact_imports: number;
  sms_criteria: string | null;
  num_members: number;
  num_members_added: number;
  num_members_updated: number;
  num_duplicates: number;
  num_skipped: number;
  num_errors: number;
  num_added_by_group: string;
  fields_updated: string;
  error_message: string | null;
  created_at: string;
  import_started: string | null;
  import_finished: string | null;
}

export interface ImportRecord {
  import_id: number;
  account_id: number;
  status: ImportStatus;
  import_started: string | null;
  import_finished: string | null;
  source_name: string | null;
  source_filename: string | null;
  num_members: number;
  num_members_added: number;
  num_members_updated: number;
  num_duplicates: number;
  num_skipped: number;
  num_errors: number;
  num_added_by_group: { member_group_id: number; num_added: number }[];
  groups_updated: number[];
  fields_updated: string[];
  error_message: string | null;
  /** Extensions: how the import was made, and what it was told. */
  mode: 'job' | 'stream';
  add_only: boolean;
  group_ids: number[];
}

const toRecord = (r: ImportRow): ImportRecord => {
  const byGroup = JSON.parse(r.num_added_by_group) as Record<string, number>;
  return {
    import_id: r.import_id,
    account_id: r.account_id,
    status: r.status,
    import_started: r.import_started,
    import_finished: r.import_finished,
    source_name: r.source_name,
    source_filename: r.source_filename,
    num_members: r.num_members,
    num_members_added: r.num_members_added,
    num_members_updated: r.num_members_updated,
    num_duplicates: r.num_duplicates,
    num_skipped: r.num_skipped,
    num_errors: r.num_errors,
    num_added_by_group: Object.entries(byGroup).map(([g, n]) => ({ member_group_id: Number(g), num_added: n })),
    groups_updated: Object.keys(byGroup).map(Number),
    fields_updated: JSON.parse(r.fields_updated) as string[],
    error_message: r.error_message,
    mode: r.mode,
    add_only: r.add_only === 1,
    group_ids: JSON.parse(r.group_ids) as number[],
  };
};

function importRow(ctx: Ctx, importId: number): ImportRow {
  const row = stmt(ctx.db, 'SELECT * FROM member_imports WHERE account_id = ? AND import_id = ?').get(
    ctx.accountId,
    importId,
  ) as ImportRow | undefined;
  if (!row) throw notFound(`import ${importId} not found`);
  return row;
}

export function getImport(ctx: Ctx, importId: number): ImportRecord {
  return toRecord(importRow(ctx, importId));
}

export function listImports(ctx: Ctx): ImportRecord[] {
  return (
    stmt(ctx.db, 'SELECT * FROM member_imports WHERE account_id = ? ORDER BY import_id').all(ctx.accountId) as ImportRow[]
  ).map(toRecord);
}

export type ChangeType = 'a' | 'u' | 's';

export interface ImportMemberItem {
  member_id: number;
  change_type: ChangeType;
  member_status_id: string;
  email: string;
}

/**
 * GET /members/imports/{id}/members, one window in member id order. With no filter,
 * every member the import touched; added_only keeps the members it created;
 * added_to_groups the ones it put in a group.
 *
 * The import's ranges (migration 007) are walked in first_id order, its ledger's
 * primary key, and counted by their lengths: every id of a range is a member (purging
 * one cuts it out), so a page expands only the ranges it falls in, and a deep page
 * costs the ranges before it, not their members.
 */
export function importMembers(
  ctx: Ctx,
  importId: number,
  filter: { all?: boolean; added_only?: boolean; added_to_groups?: boolean } & Window,
): ImportMemberItem[] {
  importRow(ctx, importId);
  const { limit, offset } = windowOf(filter);
  const where: string[] = [];
  if (!filter.all) {
    if (filter.added_only) where.push("change_type = 'a'");
    if (filter.added_to_groups) where.push('added_to_groups = 1');
  }
  const ranges = stmt(
    ctx.db,
    `SELECT first_id, last_id, change_type FROM import_ledger
      WHERE import_id = ?${where.length ? ` AND ${where.join(' AND ')}` : ''} ORDER BY first_id`,
  );
  // The window's part of each range it falls in, taken before any member is read
  // (the ranges' statement stays open while it is iterated).
  const slices: { from: number; to: number; change_type: ChangeType }[] = [];
  let skip = offset;
  let want = limit;
  if (want > 0)
    for (const [first, last, change_type] of ranges.raw().iterate(importId) as IterableIterator<[number, number, ChangeType]>) {
      const length = last - first + 1;
      if (skip >= length) {
        skip -= length;
        continue;
      }
      const from = first + skip;
      const to = Math.min(last, from + want - 1);
      slices.push({ from, to, change_type });
      skip = 0;
      want -= to - from + 1;
      if (want === 0) break;
    }
  const members = stmt(
    ctx.db,
    'SELECT member_id, ? AS change_type, member_status_id, email FROM members WHERE member_id BETWEEN ? AND ? ORDER BY member_id',
  );
  return slices.flatMap((s) => members.all(s.change_type, s.from, s.to) as ImportMemberItem[]);
}

/** The most member ids one import_ledger range spans (the table's CHECK and purge trigger rely on it). */
export const LEDGER_SPAN = 4096;

/**
 * SQL condition: the ledger row `alias` holds member `idExpr` (the first_id index finds
 * the candidates, since a range spans at most LEDGER_SPAN ids).
 */
export const ledgerHolds = (alias: string, idExpr: string) =>
  `${alias}.first_id BETWEEN ${idExpr} - ${LEDGER_SPAN - 1} AND ${idExpr} AND ${alias}.last_id >= ${idExpr}`;

// ---------------------------------------------------------------- creating

function checkOptions(ctx: Ctx, opts: ImportOptions) {
  if (opts.group_ids?.length) requireGroups(ctx, opts.group_ids);
}

function insertImport(ctx: Ctx, opts: ImportOptions, mode: 'job' | 'stream'): number {
  const now = stamp(ctx.clock.now());
  return Number(
    stmt(
      ctx.db,
      `INSERT INTO member_imports (account_id, status, mode, source_name, source_filename, add_only, group_ids,
                                   automate_field_changes, automate_contact_imports, sms_criteria, created_at,
                                   import_started)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      mode === 'job' ? 'q' : 'p',
      mode,
      opts.source_name ?? null,
      opts.source_filename ?? null,
      opts.add_only ? 1 : 0,
      JSON.stringify([...new Set(opts.group_ids ?? [])]),
      opts.automate_field_changes ? 1 : 0,
      opts.automate_contact_imports ? 1 : 0,
      opts.sms ? JSON.stringify(opts.sms) : null,
      now,
      mode === 'stream' ? now : null,
    ).lastInsertRowid,
  );
}

/**
 * Keys of a member row that are not field names: the address, the sms object, and
 * (an extension, for a CSV group column) `groups`, names or ids of groups to join;
 * named groups that do not exist are created.
 */
const RESERVED = new Set(['email', 'sms', 'groups']);

/**
 * Unknown field names in any row are a 400 before anything is written: an import
 * with a misspelt column must not half-apply.
 */
function checkFieldNames(catalog: FieldCatalog, members: Record<string, unknown>[]) {
  const seen = new Set<string>();
  members.forEach((m, i) => {
    for (const key of Object.keys(m)) {
      if (RESERVED.has(key) || seen.has(key)) continue;
      if (!catalog.byName.has(key.toLowerCase()))
        throw badRequest(`members[${i}].${key}: unknown field "${key}" (define it with amsg fields create)`, {
          field: `members[${i}].${key}`,
        });
      seen.add(key);
    }
  });
}

/** POST /members: stages the rows as a job and answers its id at once. */
export function stageImport(ctx: Ctx, members: Record<string, unknown>[], opts: ImportOptions): { import_id: number } {
  return inTransaction(ctx.db, () => {
    checkOptions(ctx, opts);
    checkFieldNames(FieldCatalog.of(ctx), members);
    const importId = insertImport(ctx, opts, 'job');
    const stage = stmt(ctx.db, 'INSERT INTO import_rows (import_id, seq, member) VALUES (?, ?, ?)');
    members.forEach((m, i) => stage.run(importId, i, JSON.stringify(m)));
    return { import_id: importId };
  });
}

/** Opens a streamed import (extension); rows follow with appendRows. */
export function openImport(ctx: Ctx, opts: ImportOptions): ImportRecord {
  const record = inTransaction(ctx.db, () => {
    checkOptions(ctx, opts);
    return getImport(ctx, insertImport(ctx, opts, 'stream'));
  });
  ctx.importWriter?.warm();
  return record;
}

// ---------------------------------------------------------------- checking rows

export interface RowError {
  /** Position of the row in the batch. */
  index: number;
  email: string | null;
  error: string;
}

/** A row not written because an earlier row of the import has its address (the first row wins). */
export interface DuplicateRow {
  /** Position of the row in the batch. */
  index: number;
  email: string;
  /** Position in the batch of the row that was written, or null when that row came in an earlier batch. */
  duplicate_of: number | null;
}

export interface BatchResult {
  import_id: number;
  /** Rows of this batch, and of the whole import so far. */
  received: number;
  num_members: number;
  added: number;
  updated: number;
  duplicates: number;
  skipped: number;
  errors: RowError[];
  /** The rows counted in `duplicates`, in row order. */
  duplicate_rows: DuplicateRow[];
}

interface Counters {
  added: number;
  updated: number;
  duplicates: number;
  duplicateRows: DuplicateRow[];
  skipped: number;
  errors: RowError[];
  byGroup: Record<string, number>;
  fields: Set<string>;
}

/**
 * Rows of a batch after the checks that need no database (the address, each value
 * against its field's type, the sms object), ready to be written. Plain arrays of
 * strings and numbers, column by column: they cross to the import writer's thread
 * (import-writer.ts) as they are, and a row costs no object of its own.
 */
export interface CheckedRows {
  /** Per row that passed: its position in the batch. */
  index: number[];
  /** Lower-cased. */
  emails: string[];
  /** Field values as a merge patch (a null clears a value) ... */
  patches: string[];
  /** ... and as a new member's values (no nulls), or null where that is the patch itself. */
  fresh: (string | null)[];
  /** Which of fieldLists names the fields the row gives a value (counted only once it is written). */
  fieldList: number[];
  fieldLists: string[][];
  /** Which of groupLists the row's `groups` is, or -1 for none (only the import's groups). */
  groupList: number[];
  /** The rows' group lists as given (names or ids), each once: they are resolved by the writer. */
  groupLists: unknown[];
  /** The rows that have an sms object: [row, sms], row counting the passed rows. */
  sms: [number, SmsInput][];
  /** The rows the checks refused. */
  errors: RowError[];
}

/**
 * Rows as a CSV file has them (an extension of the streamed import; what `amsg
 * members import` sends): the columns once, then each row's values in their order,
 * as text. A column is `email`, `groups` (group names separated by `;` or `|`,
 * created when missing), `phone_number` (the SMS number) or a field's shortcut
 * name. Values are trimmed, and an empty one leaves what the member has as it is.
 */
export interface CsvRows {
  columns: string[];
  rows: string[][];
}

/** A batch's rows: member objects (the spec's form, where '' or null clears a value), or CSV rows. */
export type RowsInput = Record<string, unknown>[] | CsvRows;

export const rowCount = (input: RowsInput): number => (Array.isArray(input) ? input.length : input.rows.length);

export const sliceRows = (input: RowsInput, start: number, end: number): RowsInput =>
  Array.isArray(input) ? input.slice(start, end) : { columns: input.columns, rows: input.rows.slice(start, end) };

/** Keys of a CSV row that are not field names. */
const CSV_RESERVED = new Set(['email', 'groups', 'phone_number']);

/** How a CSV groups value separates names. */
const GROUP_SEPARATOR = /\s*[;|]\s*/;

/**
 * CSV columns each name a field or one of email, groups and phone_number, once, and
 * one of them is email: otherwise the batch is refused whole (a 400 naming each
 * problem) before anything is written.
 */
function checkColumns(catalog: FieldCatalog, input: RowsInput) {
  if (Array.isArray(input)) return;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const column of input.columns) {
    const target = CSV_RESERVED.has(column) ? column : catalog.byName.get(column.toLowerCase())?.shortcut_name;
    if (target === undefined) problems.push(`"${column}" is not a field (nor email, groups or phone_number)`);
    else if (seen.has(target)) problems.push(`"${column}" is given twice`);
    else seen.add(target);
  }
  if (!seen.has('email')) problems.push('there is no email column');
  if (problems.length) throw badRequest(`columns: ${problems.join('; ')}`, { field: 'columns' });
}

/** Characters JSON.stringify escapes in a string: quote, backslash, controls, lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * What the rows with one key order do with each key, worked out once per batch: a
 * row's values land in slots, one per distinct field in ascending field id, so its
 * JSON is written in one pass with each key's text made once.
 */
interface Shape {
  keys: string[];
  /** Per key: its field, null for a key that is not a field (email, groups, …), undefined for an unknown name. */
  fields: (FieldRecord | null | undefined)[];
  /** Per key: its field's slot. */
  slotOf: number[];
  /** Per slot: `"12":`, the field id as a JSON key. */
  jsonKeys: string[];
  /** Which of CheckedRows.fieldLists names all the keys' fields (what a row with no empty value gives). */
  names: number;
  /** The current row's stored values, by slot. */
  scratch: unknown[];
  /** Positions of the keys that are not fields, or -1. */
  email: number;
  groups: number;
  sms: number;
  phone: number;
}

function shapeOf(catalog: FieldCatalog, keys: string[], reserved: Set<string>, fieldLists: string[][]): Shape {
  const fields = keys.map((key) => (reserved.has(key) ? null : catalog.byName.get(key.toLowerCase())));
  const ids = [...new Set(fields.filter((f): f is FieldRecord => !!f).map((f) => f.field_id))].sort((a, b) => a - b);
  return {
    keys,
    fields,
    slotOf: fields.map((f) => (f ? ids.indexOf(f.field_id) : -1)),
    jsonKeys: ids.map((id) => `"${id}":`),
    names: fieldLists.push(fields.filter((f): f is FieldRecord => !!f).map((f) => f.shortcut_name)) - 1,
    scratch: ids.map(() => undefined),
    email: reserved.has('email') ? keys.indexOf('email') : -1,
    groups: reserved.has('groups') ? keys.indexOf('groups') : -1,
    sms: reserved.has('sms') ? keys.indexOf('sms') : -1,
    phone: reserved.has('phone_number') ? keys.indexOf('phone_number') : -1,
  };
}

/**
 * The current row's `{field_id: value}` as JSON text, keys in ascending order as
 * JSON.stringify writes integer keys; without the nulls for a new member. Written by
 * hand because JSON.stringify of an object with integer keys took 2 µs a row.
 */
function slotsJson(shape: Shape, withNulls: boolean): string {
  const { scratch, jsonKeys } = shape;
  let out = '';
  for (let k = 0; k < scratch.length; k++) {
    const v = scratch[k];
    if (v === undefined || (v === null && !withNulls)) continue;
    // A string with nothing to escape is its own JSON between quotes (JSON.stringify
    // per value was most of this function's time).
    const json = typeof v === 'string' && !NEEDS_ESCAPE.test(v) ? `"${v}"` : JSON.stringify(v);
    out += (out ? ',' : '{') + jsonKeys[k] + json;
  }
  return out ? `${out}}` : '{}';
}

/** A group list of a member object (names and ids) as a text key, or undefined for anything else. */
function groupsKey(value: unknown): string | undefined {
  const list = Array.isArray(value) ? value : [value];
  let key = '';
  for (const g of list) {
    if (typeof g === 'string') key += `s${g}\u0000`;
    else if (typeof g === 'number') key += `n${g}\u0000`;
    else return undefined;
  }
  return key;
}

/** The group lists of a set of rows, each kept once (a group column repeats a few lists over and over). */
class GroupLists {
  private readonly byKey = new Map<string, number>();
  /** The CLI of old handed one array to every row with the same list: known by identity, no key to build. */
  private readonly byIdentity = new Map<unknown, number>();
  constructor(private readonly lists: unknown[]) {}

  /** A member object's `groups`: its list's number, or -1 for none. */
  ofValue(value: unknown): number {
    if (value === undefined || value === null || value === '') return -1;
    const known = this.byIdentity.get(value);
    if (known !== undefined) return known;
    const key = groupsKey(value);
    let n = key === undefined ? undefined : this.byKey.get(key);
    if (n === undefined) n = this.lists.push(value) - 1;
    if (key !== undefined) this.byKey.set(key, n);
    if (typeof value === 'object') this.byIdentity.set(value, n);
    return n;
  }

  /** A CSV groups value: its list's number, or -1 for none. */
  ofText(text: string): number {
    let n = this.byKey.get(text);
    if (n === undefined) {
      const names = text.split(GROUP_SEPARATOR).filter(Boolean);
      n = names.length ? this.lists.push(names) - 1 : -1;
      this.byKey.set(text, n);
    }
    return n;
  }
}

/**
 * Checks and converts one row of `shape`, given its values in key order, and adds it
 * to `out` (or its error). `csv`: the values are CSV text (trimmed; empty leaves a
 * value as it is); otherwise they are JSON values (null or '' clears a value).
 */
function checkRow(out: CheckedRows, shape: Shape, values: unknown[], index: number, csv: boolean, lists: GroupLists) {
  const emailValue = shape.email === -1 ? undefined : values[shape.email];
  const rawEmail = typeof emailValue === 'string' ? emailValue.trim() : null;
  try {
    if (!rawEmail || !isEmail(rawEmail))
      throw badRequest(rawEmail ? `"${rawEmail}" is not a valid e-mail address` : 'email is missing');
    // Field values in key order (a field named twice in different case keeps the
    // last value, as an object's key would), stored by the field's slot.
    const { keys, fields, slotOf, scratch } = shape;
    if (csv) scratch.fill(undefined);
    let partial = false;
    for (let j = 0; j < keys.length; j++) {
      const field = fields[j];
      if (field === null) continue;
      if (field === undefined) throw badRequest(`unknown field "${keys[j]}"`);
      let value = values[j];
      if (csv) {
        value = (value as string).trim();
        if (value === '') {
          partial = true;
          continue;
        }
      }
      const stored = value === null || value === '' ? null : coerceValue(field, value, keys[j]);
      scratch[slotOf[j]] = stored;
      if (stored === null) partial = true;
    }
    // The fields given a value: all of the shape's, or the ones not emptied.
    let fieldList = shape.names;
    if (partial) {
      const names: string[] = [];
      for (let j = 0; j < keys.length; j++) {
        const field = fields[j];
        if (!field) continue;
        const value = csv ? (values[j] as string).trim() : values[j];
        if (value !== null && value !== '') names.push(field.shortcut_name);
      }
      fieldList = out.fieldLists.push(names) - 1;
    }
    let sms: SmsInput | undefined;
    if (shape.sms !== -1) sms = checkSms(values[shape.sms]);
    else if (shape.phone !== -1) {
      const phone = (values[shape.phone] as string).trim();
      if (phone) sms = checkSms({ phone_number: phone });
    }
    const groupList =
      shape.groups === -1 ? -1 : csv ? lists.ofText((values[shape.groups] as string).trim()) : lists.ofValue(values[shape.groups]);
    const patch = slotsJson(shape, true);
    if (sms) out.sms.push([out.index.length, sms]);
    out.index.push(index);
    out.emails.push(rawEmail.toLowerCase());
    out.patches.push(patch);
    out.fresh.push(partial ? slotsJson(shape, false) : null);
    out.fieldList.push(fieldList);
    out.groupList.push(groupList);
  } catch (err) {
    out.errors.push({ index, email: rawEmail, error: (err as Error).message });
  }
}

/**
 * Checks and converts rows (positions `offset` on in their batch) against the field
 * catalog; a bad row is an error of its own, not the batch's. Needs no database, so
 * it runs on the thread that received the rows while the import writer writes.
 * What each key order does is worked out once (the rows of a batch nearly always
 * share one; CSV rows always do).
 */
export function checkRows(catalog: FieldCatalog, input: RowsInput, offset = 0): CheckedRows {
  const out: CheckedRows = {
    index: [],
    emails: [],
    patches: [],
    fresh: [],
    fieldList: [],
    fieldLists: [],
    groupList: [],
    groupLists: [],
    sms: [],
    errors: [],
  };
  const lists = new GroupLists(out.groupLists);
  if (!Array.isArray(input)) {
    const shape = shapeOf(catalog, input.columns, CSV_RESERVED, out.fieldLists);
    const width = input.columns.length;
    input.rows.forEach((values, r) => {
      if (values.length === width) checkRow(out, shape, values, offset + r, true, lists);
      else
        out.errors.push({
          index: offset + r,
          email: null,
          error: `has ${values.length} values; there are ${width} columns`,
        });
    });
    return out;
  }
  const shapes = new Map<string, Shape>();
  let shape: Shape | undefined;
  for (let r = 0; r < input.length; r++) {
    const row = input[r];
    // The row's shape: the last one if its keys are the same, in the same order.
    let k = 0;
    if (shape !== undefined)
      for (const key in row) {
        if (shape.keys[k] !== key) {
          k = -1;
          break;
        }
        k++;
      }
    if (shape === undefined || k !== shape.keys.length) {
      const keys: string[] = [];
      for (const key in row) keys.push(key);
      const id = keys.join('\u0000');
      shape = shapes.get(id);
      if (!shape) shapes.set(id, (shape = shapeOf(catalog, keys, RESERVED, out.fieldLists)));
    }
    const keys = shape.keys;
    const values: unknown[] = [];
    for (let j = 0; j < keys.length; j++) values.push(row[keys[j]]);
    checkRow(out, shape, values, offset + r, false, lists);
  }
  return out;
}

// ---------------------------------------------------------------- writing rows

interface Existing {
  member_id: number;
  email: string;
  seen: number;
  sms_phone_number: string | null;
  sms_region_code: string | null;
  sms_transactional_status: 'a' | 'o' | null;
  sms_promotional_status: 'a' | 'o' | null;
}

/**
 * One batch being written, inside its transaction: the import, the counters, and
 * what the batch has seen so far. Its rows may come in several sets of checked
 * rows (the import writer gets a batch in slices, written as they are checked).
 */
export interface BatchWrite {
  ctx: Ctx;
  imp: ImportRow;
  now: string;
  importGroups: number[];
  smsCriteria: ImportOptions['sms'];
  c: Counters;
  /** Addresses written or skipped by this batch, with the position of that row: a second row for one is its duplicate. */
  seen: Map<string, number>;
  /** Group ids by lower-cased name, as rows' lists name them. */
  groupIds: Map<string, number>;
  /**
   * Whether to insert rows before looking them up: while an import adds members
   * (a first import), the lookup finds nobody and costs as much as a tenth of the
   * writing. The first conflict turns it off for the rest of the batch.
   */
  insertFirst: boolean;
}

/**
 * Starts writing a batch into import `imp`, inside the caller's transaction. A group
 * deleted since the import was opened fails the batch (a 404): joining it would make
 * memberships of a group that no longer exists.
 */
function beginWrite(ctx: Ctx, imp: ImportRow, now: string): BatchWrite {
  const importGroups = JSON.parse(imp.group_ids) as number[];
  requireGroups(ctx, importGroups);
  return {
    ctx,
    imp,
    now,
    importGroups,
    smsCriteria: imp.sms_criteria ? (JSON.parse(imp.sms_criteria) as ImportOptions['sms']) : undefined,
    c: newCounters(),
    seen: new Map(),
    groupIds: new Map(),
    insertFirst: imp.num_members_added >= imp.num_members_updated,
  };
}

/** The ids of a row's group list (names are created when missing), with the import's own groups. */
function resolveGroups(w: BatchWrite, value: unknown): number[] {
  const { ctx } = w;
  const list = Array.isArray(value) ? value : [value];
  const extra = list.map((g) => {
    if (typeof g === 'number' && Number.isSafeInteger(g)) {
      requireGroups(ctx, [g]);
      return g;
    }
    if (typeof g !== 'string' || !g.trim()) throw badRequest('groups: must be group names or ids');
    const name = g.trim();
    let id = w.groupIds.get(name.toLowerCase()) ?? groupIdByName(ctx, name);
    if (id === undefined) id = createGroups(ctx, [{ group_name: name }])[0].member_group_id;
    w.groupIds.set(name.toLowerCase(), id);
    return id;
  });
  return extra.length ? [...new Set([...w.importGroups, ...extra])] : w.importGroups;
}

/**
 * Decides rows against the members they name, found by one lookup: new or updated,
 * a duplicate (this import already wrote the member), skipped (add_only), or refused
 * (an sms part that does not fit the member).
 */
function decideAfterLookup(w: BatchWrite, rows: CheckedRows, listIds: (number[] | Error)[], records: Written[], fresh: Written[]) {
  const { ctx, imp, now, c } = w;
  // Who already exists, and who this import has already seen (a duplicate).
  const existing = new Map<string, Existing>();
  for (const m of stmt(
    ctx.db,
    `SELECT m.member_id, m.email, m.sms_phone_number, m.sms_region_code, m.sms_transactional_status,
            m.sms_promotional_status,
            EXISTS (SELECT 1 FROM import_ledger l WHERE l.import_id = ? AND ${ledgerHolds('l', 'm.member_id')}) AS seen
       FROM members m WHERE m.account_id = ? AND m.email IN (SELECT value FROM json_each(?))`,
  ).all(imp.import_id, ctx.accountId, JSON.stringify(rows.emails)) as Existing[])
    existing.set(m.email, m);

  // Decide, in file order, what each row does; new members are inserted together
  // after the loop (ids follow file order), existing ones updated in place. Field
  // values merge into what the member has (json_patch drops keys set to null); an
  // archived member comes back; the status is never touched (an opt-out stays out).
  const added: Written[] = [];
  const updated: Written[] = [];
  const smsOf = new Map(rows.sms);
  for (let i = 0; i < rows.emails.length; i++) {
    const email = rows.emails[i];
    const found = existing.get(email);
    const list = rows.groupList[i];
    const groups = list === -1 ? w.importGroups : listIds[list];
    if (groups instanceof Error) {
      refuseRow(c, { index: rows.index[i], email, error: groups.message });
      continue;
    }
    if (found?.seen || w.seen.has(email)) {
      // Seen by this batch (perhaps in an earlier slice, already in the ledger) or by an earlier one.
      countDuplicate(c, rows.index[i], email, w.seen.get(email));
      continue;
    }
    if (found && imp.add_only) {
      w.seen.set(email, rows.index[i]);
      records.push({ id: found.member_id, change: 's', row: i, groups });
      c.skipped++;
      continue;
    }
    // Whether the sms part fits this member (a status needs a number) is known only
    // now; it is decided before the member is written, so a refused row writes nothing
    // (and a later row for the same address is not its duplicate).
    let sms: Record<string, unknown> | undefined;
    try {
      sms = smsChanges(now, found, smsOf.get(i), w.smsCriteria);
    } catch (err) {
      refuseRow(c, { index: rows.index[i], email, error: (err as Error).message });
      continue;
    }
    w.seen.set(email, rows.index[i]);
    if (!found) {
      const r = { id: 0, change: 'a' as const, row: i, groups, sms };
      records.push(r);
      added.push(r);
      c.added++;
    } else {
      const r = { id: found.member_id, change: 'u' as const, row: i, groups, sms };
      records.push(r);
      updated.push(r);
      c.updated++;
    }
  }
  updateMembers(ctx, now, imp.import_id, rows, updated);
  insertMembers(ctx, now, imp.import_id, rows, added);
  fresh.push(...added);
}

/** A row dropped as a duplicate: counted, and told with the row it repeats (undefined: one of an earlier batch). */
function countDuplicate(c: Counters, index: number, email: string, of: number | undefined) {
  c.duplicates++;
  c.duplicateRows.push({ index, email, duplicate_of: of ?? null });
}

/** A row refused: skipped, and told with its reason. */
function refuseRow(c: Counters, error: RowError) {
  c.skipped++;
  c.errors.push(error);
}

/**
 * Writes checked rows. The hot path of a million-member import, so the work is per
 * set of rows where SQL allows: one lookup of the existing members, multi-row
 * inserts of the new ones, and one statement per group for the memberships and one
 * for the import's records, since every statement sent from JS costs microseconds.
 */
function writeRows(w: BatchWrite, rows: CheckedRows) {
  const { ctx, imp, now, c } = w;
  const db = ctx.db;
  for (const e of rows.errors) refuseRow(c, e);

  // 1. The rows' group lists (a bad one is an error of each row that names it).
  const listIds = rows.groupLists.map((list): number[] | Error => {
    try {
      return resolveGroups(w, list);
    } catch (err) {
      return err as Error;
    }
  });
  /** Per member written or skipped, in file order: its id (0 until inserted), change, row and groups. */
  const records: Written[] = [];
  const fresh: Written[] = [];

  // 2. Rows that are a member's values and groups and nothing else are written
  // without a lookup: as new members while the import adds, or else by an insert
  // that updates the member it finds. Rows with an sms part or a cleared value, and
  // an add_only import, are decided against the member, after a lookup.
  // Without counting triggers (the writer thread), the batch counts what it wrote
  // (src/store/counters.ts): its new members, archived ones it brought back, and
  // the memberships it made. Which rows name an archived member is asked only of an
  // account that has any.
  const counting = !countsFollowWrites(db);
  const archived =
    counting && stmt(db, 'SELECT EXISTS (SELECT 1 FROM members WHERE account_id = ? AND deleted_at IS NOT NULL)').pluck().get(ctx.accountId)
      ? (stmt(
          db,
          'SELECT member_id FROM members WHERE account_id = ? AND deleted_at IS NOT NULL AND email IN (SELECT value FROM json_each(?))',
        )
          .pluck()
          .all(ctx.accountId, JSON.stringify(rows.emails)) as number[])
      : [];

  if (!imp.add_only && !rows.sms.length && rows.fresh.every((f) => f === null)) {
    const from = w.insertFirst ? insertNew(w, rows, listIds, records, fresh) : 0;
    if (from < rows.emails.length) upsertRows(w, rows, listIds, from, records, fresh);
  } else decideAfterLookup(w, rows, listIds, records, fresh);

  if (counting) {
    addActive(db, { accountId: ctx.accountId }, fresh.length);
    if (archived.length) {
      const back = stmt(db, 'SELECT member_id FROM members WHERE member_id IN (SELECT value FROM json_each(?)) AND deleted_at IS NULL')
        .pluck()
        .all(JSON.stringify(archived)) as number[];
      // Before the memberships below, which are counted as the live members' they now are.
      if (back.length) countRestored(db, JSON.stringify(back));
    }
  }

  // Who joins which group: the members added here apart, since they can be in no
  // group yet (checked below), so their memberships need no RETURNING.
  const joins = new Map<number, number[]>();
  const joinsFresh = new Map<number, number[]>();
  let lastFields = -1;
  for (const r of records) {
    if (r.change === 's') continue;
    if (r.sms) setColumns(ctx, r.id, r.sms);
    // Rows of one shape share their list of field names.
    const fields = rows.fieldList[r.row];
    if (fields !== lastFields) for (const f of rows.fieldLists[(lastFields = fields)]) c.fields.add(f);
    const to = r.change === 'a' ? joinsFresh : joins;
    for (const g of r.groups) {
      let list = to.get(g);
      if (!list) to.set(g, (list = []));
      list.push(r.id);
    }
  }

  // 5. Memberships, one statement per group; RETURNING says who is new in it. When no
  // membership names an id in the range of the new members (none can: their ids are
  // new, and deleting a member deletes its memberships), every one of theirs is new,
  // and their statements need no RETURNING (about 0.6 µs a row).
  const joined = new Set<number>();
  let freshJoinAll = false;
  if (joinsFresh.size) {
    let lo = fresh[0].id;
    let hi = lo;
    for (const r of fresh) {
      if (r.id < lo) lo = r.id;
      if (r.id > hi) hi = r.id;
    }
    freshJoinAll = !stmt(db, 'SELECT EXISTS (SELECT 1 FROM group_members WHERE member_id BETWEEN ? AND ?)')
      .pluck()
      .get(lo, hi);
    if (freshJoinAll)
      for (const [groupId, memberIds] of joinsFresh) {
        // No time of its own: the membership began with the member (migration 010).
        const added = stmt(
          db,
          `INSERT OR IGNORE INTO group_members (member_group_id, member_id)
           SELECT ?, value FROM json_each(?)`,
        ).run(groupId, JSON.stringify(memberIds)).changes;
        if (added !== memberIds.length) throw new Error('import: a new member was already in a group');
        c.byGroup[groupId] = (c.byGroup[groupId] ?? 0) + added;
        if (counting) addActive(db, { groupId }, added);
      }
    else
      for (const [groupId, memberIds] of joinsFresh) {
        const list = joins.get(groupId);
        if (list) list.push(...memberIds);
        else joins.set(groupId, memberIds);
      }
  }
  for (const [groupId, memberIds] of joins) {
    const added = stmt(
      db,
      `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
       SELECT ?, value, ? FROM json_each(?) RETURNING member_id`,
    )
      .pluck()
      .all(groupId, now, JSON.stringify(memberIds)) as number[];
    if (added.length) c.byGroup[groupId] = (c.byGroup[groupId] ?? 0) + added.length;
    if (counting && added.length) countJoined(db, JSON.stringify(added), groupId);
    for (const id of added) joined.add(id);
  }

  // 6. What the import did to each member, as ranges of consecutive ids with the same
  // change and group flag (migration 007): the new members of a batch have consecutive
  // ids, so a batch is usually one or a few ledger rows, written in one statement.
  /** Member ids by kind: change a, u or s (0, 1, 2) times two, plus one when added to a group. */
  const byKind: number[][] = [[], [], [], [], [], []];
  const CHANGES: ChangeType[] = ['a', 'u', 's'];
  for (const r of records) {
    const inGroup = freshJoinAll && r.change === 'a' ? r.groups.length > 0 : joined.has(r.id);
    byKind[CHANGES.indexOf(r.change) * 2 + (inGroup ? 1 : 0)].push(r.id);
  }
  const ranges: [number, number, string, number][] = [];
  byKind.forEach((ids, kind) => {
    if (!ids.length) return;
    ids.sort((a, b) => a - b);
    let first = ids[0];
    for (let i = 1; i <= ids.length; i++)
      if (i === ids.length || ids[i] !== ids[i - 1] + 1 || ids[i] - first >= LEDGER_SPAN) {
        ranges.push([first, ids[i - 1], CHANGES[kind >> 1], kind & 1]);
        first = ids[i];
      }
  });
  if (ranges.length)
    stmt(
      db,
      `INSERT INTO import_ledger (import_id, first_id, last_id, change_type, added_to_groups)
       SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`,
    ).run(imp.import_id, JSON.stringify(ranges));
}

/** Saves the batch's counters and answers what it did; row errors in row order. */
function finishWrite(w: BatchWrite, received: number, rejected: number): Omit<BatchResult, 'import_id' | 'num_members'> {
  const { c } = w;
  c.errors.sort((a, b) => a.index - b.index);
  c.duplicateRows.sort((a, b) => a.index - b.index);
  return {
    received,
    added: c.added,
    updated: c.updated,
    duplicates: c.duplicates,
    skipped: c.skipped + rejected,
    errors: c.errors,
    duplicate_rows: c.duplicateRows,
  };
}

/** New members per INSERT statement: one statement per row cost more than the row's own b-tree work. */
const INSERT_CHUNK = 100;

const insertStatements = new WeakMap<Db, Statement[]>();

/**
 * The INSERT of n members, prepared once per database (by count: its text is long to
 * build and to look up). The account and the time are named parameters bound once
 * per statement, so a row binds only its address and values.
 */
function insertStatement(db: Db, n: number): Statement {
  let byCount = insertStatements.get(db);
  if (!byCount) insertStatements.set(db, (byCount = []));
  return (byCount[n] ??= db.prepare(
    'INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at, field_values, last_import_id) VALUES ' +
      Array(n).fill("(@account, ?, 'a', @now, @now, ?, @import)").join(', '),
  ));
}

/** A member written or skipped by a batch: its id (0 until inserted), change, row and groups. */
interface Written {
  id: number;
  change: ChangeType;
  row: number;
  groups: number[];
  sms?: Record<string, unknown>;
}

/**
 * Inserts one statement's worth of new members and sets their ids. A rowid table
 * gives each inserted row max(rowid) + 1, so the rows of one statement get
 * consecutive ids ending at lastInsertRowid; that is checked, and the ids are looked
 * up by address should it ever not hold. With `mayExist`, an address that is already
 * a member fails the statement, which SQLite then undoes: answers false, having
 * written nothing.
 */
function insertChunk(
  ctx: Ctx,
  now: string,
  importId: number,
  rows: CheckedRows,
  chunk: { id: number; row: number }[],
  mayExist = false,
): boolean {
  const args: unknown[] = [];
  for (const r of chunk) args.push(rows.emails[r.row], rows.fresh[r.row] ?? rows.patches[r.row]);
  let res;
  try {
    res = insertStatement(ctx.db, chunk.length).run(args, { account: ctx.accountId, now, import: importId });
  } catch (err) {
    if (mayExist && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return false;
    throw err;
  }
  const last = Number(res.lastInsertRowid);
  const emailOf = stmt(ctx.db, 'SELECT email FROM members WHERE member_id = ?').pluck();
  if (
    res.changes === chunk.length &&
    emailOf.get(last - chunk.length + 1) === rows.emails[chunk[0].row] &&
    emailOf.get(last) === rows.emails[chunk[chunk.length - 1].row]
  )
    chunk.forEach((r, i) => (r.id = last - chunk.length + 1 + i));
  else {
    const byEmail = stmt(ctx.db, 'SELECT member_id FROM members WHERE account_id = ? AND email = ?').pluck();
    for (const r of chunk) r.id = byEmail.get(ctx.accountId, rows.emails[r.row]) as number;
  }
  return true;
}

const upsertStatements = new WeakMap<Db, Statement[]>();

/**
 * The insert of n members that updates the member an address already is instead:
 * its values merged (as a patch), its last change stamped, an archived member back.
 * A member this import already holds is left as it is (a duplicate): no row of
 * RETURNING comes back for it.
 */
function upsertStatement(db: Db, n: number): Statement {
  let byCount = upsertStatements.get(db);
  if (!byCount) upsertStatements.set(db, (byCount = []));
  return (byCount[n] ??= db
    .prepare(
      'INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at, field_values, last_import_id) VALUES ' +
        Array(n).fill("(@account, ?, 'a', @now, @now, ?, @import)").join(', ') +
        // Values equal to the patch (a file imported again) are kept, not merged.
        ` ON CONFLICT (account_id, email) DO UPDATE
            SET field_values = CASE WHEN members.field_values = excluded.field_values THEN members.field_values
                                    ELSE json_patch(members.field_values, excluded.field_values) END,
                last_modified_at = excluded.last_modified_at, deleted_at = NULL,
                last_import_id = max(ifnull(members.last_import_id, 0), @import)
          WHERE ifnull(members.last_import_id, 0) < @import
             OR (members.last_import_id > @import
                 AND NOT EXISTS (SELECT 1 FROM import_ledger l WHERE l.import_id = @import AND ${ledgerHolds('l', 'members.member_id')}))
         RETURNING member_id, email`,
    )
    .raw());
}

/**
 * Writes rows from `from` on as new or updated members, a statement's worth at a
 * time, with one probe of the email index per row (a lookup and then an update
 * were two, the most of a re-import). New members are told from updated ones by
 * their ids: a new id is above every id there was before.
 */
function upsertRows(w: BatchWrite, rows: CheckedRows, listIds: (number[] | Error)[], from: number, records: Written[], fresh: Written[]) {
  const { ctx, c } = w;
  const before = (stmt(ctx.db, 'SELECT max(member_id) FROM members').pluck().get() as number | null) ?? 0;
  const named = { account: ctx.accountId, now: w.now, import: w.imp.import_id };
  for (let at = from; at < rows.emails.length; ) {
    const { chunk, end } = takeChunk(w, rows, listIds, at);
    countPassedOver(w, rows, listIds, at, end, chunk);
    at = end;
    if (!chunk.length) continue;
    const args: unknown[] = [];
    for (const r of chunk) args.push(rows.emails[r.row], rows.patches[r.row]);
    const ids = new Map<string, number>();
    for (const [id, email] of upsertStatement(ctx.db, chunk.length).all(args, named) as [number, string][]) ids.set(email, id);
    for (const r of chunk) {
      const id = ids.get(rows.emails[r.row]);
      if (id === undefined) {
        // The upsert leaves a member this import already holds: written by an earlier batch.
        countDuplicate(c, rows.index[r.row], rows.emails[r.row], undefined);
        continue;
      }
      r.id = id;
      records.push(r);
      if (id > before) {
        fresh.push(r);
        c.added++;
      } else {
        r.change = 'u';
        c.updated++;
      }
    }
  }
}

/** Members updated per UPDATE statement. */
const UPDATE_CHUNK = 500;

/**
 * Merges rows' values into existing members, a statement per chunk (one per member
 * was most of a re-import): each member's values patch in one JSON array of
 * [member_id, patch], joined to the members by id.
 */
function updateMembers(ctx: Ctx, now: string, importId: number, rows: CheckedRows, updated: { id: number; row: number }[]) {
  const update = stmt(
    ctx.db,
    `UPDATE members SET field_values = json_patch(members.field_values, u.value -> 1), last_modified_at = ?,
            deleted_at = NULL, last_import_id = max(ifnull(members.last_import_id, 0), ?)
       FROM json_each(?) AS u WHERE members.member_id = u.value ->> 0`,
  );
  for (let start = 0; start < updated.length; start += UPDATE_CHUNK) {
    let json = '';
    for (let k = start; k < Math.min(updated.length, start + UPDATE_CHUNK); k++)
      json += `${json ? ',' : '['}[${updated[k].id},${rows.patches[updated[k].row]}]`;
    update.run(now, importId, `${json}]`);
  }
}

/** Inserts new members with multi-row INSERT … VALUES statements. */
function insertMembers(ctx: Ctx, now: string, importId: number, rows: CheckedRows, fresh: { id: number; row: number }[]) {
  for (let start = 0; start < fresh.length; start += INSERT_CHUNK)
    insertChunk(ctx, now, importId, rows, fresh.slice(start, start + INSERT_CHUNK));
}

/**
 * The rows from `at` on, up to a statement's worth with an address new to the batch
 * and good groups; their addresses are taken into `seen`. Answers them and where
 * they end.
 */
function takeChunk(w: BatchWrite, rows: CheckedRows, listIds: (number[] | Error)[], at: number) {
  const chunk: Written[] = [];
  let end = at;
  for (; end < rows.emails.length && chunk.length < INSERT_CHUNK; end++) {
    const email = rows.emails[end];
    const list = rows.groupList[end];
    const groups = list === -1 ? w.importGroups : listIds[list];
    if (groups instanceof Error || w.seen.has(email)) continue;
    w.seen.set(email, rows.index[end]);
    chunk.push({ id: 0, change: 'a', row: end, groups });
  }
  return { chunk, end };
}

/** Counts the rows from `at` to `end` that takeChunk passed over: a bad group list is an error, a seen address a duplicate. */
function countPassedOver(w: BatchWrite, rows: CheckedRows, listIds: (number[] | Error)[], at: number, end: number, chunk: Written[]) {
  const { c } = w;
  for (let i = at, k = 0; i < end; i++) {
    if (chunk[k]?.row === i) {
      k++;
      continue;
    }
    const list = rows.groupList[i];
    const groups = list === -1 ? undefined : listIds[list];
    if (groups instanceof Error) refuseRow(c, { index: rows.index[i], email: rows.emails[i], error: groups.message });
    else countDuplicate(c, rows.index[i], rows.emails[i], w.seen.get(rows.emails[i]));
  }
}

/**
 * Writes the rows as new members, a statement's worth at a time, without looking
 * them up: the insert finds an existing address itself (its unique index), and that
 * statement is then undone. Answers the first row not decided here (all of them, or
 * where the first existing member turned up); the rest go the upsert's way.
 */
function insertNew(w: BatchWrite, rows: CheckedRows, listIds: (number[] | Error)[], records: Written[], fresh: Written[]): number {
  for (let at = 0; at < rows.emails.length; ) {
    const { chunk, end } = takeChunk(w, rows, listIds, at);
    if (chunk.length && !insertChunk(w.ctx, w.now, w.imp.import_id, rows, chunk, true)) {
      // Undone: these rows are decided again, the other way.
      for (const r of chunk) w.seen.delete(rows.emails[r.row]);
      w.insertFirst = false;
      return at;
    }
    records.push(...chunk);
    fresh.push(...chunk);
    w.c.added += chunk.length;
    countPassedOver(w, rows, listIds, at, end, chunk);
    at = end;
  }
  return rows.emails.length;
}

const SMS_KEYS = new Set(['phone_number', 'region_code', 'transactional_status', 'promotional_status']);

/** A row's sms object, checked as far as it can be without the member (the number's form, the statuses). */
function checkSms(value: unknown): SmsInput | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw badRequest('sms: must be an object like {"phone_number": "+4791234567"}');
  const sms = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(sms)) {
    if (!SMS_KEYS.has(key)) throw badRequest(`sms.${key}: unknown sms key (allowed: ${[...SMS_KEYS].join(', ')})`);
    if (typeof v !== 'string') throw badRequest(`sms.${key}: must be a string`);
    if (key.endsWith('_status') && v !== 'a' && v !== 'o') throw badRequest(`sms.${key}: must be a or o, got "${v}"`);
  }
  if (sms.phone_number !== undefined) normalizePhone(sms.phone_number as string, 'sms.phone_number');
  return sms as SmsInput;
}

/**
 * The sms columns a row changes, or undefined. Statuses from criteria.sms apply only
 * to members who have (or now get) a number; the row's own sms follows the rules of
 * members add (a status without any number is refused).
 */
function smsChanges(
  now: string,
  current: Parameters<typeof smsColumns>[1],
  rowSms: SmsInput | undefined,
  criteria: ImportOptions['sms'],
): Record<string, unknown> | undefined {
  const hasNumber = !!rowSms?.phone_number || !!current?.sms_phone_number;
  const sms = criteria && hasNumber ? { ...rowSms, ...criteria } : rowSms;
  if (!sms) return undefined;
  const cols = smsColumns(now, current, sms, undefined);
  return Object.keys(cols).length ? cols : undefined;
}

function setColumns(ctx: Ctx, memberId: number, cols: Record<string, unknown>) {
  const names = Object.keys(cols);
  ctx.db
    .prepare(`UPDATE members SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE member_id = ?`)
    .run(...Object.values(cols), memberId);
}

function saveCounters(ctx: Ctx, imp: ImportRow, received: number, c: Counters, rejected = 0) {
  const byGroup = JSON.parse(imp.num_added_by_group) as Record<string, number>;
  for (const [g, n] of Object.entries(c.byGroup)) byGroup[g] = (byGroup[g] ?? 0) + n;
  const fields = new Set([...(JSON.parse(imp.fields_updated) as string[]), ...c.fields]);
  stmt(
    ctx.db,
    `UPDATE member_imports SET num_members = num_members + ?, num_members_added = num_members_added + ?,
            num_members_updated = num_members_updated + ?, num_duplicates = num_duplicates + ?,
            num_skipped = num_skipped + ?, num_errors = num_errors + ?, num_added_by_group = ?, fields_updated = ?
      WHERE import_id = ?`,
  ).run(
    received,
    c.added,
    c.updated,
    c.duplicates,
    c.skipped + rejected,
    c.errors.length + rejected,
    JSON.stringify(byGroup),
    JSON.stringify([...fields]),
    imp.import_id,
  );
}

const newCounters = (): Counters => ({
  added: 0,
  updated: 0,
  duplicates: 0,
  duplicateRows: [],
  skipped: 0,
  errors: [],
  byGroup: {},
  fields: new Set(),
});

/**
 * The streamed import's row, checked to take rows; an interrupted import (status e)
 * is in progress again, and not finished.
 */
function importTakingRows(ctx: Ctx, importId: number, offset?: number): ImportRow {
  const imp = importRow(ctx, importId);
  if (imp.mode !== 'stream') throw badRequest(`import ${importId} was made by POST /members; it takes no more rows`);
  if (imp.status === 'o') throw badRequest(`import ${importId} is finished; start a new import`);
  // A batch sent before the one it follows was applied (or after that one failed)
  // must not be applied: what an import holds is always a prefix of its file.
  if (offset !== undefined && offset !== imp.num_members)
    throw new ApiError(409, `offset: this batch follows row ${offset}, but import ${importId} has ${imp.num_members} rows`, {
      field: 'offset',
      num_members: imp.num_members,
      expected_offset: imp.num_members,
    });
  if (imp.status === 'e')
    stmt(
      ctx.db,
      "UPDATE member_imports SET status = 'p', error_message = NULL, import_finished = NULL WHERE import_id = ?",
    ).run(importId);
  return imp;
}

/** Starts a batch of a streamed import inside the caller's transaction (here, or on the import writer's thread). */
export function beginAppend(ctx: Ctx, importId: number, now: string, offset?: number): BatchWrite {
  return beginWrite(ctx, importTakingRows(ctx, importId, offset), now);
}

export { writeRows };

/**
 * Ends a batch of a streamed import: its counters are saved with it. `rejected`
 * counts rows of the batch the client refused before sending (a CSV row with the
 * wrong number of columns): they are rows of the import that were skipped as
 * errors, so num_members counts every data row of the file done so far, and a
 * resume skips exactly num_members rows.
 */
export function finishAppend(w: BatchWrite, received: number, rejected: number): BatchResult {
  saveCounters(w.ctx, w.imp, received, w.c, rejected);
  return { import_id: w.imp.import_id, num_members: w.imp.num_members + received, ...finishWrite(w, received, rejected) };
}

/**
 * Applies one batch of a streamed import in one transaction: either the whole batch
 * and its counters are committed, or nothing (a consistent prefix survives a kill).
 * With an import writer (the built CLI and `amsg serve`), the batch is checked here
 * while that thread writes it; otherwise both happen here.
 */
export function appendRows(
  ctx: Ctx,
  importId: number,
  rows: RowsInput,
  rejected = 0,
  offset?: number,
): BatchResult | Promise<BatchResult> {
  if (offset === undefined) return appendNow(ctx, importId, rows, rejected);
  // Looked up before the order is touched: another account's import id is a 404
  // here, and leaves that import's waiting batches alone.
  const imp = importRow(ctx, importId);
  const order = BatchOrder.of(ctx.db);
  const key = `${imp.account_id}:${importId}`;
  const expected = order.expected(key) ?? imp.num_members;
  const end = offset + rowCount(rows) + rejected;
  // Behind the import (a batch sent again, or one overlapping a batch being written),
  // or an import that takes no rows: the write applies or refuses it at once, and its
  // refusal changes nothing in the order. Applied (it was sent again after the one it
  // repeats failed), it is the import's last batch: the one after it may go, if the
  // order had lost track.
  if (offset < expected || imp.mode !== 'stream' || imp.status === 'o') {
    const applied = <T>(r: T) => {
      if (order.expected(key) === undefined) order.taken(key, end);
      return r;
    };
    const result = appendNow(ctx, importId, rows, rejected, offset);
    return result instanceof Promise ? result.then(applied) : applied(result);
  }
  const run = () => {
    let result: BatchResult | Promise<BatchResult>;
    try {
      result = appendNow(ctx, importId, rows, rejected, offset);
    } catch (err) {
      order.failed(key);
      throw err;
    }
    // Handed over (the writer has the whole batch): the one after it may go.
    order.taken(key, end);
    if (result instanceof Promise)
      result = result.catch((err: unknown) => {
        order.failed(key);
        throw err;
      });
    return result;
  };
  if (offset === expected) return run();
  return order.waitFor(key, offset).then(run, (err: unknown) => {
    if (err !== BatchOrder.TIMED_OUT) throw err;
    const has = importRow(ctx, importId).num_members;
    const next = order.expected(key) ?? has;
    throw new ApiError(
      409,
      `offset: import ${importId} expects the batch at row ${next} next; the batch at row ${offset} waited ${BATCH_WAIT_MS / 1000} s for it and is not applied`,
      { field: 'offset', expected_offset: next, num_members: has },
    );
  });
}

/** Applies a batch now: on the import writer's thread, or here. */
function appendNow(ctx: Ctx, importId: number, rows: RowsInput, rejected: number, offset?: number) {
  checkColumns(FieldCatalog.of(ctx), rows);
  // The writer takes the batch (all of it) before this returns.
  if (ctx.importWriter) return ctx.importWriter.append(ctx, importId, rows, rejected, offset);
  return appendRowsHere(ctx, importId, rows, rejected, offset);
}

/**
 * How long a batch that arrived ahead of the one it follows waits for it. The client
 * sent that one first, so it is normally here within milliseconds; one that does not
 * come was lost (its connection failed), and the client should hear so soon, not
 * after a minute.
 */
export const BATCH_WAIT_MS = 5_000;

/**
 * Streamed-import batches taken in the order of their offsets. A client sends the
 * next batch before the last one is answered, so the writer always has one waiting;
 * over HTTP the two may arrive on two connections in either order, and the later
 * one then waits here for the one it follows (BATCH_WAIT_MS at most). The order is
 * only for speed: the write itself refuses a batch whose offset is not the import's
 * row count (a 409), so nothing is applied out of order whatever arrives when.
 *
 * Keyed by account and import id (`account:import`), and entered only after the
 * import was found in the caller's account: a batch of another account for the
 * same id must neither wake, replace nor release this import's batches.
 */
class BatchOrder {
  private static readonly byDb = new WeakMap<Db, BatchOrder>();
  static readonly TIMED_OUT = Symbol('timed out');
  /** Per import, the offset of the batch that comes next (after those taken). */
  private readonly next = new Map<string, number>();
  /** Per import, the batches waiting for their turn, by offset (more than one: the same batch sent twice). */
  private readonly waiting = new Map<string, Map<number, (() => void)[]>>();

  static of(db: Db): BatchOrder {
    let order = BatchOrder.byDb.get(db);
    if (!order) BatchOrder.byDb.set(db, (order = new BatchOrder()));
    return order;
  }

  /** The offset of the batch this import takes next, when a batch was taken since the order last lost track. */
  expected(key: string): number | undefined {
    return this.next.get(key);
  }

  /** Resolves when it is this offset's turn (or the import ended or failed); rejects with TIMED_OUT after BATCH_WAIT_MS. */
  waitFor(key: string, offset: number): Promise<void> {
    let byOffset = this.waiting.get(key);
    if (!byOffset) this.waiting.set(key, (byOffset = new Map()));
    const wakes = byOffset.get(offset) ?? [];
    byOffset.set(offset, wakes);
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.forget(key, offset, wake);
        reject(BatchOrder.TIMED_OUT);
      }, BATCH_WAIT_MS);
      timer.unref();
      wakes.push(wake);
    });
  }

  private forget(key: string, offset: number, wake: () => void) {
    const byOffset = this.waiting.get(key);
    const wakes = byOffset?.get(offset)?.filter((w) => w !== wake);
    if (!byOffset || !wakes) return;
    if (wakes.length) byOffset.set(offset, wakes);
    else byOffset.delete(offset);
    if (!byOffset.size) this.waiting.delete(key);
  }

  /** Wakes the batches waiting at one offset, or (none given) every batch waiting for this import. */
  private wake(key: string, offset?: number) {
    const byOffset = this.waiting.get(key);
    if (!byOffset) return;
    const offsets = offset === undefined ? [...byOffset.keys()] : [offset];
    for (const o of offsets) {
      const wakes = byOffset.get(o) ?? [];
      byOffset.delete(o);
      for (const w of wakes) w();
    }
    if (!byOffset.size) this.waiting.delete(key);
  }

  /** The import ended: batches still waiting go now (and are refused: they follow rows it does not have). */
  release(key: string) {
    this.next.delete(key);
    this.wake(key);
  }

  /**
   * A batch failed: the import has fewer rows than the batches after it expect.
   * Those waiting go now (to be refused), and the next batch's turn is read from
   * the import's row count again (a client resuming sends that as its offset).
   */
  failed(key: string) {
    this.release(key);
  }

  /** A batch was taken (written, failed, or handed to the writer): the one after it may go. */
  taken(key: string, nextOffset: number) {
    this.next.set(key, nextOffset);
    this.wake(key, nextOffset);
  }
}

/** appendRows on this thread and connection. */
export function appendRowsHere(ctx: Ctx, importId: number, rows: RowsInput, rejected = 0, offset?: number): BatchResult {
  return withBulkCheckpoints(ctx.db, () =>
    inTransaction(ctx.db, () => {
      const w = beginAppend(ctx, importId, stamp(ctx.clock.now()), offset);
      const catalog = FieldCatalog.of(ctx);
      checkColumns(catalog, rows);
      writeRows(w, checkRows(catalog, rows));
      return finishAppend(w, rowCount(rows) + rejected, rejected);
    }),
  );
}

/** WAL pages between automatic checkpoints while a batch commits (SQLite's default is 1,000). */
export const BULK_CHECKPOINT_PAGES = 10_000;

/**
 * Runs a batch's transaction with checkpoints ten times rarer, then restores the
 * connection's setting. A checkpoint copies the WAL into the database file as part of
 * a commit; the pages a large import rewrites in every batch (index interiors, the
 * table's end) were copied once per thousand pages written, about a tenth of the
 * import. WAL mode and synchronous stay as they are, so a killed import is as safe as
 * before; the WAL grows to about 40 MB, and the import's last commit (finish)
 * checkpoints with the usual setting.
 */
function withBulkCheckpoints<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  const before = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  if (before <= 0 || before >= BULK_CHECKPOINT_PAGES) return fn();
  db.pragma(`wal_autocheckpoint = ${BULK_CHECKPOINT_PAGES}`);
  try {
    return fn();
  } finally {
    db.pragma(`wal_autocheckpoint = ${before}`);
  }
}

/** Ends a streamed import: status o, or e with a message (an interrupted import can be resumed). */
export function finishImport(ctx: Ctx, importId: number, error?: string): ImportRecord {
  return inTransaction(ctx.db, () => {
    const imp = importRow(ctx, importId);
    if (imp.mode !== 'stream') throw badRequest(`import ${importId} was made by POST /members; the job runner finishes it`);
    if (imp.status === 'o') throw badRequest(`import ${importId} is already finished`);
    stmt(ctx.db, 'UPDATE member_imports SET status = ?, error_message = ?, import_finished = ? WHERE import_id = ?').run(
      error ? 'e' : 'o',
      error ?? null,
      stamp(ctx.clock.now()),
      importId,
    );
    BatchOrder.of(ctx.db).release(`${imp.account_id}:${importId}`);
    return getImport(ctx, importId);
  });
}

/** Thrown to roll a dry run back. */
const DRY_RUN = Symbol('dry run');

/**
 * What importing these rows would do, with the exact rules of a real import, and
 * nothing written: the rows are applied to a scratch import and rolled back.
 */
export function validateRows(ctx: Ctx, rows: RowsInput, opts: ImportOptions): Omit<BatchResult, 'import_id' | 'num_members'> {
  if (ctx.db.inTransaction) throw new Error('validateRows must not run inside another transaction');
  let result: Omit<BatchResult, 'import_id' | 'num_members'> | undefined;
  try {
    ctx.db.transaction(() => {
      checkOptions(ctx, opts);
      checkColumns(FieldCatalog.of(ctx), rows);
      const imp = importRow(ctx, insertImport(ctx, opts, 'stream'));
      const w = beginWrite(ctx, imp, stamp(ctx.clock.now()));
      writeRows(w, checkRows(FieldCatalog.of(ctx), rows));
      result = finishWrite(w, rowCount(rows), 0);
      throw DRY_RUN;
    })();
  } catch (err) {
    if (err !== DRY_RUN) throw err;
  }
  return result!;
}

// ---------------------------------------------------------------- the job runner

/** Rows applied per transaction by the job runner. */
const JOB_BATCH = 2_000;

/**
 * Advances queued and running POST /members jobs for up to budgetMs, one batch per
 * transaction. Answers whether work is left. Called by `amsg serve` in the
 * background and by the local transport after each request.
 */
export function advanceImports(db: Db, clock: Clock, budgetMs: number): boolean {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const job = db
      .prepare("SELECT * FROM member_imports WHERE mode = 'job' AND status IN ('q','p') ORDER BY import_id LIMIT 1")
      .get() as ImportRow | undefined;
    if (!job) return false;
    if (Date.now() >= deadline) return true;
    const ctx: Ctx = { db, clock, actor: localActor(db, job.account_id), accountId: job.account_id };
    try {
      advanceJob(ctx, job.import_id);
    } catch (err) {
      // Another process holds the database longer than the busy timeout: try later.
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      // A batch that cannot be applied (a group deleted since) would fail on every
      // attempt and hold up every job after it: the job ends in e, saying why.
      failJob(ctx, job.import_id, (err as Error).message);
    }
  }
}

/** Applies the next batch of a job in one transaction, or marks it done when none is left. */
function advanceJob(ctx: Ctx, importId: number) {
  const { db, clock } = ctx;
  inTransaction(db, () => {
    const imp = importRow(ctx, importId);
    if (imp.status === 'q')
      stmt(db, "UPDATE member_imports SET status = 'p', import_started = ? WHERE import_id = ?").run(
        stamp(clock.now()),
        imp.import_id,
      );
    const staged = stmt(db, 'SELECT seq, member FROM import_rows WHERE import_id = ? ORDER BY seq LIMIT ?').all(
      imp.import_id,
      JOB_BATCH,
    ) as { seq: number; member: string }[];
    if (!staged.length) {
      stmt(db, "UPDATE member_imports SET status = 'o', import_finished = ? WHERE import_id = ?").run(
        stamp(clock.now()),
        imp.import_id,
      );
      return;
    }
    const w = beginWrite(ctx, imp, stamp(clock.now()));
    writeRows(w, checkRows(FieldCatalog.of(ctx), staged.map((r) => JSON.parse(r.member) as Record<string, unknown>)));
    saveCounters(ctx, imp, staged.length, w.c);
    stmt(db, 'DELETE FROM import_rows WHERE import_id = ? AND seq <= ?').run(imp.import_id, staged[staged.length - 1].seq);
  });
}

/** Ends a job in error; its staged rows will never be applied, so they go. */
function failJob(ctx: Ctx, importId: number, message: string) {
  inTransaction(ctx.db, () => {
    const now = stamp(ctx.clock.now());
    stmt(
      ctx.db,
      `UPDATE member_imports SET status = 'e', error_message = ?, import_started = COALESCE(import_started, ?),
              import_finished = ?
        WHERE import_id = ?`,
    ).run(message, now, now, importId);
    stmt(ctx.db, 'DELETE FROM import_rows WHERE import_id = ?').run(importId);
  });
}
