/** Writing one batch of checked rows inside its transaction: the hot path of a million-member import. */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { addActive, countJoined, countRestored, countsFollowWrites } from '../../store/counters.js';
import { badRequest } from '../../errors.js';
import type { Ctx } from '../context.js';
import { createGroups, groupIdByName, requireGroups } from '../audience/groups.js';
import { smsColumns, type SmsInput } from '../audience/members.js';
import { FieldCatalog } from '../audience/fields.js';
import type { BatchResult, CheckedRows, Counters, RowError } from './check.js';
import { LEDGER_SPAN, ledgerHolds, type ChangeType, type ImportOptions, type ImportRow } from './records.js';

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
export function beginWrite(ctx: Ctx, imp: ImportRow, now: string): BatchWrite {
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
export function writeRows(w: BatchWrite, checked: CheckedRows) {
  const { ctx, imp, now, c } = w;
  const db = ctx.db;
  for (const e of checked.errors) refuseRow(c, e);
  // An add-only import leaves existing members as they are, so only its new ones count.
  const rows = checked.againstStored.length && !imp.add_only ? withStoredPairsChecked(w, checked) : checked;

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
  const archived = stmt(db, 'SELECT EXISTS (SELECT 1 FROM members WHERE account_id = ? AND deleted_at IS NOT NULL)')
    .pluck()
    .get(ctx.accountId)
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
    if (archived.length) restoreUpdated(db, archived, records);
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
    freshJoinAll = !stmt(db, 'SELECT EXISTS (SELECT 1 FROM group_members WHERE member_id BETWEEN ? AND ?)').pluck().get(lo, hi);
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
    const ids = JSON.stringify(memberIds);
    // Members already in the group (all of them, when a file is imported again) are
    // first looked for with a read: the insert's write path, with its RETURNING, cost
    // about twice as much per member it then ignored.
    const missing = stmt(
      db,
      `SELECT EXISTS (SELECT 1 FROM json_each(?) j
                       WHERE NOT EXISTS (SELECT 1 FROM group_members WHERE member_group_id = ? AND member_id = j.value))`,
    )
      .pluck()
      .get(ids, groupId);
    const added = missing
      ? (stmt(
          db,
          `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
           SELECT ?, value, ? FROM json_each(?) RETURNING member_id`,
        )
          .pluck()
          .all(groupId, now, ids) as number[])
      : [];
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

/**
 * Rows that give one field of a field relationship and leave the other as the member
 * has it (check.ts marks them): checked against the stored values, read in one
 * statement for those rows alone. A row that breaks the relationship is a row error
 * and leaves the batch. Imports without relationships never come here.
 */
function withStoredPairsChecked(w: BatchWrite, rows: CheckedRows): CheckedRows {
  const { ctx, c } = w;
  const catalog = FieldCatalog.of(ctx);
  const stored = new Map(
    (
      stmt(ctx.db, 'SELECT email, field_values FROM members WHERE account_id = ? AND email IN (SELECT value FROM json_each(?))').all(
        ctx.accountId,
        JSON.stringify(rows.againstStored.map((i) => rows.emails[i])),
      ) as { email: string; field_values: string }[]
    ).map((m) => [m.email, m.field_values]),
  );
  const refused = new Set<number>();
  for (const i of rows.againstStored) {
    const before = stored.get(rows.emails[i]);
    // A new member has only the row's values, which check.ts checked.
    if (before === undefined) continue;
    const values = JSON.parse(before) as Record<string, unknown>;
    const patch = JSON.parse(rows.patches[i]) as Record<string, unknown>;
    for (const [id, v] of Object.entries(patch)) {
      if (v === null) delete values[id];
      else values[id] = v;
    }
    try {
      catalog.checkRelationships(values, patch, '');
    } catch (err) {
      refused.add(i);
      refuseRow(c, { index: rows.index[i], email: rows.emails[i], error: (err as Error).message });
    }
  }
  if (!refused.size) return rows;
  const kept = (_: unknown, i: number) => !refused.has(i);
  const position: number[] = [];
  let n = 0;
  for (let i = 0; i < rows.index.length; i++) position.push(refused.has(i) ? -1 : n++);
  return {
    ...rows,
    index: rows.index.filter(kept),
    emails: rows.emails.filter(kept),
    patches: rows.patches.filter(kept),
    fresh: rows.fresh.filter(kept),
    fieldList: rows.fieldList.filter(kept),
    groupList: rows.groupList.filter(kept),
    sms: rows.sms.filter(([row]) => !refused.has(row)).map(([row, sms]) => [position[row], sms]),
    againstStored: [],
  };
}

/** Saves the batch's counters and answers what it did; row errors in row order. */
export function finishWrite(w: BatchWrite, received: number, rejected: number): Omit<BatchResult, 'import_id' | 'num_members'> {
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
  let res: ReturnType<ReturnType<typeof insertStatement>['run']>;
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
 * its values merged (as a patch), its last change stamped (an archived member comes back after it: restoreUpdated).
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
                last_modified_at = excluded.last_modified_at,
                last_import_id = max(ifnull(members.last_import_id, 0), @import)
          WHERE ifnull(members.last_import_id, 0) < @import
             OR (members.last_import_id > @import
                 AND NOT EXISTS (SELECT 1 FROM import_ledger l WHERE l.import_id = @import AND ${ledgerHolds('l', 'members.member_id')}))
         RETURNING member_id, email`,
    )
    .raw());
}

/**
 * Brings back the archived members among those the upsert updated (an import restores
 * the members it names). Apart from the upsert, which leaves deleted_at alone: a
 * deleted_at in its SET re-wrote every updated member's entry in the partial indexes
 * on deleted_at and ran the member_order trigger for it, about 1 µs a row, half the
 * upsert's own cost, for the few members that are archived.
 */
function restoreUpdated(db: Db, archived: number[], records: Written[]) {
  const updated = new Set<number>();
  for (const r of records) if (r.change === 'u') updated.add(r.id);
  const back = archived.filter((id) => updated.has(id));
  if (back.length)
    stmt(db, 'UPDATE members SET deleted_at = NULL WHERE member_id IN (SELECT value FROM json_each(?)) AND deleted_at IS NOT NULL').run(
      JSON.stringify(back),
    );
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
    const written = upsertStatement(ctx.db, chunk.length).all(args, named) as [number, string][];
    // RETURNING answers in the order the rows were written (SQLite does, without
    // promising it), so its rows are matched walking beside the chunk; a row that does
    // not line up (a duplicate answers none) turns to a map by address for the rest.
    let next = 0;
    let ids: Map<string, number> | undefined;
    for (const r of chunk) {
      const email = rows.emails[r.row];
      let id: number | undefined;
      if (!ids && next < written.length && written[next][1] === email) id = written[next++][0];
      else id = (ids ??= new Map(written.map(([m, e]) => [e, m]))).get(email);
      if (id === undefined) {
        // The upsert leaves a member this import already holds: written by an earlier batch.
        countDuplicate(c, rows.index[r.row], email, undefined);
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
  ctx.db.prepare(`UPDATE members SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE member_id = ?`).run(...Object.values(cols), memberId);
}

export function saveCounters(ctx: Ctx, imp: ImportRow, received: number, c: Counters, rejected = 0) {
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
  if (c.errors.length) keepRowErrors(ctx, imp, c.errors);
}

/** The row errors an import keeps to show (GET /members/imports/{id}/errors); past them they are only counted. */
export const ROW_ERRORS_KEPT = 1000;

/**
 * Keeps a batch's refused rows, numbered by their place in the import (the rows before
 * this batch, num_members, and the row's place in the batch), up to ROW_ERRORS_KEPT an import.
 */
function keepRowErrors(ctx: Ctx, imp: ImportRow, errors: RowError[]) {
  const room = ROW_ERRORS_KEPT - imp.num_errors;
  if (room <= 0) return;
  const insert = stmt(ctx.db, 'INSERT INTO import_row_errors (import_id, seq, row, email, error) VALUES (?, ?, ?, ?, ?)');
  [...errors]
    .sort((a, b) => a.index - b.index)
    .slice(0, room)
    .forEach((e, i) => insert.run(imp.import_id, imp.num_errors + i, imp.num_members + e.index + 1, e.email, e.error));
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
