import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { emitEvent } from '../webhooks/webhooks.js';

export const GROUP_TYPES = ['g', 'h', 's'] as const;
export type GroupType = (typeof GROUP_TYPES)[number];

export interface GroupRecord {
  member_group_id: number;
  account_id: number;
  group_name: string;
  group_type: string;
  active_count: number;
  error_count: number;
  optout_count: number;
  deleted_at: string | null;
  purged_at: string | null;
}

/**
 * Groups with their counts, read from group_counts (src/store/counters.ts), which the
 * writes that move them keep exact: live members by status (archived members count
 * nowhere; forwarded ones are not shown).
 */
const countOf = (status: string) =>
  `ifnull((SELECT n FROM group_counts c WHERE c.member_group_id = g.member_group_id AND c.member_status_id = '${status}' AND c.archived = 0), 0)`;
const GROUP_SELECT = `
  SELECT g.member_group_id, g.account_id, g.group_name, g.group_type,
         ${countOf('a')} AS active_count, ${countOf('e')} AS error_count, ${countOf('o')} AS optout_count,
         g.deleted_at, g.purged_at
    FROM member_groups g`;

export function listGroups(ctx: Ctx, types: readonly string[] = ['g']): GroupRecord[] {
  const placeholders = types.map(() => '?').join(',');
  return stmt(
    ctx.db,
    `${GROUP_SELECT} WHERE g.account_id = ? AND g.deleted_at IS NULL AND g.group_type IN (${placeholders})
      ORDER BY g.member_group_id`,
  ).all(ctx.accountId, ...types) as GroupRecord[];
}

export function getGroup(ctx: Ctx, groupId: number): GroupRecord {
  const row = stmt(ctx.db, `${GROUP_SELECT} WHERE g.account_id = ? AND g.member_group_id = ? AND g.deleted_at IS NULL`).get(
    ctx.accountId,
    groupId,
  ) as GroupRecord | undefined;
  if (!row) throw notFound(`group ${groupId} not found`);
  return row;
}

/** The groups of a member (live groups only), with their counts. */
export function groupsOfMember(ctx: Ctx, memberId: number): GroupRecord[] {
  return stmt(
    ctx.db,
    `${GROUP_SELECT} WHERE g.account_id = ? AND g.deleted_at IS NULL
        AND g.member_group_id IN (SELECT member_group_id FROM group_members WHERE member_id = ?)
      ORDER BY g.member_group_id`,
  ).all(ctx.accountId, memberId) as GroupRecord[];
}

/** Throws 404 naming the first id that is not a live group of the account. */
export function requireGroups(ctx: Ctx, groupIds: readonly number[]): void {
  const exists = stmt(ctx.db, 'SELECT 1 FROM member_groups WHERE account_id = ? AND member_group_id = ? AND deleted_at IS NULL');
  for (const id of groupIds) if (!exists.get(ctx.accountId, id)) throw notFound(`group ${id} not found`);
}

/** The id of the live group with this name (case-insensitive), if any. */
export function groupIdByName(ctx: Ctx, name: string): number | undefined {
  const row = stmt(
    ctx.db,
    'SELECT member_group_id FROM member_groups WHERE account_id = ? AND group_name = ? COLLATE NOCASE AND deleted_at IS NULL',
  ).get(ctx.accountId, name) as { member_group_id: number } | undefined;
  return row?.member_group_id;
}

function assertNameFree(ctx: Ctx, name: string, field: string) {
  const taken = groupIdByName(ctx, name);
  if (taken !== undefined) throw badRequest(`${field}: a group named "${name}" already exists (group ${taken})`, { field });
}

/** Creates several groups at once, all or none. */
export function createGroups(
  ctx: Ctx,
  groups: { group_name: string; group_type?: GroupType }[],
): { member_group_id: number; group_name: string }[] {
  return inTransaction(ctx.db, () => {
    const seen = new Set<string>();
    const now = stamp(ctx.clock.now());
    const created = groups.map((g, i) => {
      const field = `groups[${i}].group_name`;
      const name = g.group_name.trim();
      if (!name) throw badRequest(`${field}: must not be empty`, { field });
      if (seen.has(name.toLowerCase())) throw badRequest(`${field}: "${name}" is given twice`, { field });
      seen.add(name.toLowerCase());
      assertNameFree(ctx, name, field);
      const id = stmt(ctx.db, 'INSERT INTO member_groups (account_id, group_name, group_type, created_at) VALUES (?, ?, ?, ?)').run(
        ctx.accountId,
        name,
        g.group_type ?? 'g',
        now,
      ).lastInsertRowid;
      return { member_group_id: Number(id), group_name: name };
    });
    emitEvent(ctx, 'group_create', { groups: created });
    return created;
  });
}

export function renameGroup(ctx: Ctx, groupId: number, name: string): true {
  return inTransaction(ctx.db, () => {
    const group = getGroup(ctx, groupId);
    const trimmed = name.trim();
    if (!trimmed) throw badRequest('group_name: must not be empty', { field: 'group_name' });
    if (trimmed.toLowerCase() !== group.group_name.toLowerCase()) assertNameFree(ctx, trimmed, 'group_name');
    stmt(ctx.db, 'UPDATE member_groups SET group_name = ? WHERE member_group_id = ?').run(trimmed, groupId);
    emitEvent(ctx, 'group_update', { groups: [{ member_group_id: groupId, group_name: trimmed }], previous_name: group.group_name });
    return true;
  });
}

/** Deletes a group: it leaves every list, and its memberships go with it. */
export function deleteGroup(ctx: Ctx, groupId: number): true {
  return inTransaction(ctx.db, () => {
    const group = getGroup(ctx, groupId);
    stmt(ctx.db, 'DELETE FROM group_members WHERE member_group_id = ?').run(groupId);
    emitEvent(ctx, 'group_delete', { groups: [{ member_group_id: groupId, group_name: group.group_name }] });
    stmt(ctx.db, 'UPDATE member_groups SET deleted_at = ? WHERE member_group_id = ?').run(stamp(ctx.clock.now()), groupId);
    return true;
  });
}
