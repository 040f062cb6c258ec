import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import { historyItem } from '../mailing-encode.js';
import { mailingHistory } from '../../service/mailings.js';
import * as members from '../../service/members.js';
import * as memberships from '../../service/memberships.js';
import { MEMBER_STATUSES, SETTABLE_STATUSES } from '../../service/members.js';

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

export const memberRoutes = [
  route({
    op: 'members.list',
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
    handler: ({ ctx, query }) =>
      query.count ? members.countMembers(ctx, query) : members.listMembers(ctx, query).map(enc.member),
  }),
  route({
    op: 'members.get',
    method: 'GET',
    path: '/{account_id}/members/{member_id}',
    summary: 'Get a member by id',
    params: memberId,
    query: deletedQuery,
    returns: 'member',
    handler: ({ ctx, params, query }) => enc.member(members.getMember(ctx, params.member_id, query.deleted)),
  }),
  route({
    op: 'members.getByEmail',
    method: 'GET',
    path: '/{account_id}/members/email/{email}',
    summary: 'Get a member by e-mail address',
    params: emailParam,
    query: deletedQuery,
    returns: 'member',
    handler: ({ ctx, params, query }) => enc.member(members.getMemberByEmail(ctx, params.email, query.deleted)),
  }),
  route({
    op: 'members.optoutHistory',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/optout',
    summary: "A member's opt-out history",
    params: memberId,
    returns: 'array of {timestamp, mailing_id}',
    handler: ({ ctx, params }) =>
      members.optoutHistory(ctx, params.member_id).map(enc.optout),
  }),
  route({
    op: 'members.optoutByEmail',
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
    method: 'PUT',
    path: '/{account_id}/members/delete',
    summary: 'Archive several members (true when all were found)',
    body: s.object({ member_ids: ids(1) }),
    returns: 'boolean',
    handler: ({ ctx, body }) => members.archiveMembers(ctx, body.member_ids),
  }),
  route({
    op: 'members.setStatus',
    method: 'PUT',
    path: '/{account_id}/members/status',
    summary: 'Set the status of several members (true when all were found)',
    body: s.object({ member_ids: ids(1), status_to: s.oneOf(SETTABLE_STATUSES) }),
    returns: 'boolean',
    handler: ({ ctx, body }) => members.setStatuses(ctx, body.member_ids, body.status_to),
  }),
  route({
    op: 'members.update',
    method: 'PUT',
    path: '/{account_id}/members/{member_id}',
    summary: "Update a member (also archived ones); can change the e-mail address",
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
    method: 'DELETE',
    path: '/{account_id}/members/{member_id}',
    summary: 'Archive a member',
    params: memberId,
    returns: 'true',
    handler: ({ ctx, params }) => members.archiveMember(ctx, params.member_id),
  }),
  route({
    op: 'members.deleteByStatus',
    method: 'DELETE',
    path: '/{account_id}/members',
    summary: 'Archive every member of a status',
    query: s.object({ member_status_id: s.oneOf(SETTABLE_STATUSES) }),
    returns: 'true',
    handler: ({ ctx, query }) => members.archiveByStatus(ctx, query.member_status_id),
  }),
  route({
    op: 'members.groups',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/groups',
    summary: "A member's groups",
    params: memberId,
    returns: 'array of group',
    handler: ({ ctx, params }) => memberships.memberGroups(ctx, params.member_id).map(enc.group),
  }),
  route({
    op: 'members.addGroups',
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
    method: 'DELETE',
    path: '/{account_id}/members/{member_id}/groups',
    summary: 'Remove a member from all groups',
    params: memberId,
    returns: 'true',
    handler: ({ ctx, params }) => memberships.removeMemberFromAllGroups(ctx, params.member_id),
  }),
  route({
    op: 'members.removeFromGroups',
    method: 'PUT',
    path: '/{account_id}/members/groups/remove',
    summary: 'Remove members from groups (404 when any member or group does not exist)',
    body: s.object({ member_ids: ids(1), group_ids: ids(1) }),
    returns: 'true',
    handler: ({ ctx, body }) => memberships.removeMembersFromGroups(ctx, body.member_ids, body.group_ids),
  }),
  route({
    op: 'members.mailings',
    method: 'GET',
    path: '/{account_id}/members/{member_id}/mailings',
    summary: "A member's mailing history, newest mailing first (start and end, a window of at most 500: local extension)",
    params: memberId,
    query: s.object({ ...s.windowParams() }),
    returns: 'array of member mailing history item',
    handler: ({ ctx, params, query }) => mailingHistory(ctx, params.member_id, query).map(historyItem),
  }),
  route({
    op: 'members.copyToGroup',
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
    method: 'POST',
    path: '/{account_id}/members/purge',
    summary: 'Erase members from every table (right to erasure)',
    body: s.object({ member_ids: ids(1) }),
    returns: 'true',
    handler: ({ ctx, body }) => members.purgeMembers(ctx, body.member_ids),
  }),
  route({
    op: 'members.purgeAll',
    method: 'PUT',
    path: '/{account_id}/members/purgeall',
    summary: 'Erase every archived member, optionally only of a status or group',
    body: s.object({
      member_status_id: s.optional(s.oneOf(SETTABLE_STATUSES)),
      // The spec types it as a string; integer ids are accepted too.
      member_group_id: s.optional(s.idOrText()),
    }),
    returns: 'true',
    handler: ({ ctx, body }) =>
      members.purgeArchived(ctx, { status: body.member_status_id, groupId: body.member_group_id }),
  }),
];
