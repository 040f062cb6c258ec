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
import { badRequest, notFound } from '../api/errors.js';
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
 * GET /members/imports/{id}/members. With no filter, every member the import touched;
 * added_only keeps the members it created; added_to_groups the ones it put in a group.
 */
export function importMembers(
  ctx: Ctx,
  importId: number,
  filter: { all?: boolean; added_only?: boolean; added_to_groups?: boolean },
): ImportMemberItem[] {
  importRow(ctx, importId);
  const where: string[] = [];
  if (!filter.all) {
    if (filter.added_only) where.push("change_type = 'a'");
    if (filter.added_to_groups) where.push('added_to_groups = 1');
  }
  // The import's ranges (migration 007), expanded to members.
  return ctx.db
    .prepare(
      `WITH RECURSIVE l (member_id, last_id, change_type, added_to_groups) AS (
         SELECT first_id, last_id, change_type, added_to_groups FROM import_ledger
          WHERE import_id = ?${where.length ? ` AND ${where.join(' AND ')}` : ''}
         UNION ALL
         SELECT member_id + 1, last_id, change_type, added_to_groups FROM l WHERE member_id < last_id
       )
       SELECT l.member_id, l.change_type, m.member_status_id, m.email
         FROM l JOIN members m ON m.member_id = l.member_id ORDER BY l.member_id`,
    )
    .all(importId) as ImportMemberItem[];
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
  return inTransaction(ctx.db, () => {
    checkOptions(ctx, opts);
    return getImport(ctx, insertImport(ctx, opts, 'stream'));
  });
}

// ---------------------------------------------------------------- applying rows

export interface RowError {
  /** Position of the row in the batch. */
  index: number;
  email: string | null;
  error: string;
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
}

interface Counters {
  added: number;
  updated: number;
  duplicates: number;
  skipped: number;
  errors: RowError[];
  byGroup: Record<string, number>;
  fields: Set<string>;
}

/** A row that passed the checks, ready to be written. */
interface Prepared {
  index: number;
  email: string;
  /** Field values as a merge patch (null clears a value) ... */
  values: string;
  /** ... and as a new member's values, where a null is no value at all. */
  fresh: string;
  /** Shortcut names of the fields this row gives a value, counted only if it is written. */
  fields: string[];
  sms?: SmsInput;
  groups: number[];
}

interface Existing {
  member_id: number;
  email: string;
  seen: number;
  sms_phone_number: string | null;
  sms_region_code: string | null;
  sms_transactional_status: 'a' | 'o' | null;
  sms_promotional_status: 'a' | 'o' | null;
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
  /** Per key: its field, null for email/sms/groups, undefined for an unknown name. */
  fields: (FieldRecord | null | undefined)[];
  /** Per key: its field's slot. */
  slotOf: number[];
  /** Per slot: `"12":`, the field id as a JSON key. */
  jsonKeys: string[];
  /** Shortcut names of the keys' fields, in key order (a row with no empty value gives them all). */
  names: string[];
  /** The current row's stored values, by slot (every slot is written for each row). */
  scratch: unknown[];
}

function shapeOf(catalog: FieldCatalog, keys: string[]): Shape {
  const fields = keys.map((key) => (RESERVED.has(key) ? null : catalog.byName.get(key.toLowerCase())));
  const ids = [...new Set(fields.filter((f): f is FieldRecord => !!f).map((f) => f.field_id))].sort((a, b) => a - b);
  return {
    keys,
    fields,
    slotOf: fields.map((f) => (f ? ids.indexOf(f.field_id) : -1)),
    jsonKeys: ids.map((id) => `"${id}":`),
    names: fields.filter((f): f is FieldRecord => !!f).map((f) => f.shortcut_name),
    scratch: ids.map(() => null),
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

/** A group list of a row (names and ids) as a text key, or undefined for anything else. */
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

/**
 * Applies rows to members inside the caller's transaction. The hot path of a
 * million-member import, so the work is per batch where SQL allows: one lookup of
 * the batch's existing members, one insert per new member, and one statement each
 * for the batch's memberships and its import records (json_each), since every
 * statement sent from JS costs several microseconds on its own.
 */
function applyRows(ctx: Ctx, imp: ImportRow, rows: Record<string, unknown>[], c: Counters) {
  const db = ctx.db;
  const now = stamp(ctx.clock.now());
  const catalog = FieldCatalog.of(ctx);
  const importGroups = JSON.parse(imp.group_ids) as number[];
  const smsCriteria = imp.sms_criteria ? (JSON.parse(imp.sms_criteria) as ImportOptions['sms']) : undefined;

  const groupByName = new Map<string, number>();
  const rowGroups = (value: unknown): number[] => {
    const list = Array.isArray(value) ? value : [value];
    return list.map((g) => {
      if (typeof g === 'number' && Number.isSafeInteger(g)) {
        requireGroups(ctx, [g]);
        return g;
      }
      if (typeof g !== 'string' || !g.trim()) throw badRequest('groups: must be group names or ids');
      const name = g.trim();
      let id = groupByName.get(name.toLowerCase()) ?? groupIdByName(ctx, name);
      if (id === undefined) id = createGroups(ctx, [{ group_name: name }])[0].member_group_id;
      groupByName.set(name.toLowerCase(), id);
      return id;
    });
  };

  // A group deleted since the import was opened fails the batch (a 404): joining
  // it would make memberships of a group that no longer exists.
  requireGroups(ctx, importGroups);

  const rowError = (index: number, email: string | null, err: unknown) => {
    c.skipped++;
    c.errors.push({ index, email, error: (err as Error).message });
  };

  // 1. Check and convert every row; a bad row is an error of its own, not the batch's.
  // Per batch, not per row: what each key order does (the rows of a batch nearly
  // always share one), and each group list's ids (a CSV group column repeats a few
  // lists over and over).
  const shapes = new Map<string, Shape>();
  let shape: Shape | undefined;
  const groupsOf = new Map<string, number[]>();
  /** Group list arrays seen, by identity: the CLI hands one array to every row with the same list. */
  const groupsOfList = new Map<unknown, number[]>();
  const prepared: Prepared[] = [];
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index];
    const rawEmail = typeof row.email === 'string' ? row.email.trim() : null;
    try {
      if (!rawEmail || !isEmail(rawEmail))
        throw badRequest(rawEmail ? `"${rawEmail}" is not a valid e-mail address` : 'email is missing');
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
        if (!shape) shapes.set(id, (shape = shapeOf(catalog, keys)));
      }
      // Field values in key order (a field named twice in different case keeps the
      // last value, as an object's key would), stored by the field's slot.
      const { keys, fields: fieldOfKey, slotOf } = shape;
      const slots = shape.scratch;
      let nulls = false;
      for (let j = 0; j < keys.length; j++) {
        const field = fieldOfKey[j];
        if (field === null) continue;
        const key = keys[j];
        if (field === undefined) throw badRequest(`unknown field "${key}"`);
        const value = row[key];
        const stored = value === null || value === '' ? null : coerceValue(field, value, key);
        slots[slotOf[j]] = stored;
        if (stored === null) nulls = true;
      }
      // Shortcut names of the fields given a value: all of them, or the ones not emptied.
      let fields = shape.names;
      if (nulls) {
        fields = [];
        for (let j = 0; j < keys.length; j++) {
          const field = fieldOfKey[j];
          const value = field ? row[keys[j]] : null;
          if (value !== null && value !== '') fields.push(field!.shortcut_name);
        }
      }
      const sms = checkSms(row.sms);
      let groups = importGroups;
      const rowGroupList = row.groups;
      if (!(rowGroupList === undefined || rowGroupList === null || rowGroupList === '')) {
        const known = groupsOfList.get(rowGroupList);
        if (known) groups = known;
        else {
          // A bad list is not kept, so it fails each row it is in.
          const key = groupsKey(rowGroupList);
          let ids = key === undefined ? undefined : groupsOf.get(key);
          if (!ids) {
            const extra = rowGroups(rowGroupList);
            ids = extra.length ? [...new Set([...importGroups, ...extra])] : importGroups;
            if (key !== undefined) groupsOf.set(key, ids);
          }
          groups = ids;
          if (typeof rowGroupList === 'object' && groupsOfList.size < 1000) groupsOfList.set(rowGroupList, ids);
        }
      }
      const patch = slotsJson(shape, true);
      prepared.push({
        index,
        email: rawEmail.toLowerCase(),
        values: patch,
        fresh: nulls ? slotsJson(shape, false) : patch,
        fields,
        sms,
        groups,
      });
    } catch (err) {
      rowError(index, rawEmail, err);
    }
  }

  // 2. Who already exists, and who this import has already seen (a duplicate).
  const existing = new Map<string, Existing>();
  for (const m of stmt(
    db,
    `SELECT m.member_id, m.email, m.sms_phone_number, m.sms_region_code, m.sms_transactional_status,
            m.sms_promotional_status,
            EXISTS (SELECT 1 FROM import_ledger l WHERE l.import_id = ? AND ${ledgerHolds('l', 'm.member_id')}) AS seen
       FROM members m WHERE m.account_id = ? AND m.email IN (SELECT value FROM json_each(?))`,
  ).all(imp.import_id, ctx.accountId, JSON.stringify(prepared.map((p) => p.email))) as Existing[])
    existing.set(m.email, m);

  // 3. Decide, in file order, what each row does; new members are inserted together
  // after the loop (ids follow file order as before), existing ones updated in place.
  // Field values merge into what the member has (json_patch drops keys set to null);
  // an archived member comes back; the status is never touched (an opt-out stays out).
  const update = stmt(
    db,
    `UPDATE members SET field_values = json_patch(field_values, ?), last_modified_at = ?, deleted_at = NULL
      WHERE member_id = ?`,
  );
  const seenInBatch = new Set<string>();
  /** Per member written or skipped, in file order: its id (0 until a new member is inserted) and change. */
  const records: { id: number; change: ChangeType; p: Prepared; sms?: Record<string, unknown> }[] = [];
  const fresh: (typeof records)[number][] = [];
  for (const p of prepared) {
    const found = existing.get(p.email);
    if (found?.seen || seenInBatch.has(p.email)) {
      c.duplicates++;
      continue;
    }
    if (found && imp.add_only) {
      seenInBatch.add(p.email);
      records.push({ id: found.member_id, change: 's', p });
      c.skipped++;
      continue;
    }
    // Whether the sms part fits this member (a status needs a number) is known only
    // now; it is decided before the member is written, so a refused row writes nothing
    // (and a later row for the same address is not its duplicate).
    let sms: Record<string, unknown> | undefined;
    try {
      sms = smsChanges(now, found, p.sms, smsCriteria);
    } catch (err) {
      rowError(p.index, p.email, err);
      continue;
    }
    seenInBatch.add(p.email);
    if (!found) {
      const r = { id: 0, change: 'a' as const, p, sms };
      records.push(r);
      fresh.push(r);
      c.added++;
    } else {
      update.run(p.values, now, found.member_id);
      records.push({ id: found.member_id, change: 'u', p, sms });
      c.updated++;
    }
  }
  insertMembers(ctx, now, fresh);

  // Who joins which group: the members added by this batch apart, since they can be
  // in no group yet (checked below), so their memberships need no RETURNING.
  const joins = new Map<number, number[]>();
  const joinsFresh = new Map<number, number[]>();
  let lastFields: string[] | undefined;
  for (const r of records) {
    if (r.change === 's') continue;
    if (r.sms) setColumns(ctx, r.id, r.sms);
    // Rows of one shape share their list of field names.
    if (r.p.fields !== lastFields) for (const f of (lastFields = r.p.fields)) c.fields.add(f);
    const to = r.change === 'a' ? joinsFresh : joins;
    for (const g of r.p.groups) {
      let list = to.get(g);
      if (!list) to.set(g, (list = []));
      list.push(r.id);
    }
  }

  // 4. Memberships, one statement per group; RETURNING says who is new in it. When no
  // membership names an id in the range of the batch's new members (none can: their
  // ids are new, and deleting a member deletes its memberships), every one of theirs
  // is new, and their statements need no RETURNING (about 0.6 µs a row).
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
        const added = stmt(
          db,
          `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
           SELECT ?, value, ? FROM json_each(?)`,
        ).run(groupId, now, JSON.stringify(memberIds)).changes;
        if (added !== memberIds.length) throw new Error('import: a new member was already in a group');
        c.byGroup[groupId] = (c.byGroup[groupId] ?? 0) + added;
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
    for (const id of added) joined.add(id);
  }

  // 5. What the import did to each member, as ranges of consecutive ids with the same
  // change and group flag (migration 007): the new members of a batch have consecutive
  // ids, so a batch is usually one or a few ledger rows, written in one statement.
  const byKind = new Map<string, number[]>();
  for (const r of records) {
    const inGroup = freshJoinAll && r.change === 'a' ? r.p.groups.length > 0 : joined.has(r.id);
    const key = r.change + (inGroup ? '1' : '0');
    let ids = byKind.get(key);
    if (!ids) byKind.set(key, (ids = []));
    ids.push(r.id);
  }
  const ranges: [number, number, string, number][] = [];
  for (const [key, ids] of byKind) {
    ids.sort((a, b) => a - b);
    let first = ids[0];
    for (let i = 1; i <= ids.length; i++)
      if (i === ids.length || ids[i] !== ids[i - 1] + 1 || ids[i] - first >= LEDGER_SPAN) {
        ranges.push([first, ids[i - 1], key[0], Number(key[1])]);
        first = ids[i];
      }
  }
  if (ranges.length)
    stmt(
      db,
      `INSERT INTO import_ledger (import_id, first_id, last_id, change_type, added_to_groups)
       SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`,
    ).run(imp.import_id, JSON.stringify(ranges));
  // Rows refused while writing come after those refused while checking: answer them in row order.
  c.errors.sort((a, b) => a.index - b.index);
}

/** New members per INSERT statement: one statement per row cost more than the row's own b-tree work. */
const INSERT_CHUNK = 100;

/**
 * Inserts new members with multi-row INSERT … VALUES statements and sets each one's
 * id. A rowid table gives each inserted row max(rowid) + 1, so the rows of one
 * statement get consecutive ids ending at lastInsertRowid; that is checked, and the
 * ids are looked up by address should it ever not hold.
 */
const insertStatements = new WeakMap<Db, Statement[]>();

/** The INSERT of n members, prepared once per database (by count: its text is long to build and to look up). */
function insertStatement(db: Db, n: number): Statement {
  let byCount = insertStatements.get(db);
  if (!byCount) insertStatements.set(db, (byCount = []));
  return (byCount[n] ??= db.prepare(
    'INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at, field_values) VALUES ' +
      Array(n).fill("(?, ?, 'a', ?, ?, ?)").join(', '),
  ));
}

function insertMembers(ctx: Ctx, now: string, rows: { id: number; p: Prepared }[]) {
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const chunk = rows.slice(start, start + INSERT_CHUNK);
    const args: unknown[] = [];
    for (const r of chunk) args.push(ctx.accountId, r.p.email, now, now, r.p.fresh);
    const res = insertStatement(ctx.db, chunk.length).run(args);
    const last = Number(res.lastInsertRowid);
    const emailOf = stmt(ctx.db, 'SELECT email FROM members WHERE member_id = ?').pluck();
    if (
      res.changes === chunk.length &&
      emailOf.get(last - chunk.length + 1) === chunk[0].p.email &&
      emailOf.get(last) === chunk[chunk.length - 1].p.email
    )
      chunk.forEach((r, i) => (r.id = last - chunk.length + 1 + i));
    else {
      const byEmail = stmt(ctx.db, 'SELECT member_id FROM members WHERE account_id = ? AND email = ?').pluck();
      for (const r of chunk) r.id = byEmail.get(ctx.accountId, r.p.email) as number;
    }
  }
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
  skipped: 0,
  errors: [],
  byGroup: {},
  fields: new Set(),
});

/**
 * Applies one batch of a streamed import in one transaction: either the whole batch
 * and its counters are committed, or nothing (a consistent prefix survives a kill).
 * `rejected` counts rows of the batch the client refused before sending (a CSV row
 * with the wrong number of columns): they are rows of the import that were skipped
 * as errors, so num_members counts every data row of the file done so far, and a
 * resume skips exactly num_members rows.
 */
export function appendRows(ctx: Ctx, importId: number, rows: Record<string, unknown>[], rejected = 0): BatchResult {
  return withBulkCheckpoints(ctx.db, () => appendBatch(ctx, importId, rows, rejected));
}

/** WAL pages between automatic checkpoints while a batch commits (SQLite's default is 1,000). */
const BULK_CHECKPOINT_PAGES = 10_000;

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

function appendBatch(ctx: Ctx, importId: number, rows: Record<string, unknown>[], rejected: number): BatchResult {
  return inTransaction(ctx.db, () => {
    const imp = importRow(ctx, importId);
    if (imp.mode !== 'stream') throw badRequest(`import ${importId} was made by POST /members; it takes no more rows`);
    if (imp.status === 'o') throw badRequest(`import ${importId} is finished; start a new import`);
    if (imp.status === 'e') {
      // Resuming an interrupted import: it is in progress again, and not finished.
      stmt(
        ctx.db,
        "UPDATE member_imports SET status = 'p', error_message = NULL, import_finished = NULL WHERE import_id = ?",
      ).run(importId);
    }
    const c = newCounters();
    applyRows(ctx, imp, rows, c);
    saveCounters(ctx, imp, rows.length + rejected, c, rejected);
    return {
      import_id: importId,
      received: rows.length + rejected,
      num_members: imp.num_members + rows.length + rejected,
      added: c.added,
      updated: c.updated,
      duplicates: c.duplicates,
      skipped: c.skipped + rejected,
      errors: c.errors,
    };
  });
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
    return getImport(ctx, importId);
  });
}

/** Thrown to roll a dry run back. */
const DRY_RUN = Symbol('dry run');

/**
 * What importing these rows would do, with the exact rules of a real import, and
 * nothing written: the rows are applied to a scratch import and rolled back.
 */
export function validateRows(ctx: Ctx, rows: Record<string, unknown>[], opts: ImportOptions): Omit<BatchResult, 'import_id' | 'num_members'> {
  if (ctx.db.inTransaction) throw new Error('validateRows must not run inside another transaction');
  let result: Omit<BatchResult, 'import_id' | 'num_members'> | undefined;
  try {
    ctx.db.transaction(() => {
      checkOptions(ctx, opts);
      const imp = importRow(ctx, insertImport(ctx, opts, 'stream'));
      const c = newCounters();
      applyRows(ctx, imp, rows, c);
      result = { received: rows.length, added: c.added, updated: c.updated, duplicates: c.duplicates, skipped: c.skipped, errors: c.errors };
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
    const c = newCounters();
    applyRows(ctx, imp, staged.map((r) => JSON.parse(r.member) as Record<string, unknown>), c);
    saveCounters(ctx, imp, staged.length, c);
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
