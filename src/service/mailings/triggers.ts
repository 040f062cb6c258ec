/**
 * Triggers (deprecated in the spec): automated sends of a parent mailing. The spec
 * lists reading, renaming and deleting them; creating one and firing it for a member
 * are local extensions, so a sandbox can show what a trigger sends.
 *
 * Firing makes one mailing of type r per member: the parent's content, that member
 * as its one recipient, sent push_offset seconds after the event. That is the
 * spec's "for an automated-campaign mailing id, only that single send".
 */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { getField } from '../audience/fields.js';
import { memberRow } from '../audience/members.js';
import { createMemberCopy, mailingRow, type MailingRow } from './mailings.js';

export const TRIGGER_EVENT_TYPES = ['r', 's'] as const;
export type TriggerEventType = (typeof TRIGGER_EVENT_TYPES)[number];

export interface TriggerRow {
  trigger_id: number;
  account_id: number;
  name: string;
  event_type: TriggerEventType;
  field_id: number | null;
  parent_mailing_id: number;
  start_ts: string;
  push_offset: number;
  signups: string | null;
  created_at: string;
  deleted_at: string | null;
  is_disabled: number;
}

export interface TriggerRecord {
  trigger: TriggerRow;
  parent_mailing: MailingRow;
}

function triggerRow(ctx: Ctx, triggerId: number): TriggerRow {
  const row = stmt(ctx.db, 'SELECT * FROM triggers WHERE trigger_id = ? AND account_id = ? AND deleted_at IS NULL').get(
    triggerId,
    ctx.accountId,
  ) as TriggerRow | undefined;
  if (!row) throw notFound(`trigger ${triggerId} not found`);
  return row;
}

const withParent = (ctx: Ctx, trigger: TriggerRow): TriggerRecord => ({
  trigger,
  parent_mailing: mailingRow(ctx, trigger.parent_mailing_id),
});

export function listTriggers(ctx: Ctx): TriggerRecord[] {
  const rows = stmt(ctx.db, 'SELECT * FROM triggers WHERE account_id = ? AND deleted_at IS NULL ORDER BY trigger_id').all(
    ctx.accountId,
  ) as TriggerRow[];
  return rows.map((t) => withParent(ctx, t));
}

export function getTrigger(ctx: Ctx, triggerId: number): TriggerRecord {
  return withParent(ctx, triggerRow(ctx, triggerId));
}

export interface TriggerInput {
  name: string;
  parent_mailing_id: number;
  event_type: TriggerEventType;
  /** For a date trigger (r): the date field whose day fires it. */
  field_id?: number | null;
  push_offset?: number;
  start_ts?: string;
  signups?: number[] | null;
}

/** The extension POST /triggers: a trigger over an existing parent mailing. */
export function createTrigger(ctx: Ctx, input: TriggerInput): number {
  return inTransaction(ctx.db, () => {
    mailingRow(ctx, input.parent_mailing_id);
    if (input.field_id != null) {
      const field = getField(ctx, input.field_id);
      if (field.field_type !== 'date' && field.field_type !== 'timestamp')
        throw badRequest(`field_id: field ${field.shortcut_name} is ${field.field_type}; a date trigger needs a date or timestamp field`, {
          field: 'field_id',
        });
    } else if (input.event_type === 'r')
      throw badRequest('field_id: a date trigger (event_type r) needs the date field that fires it', { field: 'field_id' });
    const now = stamp(ctx.clock.now());
    return Number(
      stmt(
        ctx.db,
        `INSERT INTO triggers (account_id, name, event_type, field_id, parent_mailing_id, start_ts, push_offset, signups, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        ctx.accountId,
        input.name,
        input.event_type,
        input.field_id ?? null,
        input.parent_mailing_id,
        input.start_ts ?? now,
        input.push_offset ?? 0,
        input.signups ? JSON.stringify(input.signups) : null,
        now,
      ).lastInsertRowid,
    );
  });
}

/** PUT /triggers/{id}: renames (the one parameter the spec shows); answers the id. */
export function renameTrigger(ctx: Ctx, triggerId: number, name: string): number {
  triggerRow(ctx, triggerId);
  stmt(ctx.db, 'UPDATE triggers SET name = ? WHERE trigger_id = ?').run(name, triggerId);
  return triggerId;
}

export function deleteTrigger(ctx: Ctx, triggerId: number): true {
  triggerRow(ctx, triggerId);
  stmt(ctx.db, 'UPDATE triggers SET deleted_at = ? WHERE trigger_id = ?').run(stamp(ctx.clock.now()), triggerId);
  return true;
}

/** GET /triggers/{id}/mailings: the sends the trigger made, oldest first. */
export function triggerMailings(ctx: Ctx, triggerId: number): MailingRow[] {
  triggerRow(ctx, triggerId);
  return stmt(ctx.db, 'SELECT * FROM mailings WHERE trigger_id = ? ORDER BY mailing_id').all(triggerId) as MailingRow[];
}

/** The extension POST /triggers/{id}/members/{member_id}: the trigger's event happened for that member. */
export function fireTrigger(ctx: Ctx, triggerId: number, memberId: number): { mailing_id: number } {
  return inTransaction(ctx.db, () => {
    const t = triggerRow(ctx, triggerId);
    if (t.is_disabled) throw badRequest(`trigger ${triggerId} is disabled`, { field: 'trigger_id' });
    memberRow(ctx, memberId, false);
    const sendAt = stamp(new Date(ctx.clock.now().getTime() + t.push_offset * 1000));
    const mailingId = createMemberCopy(ctx, t.parent_mailing_id, memberId, { sendAt, triggerId });
    return { mailing_id: mailingId };
  });
}
