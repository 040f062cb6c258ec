/**
 * The validation vocabulary of the route table: each schema checks and converts one
 * input value and describes itself as JSON Schema for /openapi.json.
 *
 * Why not zod: importing zod 4 costs about as much as starting node itself on these
 * machines (measured ~130 ms against ~145 ms for `node -e 0`), and every local CLI
 * call loads the route table. The spec's inputs are few and peculiar (booleans that
 * accept "1", comma lists of status letters, ids as path text), so a small set of
 * schemas that say exactly those rules is shorter than adapting a general library.
 */
import { invalid } from '../errors.js';
import { stamp } from '../service/clock.js';
import { isEmail, preview } from '../values.js';

export { invalid, isEmail, preview };

export type JsonSchema = Record<string, unknown>;

export interface Schema<T> {
  /** Converts a raw value or throws Invalid with the reason (the caller adds the field path). */
  parse(value: unknown, path: string): T;
  json(): JsonSchema;
  readonly optional?: boolean;
  /** Takes JSON null as a value of its own (the spec's "or null"). */
  readonly nullable?: boolean;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

// Says what a value is without walking it: an error message must cost nothing
// whatever the size or depth of the value it names.
const describe = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `"${v.length > 40 ? v.slice(0, 40) + '…' : v}"`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
};

export { MAX_JSON_DEPTH, boundedJson } from '../errors.js';

function schema<T>(json: JsonSchema, parse: (value: unknown, path: string) => T): Schema<T> {
  return { parse, json: () => json };
}

// ---------------------------------------------------------------- scalars

/** An integer id inside a JSON body. Ids are 64-bit but must stay exact in JSON numbers. */
export const int = (opts: { min?: number; max?: number } = {}) =>
  schema<number>({ type: 'integer', minimum: opts.min, maximum: opts.max }, (v, path) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw invalid(path, `must be an integer, got ${describe(v)}`);
    if (opts.min !== undefined && v < opts.min) throw invalid(path, `must be at least ${opts.min}`);
    if (opts.max !== undefined && v > opts.max) throw invalid(path, `must be at most ${opts.max}`);
    return v;
  });

export const id = () => int({ min: 1 });

export const number = () =>
  schema<number>({ type: 'number' }, (v, path) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(path, `must be a number, got ${describe(v)}`);
    return v;
  });

/** A share of a whole, 0 to 1 (0.4 for 40%). */
export const fraction = () =>
  schema<number>({ type: 'number', minimum: 0, maximum: 1 }, (v, path) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(path, `must be a number from 0 to 1 (0.4 for 40%), got ${describe(v)}`);
    if (v < 0 || v > 1) throw invalid(path, `must be from 0 to 1 (0.4 for 40%), got ${v}`);
    return v;
  });

export const string = (opts: { min?: number; max?: number; pattern?: RegExp; hint?: string } = {}) =>
  schema<string>({ type: 'string', minLength: opts.min, maxLength: opts.max }, (v, path) => {
    if (typeof v !== 'string') throw invalid(path, `must be a string, got ${describe(v)}`);
    if (opts.min !== undefined && v.length < opts.min)
      throw invalid(path, opts.min === 1 ? 'must not be empty' : `must be at least ${opts.min} characters`);
    if (opts.max !== undefined && v.length > opts.max) throw invalid(path, `must be at most ${opts.max} characters`);
    if (opts.pattern && !opts.pattern.test(v)) throw invalid(path, opts.hint ?? `must match ${opts.pattern}`);
    return v;
  });

/** An e-mail address, normalized to lower case (the service's member identity). */
export const email = () =>
  schema<string>({ type: 'string', format: 'email' }, (v, path) => {
    if (typeof v !== 'string') throw invalid(path, `must be an e-mail address string, got ${describe(v)}`);
    const trimmed = v.trim();
    if (!isEmail(trimmed)) throw invalid(path, `${describe(v)} is not a valid e-mail address`);
    return trimmed.toLowerCase();
  });

export const boolean = () =>
  schema<boolean>({ type: 'boolean' }, (v, path) => {
    if (typeof v !== 'boolean') throw invalid(path, `must be true or false, got ${describe(v)}`);
    return v;
  });

export const oneOf = <const T extends string>(values: readonly T[]) =>
  schema<T>({ type: 'string', enum: values }, (v, path) => {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v))
      throw invalid(path, `must be one of ${values.join(', ')}, got ${describe(v)}`);
    return v as T;
  });

/** Any JSON value, checked only by the handler (e.g. member field values, typed per field). */
export const any = () => schema<unknown>({}, (v) => v);

/**
 * A date-time in a body: ISO 8601 (an offset or Z, or none for UTC) or the service's
 * own `@D:YYYY-MM-DDThh:mm:ss`. Answers the stored form (UTC 'YYYY-MM-DDThh:mm:ss.ffffff').
 */
export const dateTime = () =>
  schema<string>({ type: 'string', format: 'date-time' }, (v, path) => {
    const text = typeof v === 'string' ? v.replace(/^@D:/, '') : '';
    const withZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
    const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?/.test(text) ? new Date(withZone) : new Date(NaN);
    if (Number.isNaN(date.getTime()))
      throw invalid(path, `must be a date-time such as 2026-05-01T09:00:00Z or @D:2026-05-01T09:00:00, got ${preview(v)}`);
    return stamp(date);
  });

// ---------------------------------------------------------------- text inputs (path and query)

/** A path or query integer id, which arrives as text. */
export const idText = () =>
  schema<number>({ type: 'integer', minimum: 1 }, (v, path) => {
    const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw invalid(path, `must be a positive integer id, got ${describe(v)}`);
    return n;
  });

/** An id that may arrive as an integer or as digits in a string (the spec types some ids as strings). */
export const idOrText = () =>
  schema<number>({ type: ['integer', 'string'], minimum: 1 }, (v, path) =>
    typeof v === 'number' ? id().parse(v, path) : idText().parse(v, path),
  );

export const intText = (opts: { min?: number } = {}) =>
  schema<number>({ type: 'integer', minimum: opts.min }, (v, path) => {
    const n = typeof v === 'string' && /^-?\d{1,16}$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n)) throw invalid(path, `must be an integer, got ${describe(v)}`);
    if (opts.min !== undefined && n < opts.min) throw invalid(path, `must be at least ${opts.min}`);
    return n;
  });

/** The `start`/`end` window of a list (zero-based, [start, end)); spread into a query object. Checked together by windowOf. */
export const windowParams = () => ({ start: optional(intText({ min: 0 })), end: optional(intText({ min: 0 })) });

/**
 * Query booleans: true or 1, false or 0 (the spec's "true or 1"), in any case: the real
 * service documents its flags as "Accepts True or 1", and Python's clients write `True`.
 * A bare `?flag` is true.
 */
export const flag = () =>
  schema<boolean>({ type: 'boolean' }, (v, path) => {
    const text = typeof v === 'string' ? v.toLowerCase() : v;
    if (text === 'true' || text === '1' || text === '') return true;
    if (text === 'false' || text === '0') return false;
    throw invalid(path, `must be true, 1, false or 0, got ${describe(v)}`);
  });

/** Query ids, comma-separated (e.g. import_ids=1,2). */
export const idList = () =>
  schema<number[]>({ type: 'string', description: 'comma-separated ids' }, (v, path) => {
    const items =
      typeof v === 'string'
        ? v
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : [];
    if (!items.length) throw invalid(path, 'must be a comma-separated list of ids, such as 1,2');
    return items.map((item) => idText().parse(item, path));
  });

/** A comma-separated list of letters from a fixed set, e.g. mailing_statuses=p,a. */
export const letterList = <const T extends string>(values: readonly T[]) =>
  schema<T[]>({ type: 'string', description: `comma-separated subset of ${values.join(',')}` }, (v, path) => {
    if (typeof v !== 'string') throw invalid(path, `must be a comma-separated list of ${values.join(', ')}`);
    const items = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const item of items)
      if (!(values as readonly string[]).includes(item)) throw invalid(path, `"${item}" is not one of ${values.join(', ')}`);
    return items as T[];
  });

// ---------------------------------------------------------------- composites

/**
 * A parameter that may be left out. An explicit JSON null is "not given" too: some of
 * the real service's clients serialize unset parameters as null. Where the spec says
 * "or null", a `nullable` inside this takes the null as a value of its own.
 */
export function optional<T>(inner: Schema<T>): Schema<T | undefined> {
  return {
    optional: true,
    json: () => inner.json(),
    parse: (v, path) => (v === undefined || (v === null && !inner.nullable) ? undefined : inner.parse(v, path)),
  };
}

/** A value that may also be JSON null (e.g. to clear an optional setting). */
export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return {
    optional: inner.optional,
    nullable: true,
    json: () => ({ anyOf: [inner.json(), { type: 'null' }] }),
    parse: (v, path) => (v === null ? null : inner.parse(v, path)),
  };
}

export function withDefault<T>(inner: Schema<T>, fallback: T): Schema<T> {
  return {
    optional: true,
    json: () => ({ ...inner.json(), default: fallback }),
    parse: (v, path) => (v === undefined || v === null ? fallback : inner.parse(v, path)),
  };
}

export function array<T>(item: Schema<T>, opts: { min?: number; max?: number } = {}): Schema<T[]> {
  return schema({ type: 'array', items: item.json(), minItems: opts.min, maxItems: opts.max }, (v, path) => {
    if (!Array.isArray(v)) throw invalid(path, `must be an array, got ${describe(v)}`);
    if (opts.min !== undefined && v.length < opts.min)
      throw invalid(path, opts.min === 1 ? 'must not be empty' : `must hold at least ${opts.min} items`);
    if (opts.max !== undefined && v.length > opts.max) throw invalid(path, `must hold at most ${opts.max} items`);
    return v.map((x, i) => item.parse(x, `${path}[${i}]`));
  });
}

/**
 * Rows of text values (CSV rows): checked in one loop, with the path of a bad value
 * built only for its error (a path string per value cost more than the check).
 */
export function textRows(opts: { max: number }): Schema<string[][]> {
  return schema({ type: 'array', items: { type: 'array', items: { type: 'string' } }, maxItems: opts.max }, (v, path) => {
    if (!Array.isArray(v)) throw invalid(path, `must be an array, got ${describe(v)}`);
    if (v.length > opts.max) throw invalid(path, `must hold at most ${opts.max} items`);
    for (let i = 0; i < v.length; i++) {
      const row: unknown = v[i];
      if (!Array.isArray(row)) throw invalid(`${path}[${i}]`, `must be an array of strings, got ${describe(row)}`);
      for (let j = 0; j < row.length; j++)
        if (typeof row[j] !== 'string') throw invalid(`${path}[${i}][${j}]`, `must be a string, got ${describe(row[j])}`);
    }
    return v as string[][];
  });
}

/** A JSON object of free-form keys (e.g. member `fields`), values checked by the handler. */
export const record = () =>
  schema<Record<string, unknown>>({ type: 'object', additionalProperties: true }, (v, path) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid(path, `must be an object, got ${describe(v)}`);
    return v as Record<string, unknown>;
  });

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Infer<S[K]> ? K : never }[keyof S];
export type ObjectOf<S extends Shape> = { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & {
  [K in OptionalKeys<S>]?: Infer<S[K]>;
};

/**
 * Where the request being parsed collects the body keys it ignores (null: an unknown
 * key is a 400). Parsing is synchronous, so one request's keys never mix with another's.
 */
let ignoredKeys: string[] | null = null;

/**
 * Parses with unknown object keys ignored and collected (the real service ignores
 * parameters it does not know, and its own clients send some), unless `strict`.
 */
export function parseLenient<T>(parse: () => T, strict: boolean): { value: T; ignored: string[] } {
  const previous = ignoredKeys;
  const ignored: string[] = [];
  ignoredKeys = strict ? null : ignored;
  try {
    return { value: parse(), ignored };
  } finally {
    ignoredKeys = previous;
  }
}

/**
 * An object with known keys. An unknown key is ignored and named (see parseLenient)
 * when the Router parses a request leniently; `strict` keeps it a 400 always, where
 * the spec makes it one.
 */
export function object<S extends Shape>(shape: S, opts: { allowUnknown?: boolean; strict?: boolean } = {}): Schema<ObjectOf<S>> {
  const required = Object.keys(shape).filter((k) => !shape[k].optional);
  // Every request parses its params and query with these: listed once, not per parse.
  const entries = Object.entries(shape);
  const known = Object.keys(shape).join(', ') || 'none';
  return {
    json: () => ({
      type: 'object',
      properties: Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, s.json()])),
      required: required.length ? required : undefined,
      // Unknown keys are ignored (and named in a response header) unless the object is strict,
      // or the whole server is (`amsg serve --strict`), so the document says they are allowed.
      additionalProperties: !opts.strict,
    }),
    parse(v, path) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid(path, `must be a JSON object, got ${describe(v)}`);
      const input = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      const prefix = path ? `${path}.` : '';
      if (!opts.allowUnknown)
        for (const key of Object.keys(input))
          if (!(key in shape)) {
            if (ignoredKeys && !opts.strict) ignoredKeys.push(`${prefix}${key}`);
            else throw invalid(`${prefix}${key}`, `unknown parameter (expected one of: ${known})`);
          }
      for (const [key, s] of entries) {
        const value = input[key];
        if (value === undefined && !s.optional) throw invalid(`${prefix}${key}`, 'is required');
        const parsed = s.parse(value, `${prefix}${key}`);
        if (parsed !== undefined) out[key] = parsed;
      }
      return out as ObjectOf<S>;
    },
  };
}
