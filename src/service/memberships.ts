/** Who is in which group: the operations that join members and groups, from either side. */
import { inTransaction } from '../store/db.js';
import { stmt } from '../store/statements.js';
import { stamp } from './clock.js';
import type { Ctx } from './context.js';
import { FieldCatalog } from './fields.js';
import { getGroup, groupsOfMember, requireGroups, type GroupRecord } from './groups.js';
import {
  joinGroups,
  memberRow,
  requireMembers,
  toMember,
  type MemberRecord,
  type MemberRow,
  type MemberStatus,
} from './members.js';
import { windowOf, type Window } from './paging.js';

const ids = (list: readonly number[]) => JSON.stringify([...new Set(list)]);

// ---------------------------------------------------------------- from the member's side

export function memberGroups(ctx: Ctx, memberId: number): GroupRecord[] {
  memberRow(ctx, memberId);
  return groupsOfMember(ctx, memberId);
}

/** PUT /members/{id}/groups: answers the ids of the groups the member was newly added to. */
export function addMemberToGroups(ctx: Ctx, memberId: number, groupIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    memberRow(ctx, memberId);
    requireGroups(ctx, groupIds);
    return joinGroups(ctx, memberId, groupIds);
  });
}

/** PUT /members/{id}/groups/remove: answers the ids of the groups the member actually left. */
export function removeMemberFromGroups(ctx: Ctx, memberId: number, groupIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    memberRow(ctx, memberId);
    requireGroups(ctx, groupIds);
    const remove = stmt(ctx.db, 'DELETE FROM group_members WHERE member_group_id = ? AND member_id = ?');
    return [...new Set(groupIds)].filter((g) => remove.run(g, memberId).changes > 0);
  });
}

/** DELETE /members/{id}/groups */
export function removeMemberFromAllGroups(ctx: Ctx, memberId: number): true {
  return inTransaction(ctx.db, () => {
    memberRow(ctx, memberId);
    stmt(ctx.db, 'DELETE FROM group_members WHERE member_id = ?').run(memberId);
    return true;
  });
}

/** PUT /members/groups/remove: 404 (and nothing removed) when any member or group does not exist. */
export function removeMembersFromGroups(ctx: Ctx, memberIds: number[], groupIds: number[]): true {
  return inTransaction(ctx.db, () => {
    requireMembers(ctx, memberIds);
    requireGroups(ctx, groupIds);
    stmt(
      ctx.db,
      `DELETE FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?))
                                   AND member_id IN (SELECT value FROM json_each(?))`,
    ).run(ids(groupIds), ids(memberIds));
    return true;
  });
}

/** PUT /members/{group_id}/copy: copies every live account member of these statuses into the group. */
export function copyStatusesIntoGroup(ctx: Ctx, groupId: number, statuses: MemberStatus[]): true {
  return inTransaction(ctx.db, () => {
    requireGroups(ctx, [groupId]);
    stmt(
      ctx.db,
      `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
       SELECT ?, member_id, ? FROM members
        WHERE account_id = ? AND deleted_at IS NULL AND member_status_id IN (SELECT value FROM json_each(?))`,
    ).run(groupId, stamp(ctx.clock.now()), ctx.accountId, JSON.stringify(statuses));
    return true;
  });
}

// ---------------------------------------------------------------- from the group's side

export interface GroupMembersQuery extends Window {
  deleted?: boolean;
}

/**
 * A page of a group's members in id order. When the counts say no member of the group
 * is archived (or archived ones are wanted), the page is a walk of the group's
 * memberships alone (its primary key), so a deep page skips index entries; otherwise
 * each membership's member is read to leave the archived out.
 */
export function groupMembers(ctx: Ctx, groupId: number, q: GroupMembersQuery): MemberRecord[] {
  getGroup(ctx, groupId);
  const { limit, offset } = windowOf(q);
  const walkAlone =
    q.deleted ||
    !stmt(ctx.db, 'SELECT ifnull(sum(n), 0) FROM group_counts WHERE member_group_id = ? AND archived = 1').pluck().get(groupId);
  const rows = stmt(
    ctx.db,
    walkAlone
      ? `SELECT m.* FROM (SELECT member_id FROM group_members WHERE member_group_id = ? ORDER BY member_id LIMIT ? OFFSET ?) AS page
           CROSS JOIN members m ON m.member_id = page.member_id ORDER BY page.member_id`
      : `SELECT m.* FROM group_members gm CROSS JOIN members m ON m.member_id = gm.member_id
          WHERE gm.member_group_id = ? AND m.deleted_at IS NULL ORDER BY gm.member_id LIMIT ? OFFSET ?`,
  ).all(groupId, limit, offset) as MemberRow[];
  const catalog = FieldCatalog.of(ctx);
  return rows.map((r) => toMember(r, catalog));
}

/** PUT /groups/{id}/members: answers the ids of the members newly added. */
export function addMembersToGroup(ctx: Ctx, groupId: number, memberIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    requireMembers(ctx, memberIds);
    const insert = stmt(
      ctx.db,
      'INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at) VALUES (?, ?, ?)',
    );
    const now = stamp(ctx.clock.now());
    return [...new Set(memberIds)].filter((m) => insert.run(groupId, m, now).changes > 0);
  });
}

/** PUT /groups/{id}/members/remove: answers the ids of the members actually removed. */
export function removeMembersFromGroup(ctx: Ctx, groupId: number, memberIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    const remove = stmt(ctx.db, 'DELETE FROM group_members WHERE member_group_id = ? AND member_id = ?');
    return [...new Set(memberIds)].filter((m) => remove.run(groupId, m).changes > 0);
  });
}

/** DELETE /groups/{id}/members: empties the group, or removes only the members of one status. */
/** DELETE /groups/{id}/members: answers how many members left the group, as the real service documents. */
export function removeAllFromGroup(ctx: Ctx, groupId: number, status?: MemberStatus): number {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    return stmt(
      ctx.db,
      `DELETE FROM group_members WHERE member_group_id = ?
          AND (? IS NULL OR member_id IN (SELECT member_id FROM members WHERE member_status_id = ?))`,
    ).run(groupId, status ?? null, status ?? null).changes;
  });
}

/** PUT /groups/{from}/{to}/members/copy: copies the members of one group (optionally of some statuses) into another. */
export function copyGroupMembers(ctx: Ctx, fromId: number, toId: number, statuses?: MemberStatus[]): true {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, fromId);
    getGroup(ctx, toId);
    stmt(
      ctx.db,
      `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
       SELECT ?, m.member_id, ? FROM group_members gm JOIN members m ON m.member_id = gm.member_id
        WHERE gm.member_group_id = ? AND m.deleted_at IS NULL
          AND (? IS NULL OR m.member_status_id IN (SELECT value FROM json_each(?)))`,
    ).run(toId, stamp(ctx.clock.now()), fromId, statuses ? 1 : null, JSON.stringify(statuses ?? []));
    return true;
  });
}
