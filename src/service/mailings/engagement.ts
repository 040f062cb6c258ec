/**
 * Simulated engagement with a sent message (the extension behind `amsg sim`): opens,
 * clicks, bounces, shares and opt-outs are stamped on the member's message, so its
 * mailing history, the split-test results and the member's status show them.
 * Forwards are the spec's own POST /forwards (mailings.ts).
 *
 * Each kind keeps its first time (a second open changes nothing); a click counts as
 * an open too, as a real client would have loaded the message to click in it. A
 * share_click (someone followed a link the member shared) stamps nothing. Every call
 * fires its webhook event (message_open, message_click, message_share,
 * message_share_click), as each is an occurrence; opt-outs and hard bounces fire the
 * status events (members.ts).
 */

import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { invalid, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { memberRow, optOutFromMailing, setStatuses } from '../audience/members.js';
import { mailingRow } from './mailings.js';
import { recordClick } from './reports.js';
import { emitEvent, memberList, type EventName } from '../webhooks/webhooks.js';
import { prng, shuffled } from '../../random.js';

const EVENTS: Partial<Record<EngagementKind, EventName>> = {
  open: 'message_open',
  click: 'message_click',
  share: 'message_share',
  share_click: 'message_share_click',
};

export const ENGAGEMENT_KINDS = ['open', 'click', 'bounce', 'share', 'share_click', 'optout'] as const;
export type EngagementKind = (typeof ENGAGEMENT_KINDS)[number];

export interface EngagementInput {
  mailing_id: number;
  member_id: number;
  /** click: the link clicked (one of the mailing's links); the first link when absent. */
  link_id?: number;
  /** bounce: a hard bounce also sets the member's status to e. */
  hard?: boolean;
}

export function recordEngagement(ctx: Ctx, kind: EngagementKind, input: EngagementInput): true {
  return inTransaction(ctx.db, () => {
    mailingRow(ctx, input.mailing_id);
    memberRow(ctx, input.member_id);
    const message = stmt(ctx.db, 'SELECT content_mailing_id, delivery_ts FROM mailing_messages WHERE mailing_id = ? AND member_id = ?').get(
      input.mailing_id,
      input.member_id,
    ) as { content_mailing_id: number; delivery_ts: string | null } | undefined;
    if (!message) throw notFound(`member ${input.member_id} has no message of mailing ${input.mailing_id}`);
    const now = stamp(ctx.clock.now());
    const member = [input.member_id];
    const stampFirst = (column: StampedColumn) => stampMessages(ctx, input.mailing_id, column, member, now);
    switch (kind) {
      case 'click':
        if (input.link_id !== undefined) {
          const link = stmt(ctx.db, 'SELECT 1 FROM mailing_links WHERE link_id = ? AND mailing_id = ?').get(
            input.link_id,
            message.content_mailing_id,
          );
          if (!link) throw notFound(`link ${input.link_id} is not a link of mailing ${input.mailing_id}`);
        }
        stampFirst('opened');
        stampFirst('clicked');
        recordClick(
          ctx,
          input.mailing_id,
          message.content_mailing_id,
          input.member_id,
          input.link_id ?? firstLink(ctx, message.content_mailing_id),
        );
        break;
      case 'open':
        stampFirst('opened');
        break;
      case 'share':
        stampFirst('shared');
        break;
      case 'bounce':
        recordBounces(ctx, input.mailing_id, member, !!input.hard, now);
        break;
      case 'optout':
        optOutFromMailing(ctx, [input.member_id], input.mailing_id);
        break;
    }
    if (EVENTS[kind])
      emitEvent(ctx, EVENTS[kind], () => ({
        mailing_id: input.mailing_id,
        ...(kind === 'click' ? { link_id: input.link_id ?? firstLink(ctx, message.content_mailing_id) } : {}),
        ...memberList(ctx, [input.member_id]),
      }));
    return true;
  });
}

type StampedColumn = 'opened' | 'clicked' | 'bounced' | 'shared';

/** Stamps these members' messages of the mailing (each keeps its first time). */
function stampMessages(ctx: Ctx, mailingId: number, column: StampedColumn, memberIds: number[], now: string) {
  if (!memberIds.length) return;
  stmt(
    ctx.db,
    `UPDATE mailing_messages SET ${column} = COALESCE(${column}, ?) WHERE mailing_id = ? AND member_id IN (SELECT value FROM json_each(?))`,
  ).run(now, mailingId, JSON.stringify(memberIds));
}

/** Bounces these members' messages: the message's bounce and its type, each member's bounce count, and a hard bounce's status e. */
function recordBounces(ctx: Ctx, mailingId: number, memberIds: number[], hard: boolean, now: string) {
  if (!memberIds.length) return;
  stampMessages(ctx, mailingId, 'bounced', memberIds, now);
  const ids = JSON.stringify(memberIds);
  stmt(
    ctx.db,
    'UPDATE mailing_messages SET bounce_type = COALESCE(bounce_type, ?) WHERE mailing_id = ? AND member_id IN (SELECT value FROM json_each(?))',
  ).run(hard ? 'hard' : 'soft', mailingId, ids);
  stmt(
    ctx.db,
    'UPDATE members SET bounce_count = bounce_count + 1, last_modified_at = ? WHERE member_id IN (SELECT value FROM json_each(?))',
  ).run(now, ids);
  if (hard) setStatuses(ctx, memberIds, 'e');
}

/** The link a click without one lands on (none when the content has no links). */
const firstLink = (ctx: Ctx, contentMailingId: number) =>
  (stmt(ctx.db, 'SELECT link_id FROM mailing_links WHERE mailing_id = ? ORDER BY link_id LIMIT 1').pluck().get(contentMailingId) as
    | number
    | undefined) ?? null;

// ---------------------------------------------------------------- a whole send

/** The shares of a send's messages that engage (each 0 to 1), for `amsg sim mailing` and a fixture's `engagement`. */
export const SEND_SHARES = ['opens', 'clicks', 'bounces', 'optouts', 'shares'] as const;
export type SendShare = (typeof SEND_SHARES)[number];

export type SendEngagementInput = Partial<Record<SendShare, number>> & {
  /** The bounces are hard: those members' status becomes e. */
  hard?: boolean;
  /** Draws the same members from the same send; a random one (answered) when absent. */
  seed?: number;
};

export type SendEngagement = Record<SendShare, number> & { mailing_id: number; seed: number; messages: number };

/**
 * Simulates engagement with a whole send in one transaction: shares of the mailing's
 * messages open, click, bounce, opt out and share, each recorded as the one-member
 * operation records it (the message's history, the report counts and lists, each
 * click on a link, bounce counts and statuses), with one webhook event per kind
 * listing the members (per link for clicks), as every bulk change fires.
 *
 * Who does what is drawn with the seed from the messages in member id order, so the
 * same seed over the same send draws the same members:
 * - bounces are the first of the draw, and open nothing;
 * - opens are the next ones (at least as many as clicks: a click counts as an open);
 * - clicks and shares are the first of the openers; each click lands on the mailing's
 *   links in turn (their order), so the links report shares out the clicks;
 * - opt-outs are the last of the openers (those that did not click, where there are
 *   enough), and past the openers when opt-outs outnumber them.
 * Members already engaged keep their first times (as the one-member operation does).
 */
export function simulateSend(ctx: Ctx, mailingId: number, input: SendEngagementInput): SendEngagement {
  const shares = Object.fromEntries(SEND_SHARES.map((k) => [k, input[k] ?? 0])) as Record<SendShare, number>;
  const engaged = Math.max(shares.opens, shares.clicks, shares.shares, shares.optouts);
  if (shares.bounces + engaged > 1 + 1e-9)
    throw invalid(
      'bounces',
      `bounces (${shares.bounces}) and opens, clicks, shares or opt-outs (${engaged}) together are more than the whole send`,
    );
  const seed = input.seed ?? Math.floor(Math.random() * 2 ** 31);
  return inTransaction(ctx.db, () => {
    mailingRow(ctx, mailingId);
    const messages = stmt(ctx.db, 'SELECT member_id, content_mailing_id FROM mailing_messages WHERE mailing_id = ? ORDER BY member_id').all(
      mailingId,
    ) as { member_id: number; content_mailing_id: number }[];
    if (!messages.length) throw notFound(`mailing ${mailingId} has no messages: only a sent mailing has engagement`);
    const count = (share: number) => Math.round(share * messages.length);
    const draw = shuffled(messages, prng(seed));
    const bounced = draw.slice(0, count(shares.bounces));
    const rest = draw.slice(bounced.length);
    const openers = rest.slice(0, Math.max(count(shares.opens), count(shares.clicks)));
    const clickers = openers.slice(0, count(shares.clicks));
    const sharers = rest.slice(0, count(shares.shares));
    const optouts = count(shares.optouts);
    const optedOut = rest.slice(Math.max(0, openers.length - optouts), Math.max(0, openers.length - optouts) + optouts);

    const now = stamp(ctx.clock.now());
    const ids = (list: { member_id: number }[]) => list.map((m) => m.member_id);
    const stampAll = (column: StampedColumn, list: { member_id: number }[]) => stampMessages(ctx, mailingId, column, ids(list), now);
    recordBounces(ctx, mailingId, ids(bounced), !!input.hard, now);
    stampAll('opened', openers);
    stampAll('clicked', clickers);
    stampAll('shared', sharers);
    const linksOf = new Map<number, (number | null)[]>();
    const clicksByLink = new Map<number | null, number[]>();
    clickers.forEach((m, i) => {
      if (!linksOf.has(m.content_mailing_id)) {
        const links = stmt(ctx.db, 'SELECT link_id FROM mailing_links WHERE mailing_id = ? ORDER BY link_order, link_id')
          .pluck()
          .all(m.content_mailing_id) as number[];
        linksOf.set(m.content_mailing_id, links.length ? links : [null]);
      }
      const links = linksOf.get(m.content_mailing_id)!;
      const link = links[i % links.length];
      recordClick(ctx, mailingId, m.content_mailing_id, m.member_id, link);
      const onLink = clicksByLink.get(link) ?? [];
      if (!onLink.length) clicksByLink.set(link, onLink);
      onLink.push(m.member_id);
    });
    const fire = (event: EventName, list: number[], extra: object = {}) =>
      list.length && emitEvent(ctx, event, () => ({ mailing_id: mailingId, ...extra, ...memberList(ctx, list) }));
    fire(
      'message_open',
      openers.map((m) => m.member_id),
    );
    for (const [link_id, members] of clicksByLink) fire('message_click', members, { link_id });
    fire(
      'message_share',
      sharers.map((m) => m.member_id),
    );
    // Opt-outs last: a member opens, clicks, then opts out, and the events follow in that order.
    if (optedOut.length)
      optOutFromMailing(
        ctx,
        optedOut.map((m) => m.member_id),
        mailingId,
      );
    return {
      mailing_id: mailingId,
      seed,
      messages: messages.length,
      opens: openers.length,
      clicks: clickers.length,
      bounces: bounced.length,
      optouts: optedOut.length,
      shares: sharers.length,
    };
  });
}
