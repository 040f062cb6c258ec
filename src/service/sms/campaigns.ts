/**
 * SMS campaigns: the record, its drafts (an extension: the spec shows none of the
 * writes), its status letters, its deliveries and clicks, and credit usage. Sending is
 * ./sending.ts; simulated clicks and replies ./engagement.ts.
 *
 * send_status (the spec shows only d; docs/guide/sms.md has this table):
 *
 *   d draft      created or copied; the only status that takes updates and a send
 *   s scheduled  a send was asked for with scheduled_at in the future
 *   p pending    a send was asked for and is due; the job runner starts it
 *   i sending    recipients resolved; deliveries are written in batches
 *   c complete   every recipient has a delivery (or a bounce)
 *   x canceled   canceled before it started (from d, s or p)
 *   f failed     the send could not go on (results_message says why)
 */
import { SMS_SEND_STATUS_WORDS } from '../../status-words.js';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { FieldCatalog } from '../audience/fields.js';
import { requireGroups } from '../audience/groups.js';
import { memberRow, normalizePhone } from '../audience/members.js';
import { searchNames } from '../audience/searches.js';
import { invalidTags } from '../mailings/mailings.js';
import { validateTemplates, type TagProblem } from '../mailings/personalization.js';

export const SEND_STATUSES = ['d', 's', 'p', 'i', 'c', 'x', 'f'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

export const SEND_STATUS_NAMES: Record<SendStatus, string> = SMS_SEND_STATUS_WORDS;

/** Longest message accepted, as written (ten segments of UCS-2 and then some: what carriers still concatenate). */
export const MAX_MESSAGE_LENGTH = 1600;

export interface SmsRecipients {
  groups: number[];
  members: number[];
  segments: number[];
  suppression_segments: number[];
}

export interface SmsCampaignRow {
  sms_campaign_id: number;
  account_id: number;
  /** Kept counts of the deliveries and clicks lists (migration 022), for count=true. */
  delivery_rows: number;
  click_rows: number;
  sms_campaign_name: string;
  sms_campaign_type: 'm';
  send_status: SendStatus;
  from_phone_number: string;
  message: string;
  sent_message: string | null;
  message_segments: number;
  deliveries: number;
  bounces: number;
  opt_outs: number;
  total_sent: number;
  total_clicks: number;
  unique_clicks: number;
  is_promotional: number;
  is_test: number;
  shorten_links: number;
  media_url: string | null;
  recipients: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  pending_at: string | null;
  scheduled_at: string | null;
  send_started: string | null;
  send_finished: string | null;
  canceled_by_user_id: number | null;
  scheduled_by_user_id: number | null;
  copied_from_sms_campaign_id: number | null;
  results_message: string | null;
}

export interface SmsCampaignInput {
  sms_campaign_name: string;
  message: string;
  from_phone_number: string;
  recipients?: Partial<SmsRecipients>;
  is_promotional?: boolean;
  is_test?: boolean;
  shorten_links?: boolean;
  media_url?: string | null;
  /** Stored form. */
  scheduled_at?: string | null;
}

// ---------------------------------------------------------------- reads

/** A campaign of ctx's account; another account's is as missing as one that never was. */
export function campaignRow(ctx: Ctx, campaignId: number): SmsCampaignRow {
  const row = stmt(ctx.db, 'SELECT * FROM sms_campaigns WHERE sms_campaign_id = ? AND account_id = ?').get(campaignId, ctx.accountId) as
    | SmsCampaignRow
    | undefined;
  if (!row) throw notFound(`SMS campaign ${campaignId} not found`);
  return row;
}

export const recipientsOf = (row: Pick<SmsCampaignRow, 'recipients'>): SmsRecipients => JSON.parse(row.recipients);

/** The account's campaigns in id order, archived ones only when asked for. */
export function listCampaigns(ctx: Ctx, q: Window & { includeArchived?: boolean }): SmsCampaignRow[] {
  const { limit, offset } = windowOf(q);
  return stmt(
    ctx.db,
    `SELECT * FROM sms_campaigns WHERE account_id = ? AND (? OR archived_at IS NULL)
      ORDER BY sms_campaign_id ${LIMIT_OFFSET}`,
  ).all(ctx.accountId, q.includeArchived ? 1 : 0, limit, offset) as SmsCampaignRow[];
}

export function countCampaigns(ctx: Ctx, includeArchived?: boolean): number {
  return stmt(ctx.db, 'SELECT COUNT(*) FROM sms_campaigns WHERE account_id = ? AND (? OR archived_at IS NULL)')
    .pluck()
    .get(ctx.accountId, includeArchived ? 1 : 0) as number;
}

export interface DeliveryRow {
  account_id: number;
  sms_campaign_id: number;
  member_id: number;
  delivery_type: 'd' | 'b';
  bounce_type: 'h' | null;
  opted_out_at: string | null;
  from_phone_number: string;
  to_phone_number: string;
}

/** One window of a campaign's deliveries, in member id order (the walk of its primary key). */
export function listDeliveries(ctx: Ctx, campaignId: number, w: Window): DeliveryRow[] {
  const c = campaignRow(ctx, campaignId);
  const { limit, offset } = windowOf(w);
  return stmt(
    ctx.db,
    `SELECT ? AS account_id, sms_campaign_id, member_id, delivery_type, bounce_type, opted_out_at,
            ? AS from_phone_number, to_phone_number
       FROM sms_deliveries WHERE sms_campaign_id = ? ORDER BY member_id ${LIMIT_OFFSET}`,
  ).all(c.account_id, c.from_phone_number, campaignId, limit, offset) as DeliveryRow[];
}

export function countDeliveries(ctx: Ctx, campaignId: number): number {
  // Kept by the send and by a trigger on deletes (migration 022): one row, whatever the campaign's size.
  return campaignRow(ctx, campaignId).delivery_rows;
}

export interface ClickRow {
  sms_campaign_id: number;
  member_id: number;
  sms_link_id: number;
  sms_link_target: string;
  to_phone_number: string;
  click_timestamp: string;
}

/** One window of a campaign's clicks, in the order they came. */
export function listClicks(ctx: Ctx, campaignId: number, w: Window): ClickRow[] {
  campaignRow(ctx, campaignId);
  const { limit, offset } = windowOf(w);
  return stmt(
    ctx.db,
    `SELECT k.sms_campaign_id, k.member_id, k.sms_link_id, l.link_target AS sms_link_target, k.to_phone_number, k.click_timestamp
       FROM sms_clicks k CROSS JOIN sms_links l ON l.sms_link_id = k.sms_link_id
      WHERE k.sms_campaign_id = ? ORDER BY k.sms_click_id ${LIMIT_OFFSET}`,
  ).all(campaignId, limit, offset) as ClickRow[];
}

export function countClicks(ctx: Ctx, campaignId: number): number {
  return campaignRow(ctx, campaignId).click_rows;
}

// ---------------------------------------------------------------- checks

/** The 400 of a message whose tags do not parse, each problem placed in part `message`. */
export function checkMessageTags(ctx: Ctx, message: string) {
  const problems = validateTemplates({ plaintext: message }, { fieldNames: FieldCatalog.of(ctx).byName.keys() });
  if (problems.length) throw invalidTags(problems.map((p) => ({ ...p, part: 'message' }) as unknown as TagProblem));
}

/** Every id of the recipients names a live record of the account (404 naming the first that does not). */
export function checkRecipients(ctx: Ctx, r: SmsRecipients) {
  requireGroups(ctx, r.groups);
  searchNames(ctx, [...r.segments, ...r.suppression_segments]);
  const member = stmt(ctx.db, 'SELECT 1 FROM members WHERE account_id = ? AND member_id = ? AND deleted_at IS NULL');
  for (const id of r.members) if (!member.get(ctx.accountId, id)) memberRow(ctx, id, false);
}

const hasRecipients = (r: SmsRecipients) => r.groups.length + r.members.length + r.segments.length > 0;

export function requireRecipients(campaignId: number, r: SmsRecipients) {
  if (!hasRecipients(r))
    throw badRequest(`recipients: SMS campaign ${campaignId} has no recipients (give recipients.groups, members or segments)`, {
      field: 'recipients',
    });
}

const recipientsFrom = (r: Partial<SmsRecipients> = {}): SmsRecipients => ({
  groups: r.groups ?? [],
  members: r.members ?? [],
  segments: r.segments ?? [],
  suppression_segments: r.suppression_segments ?? [],
});

/** Refuses writes that only a draft takes, naming the status the campaign is in. */
export function requireDraft(c: SmsCampaignRow, what: string) {
  if (c.send_status !== 'd')
    throw badRequest(
      `send_status: SMS campaign ${c.sms_campaign_id} is ${SEND_STATUS_NAMES[c.send_status]} (${c.send_status}): only a draft (d) can be ${what}`,
      { field: 'send_status', send_status: c.send_status },
    );
  if (c.archived_at)
    throw badRequest(`archived_at: SMS campaign ${c.sms_campaign_id} is archived; copy it to send it again`, { field: 'archived_at' });
}

// ---------------------------------------------------------------- writes

/** The extension POST /sms/campaigns: a new draft. */
export function createCampaign(ctx: Ctx, input: SmsCampaignInput, copiedFrom: number | null = null): number {
  return inTransaction(ctx.db, () => {
    const from = normalizePhone(input.from_phone_number, 'from_phone_number');
    checkMessageTags(ctx, input.message);
    const recipients = recipientsFrom(input.recipients);
    checkRecipients(ctx, recipients);
    const now = stamp(ctx.clock.now());
    return Number(
      stmt(
        ctx.db,
        `INSERT INTO sms_campaigns (account_id, sms_campaign_name, from_phone_number, message, is_promotional, is_test,
                                    shorten_links, media_url, recipients, scheduled_at, created_at, updated_at,
                                    copied_from_sms_campaign_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        ctx.accountId,
        input.sms_campaign_name,
        from,
        input.message,
        input.is_promotional ? 1 : 0,
        input.is_test ? 1 : 0,
        input.shorten_links ? 1 : 0,
        input.media_url ?? null,
        JSON.stringify(recipients),
        input.scheduled_at ?? null,
        now,
        now,
        copiedFrom,
      ).lastInsertRowid,
    );
  });
}

/** The extension PATCH /sms/campaigns/{id}: changes a draft; a recipients object replaces the whole audience. */
export function updateCampaign(ctx: Ctx, campaignId: number, input: Partial<SmsCampaignInput>): true {
  return inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    requireDraft(c, 'changed');
    const cols: Record<string, unknown> = {};
    if (input.sms_campaign_name !== undefined) cols.sms_campaign_name = input.sms_campaign_name;
    if (input.from_phone_number !== undefined) cols.from_phone_number = normalizePhone(input.from_phone_number, 'from_phone_number');
    if (input.message !== undefined) {
      checkMessageTags(ctx, input.message);
      cols.message = input.message;
    }
    if (input.recipients !== undefined) {
      const recipients = recipientsFrom(input.recipients);
      checkRecipients(ctx, recipients);
      cols.recipients = JSON.stringify(recipients);
    }
    for (const flag of ['is_promotional', 'is_test', 'shorten_links'] as const)
      if (input[flag] !== undefined) cols[flag] = input[flag] ? 1 : 0;
    if (input.media_url !== undefined) cols.media_url = input.media_url;
    if (input.scheduled_at !== undefined) cols.scheduled_at = input.scheduled_at;
    setColumns(ctx, campaignId, cols);
    return true;
  });
}

/** Writes columns of a campaign, and updated_at (every write of a campaign moves it). */
export function setColumns(ctx: Ctx, campaignId: number, cols: Record<string, unknown>) {
  const names = Object.keys(cols);
  stmt(ctx.db, `UPDATE sms_campaigns SET ${[...names, 'updated_at'].map((n) => `${n} = ?`).join(', ')} WHERE sms_campaign_id = ?`).run(
    ...names.map((n) => cols[n]),
    stamp(ctx.clock.now()),
    campaignId,
  );
}

/** The extension POST /sms/campaigns/{id}/cancel: a draft, scheduled or pending campaign goes to x (403 once it started). */
export function cancelCampaign(ctx: Ctx, campaignId: number): true {
  return inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    if (!['d', 's', 'p'].includes(c.send_status))
      throw forbidden(
        `SMS campaign ${campaignId} is ${SEND_STATUS_NAMES[c.send_status]} (${c.send_status}): only a draft, scheduled or pending campaign (d, s, p) can be canceled`,
      );
    setColumns(ctx, campaignId, { send_status: 'x', canceled_by_user_id: ctx.actor.user_id });
    return true;
  });
}

/** The extension DELETE /sms/campaigns/{id}: archives (archived_at), refused while a send is on its way. */
export function archiveCampaign(ctx: Ctx, campaignId: number): true {
  return inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    if (['s', 'p', 'i'].includes(c.send_status))
      throw badRequest(
        `send_status: SMS campaign ${campaignId} is ${SEND_STATUS_NAMES[c.send_status]} (${c.send_status}): cancel it or let it finish before archiving it`,
        { field: 'send_status', send_status: c.send_status },
      );
    if (!c.archived_at) setColumns(ctx, campaignId, { archived_at: stamp(ctx.clock.now()) });
    return true;
  });
}

/** The extension POST /sms/campaigns/{id}/copy: a new draft with the original's content and audience. */
export function copyCampaign(ctx: Ctx, campaignId: number, input: { sms_campaign_name?: string } = {}): number {
  return inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    const recipients = recipientsOf(c);
    return createCampaign(
      ctx,
      {
        sms_campaign_name: input.sms_campaign_name ?? `${c.sms_campaign_name} (copy)`,
        message: c.message,
        from_phone_number: c.from_phone_number,
        // Records deleted since the original was written leave the copy.
        recipients: existingRecipients(ctx, recipients),
        is_promotional: c.is_promotional === 1,
        is_test: c.is_test === 1,
        shorten_links: c.shorten_links === 1,
        media_url: c.media_url,
      },
      campaignId,
    );
  });
}

function existingRecipients(ctx: Ctx, r: SmsRecipients): SmsRecipients {
  const group = stmt(ctx.db, 'SELECT 1 FROM member_groups WHERE account_id = ? AND member_group_id = ? AND deleted_at IS NULL');
  const search = stmt(ctx.db, 'SELECT 1 FROM searches WHERE account_id = ? AND search_id = ? AND deleted_at IS NULL');
  const member = stmt(ctx.db, 'SELECT 1 FROM members WHERE account_id = ? AND member_id = ? AND deleted_at IS NULL');
  const keep = (ids: number[], s: typeof group) => ids.filter((id) => s.get(ctx.accountId, id));
  return {
    groups: keep(r.groups, group),
    members: keep(r.members, member),
    segments: keep(r.segments, search),
    suppression_segments: keep(r.suppression_segments, search),
  };
}

// ---------------------------------------------------------------- credit usage

/** GET /sms/billing/credit_usage: segments sent from `from` (inclusive) to `to` (exclusive), UTC days 'YYYY-MM-DD'. */
export function creditUsage(ctx: Ctx, from: string, to: string): number {
  if (to < from) throw badRequest(`to_date: must not be before from_date (${from}), got ${to}`, { field: 'to_date' });
  return stmt(ctx.db, 'SELECT COALESCE(SUM(segments), 0) FROM sms_usage WHERE account_id = ? AND day >= ? AND day < ?')
    .pluck()
    .get(ctx.accountId, from, to) as number;
}
