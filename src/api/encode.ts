/** Service records to the spec's wire shapes. */
import type { FieldRecord } from '../service/audience/fields.js';
import type { RelationshipRecord } from '../service/audience/field-relationships.js';
import type { GroupRecord } from '../service/audience/groups.js';
import type { MemberRecord, MemberStatus, WireMember } from '../service/audience/members.js';
import type { ImportRecord } from '../service/imports/index.js';
import type { SubscriptionRecord } from '../service/audience/subscriptions.js';
import type { SearchRecord } from '../service/audience/searches.js';
import { atD, isoOffset, rfc1123 } from './codecs.js';
import { RawJson } from './json-text.js';

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
    sms: memberSms(m.sms),
    last_modified_at: atD(m.last_modified_at),
    member_since: atD(m.member_since),
    deleted_at: atD(m.deleted_at),
    plaintext_preferred: m.plaintext_preferred,
    email_error: null,
    bounce_count: m.bounce_count,
  };
}

const memberSms = (sms: MemberRecord['sms']) =>
  sms && {
    phone_number: sms.phone_number,
    region_code: sms.region_code,
    transactional_status: sms.transactional_status,
    transactional_status_updated_at: isoOffset(sms.transactional_status_updated_at),
    promotional_status: sms.promotional_status,
    promotional_status_updated_at: isoOffset(sms.promotional_status_updated_at),
  };

const STATUS_JSON = Object.fromEntries(Object.entries(STATUS_NAMES).map(([id, name]) => [id, JSON.stringify(name)])) as Record<
  MemberStatus,
  string
>;

/**
 * member() as JSON text, its fields given as JSON text already (a page of members, one
 * member: members.listMemberPage, getWireMember). Writes exactly what
 * JSON.stringify(member(m)) writes with those fields, key for key in the same order
 * (test/api/member-json.test.ts).
 */
export function memberJson({ record: m, fieldsJson }: WireMember): RawJson {
  const q = JSON.stringify;
  return new RawJson(
    `{"member_id":${m.member_id},"account_id":${m.account_id},"email":${q(m.email)},"status":${STATUS_JSON[m.member_status_id]},` +
      `"member_status_id":${q(m.member_status_id)},"confirmed_opt_in":null,"fields":${fieldsJson},"sms":${m.sms ? q(memberSms(m.sms)) : 'null'},` +
      `"last_modified_at":${q(atD(m.last_modified_at))},"member_since":${q(atD(m.member_since))},"deleted_at":${q(atD(m.deleted_at))},` +
      `"plaintext_preferred":${m.plaintext_preferred},"email_error":null,"bounce_count":${q(m.bounce_count)}}`,
  );
}

export const optout = (o: { timestamp: string; mailing_id: number | null }) => ({
  timestamp: atD(o.timestamp),
  mailing_id: o.mailing_id,
});

export const group = (g: GroupRecord) => ({ ...g, deleted_at: atD(g.deleted_at), purged_at: atD(g.purged_at) });

export const field = (f: FieldRecord) => ({ ...f, deleted_at: atD(f.deleted_at) });

/** Subscriptions carry RFC 1123 GMT dates (the spec's one exception to `@D:`). */
export const subscription = (r: SubscriptionRecord) => ({
  subscription_id: r.subscription_id,
  account_id: r.account_id,
  subscription_name: r.subscription_name,
  description: r.description,
  member_count: r.member_count,
  optout_count: r.optout_count,
  created_at: rfc1123(r.created_at),
  modified_at: rfc1123(r.modified_at),
  deleted_at: rfc1123(r.deleted_at),
  purged_at: rfc1123(r.purged_at),
  settings: r.settings,
  subscription_order: r.subscription_order,
});

/** The list item adds import_status, null in every record (the spec shows it only in lists). */
export const subscriptionListItem = (r: SubscriptionRecord) => ({ ...subscription(r), import_status: null });

/** A saved search: criteria stay the JSON text they are stored as (the spec's "string containing" the list). */
export const search = (r: SearchRecord) => ({
  search_id: r.search_id,
  account_id: r.account_id,
  name: r.name,
  criteria: r.criteria,
  active_count: r.active_count,
  error_count: r.error_count,
  optout_count: r.optout_count,
  cached_at: atD(r.cached_at),
  last_run_at: atD(r.last_run_at),
  deleted_at: atD(r.deleted_at),
  purged_at: atD(r.purged_at),
});

/** A segment is a saved search; the spec shows only segment_id and name, the counts are ours. */
export const segment = (r: SearchRecord) => ({
  segment_id: r.search_id,
  name: r.name,
  active_count: r.active_count,
  error_count: r.error_count,
  optout_count: r.optout_count,
});

export const list =
  <T, R>(encode: (t: T) => R) =>
  (items: T[]): R[] =>
    items.map(encode);

export const memberImport = (i: ImportRecord) => ({
  import_id: i.import_id,
  account_id: i.account_id,
  import_started: atD(i.import_started),
  import_finished: atD(i.import_finished),
  source_name: i.source_name,
  source_filename: i.source_filename,
  num_members_added: i.num_members_added,
  num_members_updated: i.num_members_updated,
  num_duplicates: i.num_duplicates,
  num_skipped: i.num_skipped,
  num_members: i.num_members,
  num_errors: i.num_errors,
  num_added_by_group: i.num_added_by_group,
  groups_updated: i.groups_updated,
  fields_updated: i.fields_updated,
  status: i.status,
  error_message: i.error_message,
  style: null,
  automated_field_changes: null,
  // Extensions, for clients that resume or inspect an import.
  mode: i.mode,
  add_only: i.add_only,
  group_ids: i.group_ids,
  ...(i.client_options ? { client_options: i.client_options } : {}),
});

export const relationship = (r: RelationshipRecord) => ({ ...r, created_at: atD(r.created_at) });
