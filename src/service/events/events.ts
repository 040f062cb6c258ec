/**
 * Member events and touchpoints: two record kinds of the same shape, each with its
 * own type catalogue (the spec's "Member events" and "Touchpoints" parts). One set of
 * rules serves both, parameterized by the kind's table and column names, so the two
 * cannot drift apart. Seeding and workflows call these functions directly.
 */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';

export interface Kind {
  /** `event` or `touchpoint`: the prefix of the record's columns. */
  prefix: 'event' | 'touchpoint';
  /** How the spec names one record in messages. */
  noun: string;
  typesTable: string;
  typeId: string;
  /** The type's name column (event_type, type_name). */
  typeName: string;
  recordsTable: string;
  recordId: string;
  /** The body key holding the items of a recording call (events, touchpoints). */
  itemsKey: string;
}

export const EVENTS: Kind = {
  prefix: 'event',
  noun: 'event',
  typesTable: 'member_event_types',
  typeId: 'event_type_id',
  typeName: 'event_type',
  recordsTable: 'member_events',
  recordId: 'event_id',
  itemsKey: 'events',
};

export const TOUCHPOINTS: Kind = {
  prefix: 'touchpoint',
  noun: 'touchpoint',
  typesTable: 'touchpoint_types',
  typeId: 'touchpoint_type_id',
  typeName: 'type_name',
  recordsTable: 'touchpoints',
  recordId: 'touchpoint_id',
  itemsKey: 'touchpoints',
};

/** A type as stored: {id, account_id, name, display_name, created_at}, named by the kind's columns. */
export type TypeRow = Record<string, string | number>;
/** A record as stored (attributes as JSON text or null). */
export type RecordRow = Record<string, string | number | null>;

/** The spec's most items per recording call. */
export const MAX_ITEMS = 10;

// ---------------------------------------------------------------- type catalogues

export function listTypes(ctx: Ctx, kind: Kind, w: Window = {}): TypeRow[] {
  const { limit, offset } = windowOf(w);
  return stmt(ctx.db, `SELECT * FROM ${kind.typesTable} WHERE account_id = ? ORDER BY ${kind.typeId} ${LIMIT_OFFSET}`).all(
    ctx.accountId,
    limit,
    offset,
  ) as TypeRow[];
}

/** Catalogues are small (a type per kind of thing a marketer tracks); counted by their account index. */
export function countTypes(ctx: Ctx, kind: Kind): number {
  return stmt(ctx.db, `SELECT COUNT(*) FROM ${kind.typesTable} WHERE account_id = ?`).pluck().get(ctx.accountId) as number;
}

export function getType(ctx: Ctx, kind: Kind, typeId: number): TypeRow {
  const row = stmt(ctx.db, `SELECT * FROM ${kind.typesTable} WHERE ${kind.typeId} = ? AND account_id = ?`).get(typeId, ctx.accountId) as
    | TypeRow
    | undefined;
  if (!row) throw notFound(`${kind.noun} type ${typeId} not found`);
  return row;
}

/** The type of this name, in any case. */
export function typeByName(ctx: Ctx, kind: Kind, name: string): TypeRow | undefined {
  return stmt(ctx.db, `SELECT * FROM ${kind.typesTable} WHERE account_id = ? AND ${kind.typeName} = ? COLLATE NOCASE`).get(
    ctx.accountId,
    name,
  ) as TypeRow | undefined;
}

function refuseTaken(ctx: Ctx, kind: Kind, name: string, except?: number) {
  const other = typeByName(ctx, kind, name);
  if (other && other[kind.typeId] !== except)
    throw badRequest(`${kind.typeName}: the ${kind.noun} type "${name}" already exists (id ${other[kind.typeId]})`, {
      field: kind.typeName,
    });
}

export interface TypeInput {
  name: string;
  display_name: string;
}

export function createType(ctx: Ctx, kind: Kind, input: TypeInput): TypeRow {
  return inTransaction(ctx.db, () => {
    refuseTaken(ctx, kind, input.name);
    const id = Number(
      stmt(ctx.db, `INSERT INTO ${kind.typesTable} (account_id, ${kind.typeName}, display_name, created_at) VALUES (?, ?, ?, ?)`).run(
        ctx.accountId,
        input.name,
        input.display_name,
        stamp(ctx.clock.now()),
      ).lastInsertRowid,
    );
    return getType(ctx, kind, id);
  });
}

export function updateType(ctx: Ctx, kind: Kind, typeId: number, input: TypeInput): TypeRow {
  return inTransaction(ctx.db, () => {
    getType(ctx, kind, typeId);
    refuseTaken(ctx, kind, input.name, typeId);
    stmt(ctx.db, `UPDATE ${kind.typesTable} SET ${kind.typeName} = ?, display_name = ? WHERE ${kind.typeId} = ?`).run(
      input.name,
      input.display_name,
      typeId,
    );
    return getType(ctx, kind, typeId);
  });
}

/** Deletes the type and, by the foreign key's cascade in the same statement, every record of it. */
export function deleteType(ctx: Ctx, kind: Kind, typeId: number): true {
  return inTransaction(ctx.db, () => {
    getType(ctx, kind, typeId);
    stmt(ctx.db, `DELETE FROM ${kind.typesTable} WHERE ${kind.typeId} = ?`).run(typeId);
    return true;
  });
}

// ---------------------------------------------------------------- records

/** One item of a recording call, already checked for its JSON types by the route. */
export interface RecordInput {
  member_id?: number;
  email?: string;
  type_id?: number;
  type_name?: string;
  monetary_value?: number;
  mailing_id?: number;
  /** Stored form (UTC); absent is now. */
  timestamp?: string;
  attributes?: Record<string, unknown> | null;
}

const fail = (path: string, reason: string) => badRequest(`${path}: ${reason}`, { field: path });

/** The live member an item names (by id or address); a 400 naming the item's field otherwise. */
function itemMember(ctx: Ctx, item: RecordInput, path: string): number {
  if (item.member_id !== undefined) {
    const row = stmt(ctx.db, 'SELECT member_id FROM members WHERE account_id = ? AND member_id = ? AND deleted_at IS NULL').get(
      ctx.accountId,
      item.member_id,
    );
    if (!row) throw fail(`${path}.member_id`, `member ${item.member_id} not found`);
    return item.member_id;
  }
  if (item.email !== undefined) {
    const id = stmt(ctx.db, 'SELECT member_id FROM members WHERE account_id = ? AND email = ? AND deleted_at IS NULL')
      .pluck()
      .get(ctx.accountId, item.email) as number | undefined;
    if (id === undefined) throw fail(`${path}.email`, `no member has the address ${item.email}`);
    return id;
  }
  throw fail(`${path}.member_id`, 'give member_id or email');
}

function itemType(ctx: Ctx, kind: Kind, item: RecordInput, path: string): number {
  if (item.type_id !== undefined) {
    const row = stmt(ctx.db, `SELECT 1 FROM ${kind.typesTable} WHERE ${kind.typeId} = ? AND account_id = ?`).get(
      item.type_id,
      ctx.accountId,
    );
    if (!row) throw fail(`${path}.${kind.typeId}`, `${kind.noun} type ${item.type_id} not found`);
    return item.type_id;
  }
  if (item.type_name !== undefined) {
    const row = typeByName(ctx, kind, item.type_name);
    if (!row) throw fail(`${path}.${kind.typeName}`, `no ${kind.noun} type is named "${item.type_name}"`);
    return row[kind.typeId] as number;
  }
  throw fail(`${path}.${kind.typeId}`, `give ${kind.typeId} or ${kind.typeName}`);
}

function itemMailing(ctx: Ctx, mailingId: number | undefined, path: string): number | null {
  if (mailingId === undefined) return null;
  const row = stmt(ctx.db, 'SELECT 1 FROM mailings WHERE mailing_id = ? AND account_id = ? AND purged_at IS NULL').get(
    mailingId,
    ctx.accountId,
  );
  if (!row) throw fail(`${path}.mailing_id`, `mailing ${mailingId} not found in account ${ctx.accountId}`);
  return mailingId;
}

/**
 * POST /events/members and /touchpoints/members: every item is checked before any is
 * written, and all are written in one transaction, so one bad item is a 400 naming
 * its index and field and nothing changes. Answers the created records.
 */
export function recordMany(ctx: Ctx, kind: Kind, items: RecordInput[]): RecordRow[] {
  if (items.length === 0) throw fail(kind.itemsKey, 'must hold at least one item');
  if (items.length > MAX_ITEMS) throw fail(kind.itemsKey, `holds ${items.length} items; at most ${MAX_ITEMS} per call`);
  return inTransaction(ctx.db, () => {
    const checked = items.map((item, i) => {
      const path = `${kind.itemsKey}[${i}]`;
      return {
        member_id: itemMember(ctx, item, path),
        type_id: itemType(ctx, kind, item, path),
        mailing_id: itemMailing(ctx, item.mailing_id, path),
        item,
      };
    });
    const now = stamp(ctx.clock.now());
    return checked.map((c) =>
      getRecord(
        ctx,
        kind,
        insertRecord(ctx, kind, {
          member_id: c.member_id,
          type_id: c.type_id,
          monetary_value: c.item.monetary_value ?? 0,
          timestamp: c.item.timestamp ?? now,
          inserted_at: now,
          mailing_id: c.mailing_id,
          attributes: c.item.attributes ?? null,
        }),
      ),
    );
  });
}

/**
 * Writes one record whose member, type and mailing the caller has checked (a
 * workflow knows them); answers its id.
 */
export function insertRecord(
  ctx: Ctx,
  kind: Kind,
  r: {
    member_id: number;
    type_id: number;
    monetary_value: number;
    timestamp: string;
    inserted_at: string;
    mailing_id: number | null;
    attributes: Record<string, unknown> | null;
  },
): number {
  return Number(
    stmt(
      ctx.db,
      `INSERT INTO ${kind.recordsTable} (account_id, member_id, ${kind.typeId}, ${kind.prefix}_monetary_value,
         ${kind.prefix}_timestamp, inserted_at, mailing_id, attributes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      r.member_id,
      r.type_id,
      r.monetary_value,
      r.timestamp,
      r.inserted_at,
      r.mailing_id,
      r.attributes === null ? null : JSON.stringify(r.attributes),
    ).lastInsertRowid,
  );
}

/** Whether the account has this type (a workflow checks before it records). */
export function typeExists(ctx: Ctx, kind: Kind, typeId: number): boolean {
  return !!stmt(ctx.db, `SELECT 1 FROM ${kind.typesTable} WHERE ${kind.typeId} = ? AND account_id = ?`).get(typeId, ctx.accountId);
}

export function getRecord(ctx: Ctx, kind: Kind, recordId: number): RecordRow {
  const row = stmt(ctx.db, `SELECT * FROM ${kind.recordsTable} WHERE ${kind.recordId} = ? AND account_id = ?`).get(
    recordId,
    ctx.accountId,
  ) as RecordRow | undefined;
  if (!row) throw notFound(`${kind.noun} ${recordId} not found`);
  return row;
}

export function deleteRecord(ctx: Ctx, kind: Kind, recordId: number): true {
  return inTransaction(ctx.db, () => {
    getRecord(ctx, kind, recordId);
    stmt(ctx.db, `DELETE FROM ${kind.recordsTable} WHERE ${kind.recordId} = ?`).run(recordId);
    return true;
  });
}

/** A member of the account, archived ones too (their history is still theirs); 404 otherwise. */
function requireMember(ctx: Ctx, memberId: number) {
  if (!stmt(ctx.db, 'SELECT 1 FROM members WHERE account_id = ? AND member_id = ?').get(ctx.accountId, memberId))
    throw notFound(`member ${memberId} not found`);
}

/** A member's records in id order (the order they were recorded), a window at a time. */
export function memberRecords(ctx: Ctx, kind: Kind, memberId: number, w: Window = {}): RecordRow[] {
  const { limit, offset } = windowOf(w);
  requireMember(ctx, memberId);
  return stmt(ctx.db, `SELECT * FROM ${kind.recordsTable} WHERE member_id = ? ORDER BY ${kind.recordId} ${LIMIT_OFFSET}`).all(
    memberId,
    limit,
    offset,
  ) as RecordRow[];
}

/** One member's records, counted on the member's index range: no other member's rows are read. */
export function countMemberRecords(ctx: Ctx, kind: Kind, memberId: number): number {
  requireMember(ctx, memberId);
  return stmt(ctx.db, `SELECT COUNT(*) FROM ${kind.recordsTable} WHERE member_id = ?`).pluck().get(memberId) as number;
}
