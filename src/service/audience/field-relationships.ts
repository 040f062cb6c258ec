/**
 * Field relationships: a parent field's option limits which options its child field
 * may hold (the spec's "Field relationship"). The rules that member writes must follow
 * are checked by FieldCatalog (fields.ts), which every write path already holds.
 */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { getField, listRelationshipRows, WIDGETS_WITH_OPTIONS, type FieldRecord, type RelationshipRow } from './fields.js';

export interface RelatedField {
  field_id: number;
  shortcut_name: string;
  display_name: string;
  options: string[];
  widget_type: string;
}

export interface RelationshipRecord {
  relationship_id: number;
  relationship_name: string;
  account_id: number;
  created_at: string;
  parent_field: RelatedField;
  child_field: RelatedField;
  options: Record<string, string[]>;
}

export interface RelationshipInput {
  relationship_name?: string;
  parent_field_id?: number;
  child_field_id?: number;
  options?: Record<string, string[]>;
}

const related = (f: FieldRecord): RelatedField => ({
  field_id: f.field_id,
  shortcut_name: f.shortcut_name,
  display_name: f.display_name,
  options: f.options ?? [],
  widget_type: f.widget_type,
});

function toRecord(ctx: Ctx, r: RelationshipRow): RelationshipRecord {
  return {
    relationship_id: r.relationship_id,
    relationship_name: r.relationship_name,
    account_id: r.account_id,
    created_at: r.created_at,
    // Deleting a field that is in a relationship is refused, so both are live.
    parent_field: related(getField(ctx, r.parent_field_id, true)),
    child_field: related(getField(ctx, r.child_field_id, true)),
    options: JSON.parse(r.options) as Record<string, string[]>,
  };
}

export function listRelationships(ctx: Ctx): RelationshipRecord[] {
  return listRelationshipRows(ctx).map((r) => toRecord(ctx, r));
}

function relationshipRow(ctx: Ctx, id: number): RelationshipRow {
  const row = stmt(ctx.db, 'SELECT * FROM field_relationships WHERE account_id = ? AND relationship_id = ?').get(ctx.accountId, id) as
    | RelationshipRow
    | undefined;
  if (!row) throw notFound(`field relationship ${id} not found`);
  return row;
}

export function getRelationship(ctx: Ctx, id: number): RelationshipRecord {
  return toRecord(ctx, relationshipRow(ctx, id));
}

/** A field of the relationship: live, of a type that has options. */
function optionField(ctx: Ctx, fieldId: number, param: string): FieldRecord {
  let field: FieldRecord;
  try {
    field = getField(ctx, fieldId);
  } catch {
    throw badRequest(`${param}: there is no field ${fieldId}`, { field: param });
  }
  if (!WIDGETS_WITH_OPTIONS.includes(field.widget_type) || !field.options?.length)
    throw badRequest(
      `${param}: field ${field.shortcut_name} is a ${field.widget_type} field, which has no options (a relationship takes ${WIDGETS_WITH_OPTIONS.join(', ')} fields)`,
      { field: param },
    );
  return field;
}

/** Checks a whole configuration (create, or an update merged over the stored one); a 400 names the first problem. */
function checkConfiguration(ctx: Ctx, c: Required<RelationshipInput>, exceptId?: number) {
  const taken = stmt(
    ctx.db,
    'SELECT relationship_id FROM field_relationships WHERE account_id = ? AND relationship_name = ? COLLATE NOCASE',
  ).get(ctx.accountId, c.relationship_name) as { relationship_id: number } | undefined;
  if (taken && taken.relationship_id !== exceptId)
    throw badRequest(
      `relationship_name: a relationship named "${c.relationship_name}" already exists (relationship ${taken.relationship_id})`,
      { field: 'relationship_name' },
    );
  if (c.parent_field_id === c.child_field_id)
    throw badRequest(`child_field_id: the parent and the child are the same field (${c.parent_field_id})`, {
      field: 'child_field_id',
    });
  const parent = optionField(ctx, c.parent_field_id, 'parent_field_id');
  const child = optionField(ctx, c.child_field_id, 'child_field_id');
  for (const [param, field] of [
    ['parent_field_id', parent],
    ['child_field_id', child],
  ] as const) {
    const other = stmt(
      ctx.db,
      `SELECT relationship_id, relationship_name FROM field_relationships
        WHERE account_id = ? AND (parent_field_id = ? OR child_field_id = ?) AND relationship_id IS NOT ?`,
    ).get(ctx.accountId, field.field_id, field.field_id, exceptId ?? null) as
      | { relationship_id: number; relationship_name: string }
      | undefined;
    if (other)
      throw badRequest(
        `${param}: field ${field.shortcut_name} already belongs to relationship ${other.relationship_id} ("${other.relationship_name}"); a field may belong to only one relationship`,
        { field: param },
      );
  }
  checkOptions(parent, child, c.options);
}

function checkOptions(parent: FieldRecord, child: FieldRecord, options: Record<string, string[]>) {
  const parentOptions = new Set(parent.options ?? []);
  const childOptions = new Set(child.options ?? []);
  for (const [p, allowed] of Object.entries(options)) {
    if (!parentOptions.has(p))
      throw badRequest(
        `options.${p}: "${p}" is not an option of the parent field ${parent.shortcut_name} (${[...parentOptions].join(', ')})`,
        {
          field: `options.${p}`,
        },
      );
    const bad = allowed.filter((c) => !childOptions.has(c));
    if (bad.length)
      throw badRequest(
        `options.${p}: ${bad.map((c) => `"${c}"`).join(', ')} ${bad.length > 1 ? 'are not options' : 'is not an option'} of the child field ${child.shortcut_name} (${[...childOptions].join(', ')})`,
        { field: `options.${p}` },
      );
  }
}

export function createRelationship(ctx: Ctx, input: Required<RelationshipInput>): RelationshipRecord {
  return inTransaction(ctx.db, () => {
    checkConfiguration(ctx, input);
    const id = stmt(
      ctx.db,
      `INSERT INTO field_relationships (account_id, relationship_name, parent_field_id, child_field_id, options, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      input.relationship_name,
      input.parent_field_id,
      input.child_field_id,
      JSON.stringify(input.options),
      stamp(ctx.clock.now()),
    ).lastInsertRowid;
    return getRelationship(ctx, Number(id));
  });
}

/** PUT: any of the create parameters, the whole resulting configuration checked again. */
export function updateRelationship(ctx: Ctx, id: number, input: RelationshipInput): RelationshipRecord {
  return inTransaction(ctx.db, () => {
    const row = relationshipRow(ctx, id);
    const next: Required<RelationshipInput> = {
      relationship_name: input.relationship_name ?? row.relationship_name,
      parent_field_id: input.parent_field_id ?? row.parent_field_id,
      child_field_id: input.child_field_id ?? row.child_field_id,
      options: input.options ?? (JSON.parse(row.options) as Record<string, string[]>),
    };
    checkConfiguration(ctx, next, id);
    stmt(
      ctx.db,
      `UPDATE field_relationships SET relationship_name = ?, parent_field_id = ?, child_field_id = ?, options = ?
        WHERE relationship_id = ?`,
    ).run(next.relationship_name, next.parent_field_id, next.child_field_id, JSON.stringify(next.options), id);
    return getRelationship(ctx, id);
  });
}

export function deleteRelationship(ctx: Ctx, id: number): true {
  return inTransaction(ctx.db, () => {
    relationshipRow(ctx, id);
    stmt(ctx.db, 'DELETE FROM field_relationships WHERE relationship_id = ?').run(id);
    return true;
  });
}
