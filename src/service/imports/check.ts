/** Checking rows before anything is written: pure, no database (the import writer thread's receiving side runs it). */
import { badRequest } from '../../errors.js';
import { coerceValue, isEmail, trimmed } from '../../values.js';
import { type FieldCatalog, relationshipProblem, requiredCleared, type FieldRecord, type RelationshipRule } from '../audience/fields.js';
import { normalizePhone, type SmsInput } from '../audience/members.js';

export interface RowError {
  /** Position of the row in the batch. */
  index: number;
  email: string | null;
  error: string;
}

/** A row not written because an earlier row of the import has its address (the first row wins). */
export interface DuplicateRow {
  /** Position of the row in the batch. */
  index: number;
  email: string;
  /** Position in the batch of the row that was written, or null when that row came in an earlier batch. */
  duplicate_of: number | null;
}

export interface BatchResult {
  import_id: number;
  /** Rows of this batch, and of the whole import so far. */
  received: number;
  num_members: number;
  added: number;
  updated: number;
  duplicates: number;
  skipped: number;
  errors: RowError[];
  /** The rows counted in `duplicates`, in row order. */
  duplicate_rows: DuplicateRow[];
}

export interface Counters {
  added: number;
  updated: number;
  duplicates: number;
  duplicateRows: DuplicateRow[];
  skipped: number;
  errors: RowError[];
  byGroup: Record<string, number>;
  fields: Set<string>;
}

/**
 * Rows of a batch after the checks that need no database (the address, each value
 * against its field's type, the sms object), ready to be written. Plain arrays of
 * strings and numbers, column by column: they cross to the import writer's thread
 * (import-writer.ts) as they are, and a row costs no object of its own.
 */
export interface CheckedRows {
  /** Per row that passed: its position in the batch. */
  index: number[];
  /** Lower-cased. */
  emails: string[];
  /** Field values as a merge patch (a null clears a value) ... */
  patches: string[];
  /** ... and as a new member's values (no nulls), or null where that is the patch itself. */
  fresh: (string | null)[];
  /** Which of fieldLists names the fields the row gives a value (counted only once it is written). */
  fieldList: number[];
  fieldLists: string[][];
  /** Which of groupLists the row's `groups` is, or -1 for none (only the import's groups). */
  groupList: number[];
  /** The rows' group lists as given (names or ids), each once: they are resolved by the writer. */
  groupLists: unknown[];
  /** The rows that have an sms object: [row, sms], row counting the passed rows. */
  sms: [number, SmsInput][];
  /** The rows the checks refused. */
  errors: RowError[];
  /**
   * Rows (counting the passed rows) that give one field of a relationship and leave
   * the other as the member has it: the writer checks them against the stored value.
   */
  againstStored: number[];
}

/**
 * Rows as a CSV file has them (an extension of the streamed import; what `amsg
 * members import` sends): the columns once, then each row's values in their order,
 * as text. A column is `email`, `groups` (group names separated by `;` or `|`,
 * created when missing), `phone_number` (the SMS number) or a field's shortcut
 * name. Values are trimmed, and an empty one leaves what the member has as it is.
 */
export interface CsvRows {
  columns: string[];
  rows: string[][];
}

/** A batch's rows: member objects (the spec's form, where '' or null clears a value), or CSV rows. */
export type RowsInput = Record<string, unknown>[] | CsvRows;

export const rowCount = (input: RowsInput): number => (Array.isArray(input) ? input.length : input.rows.length);

export const sliceRows = (input: RowsInput, start: number, end: number): RowsInput =>
  Array.isArray(input) ? input.slice(start, end) : { columns: input.columns, rows: input.rows.slice(start, end) };

/** Keys of a CSV row that are not field names. */
/**
 * Keys of a member row that are not field names: the address, the sms object, and
 * (an extension, for a CSV group column) `groups`, names or ids of groups to join;
 * named groups that do not exist are created.
 */
export const RESERVED = new Set(['email', 'sms', 'groups']);

const CSV_RESERVED = new Set(['email', 'groups', 'phone_number']);

/** How a CSV groups value separates names. */
const GROUP_SEPARATOR = /\s*[;|]\s*/;

/**
 * CSV columns each name a field or one of email, groups and phone_number, once, and
 * one of them is email: otherwise the batch is refused whole (a 400 naming each
 * problem) before anything is written.
 */
export function checkColumns(catalog: FieldCatalog, input: RowsInput) {
  if (Array.isArray(input)) return;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const column of input.columns) {
    const target = CSV_RESERVED.has(column) ? column : catalog.byName.get(column.toLowerCase())?.shortcut_name;
    if (target === undefined) problems.push(`"${column}" is not a field (nor email, groups or phone_number)`);
    else if (seen.has(target)) problems.push(`"${column}" is given twice`);
    else seen.add(target);
  }
  if (!seen.has('email')) problems.push('there is no email column');
  if (problems.length) throw badRequest(`columns: ${problems.join('; ')}`, { field: 'columns' });
}

/** Characters JSON.stringify escapes in a string: quote, backslash, controls, lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * What the rows with one key order do with each key, worked out once per batch: a
 * row's values land in slots, one per distinct field in ascending field id, so its
 * JSON is written in one pass with each key's text made once.
 */
interface Shape {
  keys: string[];
  /** Per key: its field, null for a key that is not a field (email, groups, …), undefined for an unknown name. */
  fields: (FieldRecord | null | undefined)[];
  /** Per key: its field's slot. */
  slotOf: number[];
  /** Per slot: `{"12":` and `,"12":`, the field id as a JSON key opening the object or following a value. */
  openKeys: string[];
  commaKeys: string[];
  /** Per slot: whether its text values never need escaping in JSON (a date field's: checked digits and dashes). */
  plain: boolean[];
  /** Which of CheckedRows.fieldLists names all the keys' fields (what a row with no empty value gives). */
  names: number;
  /** The current row's stored values, by slot. */
  scratch: unknown[];
  /**
   * The relationships with a key here for the parent, the child or both, with their
   * slots (-1: no key): worked out once per key order, so a row of a shape with none
   * pays nothing.
   */
  pairs: { rule: RelationshipRule; parent: number; child: number }[];
  /** Positions of the keys that are not fields, or -1. */
  email: number;
  groups: number;
  sms: number;
  phone: number;
}

function shapeOf(catalog: FieldCatalog, keys: string[], reserved: Set<string>, fieldLists: string[][]): Shape {
  const fields = keys.map((key) => (reserved.has(key) ? null : catalog.byName.get(key.toLowerCase())));
  const ids = [...new Set(fields.filter((f): f is FieldRecord => !!f).map((f) => f.field_id))].sort((a, b) => a - b);
  const pairs = catalog.relationships
    .map((rule) => ({ rule, parent: ids.indexOf(rule.parent.field_id), child: ids.indexOf(rule.child.field_id) }))
    .filter((p) => p.parent !== -1 || p.child !== -1);
  return {
    pairs,
    keys,
    fields,
    slotOf: fields.map((f) => (f ? ids.indexOf(f.field_id) : -1)),
    openKeys: ids.map((id) => `{"${id}":`),
    commaKeys: ids.map((id) => `,"${id}":`),
    plain: ids.map((id) => catalog.byId.get(id)?.field_type === 'date'),
    names: fieldLists.push(fields.filter((f): f is FieldRecord => !!f).map((f) => f.shortcut_name)) - 1,
    scratch: ids.map(() => undefined),
    email: reserved.has('email') ? keys.indexOf('email') : -1,
    groups: reserved.has('groups') ? keys.indexOf('groups') : -1,
    sms: reserved.has('sms') ? keys.indexOf('sms') : -1,
    phone: reserved.has('phone_number') ? keys.indexOf('phone_number') : -1,
  };
}

/**
 * The current row's `{field_id: value}` as JSON text, keys in ascending order as
 * JSON.stringify writes integer keys; without the nulls for a new member. Written by
 * hand because JSON.stringify of an object with integer keys took 2 µs a row.
 */
function slotsJson(shape: Shape, withNulls: boolean): string {
  const { scratch, openKeys, commaKeys, plain } = shape;
  let out = '';
  for (let k = 0; k < scratch.length; k++) {
    const v = scratch[k];
    if (v === undefined || (v === null && !withNulls)) continue;
    const key = out === '' ? openKeys[k] : commaKeys[k];
    // A string with nothing to escape is its own JSON between quotes (JSON.stringify
    // per value was most of this function's time); a finite number (all coerceValue
    // answers) is written by String as JSON.stringify writes it.
    if (typeof v === 'string') out += plain[k] || !NEEDS_ESCAPE.test(v) ? key + '"' + v + '"' : key + JSON.stringify(v);
    else if (typeof v === 'number') out += key + String(v);
    else out += key + JSON.stringify(v);
  }
  return out === '' ? '{}' : out + '}';
}

/** A group list of a member object (names and ids) as a text key, or undefined for anything else. */
function groupsKey(value: unknown): string | undefined {
  const list = Array.isArray(value) ? value : [value];
  let key = '';
  for (const g of list) {
    if (typeof g === 'string') key += `s${g}\u0000`;
    else if (typeof g === 'number') key += `n${g}\u0000`;
    else return undefined;
  }
  return key;
}

/** The group lists of a set of rows, each kept once (a group column repeats a few lists over and over). */
class GroupLists {
  private readonly byKey = new Map<string, number>();
  /** The CLI of old handed one array to every row with the same list: known by identity, no key to build. */
  private readonly byIdentity = new Map<unknown, number>();
  constructor(private readonly lists: unknown[]) {}

  /** A member object's `groups`: its list's number, or -1 for none. */
  ofValue(value: unknown): number {
    if (value === undefined || value === null || value === '') return -1;
    const known = this.byIdentity.get(value);
    if (known !== undefined) return known;
    const key = groupsKey(value);
    let n = key === undefined ? undefined : this.byKey.get(key);
    if (n === undefined) n = this.lists.push(value) - 1;
    if (key !== undefined) this.byKey.set(key, n);
    if (typeof value === 'object') this.byIdentity.set(value, n);
    return n;
  }

  /** A CSV groups value: its list's number, or -1 for none. */
  ofText(text: string): number {
    let n = this.byKey.get(text);
    if (n === undefined) {
      const names = text.split(GROUP_SEPARATOR).filter(Boolean);
      n = names.length ? this.lists.push(names) - 1 : -1;
      this.byKey.set(text, n);
    }
    return n;
  }
}

/**
 * Checks and converts one row of `shape`, given its values in key order, and adds it
 * to `out` (or its error). `csv`: the values are CSV text (trimmed; empty leaves a
 * value as it is); otherwise they are JSON values (null or '' clears a value).
 */
function checkRow(out: CheckedRows, shape: Shape, values: unknown[], index: number, csv: boolean, lists: GroupLists) {
  const emailValue = shape.email === -1 ? undefined : values[shape.email];
  const rawEmail = typeof emailValue === 'string' ? trimmed(emailValue) : null;
  try {
    if (!rawEmail || !isEmail(rawEmail)) throw badRequest(rawEmail ? `"${rawEmail}" is not a valid e-mail address` : 'email is missing');
    // Field values in key order (a field named twice in different case keeps the
    // last value, as an object's key would), stored by the field's slot.
    const { keys, fields, slotOf, scratch } = shape;
    if (csv) scratch.fill(undefined);
    let partial = false;
    for (let j = 0; j < keys.length; j++) {
      const field = fields[j];
      if (field === null) continue;
      if (field === undefined) throw badRequest(`unknown field "${keys[j]}"`);
      let value = values[j];
      if (csv) {
        value = trimmed(value as string);
        if (value === '') {
          partial = true;
          continue;
        }
      }
      let stored: unknown = null;
      if (value !== null && value !== '') stored = coerceValue(field, value, keys[j]);
      else if (field.required) throw requiredCleared(field, keys[j]);
      scratch[slotOf[j]] = stored;
      if (stored === null) partial = true;
    }
    // A pair the row gives is checked here; a value given against one left as it is,
    // by the writer against the member's stored value (a cleared value breaks nothing).
    let againstStored = false;
    for (let p = 0; p < shape.pairs.length; p++) {
      const { rule, parent, child } = shape.pairs[p];
      const parentValue = parent === -1 ? undefined : scratch[parent];
      const childValue = child === -1 ? undefined : scratch[child];
      if (parentValue !== undefined && childValue !== undefined) {
        const problem = relationshipProblem(rule, parentValue, childValue);
        if (problem) throw badRequest(`${rule.child.shortcut_name}: ${problem}`);
      } else {
        const given = parentValue !== undefined ? parentValue : childValue;
        if (given !== undefined && given !== null) againstStored = true;
      }
    }
    // The fields given a value: all of the shape's, or the ones not emptied.
    let fieldList = shape.names;
    if (partial) {
      const names: string[] = [];
      for (let j = 0; j < keys.length; j++) {
        const field = fields[j];
        if (!field) continue;
        const value = csv ? trimmed(values[j] as string) : values[j];
        if (value !== null && value !== '') names.push(field.shortcut_name);
      }
      fieldList = out.fieldLists.push(names) - 1;
    }
    let sms: SmsInput | undefined;
    if (shape.sms !== -1) sms = checkSms(values[shape.sms]);
    else if (shape.phone !== -1) {
      const phone = trimmed(values[shape.phone] as string);
      if (phone) sms = checkSms({ phone_number: phone });
    }
    const groupList =
      shape.groups === -1 ? -1 : csv ? lists.ofText(trimmed(values[shape.groups] as string)) : lists.ofValue(values[shape.groups]);
    const patch = slotsJson(shape, true);
    if (sms) out.sms.push([out.index.length, sms]);
    if (againstStored) out.againstStored.push(out.index.length);
    out.index.push(index);
    out.emails.push(rawEmail.toLowerCase());
    out.patches.push(patch);
    out.fresh.push(partial ? slotsJson(shape, false) : null);
    out.fieldList.push(fieldList);
    out.groupList.push(groupList);
  } catch (err) {
    out.errors.push({ index, email: rawEmail, error: (err as Error).message });
  }
}

/**
 * Checks and converts rows (positions `offset` on in their batch) against the field
 * catalog; a bad row is an error of its own, not the batch's. Needs no database, so
 * it runs on the thread that received the rows while the import writer writes.
 * What each key order does is worked out once (the rows of a batch nearly always
 * share one; CSV rows always do).
 */
export function checkRows(catalog: FieldCatalog, input: RowsInput, offset = 0): CheckedRows {
  const out: CheckedRows = {
    index: [],
    emails: [],
    patches: [],
    fresh: [],
    fieldList: [],
    fieldLists: [],
    groupList: [],
    groupLists: [],
    sms: [],
    errors: [],
    againstStored: [],
  };
  const lists = new GroupLists(out.groupLists);
  if (!Array.isArray(input)) {
    const shape = shapeOf(catalog, input.columns, CSV_RESERVED, out.fieldLists);
    const width = input.columns.length;
    input.rows.forEach((values, r) => {
      if (values.length === width) checkRow(out, shape, values, offset + r, true, lists);
      else
        out.errors.push({
          index: offset + r,
          email: null,
          error: `has ${values.length} values; there are ${width} columns`,
        });
    });
    return out;
  }
  const shapes = new Map<string, Shape>();
  let shape: Shape | undefined;
  for (let r = 0; r < input.length; r++) {
    const row = input[r];
    // The row's shape: the last one if its keys are the same, in the same order.
    let k = 0;
    if (shape !== undefined)
      for (const key in row) {
        if (shape.keys[k] !== key) {
          k = -1;
          break;
        }
        k++;
      }
    if (shape === undefined || k !== shape.keys.length) {
      const keys: string[] = [];
      for (const key in row) keys.push(key);
      const id = keys.join('\u0000');
      shape = shapes.get(id);
      if (!shape) shapes.set(id, (shape = shapeOf(catalog, keys, RESERVED, out.fieldLists)));
    }
    const keys = shape.keys;
    const values: unknown[] = [];
    for (let j = 0; j < keys.length; j++) values.push(row[keys[j]]);
    checkRow(out, shape, values, offset + r, false, lists);
  }
  return out;
}

const SMS_KEYS = new Set(['phone_number', 'region_code', 'transactional_status', 'promotional_status']);

/** A row's sms object, checked as far as it can be without the member (the number's form, the statuses). */
export function checkSms(value: unknown): SmsInput | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest('sms: must be an object like {"phone_number": "+4791234567"}');
  const sms = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(sms)) {
    if (!SMS_KEYS.has(key)) throw badRequest(`sms.${key}: unknown sms key (allowed: ${[...SMS_KEYS].join(', ')})`);
    if (typeof v !== 'string') throw badRequest(`sms.${key}: must be a string`);
    if (key.endsWith('_status') && v !== 'a' && v !== 'o') throw badRequest(`sms.${key}: must be a or o, got "${v}"`);
  }
  if (sms.phone_number !== undefined) normalizePhone(sms.phone_number as string, 'sms.phone_number');
  return sms as SmsInput;
}
