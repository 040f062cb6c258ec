/**
 * The fixture file's shapes: small checkers that convert a parsed JSON/YAML value
 * and name the place of every problem (`members[3].feilds`). A fixture is refused
 * as a whole before anything is written, so every problem is collected, not only
 * the first.
 */

/** One problem of a fixture, at a path inside one file. */
export interface Problem {
  file: string;
  path: string;
  reason: string;
}

/** A fixture refused before anything was written: every problem, one line each. */
export class FixtureError extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => `${p.file}: ${p.path || '(top level)'}: ${p.reason}`).join('\n'));
  }
}

/** Collects the problems of one file while its shapes are checked. */
export class Checker {
  readonly problems: Problem[] = [];
  constructor(readonly file: string) {}
  fail(path: string, reason: string): undefined {
    this.problems.push({ file: this.file, path, reason });
    return undefined;
  }
}

/** Checks a value at a path; answers the converted value, or undefined after reporting a problem. */
export type Shape<T> = (v: unknown, path: string, c: Checker) => T | undefined;

const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};
const kindOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `${typeof v} ${show(v)}`;

export const str =
  (opts: { min?: number; max?: number; pattern?: RegExp; hint?: string } = {}): Shape<string> =>
  (v, path, c) => {
    if (typeof v !== 'string') return c.fail(path, `must be text, got ${kindOf(v)}`);
    if (v.length < (opts.min ?? 1)) return c.fail(path, 'must not be empty');
    if (opts.max !== undefined && v.length > opts.max) return c.fail(path, `must be at most ${opts.max} characters`);
    if (opts.pattern && !opts.pattern.test(v)) return c.fail(path, `${opts.hint ?? `must match ${opts.pattern}`}, got ${show(v)}`);
    return v;
  };

/** Text for an e-mail address: one @, something on both sides, no spaces (the service checks it again). */
export const email: Shape<string> = str({
  max: 254,
  pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  hint: 'must be an e-mail address',
});

export const num =
  (opts: { min?: number; max?: number; int?: boolean } = {}): Shape<number> =>
  (v, path, c) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return c.fail(path, `must be a number, got ${kindOf(v)}`);
    if (opts.int && !Number.isInteger(v)) return c.fail(path, `must be a whole number, got ${v}`);
    if (opts.min !== undefined && v < opts.min) return c.fail(path, `must be at least ${opts.min}, got ${v}`);
    if (opts.max !== undefined && v > opts.max) return c.fail(path, `must be at most ${opts.max}, got ${v}`);
    return v;
  };

export const bool: Shape<boolean> = (v, path, c) => (typeof v === 'boolean' ? v : c.fail(path, `must be true or false, got ${kindOf(v)}`));

export const oneOf =
  <T extends string>(values: readonly T[]): Shape<T> =>
  (v, path, c) =>
    typeof v === 'string' && (values as readonly string[]).includes(v)
      ? (v as T)
      : c.fail(path, `must be one of ${values.join(', ')}, got ${show(v)}`);

/** Any JSON value (field values, search criteria: checked elsewhere, where their meaning is known). */
export const any: Shape<unknown> = (v) => v;

export const list =
  <T>(item: Shape<T>, opts: { min?: number } = {}): Shape<T[]> =>
  (v, path, c) => {
    if (!Array.isArray(v)) return c.fail(path, `must be a list, got ${kindOf(v)}`);
    if (v.length < (opts.min ?? 0)) return c.fail(path, `must hold at least ${opts.min} item(s)`);
    const out: T[] = [];
    let ok = true;
    v.forEach((x, i) => {
      const r = item(x, `${path}[${i}]`, c);
      if (r === undefined) ok = false;
      else out.push(r);
    });
    return ok ? out : undefined;
  };

/** An object whose keys are names (field values, group shares): each value checked by `value`. */
export const record =
  <T>(value: Shape<T>): Shape<Record<string, T>> =>
  (v, path, c) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return c.fail(path, `must be an object, got ${kindOf(v)}`);
    const out: Record<string, T> = {};
    let ok = true;
    for (const [k, x] of Object.entries(v)) {
      const r = value(x, `${path}.${k}`, c);
      if (r === undefined) ok = false;
      else out[k] = r;
    }
    return ok ? out : undefined;
  };

type Props = Record<string, Shape<unknown>>;
type Out<P extends Props, R extends keyof P> = { [K in R]: NonNullable<ReturnType<P[K]>> } & {
  [K in Exclude<keyof P, R>]?: NonNullable<ReturnType<P[K]>>;
};

/**
 * An object with known keys: `required` must be there, any other key of `props` may
 * be, and a key that is not in `props` is refused by name (a misspelled key that is
 * silently ignored is a fixture that does not do what it says).
 */
export function obj<P extends Props, R extends keyof P = never>(props: P, required: readonly R[] = []): Shape<Out<P, R>> {
  const known = Object.keys(props);
  return (v, path, c) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return c.fail(path, `must be an object, got ${kindOf(v)}`);
    const at = (k: string) => (path ? `${path}.${k}` : k);
    let ok = true;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const shape = props[k];
      if (!shape) {
        c.fail(at(k), `unknown key (expected ${known.join(', ')})`);
        ok = false;
        continue;
      }
      if (x === undefined || x === null) continue;
      const r = shape(x, at(k), c);
      if (r === undefined) ok = false;
      else out[k] = r;
    }
    for (const k of required)
      if (out[k as string] === undefined && (v as Record<string, unknown>)[k as string] == null) {
        c.fail(at(k as string), 'is required');
        ok = false;
      }
    return ok ? (out as Out<P, R>) : undefined;
  };
}

/** A name alone, or the full object: `groups: [Gold, {group_name: Silver}]`. */
export const nameOr =
  <T>(nameKey: string, full: Shape<T>): Shape<T> =>
  (v, path, c) =>
    typeof v === 'string' ? full({ [nameKey]: v }, path, c) : full(v, path, c);
