import * as s from '../schema.js';
import { route, WithHeaders } from '../route.js';
import * as enc from '../encode.js';
import { historyItem } from '../mailing-encode.js';
import { mailingHistory } from '../../service/mailings/mailings.js';
import * as members from '../../service/audience/members.js';
import * as memberships from '../../service/audience/memberships.js';
import * as search from '../../service/audience/member-search.js';
import * as timeline from '../../service/audience/timeline.js';
import * as subscriptions from '../../service/audience/subscriptions.js';
import { atD } from '../codecs.js';
import { MEMBER_STATUSES, SETTABLE_STATUSES } from '../../service/audience/members.js';

const memberId = s.object({ member_id: s.idText() });
const groupId = s.object({ group_id: s.idText() });
const emailParam = s.object({ email: s.email() });
const deletedQuery = s.object({ deleted: s.optional(s.flag()) });
const ids = (min = 0) => s.array(s.id(), { min });
const sms = s.object({
  phone_number: s.optional(s.string({ min: 1 })),
  region_code: s.optional(s.string({ pattern: /^[A-Z]{2}$/, hint: 'must be a two-letter region code such as US' })),
  transactional_status: s.optional(s.oneOf(['a', 'o'])),
  promotional_status: s.optional(s.oneOf(['a', 'o'])),
});
/** Accepted for fidelity with the real service; they drive e-mail workflows that a local service does not send. */
const workflowFlags = {
  field_triggers: s.optional(s.boolean()),
  subscriber_consent_tracking: s.optional(s.boolean()),
};

/** The response header of a member search that says how many members it could not look at yet (the index catching up). */
export const UNINDEXED_HEADER = 'x-amsg-search-unindexed';

export const memberRoutes = [
  route({
    op: 'members.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members',
    summary: 'List members (live by default; deleted, deleted_only or deleted_range for archived ones)',
    query: s.object({
      deleted: s.optional(s.flag()),
      deleted_only: s.optional(s.flag()),
      deleted_range: s.optional(s.string()),
      exclude_fields: s.optional(s.flag()),
      ...s.windowParams(),
      count: s.optional(s.flag()),
    }),
    returns: 'array of member, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? members.countMembers(ctx, query) : members.listMemberPage(ctx, query).map(enc.memberJson)),
  }),
  route({
    op: 'members.counts',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/counts',
    summary: 'Members by status, live and archived, of the account or of one group (kept counts: the same cost at any size)',
    extension: true,
    query: s.object({ group_id: s.optional(s.idText()) }),
    returns: '{live: {a, e, o, f}, archived: {a, e, o, f}}',
    handler: ({ ctx, query }) => members.memberCounts(ctx, query.group_id),
  }),
  route({
    op: 'members.search',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/search',
    summary:
      'Live members whose e-mail contains q (3 or more characters: the trigram index, in member id order) or starts with it (1 or 2: in e-mail order); the same cost at any audience size',
    extension: true,
    query: s.object({ q: s.string({ min: 1, max: 254 }), ...s.windowParams() }),
    returns: 'array of member (header x-amsg-search-unindexed: members not yet indexed that this search did not look at)',
    handler: ({ ctx, query }) => {
      const found = search.searchMembers(ctx, query.q, query);
      const members = found.members.map(enc.memberJson);
      return found.unindexed ? new WithHeaders(members, { [UNINDEXED_HEADER]: String(found.unindexed) }) : members;
    },
  }),
  route({
    op: 'members.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}',
    summary: 'Get a member by id',
    params: memberId,
    query: deletedQuery,
    snapshot: false,
    returns: 'member',
    handler: ({ ctx, params, query }) => enc.memberJson(members.getWireMember(ctx, params.member_id, query.deleted)),
  }),
  route({
    op: 'members.getByEmail',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/email/{email}',
    summary: 'Get a member by e-mail address',
    params: emailParam,
    query: deletedQuery,
    returns: 'member',
    handler: ({ ctx, params, query }) => enc.memberJson(members.getWireMemberByEmail(ctx, params.email, query.deleted)),
  }),
  route({
    op: 'members.optoutHistory',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/optout',
    summary: "A member's opt-out history",
    params: memberId,
    returns: 'array of {timestamp, mailing_id}',
    handler: ({ ctx, params }) => members.optoutHistory(ctx, params.member_id).map(enc.optout),
  }),
  route({
    op: 'members.optoutByEmail',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/members/email/optout/{email}',
    summary: 'Opt a member out by e-mail address (true also when already opted out)',
    params: emailParam,
    body: s.object({}),
    returns: 'true',
    handler: ({ ctx, params }) => members.optoutByEmail(ctx, params.email),
  }),
  route({
    op: 'members.add',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/members/add',
    summary: 'Add or update one member',
    body: s.object({
      email: s.email(),
      phone_number: s.optional(s.string({ min: 1 })),
      fields: s.optional(s.record()),
      group_ids: s.optional(ids()),
      sms: s.optional(sms),
      ...workflowFlags,
    }),
    returns: '{member_id, added, status}',
    handler: ({ ctx, body }) => members.addMember(ctx, body),
  }),
  route({
    op: 'members.signup',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/members/signup',
    summary: 'Sign a member up into groups (nothing changes for an existing member without new groups)',
    body: s.object({
      email: s.email(),
      // May be empty: "no new group ids" for an existing member answers its id and status and changes nothing.
      group_ids: ids(),
      fields: s.optional(s.record()),
      signup_form_id: s.optional(s.id()),
      opt_in_subject: s.optional(s.string()),
      opt_in_message: s.optional(s.string()),
      opt_in_confirmation: s.optional(s.boolean()),
      ...workflowFlags,
    }),
    returns: '{member_id, status}',
    handler: ({ ctx, body }) => members.signup(ctx, body),
  }),
  route({
    op: 'members.deleteMany',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/delete',
    summary: 'Archive several members (true when all were found)',
    body: s.object({ member_ids: ids(1) }),
    returns: 'boolean',
    handler: ({ ctx, body }) => members.archiveMembers(ctx, body.member_ids),
  }),
  route({
    op: 'members.setStatus',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/status',
    summary: 'Set the status of several members (true when all were found)',
    body: s.object({ member_ids: ids(1), status_to: s.oneOf(SETTABLE_STATUSES) }),
    returns: 'boolean',
    handler: ({ ctx, body }) => members.setStatuses(ctx, body.member_ids, body.status_to),
  }),
  route({
    op: 'members.update',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/members/{member_id}',
    summary: 'Update a member (also archived ones); can change the e-mail address',
    params: memberId,
    body: s.object({
      email: s.optional(s.email()),
      phone_number: s.optional(s.string({ min: 1 })),
      status_to: s.optional(s.oneOf(SETTABLE_STATUSES)),
      fields: s.optional(s.record()),
      sms: s.optional(sms),
      ...workflowFlags,
    }),
    returns: 'true',
    handler: ({ ctx, params, body }) => members.updateMember(ctx, params.member_id, body),
  }),
  route({
    op: 'members.delete',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/members/{member_id}',
    summary: 'Archive a member',
    params: memberId,
    returns: 'true',
    handler: ({ ctx, params }) => members.archiveMember(ctx, params.member_id),
  }),
  route({
    op: 'members.deleteByStatus',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/members',
    summary: 'Archive every member of a status',
    query: s.object({ member_status_id: s.oneOf(SETTABLE_STATUSES) }),
    returns: 'true',
    handler: ({ ctx, query }) => members.archiveByStatus(ctx, query.member_status_id),
  }),
  route({
    op: 'members.groups',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/groups',
    summary: "A member's groups",
    params: memberId,
    returns: 'array of group',
    handler: ({ ctx, params }) => memberships.memberGroups(ctx, params.member_id).map(enc.group),
  }),
  route({
    op: 'members.addGroups',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/members/{member_id}/groups',
    summary: 'Add a member to groups (answers the groups it newly joined)',
    params: memberId,
    body: s.object({ group_ids: ids(1) }),
    returns: 'array of group ids',
    handler: ({ ctx, params, body }) => memberships.addMemberToGroups(ctx, params.member_id, body.group_ids),
  }),
  route({
    op: 'members.removeGroups',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/members/{member_id}/groups/remove',
    summary: 'Remove a member from groups (answers the groups it actually left)',
    params: memberId,
    body: s.object({ group_ids: ids(1) }),
    returns: 'array of group ids',
    handler: ({ ctx, params, body }) => memberships.removeMemberFromGroups(ctx, params.member_id, body.group_ids),
  }),
  route({
    op: 'members.removeAllGroups',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/members/{member_id}/groups',
    summary: 'Remove a member from all groups',
    params: memberId,
    returns: 'true',
    handler: ({ ctx, params }) => memberships.removeMemberFromAllGroups(ctx, params.member_id),
  }),
  route({
    op: 'members.removeFromGroups',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/groups/remove',
    summary: 'Remove members from groups (404 when any member or group does not exist)',
    body: s.object({ member_ids: ids(1), group_ids: ids(1) }),
    returns: 'true',
    handler: ({ ctx, body }) => memberships.removeMembersFromGroups(ctx, body.member_ids, body.group_ids),
  }),
  route({
    op: 'members.mailings',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/mailings',
    summary: "A member's mailing history, newest mailing first (start and end, a window of at most 500: local extension)",
    params: memberId,
    query: s.object({ ...s.windowParams() }),
    returns: 'array of member mailing history item',
    handler: ({ ctx, params, query }) => mailingHistory(ctx, params.member_id, query).map(historyItem),
  }),
  route({
    op: 'members.timeline',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/timeline',
    summary:
      'What happened to a member, newest first: joined, mailings received, opens, clicks, bounces, opt-outs, events, touchpoints, SMS (start and end, a window of at most 500)',
    extension: true,
    params: memberId,
    query: s.object({ ...s.windowParams() }),
    returns: 'array of {at, kind, id, …the kind’s fields}',
    handler: ({ ctx, params, query }) => timeline.memberTimeline(ctx, params.member_id, query).map((e) => ({ ...e, at: atD(e.at) })),
  }),
  route({
    op: 'members.subscriptions',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/subscriptions',
    summary: 'The live subscriptions a member is subscribed to or opted out of, in subscription id order',
    extension: true,
    params: memberId,
    returns: 'array of {subscription_id, subscription_name, status, subscribed_at, opted_out_at}',
    handler: ({ ctx, params }) =>
      subscriptions
        .memberSubscriptions(ctx, params.member_id)
        .map((m) => ({ ...m, subscribed_at: atD(m.subscribed_at), opted_out_at: atD(m.opted_out_at) })),
  }),
  route({
    op: 'members.copyToGroup',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/{group_id}/copy',
    summary: 'Copy every account member of the given statuses into a group',
    params: groupId,
    body: s.object({ member_status_id: s.array(s.oneOf(['a', 'o', 'e'] as const), { min: 1 }) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => memberships.copyStatusesIntoGroup(ctx, params.group_id, body.member_status_id),
  }),
  route({
    op: 'members.moveStatus',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/status/{status_from}/to/{status_to}',
    summary: 'Move every member of one status to another, optionally within one group',
    params: s.object({ status_from: s.oneOf(MEMBER_STATUSES), status_to: s.oneOf(SETTABLE_STATUSES) }),
    body: s.object({ group_id: s.optional(s.id()) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => members.moveStatus(ctx, params.status_from, params.status_to, body.group_id),
  }),
  route({
    op: 'members.purge',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/members/purge',
    summary: 'Erase members from every table (right to erasure)',
    body: s.object({ member_ids: ids(1) }),
    returns: 'true',
    handler: ({ ctx, body }) => members.purgeMembers(ctx, body.member_ids),
  }),
  route({
    op: 'members.purgeAll',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/members/purgeall',
    summary: 'Erase every archived member, optionally only of a status or group',
    body: s.object({
      member_status_id: s.optional(s.oneOf(SETTABLE_STATUSES)),
      // The spec types it as a string; integer ids are accepted too.
      member_group_id: s.optional(s.idOrText()),
    }),
    returns: 'true',
    handler: ({ ctx, body }) => members.purgeArchived(ctx, { status: body.member_status_id, groupId: body.member_group_id }),
  }),
];
