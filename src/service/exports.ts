/**
 * Member exports: audience exports (CSV of the members of some groups, subscriptions
 * and member ids) and individual member exports (a zip of everything held about one
 * member, for portability requests).
 *
 * An audience export fixes its members when it is created (export_members) and its
 * download reads their current values; an individual export is a zip made at once
 * and kept in the row. Both are erased with the member: purging deletes its
 * export_members rows and its individual exports by foreign-key cascade.
 *
 * Both kinds are done within the request that creates them (status p, then o, in one
 * transaction): even a million members take a second or two, and a job that cannot
 * fail half way needs no runner.
 */
import type { Db } from '../store/db.js';
import { inTransaction } from '../store/db.js';
import { stmt } from '../store/statements.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { atD, isoOffset, rfc1123 } from '../api/codecs.js';
// The individual export holds the member as the API answers it. encode.ts imports
// only types from the service layer, so this is no cycle.
import * as enc from '../api/encode.js';
import { historyItem } from '../api/mailing-encode.js';
import type { RawBody } from '../api/route.js';
import { stamp } from './clock.js';
import type { Ctx } from './context.js';
import { FieldCatalog, type FieldRecord } from './audience/fields.js';
import { memberRow, optoutHistory, toMember, type MemberStatus } from './audience/members.js';
import { mailingHistory } from './mailings/mailings.js';
import { ledgerHolds } from './imports/index.js';
import { searchMembersSql } from './audience/searches.js';

export const EXPORT_TYPES = ['a', 'm'] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];
export const EXPORT_STATUSES = ['a', 'o', 'e'] as const;
export type ExportMemberStatus = (typeof EXPORT_STATUSES)[number];
/** The SMS columns an audience export can carry, in the spec's column order. */
export const SMS_EXPORT_FIELDS = ['phone_number', 'promotional_status', 'transactional_status', 'region_code'] as const;
export type SmsExportField = (typeof SMS_EXPORT_FIELDS)[number];

/** Exports older than this are not listed (the spec's horizon); they stay readable by id. */
export const LIST_HORIZON_MS = 7 * 86_400_000;

export interface CriteriaInput {
  groups?: number[] | null;
  segments?: number[] | null;
  subscriptions?: number[] | null;
  member_ids?: number[] | null;
  member_status_ids?: ExportMemberStatus[];
  include_fields?: true | string[];
  mfv_delimiter?: string;
  sms?: { fields: SmsExportField[] };
}

/** The criteria of an export as the service answers them. */
export interface Criteria {
  groups: number[] | null;
  segments: number[] | null;
  subscriptions: number[] | null;
  member_ids: number[] | null;
  member_status_ids: ExportMemberStatus[];
  include_fields: true | string[];
  mfv_delimiter: string;
  sms?: { fields: SmsExportField[] };
}

export interface ExportRecord {
  export_id: number;
  account_id: number;
  export_name: string;
  export_type: ExportType;
  status: 'q' | 'p' | 'o' | 'e';
  user_id: string;
  created_at: string;
  completed_at: string | null;
  criteria: Criteria;
}

interface ExportRow extends Omit<ExportRecord, 'criteria'> {
  criteria: string;
  field_ids: string;
  member_id: number | null;
  content: Buffer | null;
}

const unique = <T>(list: readonly T[]): T[] => [...new Set(list)];

function toRecord(row: ExportRow): ExportRecord {
  return {
    export_id: row.export_id,
    account_id: row.account_id,
    export_name: row.export_name,
    export_type: row.export_type,
    status: row.status,
    user_id: row.user_id,
    created_at: row.created_at,
    completed_at: row.completed_at,
    criteria: JSON.parse(row.criteria) as Criteria,
  };
}

function tableExists(db: Db, name: string): boolean {
  return !!stmt(db, `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name);
}

function columnsOf(db: Db, table: string): Set<string> {
  return new Set(db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]);
}

// ---------------------------------------------------------------- reads

function exportRow(ctx: Ctx, exportId: number): ExportRow {
  const row = stmt(ctx.db, 'SELECT * FROM exports WHERE account_id = ? AND export_id = ?').get(ctx.accountId, exportId) as
    | ExportRow
    | undefined;
  if (!row) throw notFound(`export ${exportId} not found`);
  return row;
}

export function getExport(ctx: Ctx, exportId: number): ExportRecord {
  return toRecord(exportRow(ctx, exportId));
}

/** GET /exports: the exports of one type created over the past seven days (by the service clock), oldest first. */
export function listExports(ctx: Ctx, exportType: ExportType = 'a'): ExportRecord[] {
  const since = stamp(new Date(ctx.clock.now().getTime() - LIST_HORIZON_MS));
  return (
    stmt(
      ctx.db,
      `SELECT export_id, account_id, export_name, export_type, status, user_id, created_at, completed_at, criteria
         FROM exports WHERE account_id = ? AND export_type = ? AND created_at >= ? ORDER BY export_id`,
    ).all(ctx.accountId, exportType, since) as ExportRow[]
  ).map(toRecord);
}

// ---------------------------------------------------------------- audience exports

/** Throws 404 naming every id of the list that `known` (SQL answering the ids that exist) does not answer. */
function requireIds(ctx: Ctx, ids: readonly number[], what: string, known: string, ...params: unknown[]) {
  if (!ids.length) return;
  const missing = ctx.db
    .prepare(`SELECT value FROM json_each(?) WHERE value NOT IN (${known})`)
    .pluck()
    .all(JSON.stringify(ids), ...params) as number[];
  if (missing.length) throw notFound(`${what}${missing.length > 1 ? 's' : ''} ${unique(missing).join(', ')} not found`);
}

/** Members of the subscriptions, when the subscriptions schema exists (it arrives with the subscriptions work). */
function subscriptionSource(ctx: Ctx, ids: number[]): string {
  if (!tableExists(ctx.db, 'subscription_members'))
    throw badRequest('criteria.subscriptions: subscriptions are not available yet', { field: 'criteria.subscriptions' });
  if (tableExists(ctx.db, 'subscriptions')) {
    const live = columnsOf(ctx.db, 'subscriptions').has('deleted_at') ? ' AND deleted_at IS NULL' : '';
    requireIds(ctx, ids, 'subscription', `SELECT subscription_id FROM subscriptions WHERE account_id = ?${live}`, ctx.accountId);
  }
  // A member who opted out of one subscription is no longer among its members.
  const subscribed = columnsOf(ctx.db, 'subscription_members').has('status') ? ` AND status = 'subscribed'` : '';
  return `SELECT member_id FROM subscription_members WHERE subscription_id IN (SELECT value FROM json_each(?))${subscribed}`;
}

/** The live fields of include_fields (true: all of them), in column order. Unknown names are a 400. */
function resolveFields(catalog: FieldCatalog, include: true | string[]): FieldRecord[] {
  if (include === true) return [...catalog.byId.values()];
  const wanted = new Set<number>();
  include.forEach((name, i) => {
    const field = catalog.byName.get(name.toLowerCase());
    if (!field)
      throw badRequest(`criteria.include_fields[${i}]: unknown field "${name}" (see GET /fields)`, {
        field: `criteria.include_fields[${i}]`,
      });
    wanted.add(field.field_id);
  });
  return [...catalog.byId.values()].filter((f) => wanted.has(f.field_id));
}

/**
 * POST /exports. The members are the union of the members of the groups, subscriptions,
 * segments (saved searches, run now) and member_ids, of the given statuses (active by
 * default), not archived; with no source at all (each absent or null), the whole
 * audience. They are fixed now, by one INSERT … SELECT; the download reads their values
 * when it runs.
 */
export function createAudienceExport(ctx: Ctx, input: { user_id: string; criteria?: CriteriaInput }): { export_id: number } {
  const c = input.criteria ?? {};
  return inTransaction(ctx.db, () => {
    const fields = resolveFields(FieldCatalog.of(ctx), c.include_fields ?? true);
    const groups = c.groups == null ? null : unique(c.groups);
    const memberIds = c.member_ids == null ? null : unique(c.member_ids);
    const subscriptions = c.subscriptions == null ? null : unique(c.subscriptions);
    const segments = c.segments == null ? null : unique(c.segments);
    const statuses = unique<ExportMemberStatus>(c.member_status_ids ?? ['a']);

    const sources: string[] = [];
    const params: unknown[] = [];
    if (groups?.length) {
      requireIds(
        ctx,
        groups,
        'group',
        'SELECT member_group_id FROM member_groups WHERE account_id = ? AND deleted_at IS NULL',
        ctx.accountId,
      );
      sources.push('SELECT member_id FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(groups));
    }
    if (subscriptions?.length) {
      sources.push(subscriptionSource(ctx, subscriptions));
      params.push(JSON.stringify(subscriptions));
    }
    if (segments?.length) {
      requireIds(ctx, segments, 'segment', 'SELECT search_id FROM searches WHERE account_id = ? AND deleted_at IS NULL', ctx.accountId);
      for (const id of segments) {
        const q = searchMembersSql(ctx, id);
        sources.push(q.sql);
        params.push(...q.params);
      }
    }
    if (memberIds?.length) {
      // Archived members count as known here; they are left out below like any archived member.
      requireIds(ctx, memberIds, 'member', 'SELECT member_id FROM members WHERE account_id = ?', ctx.accountId);
      sources.push('SELECT value FROM json_each(?)');
      params.push(JSON.stringify(memberIds));
    }
    const noSource = groups === null && subscriptions === null && memberIds === null && segments === null;

    const criteria: Criteria = {
      groups,
      segments,
      subscriptions,
      member_ids: memberIds,
      member_status_ids: statuses,
      include_fields: c.include_fields === undefined || c.include_fields === true ? true : fields.map((f) => f.shortcut_name),
      mfv_delimiter: c.mfv_delimiter ?? ',',
      ...(c.sms ? { sms: { fields: SMS_EXPORT_FIELDS.filter((f) => c.sms!.fields.includes(f)) } } : {}),
    };
    const now = stamp(ctx.clock.now());
    const exportId = Number(
      stmt(
        ctx.db,
        `INSERT INTO exports (account_id, export_type, status, export_name, user_id, criteria, field_ids, created_at)
         VALUES (?, 'a', 'p', '', ?, ?, ?, ?)`,
      ).run(ctx.accountId, input.user_id, JSON.stringify(criteria), JSON.stringify(fields.map((f) => f.field_id)), now).lastInsertRowid,
    );
    // Without a source: every member. Empty lists are a union of nothing.
    const from = noSource ? '' : sources.length ? ` AND m.member_id IN (${sources.join(' UNION ALL ')})` : ' AND 0';
    ctx.db
      .prepare(
        `INSERT INTO export_members (export_id, member_id)
         SELECT ?, m.member_id FROM members m
          WHERE m.account_id = ? AND m.deleted_at IS NULL
            AND m.member_status_id IN (SELECT value FROM json_each(?))${from}
          ORDER BY m.member_id`,
      )
      .run(exportId, ctx.accountId, JSON.stringify(statuses), ...params);
    stmt(ctx.db, `UPDATE exports SET export_name = ?, status = 'o', completed_at = ? WHERE export_id = ?`).run(
      `audience_export_${exportId}`,
      stamp(ctx.clock.now()),
      exportId,
    );
    return { export_id: exportId };
  });
}

// ---------------------------------------------------------------- the CSV

const BASE_COLUMNS = ['email', 'member_id', 'member_since', 'plaintext_preferred', 'bounce_count', 'status_name', 'last_modified_at'];
const SMS_COLUMNS: Record<SmsExportField, { header: string; sql: string }> = {
  phone_number: { header: 'sms_phone_number', sql: 'm.sms_phone_number' },
  // A member with a number has both statuses; the defaults are those of toMember.
  promotional_status: {
    header: 'promotional_status',
    sql: `CASE WHEN m.sms_phone_number IS NOT NULL THEN COALESCE(m.sms_promotional_status, 'o') END`,
  },
  transactional_status: {
    header: 'transactional_status',
    sql: `CASE WHEN m.sms_phone_number IS NOT NULL THEN COALESCE(m.sms_transactional_status, 'a') END`,
  },
  region_code: { header: 'region_code', sql: 'CASE WHEN m.sms_phone_number IS NOT NULL THEN m.sms_region_code END' },
};
const STATUS_NAMES: Record<MemberStatus, string> = { a: 'active', e: 'error', o: 'opt-out', f: 'forwarded' };

const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;

/** One CSV field (RFC 4180): quoted only when it holds a comma, a quote or a line break. */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(QUOTE, '""')}"` : value;
}

/**
 * The columns from member_id to last_modified_at, joined by SQLite into one text
 * (with the comma before it). None of them can need quoting (numbers, ISO
 * timestamps, fixed words), and carrying one value per row out of SQLite instead of
 * six is much of what makes a large export fast (bench/export.js). A stored
 * timestamp is always 'YYYY-MM-DDThh:mm:ss.ffffff' (clock.ts `stamp`), so appending
 * the offset is exactly isoOffset (codecs.ts), at a fraction of the cost of
 * reformatting it in SQL.
 */
const FIXED_COLUMNS_SQL = [
  `',' || m.member_id`,
  `m.member_since || '+00:00'`,
  `CASE WHEN m.plaintext_preferred THEN 'true' ELSE 'false' END`,
  'm.bounce_count',
  `CASE m.member_status_id ${Object.entries(STATUS_NAMES)
    .map(([k, v]) => `WHEN '${k}' THEN '${v}'`)
    .join(' ')} END`,
  `m.last_modified_at || '+00:00'`,
].join(` || ',' || `);

/** Rows read per statement: no read stays open between chunks (so `amsg serve` can answer other requests meanwhile). */
const PAGE_ROWS = 4096;
/** Size of the text chunks the download is made of. */
const CHUNK_CHARS = 64 * 1024;

type Cell = (v: unknown) => string;

/** How a stored field value (from the member's field_values JSON) is written in the CSV. */
function fieldCell(field: FieldRecord, delimiter: string): Cell {
  switch (field.field_type) {
    case 'numeric':
      return (v) => (v === undefined || v === null ? '' : String(v));
    case 'boolean':
      return (v) => (v === undefined || v === null ? '' : v ? 'true' : 'false');
    case 'text[]':
      return (v) => (v === undefined || v === null ? '' : csvField(Array.isArray(v) ? v.join(delimiter) : String(v)));
    default:
      return (v) => (v === undefined || v === null ? '' : csvField(typeof v === 'string' ? v : String(v)));
  }
}

const smsCell: Cell = (v) => (v === null ? '' : csvField(String(v)));

/**
 * The CSV of an audience export, in chunks of about 64 KB: the export's members, in
 * member id order, with their current values. Reads a page of rows at a time by
 * member id, so memory stays flat and no statement stays open while the consumer
 * writes.
 */
function audienceCsv(db: Db, exportId: number, fields: FieldRecord[], sms: SmsExportField[], delimiter: string): Iterable<string> {
  const header = [...BASE_COLUMNS, ...fields.map((f) => f.shortcut_name), ...sms.map((s) => SMS_COLUMNS[s].header)];
  // Prepared now, not when the stream is first read, so a failure is an error answer.
  const page = db
    .prepare(
      `SELECT m.member_id, m.email, ${FIXED_COLUMNS_SQL}${fields.length ? ', m.field_values' : ''}
              ${sms.map((s) => `, ${SMS_COLUMNS[s].sql}`).join('')}
         FROM export_members x JOIN members m ON m.member_id = x.member_id
        WHERE x.export_id = ? AND x.member_id > ?
        ORDER BY x.member_id LIMIT ${PAGE_ROWS}`,
    )
    .raw(true);
  const keys = fields.map((f) => String(f.field_id));
  const cells = fields.map((f) => fieldCell(f, delimiter));
  const smsAt = fields.length ? 4 : 3;
  return (function* chunks() {
    let out = header.map(csvField).join(',') + '\n';
    let after = 0;
    for (;;) {
      const rows = page.all(exportId, after) as unknown[][];
      for (const r of rows) {
        let line = csvField(r[1] as string) + (r[2] as string);
        if (keys.length) {
          // One JSON.parse per member is cheaper than a json_extract per field.
          const values = JSON.parse(r[3] as string) as Record<string, unknown>;
          for (let i = 0; i < keys.length; i++) line += ',' + cells[i](values[keys[i]]);
        }
        for (let i = 0; i < sms.length; i++) line += ',' + smsCell(r[smsAt + i]);
        out += line + '\n';
        if (out.length >= CHUNK_CHARS) {
          yield out;
          out = '';
        }
      }
      if (rows.length < PAGE_ROWS) break;
      after = rows[rows.length - 1][0] as number;
    }
    if (out) yield out;
  })();
}

/**
 * GET /exports/{id}/download: the CSV of an audience export (streamed as it is read),
 * or the zip of an individual one. Checks run now, so a 404 is an ordinary error answer.
 */
export function downloadExport(ctx: Ctx, exportId: number): RawBody {
  const row = exportRow(ctx, exportId);
  if (row.status !== 'o') throw new ApiError(409, `export ${exportId} is not ready to download (status ${row.status})`);
  if (row.export_type === 'm')
    return { contentType: 'application/zip', filename: `${row.export_name}.zip`, data: Buffer.from(row.content!) };
  const criteria = JSON.parse(row.criteria) as Criteria;
  // The field columns chosen at creation that still exist, in today's column order and names.
  const ids = new Set(JSON.parse(row.field_ids) as number[]);
  const fields = [...FieldCatalog.of(ctx).byId.values()].filter((f) => ids.has(f.field_id));
  return {
    contentType: 'text/csv; charset=utf-8',
    filename: `${row.export_name}.csv`,
    data: audienceCsv(ctx.db, exportId, fields, criteria.sms?.fields ?? [], criteria.mfv_delimiter),
  };
}

// ---------------------------------------------------------------- individual member exports

/** fflate, loaded on first use: only this operation needs it. */
let fflate: Promise<typeof import('fflate')> | undefined;

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** Rows of a table that names the member, with stored timestamps in the given wire form; [] when the table does not exist. */
function memberRows(ctx: Ctx, sql: string, tables: string[], memberId: number, time: (s: string | null) => string | null) {
  if (!tables.every((t) => tableExists(ctx.db, t))) return undefined;
  const rows = ctx.db.prepare(sql).all(memberId) as Record<string, unknown>[];
  return rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, /_(at|ts)$|^import_(started|finished)$/.test(k) && typeof v === 'string' ? time(v) : v]),
    ),
  );
}

/** What an individual export holds: file name → content. */
function memberFiles(ctx: Ctx, memberId: number, now: string): Record<string, string> {
  const row = memberRow(ctx, memberId);
  const catalog = FieldCatalog.of(ctx);
  const member = enc.member(toMember(row, catalog));
  const values = JSON.parse(row.field_values) as Record<string, unknown>;
  const fields = [...catalog.byId.values()]
    .filter((f) => values[f.field_id] !== undefined)
    .map((f) => ({
      field_id: f.field_id,
      shortcut_name: f.shortcut_name,
      display_name: f.display_name,
      field_type: f.field_type,
      value: values[f.field_id],
    }));
  const groups = (
    stmt(
      ctx.db,
      // A membership without a time of its own began with the member (migration 010).
      `SELECT g.member_group_id, g.group_name, COALESCE(gm.added_at, m.member_since) AS added_at
         FROM group_members gm JOIN member_groups g ON g.member_group_id = gm.member_group_id
              JOIN members m ON m.member_id = gm.member_id
        WHERE gm.member_id = ? AND g.deleted_at IS NULL ORDER BY g.member_group_id`,
    ).all(memberId) as { member_group_id: number; group_name: string; added_at: string }[]
  ).map((g) => ({ ...g, added_at: atD(g.added_at) }));
  const imports = memberRows(
    ctx,
    // The ranges of import_ledger (migration 007) that hold the member.
    `SELECT im.import_id, im.change_type, im.added_to_groups, mi.source_name, mi.source_filename,
            mi.import_started, mi.import_finished
       FROM (SELECT ? AS member_id) x JOIN import_ledger im ON ${ledgerHolds('im', 'x.member_id')}
       JOIN member_imports mi ON mi.import_id = im.import_id
      ORDER BY im.import_id`,
    ['import_ledger', 'member_imports'],
    memberId,
    atD,
  );
  const subscriptions = memberRows(
    ctx,
    `SELECT sm.*, s.subscription_name FROM subscription_members sm
       JOIN subscriptions s ON s.subscription_id = sm.subscription_id
      WHERE sm.member_id = ? ORDER BY sm.subscription_id`,
    ['subscription_members', 'subscriptions'],
    memberId,
    rfc1123,
  );
  const files: [string, unknown, string][] = [
    ['member.json', member, 'the member record, as GET /members/{member_id} answers it'],
    ['fields.json', fields, 'the custom field values held for the member, with their field definitions'],
    ['groups.json', groups, 'the groups the member is in, and since when'],
    ['optouts.json', optoutHistory(ctx, memberId).map(enc.optout), 'the opt-out history'],
    ['mailings.json', mailingHistory(ctx, memberId).map(historyItem), 'the mailings sent to the member'],
    ...(imports ? [['imports.json', imports, 'the imports that added or updated the member'] as [string, unknown, string]] : []),
    ...(subscriptions
      ? [
          ['subscriptions.json', subscriptions, 'the subscriptions the member is subscribed to or opted out of'] as [
            string,
            unknown,
            string,
          ],
        ]
      : []),
    ['sms.json', member.sms, 'the SMS number and its consent statuses (null: no number)'],
  ];
  const width = Math.max(...files.map(([name]) => name.length));
  const readme = [
    `All data held about member ${memberId} (${row.email}) in account ${ctx.accountId}, as of ${isoOffset(now)}.`,
    '',
    'Files (JSON, UTF-8):',
    ...files.map(([name, , what]) => `  ${name.padEnd(width)}  ${what}`),
    '',
    'Timestamps are UTC. This export is erased with the member.',
    '',
  ].join('\n');
  return Object.fromEntries([['README.txt', readme], ...files.map(([name, value]) => [name, json(value)])]);
}

/** POST /exports/members/{member_id}: a zip of all data held about one member (archived ones too). */
export async function createMemberExport(ctx: Ctx, memberId: number, user: string): Promise<{ export_id: number }> {
  const { zipSync, strToU8 } = await (fflate ??= import('fflate'));
  return inTransaction(ctx.db, () => {
    const now = stamp(ctx.clock.now());
    const files = memberFiles(ctx, memberId, now);
    // Stamped with the export's time, so the same data gives the same bytes.
    const zip = zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])), {
      level: 6,
      mtime: new Date(`${now.slice(0, 19)}Z`),
    });
    const criteria: Criteria = {
      groups: null,
      segments: null,
      subscriptions: null,
      member_ids: [memberId],
      member_status_ids: [...EXPORT_STATUSES],
      include_fields: true,
      mfv_delimiter: ',',
    };
    const exportId = Number(
      stmt(
        ctx.db,
        `INSERT INTO exports (account_id, export_type, status, export_name, user_id, criteria, created_at, member_id)
         VALUES (?, 'm', 'p', '', ?, ?, ?, ?)`,
      ).run(ctx.accountId, user, JSON.stringify(criteria), now, memberId).lastInsertRowid,
    );
    stmt(ctx.db, `UPDATE exports SET export_name = ?, content = ?, status = 'o', completed_at = ? WHERE export_id = ?`).run(
      `member_${memberId}_export_${exportId}`,
      Buffer.from(zip),
      stamp(ctx.clock.now()),
      exportId,
    );
    return { export_id: exportId };
  });
}
