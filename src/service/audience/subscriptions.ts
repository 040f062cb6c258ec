/**
 * Subscriptions: topics members subscribe to. A member's place in a subscription is one
 * row of subscription_members with a status: subscribed, or opted out of this
 * subscription only. Opting out of everything is the member's own status (o), which
 * this module reads but never writes.
 */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { memberRow, requireMembers } from './members.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { emitEvent, memberList } from '../webhooks/webhooks.js';

export interface SubscriptionSettings {
  show_on_default_preference_form: boolean;
}

export interface SubscriptionRecord {
  subscription_id: number;
  account_id: number;
  subscription_name: string;
  description: string;
  member_count: number;
  optout_count: number;
  created_at: string;
  modified_at: string;
  deleted_at: string | null;
  purged_at: string | null;
  settings: SubscriptionSettings | null;
  subscription_order: number | null;
}

type SubscriptionRow = Omit<SubscriptionRecord, 'settings'> & { settings: string | null };

/**
 * Who counts where, over the live (not archived) members of a subscription; `sm` is the
 * subscription_members row and `m` the member. Each live row counts in exactly one:
 *
 * - subscribed: the row says subscribed and the member has not opted out of everything
 *   (statuses a, e and f: an address in error is still a subscriber, just unreachable);
 * - opted out: the member opted out of this subscription, or of everything (status o),
 *   since an account-wide opt-out receives no subscription's mail either. Activating
 *   the member again makes a still-subscribed row count as subscribed again.
 *
 * Archived members count nowhere and are in neither list; restoring one brings its
 * rows back. Purged members have no rows (foreign-key cascade).
 */
const SUBSCRIBED = `sm.status = 'subscribed' AND m.member_status_id <> 'o'`;
const OPTED_OUT = `(sm.status = 'opted_out' OR m.member_status_id = 'o')`;

/**
 * Counts are read from subscription_counts (src/store/counters.ts): live members by the
 * row's status and the member's, kept exact by the writes that move them; SUBSCRIBED
 * and OPTED_OUT over those keys.
 */
const countWhere = (condition: string) =>
  `ifnull((SELECT sum(n) FROM subscription_counts sm
            WHERE sm.subscription_id = s.subscription_id AND sm.archived = 0 AND ${condition.replace(/\bm\.member_status_id/g, 'sm.member_status_id')}), 0)`;
const SUBSCRIPTION_SELECT = `
  SELECT s.subscription_id, s.account_id, s.subscription_name, s.description,
         ${countWhere(SUBSCRIBED)} AS member_count, ${countWhere(OPTED_OUT)} AS optout_count,
         s.created_at, s.modified_at, s.deleted_at, s.purged_at, s.settings, s.subscription_order
    FROM subscriptions s`;

function toRecord(row: SubscriptionRow): SubscriptionRecord {
  return { ...row, settings: row.settings === null ? null : (JSON.parse(row.settings) as SubscriptionSettings) };
}

// ---------------------------------------------------------------- reads

export interface SubscriptionListQuery {
  deleted_only?: boolean;
  include_deleted?: boolean;
}

/** Live subscriptions by default; deleted_only wins over include_deleted. Ordered by id. */
export function listSubscriptions(ctx: Ctx, q: SubscriptionListQuery = {}): SubscriptionRecord[] {
  const deleted = q.deleted_only ? 's.deleted_at IS NOT NULL' : q.include_deleted ? '1' : 's.deleted_at IS NULL';
  return (
    stmt(ctx.db, `${SUBSCRIPTION_SELECT} WHERE s.account_id = ? AND ${deleted} ORDER BY s.subscription_id`).all(
      ctx.accountId,
    ) as SubscriptionRow[]
  ).map(toRecord);
}

/** A subscription of the account, deleted ones included (their deleted_at says so). */
export function getSubscription(ctx: Ctx, subscriptionId: number): SubscriptionRecord {
  const row = stmt(ctx.db, `${SUBSCRIPTION_SELECT} WHERE s.account_id = ? AND s.subscription_id = ?`).get(ctx.accountId, subscriptionId) as
    | SubscriptionRow
    | undefined;
  if (!row) throw notFound(`subscription ${subscriptionId} not found`);
  return toRecord(row);
}

/** The row of a subscription that may still change: a deleted one answers 404. */
function liveRow(ctx: Ctx, subscriptionId: number): SubscriptionRow {
  const row = stmt(ctx.db, 'SELECT * FROM subscriptions WHERE account_id = ? AND subscription_id = ?').get(ctx.accountId, subscriptionId) as
    | SubscriptionRow
    | undefined;
  if (!row) throw notFound(`subscription ${subscriptionId} not found`);
  if (row.deleted_at) throw notFound(`subscription ${subscriptionId} not found (it was deleted)`);
  return row;
}

/**
 * A page of the members one of the subscription's counts counts, in id order. When the
 * counts say every row's own status tells where it counts (no member there is
 * archived, none subscribed has opted out of everything), the page is a walk of the
 * subscription's rows alone (its primary key); otherwise each row's member is read.
 */
function memberIdsWhere(ctx: Ctx, subscriptionId: number, rowStatus: 'subscribed' | 'opted_out', condition: string, w: Window) {
  getSubscription(ctx, subscriptionId);
  const { limit, offset } = windowOf(w);
  const mixed = stmt(
    ctx.db,
    `SELECT ifnull(sum(n), 0) FROM subscription_counts
      WHERE subscription_id = ? AND (archived = 1 OR (status = 'subscribed' AND member_status_id = 'o'))`,
  )
    .pluck()
    .get(subscriptionId);
  if (!mixed)
    return stmt(
      ctx.db,
      `SELECT member_id FROM subscription_members WHERE subscription_id = ? AND status = ?
        ORDER BY member_id ${LIMIT_OFFSET}`,
    ).all(subscriptionId, rowStatus, limit, offset) as { member_id: number }[];
  return stmt(
    ctx.db,
    `SELECT sm.member_id FROM subscription_members sm
       CROSS JOIN members m ON m.member_id = sm.member_id AND m.deleted_at IS NULL
      WHERE sm.subscription_id = ? AND ${condition}
      ORDER BY sm.member_id ${LIMIT_OFFSET}`,
  ).all(subscriptionId, limit, offset) as { member_id: number }[];
}

/** GET /subscriptions/{id}/members: the members member_count counts, by id. */
export function subscriptionMembers(ctx: Ctx, subscriptionId: number, w: Window): { member_id: number }[] {
  return memberIdsWhere(ctx, subscriptionId, 'subscribed', SUBSCRIBED, w);
}

/** GET /subscriptions/{id}/optouts: the members optout_count counts, by id. */
export function subscriptionOptouts(ctx: Ctx, subscriptionId: number, w: Window): { member_id: number }[] {
  return memberIdsWhere(ctx, subscriptionId, 'opted_out', OPTED_OUT, w);
}

// ---------------------------------------------------------------- the subscription itself

export interface SubscriptionInput {
  name?: string;
  description?: string;
  settings?: SubscriptionSettings | null;
  subscription_order?: number | null;
}

/** The id of the live subscription with this name (case-insensitive), if any. */
function idByName(ctx: Ctx, name: string): number | undefined {
  const row = stmt(
    ctx.db,
    `SELECT subscription_id FROM subscriptions
      WHERE account_id = ? AND subscription_name = ? COLLATE NOCASE AND deleted_at IS NULL`,
  ).get(ctx.accountId, name) as { subscription_id: number } | undefined;
  return row?.subscription_id;
}

function cleanName(ctx: Ctx, name: string, exceptId?: number): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest('name: must not be empty', { field: 'name' });
  const taken = idByName(ctx, trimmed);
  if (taken !== undefined && taken !== exceptId)
    throw badRequest(`name: a subscription named "${trimmed}" already exists (subscription ${taken})`, { field: 'name' });
  return trimmed;
}

const settingsText = (s: SubscriptionSettings | null | undefined) =>
  s ? JSON.stringify({ show_on_default_preference_form: s.show_on_default_preference_form }) : null;

export function createSubscription(ctx: Ctx, input: SubscriptionInput & { name: string }): SubscriptionRecord {
  return inTransaction(ctx.db, () => {
    const name = cleanName(ctx, input.name);
    const now = stamp(ctx.clock.now());
    const id = stmt(
      ctx.db,
      `INSERT INTO subscriptions (account_id, subscription_name, description, settings, subscription_order, created_at, modified_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      name,
      input.description ?? '',
      settingsText(input.settings),
      input.subscription_order ?? null,
      now,
      now,
    ).lastInsertRowid;
    return getSubscription(ctx, Number(id));
  });
}

/** PUT /subscriptions/{id}: changes what is given; modified_at moves only when something changed. */
export function updateSubscription(ctx: Ctx, subscriptionId: number, input: SubscriptionInput): SubscriptionRecord {
  return inTransaction(ctx.db, () => {
    const row = liveRow(ctx, subscriptionId);
    const cols: Record<string, unknown> = {};
    if (input.name !== undefined) {
      const name = cleanName(ctx, input.name, subscriptionId);
      if (name !== row.subscription_name) cols.subscription_name = name;
    }
    if (input.description !== undefined && input.description !== row.description) cols.description = input.description;
    if (input.settings !== undefined && settingsText(input.settings) !== row.settings) cols.settings = settingsText(input.settings);
    if (input.subscription_order !== undefined && input.subscription_order !== row.subscription_order)
      cols.subscription_order = input.subscription_order;
    if (Object.keys(cols).length) {
      cols.modified_at = stamp(ctx.clock.now());
      const names = Object.keys(cols);
      ctx.db
        .prepare(`UPDATE subscriptions SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE subscription_id = ?`)
        .run(...Object.values(cols), subscriptionId);
    }
    return getSubscription(ctx, subscriptionId);
  });
}

/**
 * DELETE /subscriptions/{id}: sets deleted_at (and frees the name). The member rows stay,
 * so a deleted subscription still reads with its counts. Deleting a deleted subscription
 * answers it unchanged: DELETE is retried as idempotent by clients.
 */
export function deleteSubscription(ctx: Ctx, subscriptionId: number): SubscriptionRecord {
  return inTransaction(ctx.db, () => {
    const current = getSubscription(ctx, subscriptionId);
    if (current.deleted_at) return current;
    const now = stamp(ctx.clock.now());
    stmt(ctx.db, 'UPDATE subscriptions SET deleted_at = ?, modified_at = ? WHERE subscription_id = ?').run(now, now, subscriptionId);
    return getSubscription(ctx, subscriptionId);
  });
}

// ---------------------------------------------------------------- members

export interface BulkInput {
  member_ids?: number[];
  import_id?: number;
}

/** Import change types whose members an import_id subscribes: added and updated, not skipped. */
const IMPORTED_CHANGE_TYPES = `('a', 'u')`;

/**
 * POST /subscriptions/{id}/members/bulk: subscribes the listed members, or every member
 * an import added or updated (a skipped row, an add_only hit, was not part of the import).
 * Members already subscribed keep their subscribed_at; members who opted out of this
 * subscription stay opted out (a bulk add never overrides a member's choice; an
 * administrator removes the row first to subscribe them again). Archived members may be
 * subscribed, as they may join groups; they count once restored.
 */
export function subscribeMembers(ctx: Ctx, subscriptionId: number, input: BulkInput): true {
  const byIds = input.member_ids !== undefined;
  const byImport = input.import_id !== undefined;
  if (byIds === byImport)
    throw badRequest(byIds ? 'give member_ids or import_id, not both' : 'give member_ids (an array of member ids) or import_id');
  return inTransaction(ctx.db, () => {
    liveRow(ctx, subscriptionId);
    const now = stamp(ctx.clock.now());
    if (byIds) {
      requireMembers(ctx, input.member_ids!);
      const insert = stmt(
        ctx.db,
        `INSERT INTO subscription_members (subscription_id, member_id, status, subscribed_at) VALUES (?, ?, 'subscribed', ?)
         ON CONFLICT (subscription_id, member_id) DO NOTHING`,
      );
      for (const memberId of new Set(input.member_ids)) insert.run(subscriptionId, memberId, now);
      return true;
    }
    const job = stmt(ctx.db, 'SELECT status FROM member_imports WHERE account_id = ? AND import_id = ?').get(
      ctx.accountId,
      input.import_id,
    ) as { status: string } | undefined;
    if (!job) throw notFound(`import ${input.import_id} not found`);
    // A queued or running import has recorded only part of its members: subscribing
    // them now would silently miss the rest.
    if (job.status === 'q' || job.status === 'p')
      throw badRequest(`import_id: import ${input.import_id} has not finished (status ${job.status}); try again when it has`, {
        field: 'import_id',
      });
    stmt(
      ctx.db,
      // The import's member-id ranges (import_ledger, migration 007), expanded.
      `WITH RECURSIVE im (member_id, last_id) AS (
         SELECT first_id, last_id FROM import_ledger WHERE import_id = ? AND change_type IN ${IMPORTED_CHANGE_TYPES}
         UNION ALL
         SELECT member_id + 1, last_id FROM im WHERE member_id < last_id
       )
       INSERT INTO subscription_members (subscription_id, member_id, status, subscribed_at)
       SELECT ?, im.member_id, 'subscribed', ? FROM im JOIN members m ON m.member_id = im.member_id
        WHERE m.account_id = ?
       ON CONFLICT (subscription_id, member_id) DO NOTHING`,
    ).run(input.import_id, subscriptionId, now, ctx.accountId);
    return true;
  });
}

/**
 * PUT /subscriptions/{id}/members/{member_id}/optout (extension): the member opts out of
 * this subscription only. A member not yet in it gets an opted-out row, so a later bulk
 * add leaves it out. Already opted out: true, and the first opt-out time is kept.
 */
export function optOutMember(ctx: Ctx, subscriptionId: number, memberId: number): true {
  return inTransaction(ctx.db, () => {
    liveRow(ctx, subscriptionId);
    memberRow(ctx, memberId);
    const changed = stmt(
      ctx.db,
      `INSERT INTO subscription_members (subscription_id, member_id, status, subscribed_at, opted_out_at)
       VALUES (?, ?, 'opted_out', NULL, ?)
       ON CONFLICT (subscription_id, member_id) DO UPDATE SET status = 'opted_out', opted_out_at = excluded.opted_out_at
        WHERE status <> 'opted_out'`,
    ).run(subscriptionId, memberId, stamp(ctx.clock.now())).changes;
    if (changed)
      emitEvent(ctx, 'member_optout', () => ({ mailing_id: null, subscription_id: subscriptionId, ...memberList(ctx, [memberId]) }));
    return true;
  });
}

/**
 * DELETE /subscriptions/{id}/members/{member_id} (extension): the subscription forgets the
 * member, opt-out included. True also when it was not in it (DELETE is retried as idempotent).
 */
export function removeMember(ctx: Ctx, subscriptionId: number, memberId: number): true {
  return inTransaction(ctx.db, () => {
    liveRow(ctx, subscriptionId);
    memberRow(ctx, memberId);
    stmt(ctx.db, 'DELETE FROM subscription_members WHERE subscription_id = ? AND member_id = ?').run(subscriptionId, memberId);
    return true;
  });
}

export interface MemberSubscription {
  subscription_id: number;
  subscription_name: string;
  status: 'subscribed' | 'opted_out';
  subscribed_at: string | null;
  opted_out_at: string | null;
}

/**
 * The live subscriptions a member is in or opted out of (GET /members/{id}/subscriptions,
 * the console's member page), in subscription id order; a member is in few.
 */
export function memberSubscriptions(ctx: Ctx, memberId: number): MemberSubscription[] {
  memberRow(ctx, memberId, true);
  return stmt(
    ctx.db,
    `SELECT s.subscription_id, s.subscription_name, sm.status, sm.subscribed_at, sm.opted_out_at
       FROM subscription_members sm JOIN subscriptions s ON s.subscription_id = sm.subscription_id
      WHERE sm.member_id = ? AND s.account_id = ? AND s.deleted_at IS NULL
      ORDER BY sm.subscription_id`,
  ).all(memberId, ctx.accountId) as MemberSubscription[];
}
