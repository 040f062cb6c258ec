/** Mailing, message, history and trigger records to the spec's wire shapes. */
import type { MailingDetail, MailingHistoryItem, MailingRow } from '../service/mailings/mailings.js';
import { publicWebviewUrl } from '../service/mailings/mailings.js';
import type { TriggerRecord } from '../service/mailings/triggers.js';
import { atD, atI, bool } from './codecs.js';

/** The list shape, in the spec's field order; html_body and plaintext only when asked for. */
export function mailing(m: MailingRow, opts: { html?: boolean; plaintext?: boolean } = {}) {
  return {
    mailing_id: m.mailing_id,
    account_id: m.account_id,
    mailing_type: m.mailing_type,
    mailing_status: m.mailing_status,
    name: m.name,
    subject: m.subject,
    sender: m.sender,
    reply_to: m.reply_to,
    plaintext_only: bool(m.plaintext_only),
    disabled: bool(m.disabled),
    recipient_count: m.recipient_count,
    created_ts: atD(m.created_ts),
    send_at: atD(m.send_at),
    send_started: atD(m.send_started),
    send_finished: atD(m.send_finished),
    cancel_ts: atD(m.cancel_ts),
    failure_ts: atD(m.failure_ts),
    archived_ts: atD(m.archived_ts),
    purged_at: atD(m.purged_at),
    cancel_by_user_id: m.cancel_by_user_id,
    parent_mailing_id: m.parent_mailing_id,
    signup_form_id: m.signup_form_id,
    failure_message: m.failure_message,
    month: null,
    year: null,
    datacenter: null,
    started_or_finished: null,
    ...(opts.html ? { html_body: m.html_body ?? '' } : {}),
    ...(opts.plaintext ? { plaintext: m.plaintext ?? '' } : {}),
  };
}

export function mailingDetail(d: MailingDetail) {
  const m = d.mailing;
  return {
    ...mailing(m),
    deleted_at: atD(m.deleted_at),
    plaintext: m.plaintext ?? '',
    html_body: m.html_body ?? '',
    public_webview_url: publicWebviewUrl(m),
    recipient_groups: d.recipient_groups,
    recipient_subscriptions: d.recipient_subscriptions,
    recipient_segments: d.recipient_segments,
    recipient_searches: d.recipient_searches,
    recipient_members: d.recipient_members,
    heads_up_emails: d.heads_up_emails,
    links: d.links,
    // Extension: what a split test is made of and how it stands.
    ...(d.split_test
      ? {
          split_test: {
            test_percent: d.split_test.test_percent,
            test_duration: atI(d.split_test.test_duration_seconds),
            variants: d.split_test.variants,
            test_sent_at: atD(d.split_test.test_sent_at),
            winner_mailing_id: d.split_test.winner_mailing_id,
            winner_declared_at: atD(d.split_test.winner_declared_at),
            results: d.split_test.results,
          },
        }
      : {}),
  };
}

export const headsUp = (h: { sent_ts: string | null; email: string; mailing_id: number }) => ({
  sent_ts: atD(h.sent_ts),
  email: h.email,
  mailing_id: h.mailing_id,
});

export const historyItem = (h: MailingHistoryItem) => ({
  delivery_type: h.delivery_type,
  clicked: atD(h.clicked),
  opened: atD(h.opened),
  delivery_ts: atD(h.delivery_ts),
  sent: atD(h.sent),
  forwarded: atD(h.forwarded),
  shared: atD(h.shared),
  mailing_id: h.mailing_id,
  name: h.name,
  subject: h.subject,
  account_id: h.account_id,
});

/** push_offset_units: days:hours:minutes:seconds of the offset. */
function offsetUnits(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3_600);
  const m = Math.floor((seconds % 3_600) / 60);
  return `${d}:${h}:${m}:${seconds % 60}`;
}

export function trigger(t: TriggerRecord) {
  const r = t.trigger;
  return {
    trigger_id: r.trigger_id,
    account_id: r.account_id,
    name: r.name,
    event_type: r.event_type,
    field_id: r.field_id,
    parent_mailing_id: r.parent_mailing_id,
    parent_mailing: mailing(t.parent_mailing, { html: true, plaintext: true }),
    start_ts: atD(r.start_ts),
    push_offset: atI(r.push_offset),
    push_offset_units: offsetUnits(r.push_offset),
    signups: r.signups ? (JSON.parse(r.signups) as number[]) : null,
    groups: null,
    links: null,
    surveys: null,
    signup_integrations: null,
    deleted_at: atD(r.deleted_at),
    is_disabled: bool(r.is_disabled),
  };
}
