/**
 * Simulated engagement with a sent SMS (the extension behind `amsg sim sms-click` and
 * `amsg sim sms-reply`): clicks on short links, and the STOP and START keywords
 * carriers require every sender to honour.
 *
 * - A click needs a delivered message (not a bounce) and a short link of the campaign
 *   (the first one when none is named); each click counts in total_clicks, a member's
 *   first click of the campaign in unique_clicks too.
 * - STOP (or STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) sets the member's promotional
 *   status to o; the first opt-out through a delivery stamps its opted_out_at and counts
 *   in the campaign's opt_outs. START (or YES, UNSTOP) sets it back to a; the opt-out
 *   stays on the delivery and in the count, as what that campaign caused.
 */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { updateMember } from '../audience/members.js';
import { campaignRow } from './campaigns.js';

export const STOP_WORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
export const START_WORDS = ['START', 'YES', 'UNSTOP'] as const;

interface Delivery {
  delivery_type: 'd' | 'b';
  to_phone_number: string;
  opted_out_at: string | null;
}

function deliveryOf(ctx: Ctx, campaignId: number, memberId: number): Delivery {
  campaignRow(ctx, campaignId);
  const d = stmt(
    ctx.db,
    'SELECT delivery_type, to_phone_number, opted_out_at FROM sms_deliveries WHERE sms_campaign_id = ? AND member_id = ?',
  ).get(campaignId, memberId) as Delivery | undefined;
  if (!d) throw notFound(`member ${memberId} has no delivery of SMS campaign ${campaignId}`);
  if (d.delivery_type !== 'd')
    throw badRequest(
      `member_id: the message of SMS campaign ${campaignId} to member ${memberId} bounced; it cannot be clicked or answered`,
      {
        field: 'member_id',
      },
    );
  return d;
}

export function recordClick(ctx: Ctx, campaignId: number, memberId: number, linkId?: number): true {
  return inTransaction(ctx.db, () => {
    const d = deliveryOf(ctx, campaignId, memberId);
    const links = stmt(ctx.db, 'SELECT sms_link_id FROM sms_links WHERE sms_campaign_id = ? ORDER BY sms_link_id')
      .pluck()
      .all(campaignId) as number[];
    if (!links.length)
      throw badRequest(
        `sms_link_id: SMS campaign ${campaignId} has no short links (it was sent without shorten_links, or its message has no URL)`,
        {
          field: 'sms_link_id',
        },
      );
    if (linkId !== undefined && !links.includes(linkId))
      throw notFound(`link ${linkId} is not a short link of SMS campaign ${campaignId} (its links: ${links.join(', ')})`);
    const first = !stmt(ctx.db, 'SELECT 1 FROM sms_clicks WHERE sms_campaign_id = ? AND member_id = ?').get(campaignId, memberId);
    const now = stamp(ctx.clock.now());
    stmt(
      ctx.db,
      'INSERT INTO sms_clicks (sms_campaign_id, member_id, sms_link_id, to_phone_number, click_timestamp) VALUES (?, ?, ?, ?, ?)',
    ).run(campaignId, memberId, linkId ?? links[0], d.to_phone_number, now);
    stmt(
      ctx.db,
      'UPDATE sms_campaigns SET total_clicks = total_clicks + 1, unique_clicks = unique_clicks + ?, updated_at = ? WHERE sms_campaign_id = ?',
    ).run(first ? 1 : 0, now, campaignId);
    return true;
  });
}

/** A reply to a campaign's message; only the opt-out and opt-in keywords do anything (other text is a 400). */
export function recordReply(ctx: Ctx, campaignId: number, memberId: number, text: string): true {
  const word = text.trim().toUpperCase();
  const stop = (STOP_WORDS as readonly string[]).includes(word);
  if (!stop && !(START_WORDS as readonly string[]).includes(word))
    throw badRequest(
      `text: the simulation answers the keywords ${STOP_WORDS.join(', ')} (opt out) and ${START_WORDS.join(', ')} (opt back in), got "${text}"`,
      { field: 'text' },
    );
  return inTransaction(ctx.db, () => {
    const d = deliveryOf(ctx, campaignId, memberId);
    updateMember(ctx, memberId, { sms: { promotional_status: stop ? 'o' : 'a' } });
    if (stop && d.opted_out_at === null) {
      const now = stamp(ctx.clock.now());
      stmt(ctx.db, 'UPDATE sms_deliveries SET opted_out_at = ? WHERE sms_campaign_id = ? AND member_id = ?').run(now, campaignId, memberId);
      stmt(ctx.db, 'UPDATE sms_campaigns SET opt_outs = opt_outs + 1, updated_at = ? WHERE sms_campaign_id = ?').run(now, campaignId);
    }
    return true;
  });
}
