/**
 * Response reports (the real service's /response endpoints, extensions here): how
 * each sent mailing did, and the records behind every figure.
 *
 * Figures are the counters of mailing_response (migration 021), moved by the send
 * (openResponse, countBuilt below, called by sending.ts) and by triggers on the
 * records of each event; nothing is counted from the messages on a read, so a summary
 * costs the same for 100 and for 1,000,000 recipients. Each list is a window over an
 * index in member id order (clicks and opt-outs in the order they happened), and its
 * `count=true` answers the counter, which the records always agree with.
 *
 * A split test (mailing_type s or c) reports the whole under its own id and each
 * variant under the variant's id: a variant's figures are the messages built with its
 * content (its test share, and the rest of the audience when it won).
 */
import { stmt } from '../../store/statements.js';
import { notFound } from '../../errors.js';
import type { Db } from '../../store/db.js';
import type { Ctx } from '../context.js';
import { stamp } from '../clock.js';
import { LIMIT_OFFSET, LIMIT_OFFSET_NAMED, type Window, windowOf } from '../paging.js';
import { FieldCatalog } from '../audience/fields.js';
import { mailingRow, type MailingRow } from './mailings.js';
import { parseDeletedRange, type MemberRow } from '../audience/members.js';
import { FIGURES, RESPONSE_COUNTERS, type CounterName, type FigureName } from './report-figures.js';

/** Mailing types a response report exists for; any other type is a 404, as in the real service. */
const REPORTED_TYPES = ['m', 't', 'r', 's', 'c'];

type Counts = Record<CounterName, number>;

// ---------------------------------------------------------------- writers (the send)

/**
 * When a send starts: a row for the mailing (in the account's series from its start)
 * and for each split-test variant, each holding the recipients queued for it.
 */
export function openResponse(db: Db, m: MailingRow, startedAt: string, queued: number, variantQueued: Map<number, number>) {
  const insert = stmt(
    db,
    `INSERT INTO mailing_response (mailing_id, account_id, started_at, in_progress) VALUES (?, ?, ?, ?)
     ON CONFLICT DO UPDATE SET started_at = excluded.started_at, in_progress = excluded.in_progress`,
  );
  insert.run(m.mailing_id, m.account_id, startedAt, queued);
  for (const [variantId, n] of variantQueued) insert.run(variantId, m.account_id, null, n);
}

/** How many of a split test's test share each variant gets: the share in turn, as the send assigns it. */
export function testShareSplit(variantIds: number[], testShare: number): Map<number, number> {
  return new Map(variantIds.map((id, i) => [id, i < testShare ? Math.floor((testShare - i - 1) / variantIds.length) + 1 : 0]));
}

/**
 * After a batch of the queue up to member `upTo` was built into messages and before
 * it leaves the queue: `built` messages were sent (and, simulated, delivered) and
 * `taken` recipients left the queue (those archived or opted out since the start are
 * taken without a message). A split test's variants get theirs by content.
 */
export function countBuilt(db: Db, m: MailingRow, upTo: number, built: number) {
  if (m.test_percent !== null) {
    const byContent = stmt(
      db,
      `SELECT q.content_mailing_id AS id, COUNT(*) AS taken, COUNT(mm.member_id) AS built
         FROM mailing_queue q LEFT JOIN mailing_messages mm ON mm.mailing_id = q.mailing_id AND mm.member_id = q.member_id
        WHERE q.mailing_id = ? AND q.content_mailing_id IS NOT NULL AND q.member_id <= ?
        GROUP BY q.content_mailing_id`,
    ).all(m.mailing_id, upTo) as { id: number; taken: number; built: number }[];
    for (const c of byContent) if (c.id !== m.mailing_id) addBuilt(db, c.id, c.built, c.taken);
  }
  const taken = stmt(db, 'SELECT COUNT(*) FROM mailing_queue WHERE mailing_id = ? AND content_mailing_id IS NOT NULL AND member_id <= ?')
    .pluck()
    .get(m.mailing_id, upTo) as number;
  addBuilt(db, m.mailing_id, built, taken);
}

function addBuilt(db: Db, mailingId: number, built: number, taken: number) {
  stmt(
    db,
    'UPDATE mailing_response SET sent = sent + ?, delivered = delivered + ?, in_progress = in_progress - ? WHERE mailing_id = ?',
  ).run(built, built, taken, mailingId);
}

/** A split test's winner takes the recipients who waited for it. */
export function countWinnerQueued(db: Db, winnerId: number, queued: number) {
  stmt(db, 'UPDATE mailing_response SET in_progress = in_progress + ? WHERE mailing_id = ?').run(queued, winnerId);
}

/** POST /forwards: the record behind `forwarded` (a trigger counts it). */
export function recordForward(ctx: Ctx, mailingId: number, contentMailingId: number, memberId: number, forwardMailingId: number) {
  stmt(
    ctx.db,
    'INSERT INTO mailing_forwards (forward_mailing_id, mailing_id, content_mailing_id, member_id, forwarded_at) VALUES (?, ?, ?, ?, ?)',
  ).run(forwardMailingId, mailingId, contentMailingId, memberId, stamp(ctx.clock.now()));
}

/** A simulated click: the record behind `clicked` and the link's clicks (triggers count them). */
export function recordClick(ctx: Ctx, mailingId: number, contentMailingId: number, memberId: number, linkId: number | null) {
  stmt(ctx.db, 'INSERT INTO mailing_clicks (mailing_id, content_mailing_id, member_id, link_id, clicked_at) VALUES (?, ?, ?, ?, ?)').run(
    mailingId,
    contentMailingId,
    memberId,
    linkId,
    stamp(ctx.clock.now()),
  );
}

// ---------------------------------------------------------------- reads

/** What a report of one mailing reads: the sent mailing whose records it walks, and the content to keep (a variant's). */
interface Scope {
  mailing: MailingRow;
  sentId: number;
  contentId: number | null;
}

function scopeOf(ctx: Ctx, mailingId: number): Scope {
  const mailing = mailingRow(ctx, mailingId);
  if (!REPORTED_TYPES.includes(mailing.mailing_type)) throw notFound(`mailing ${mailingId} not found`);
  return mailing.split_test_id === null
    ? { mailing, sentId: mailing.mailing_id, contentId: null }
    : { mailing, sentId: mailing.split_test_id, contentId: mailing.mailing_id };
}

const ZERO = Object.fromEntries(RESPONSE_COUNTERS.map((c) => [c.name, 0])) as Counts;

function countsOf(ctx: Ctx, s: Scope): Counts {
  const row = stmt(ctx.db, 'SELECT * FROM mailing_response WHERE mailing_id = ?').get(s.mailing.mailing_id) as Counts | undefined;
  const counts = { ...ZERO, ...row };
  // Nothing is queued once a send has built its last message, or was canceled or failed (which
  // drop the queue at once); the rule also ends the count of a member purged while queued.
  if (['s', 'c', 'x', 'f'].includes(s.mailing.mailing_status)) counts.in_progress = 0;
  return counts;
}

export interface MailingResponse extends Record<FigureName | 'in_progress', number> {
  name: string;
  subject: string;
  recipient_count: number;
}

/** GET /response/{mailing_id}. */
export function mailingResponse(ctx: Ctx, mailingId: number): MailingResponse {
  const s = scopeOf(ctx, mailingId);
  const c = countsOf(ctx, s);
  return {
    name: s.mailing.name,
    subject: s.mailing.subject,
    recipient_count: s.mailing.recipient_count,
    ...(Object.fromEntries(FIGURES.map((f) => [f, c[f]])) as Record<FigureName, number>),
    in_progress: c.in_progress,
  };
}

export type MonthResponse = { account_id: number; month: number; year: number; mailings: number } & Record<FigureName, number>;

/**
 * GET /response: the account's sent mailings by the month their send started (test
 * mailings, forwards and split-test variants left out; a split test counts once).
 * Reads one counter row per mailing in the range, walked in start order.
 */
export function accountResponse(ctx: Ctx, q: { range?: string; include_archived?: boolean }): MonthResponse[] {
  const [from, to] = q.range === undefined ? ['0000-01-01', '9999-12-31'] : parseDeletedRange(q.range, stamp(ctx.clock.now()), 'range');
  const rows = stmt(
    ctx.db,
    `SELECT CAST(substr(r.started_at, 6, 2) AS INTEGER) AS month, CAST(substr(r.started_at, 1, 4) AS INTEGER) AS year,
            COUNT(*) AS mailings, ${FIGURES.map((c) => `SUM(r.${c}) AS ${c}`).join(', ')}
       FROM mailing_response r CROSS JOIN mailings m ON m.mailing_id = r.mailing_id
      WHERE r.account_id = ? AND r.started_at IS NOT NULL AND r.started_at >= ? AND r.started_at < ?
        AND m.mailing_type <> 't' AND m.purged_at IS NULL AND (? OR m.archived_ts IS NULL)
        AND NOT EXISTS (SELECT 1 FROM mailing_forwards f WHERE f.forward_mailing_id = r.mailing_id)
      GROUP BY year, month ORDER BY year, month`,
  ).all(ctx.accountId, from, to, q.include_archived ? 1 : 0) as Omit<MonthResponse, 'account_id'>[];
  return rows.map((r) => ({ account_id: ctx.accountId, ...r }));
}

// ---------------------------------------------------------------- lists

/** The member part of every list row: as the real service shows a member in a report. */
export interface ResponseMember {
  member_id: number;
  email: string;
  email_user: string;
  email_domain: string;
  member_since: string;
  member_status_id: string;
  fields: Record<string, unknown>;
}

type Row = MemberRow & { ts?: string | null };

function toResponseMember(row: MemberRow, catalog: FieldCatalog): ResponseMember {
  const at = row.email.lastIndexOf('@');
  return {
    member_id: row.member_id,
    email: row.email,
    email_user: row.email.slice(0, at),
    email_domain: row.email.slice(at + 1),
    member_since: row.member_since,
    member_status_id: row.member_status_id,
    fields: catalog.toNamed(row.field_values),
  };
}

export type ListQuery = Window & { count?: boolean };

/** Walks a list of members with the time of their event; `counted` answers count=true. */
function memberList<T>(
  ctx: Ctx,
  q: ListQuery,
  counted: () => number,
  sql: string,
  params: unknown[],
  shape: (m: ResponseMember, row: Row & Record<string, unknown>) => T,
): T[] | number {
  if (q.count) return counted();
  const { limit, offset } = windowOf(q);
  const catalog = FieldCatalog.of(ctx);
  return (stmt(ctx.db, sql).all(...params, limit, offset) as (Row & Record<string, unknown>)[]).map((r) =>
    shape(toResponseMember(r, catalog), r),
  );
}

/**
 * Messages of a scope, all of them (sends, in the primary key's member id order) or
 * those with an event, through the event's partial index (migration 021), named
 * because the planner prefers the primary key, which has the same order but walks
 * every message.
 */
function messageList(ctx: Ctx, s: Scope, q: ListQuery, event: 'sent' | 'opened' | 'shared', counted: () => number) {
  const source = event === 'sent' ? 'mailing_messages mm' : `mailing_messages mm INDEXED BY mailing_messages_${event}`;
  const where = event === 'sent' ? '' : ` AND mm.${event} IS NOT NULL`;
  return memberList(
    ctx,
    q,
    counted,
    `SELECT mm.${event === 'sent' ? 'delivery_ts' : event} AS ts, m.* FROM ${source} CROSS JOIN members m ON m.member_id = mm.member_id
      WHERE mm.mailing_id = ?${where} AND (? IS NULL OR mm.content_mailing_id = ?)
      ORDER BY mm.member_id ${LIMIT_OFFSET}`,
    [s.sentId, s.contentId, s.contentId],
    (m, r) => withTimestamp(m, r.ts ?? null),
  );
}

const withTimestamp = (m: ResponseMember, ts: string | null) => ({
  member_id: m.member_id,
  email: m.email,
  email_user: m.email_user,
  email_domain: m.email_domain,
  timestamp: ts,
  member_since: m.member_since,
  member_status_id: m.member_status_id,
  fields: m.fields,
});

export const sends = (ctx: Ctx, id: number, q: ListQuery) => {
  const s = scopeOf(ctx, id);
  return messageList(ctx, s, q, 'sent', () => countsOf(ctx, s).sent);
};

export const opens = (ctx: Ctx, id: number, q: ListQuery) => {
  const s = scopeOf(ctx, id);
  return messageList(ctx, s, q, 'opened', () => countsOf(ctx, s).opened);
};

export const shares = (ctx: Ctx, id: number, q: ListQuery) => {
  const s = scopeOf(ctx, id);
  const rows = messageList(ctx, s, q, 'shared', () => countsOf(ctx, s).shared);
  // The simulator records that a member shared, not where: no network, and no clicks on the share.
  return typeof rows === 'number' ? rows : rows.map((r) => ({ ...r, network: null, share_clicks: 0 }));
};

/** GET …/in_progress: recipients queued and not yet built, in member id order. */
export function inProgress(ctx: Ctx, id: number, q: ListQuery) {
  const s = scopeOf(ctx, id);
  return memberList(
    ctx,
    q,
    () => countsOf(ctx, s).in_progress,
    `SELECT m.* FROM mailing_queue mq CROSS JOIN members m ON m.member_id = mq.member_id
      WHERE mq.mailing_id = ? AND (? IS NULL OR mq.content_mailing_id = ?)
      ORDER BY mq.member_id ${LIMIT_OFFSET}`,
    [s.sentId, s.contentId, s.contentId],
    (m) => m,
  );
}

export const DELIVERY_RESULTS = ['all', 'delivered', 'bounced', 'hard', 'soft'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

/** GET …/deliveries?result=: each message's outcome (delivered, or a hard or soft bounce). */
export function deliveries(ctx: Ctx, id: number, q: ListQuery & { result?: DeliveryResult }) {
  const s = scopeOf(ctx, id);
  const result = q.result ?? 'all';
  const filter = {
    all: '',
    delivered: ' AND mm.bounced IS NULL',
    bounced: ' AND mm.bounced IS NOT NULL',
    hard: " AND mm.bounced IS NOT NULL AND mm.bounce_type = 'hard'",
    soft: " AND mm.bounced IS NOT NULL AND mm.bounce_type IS NOT 'hard'",
  }[result];
  const counted = () => {
    const c = countsOf(ctx, s);
    return { all: c.sent, delivered: c.delivered, bounced: c.bounced, hard: c.bounced_hard, soft: c.bounced - c.bounced_hard }[result];
  };
  return memberList(
    ctx,
    q,
    counted,
    `SELECT COALESCE(mm.bounced, mm.delivery_ts) AS ts, mm.bounced, mm.bounce_type, m.*
       FROM mailing_messages mm ${result === 'all' || result === 'delivered' ? '' : 'INDEXED BY mailing_messages_bounced'} CROSS JOIN members m ON m.member_id = mm.member_id
      WHERE mm.mailing_id = ?${filter} AND (? IS NULL OR mm.content_mailing_id = ?)
      ORDER BY mm.member_id ${LIMIT_OFFSET}`,
    [s.sentId, s.contentId, s.contentId],
    (m, r) => ({
      ...withTimestamp(m, r.ts ?? null),
      delivery_type: r.bounced === null ? 'delivered' : r.bounce_type === 'hard' ? 'hard' : 'soft',
      mailing_id: s.mailing.mailing_id,
      mailing_name: s.mailing.name,
    }),
  );
}

/** GET …/optouts: opt-outs through this mailing's link, in the order they happened. */
export function optouts(ctx: Ctx, id: number, q: ListQuery) {
  const s = scopeOf(ctx, id);
  return memberList(
    ctx,
    q,
    () => countsOf(ctx, s).opted_out,
    `SELECT o.opted_out_at AS ts, m.* FROM mailing_optouts o CROSS JOIN members m ON m.member_id = o.member_id
      WHERE o.mailing_id = ? AND (? IS NULL OR o.content_mailing_id = ?)
      ORDER BY o.optout_id ${LIMIT_OFFSET}`,
    [s.sentId, s.contentId, s.contentId],
    (m, r) => withTimestamp(m, r.ts ?? null),
  );
}

/** GET …/signups: nothing in the sandbox signs a member up through a mailing, so there are none. */
export function signups(ctx: Ctx, id: number, q: ListQuery) {
  const s = scopeOf(ctx, id);
  if (q.count) return countsOf(ctx, s).signed_up;
  windowOf(q);
  return [] as (ResponseMember & { timestamp: string; ref_member_id: number })[];
}

/** GET …/clicks: every click, in the order they happened; member_id and link_id narrow it. */
export function clicks(ctx: Ctx, id: number, q: ListQuery & { member_id?: number; link_id?: number }) {
  const s = scopeOf(ctx, id);
  const member = q.member_id ?? null;
  const link = q.link_id ?? null;
  // Each filter walks an index in click order: a member's clicks (mailing_id, member_id), a link's (link_id), or the mailing's.
  const where =
    (member !== null
      ? 'c.mailing_id = @sent AND c.member_id = @member AND (@link IS NULL OR c.link_id = @link)'
      : link !== null
        ? 'c.link_id = @link AND c.mailing_id = @sent'
        : 'c.mailing_id = @sent') + ' AND (@content IS NULL OR c.content_mailing_id = @content)';
  const args = { sent: s.sentId, content: s.contentId, member, link };
  if (q.count) {
    if (member === null && link === null) return countsOf(ctx, s).clicked;
    if (member === null && s.contentId === null)
      return (
        (stmt(
          ctx.db,
          `SELECT l.total_clicks FROM mailing_links l JOIN mailings c ON c.mailing_id = l.mailing_id
            WHERE l.link_id = ? AND (c.mailing_id = ? OR c.split_test_id = ?)`,
        )
          .pluck()
          .get(link, s.sentId, s.sentId) as number | undefined) ?? 0
      );
    // One member's clicks, or a variant's of one link: the few index entries of a member or a link.
    return stmt(ctx.db, `SELECT COUNT(*) FROM mailing_clicks c WHERE ${where}`).pluck().get(args) as number;
  }
  const { limit, offset } = windowOf(q);
  const catalog = FieldCatalog.of(ctx);
  const rows = stmt(
    ctx.db,
    `SELECT c.clicked_at AS ts, c.link_id, m.* FROM mailing_clicks c CROSS JOIN members m ON m.member_id = c.member_id
      WHERE ${where} ORDER BY c.click_id ${LIMIT_OFFSET_NAMED}`,
  ).all({ ...args, limit, offset }) as (Row & { link_id: number | null })[];
  return rows.map((r) => ({ ...withTimestamp(toResponseMember(r, catalog), r.ts ?? null), link_id: r.link_id }));
}

export interface LinkResponse {
  link_id: number;
  link_order: number;
  link_name: string;
  link_target: string;
  plaintext: boolean;
  unique_clicks: number;
  total_clicks: number;
}

/**
 * GET …/links: a mailing's links with their clicks (a split test's whole: its own
 * links, then each variant's). A mailing has as many links as its content, not its
 * audience, so they are read whole and windowed here.
 */
export function links(ctx: Ctx, id: number, q: ListQuery): LinkResponse[] | number {
  const s = scopeOf(ctx, id);
  const ids =
    s.contentId === null && s.mailing.test_percent !== null
      ? [
          s.mailing.mailing_id,
          ...(stmt(ctx.db, 'SELECT mailing_id FROM mailings WHERE split_test_id = ? ORDER BY mailing_id')
            .pluck()
            .all(s.mailing.mailing_id) as number[]),
        ]
      : [s.mailing.mailing_id];
  const all = ids.flatMap(
    (mid) =>
      stmt(
        ctx.db,
        `SELECT link_id, link_order, link_name, link_target, plaintext, unique_clicks, total_clicks
           FROM mailing_links WHERE mailing_id = ? ORDER BY link_id`,
      ).all(mid) as (Omit<LinkResponse, 'plaintext'> & { plaintext: number })[],
  );
  if (q.count) return all.length;
  const { limit, offset } = windowOf(q);
  return all.slice(offset, offset + limit).map((l) => ({ ...l, plaintext: l.plaintext === 1 }));
}

/** GET …/forwards: each forward a member made of this mailing, in the order they were made. */
export function forwards(ctx: Ctx, id: number, q: ListQuery) {
  const s = scopeOf(ctx, id);
  if (q.count) return countsOf(ctx, s).forwarded;
  const { limit, offset } = windowOf(q);
  return stmt(
    ctx.db,
    `SELECT f.forwarded_at AS timestamp, f.forward_mailing_id, f.member_id, m.email
       FROM mailing_forwards f CROSS JOIN members m ON m.member_id = f.member_id
      WHERE f.mailing_id = ? AND (? IS NULL OR f.content_mailing_id = ?)
      ORDER BY f.forward_mailing_id ${LIMIT_OFFSET}`,
  ).all(s.sentId, s.contentId, s.contentId, limit, offset) as {
    timestamp: string;
    forward_mailing_id: number;
    member_id: number;
    email: string;
  }[];
}

/**
 * GET …/customer_shares and …/customer_share_clicks: shares of the public web view
 * (by anyone, member or not) and the clicks on them. The simulator makes none, so
 * these are empty and `webview_shared`, `webview_share_clicked` stay 0.
 */
export function customerShares(ctx: Ctx, id: number, q: ListQuery, kind: 'webview_shared' | 'webview_share_clicked') {
  const s = scopeOf(ctx, id);
  if (q.count) return countsOf(ctx, s)[kind];
  windowOf(q);
  return [] as unknown[];
}

export const TIMELINE_BUCKETS = ['minute', 'hour', 'day'] as const;
export type TimelineBucket = (typeof TIMELINE_BUCKETS)[number];
const BUCKET_SECONDS: Record<TimelineBucket, number> = { minute: 60, hour: 3600, day: 86400 };
/** The most buckets one answer holds. */
export const MAX_BUCKETS = 1000;

export interface ResponseTimeline {
  started_at: string | null;
  bucket: TimelineBucket;
  bucket_seconds: number;
  buckets: { at: string; opens: number; clicks: number }[];
}

/** The kept rows of a mailing in a range of one unit, in time order (the primary key's). */
export const RESPONSE_TIMES = `SELECT at, opens, clicks FROM mailing_response_times
  WHERE mailing_id = ? AND unit = ? AND at >= ? AND at <= ? ORDER BY at`;

/**
 * GET /response/{mailing_id}/timeline: unique opens and clicks in each minute, hour or
 * day since the send started, read from the counts the writes keep
 * (mailing_response_times), so it costs the buckets, not the opens. Without a bucket,
 * the smallest that fits the time since the send in MAX_BUCKETS; at most MAX_BUCKETS
 * from the send's start.
 */
export function responseTimeline(ctx: Ctx, mailingId: number, bucket?: TimelineBucket): ResponseTimeline {
  const mailing = mailingRow(ctx, mailingId);
  if (!REPORTED_TYPES.includes(mailing.mailing_type)) throw notFound(`mailing ${mailingId} not found`);
  const started = mailing.send_started;
  const startMs = started ? Date.parse(`${started.slice(0, 19)}Z`) : 0;
  const spanSeconds = started ? Math.max(0, (ctx.clock.now().getTime() - startMs) / 1000) : 0;
  const chosen = bucket ?? TIMELINE_BUCKETS.find((b) => spanSeconds / BUCKET_SECONDS[b] < MAX_BUCKETS) ?? 'day';
  const seconds = BUCKET_SECONDS[chosen];
  if (!started) return { started_at: null, bucket: chosen, bucket_seconds: seconds, buckets: [] };
  const first = Math.floor(startMs / 1000 / seconds) * seconds;
  const count = Math.min(MAX_BUCKETS, Math.floor((startMs / 1000 + spanSeconds - first) / seconds) + 1);
  const unit = chosen === 'minute' ? 'm' : 'h';
  const len = unit === 'm' ? 16 : 13;
  const text = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, len);
  const rows = stmt(ctx.db, RESPONSE_TIMES).all(mailingId, unit, text(first), text(first + count * seconds - 1)) as {
    at: string;
    opens: number;
    clicks: number;
  }[];
  const buckets = Array.from({ length: count }, (_, i) => ({
    at: `${new Date((first + i * seconds) * 1000).toISOString().slice(0, 19)}.000000`,
    opens: 0,
    clicks: 0,
  }));
  for (const r of rows) {
    const at = Date.parse(`${r.at}${unit === 'm' ? ':00' : ':00:00'}Z`) / 1000;
    const i = Math.floor((at - first) / seconds);
    if (i < 0 || i >= count) continue;
    buckets[i].opens += r.opens;
    buckets[i].clicks += r.clicks;
  }
  return { started_at: started, bucket: chosen, bucket_seconds: seconds, buckets };
}

/** The figures the console's mailing list shows beside each mailing. */
export interface ListedResponse {
  sent: number;
  delivered: number;
  opened: number;
  clicked_unique: number;
  bounced: number;
  opted_out: number;
}

/** Kept response figures of mailings by id (GET /mailings?with_response=true): one lookup by key each; none for a mailing never sent. */
export function responseOf(ctx: Ctx, mailingIds: number[]): Map<number, ListedResponse> {
  const rows = stmt(
    ctx.db,
    `SELECT r.mailing_id, r.sent, r.delivered, r.opened, r.clicked_unique, r.bounced, r.opted_out
       FROM json_each(?) AS ids CROSS JOIN mailing_response r ON r.mailing_id = ids.value`,
  ).all(JSON.stringify(mailingIds)) as (ListedResponse & { mailing_id: number })[];
  return new Map(rows.map(({ mailing_id, ...figures }) => [mailing_id, figures]));
}
