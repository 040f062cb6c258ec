/**
 * A member's timeline (GET /members/{id}/timeline, the console's member page): what
 * happened to one member, from every table that keeps it, on one list, newest first.
 * Each source is read from its own (member_id, …) index, newest id first and at most
 * as many rows as the window needs, so the cost is the window's, whatever the
 * audience or the member's history; the few rows are then merged by time.
 */
import { stmt } from '../../store/statements.js';
import { LIMIT_BOUND, windowOf, type Window } from '../paging.js';
import type { Ctx } from '../context.js';
import { memberRow } from './members.js';

export type TimelineKind = 'joined' | 'mailing' | 'opened' | 'clicked' | 'bounced' | 'optout' | 'event' | 'touchpoint' | 'sms';

export interface TimelineEntry {
  /** The stored timestamp (the route answers it as `@D:`). */
  at: string;
  kind: TimelineKind;
  /** Unique within the timeline: a key for a client's list. */
  id: string;
  [field: string]: unknown;
}

/** The member's messages, newest mailing first (mailing_messages_member is (member_id, mailing_id)). */
export const TIMELINE_MESSAGES = `SELECT mm.mailing_id, m.name, mm.delivery_type, coalesce(mm.sent, mm.built_at) AS sent, mm.opened, mm.bounced, mm.bounce_type
  FROM mailing_messages mm JOIN mailings m ON m.mailing_id = mm.mailing_id
  WHERE mm.member_id = ? ORDER BY mm.mailing_id DESC ${LIMIT_BOUND}`;
/**
 * The clicks in those messages: each of the member's newest messages looked up in
 * (mailing_id, member_id); their times are sorted with the rest of the timeline.
 */
export const TIMELINE_CLICKS = `SELECT c.click_id, c.mailing_id, m.name, c.link_id, l.link_target AS url, c.clicked_at
  FROM (SELECT mailing_id FROM mailing_messages WHERE member_id = ? ORDER BY mailing_id DESC ${LIMIT_BOUND}) AS mine
  CROSS JOIN mailing_clicks c ON c.mailing_id = mine.mailing_id AND c.member_id = ?
  JOIN mailings m ON m.mailing_id = c.mailing_id
  LEFT JOIN mailing_links l ON l.link_id = c.link_id`;
export const TIMELINE_OPTOUTS = `SELECT optout_id, mailing_id, optout_ts FROM member_optouts WHERE member_id = ? ORDER BY optout_id DESC ${LIMIT_BOUND}`;
export const TIMELINE_EVENTS = `SELECT e.event_id, e.event_type_id, t.event_type, t.display_name, e.event_monetary_value, e.event_timestamp, e.mailing_id, e.attributes
  FROM member_events e JOIN member_event_types t ON t.event_type_id = e.event_type_id
  WHERE e.member_id = ? ORDER BY e.event_id DESC ${LIMIT_BOUND}`;
export const TIMELINE_TOUCHPOINTS = `SELECT p.touchpoint_id, p.touchpoint_type_id, t.type_name, t.display_name, p.touchpoint_monetary_value, p.touchpoint_timestamp, p.mailing_id, p.attributes
  FROM touchpoints p JOIN touchpoint_types t ON t.touchpoint_type_id = p.touchpoint_type_id
  WHERE p.member_id = ? ORDER BY p.touchpoint_id DESC ${LIMIT_BOUND}`;
export const TIMELINE_SMS = `SELECT d.sms_campaign_id, c.sms_campaign_name, d.delivery_type, d.to_phone_number, d.sent_at, d.opted_out_at
  FROM sms_deliveries d JOIN sms_campaigns c ON c.sms_campaign_id = d.sms_campaign_id
  WHERE d.member_id = ? ORDER BY d.sms_campaign_id DESC ${LIMIT_BOUND}`;

const attributes = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown));

export function memberTimeline(ctx: Ctx, memberId: number, window: Window): TimelineEntry[] {
  // 404 for a member of another account, or none; archived members have a history too.
  const member = memberRow(ctx, memberId, true);
  const { limit, offset } = windowOf(window);
  const n = offset + limit;
  const entries: TimelineEntry[] = [{ at: member.member_since, kind: 'joined', id: 'joined', member_status_id: member.member_status_id }];
  type Message = {
    mailing_id: number;
    name: string;
    delivery_type: string;
    sent: string;
    opened: string | null;
    bounced: string | null;
    bounce_type: string | null;
  };
  for (const m of stmt(ctx.db, TIMELINE_MESSAGES).all(memberId, n) as Message[]) {
    entries.push({
      at: m.sent,
      kind: 'mailing',
      id: `mailing:${m.mailing_id}`,
      mailing_id: m.mailing_id,
      name: m.name,
      delivery_type: m.delivery_type,
    });
    if (m.opened) entries.push({ at: m.opened, kind: 'opened', id: `opened:${m.mailing_id}`, mailing_id: m.mailing_id, name: m.name });
    if (m.bounced)
      entries.push({
        at: m.bounced,
        kind: 'bounced',
        id: `bounced:${m.mailing_id}`,
        mailing_id: m.mailing_id,
        name: m.name,
        bounce_type: m.bounce_type,
      });
  }
  type Click = { click_id: number; mailing_id: number; name: string; link_id: number | null; url: string | null; clicked_at: string };
  for (const c of stmt(ctx.db, TIMELINE_CLICKS).all(memberId, n, memberId) as Click[])
    entries.push({
      at: c.clicked_at,
      kind: 'clicked',
      id: `clicked:${c.click_id}`,
      mailing_id: c.mailing_id,
      name: c.name,
      link_id: c.link_id,
      url: c.url,
    });
  for (const o of stmt(ctx.db, TIMELINE_OPTOUTS).all(memberId, n) as { optout_id: number; mailing_id: number | null; optout_ts: string }[])
    entries.push({ at: o.optout_ts, kind: 'optout', id: `optout:${o.optout_id}`, mailing_id: o.mailing_id });
  type Event = {
    event_id: number;
    event_type_id: number;
    event_type: string;
    display_name: string;
    event_monetary_value: number;
    event_timestamp: string;
    mailing_id: number | null;
    attributes: string | null;
  };
  for (const e of stmt(ctx.db, TIMELINE_EVENTS).all(memberId, n) as Event[])
    entries.push({
      at: e.event_timestamp,
      kind: 'event',
      id: `event:${e.event_id}`,
      event_id: e.event_id,
      event_type_id: e.event_type_id,
      event_type: e.event_type,
      display_name: e.display_name,
      monetary_value: e.event_monetary_value,
      mailing_id: e.mailing_id,
      attributes: attributes(e.attributes),
    });
  type Touchpoint = {
    touchpoint_id: number;
    touchpoint_type_id: number;
    type_name: string;
    display_name: string;
    touchpoint_monetary_value: number;
    touchpoint_timestamp: string;
    mailing_id: number | null;
    attributes: string | null;
  };
  for (const t of stmt(ctx.db, TIMELINE_TOUCHPOINTS).all(memberId, n) as Touchpoint[])
    entries.push({
      at: t.touchpoint_timestamp,
      kind: 'touchpoint',
      id: `touchpoint:${t.touchpoint_id}`,
      touchpoint_id: t.touchpoint_id,
      touchpoint_type_id: t.touchpoint_type_id,
      type_name: t.type_name,
      display_name: t.display_name,
      monetary_value: t.touchpoint_monetary_value,
      mailing_id: t.mailing_id,
      attributes: attributes(t.attributes),
    });
  type Sms = {
    sms_campaign_id: number;
    sms_campaign_name: string;
    delivery_type: string;
    to_phone_number: string;
    sent_at: string;
    opted_out_at: string | null;
  };
  for (const d of stmt(ctx.db, TIMELINE_SMS).all(memberId, n) as Sms[]) {
    entries.push({
      at: d.sent_at,
      kind: 'sms',
      id: `sms:${d.sms_campaign_id}`,
      sms_campaign_id: d.sms_campaign_id,
      sms_campaign_name: d.sms_campaign_name,
      delivery_type: d.delivery_type,
      to_phone_number: d.to_phone_number,
    });
    if (d.opted_out_at)
      entries.push({
        at: d.opted_out_at,
        kind: 'optout',
        id: `sms-optout:${d.sms_campaign_id}`,
        mailing_id: null,
        sms_campaign_id: d.sms_campaign_id,
      });
  }
  // Newest first; at the same instant, by id, so the order is the same at every call.
  entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : b.id < a.id ? -1 : b.id > a.id ? 1 : 0));
  return entries.slice(offset, n);
}
