/**
 * An account's SMS settings (GET/PATCH /accounts/sms_settings; billing access, checked by
 * the route table). An account that never changed them has the defaults, answered
 * without writing a row (a GET never writes).
 */
import { stmt } from '../../store/statements.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';

export interface SmsSettings {
  /** The most segments a campaign's message may take for any recipient; 0 is no limit. */
  sub_message_segment_limit: number;
  sub_message_segment_limit_visible: boolean;
}

export const DEFAULT_SETTINGS: SmsSettings = { sub_message_segment_limit: 0, sub_message_segment_limit_visible: false };

export function getSettings(ctx: Ctx): SmsSettings {
  const row = stmt(
    ctx.db,
    'SELECT sub_message_segment_limit, sub_message_segment_limit_visible FROM sms_settings WHERE account_id = ?',
  ).get(ctx.accountId) as { sub_message_segment_limit: number; sub_message_segment_limit_visible: number } | undefined;
  if (!row) return { ...DEFAULT_SETTINGS };
  return {
    sub_message_segment_limit: row.sub_message_segment_limit,
    sub_message_segment_limit_visible: row.sub_message_segment_limit_visible === 1,
  };
}

/** PATCH: the given settings change, the others stay; answers the settings as they now are. */
export function updateSettings(ctx: Ctx, patch: Partial<SmsSettings>): SmsSettings {
  const next = { ...getSettings(ctx), ...patch };
  stmt(
    ctx.db,
    `INSERT INTO sms_settings (account_id, sub_message_segment_limit, sub_message_segment_limit_visible, updated_at)
     VALUES (?, ?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET sub_message_segment_limit = excluded.sub_message_segment_limit,
       sub_message_segment_limit_visible = excluded.sub_message_segment_limit_visible, updated_at = excluded.updated_at`,
  ).run(ctx.accountId, next.sub_message_segment_limit, next.sub_message_segment_limit_visible ? 1 : 0, stamp(ctx.clock.now()));
  return next;
}
