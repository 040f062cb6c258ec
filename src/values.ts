/**
 * The rules of values, the same in every layer: what an e-mail address is, what each
 * field type takes (and the form it is stored in), and how a value is shown in an
 * error message. Pure: no database, no service, only errors.ts below it, so the
 * route table, the services and the CLI (the seeder checks a fixture before it writes
 * anything) all check a value by one definition.
 */
import { ApiError, invalid } from './errors.js';

export const FIELD_TYPES = ['text', 'text[]', 'numeric', 'boolean', 'date', 'timestamp'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** What a value's check needs of its field. */
export interface FieldRule {
  shortcut_name: string;
  field_type: FieldType;
  options: readonly string[] | null;
}

// Deliberately simple: one @, a dot in the domain, no spaces. The service is not an
// MTA; this catches typos and column mix-ups, which is what users get wrong.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;
export const isEmail = (v: string) => v.length <= 254 && EMAIL.test(v);

/**
 * A value as JSON text for an error message, cut after `max` characters. It walks no
 * more of the value than it shows (each level opens with a character), so neither a
 * huge value nor a deep one costs anything; JSON.stringify of a request value in a
 * message did both, and ran out of stack.
 */
export function preview(value: unknown, max = 60): string {
  let out = '';
  /** Appends v; false once the text is past max. */
  const put = (v: unknown): boolean => {
    if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length; i++) {
        if (i) out += ',';
        if (out.length > max || !put(v[i] === undefined ? null : v[i])) return false;
      }
      out += ']';
    } else if (v !== null && typeof v === 'object') {
      out += '{';
      let first = true;
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key];
        if (item === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(key.slice(0, max + 1))}:`;
        first = false;
        if (out.length > max || !put(item)) return false;
      }
      out += '}';
    } else if (typeof v === 'string') out += JSON.stringify(v.length > max ? v.slice(0, max + 1) : v);
    // Not JSON's null for Infinity or NaN: the message says what the value was.
    else out += String(v);
    return out.length <= max;
  };
  put(value);
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/**
 * Text as String.prototype.trim answers it, without the call when the first and last
 * characters are printable ASCII (nothing to trim): a large import trims every value.
 */
export function trimmed(text: string): string {
  const last = text.length - 1;
  if (last < 0) return text;
  const a = text.charCodeAt(0);
  const z = text.charCodeAt(last);
  return a > 32 && a < 127 && z > 32 && z < 127 ? text : text.trim();
}

/** The value of the ASCII digit at `i`, or -1. */
function digitAt(text: string, i: number): number {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/**
 * Whether text is a valid date YYYY-MM-DD (ASCII digits, a real day of a year from
 * 100 on), read by character codes: the regular expression's match array and the
 * numbers parsed from its groups were a large import's garbage, for every date value.
 */
export function isDate(text: string): boolean {
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return false;
  let y = 0;
  for (let i = 0; i < 4; i++) {
    const d = digitAt(text, i);
    if (d < 0) return false;
    y = y * 10 + d;
  }
  const m1 = digitAt(text, 5);
  const m2 = digitAt(text, 6);
  const d1 = digitAt(text, 8);
  const d2 = digitAt(text, 9);
  if (m1 < 0 || m2 < 0 || d1 < 0 || d2 < 0) return false;
  return validDate(y, m1 * 10 + m2, d1 * 10 + d2);
}

/** A number in decimal notation: sign, digits, a point, an exponent (too large for a double is refused after). */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether y-m-d is a day of the (proleptic Gregorian) calendar, by arithmetic: a Date
 * per value was a tenth of the checks of a large import. Years before 100 are refused,
 * as Date.UTC (which reads them as 19yy) made them.
 */
function validDate(y: number, m: number, d: number) {
  if (y < 100 || m < 1 || m > 12 || d < 1) return false;
  const leap = m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= DAYS_IN_MONTH[m - 1] + (leap ? 1 : 0);
}

function checkedOption(field: FieldRule, v: string, path: string): string {
  if (field.options && !field.options.includes(v))
    throw invalid(path, `"${v}" is not one of the options of ${field.shortcut_name} (${field.options.join(', ')})`);
  return v;
}

/** Checks one value against its field's type (and options) and answers its stored form. */
export function coerceValue(field: FieldRule, value: unknown, path: string): unknown {
  // Plain functions rather than closures made per call: a large import calls this for
  // every value of every row.
  const text = typeof value === 'string' ? trimmed(value) : undefined;
  switch (field.field_type) {
    case 'text':
      if (typeof value === 'number') return checkedOption(field, String(value), path);
      if (typeof value !== 'string') throw invalid(path, `must be text for a text field`);
      return checkedOption(field, value, path);
    case 'text[]': {
      const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : undefined;
      if (!items || items.some((v) => typeof v !== 'string')) throw invalid(path, 'must be a list of strings for a text[] field');
      return (items as string[]).map((v) => checkedOption(field, v, path));
    }
    case 'numeric': {
      // Number() alone also reads 0x10, 0b101, 0o17 and Infinity, and '' as 0.
      const n = typeof value === 'number' ? value : text !== undefined && DECIMAL.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n)) throw invalid(path, `must be a number for a numeric field, got ${preview(value)}`);
      return n;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (text !== undefined && /^(true|1|yes)$/i.test(text)) return true;
      if (text !== undefined && /^(false|0|no)$/i.test(text)) return false;
      throw invalid(path, `must be true or false for a boolean field, got ${preview(value)}`);
    case 'date':
      if (text === undefined || !isDate(text)) throw invalid(path, `must be a date YYYY-MM-DD for a date field, got ${preview(value)}`);
      return text;
    case 'timestamp': {
      const m = text !== undefined ? /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(text) : null;
      const t = text !== undefined ? Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`) : NaN;
      if (!m || Number.isNaN(t) || !validDate(+m[1], +m[2], +m[3]))
        throw invalid(path, `must be a date-time YYYY-MM-DDThh:mm:ss for a timestamp field, got ${preview(value)}`);
      return new Date(t).toISOString().slice(0, 19);
    }
  }
}

/**
 * Why a value cannot be stored in its field, as coerceValue says it (without a path),
 * or undefined when it can: for a check made before anything is sent (the seeder's).
 */
export function valueProblem(field: FieldRule, value: unknown): string | undefined {
  try {
    coerceValue(field, value, '');
    return undefined;
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
}
