/** An import as a record: its row, how it is answered, its members (the ledger of what it did to whom). */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import { LIMIT_OFFSET, windowOf, type Window } from '../paging.js';
import type { Ctx } from '../context.js';

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
  /** A streamed import's client's own options, kept as given (a resume compares them). */
  client_options?: Record<string, unknown>;
}

export interface ImportRow {
  import_id: number;
  /** Set by DELETE /members/imports/delete (migration 020). */
  deleted_at: string | null;
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
  /** Migration 026. */
  client_options: string | null;
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
  /** Present when the client that opened a streamed import recorded its options. */
  client_options?: Record<string, unknown>;
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
    ...(r.client_options ? { client_options: JSON.parse(r.client_options) as Record<string, unknown> } : {}),
  };
};

export function importRow(ctx: Ctx, importId: number): ImportRow {
  const row = stmt(ctx.db, 'SELECT * FROM member_imports WHERE account_id = ? AND import_id = ?').get(ctx.accountId, importId) as
    | ImportRow
    | undefined;
  if (!row) throw notFound(`import ${importId} not found`);
  return row;
}

/** An import's end as its webhook event (import_finish) tells it: one event per import, whatever its size. */
export function importFinishEvent(ctx: Ctx, importId: number) {
  const r = importRow(ctx, importId);
  return {
    import_id: r.import_id,
    import_status: r.status,
    num_members: r.num_members,
    num_added: r.num_members_added,
    num_updated: r.num_members_updated,
    num_skipped: r.num_skipped,
    num_errors: r.num_errors,
    num_duplicates: r.num_duplicates,
    error_message: r.error_message,
  };
}

/** GET /members/imports/{id}: a record deleted by DELETE /members/imports/delete is gone (404). */
export function getImport(ctx: Ctx, importId: number): ImportRecord {
  const row = importRow(ctx, importId);
  if (row.deleted_at) throw notFound(`import ${importId} not found (deleted)`);
  return toRecord(row);
}

/** The rows an import refused (the first ROW_ERRORS_KEPT of them), in row order: one window, by the primary key. */
export function importRowErrors(ctx: Ctx, importId: number, window: Window): { row: number; email: string | null; error: string }[] {
  getImport(ctx, importId);
  const { limit, offset } = windowOf(window);
  return stmt(ctx.db, `SELECT row, email, error FROM import_row_errors WHERE import_id = ? ORDER BY seq ${LIMIT_OFFSET}`).all(
    importId,
    limit,
    offset,
  ) as { row: number; email: string | null; error: string }[];
}

export function countImportRowErrors(ctx: Ctx, importId: number): number {
  getImport(ctx, importId);
  return stmt(ctx.db, 'SELECT COUNT(*) FROM import_row_errors WHERE import_id = ?').pluck().get(importId) as number;
}

export function listImports(ctx: Ctx): ImportRecord[] {
  return (
    stmt(ctx.db, 'SELECT * FROM member_imports WHERE account_id = ? AND deleted_at IS NULL ORDER BY import_id').all(
      ctx.accountId,
    ) as ImportRow[]
  ).map(toRecord);
}

/**
 * DELETE /members/imports/delete?import_ids=…: the records leave the list (the real
 * service's call); the members they wrote stay. An import still running is refused.
 */
export function deleteImports(ctx: Ctx, importIds: number[]): true {
  return inTransaction(ctx.db, () => {
    const rows = importIds.map((id) => importRow(ctx, id));
    const running = rows.filter((r) => r.status === 'q' || r.status === 'p');
    if (running.length)
      throw badRequest(
        `import_ids: import ${running.map((r) => r.import_id).join(', ')} is still running; delete it once it has finished`,
        {
          field: 'import_ids',
        },
      );
    const mark = stmt(ctx.db, 'UPDATE member_imports SET deleted_at = COALESCE(deleted_at, ?) WHERE import_id = ?');
    const now = stamp(ctx.clock.now());
    for (const id of importIds) mark.run(now, id);
    return true;
  });
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
