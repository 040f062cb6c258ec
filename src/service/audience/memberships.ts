/** Who is in which group: the operations that join members and groups, from either side. */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from './fields.js';
import { getGroup, groupsOfMember, requireGroups, type GroupRecord } from './groups.js';
import { joinGroups, memberRow, requireMembers, toMember, type MemberRecord, type MemberRow, type MemberStatus } from './members.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { emitEvent, emitMembers, memberList, membersWhere, wants } from '../webhooks/webhooks.js';

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
    const left = [...new Set(groupIds)].filter((g) => remove.run(g, memberId).changes > 0);
    if (left.length) emitEvent(ctx, 'member_remove_from_group', () => ({ group_ids: left, ...memberList(ctx, [memberId]) }));
    return left;
  });
}

/** DELETE /members/{id}/groups */
export function removeMemberFromAllGroups(ctx: Ctx, memberId: number): true {
  return inTransaction(ctx.db, () => {
    memberRow(ctx, memberId);
    const left = wants(ctx, 'member_remove_from_group')
      ? (stmt(ctx.db, 'SELECT member_group_id FROM group_members WHERE member_id = ? ORDER BY member_group_id')
          .pluck()
          .all(memberId) as number[])
      : [];
    stmt(ctx.db, 'DELETE FROM group_members WHERE member_id = ?').run(memberId);
    if (left.length) emitEvent(ctx, 'member_remove_from_group', () => ({ group_ids: left, ...memberList(ctx, [memberId]) }));
    return true;
  });
}

/** PUT /members/groups/remove: 404 (and nothing removed) when any member or group does not exist. */
export function removeMembersFromGroups(ctx: Ctx, memberIds: number[], groupIds: number[]): true {
  return inTransaction(ctx.db, () => {
    requireMembers(ctx, memberIds);
    requireGroups(ctx, groupIds);
    const leaving = membersWhere(
      ctx,
      ['member_remove_from_group'],
      'member_id IN (SELECT value FROM json_each(?)) AND member_id IN (SELECT member_id FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?)))',
      [ids(memberIds), ids(groupIds)],
    );
    stmt(
      ctx.db,
      `DELETE FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?))
                                   AND member_id IN (SELECT value FROM json_each(?))`,
    ).run(ids(groupIds), ids(memberIds));
    emitMembers(ctx, 'member_remove_from_group', leaving, { group_ids: [...new Set(groupIds)] });
    return true;
  });
}

/** PUT /members/{group_id}/copy: copies every live account member of these statuses into the group. */
export function copyStatusesIntoGroup(ctx: Ctx, groupId: number, statuses: MemberStatus[]): true {
  return inTransaction(ctx.db, () => {
    requireGroups(ctx, [groupId]);
    const joining = membersWhere(
      ctx,
      ['member_add_to_group'],
      'deleted_at IS NULL AND member_status_id IN (SELECT value FROM json_each(?)) AND member_id NOT IN (SELECT member_id FROM group_members WHERE member_group_id = ?)',
      [JSON.stringify(statuses), groupId],
    );
    stmt(
      ctx.db,
      `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
       SELECT ?, member_id, ? FROM members
        WHERE account_id = ? AND deleted_at IS NULL AND member_status_id IN (SELECT value FROM json_each(?))`,
    ).run(groupId, stamp(ctx.clock.now()), ctx.accountId, JSON.stringify(statuses));
    emitMembers(ctx, 'member_add_to_group', joining, { group_ids: [groupId] });
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
      ? `SELECT m.* FROM (SELECT member_id FROM group_members WHERE member_group_id = ? ORDER BY member_id ${LIMIT_OFFSET}) AS page
           CROSS JOIN members m ON m.member_id = page.member_id ORDER BY page.member_id`
      : `SELECT m.* FROM group_members gm CROSS JOIN members m ON m.member_id = gm.member_id
          WHERE gm.member_group_id = ? AND m.deleted_at IS NULL ORDER BY gm.member_id ${LIMIT_OFFSET}`,
  ).all(groupId, limit, offset) as MemberRow[];
  const catalog = FieldCatalog.of(ctx);
  return rows.map((r) => toMember(r, catalog));
}

/** PUT /groups/{id}/members: answers the ids of the members newly added. */
export function addMembersToGroup(ctx: Ctx, groupId: number, memberIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    requireMembers(ctx, memberIds);
    const insert = stmt(ctx.db, 'INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at) VALUES (?, ?, ?)');
    const now = stamp(ctx.clock.now());
    const joined = [...new Set(memberIds)].filter((m) => insert.run(groupId, m, now).changes > 0);
    if (joined.length) emitEvent(ctx, 'member_add_to_group', () => ({ group_ids: [groupId], ...memberList(ctx, joined) }));
    return joined;
  });
}

/** PUT /groups/{id}/members/remove: answers the ids of the members actually removed. */
export function removeMembersFromGroup(ctx: Ctx, groupId: number, memberIds: number[]): number[] {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    const remove = stmt(ctx.db, 'DELETE FROM group_members WHERE member_group_id = ? AND member_id = ?');
    const left = [...new Set(memberIds)].filter((m) => remove.run(groupId, m).changes > 0);
    if (left.length) emitEvent(ctx, 'member_remove_from_group', () => ({ group_ids: [groupId], ...memberList(ctx, left) }));
    return left;
  });
}

/**
 * DELETE /groups/{id}/members: empties the group, or removes only the members of one status;
 * answers how many members left it, as the real service documents.
 */
export function removeAllFromGroup(ctx: Ctx, groupId: number, status?: MemberStatus): number {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, groupId);
    const leaving = membersWhere(
      ctx,
      ['member_remove_from_group'],
      '(? IS NULL OR member_status_id = ?) AND member_id IN (SELECT member_id FROM group_members WHERE member_group_id = ?)',
      [status ?? null, status ?? null, groupId],
    );
    const removed = stmt(
      ctx.db,
      `DELETE FROM group_members WHERE member_group_id = ?
          AND (? IS NULL OR member_id IN (SELECT member_id FROM members WHERE member_status_id = ?))`,
    ).run(groupId, status ?? null, status ?? null).changes;
    emitMembers(ctx, 'member_remove_from_group', leaving, { group_ids: [groupId] });
    return removed;
  });
}

/** PUT /groups/{from}/{to}/members/copy: copies the members of one group (optionally of some statuses) into another. */
export function copyGroupMembers(ctx: Ctx, fromId: number, toId: number, statuses?: MemberStatus[]): true {
  return inTransaction(ctx.db, () => {
    getGroup(ctx, fromId);
    getGroup(ctx, toId);
    const joining = membersWhere(
      ctx,
      ['member_add_to_group'],
      'deleted_at IS NULL AND (? IS NULL OR member_status_id IN (SELECT value FROM json_each(?))) AND member_id IN (SELECT member_id FROM group_members WHERE member_group_id = ?) AND member_id NOT IN (SELECT member_id FROM group_members WHERE member_group_id = ?)',
      [statuses ? 1 : null, JSON.stringify(statuses ?? []), fromId, toId],
    );
    stmt(
      ctx.db,
      `INSERT OR IGNORE INTO group_members (member_group_id, member_id, added_at)
       SELECT ?, m.member_id, ? FROM group_members gm JOIN members m ON m.member_id = gm.member_id
        WHERE gm.member_group_id = ? AND m.deleted_at IS NULL
          AND (? IS NULL OR m.member_status_id IN (SELECT value FROM json_each(?)))`,
    ).run(toId, stamp(ctx.clock.now()), fromId, statuses ? 1 : null, JSON.stringify(statuses ?? []));
    emitMembers(ctx, 'member_add_to_group', joining, { group_ids: [toId] });
    return true;
  });
}
