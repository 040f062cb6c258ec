import { inTransaction, truncateWalAfterErasure, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from './fields.js';
import { requireGroups } from './groups.js';
import { LIMIT_OFFSET_NAMED, type Window, windowOf } from '../paging.js';
import { emitEvent, emitMembers, memberList, membersWhere } from '../webhooks/webhooks.js';
import { queueConfirmation } from '../mail/outbox.js';

export const MEMBER_STATUSES = ['a', 'e', 'o', 'f'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
/** Statuses a member can be set to directly (f only arises from forwards). */
export const SETTABLE_STATUSES = ['a', 'e', 'o'] as const;
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

export interface SmsRecord {
  phone_number: string;
  region_code: string | null;
  transactional_status: 'a' | 'o';
  transactional_status_updated_at: string;
  promotional_status: 'a' | 'o';
  promotional_status_updated_at: string;
}

export interface MemberRecord {
  member_id: number;
  account_id: number;
  email: string;
  member_status_id: MemberStatus;
  fields: Record<string, unknown>;
  sms: SmsRecord | null;
  last_modified_at: string;
  member_since: string;
  deleted_at: string | null;
  plaintext_preferred: boolean;
  bounce_count: number;
}

export interface MemberRow {
  member_id: number;
  account_id: number;
  email: string;
  member_status_id: MemberStatus;
  plaintext_preferred: number;
  bounce_count: number;
  member_since: string;
  last_modified_at: string;
  deleted_at: string | null;
  field_values: string;
  sms_phone_number: string | null;
  sms_region_code: string | null;
  sms_transactional_status: 'a' | 'o' | null;
  sms_transactional_status_updated_at: string | null;
  sms_promotional_status: 'a' | 'o' | null;
  sms_promotional_status_updated_at: string | null;
}

export function toMember(row: MemberRow, catalog: FieldCatalog | null): MemberRecord {
  return {
    member_id: row.member_id,
    account_id: row.account_id,
    email: row.email,
    member_status_id: row.member_status_id,
    fields: catalog ? catalog.toNamed(row.field_values) : {},
    sms: row.sms_phone_number
      ? {
          phone_number: row.sms_phone_number,
          region_code: row.sms_region_code,
          transactional_status: row.sms_transactional_status ?? 'a',
          transactional_status_updated_at: row.sms_transactional_status_updated_at ?? row.last_modified_at,
          promotional_status: row.sms_promotional_status ?? 'o',
          promotional_status_updated_at: row.sms_promotional_status_updated_at ?? row.last_modified_at,
        }
      : null,
    last_modified_at: row.last_modified_at,
    member_since: row.member_since,
    deleted_at: row.deleted_at,
    plaintext_preferred: row.plaintext_preferred === 1,
    bounce_count: row.bounce_count,
  };
}

// ---------------------------------------------------------------- reads

export interface MemberListQuery extends Window {
  deleted?: boolean;
  deleted_only?: boolean;
  /** `YYYY-MM-DD~YYYY-MM-DD`, either side optional; a single date is that day. */
  deleted_range?: string;
  exclude_fields?: boolean;
}

/** Which members a list or count takes: live (the default), archived only, all, or archived within dates. */
type Which = 'live' | 'archived' | 'all' | { from: string; to: string };

function whichOf(ctx: Ctx, q: MemberListQuery): Which {
  if (q.deleted_range !== undefined) {
    const [from, to] = parseDeletedRange(q.deleted_range, stamp(ctx.clock.now()));
    return { from, to };
  }
  if (q.deleted_only) return 'archived';
  if (q.deleted) return 'all';
  return 'live';
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Answers [from, to) as stored timestamps; an omitted start is the minimum date, an omitted
 * end is now: the end of today, so a member archived this very moment is included.
 */
export function parseDeletedRange(range: string, now: string, field = 'deleted_range'): [string, string] {
  const fail = () => badRequest(`${field}: "${range}" must be YYYY-MM-DD, YYYY-MM-DD~YYYY-MM-DD, ~YYYY-MM-DD or YYYY-MM-DD~`, { field });
  const checkDay = (d: string) => {
    if (!DAY.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`)) || new Date(`${d}T00:00:00Z`).toISOString().slice(0, 10) !== d)
      throw fail();
    return d;
  };
  const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  if (!range.includes('~')) {
    const day = checkDay(range);
    return [day, nextDay(day)];
  }
  const [from, to, ...rest] = range.split('~');
  if (rest.length) throw fail();
  // An end date is inclusive of that whole day.
  return [from ? checkDay(from) : '0000-01-01', nextDay(to ? checkDay(to) : now.slice(0, 10))];
}

/**
 * One page of members (the given columns), in id order. Each kind is a walk of an
 * index in id order (migration 011: members_live, members_archived; all members merge
 * the two walks), so a page costs the same at any audience size, and a deep page skips
 * index entries without reading members (SQLite defers the row read until a column is
 * needed, after the OFFSET). `after`: from the member after `@after` on (a kept anchor,
 * see anchorBefore).
 */
function pagesOf(columns: string) {
  const live = (after: string) => `SELECT ${columns} FROM members WHERE account_id = @account AND deleted_at IS NULL${after}`;
  const archived = (after: string) => `SELECT ${columns} FROM members WHERE account_id = @account AND deleted_at IS NOT NULL${after}`;
  const window = `ORDER BY member_id ${LIMIT_OFFSET_NAMED}`;
  const page = (after: string) => ({
    live: `${live(after)} ${window}`,
    archived: `${archived(after)} ${window}`,
    all: `${live(after)} UNION ALL ${archived(after)} ${window}`,
  });
  return { first: page(''), after: page(' AND member_id > @after') };
}

/** The ids alone, for the anchors. */
const PAGE_IDS = pagesOf('member_id');

/**
 * Archived within dates: the ids of the archived members of those dates
 * (members_deleted), ordered, then their rows.
 */
const ARCHIVED_RANGE_IDS = `SELECT member_id FROM members WHERE account_id = @account AND deleted_at IS NOT NULL AND deleted_at >= @from AND deleted_at < @to
          ORDER BY member_id ${LIMIT_OFFSET_NAMED}`;

/** Anchors are kept at every this many positions of a list. */
export const ANCHOR_EVERY = 100;

/** Per connection, per account and list: the member_order version they were read under and the ids. */
const anchors = new WeakMap<Db, Map<string, { version: number; ids: number[] }>>();

/**
 * The id of the member just before position `k * ANCHOR_EVERY` of a list (k ≥ 1), so a
 * page that deep walks at most ANCHOR_EVERY index entries past it instead of every
 * entry before it (an OFFSET of 20,000 was most of a page's cost under mixed load).
 * The ids stay right while the account's member_order version stays the same (new
 * members go to the end of every list: ids only grow), so they are read once and
 * kept; one archive, restore or delete reads them again, as they are needed.
 */
function anchorBefore(ctx: Ctx, which: 'live' | 'archived' | 'all', k: number): number | undefined {
  // No version (an account older than 024 that was retired): the anchors are not kept.
  const version = stmt(ctx.db, 'SELECT version FROM member_order WHERE account_id = ?').pluck().get(ctx.accountId) as number | undefined;
  if (version === undefined) return undefined;
  let byList = anchors.get(ctx.db);
  if (!byList) anchors.set(ctx.db, (byList = new Map()));
  const key = `${ctx.accountId}:${which}`;
  let kept = byList.get(key);
  if (!kept || kept.version !== version) byList.set(key, (kept = { version, ids: [] }));
  const next = stmt(ctx.db, PAGE_IDS.after[which]).pluck();
  while (kept.ids.length < k) {
    const after = kept.ids.length ? kept.ids[kept.ids.length - 1] : 0;
    const id = next.get({ account: ctx.accountId, after, limit: 1, offset: ANCHOR_EVERY - 1 }) as number | undefined;
    if (id === undefined) return undefined;
    kept.ids.push(id);
  }
  return kept.ids[k - 1];
}

/**
 * A page of members, each with its field values as wire JSON text: `record.fields`
 * is left empty and `fieldsJson` holds them (FieldCatalog.namedJson), so a page is
 * written without parsing each member's values and writing them again
 * (api/encode.ts, memberJson).
 */
export function listMemberPage(ctx: Ctx, q: MemberListQuery): WireMember[] {
  const which = whichOf(ctx, q);
  const { limit, offset } = windowOf(q);
  // A window past the end is empty: known from the count, without walking to it.
  if (typeof which === 'string' && offset >= countMembersOf(ctx, which)) return [];
  const k = typeof which === 'string' ? Math.floor(offset / ANCHOR_EVERY) : 0;
  const after = k > 0 ? anchorBefore(ctx, which as 'live' | 'archived' | 'all', k) : undefined;
  const sql = typeof which !== 'string' ? ARCHIVED_RANGE_PAGE : after !== undefined ? MEMBER_PAGES.after[which] : MEMBER_PAGES.first[which];
  const params =
    after !== undefined
      ? { account: ctx.accountId, limit, offset: offset - k * ANCHOR_EVERY, after }
      : typeof which === 'string'
        ? { account: ctx.accountId, limit, offset }
        : { account: ctx.accountId, limit, offset, ...which };
  const rows = stmt(ctx.db, sql).raw().all(params) as unknown[][];
  const catalog = q.exclude_fields ? null : FieldCatalog.of(ctx);
  return rows.map((r) => wireMember(memberRowOf(r, ctx.accountId), catalog));
}

/** A member with its field values as wire JSON text (a page, one member's GET); no catalog: without its fields. */
function wireMember(row: MemberRow, catalog: FieldCatalog | null): WireMember {
  return { record: toMember(row, null), fieldsJson: catalog ? catalog.namedJson(row.field_values) : '{}' };
}

/** A member read to be answered on the wire: `record.fields` is empty, `fieldsJson` holds them (api/encode.ts, memberJson). */
export interface WireMember {
  record: MemberRecord;
  fieldsJson: string;
}

/** count=true: from the kept counts (src/store/counters.ts); archived within dates counts those members (members_deleted). */
export function countMembers(ctx: Ctx, q: MemberListQuery): number {
  const which = whichOf(ctx, q);
  if (typeof which === 'string') return countMembersOf(ctx, which);
  return stmt(ctx.db, 'SELECT COUNT(*) FROM members WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_at >= ? AND deleted_at < ?')
    .pluck()
    .get(ctx.accountId, which.from, which.to) as number;
}

export type StatusCounts = Record<(typeof MEMBER_STATUSES)[number], number>;

/**
 * Members by status, live and archived, of the account or of one of its groups: the
 * counts the writers keep (src/store/counters.ts), a few rows at any audience size.
 */
export function memberCounts(ctx: Ctx, groupId?: number): { live: StatusCounts; archived: StatusCounts } {
  if (
    groupId !== undefined &&
    !stmt(ctx.db, 'SELECT 1 FROM member_groups WHERE account_id = ? AND member_group_id = ? AND deleted_at IS NULL').get(
      ctx.accountId,
      groupId,
    )
  )
    throw notFound(`group ${groupId} not found`);
  const rows = (
    groupId === undefined
      ? stmt(ctx.db, 'SELECT member_status_id, archived, n FROM member_counts WHERE account_id = ?').all(ctx.accountId)
      : stmt(ctx.db, 'SELECT member_status_id, archived, n FROM group_counts WHERE member_group_id = ?').all(groupId)
  ) as { member_status_id: (typeof MEMBER_STATUSES)[number]; archived: 0 | 1; n: number }[];
  const zero = () => Object.fromEntries(MEMBER_STATUSES.map((st) => [st, 0])) as StatusCounts;
  const counts = { live: zero(), archived: zero() };
  for (const r of rows) counts[r.archived ? 'archived' : 'live'][r.member_status_id] += r.n;
  return counts;
}

function countMembersOf(ctx: Ctx, which: 'live' | 'archived' | 'all'): number {
  const archived = which === 'live' ? '0' : which === 'archived' ? '1' : '0, 1';
  return stmt(ctx.db, `SELECT ifnull(sum(n), 0) FROM member_counts WHERE account_id = ? AND archived IN (${archived})`)
    .pluck()
    .get(ctx.accountId) as number;
}

export function memberRow(ctx: Ctx, memberId: number, includeDeleted = true): MemberRow {
  const row = stmt(ctx.db, 'SELECT * FROM members WHERE account_id = ? AND member_id = ?').get(ctx.accountId, memberId) as
    | MemberRow
    | undefined;
  if (!row || (row.deleted_at && !includeDeleted)) throw notFound(`member ${memberId} not found`);
  return row;
}

export function rowByEmail(ctx: Ctx, email: string): MemberRow | undefined {
  return stmt(ctx.db, 'SELECT * FROM members WHERE account_id = ? AND email = ?').get(ctx.accountId, email) as MemberRow | undefined;
}

/** The SMS columns of a member, read as one value by the hot reads (memberColumns). */
const SMS_COLUMNS = [
  'sms_phone_number',
  'sms_region_code',
  'sms_transactional_status',
  'sms_transactional_status_updated_at',
  'sms_promotional_status',
  'sms_promotional_status_updated_at',
] as const;

/**
 * A MemberRow's columns in a fixed order, for the hot reads (a member by id, a page of
 * members): read as arrays (`raw`), rows cost about half what the same rows as objects
 * of 17 named columns do, which was most of those requests' database time. Each value
 * better-sqlite3 hands over costs about 0.1 µs whatever it is, so the row carries no
 * account_id (the caller's) and the six SMS columns come as one value: NULL for a
 * member without a phone, else a JSON array of the six. A page of 50 members took 83
 * µs of SQL and mapping instead of 111 (114 instead of 125 when every member has a
 * phone; bench/RESULTS.md).
 */
const memberColumns = (table = '') => {
  const c = (name: string) => `${table}${name}`;
  const sms = SMS_COLUMNS.map(c).join(', ');
  return [
    ...[
      'member_id',
      'email',
      'member_status_id',
      'plaintext_preferred',
      'bounce_count',
      'member_since',
      'last_modified_at',
      'deleted_at',
      'field_values',
    ].map(c),
    `CASE WHEN ${c('sms_phone_number')} IS NULL THEN NULL ELSE json_array(${sms}) END`,
  ].join(', ');
};
/** Where deleted_at is in a row of memberColumns(). */
const DELETED_AT = 7;
const MEMBER_BY_ID = `SELECT ${memberColumns()} FROM members WHERE account_id = ? AND member_id = ?`;
/** Pages of whole members, selected straight from the index walk (a page of ids joined back to members cost ~1.4× as much). */
const MEMBER_PAGES = pagesOf(memberColumns());
const ARCHIVED_RANGE_PAGE = `SELECT ${memberColumns('m.')} FROM (${ARCHIVED_RANGE_IDS}) AS page
  CROSS JOIN members m ON m.member_id = page.member_id ORDER BY page.member_id`;

const NO_SMS = [null, null, null, null, null, null] as const;

/** A raw row of memberColumns() as a MemberRow of the account. */
function memberRowOf(r: unknown[], accountId: number): MemberRow {
  const sms = r[9] === null ? NO_SMS : (JSON.parse(r[9] as string) as (string | null)[]);
  return {
    member_id: r[0] as number,
    account_id: accountId,
    email: r[1] as string,
    member_status_id: r[2] as MemberStatus,
    plaintext_preferred: r[3] as number,
    bounce_count: r[4] as number,
    member_since: r[5] as string,
    last_modified_at: r[6] as string,
    deleted_at: r[DELETED_AT] as string | null,
    field_values: r[8] as string,
    sms_phone_number: sms[0],
    sms_region_code: sms[1],
    sms_transactional_status: sms[2] as 'a' | 'o' | null,
    sms_transactional_status_updated_at: sms[3],
    sms_promotional_status: sms[4] as 'a' | 'o' | null,
    sms_promotional_status_updated_at: sms[5],
  };
}

export function getMember(ctx: Ctx, memberId: number, includeDeleted = false): MemberRecord {
  return toMember(memberById(ctx, memberId, includeDeleted), FieldCatalog.of(ctx));
}

/**
 * GET /members/{id}: the member with its values as wire JSON text, as a page has them,
 * so the answer is written without building its fields as an object and writing them
 * again (3.7% of a served member GET's instructions, bench/RESULTS.md).
 */
export function getWireMember(ctx: Ctx, memberId: number, includeDeleted = false): WireMember {
  return wireMember(memberById(ctx, memberId, includeDeleted), FieldCatalog.of(ctx));
}

/** Members of the account by id, in the order given (a search's page of ids): one statement, each a lookup by key. */
export function wireMembersByIds(ctx: Ctx, ids: readonly number[]): WireMember[] {
  if (ids.length === 0) return [];
  const rows = stmt(ctx.db, MEMBERS_BY_IDS).raw().all(JSON.stringify(ids), ctx.accountId) as unknown[][];
  const catalog = FieldCatalog.of(ctx);
  // Put back in the order given here: an ORDER BY of the page would sort it in a temporary tree.
  const byId = new Map(rows.map((r) => [r[0] as number, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [wireMember(memberRowOf(r, ctx.accountId), catalog)] : [];
  });
}
const MEMBERS_BY_IDS = `SELECT ${memberColumns('m.')} FROM json_each(?) AS page CROSS JOIN members m ON m.member_id = page.value
  WHERE m.account_id = ?`;

function memberById(ctx: Ctx, memberId: number, includeDeleted: boolean): MemberRow {
  const r = stmt(ctx.db, MEMBER_BY_ID).raw().get(ctx.accountId, memberId) as unknown[] | undefined;
  if (!r || (r[DELETED_AT] && !includeDeleted)) throw notFound(`member ${memberId} not found`);
  return memberRowOf(r, ctx.accountId);
}

export function getMemberByEmail(ctx: Ctx, email: string, includeDeleted = false): MemberRecord {
  return toMember(memberByEmail(ctx, email, includeDeleted), FieldCatalog.of(ctx));
}

/** GET /members/email/{email}, as getWireMember. */
export function getWireMemberByEmail(ctx: Ctx, email: string, includeDeleted = false): WireMember {
  return wireMember(memberByEmail(ctx, email, includeDeleted), FieldCatalog.of(ctx));
}

function memberByEmail(ctx: Ctx, email: string, includeDeleted: boolean): MemberRow {
  const row = rowByEmail(ctx, email);
  if (!row || (row.deleted_at && !includeDeleted)) throw notFound(`member ${email} not found`);
  return row;
}

/** Throws 404 naming the first id that is not a member of the account (archived ones count). */
export function requireMembers(ctx: Ctx, memberIds: readonly number[]): void {
  const exists = stmt(ctx.db, 'SELECT 1 FROM members WHERE account_id = ? AND member_id = ?');
  for (const id of memberIds) if (!exists.get(ctx.accountId, id)) throw notFound(`member ${id} not found`);
}

export function optoutHistory(ctx: Ctx, memberId: number): { timestamp: string; mailing_id: number | null }[] {
  memberRow(ctx, memberId);
  return stmt(
    ctx.db,
    'SELECT optout_ts AS timestamp, mailing_id FROM member_optouts WHERE member_id = ? ORDER BY optout_ts, optout_id',
  ).all(memberId) as { timestamp: string; mailing_id: number | null }[];
}

/**
 * The member ids of these addresses, in order, adding the addresses that are not
 * members yet with the given status (forwarded recipients join as f). An archived
 * member is found, not restored: the sender skips it.
 */
export function membersByEmail(ctx: Ctx, emails: readonly string[], newStatus: MemberStatus): number[] {
  return inTransaction(ctx.db, () =>
    emails.map((raw) => {
      const email = raw.trim().toLowerCase();
      return rowByEmail(ctx, email)?.member_id ?? insertMember(ctx, email, {}, {}, newStatus);
    }),
  );
}

// ---------------------------------------------------------------- status

/**
 * The one place member statuses change. Moving to o records an opt-out in the
 * member's history; every change stamps last_modified_at. `where` selects members
 * of ctx's account (its params follow the account id).
 */
function setStatusWhere(ctx: Ctx, to: SettableStatus, where: string, params: unknown[], mailingId: number | null = null): number {
  const now = stamp(ctx.clock.now());
  const changed = membersWhere(
    ctx,
    to === 'o' ? ['member_status_update', 'member_optout'] : ['member_status_update'],
    `member_status_id <> ? AND (${where})`,
    [to, ...params],
  );
  if (to === 'o')
    stmt(
      ctx.db,
      `INSERT INTO member_optouts (member_id, mailing_id, optout_ts)
         SELECT member_id, ?, ? FROM members WHERE account_id = ? AND member_status_id <> 'o' AND (${where})`,
    ).run(mailingId, now, ctx.accountId, ...params);
  const moved = stmt(
    ctx.db,
    `UPDATE members SET member_status_id = ?, last_modified_at = ?
        WHERE account_id = ? AND member_status_id <> ? AND (${where})`,
  ).run(to, now, ctx.accountId, to, ...params).changes;
  emitMembers(ctx, 'member_status_update', changed, { member_status_id: to });
  if (to === 'o') emitMembers(ctx, 'member_optout', changed, { mailing_id: mailingId });
  return moved;
}

/**
 * Members opt out through a mailing's opt-out link: their history names the mailing.
 * Many at once (a simulated send) fire one event listing them, as every bulk change does.
 */
export function optOutFromMailing(ctx: Ctx, memberIds: readonly number[], mailingId: number): number {
  if (memberIds.length === 1) return inTransaction(ctx.db, () => setStatusWhere(ctx, 'o', 'member_id = ?', [memberIds[0]], mailingId));
  return inTransaction(ctx.db, () =>
    setStatusWhere(ctx, 'o', 'member_id IN (SELECT value FROM json_each(?))', [JSON.stringify(memberIds)], mailingId),
  );
}

/** PUT /members/status: true when every listed member exists (and now has status_to). */
export function setStatuses(ctx: Ctx, memberIds: number[], to: SettableStatus): boolean {
  return inTransaction(ctx.db, () => {
    const ids = [...new Set(memberIds)];
    const found = countIds(ctx, ids, 'deleted_at IS NULL');
    setStatusWhere(ctx, to, `deleted_at IS NULL AND member_id IN (SELECT value FROM json_each(?))`, [JSON.stringify(ids)]);
    return found === ids.length;
  });
}

function countIds(ctx: Ctx, ids: number[], extra = '1'): number {
  return (
    stmt(
      ctx.db,
      `SELECT COUNT(*) AS n FROM members WHERE account_id = ? AND (${extra}) AND member_id IN (SELECT value FROM json_each(?))`,
    ).get(ctx.accountId, JSON.stringify(ids)) as { n: number }
  ).n;
}

/**
 * SQL for "the member's status is `status`", with the term that lets a query for a
 * status other than active use the partial index members_status (migration 008).
 */
export function statusIs(status: MemberStatus, column = 'member_status_id'): string {
  if (!(MEMBER_STATUSES as readonly string[]).includes(status)) throw new Error(`not a member status: ${status}`);
  return status === 'a' ? `${column} = 'a'` : `${column} = '${status}' AND ${column} <> 'a'`;
}

/** PUT /members/status/{from}/to/{to}, optionally within one group. */
export function moveStatus(ctx: Ctx, from: MemberStatus, to: SettableStatus, groupId?: number): true {
  return inTransaction(ctx.db, () => {
    if (groupId !== undefined) requireGroups(ctx, [groupId]);
    const inGroup = groupId === undefined ? '' : ' AND member_id IN (SELECT member_id FROM group_members WHERE member_group_id = ?)';
    setStatusWhere(ctx, to, `deleted_at IS NULL AND ${statusIs(from)}${inGroup}`, groupId === undefined ? [] : [groupId]);
    return true;
  });
}

/** PUT /members/email/optout/{email}: true also when already opted out. */
export function optoutByEmail(ctx: Ctx, email: string): true {
  return inTransaction(ctx.db, () => {
    const row = rowByEmail(ctx, email);
    if (!row || row.deleted_at) throw notFound(`member ${email} not found`);
    setStatusWhere(ctx, 'o', 'member_id = ?', [row.member_id]);
    return true;
  });
}

// ---------------------------------------------------------------- writes

export interface SmsInput {
  phone_number?: string;
  region_code?: string;
  transactional_status?: 'a' | 'o';
  promotional_status?: 'a' | 'o';
}

/** Calling codes to ISO regions, longest first where they overlap. Unknown codes leave region_code null. */
const REGIONS: [string, string][] = [
  ['1', 'US'],
  ['7', 'RU'],
  ['20', 'EG'],
  ['27', 'ZA'],
  ['30', 'GR'],
  ['31', 'NL'],
  ['32', 'BE'],
  ['33', 'FR'],
  ['34', 'ES'],
  ['36', 'HU'],
  ['39', 'IT'],
  ['40', 'RO'],
  ['41', 'CH'],
  ['43', 'AT'],
  ['44', 'GB'],
  ['45', 'DK'],
  ['46', 'SE'],
  ['47', 'NO'],
  ['48', 'PL'],
  ['49', 'DE'],
  ['51', 'PE'],
  ['52', 'MX'],
  ['54', 'AR'],
  ['55', 'BR'],
  ['56', 'CL'],
  ['57', 'CO'],
  ['60', 'MY'],
  ['61', 'AU'],
  ['62', 'ID'],
  ['63', 'PH'],
  ['64', 'NZ'],
  ['65', 'SG'],
  ['66', 'TH'],
  ['81', 'JP'],
  ['82', 'KR'],
  ['84', 'VN'],
  ['86', 'CN'],
  ['90', 'TR'],
  ['91', 'IN'],
  ['92', 'PK'],
  ['351', 'PT'],
  ['353', 'IE'],
  ['354', 'IS'],
  ['358', 'FI'],
  ['420', 'CZ'],
  ['852', 'HK'],
  ['971', 'AE'],
  ['972', 'IL'],
];

/** Normalizes a phone number to international form (+ and digits) or throws a 400. */
export function normalizePhone(raw: string, field: string): string {
  const compact = raw.replace(/[\s().-]/g, '');
  const digits = compact.startsWith('+') ? compact.slice(1) : compact.startsWith('00') ? compact.slice(2) : null;
  if (digits === null || !/^[1-9]\d{6,14}$/.test(digits))
    throw badRequest(`${field}: "${raw}" is not a phone number in international form (e.g. +15555550123)`, { field });
  return `+${digits}`;
}

export function regionOf(phone: string): string | null {
  const digits = phone.slice(1);
  let best: [string, string] | undefined;
  for (const entry of REGIONS) if (digits.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best ? best[1] : null;
}

/** SMS columns to set from an sms object (and/or a top-level phone_number). */
export function smsColumns(
  now: string,
  current: Pick<MemberRow, 'sms_phone_number' | 'sms_region_code' | 'sms_transactional_status' | 'sms_promotional_status'> | undefined,
  sms: SmsInput | undefined,
  phone: string | undefined,
) {
  const cols: Record<string, unknown> = {};
  const number = sms?.phone_number ?? phone;
  if (number !== undefined) {
    const normalized = normalizePhone(number, sms?.phone_number !== undefined ? 'sms.phone_number' : 'phone_number');
    if (normalized !== current?.sms_phone_number) {
      cols.sms_phone_number = normalized;
      cols.sms_region_code = sms?.region_code ?? regionOf(normalized);
      // A new number starts with the defaults: transactional messages allowed,
      // promotional ones only with explicit consent.
      if (!current?.sms_phone_number) {
        cols.sms_transactional_status = 'a';
        cols.sms_transactional_status_updated_at = now;
        cols.sms_promotional_status = 'o';
        cols.sms_promotional_status_updated_at = now;
      }
    }
  }
  const hasPhone = number !== undefined || !!current?.sms_phone_number;
  // An explicit region_code applies to the number the member keeps, too.
  if (sms?.region_code !== undefined && cols.sms_phone_number === undefined) {
    if (!hasPhone) throw badRequest('sms.region_code: the member has no phone number; give sms.phone_number', { field: 'sms.region_code' });
    if (sms.region_code !== current?.sms_region_code) cols.sms_region_code = sms.region_code;
  }
  for (const kind of ['transactional', 'promotional'] as const) {
    const status = sms?.[`${kind}_status`];
    if (status === undefined) continue;
    if (!hasPhone)
      throw badRequest(`sms.${kind}_status: the member has no phone number; give sms.phone_number`, { field: `sms.${kind}_status` });
    if (status !== current?.[`sms_${kind}_status`] || cols.sms_phone_number) {
      cols[`sms_${kind}_status`] = status;
      cols[`sms_${kind}_status_updated_at`] = now;
    }
  }
  return cols;
}

/** The stored values after the changes; with a catalog, checked against the field relationships the changes touch. */
function mergeValues(stored: string, changes: Record<string, unknown>, catalog?: FieldCatalog): string {
  const values = JSON.parse(stored) as Record<string, unknown>;
  for (const [id, v] of Object.entries(changes)) {
    if (v === null) delete values[id];
    else values[id] = v;
  }
  catalog?.checkRelationships(values, changes);
  return JSON.stringify(values);
}

function insertMember(
  ctx: Ctx,
  email: string,
  values: Record<string, unknown>,
  cols: Record<string, unknown>,
  status: MemberStatus = 'a',
): number {
  const now = stamp(ctx.clock.now());
  const all: Record<string, unknown> = {
    account_id: ctx.accountId,
    email,
    member_status_id: status,
    member_since: now,
    last_modified_at: now,
    field_values: mergeValues('{}', values),
    ...cols,
  };
  const names = Object.keys(all);
  return Number(
    stmt(ctx.db, `INSERT INTO members (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...Object.values(all))
      .lastInsertRowid,
  );
}

/** What a member write changed, as a webhook event names it: fields, email, sms, archived (restored). */
function changedParts(cols: Record<string, unknown>): string[] {
  const parts = new Set<string>();
  for (const c of Object.keys(cols))
    parts.add(c === 'field_values' ? 'fields' : c.startsWith('sms_') ? 'sms' : c === 'deleted_at' ? 'restored' : c);
  parts.delete('last_modified_at');
  return [...parts];
}

function updateColumns(ctx: Ctx, memberId: number, cols: Record<string, unknown>) {
  cols.last_modified_at = stamp(ctx.clock.now());
  const names = Object.keys(cols);
  stmt(ctx.db, `UPDATE members SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE member_id = ?`).run(...Object.values(cols), memberId);
}

/** Adds the member to the groups it is not yet in; answers the ids it was added to. */
export function joinGroups(ctx: Ctx, memberId: number, groupIds: readonly number[]): number[] {
  const insert = stmt(ctx.db, 'INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at) VALUES (?, ?, ?)');
  const now = stamp(ctx.clock.now());
  const joined = [...new Set(groupIds)].filter((g) => insert.run(g, memberId, now).changes > 0);
  if (joined.length) emitEvent(ctx, 'member_add_to_group', () => ({ group_ids: joined, ...memberList(ctx, [memberId]) }));
  return joined;
}

export interface AddInput {
  email: string;
  phone_number?: string;
  fields?: Record<string, unknown>;
  group_ids?: number[];
  sms?: SmsInput;
}

/**
 * POST /members/add: adds or updates one member. An existing member keeps its
 * status (adding never re-activates an opt-out); an archived one is restored.
 */
export function addMember(ctx: Ctx, input: AddInput): { member_id: number; added: boolean; status: MemberStatus } {
  return inTransaction(ctx.db, () => {
    const catalog = FieldCatalog.of(ctx);
    const values = catalog.toStored(input.fields ?? {});
    if (input.group_ids) requireGroups(ctx, input.group_ids);
    const now = stamp(ctx.clock.now());
    const existing = rowByEmail(ctx, input.email);
    let memberId: number;
    if (existing) {
      memberId = existing.member_id;
      const cols: Record<string, unknown> = smsColumns(now, existing, input.sms, input.phone_number);
      if (Object.keys(values).length) cols.field_values = mergeValues(existing.field_values, values, catalog);
      if (existing.deleted_at) cols.deleted_at = null;
      if (Object.keys(cols).length) updateColumns(ctx, memberId, cols);
      // An explicit add makes a contact that a forward created an ordinary active member (the real service's rule).
      if (existing.member_status_id === 'f') setStatusWhere(ctx, 'a', 'member_id = ?', [memberId]);
      if (Object.keys(cols).length)
        emitEvent(ctx, 'member_update', () => ({ changed: changedParts(cols), ...memberList(ctx, [memberId]) }));
    } else {
      catalog.checkRelationships(values, values);
      memberId = insertMember(ctx, input.email, values, smsColumns(now, undefined, input.sms, input.phone_number));
      emitEvent(ctx, 'member_add', () => memberList(ctx, [memberId]));
    }
    if (input.group_ids) joinGroups(ctx, memberId, input.group_ids);
    return { member_id: memberId, added: !existing, status: memberRow(ctx, memberId).member_status_id };
  });
}

export const OPT_IN_MESSAGE_TAGS = ['[rsvp_name]', '[rsvp_email]', '[opt_in_url]', '[opt_out_url]'];

export interface SignupInput {
  email: string;
  group_ids: number[];
  fields?: Record<string, unknown>;
  opt_in_subject?: string;
  opt_in_message?: string;
  /** The spec: the confirmation e-mail is sent unless this is false (over SMTP, when one is set: mail/outbox.ts). */
  opt_in_confirmation?: boolean;
}

/**
 * POST /members/signup. For an existing member with no new group, nothing changes
 * and only member_id and status are answered (the spec's rule).
 */
export function signup(ctx: Ctx, input: SignupInput): { member_id: number; status: MemberStatus } {
  if (input.opt_in_message !== undefined) {
    const missing = OPT_IN_MESSAGE_TAGS.filter((t) => !input.opt_in_message!.includes(t));
    if (missing.length) throw badRequest(`opt_in_message: must contain the tags ${missing.join(', ')}`, { field: 'opt_in_message' });
  }
  return inTransaction(ctx.db, () => {
    requireSignupFields(ctx, input.fields);
    requireGroups(ctx, input.group_ids);
    const existing = rowByEmail(ctx, input.email);
    // A forwarded contact who signs up becomes an active member (addMember), never answers f.
    if (existing && !existing.deleted_at && existing.member_status_id !== 'f') {
      const current = new Set(
        (
          stmt(ctx.db, 'SELECT member_group_id FROM group_members WHERE member_id = ?').all(existing.member_id) as {
            member_group_id: number;
          }[]
        ).map((r) => r.member_group_id),
      );
      if (input.group_ids.every((g) => current.has(g))) return { member_id: existing.member_id, status: existing.member_status_id };
    }
    const { member_id, status, added } = addMember(ctx, { email: input.email, fields: input.fields, group_ids: input.group_ids });
    emitEvent(ctx, 'member_signup', () => ({ group_ids: [...new Set(input.group_ids)], added, ...memberList(ctx, [member_id]) }));
    if (input.opt_in_confirmation !== false) queueConfirmation(ctx, member_id, input.email.trim().toLowerCase(), input);
    return { member_id, status };
  });
}

/** A signup is a form: it must fill every required field, as the real service's signup forms make it. */
function requireSignupFields(ctx: Ctx, fields: Record<string, unknown> | undefined) {
  const given = new Set(
    Object.entries(fields ?? {})
      .filter(([, v]) => v !== null && v !== undefined && v !== '')
      .map(([name]) => name.toLowerCase()),
  );
  const missing = FieldCatalog.of(ctx).required.filter((f) => !given.has(f.shortcut_name.toLowerCase()));
  if (missing.length)
    throw badRequest(
      `fields.${missing[0].shortcut_name}: is required on a signup (missing: ${missing.map((f) => f.shortcut_name).join(', ')})`,
      {
        field: `fields.${missing[0].shortcut_name}`,
      },
    );
}

export interface UpdateInput {
  email?: string;
  phone_number?: string;
  status_to?: SettableStatus;
  fields?: Record<string, unknown>;
  sms?: SmsInput;
}

/** PUT /members/{id}: works on archived members too, and can change the e-mail address. */
export function updateMember(ctx: Ctx, memberId: number, input: UpdateInput): true {
  return inTransaction(ctx.db, () => {
    const row = memberRow(ctx, memberId);
    const cols: Record<string, unknown> = smsColumns(stamp(ctx.clock.now()), row, input.sms, input.phone_number);
    if (input.fields) {
      const catalog = FieldCatalog.of(ctx);
      cols.field_values = mergeValues(row.field_values, catalog.toStored(input.fields), catalog);
    }
    if (input.email !== undefined && input.email !== row.email) {
      const other = rowByEmail(ctx, input.email);
      if (other) throw badRequest(`email: ${input.email} already belongs to member ${other.member_id}`, { field: 'email' });
      cols.email = input.email;
    }
    if (Object.keys(cols).length) updateColumns(ctx, memberId, cols);
    if (Object.keys(cols).length) emitEvent(ctx, 'member_update', () => ({ changed: changedParts(cols), ...memberList(ctx, [memberId]) }));
    if (input.status_to) setStatusWhere(ctx, input.status_to, 'member_id = ?', [memberId]);
    return true;
  });
}

// ---------------------------------------------------------------- archive and purge

function archiveWhere(ctx: Ctx, where: string, params: unknown[]): number {
  const now = stamp(ctx.clock.now());
  const archived = membersWhere(ctx, ['member_delete'], `deleted_at IS NULL AND (${where})`, params);
  const n = stmt(
    ctx.db,
    `UPDATE members SET deleted_at = ?, last_modified_at = ? WHERE account_id = ? AND deleted_at IS NULL AND (${where})`,
  ).run(now, now, ctx.accountId, ...params).changes;
  emitMembers(ctx, 'member_delete', archived, { purged: false });
  return n;
}

/** DELETE /members/{id}: archives (readable with `deleted`); true also when already archived. */
export function archiveMember(ctx: Ctx, memberId: number): true {
  return inTransaction(ctx.db, () => {
    memberRow(ctx, memberId);
    archiveWhere(ctx, 'member_id = ?', [memberId]);
    return true;
  });
}

/** PUT /members/delete: true when every listed member exists and is now archived. */
export function archiveMembers(ctx: Ctx, memberIds: number[]): boolean {
  return inTransaction(ctx.db, () => {
    const ids = [...new Set(memberIds)];
    const found = countIds(ctx, ids);
    archiveWhere(ctx, 'member_id IN (SELECT value FROM json_each(?))', [JSON.stringify(ids)]);
    return found === ids.length;
  });
}

/** DELETE /members?member_status_id=X: archives every live member of that status. */
export function archiveByStatus(ctx: Ctx, status: SettableStatus): true {
  return inTransaction(ctx.db, () => {
    archiveWhere(ctx, statusIs(status), []);
    return true;
  });
}

/**
 * Erases members: the rows go, and with them (by foreign-key cascade) every row that
 * names them: memberships, opt-out history, and whatever later tables reference members.
 */
function purgeWhere(ctx: Ctx, where: string, params: unknown[]): number {
  const erased = membersWhere(ctx, ['member_delete'], where, params);
  const n = ctx.db.prepare(`DELETE FROM members WHERE account_id = ? AND (${where})`).run(ctx.accountId, ...params).changes;
  emitMembers(ctx, 'member_delete', erased, { purged: true });
  return n;
}

/**
 * POST /members/purge: erases the listed members, live or archived. An unknown id is
 * a 400 naming it (the spec lists only 400 for this operation) and erases nothing.
 */
export function purgeMembers(ctx: Ctx, memberIds: number[]): true {
  inTransaction(ctx.db, () => {
    const exists = stmt(ctx.db, 'SELECT 1 FROM members WHERE account_id = ? AND member_id = ?');
    const unknown = memberIds.filter((id) => !exists.get(ctx.accountId, id));
    if (unknown.length) throw badRequest(`member_ids: no member ${unknown.join(', ')}`, { field: 'member_ids' });
    purgeWhere(ctx, 'member_id IN (SELECT value FROM json_each(?))', [JSON.stringify(memberIds)]);
  });
  truncateWalAfterErasure(ctx.db);
  return true;
}

/** PUT /members/purgeall: erases every archived member, optionally only of a status and/or group. */
export function purgeArchived(ctx: Ctx, opts: { status?: SettableStatus; groupId?: number }): true {
  inTransaction(ctx.db, () => {
    if (opts.groupId !== undefined) requireGroups(ctx, [opts.groupId]);
    const where = ['deleted_at IS NOT NULL'];
    const params: unknown[] = [];
    if (opts.status) {
      where.push('member_status_id = ?');
      params.push(opts.status);
    }
    if (opts.groupId !== undefined) {
      where.push('member_id IN (SELECT member_id FROM group_members WHERE member_group_id = ?)');
      params.push(opts.groupId);
    }
    purgeWhere(ctx, where.join(' AND '), params);
  });
  truncateWalAfterErasure(ctx.db);
  return true;
}
