import { inTransaction } from '../../store/db.js';
import { emitEvent } from '../webhooks/webhooks.js';
import { stmt } from '../../store/statements.js';
import { TableMemo } from '../../store/memo.js';
import { badRequest, invalid, notFound } from '../../errors.js';
import { coerceValue, type FieldType } from '../../values.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';

/** The spec's widget_type-by-field_type table; the first widget is the default. */
export const WIDGETS_BY_TYPE: Record<FieldType, readonly string[]> = {
  text: ['text', 'long', 'radio', 'select one'],
  'text[]': ['check_multiple', 'select multiple'],
  numeric: ['number'],
  boolean: ['checkbox'],
  date: ['date'],
  timestamp: ['date'],
};
export const WIDGETS_WITH_OPTIONS = ['check_multiple', 'select multiple', 'select one', 'radio'];

export interface FieldRecord {
  field_id: number;
  account_id: number;
  shortcut_name: string;
  display_name: string;
  short_display_name: string | null;
  field_type: FieldType;
  widget_type: string;
  required: boolean;
  column_order: number;
  deleted_at: string | null;
  options: string[] | null;
}

interface FieldRow extends Omit<FieldRecord, 'required' | 'options'> {
  required: number;
  options: string | null;
}

const toField = (r: FieldRow): FieldRecord => ({
  ...r,
  required: r.required === 1,
  options: r.options === null ? null : (JSON.parse(r.options) as string[]),
});

export function listFields(ctx: Ctx, includeDeleted = false): FieldRecord[] {
  const rows = stmt(
    ctx.db,
    `SELECT * FROM fields WHERE account_id = ? ${includeDeleted ? '' : 'AND deleted_at IS NULL'}
      ORDER BY column_order, field_id`,
  ).all(ctx.accountId) as FieldRow[];
  return rows.map(toField);
}

export function getField(ctx: Ctx, fieldId: number, includeDeleted = false): FieldRecord {
  const row = stmt(ctx.db, 'SELECT * FROM fields WHERE account_id = ? AND field_id = ?').get(ctx.accountId, fieldId) as
    | FieldRow
    | undefined;
  if (!row || (row.deleted_at && !includeDeleted)) throw notFound(`field ${fieldId} not found`);
  return toField(row);
}

export interface FieldInput {
  shortcut_name?: string;
  display_name?: string;
  short_display_name?: string;
  field_type?: FieldType;
  widget_type?: string;
  options?: string[];
  column_order?: number;
  required?: boolean;
}

/** Checks a complete field definition against the widget table and the options rule. */
function checkDefinition(f: Required<Pick<FieldInput, 'field_type' | 'widget_type'>> & { options?: string[] | null }) {
  const allowed = WIDGETS_BY_TYPE[f.field_type];
  if (!allowed.includes(f.widget_type))
    throw badRequest(`widget_type: "${f.widget_type}" is not allowed for field_type ${f.field_type} (allowed: ${allowed.join(', ')})`, {
      field: 'widget_type',
    });
  const needsOptions = WIDGETS_WITH_OPTIONS.includes(f.widget_type);
  if (needsOptions && !f.options?.length)
    throw badRequest(`options: widget_type ${f.widget_type} needs a non-empty list of options`, { field: 'options' });
  if (!needsOptions && f.options?.length)
    throw badRequest(`options: only ${WIDGETS_WITH_OPTIONS.join(', ')} widgets take options`, { field: 'options' });
  if (f.options && new Set(f.options).size !== f.options.length)
    throw badRequest('options: the options must be distinct', { field: 'options' });
}

function assertNameFree(ctx: Ctx, name: string, exceptId?: number) {
  const taken = stmt(
    ctx.db,
    'SELECT field_id FROM fields WHERE account_id = ? AND shortcut_name = ? COLLATE NOCASE AND deleted_at IS NULL',
  ).get(ctx.accountId, name) as { field_id: number } | undefined;
  if (taken && taken.field_id !== exceptId)
    throw badRequest(`shortcut_name: a field named "${name}" already exists (field ${taken.field_id})`, {
      field: 'shortcut_name',
    });
}

export function createField(ctx: Ctx, input: FieldInput & { shortcut_name: string; field_type: FieldType }): number {
  const widget_type = input.widget_type ?? WIDGETS_BY_TYPE[input.field_type][0];
  checkDefinition({ field_type: input.field_type, widget_type, options: input.options });
  return inTransaction(ctx.db, () => {
    assertNameFree(ctx, input.shortcut_name);
    const order =
      input.column_order ??
      (
        stmt(ctx.db, 'SELECT COALESCE(MAX(column_order), 0) + 1 AS next FROM fields WHERE account_id = ?').get(ctx.accountId) as {
          next: number;
        }
      ).next;
    const id = stmt(
      ctx.db,
      `INSERT INTO fields (account_id, shortcut_name, display_name, short_display_name, field_type, widget_type,
                           required, column_order, options)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      input.shortcut_name,
      input.display_name ?? input.shortcut_name,
      input.short_display_name ?? null,
      input.field_type,
      widget_type,
      input.required ? 1 : 0,
      order,
      input.options?.length ? JSON.stringify(input.options) : null,
    ).lastInsertRowid;
    emitEvent(ctx, 'field_create', () => fieldEvent(ctx, Number(id)));
    return Number(id);
  });
}

/**
 * Changes a field's definition. Changing field_type is refused while members hold
 * values (they would no longer match); clear the field first.
 */
export function updateField(ctx: Ctx, fieldId: number, input: FieldInput): number {
  return inTransaction(ctx.db, () => {
    const current = getField(ctx, fieldId);
    const next = { ...current, ...stripUndefined(input) } as FieldRecord;
    if (input.field_type && input.field_type !== current.field_type) {
      if (fieldHasValues(ctx, fieldId))
        throw badRequest(`field_type: field ${current.shortcut_name} holds member values; clear it before changing its type`, {
          field: 'field_type',
        });
      if (!input.widget_type) next.widget_type = WIDGETS_BY_TYPE[next.field_type][0];
    }
    // Moving to a widget that takes no options drops the old ones.
    if (input.options === undefined && !WIDGETS_WITH_OPTIONS.includes(next.widget_type)) next.options = null;
    checkDefinition(next);
    keepRelationshipOptions(ctx, next);
    if (input.shortcut_name) assertNameFree(ctx, input.shortcut_name, fieldId);
    stmt(
      ctx.db,
      `UPDATE fields SET shortcut_name = ?, display_name = ?, short_display_name = ?, field_type = ?, widget_type = ?,
                         required = ?, column_order = ?, options = ?
        WHERE field_id = ?`,
    ).run(
      next.shortcut_name,
      next.display_name,
      next.short_display_name,
      next.field_type,
      next.widget_type,
      next.required ? 1 : 0,
      next.column_order,
      next.options?.length ? JSON.stringify(next.options) : null,
      fieldId,
    );
    emitEvent(ctx, 'field_update', () => fieldEvent(ctx, fieldId));
    return fieldId;
  });
}

/** A field as its webhook events name it. */
function fieldEvent(ctx: Ctx, fieldId: number, extra: object = {}) {
  const f = getField(ctx, fieldId, true);
  return {
    field: { field_id: f.field_id, shortcut_name: f.shortcut_name, display_name: f.display_name, field_type: f.field_type },
    ...extra,
  };
}

/** The relationship a field belongs to, as parent or child (a field belongs to one at most). */
function relationshipOf(ctx: Ctx, fieldId: number): RelationshipRow | undefined {
  return stmt(ctx.db, 'SELECT * FROM field_relationships WHERE account_id = ? AND (parent_field_id = ? OR child_field_id = ?)').get(
    ctx.accountId,
    fieldId,
    fieldId,
  ) as RelationshipRow | undefined;
}

/** A field in a relationship keeps the options the relationship names (change the relationship first). */
function keepRelationshipOptions(ctx: Ctx, next: FieldRecord) {
  const rel = relationshipOf(ctx, next.field_id);
  if (!rel) return;
  const map = JSON.parse(rel.options) as Record<string, string[]>;
  const used = new Set(rel.parent_field_id === next.field_id ? Object.keys(map) : Object.values(map).flat());
  const kept = new Set(next.options ?? []);
  const lost = [...used].filter((o) => !kept.has(o));
  if (lost.length || !kept.size)
    throw badRequest(
      `options: field ${next.shortcut_name} is in relationship ${rel.relationship_id} ("${rel.relationship_name}"), which uses ${lost.length ? lost.map((o) => `"${o}"`).join(', ') : 'its options'}; change or delete the relationship first`,
      { field: 'options' },
    );
}

const stripUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

function fieldHasValues(ctx: Ctx, fieldId: number): boolean {
  // The path is built here: a JS number binds as a REAL, which SQL would concatenate as "1.0".
  return !!stmt(ctx.db, `SELECT 1 FROM members WHERE account_id = ? AND json_type(field_values, ?) IS NOT NULL LIMIT 1`).get(
    ctx.accountId,
    `$."${fieldId}"`,
  );
}

/**
 * Deletes a field and its values (a later field of the same name starts empty). A field
 * in a relationship is refused: the relationship goes first, so no rule disappears unseen.
 */
export function deleteField(ctx: Ctx, fieldId: number): true {
  return inTransaction(ctx.db, () => {
    const field = getField(ctx, fieldId);
    const rel = relationshipOf(ctx, fieldId);
    if (rel)
      throw badRequest(
        `field_id: field ${field.shortcut_name} is in relationship ${rel.relationship_id} ("${rel.relationship_name}"); delete the relationship first`,
        { field: 'field_id' },
      );
    clearValues(ctx, fieldId);
    stmt(ctx.db, 'UPDATE fields SET deleted_at = ? WHERE field_id = ?').run(stamp(ctx.clock.now()), fieldId);
    emitEvent(ctx, 'field_delete', () => fieldEvent(ctx, fieldId));
    return true;
  });
}

/** Clears the field's value for every member of the account. */
export function clearField(ctx: Ctx, fieldId: number): true {
  return inTransaction(ctx.db, () => {
    getField(ctx, fieldId);
    clearValues(ctx, fieldId);
    emitEvent(ctx, 'field_update', () => fieldEvent(ctx, fieldId, { cleared: true }));
    return true;
  });
}

function clearValues(ctx: Ctx, fieldId: number) {
  const key = `$."${fieldId}"`;
  stmt(
    ctx.db,
    `UPDATE members SET field_values = json_remove(field_values, ?)
      WHERE account_id = ? AND json_type(field_values, ?) IS NOT NULL`,
  ).run(key, ctx.accountId, key);
}

// ---------------------------------------------------------------- member values

/** A field relationship as the checks of member values use it. */
export interface RelationshipRule {
  relationship_id: number;
  relationship_name: string;
  parent: FieldRecord;
  child: FieldRecord;
  /** Each parent option's allowed child options (a parent option not here allows none). */
  allowed: Map<string, Set<string>>;
}

/** A row of field_relationships (migration 020). */
export interface RelationshipRow {
  relationship_id: number;
  account_id: number;
  relationship_name: string;
  parent_field_id: number;
  child_field_id: number;
  options: string;
  created_at: string;
}

export function listRelationshipRows(ctx: Ctx): RelationshipRow[] {
  return stmt(ctx.db, 'SELECT * FROM field_relationships WHERE account_id = ? ORDER BY relationship_id').all(
    ctx.accountId,
  ) as RelationshipRow[];
}

/**
 * Why a member's parent and child values break a relationship, or undefined when they
 * do not (either one empty is no conflict). Multi-option values: each child option must
 * be allowed by one of the parent's.
 */
export function relationshipProblem(rule: RelationshipRule, parentValue: unknown, childValue: unknown): string | undefined {
  if (parentValue === null || parentValue === undefined || childValue === null || childValue === undefined) return undefined;
  // One option each (select one, radio): a lookup, no arrays (an import checks every row).
  if (typeof parentValue === 'string' && typeof childValue === 'string' && rule.allowed.get(parentValue)?.has(childValue)) return undefined;
  const parents = (Array.isArray(parentValue) ? parentValue : [parentValue]) as string[];
  const children = (Array.isArray(childValue) ? childValue : [childValue]) as string[];
  let bad: string | undefined;
  for (const c of children) if (!parents.some((p) => rule.allowed.get(p)?.has(c))) bad ??= c;
  if (bad === undefined) return undefined;
  const allows = parents
    .map((p) => `"${p}" allows ${[...(rule.allowed.get(p) ?? [])].map((c) => `"${c}"`).join(', ') || 'no value'}`)
    .join('; ');
  return `"${bad}" is not allowed when ${rule.parent.shortcut_name} is ${parents.map((p) => `"${p}"`).join(', ')} (relationship "${rule.relationship_name}": ${allows})`;
}

/** The live fields of an account by lower-cased shortcut name and by id, and their relationships, for member reads and writes. */
/** Each account's field catalog: nearly every request reads it, almost none changes it. */
const CATALOGS = new TableMemo<number, FieldCatalog>('fields', ['fields', 'field_relationships']);

export class FieldCatalog {
  readonly byName = new Map<string, FieldRecord>();
  readonly byId = new Map<number, FieldRecord>();
  readonly relationships: RelationshipRule[] = [];

  constructor(
    fields: FieldRecord[],
    private readonly relationshipRows: RelationshipRow[] = [],
  ) {
    for (const f of fields) {
      this.byName.set(f.shortcut_name.toLowerCase(), f);
      this.byId.set(f.field_id, f);
    }
    for (const r of relationshipRows) {
      const parent = this.byId.get(r.parent_field_id);
      const child = this.byId.get(r.child_field_id);
      if (!parent || !child) continue;
      const options = JSON.parse(r.options) as Record<string, string[]>;
      const allowed = new Map(Object.entries(options).map(([p, cs]) => [p, new Set(cs)]));
      this.relationships.push({ relationship_id: r.relationship_id, relationship_name: r.relationship_name, parent, child, allowed });
    }
  }

  /**
   * Checks a member's values after a write (`values`, by field id) against each
   * relationship whose parent or child the write `changed`: a 400 naming the child
   * field, the parent's value and what it allows.
   */
  checkRelationships(values: Record<string, unknown>, changed: Record<string, unknown>, path = 'fields') {
    for (const rule of this.relationships) {
      if (!(rule.parent.field_id in changed) && !(rule.child.field_id in changed)) continue;
      const problem = relationshipProblem(rule, values[rule.parent.field_id], values[rule.child.field_id]);
      if (problem) {
        const at = path ? `${path}.${rule.child.shortcut_name}` : rule.child.shortcut_name;
        throw badRequest(`${at}: ${problem}`, { field: at });
      }
    }
  }

  /** The live required fields: a signup form must fill each. */
  get required(): FieldRecord[] {
    return [...this.byId.values()].filter((f) => f.required);
  }

  private text?: string;

  /**
   * The catalog as text: two catalogs with the same signature check and store values
   * alike (the import writer compares the one rows were checked against with its own).
   */
  get signature(): string {
    return (this.text ??= JSON.stringify([[...this.byId.values()], this.relationshipRows]));
  }

  /** The account's catalog, read again only after the database changed (every member read needs it). */
  static of(ctx: Ctx): FieldCatalog {
    return CATALOGS.get(ctx.db, ctx.accountId, () => new FieldCatalog(listFields(ctx), listRelationshipRows(ctx)));
  }

  /**
   * Validates `{shortcut_name: value}` against the field types and answers the
   * changes keyed by field id (null removes a value). Unknown names are a 400, and so
   * is emptying a required field.
   */
  toStored(values: Record<string, unknown>, path = 'fields'): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values)) {
      const field = this.byName.get(name.toLowerCase());
      if (!field)
        throw badRequest(`${path}.${name}: unknown field "${name}" (define it with amsg fields create)`, {
          field: `${path}.${name}`,
        });
      if (value === null || value === '') {
        if (field.required) throw requiredCleared(field, `${path}.${name}`);
        out[field.field_id] = null;
      } else out[field.field_id] = coerceValue(field, value, `${path}.${name}`);
    }
    return out;
  }

  /**
   * toNamed as JSON text, written from the stored text without parsing it where it can
   * be: its keys renamed in place when they are all live fields already in column
   * order (as nearly every member's are), toNamed and JSON.stringify otherwise. A page
   * of members spent a fifth of its time parsing values only to write them again.
   * Stored values are an object of scalars and lists of strings, written without
   * whitespace (by JSON.stringify, and by SQLite's JSON functions for merges), so a
   * key is what follows the opening brace or a comma outside strings and lists; text
   * of any other form goes the slow way too. One pass, no regular expression: a
   * replace with a callback cost more than the parse it saves.
   */
  namedJson(stored: string): string {
    if (stored === '{}') return stored;
    const keys = (this.wireKeys ??= wireKeysOf(this.byId));
    const slow = () => JSON.stringify(this.toNamed(stored));
    let out = '';
    let from = 0;
    let last = -1;
    let inString = false;
    let depth = 0;
    for (let i = 0; i < stored.length; i++) {
      const c = stored.charCodeAt(i);
      if (inString) {
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACKET) depth--;
      else if ((c === OPEN_BRACE && i === 0) || (c === COMMA && depth === 0)) {
        // A key: "digits": (a field id), renamed to the field's name.
        let j = i + 2;
        let id = 0;
        if (stored.charCodeAt(i + 1) !== QUOTE) return slow();
        for (let d = stored.charCodeAt(j); d >= DIGIT_0 && d <= DIGIT_9; d = stored.charCodeAt(++j)) id = id * 10 + d - DIGIT_0;
        if (j === i + 2 || stored.charCodeAt(j) !== QUOTE || stored.charCodeAt(j + 1) !== COLON) return slow();
        const k = keys[id];
        if (!k || k.rank <= last) return slow();
        last = k.rank;
        out += stored.slice(from, i + 1) + k.key;
        from = j + 2;
        i = j + 1;
      } else if (c <= SPACE) return slow();
    }
    return out + stored.slice(from);
  }

  /** By field id: the field's place in column order and its key as JSON text. */
  private wireKeys?: { rank: number; key: string }[];

  /** Stored `{field_id: value}` JSON to `{shortcut_name: value}`, live fields only, in column order. */
  toNamed(stored: string): Record<string, unknown> {
    if (stored === '{}') return {};
    const values = JSON.parse(stored) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    // In column order, whatever order the values were written in.
    for (const field of this.byId.values()) {
      const value = values[field.field_id];
      if (value !== undefined) out[field.shortcut_name] = value;
    }
    return out;
  }
}

/** A required field may be left out of a write, but not emptied by one (docs/decisions.md). */
export const requiredCleared = (field: FieldRecord, path: string) =>
  invalid(path, `${field.shortcut_name} is a required field; it cannot be emptied`);

// Characters FieldCatalog.namedJson looks for.
const [QUOTE, BACKSLASH, OPEN_BRACE, COMMA, OPEN_BRACKET, CLOSE_BRACKET, COLON, DIGIT_0, DIGIT_9, SPACE] = [
  '"',
  '\\',
  '{',
  ',',
  '[',
  ']',
  ':',
  '0',
  '9',
  ' ',
].map((ch) => ch.charCodeAt(0));

function wireKeysOf(byId: Map<number, FieldRecord>): { rank: number; key: string }[] {
  const keys: { rank: number; key: string }[] = [];
  let rank = 0;
  for (const f of byId.values()) keys[f.field_id] = { rank: rank++, key: `${JSON.stringify(f.shortcut_name)}:` };
  return keys;
}
