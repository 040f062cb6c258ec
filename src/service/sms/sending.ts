/**
 * Simulated SMS sending, in the job model of mailings (src/service/mailings/sending.ts): a send
 * that was asked for moves s → p → i → c, one step per transaction, so a killed process
 * resumes where it stopped.
 *
 * - Asking (POST …/send): only a draft; its recipients and tags are checked again, URLs
 *   become short links when shorten_links is on (sent_message), and a non-zero
 *   sub_message_segment_limit is checked against every recipient's rendered message.
 *   With scheduled_at in the future the campaign waits in s, otherwise p.
 * - p (or s once due) → i: the audience is resolved once into sms_queue: groups, members
 *   and segments, minus the suppression segments, de-duplicated, live members with a
 *   phone number whose SMS consent allows the message (promotional status a for a
 *   promotional campaign; transactional status a, the default, otherwise). A member's
 *   e-mail status plays no part: SMS consent is its own.
 * - i: batches of 10,000 queued recipients (member id order) get one delivery each,
 *   written INSERT … SELECT. The message is rendered per member only when it has tags,
 *   and then only to count its segments; recipients are grouped by that count so each
 *   group is one statement. Numbers with the calling code +999 (unassigned) bounce
 *   (delivery_type b, bounce_type h). The batch's sent count, bounces and segments are
 *   added to the campaign and its segments to the day's credit usage.
 * - i → c when the queue is empty; results_message says what was sent.
 */
import type { Db } from '../../store/db.js';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import type { Clock } from '../clock.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { localActor, RETIRED_ACCOUNTS } from '../accounts/accounts.js';
import { FieldCatalog } from '../audience/fields.js';
import { audienceSqlOf } from '../mailings/sending.js';
import type { AudienceRef } from '../mailings/mailings.js';
import { VIEW_BASE } from '../mailings/mailings.js';
import { compileTemplate } from '../mailings/personalization.js';
import { countSegments, segmentsOf } from './segments.js';
import { getSettings } from './settings.js';
import {
  campaignRow,
  checkMessageTags,
  checkRecipients,
  recipientsOf,
  requireDraft,
  requireRecipients,
  setColumns,
  type SmsCampaignRow,
  type SmsRecipients,
} from './campaigns.js';

/** Recipients given a delivery per transaction. */
const BATCH = 10_000;

/** Where short links point in the sandbox (example.com names nothing real). */
export const SHORT_LINK_BASE = 'https://amsg.example.com/s';
export const shortLink = (linkId: number) => `${SHORT_LINK_BASE}/${linkId.toString(36)}`;

/** The documented test range that bounces: numbers with the unassigned calling code 999. */
export const UNDELIVERABLE_PREFIX = '+999';
const BOUNCES = `m.sms_phone_number LIKE '${UNDELIVERABLE_PREFIX}%'`;

/** Who may get this campaign, as a condition on members `m`. */
const consent = (c: Pick<SmsCampaignRow, 'is_promotional'>) =>
  c.is_promotional
    ? "m.sms_phone_number IS NOT NULL AND m.sms_promotional_status = 'a'"
    : "m.sms_phone_number IS NOT NULL AND COALESCE(m.sms_transactional_status, 'a') = 'a'";

function refsOf(r: SmsRecipients): AudienceRef[] {
  return [
    ...r.groups.map((ref_id) => ({ role: 'include' as const, kind: 'group' as const, ref_id })),
    ...r.members.map((ref_id) => ({ role: 'include' as const, kind: 'member' as const, ref_id })),
    ...r.segments.map((ref_id) => ({ role: 'include' as const, kind: 'segment' as const, ref_id })),
    ...r.suppression_segments.map((ref_id) => ({ role: 'suppress' as const, kind: 'segment' as const, ref_id })),
  ];
}

/** The SQL of a campaign's recipients (member ids, with repeats). */
function audienceOf(ctx: Ctx, c: SmsCampaignRow) {
  return audienceSqlOf(ctx, refsOf(recipientsOf(c)), consent(c));
}

// ---------------------------------------------------------------- links

// A URL up to a blank, a quote, an angle bracket or a tag; punctuation that ends a sentence is not part of it.
const URL_PATTERN = /https?:\/\/[^\s<>"'[\]]+/g;
const TRAILING = /[.,;:!?)]+$/;

/** A URL that a tag completes (`…?id=[% member:member_id %]`) differs per member: it is left as it is. */
const tagMade = (message: string, end: number) => message[end] === '[';

/** The URLs of a message, each once, in order. */
export function urlsOf(message: string): string[] {
  const urls: string[] = [];
  for (const m of message.matchAll(URL_PATTERN)) {
    if (tagMade(message, m.index + m[0].length)) continue;
    const url = m[0].replace(TRAILING, '');
    if (url.length > 'https://'.length && !urls.includes(url)) urls.push(url);
  }
  return urls;
}

/** Saves a short link for each URL of the message and answers the message with them in place. */
function shorten(ctx: Ctx, c: SmsCampaignRow): string {
  const insert = stmt(ctx.db, 'INSERT INTO sms_links (sms_campaign_id, link_target, link_order) VALUES (?, ?, ?)');
  const links = urlsOf(c.message).map((target, i) => ({
    target,
    short: shortLink(Number(insert.run(c.sms_campaign_id, target, i + 1).lastInsertRowid)),
  }));
  if (!links.length) return c.message;
  const byTarget = new Map(links.map((l) => [l.target, l.short]));
  return c.message.replace(URL_PATTERN, (found: string, offset: number) => {
    if (tagMade(c.message, offset + found.length)) return found;
    const url = found.replace(TRAILING, '');
    const short = byTarget.get(url);
    return short ? short + found.slice(url.length) : found;
  });
}

// ---------------------------------------------------------------- rendering

interface RecipientRow {
  member_id: number;
  email: string;
  field_values: string;
}

/** Renders the message for one recipient (the sent message, tags filled in). */
export function renderer(ctx: Ctx, c: Pick<SmsCampaignRow, 'account_id' | 'sms_campaign_id'>, text: string) {
  const render = compileTemplate(text);
  const catalog = FieldCatalog.of(ctx);
  return (r: RecipientRow) =>
    render({
      email: r.email,
      member_id: r.member_id,
      fields: catalog.toNamed(r.field_values),
      mailing_id: c.sms_campaign_id,
      optout_url: `${VIEW_BASE}/sms/optout/${c.account_id}/${c.sms_campaign_id}/${r.member_id}`,
      webview_url: `${VIEW_BASE}/sms/${c.account_id}/${c.sms_campaign_id}/${r.member_id}`,
    });
}

const personalized = (text: string) => text.includes('[%');

/**
 * Refuses (400) a message that takes more segments than the account's non-zero
 * sub_message_segment_limit for any recipient, rendered for each of them.
 */
function checkSegmentLimit(ctx: Ctx, c: SmsCampaignRow, text: string) {
  const limit = getSettings(ctx).sub_message_segment_limit;
  if (!limit) return;
  let worst = { segments: 0, member_id: null as number | null };
  if (!personalized(text)) worst.segments = countSegments(text).segments;
  else {
    const render = renderer(ctx, c, text);
    const audience = audienceOf(ctx, c);
    const rows = ctx.db
      .prepare(
        `SELECT mm.member_id, mm.email, mm.field_values FROM (${audience.sql}) a CROSS JOIN members mm ON mm.member_id = a.member_id`,
      )
      .iterate(...audience.params) as IterableIterator<RecipientRow>;
    for (const r of rows) {
      const n = segmentsOf(render(r));
      if (n > worst.segments) worst = { segments: n, member_id: r.member_id };
    }
  }
  if (worst.segments > limit)
    throw badRequest(
      `message: takes ${worst.segments} segments${worst.member_id === null ? '' : ` for member ${worst.member_id}`}, over the account's sub_message_segment_limit of ${limit} by ${worst.segments - limit}`,
      { field: 'message', sub_message_segment_limit: limit, message_segments: worst.segments, member_id: worst.member_id },
    );
}

// ---------------------------------------------------------------- asking for a send

/** The extension POST /sms/campaigns/{id}/send: a draft goes out now (p) or at scheduled_at (s). */
export function sendCampaign(ctx: Ctx, campaignId: number, input: { scheduled_at?: string | null } = {}): true {
  return inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    requireDraft(c, 'sent');
    const recipients = recipientsOf(c);
    requireRecipients(campaignId, recipients);
    checkRecipients(ctx, recipients);
    checkMessageTags(ctx, c.message);
    const text = c.shorten_links ? shorten(ctx, c) : c.message;
    checkSegmentLimit(ctx, c, text);
    const now = stamp(ctx.clock.now());
    const scheduled = input.scheduled_at !== undefined ? input.scheduled_at : c.scheduled_at;
    const later = scheduled !== null && scheduled > now;
    setColumns(ctx, campaignId, {
      sent_message: text,
      send_status: later ? 's' : 'p',
      pending_at: now,
      scheduled_at: scheduled,
      scheduled_by_user_id: later ? ctx.actor.user_id : null,
    });
    return true;
  });
}

// ---------------------------------------------------------------- the job

/**
 * Advances due SMS sends for up to budgetMs (at least one step), one step per
 * transaction. Answers whether work is left (see jobs.ts).
 */
export function advanceSms(db: Db, clock: Clock, budgetMs: number): boolean {
  const deadline = Date.now() + budgetMs;
  let first = true;
  for (;;) {
    const due = stmt(
      db,
      `SELECT sms_campaign_id, account_id FROM sms_campaigns
        WHERE (send_status IN ('p','i') OR (send_status = 's' AND scheduled_at <= ?))
          AND account_id NOT IN (${RETIRED_ACCOUNTS})
        ORDER BY sms_campaign_id LIMIT 1`,
    ).get(stamp(clock.now())) as { sms_campaign_id: number; account_id: number } | undefined;
    if (!due) return false;
    if (first) first = false;
    else if (Date.now() >= deadline) return true;
    const ctx: Ctx = { db, clock, actor: localActor(db, due.account_id), accountId: due.account_id };
    try {
      step(ctx, due.sms_campaign_id);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      // A send that cannot go on would be retried for ever and hold up every other one.
      fail(ctx, due.sms_campaign_id, (err as Error).message);
    }
  }
}

/** Sends a campaign to the end now, whatever else is due (benchmarks, seeding and tests). */
export function sendNow(ctx: Ctx, campaignId: number): SmsCampaignRow {
  for (let guard = 0; guard < 1_000_000; guard++) {
    const c = campaignRow(ctx, campaignId);
    if (!['s', 'p', 'i'].includes(c.send_status)) return c;
    step(ctx, campaignId);
  }
  throw new Error(`SMS campaign ${campaignId} did not finish`);
}

function step(ctx: Ctx, campaignId: number) {
  inTransaction(ctx.db, () => {
    const c = campaignRow(ctx, campaignId);
    if (c.send_status === 's' || c.send_status === 'p') start(ctx, c);
    else if (c.send_status === 'i') build(ctx, c);
  });
}

function fail(ctx: Ctx, campaignId: number, message: string) {
  inTransaction(ctx.db, () => {
    setColumns(ctx, campaignId, { send_status: 'f', results_message: message });
    stmt(ctx.db, 'DELETE FROM sms_queue WHERE sms_campaign_id = ?').run(campaignId);
  });
}

function start(ctx: Ctx, c: SmsCampaignRow) {
  const text = c.sent_message ?? c.message;
  // The audience, fields or settings may have changed since a scheduled send was asked for.
  try {
    checkSegmentLimit(ctx, c, text);
  } catch (err) {
    if (err instanceof ApiError) return fail(ctx, c.sms_campaign_id, err.message);
    throw err;
  }
  const audience = audienceOf(ctx, c);
  ctx.db
    .prepare(`INSERT OR IGNORE INTO sms_queue (sms_campaign_id, member_id) SELECT ?, member_id FROM (${audience.sql})`)
    .run(c.sms_campaign_id, ...audience.params);
  setColumns(ctx, c.sms_campaign_id, { send_status: 'i', send_started: stamp(ctx.clock.now()) });
}

const DELIVERY_COLUMNS = `INSERT INTO sms_deliveries (sms_campaign_id, member_id, delivery_type, bounce_type, to_phone_number, message_segments, sent_at)`;
const DELIVERY_VALUES = `CASE WHEN ${BOUNCES} THEN 'b' ELSE 'd' END, CASE WHEN ${BOUNCES} THEN 'h' END, m.sms_phone_number`;

/** Gives the next batch of queued recipients their deliveries (members archived or opted out since the start are dropped). */
function build(ctx: Ctx, c: SmsCampaignRow) {
  const id = c.sms_campaign_id;
  const queued = stmt(
    ctx.db,
    'SELECT member_id FROM sms_queue WHERE sms_campaign_id = ? ORDER BY member_id LIMIT 1 OFFSET CAST(? AS INTEGER)',
  ).pluck();
  const from = queued.get(id, 0) as number | undefined;
  if (from === undefined) return finish(ctx, c);
  const upTo = (queued.get(id, BATCH - 1) as number | undefined) ?? Number.MAX_SAFE_INTEGER;
  const now = stamp(ctx.clock.now());
  const text = c.sent_message ?? c.message;
  const who = consent(c);
  if (!personalized(text)) {
    stmt(
      ctx.db,
      `${DELIVERY_COLUMNS}
       SELECT q.sms_campaign_id, q.member_id, ${DELIVERY_VALUES}, ?, ?
         FROM sms_queue q CROSS JOIN members m ON m.member_id = q.member_id
        WHERE q.sms_campaign_id = ? AND q.member_id <= ? AND m.deleted_at IS NULL AND ${who}`,
    ).run(segmentsOf(text), now, id, upTo);
  } else {
    const rows = stmt(
      ctx.db,
      `SELECT q.member_id, m.email, m.field_values
         FROM sms_queue q CROSS JOIN members m ON m.member_id = q.member_id
        WHERE q.sms_campaign_id = ? AND q.member_id <= ? AND m.deleted_at IS NULL AND ${who}`,
    ).all(id, upTo) as RecipientRow[];
    const render = renderer(ctx, c, text);
    const bySegments = new Map<number, number[]>();
    for (const r of rows) {
      const n = segmentsOf(render(r));
      const ids = bySegments.get(n);
      if (ids) ids.push(r.member_id);
      else bySegments.set(n, [r.member_id]);
    }
    const insert = stmt(
      ctx.db,
      `${DELIVERY_COLUMNS}
       SELECT ?, m.member_id, ${DELIVERY_VALUES}, ?, ?
         FROM json_each(?) j CROSS JOIN members m ON m.member_id = j.value`,
    );
    for (const [n, ids] of bySegments) insert.run(id, n, now, JSON.stringify(ids));
  }
  const sent = stmt(
    ctx.db,
    `SELECT COUNT(*) AS n, TOTAL(delivery_type = 'b') AS bounced, TOTAL(message_segments) AS segments
       FROM sms_deliveries WHERE sms_campaign_id = ? AND member_id BETWEEN ? AND ?`,
  ).get(id, from, upTo) as { n: number; bounced: number; segments: number };
  stmt(
    ctx.db,
    `UPDATE sms_campaigns SET total_sent = total_sent + ?, deliveries = deliveries + ?, bounces = bounces + ?,
            message_segments = message_segments + ?, delivery_rows = delivery_rows + ?, updated_at = ?
      WHERE sms_campaign_id = ?`,
  ).run(sent.n, sent.n - sent.bounced, sent.bounced, sent.segments, sent.n, now, id);
  if (sent.segments > 0)
    stmt(
      ctx.db,
      `INSERT INTO sms_usage (account_id, day, segments) VALUES (?, ?, ?)
       ON CONFLICT (account_id, day) DO UPDATE SET segments = segments + excluded.segments`,
    ).run(c.account_id, now.slice(0, 10), sent.segments);
  stmt(ctx.db, 'DELETE FROM sms_queue WHERE sms_campaign_id = ? AND member_id <= ?').run(id, upTo);
}

function finish(ctx: Ctx, c: SmsCampaignRow) {
  setColumns(ctx, c.sms_campaign_id, {
    send_status: 'c',
    send_finished: stamp(ctx.clock.now()),
    results_message: `sent to ${c.total_sent} recipient${c.total_sent === 1 ? '' : 's'}: ${c.deliveries} delivered, ${c.bounces} bounced, ${c.message_segments} segment${c.message_segments === 1 ? '' : 's'}`,
  });
}

// ---------------------------------------------------------------- preview

/**
 * The extension POST /sms/count: the encoding and segments of a message as it would
 * go to a member (its tags rendered with the member's values), or with no member, as
 * it renders with none (tags give their defaults or nothing).
 */
export function previewMessage(ctx: Ctx, message: string, memberId?: number) {
  checkMessageTags(ctx, message);
  let recipient: RecipientRow = { member_id: 0, email: '', field_values: '{}' };
  if (memberId !== undefined) {
    const row = stmt(ctx.db, 'SELECT member_id, email, field_values FROM members WHERE account_id = ? AND member_id = ?').get(
      ctx.accountId,
      memberId,
    ) as RecipientRow | undefined;
    if (!row) throw notFound(`member ${memberId} not found`);
    recipient = row;
  }
  const rendered = personalized(message) ? renderer(ctx, { account_id: ctx.accountId, sms_campaign_id: 0 }, message)(recipient) : message;
  return { ...countSegments(rendered), message: rendered };
}
