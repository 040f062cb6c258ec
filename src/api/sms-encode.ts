/**
 * SMS records to the spec's wire shapes: created_at, updated_at and click_timestamp are
 * ISO 8601 with microseconds and +00:00; every other datetime is `@D:`.
 */
import type { ClickRow, DeliveryRow, SmsCampaignRow } from '../service/sms/campaigns.js';
import { recipientsOf } from '../service/sms/campaigns.js';
import { atD, bool, isoOffset } from './codecs.js';

export const campaign = (c: SmsCampaignRow) => ({
  sms_campaign_id: c.sms_campaign_id,
  account_id: c.account_id,
  sms_campaign_name: c.sms_campaign_name,
  sms_campaign_type: c.sms_campaign_type,
  send_status: c.send_status,
  from_phone_number: c.from_phone_number,
  message: c.message,
  message_segments: c.message_segments,
  deliveries: c.deliveries,
  bounces: c.bounces,
  opt_outs: c.opt_outs,
  total_sent: c.total_sent,
  total_clicks: c.total_clicks,
  unique_clicks: c.unique_clicks,
  is_promotional: bool(c.is_promotional),
  is_test: bool(c.is_test),
  shorten_links: bool(c.shorten_links),
  media_url: c.media_url,
  recipients: recipientsOf(c),
  created_at: isoOffset(c.created_at),
  updated_at: isoOffset(c.updated_at),
  archived_at: atD(c.archived_at),
  pending_at: atD(c.pending_at),
  scheduled_at: atD(c.scheduled_at),
  send_started: atD(c.send_started),
  send_finished: atD(c.send_finished),
  canceled_by_user_id: c.canceled_by_user_id,
  scheduled_by_user_id: c.scheduled_by_user_id,
  copied_from_sms_campaign_id: c.copied_from_sms_campaign_id,
  results_message: c.results_message,
});

export const delivery = (d: DeliveryRow) => ({
  account_id: d.account_id,
  sms_campaign_id: d.sms_campaign_id,
  member_id: d.member_id,
  delivery_type: d.delivery_type,
  bounce_type: d.bounce_type,
  opted_out_at: atD(d.opted_out_at),
  from_phone_number: d.from_phone_number,
  to_phone_number: d.to_phone_number,
});

export const click = (k: ClickRow) => ({
  sms_campaign_id: k.sms_campaign_id,
  member_id: k.member_id,
  sms_link_id: k.sms_link_id,
  sms_link_target: k.sms_link_target,
  to_phone_number: k.to_phone_number,
  click_timestamp: isoOffset(k.click_timestamp),
});
