/** Service records to the spec's wire shapes. */
import type { FieldRecord } from '../service/fields.js';
import type { GroupRecord } from '../service/groups.js';
import type { MemberRecord, MemberStatus } from '../service/members.js';
import { atD, isoOffset } from './codecs.js';

const STATUS_NAMES: Record<MemberStatus, string> = { a: 'active', e: 'error', o: 'opt-out', f: 'forwarded' };

export function member(m: MemberRecord) {
  return {
    member_id: m.member_id,
    account_id: m.account_id,
    email: m.email,
    status: STATUS_NAMES[m.member_status_id],
    member_status_id: m.member_status_id,
    confirmed_opt_in: null,
    fields: m.fields,
    sms: m.sms && {
      phone_number: m.sms.phone_number,
      region_code: m.sms.region_code,
      transactional_status: m.sms.transactional_status,
      transactional_status_updated_at: isoOffset(m.sms.transactional_status_updated_at),
      promotional_status: m.sms.promotional_status,
      promotional_status_updated_at: isoOffset(m.sms.promotional_status_updated_at),
    },
    last_modified_at: atD(m.last_modified_at),
    member_since: atD(m.member_since),
    deleted_at: atD(m.deleted_at),
    plaintext_preferred: m.plaintext_preferred,
    email_error: null,
    bounce_count: m.bounce_count,
  };
}

export const optout = (o: { timestamp: string; mailing_id: number | null }) => ({
  timestamp: atD(o.timestamp),
  mailing_id: o.mailing_id,
});

export const group = (g: GroupRecord) => ({ ...g, deleted_at: atD(g.deleted_at), purged_at: atD(g.purged_at) });

export const field = (f: FieldRecord) => ({ ...f, deleted_at: atD(f.deleted_at) });

export const list =
  <T, R>(encode: (t: T) => R) =>
  (items: T[]): R[] =>
    items.map(encode);
