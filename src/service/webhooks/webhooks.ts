/**
 * Webhooks: the registrations (the real service's `/webhooks` shapes), the events the
 * service's operations fire, and the delivery log.
 *
 * Firing is a transactional outbox: `emitEvent` only INSERTs, inside the transaction
 * of the change that causes the event, one row in webhook_events and one pending
 * delivery per webhook registered for that event. A change that rolls back fires
 * nothing; one that commits cannot lose its event. Posting is someone else's job
 * (webhooks/deliver.ts, loaded only by a process that delivers): `amsg serve` in the
 * background, a local CLI after its call.
 *
 * This module is imported by every service that fires an event, so it stays small and
 * cheap: an account with no webhook for an event pays one memoized lookup.
 */
import type { Db } from '../../store/db.js';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { TableMemo } from '../../store/memo.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp, type Clock } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';

/** The spec's catalogue of webhook event types (Events part), in its order. */
export const WEBHOOK_EVENT_TYPES: readonly { webhook_event_id: number; event_name: string; description: string }[] = [
  ['mailing_finish', 'Fired when a mailing is finished.'],
  ['mailing_start', 'Fired when a mailing starts.'],
  ['member_signup', 'Fired when a member signs up through a signup form.'],
  ['message_open', 'Fired when a message is opened.'],
  ['message_click', 'Fired when a link in a message is clicked.'],
  ['member_optout', 'Fired when a member opts out.'],
  ['message_share', 'Fired when a member shares a message.'],
  ['message_share_click', 'Fired when someone follows a link a member shared.'],
  ['import_finish', 'Fired when a member import completes.'],
  ['member_update', 'Fired when a member is updated.'],
  ['member_delete', 'Fired when a member is deleted.'],
  ['member_add_to_group', 'Fired when member(s) are added to group(s).'],
  ['member_remove_from_group', 'Fired when member(s) are removed from group(s).'],
  ['group_create', 'Fired when a group is created.'],
  ['group_delete', 'Fired when a group is deleted.'],
  ['group_update', 'Fired when a group is updated.'],
  ['member_status_update', "Fired when a member's status changes."],
  ['message_forward', 'Fired when a message is forwarded.'],
  ['member_add', 'Fired when a single member is added.'],
  ['field_create', 'Fired when a field is created.'],
  ['field_delete', 'Fired when a field is deleted.'],
  ['field_update', 'Fired when a field is updated.'],
].map(([event_name, description], i) => ({ webhook_event_id: i + 1, event_name, description }));

export const EVENT_NAMES = WEBHOOK_EVENT_TYPES.map((e) => e.event_name) as readonly EventName[];
export type EventName =
  | 'mailing_finish'
  | 'mailing_start'
  | 'member_signup'
  | 'message_open'
  | 'message_click'
  | 'member_optout'
  | 'message_share'
  | 'message_share_click'
  | 'import_finish'
  | 'member_update'
  | 'member_delete'
  | 'member_add_to_group'
  | 'member_remove_from_group'
  | 'group_create'
  | 'group_delete'
  | 'group_update'
  | 'member_status_update'
  | 'message_forward'
  | 'member_add'
  | 'field_create'
  | 'field_delete'
  | 'field_update';

/** What firing needs: the job runner has no request, only a database, a clock and an account. */
export type EventCtx = Pick<Ctx, 'db' | 'clock' | 'accountId'>;

// ---------------------------------------------------------------- firing

/** The events the account has at least one webhook for, memoized on writes to webhooks alone. */
const WANTED_EVENTS = new TableMemo<number, ReadonlySet<string>>('webhook-events', ['webhooks']);
function wantedEvents(ctx: EventCtx): ReadonlySet<string> {
  return WANTED_EVENTS.get(
    ctx.db,
    ctx.accountId,
    () => new Set(stmt(ctx.db, 'SELECT DISTINCT event FROM webhooks WHERE account_id = ?').pluck().all(ctx.accountId) as string[]),
  );
}

/** Whether any webhook of the account listens for one of these events (so a payload is worth building). */
export function wants(ctx: EventCtx, ...events: EventName[]): boolean {
  const wanted = wantedEvents(ctx);
  return wanted.size > 0 && events.some((e) => wanted.has(e));
}

/** Called after an event row is written (the deliverer of `amsg serve` wakes on it). */
let onEmit: (() => void) | undefined;
export function onEventEmitted(fn: (() => void) | undefined) {
  onEmit = fn;
}

/**
 * Fires an event: writes it to the outbox, with a pending delivery for each of the
 * account's webhooks for it, in the caller's transaction. `data` may be a function, so
 * a payload is only built when someone listens. Answers the event id, or null when no
 * webhook wants the event (nothing is written).
 */
export function emitEvent(ctx: EventCtx, event: EventName, data: object | (() => object | null) | null): number | null {
  if (!wants(ctx, event)) return null;
  const payload = typeof data === 'function' ? data() : data;
  if (payload === null) return null;
  return inTransaction(ctx.db, () => {
    const now = stamp(ctx.clock.now());
    const eventId = Number(
      stmt(ctx.db, 'INSERT INTO webhook_events (account_id, event, data, occurred_at) VALUES (?, ?, ?, ?)').run(
        ctx.accountId,
        event,
        JSON.stringify(payload),
        now,
      ).lastInsertRowid,
    );
    stmt(
      ctx.db,
      `INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, next_attempt_at, created_at)
       SELECT account_id, webhook_id, ?, ?, ? FROM webhooks WHERE account_id = ? AND event = ? ORDER BY webhook_id`,
    ).run(eventId, now, now, ctx.accountId, event);
    if (onEmit) setImmediate(onEmit);
    return eventId;
  });
}

/** At most this many members are listed in one event; `member_count` always says how many there were. */
export const MAX_LISTED_MEMBERS = 10_000;

export interface MemberList {
  members: { member_id: number; email: string }[];
  member_count: number;
}

/** The members with these ids (of the account), in id order, for an event's payload. */
export function memberList(ctx: EventCtx, memberIds: readonly number[]): MemberList {
  const ids = [...new Set(memberIds)];
  const members = stmt(
    ctx.db,
    `SELECT member_id, email FROM members WHERE account_id = ? AND member_id IN (SELECT value FROM json_each(?))
      ORDER BY member_id LIMIT ${MAX_LISTED_MEMBERS}`,
  ).all(ctx.accountId, JSON.stringify(ids)) as MemberList['members'];
  return { members, member_count: members.length < MAX_LISTED_MEMBERS ? members.length : ids.length };
}

/**
 * The members a bulk write is about to change (`where` over the account's members, its
 * params after the account id), read before the write so the event can name them; null
 * when no webhook wants any of the events (nothing is read).
 */
export function membersWhere(ctx: EventCtx, events: EventName[], where: string, params: unknown[]): MemberList | null {
  if (!wants(ctx, ...events)) return null;
  const members = ctx.db
    .prepare(`SELECT member_id, email FROM members WHERE account_id = ? AND (${where}) ORDER BY member_id LIMIT ${MAX_LISTED_MEMBERS + 1}`)
    .all(ctx.accountId, ...params) as MemberList['members'];
  if (members.length <= MAX_LISTED_MEMBERS) return { members, member_count: members.length };
  const count = ctx.db
    .prepare(`SELECT COUNT(*) FROM members WHERE account_id = ? AND (${where})`)
    .pluck()
    .get(ctx.accountId, ...params) as number;
  return { members: members.slice(0, MAX_LISTED_MEMBERS), member_count: count };
}

/** Fires a member event for a list read by membersWhere (nothing when it is null or empty). */
export function emitMembers(ctx: EventCtx, event: EventName, list: MemberList | null, extra: object = {}) {
  if (list && list.member_count > 0) emitEvent(ctx, event, { ...extra, ...list });
}

/**
 * The body posted for an event, the same bytes to every webhook and on every attempt:
 * `{event_id, event, webhook_event_id, account_id, occurred_at, data}`.
 */
export function eventBody(e: { event_id: number; event: string; account_id: number; occurred_at: string; data: string }): string {
  const typeId = EVENT_NAMES.indexOf(e.event as EventName) + 1;
  return `{"event_id":${e.event_id},"event":${JSON.stringify(e.event)},"webhook_event_id":${typeId},"account_id":${e.account_id},"occurred_at":"@D:${e.occurred_at.slice(0, 19)}","data":${e.data}}`;
}

// ---------------------------------------------------------------- registrations

export const WEBHOOK_METHODS = ['POST', 'GET'] as const;

export interface WebhookRecord {
  webhook_id: number;
  url: string;
  method: string;
  event: string;
  public_key: string | null;
}

export interface WebhookInput {
  url?: string;
  event?: EventName;
  method?: (typeof WEBHOOK_METHODS)[number];
  public_key?: string | null;
  secret?: string;
}

const RECORD = 'SELECT webhook_id, url, method, event, public_key FROM webhooks';

export function listWebhooks(ctx: Ctx, w: Window = {}): WebhookRecord[] {
  const { limit, offset } = windowOf(w);
  return stmt(ctx.db, `${RECORD} WHERE account_id = ? ORDER BY webhook_id ${LIMIT_OFFSET}`).all(
    ctx.accountId,
    limit,
    offset,
  ) as WebhookRecord[];
}

export function countWebhooks(ctx: Ctx): number {
  return stmt(ctx.db, 'SELECT COUNT(*) FROM webhooks WHERE account_id = ?').pluck().get(ctx.accountId) as number;
}

/**
 * A webhook of this account. Another account's is as missing as one that never was, for
 * writes too: saying that it exists elsewhere would tell a caller which ids others hold.
 */
export function getWebhook(ctx: Ctx, webhookId: number): WebhookRecord {
  const row = stmt(ctx.db, `${RECORD} WHERE account_id = ? AND webhook_id = ?`).get(ctx.accountId, webhookId) as WebhookRecord | undefined;
  if (!row) throw notFound(`webhook ${webhookId} not found`);
  return row;
}

/** A URL a webhook can post to: absolute http(s). */
export function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`url: ${JSON.stringify(url)} is not a URL; give an absolute http:// or https:// URL`, { field: 'url' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw badRequest(`url: must be an http:// or https:// URL, got ${parsed.protocol}`, { field: 'url' });
  return url;
}

/** A new signing secret: 24 random bytes, `whsec_` and base64url. */
export function newSecret(): string {
  const crypto = process.getBuiltinModule('node:crypto') as typeof import('node:crypto');
  return `whsec_${crypto.randomBytes(24).toString('base64url')}`;
}

export function createWebhook(ctx: Ctx, input: WebhookInput & { url: string; event: EventName }): { webhook_id: number; secret: string } {
  checkUrl(input.url);
  const secret = input.secret ?? newSecret();
  return inTransaction(ctx.db, () => {
    const id = stmt(
      ctx.db,
      'INSERT INTO webhooks (account_id, url, method, event, public_key, secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(
      ctx.accountId,
      input.url,
      input.method ?? 'POST',
      input.event,
      input.public_key ?? null,
      secret,
      stamp(ctx.clock.now()),
    ).lastInsertRowid;
    return { webhook_id: Number(id), secret };
  });
}

export function updateWebhook(ctx: Ctx, webhookId: number, input: WebhookInput): number {
  return inTransaction(ctx.db, () => {
    const current = getWebhook(ctx, webhookId);
    if (input.url !== undefined) checkUrl(input.url);
    stmt(ctx.db, 'UPDATE webhooks SET url = ?, method = ?, event = ?, public_key = ? WHERE webhook_id = ?').run(
      input.url ?? current.url,
      input.method ?? current.method,
      input.event ?? current.event,
      input.public_key === undefined ? current.public_key : input.public_key,
      webhookId,
    );
    return webhookId;
  });
}

/** A new secret for the webhook, answered this once; posts from now on are signed with it. */
export function rollSecret(ctx: Ctx, webhookId: number, secret = newSecret()): { webhook_id: number; secret: string } {
  return inTransaction(ctx.db, () => {
    getWebhook(ctx, webhookId);
    stmt(ctx.db, 'UPDATE webhooks SET secret = ? WHERE webhook_id = ?').run(secret, webhookId);
    return { webhook_id: webhookId, secret };
  });
}

/** Deletes a webhook; its pending deliveries and its log go with it. */
export function deleteWebhook(ctx: Ctx, webhookId: number): true {
  return inTransaction(ctx.db, () => {
    getWebhook(ctx, webhookId);
    stmt(ctx.db, 'DELETE FROM webhooks WHERE webhook_id = ?').run(webhookId);
    return true;
  });
}

export function deleteAllWebhooks(ctx: Ctx): true {
  return inTransaction(ctx.db, () => {
    stmt(ctx.db, 'DELETE FROM webhooks WHERE account_id = ?').run(ctx.accountId);
    return true;
  });
}

// ---------------------------------------------------------------- delivery log

/**
 * Delivered and failed deliveries are deleted this many days after they were made, and
 * events once none names them (webhooks/retention.ts); pending ones are kept.
 */
export const WEBHOOK_RETENTION_DAYS = 30;

export const DELIVERY_STATUSES = ['p', 'o', 'e'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRow {
  delivery_id: number;
  webhook_id: number;
  event_id: number;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  replay_of: number | null;
}

export interface AttemptRow {
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** Only on one delivery's GET: the start of the receiver's answer. */
  response_body?: string | null;
}

/** Failing deliveries: given up, or retrying after a failed attempt (the partial indexes' condition, as written there). */
export const FAILING = "(d.status = 'e' OR (d.status = 'p' AND d.attempts > 0))";

const DELIVERY = `
  SELECT d.delivery_id, d.webhook_id, d.event_id, e.event, d.status, d.attempts,
         CASE WHEN d.status = 'p' THEN d.next_attempt_at END AS next_attempt_at,
         d.last_status_code, d.last_error, d.created_at, d.delivered_at, d.replay_of
    FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id`;

export interface DeliveryQuery extends Window {
  webhook_id?: number;
  status?: DeliveryStatus;
  /** Only the failing deliveries (FAILING). */
  failing?: boolean;
}

function deliveryWhere(ctx: Ctx, q: DeliveryQuery): { where: string; params: unknown[] } {
  if (q.webhook_id !== undefined) getWebhook(ctx, q.webhook_id);
  const where = q.webhook_id !== undefined ? ['d.webhook_id = ?'] : ['d.account_id = ?'];
  const params: unknown[] = [q.webhook_id ?? ctx.accountId];
  if (q.status) {
    where.push('d.status = ?');
    params.push(q.status);
  }
  if (q.failing) where.push(FAILING);
  return { where: where.join(' AND '), params };
}

/** The delivery log, newest first, each with its attempts. */
export function listDeliveries(ctx: Ctx, q: DeliveryQuery): (DeliveryRow & { attempt_log: AttemptRow[] })[] {
  const { limit, offset } = windowOf(q);
  const { where, params } = deliveryWhere(ctx, q);
  const rows = stmt(ctx.db, `${DELIVERY} WHERE ${where} ORDER BY d.delivery_id DESC ${LIMIT_OFFSET}`).all(
    ...params,
    limit,
    offset,
  ) as DeliveryRow[];
  return rows.map((r) => ({ ...r, attempt_log: attemptsOf(ctx.db, r.delivery_id) }));
}

export function countDeliveries(ctx: Ctx, q: DeliveryQuery): number {
  const { where, params } = deliveryWhere(ctx, q);
  return stmt(ctx.db, `SELECT COUNT(*) FROM webhook_deliveries d WHERE ${where}`)
    .pluck()
    .get(...params) as number;
}

function attemptsOf(db: Db, deliveryId: number): AttemptRow[] {
  return stmt(
    db,
    'SELECT attempted_at, status_code, error, duration_ms FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt_id',
  ).all(deliveryId) as AttemptRow[];
}

/**
 * Why a delivery is missing. An id at or below the account's highest pruned delivery is
 * said to be past retention: ids are never reused, so it was the account's and pruned,
 * or was another account's, which this reveals nothing about.
 */
function missingDelivery(ctx: Ctx, deliveryId: number): string {
  const through = stmt(ctx.db, 'SELECT pruned_through FROM webhook_retention WHERE account_id = ?').pluck().get(ctx.accountId) as
    | number
    | undefined;
  if (through !== undefined && deliveryId <= through)
    return `delivery ${deliveryId} is past retention: delivered and failed deliveries are deleted ${WEBHOOK_RETENTION_DAYS} days after they were made, their events with them`;
  return `delivery ${deliveryId} not found`;
}

export function getDelivery(ctx: Ctx, deliveryId: number): DeliveryRow & { attempt_log: AttemptRow[] } {
  const row = stmt(ctx.db, `${DELIVERY} WHERE d.account_id = ? AND d.delivery_id = ?`).get(ctx.accountId, deliveryId) as
    | DeliveryRow
    | undefined;
  if (!row) throw notFound(missingDelivery(ctx, deliveryId));
  return { ...row, attempt_log: attemptsOf(ctx.db, deliveryId) };
}

/**
 * One delivery as the console's webhook page shows it: its attempts with the start of
 * each answer, and the payload (the JSON body that was, or will be, sent).
 */
export function deliveryDetail(ctx: Ctx, deliveryId: number): DeliveryRow & { attempt_log: AttemptRow[]; payload: string } {
  const d = getDelivery(ctx, deliveryId);
  const event = stmt(ctx.db, 'SELECT event_id, event, account_id, occurred_at, data FROM webhook_events WHERE event_id = ?').get(
    d.event_id,
  ) as {
    event_id: number;
    event: string;
    account_id: number;
    occurred_at: string;
    data: string;
  };
  const attempts = stmt(
    ctx.db,
    'SELECT attempted_at, status_code, error, duration_ms, response_body FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt_id',
  ).all(deliveryId) as AttemptRow[];
  return { ...d, attempt_log: attempts, payload: eventBody(event) };
}

/**
 * Sends a delivery's event again: a new delivery of the same event (same event id, so a
 * receiver that de-duplicates sees it is the same) to the same webhook, due now, after
 * that webhook's other pending deliveries. Answers the new delivery's id.
 */
export function replayDelivery(ctx: Ctx, deliveryId: number): number {
  return inTransaction(ctx.db, () => {
    const d = getDelivery(ctx, deliveryId);
    const now = stamp(ctx.clock.now());
    return Number(
      stmt(
        ctx.db,
        `INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, next_attempt_at, created_at, replay_of)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(ctx.accountId, d.webhook_id, d.event_id, now, now, deliveryId).lastInsertRowid,
    );
  });
}

// ---------------------------------------------------------------- trigger

/** A sample payload of each event, for `amsg webhooks trigger` (ids are made up, and say so). */
export function samplePayload(event: EventName): object {
  const members = { members: [{ member_id: 0, email: 'sample@example.com' }], member_count: 1 };
  const message = { mailing_id: 0, ...members };
  const samples: Record<EventName, object> = {
    mailing_start: { mailing_id: 0, name: 'Sample mailing', recipient_count: 0 },
    mailing_finish: { mailing_id: 0, name: 'Sample mailing', recipient_count: 1 },
    member_signup: { ...members, group_ids: [0] },
    member_add: members,
    member_update: { ...members, changed: ['fields'] },
    member_delete: { ...members, purged: false },
    member_optout: { ...members, mailing_id: null },
    member_status_update: { ...members, member_status_id: 'o' },
    member_add_to_group: { group_ids: [0], ...members },
    member_remove_from_group: { group_ids: [0], ...members },
    message_open: message,
    message_click: { ...message, link_id: 0 },
    message_share: message,
    message_share_click: message,
    message_forward: { ...message, forwarded_to: ['friend@example.com'] },
    import_finish: {
      import_id: 0,
      import_status: 'o',
      num_members: 1,
      num_added: 1,
      num_updated: 0,
      num_skipped: 0,
      num_errors: 0,
      num_duplicates: 0,
    },
    group_create: { groups: [{ member_group_id: 0, group_name: 'Sample group' }] },
    group_update: { groups: [{ member_group_id: 0, group_name: 'Sample group' }] },
    group_delete: { groups: [{ member_group_id: 0, group_name: 'Sample group' }] },
    field_create: { field: { field_id: 0, shortcut_name: 'sample', display_name: 'Sample', field_type: 'text' } },
    field_update: { field: { field_id: 0, shortcut_name: 'sample', display_name: 'Sample', field_type: 'text' } },
    field_delete: { field: { field_id: 0, shortcut_name: 'sample', display_name: 'Sample', field_type: 'text' } },
  };
  return { ...samples[event], sample: true };
}

/** Fires a sample event to the account's webhooks for it; answers the event id and how many deliveries it made. */
export function triggerSample(ctx: Ctx, event: EventName): { event_id: number | null; deliveries: number } {
  return inTransaction(ctx.db, () => {
    const eventId = emitEvent(ctx, event, samplePayload(event));
    const deliveries =
      eventId === null ? 0 : (stmt(ctx.db, 'SELECT COUNT(*) FROM webhook_deliveries WHERE event_id = ?').pluck().get(eventId) as number);
    return { event_id: eventId, deliveries };
  });
}

/**
 * Whether any delivery may be due now: one is due by the clock, or one is leased (its
 * process may be gone). A cheap look, so a local CLI loads the deliverer only when needed.
 */
export function anyDeliveryDue(db: Db, clock: Clock): boolean {
  return (
    stmt(db, "SELECT 1 FROM webhook_deliveries WHERE status = 'p' AND next_attempt_at <= ? LIMIT 1").get(stamp(clock.now())) !==
      undefined || stmt(db, 'SELECT 1 FROM webhook_deliveries WHERE lease_pid IS NOT NULL LIMIT 1').get() !== undefined
  );
}
