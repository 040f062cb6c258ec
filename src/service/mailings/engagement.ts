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

const EVENTS: Partial<Record<EngagementKind, EventName>> = {
  open: 'message_open',
  click: 'message_click',
  share: 'message_share',
  share_click: 'message_share_click',
};
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { memberRow, optOutFromMailing, setStatuses } from '../audience/members.js';
import { mailingRow } from './mailings.js';
import { recordClick } from './reports.js';
import { emitEvent, memberList, type EventName } from '../webhooks/webhooks.js';

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
    const stampFirst = (column: 'opened' | 'clicked' | 'bounced' | 'shared') =>
      stmt(ctx.db, `UPDATE mailing_messages SET ${column} = COALESCE(${column}, ?) WHERE mailing_id = ? AND member_id = ?`).run(
        now,
        input.mailing_id,
        input.member_id,
      );
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
        stampFirst('bounced');
        stmt(ctx.db, 'UPDATE mailing_messages SET bounce_type = COALESCE(bounce_type, ?) WHERE mailing_id = ? AND member_id = ?').run(
          input.hard ? 'hard' : 'soft',
          input.mailing_id,
          input.member_id,
        );
        stmt(ctx.db, 'UPDATE members SET bounce_count = bounce_count + 1, last_modified_at = ? WHERE member_id = ?').run(
          now,
          input.member_id,
        );
        if (input.hard) setStatuses(ctx, [input.member_id], 'e');
        break;
      case 'optout':
        optOutFromMailing(ctx, input.member_id, input.mailing_id);
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

/** The link a click without one lands on (none when the content has no links). */
const firstLink = (ctx: Ctx, contentMailingId: number) =>
  (stmt(ctx.db, 'SELECT link_id FROM mailing_links WHERE mailing_id = ? ORDER BY link_id LIMIT 1').pluck().get(contentMailingId) as
    | number
    | undefined) ?? null;
