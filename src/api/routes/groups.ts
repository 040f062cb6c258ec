import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as groups from '../../service/audience/groups.js';
import * as memberships from '../../service/audience/memberships.js';
import { GROUP_TYPES } from '../../service/audience/groups.js';
import { MEMBER_STATUSES } from '../../service/audience/members.js';
import { windowOf } from '../../service/paging.js';

const groupId = s.object({ member_group_id: s.idText() });
const memberIds = s.object({ member_ids: s.array(s.id(), { min: 1 }) });
const groupName = s.string({ min: 1, max: 255 });

// Groups are not in the spec's endpoint tables; these follow the real service's group endpoints.
export const groupRoutes = [
  route({
    op: 'groups.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/groups',
    summary: 'List groups with their member counts',
    extension: true,
    query: s.object({
      group_types: s.optional(s.letterList(GROUP_TYPES)),
      ...s.windowParams(),
      count: s.optional(s.flag()),
    }),
    returns: 'array of group, or an integer with count=true',
    handler: ({ ctx, query }) => {
      const all = groups.listGroups(ctx, query.group_types?.length ? query.group_types : ['g']);
      if (query.count) return all.length;
      const { limit, offset } = windowOf(query);
      return all.slice(offset, offset + limit).map(enc.group);
    },
  }),
  route({
    op: 'groups.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/groups',
    summary: 'Create one or more groups (all or none)',
    extension: true,
    body: s.object({
      groups: s.array(s.object({ group_name: groupName, group_type: s.optional(s.oneOf(GROUP_TYPES)) }), { min: 1 }),
    }),
    returns: 'array of {member_group_id, group_name}',
    handler: ({ ctx, body }) => groups.createGroups(ctx, body.groups),
  }),
  route({
    op: 'groups.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/groups/{member_group_id}',
    summary: 'Get a group',
    extension: true,
    params: groupId,
    returns: 'group',
    handler: ({ ctx, params }) => enc.group(groups.getGroup(ctx, params.member_group_id)),
  }),
  route({
    op: 'groups.rename',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/groups/{member_group_id}',
    summary: 'Rename a group',
    extension: true,
    params: groupId,
    body: s.object({ group_name: groupName }),
    returns: 'true',
    handler: ({ ctx, params, body }) => groups.renameGroup(ctx, params.member_group_id, body.group_name),
  }),
  route({
    op: 'groups.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/groups/{member_group_id}',
    summary: 'Delete a group (its memberships go with it)',
    extension: true,
    params: groupId,
    returns: 'true',
    handler: ({ ctx, params }) => groups.deleteGroup(ctx, params.member_group_id),
  }),
  route({
    op: 'groups.members',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/groups/{member_group_id}/members',
    summary: "A group's members",
    extension: true,
    params: groupId,
    query: s.object({
      deleted: s.optional(s.flag()),
      ...s.windowParams(),
    }),
    returns: 'array of member',
    handler: ({ ctx, params, query }) => memberships.groupMembers(ctx, params.member_group_id, query).map(enc.member),
  }),
  route({
    op: 'groups.addMembers',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/groups/{member_group_id}/members',
    summary: 'Add members to a group (answers the members newly added)',
    extension: true,
    params: groupId,
    body: memberIds,
    returns: 'array of member ids',
    handler: ({ ctx, params, body }) => memberships.addMembersToGroup(ctx, params.member_group_id, body.member_ids),
  }),
  route({
    op: 'groups.removeMembers',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/groups/{member_group_id}/members/remove',
    summary: 'Remove members from a group (answers the members actually removed)',
    extension: true,
    params: groupId,
    body: memberIds,
    returns: 'array of member ids',
    handler: ({ ctx, params, body }) => memberships.removeMembersFromGroup(ctx, params.member_group_id, body.member_ids),
  }),
  route({
    op: 'groups.removeAllMembers',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/groups/{member_group_id}/members',
    summary: 'Remove all members from a group, or only those of one status',
    extension: true,
    params: groupId,
    query: s.object({ member_status_id: s.optional(s.oneOf(MEMBER_STATUSES)) }),
    returns: 'integer: the number of members removed',
    handler: ({ ctx, params, query }) => memberships.removeAllFromGroup(ctx, params.member_group_id, query.member_status_id),
  }),
  route({
    op: 'groups.copyMembers',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/groups/{member_group_id}/{to_group_id}/members/copy',
    summary: 'Copy the members of one group into another (optionally only some statuses)',
    extension: true,
    params: s.object({ member_group_id: s.idText(), to_group_id: s.idText() }),
    body: s.object({ member_status_id: s.optional(s.array(s.oneOf(MEMBER_STATUSES), { min: 1 })) }),
    returns: 'true',
    handler: ({ ctx, params, body }) =>
      memberships.copyGroupMembers(ctx, params.member_group_id, params.to_group_id, body.member_status_id),
  }),
];
