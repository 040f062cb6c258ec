/**
 * The one error type of the service interface: an HTTP status and the JSON body the
 * service answers with. Thrown by the service layer, carried unchanged by both
 * transports, so local and remote callers see the same thing.
 *
 * It lives below every layer (services throw it, the route table encodes it, the
 * client rethrows it). This module has no imports on purpose: the HTTP client uses it without loading
 * the route table or the store.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly body: { error: string; [key: string]: unknown };

  constructor(status: number, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = { error: message, ...details };
  }

  static fromResponse(status: number, body: unknown): ApiError {
    if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
      const { error, ...details } = body as { error: string };
      return new ApiError(status, error, details);
    }
    return new ApiError(status, typeof body === 'string' && body ? body : `HTTP ${status}`);
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) => new ApiError(400, message, details);
export const notFound = (message: string) => new ApiError(404, message);
export const forbidden = (message: string) => new ApiError(403, message);

/** A validation failure: a 400 that names the value's path (when there is one) and the reason. */
export function invalid(path: string, reason: string): ApiError {
  return new ApiError(400, path ? `${path}: ${reason}` : reason, path ? { field: path } : undefined);
}

/** Throws a 400 naming the field when cond is false. */
export function check(cond: unknown, field: string, reason: string): asserts cond {
  if (!cond) throw invalid(field, reason);
}

// ---------------------------------------------------------------- the nesting bound of request JSON

/*
 * One rule for both ends, here because both ends load this module and nothing else of
 * the other's (a module of its own was one more file for every local command to load):
 * the Router refuses a body (or JSON text inside one) that nests deeper, and the HTTP
 * client checks a body before it serializes it (JSON.stringify of 5,000 levels
 * overflows the stack), so local and remote callers get the same 400.
 */

/**
 * How deep JSON in a request may nest arrays and objects (a body counts as level 1).
 * Far beyond any real request (search criteria nest 32 predicates at most), and
 * shallow enough that every recursive check, JSON.stringify included, stays far from
 * the stack limit: 5,000 levels answered a 500 "Maximum call stack size exceeded".
 */
export const MAX_JSON_DEPTH = 64;

/** Whether v opens arrays or objects more than `levels` deep (recursing at most that far). */
function deeperThan(v: unknown, levels: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      if (typeof item === 'object' && item !== null && deeperThan(item, levels - 1)) return true;
    }
    return false;
  }
  for (const key in v) {
    const item = (v as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && deeperThan(item, levels - 1)) return true;
  }
  return false;
}

/**
 * Answers JSON from a request (a body, or JSON text inside one) when it nests at most
 * MAX_JSON_DEPTH levels; otherwise a 400 naming `path`, or for an object, the key of
 * it that goes too deep.
 */
export function boundedJson<T>(value: T, path: string): T {
  if (!deeperThan(value, MAX_JSON_DEPTH)) return value;
  let where = path;
  if (!Array.isArray(value))
    for (const key in value as object)
      if (deeperThan((value as Record<string, unknown>)[key], MAX_JSON_DEPTH - 1)) {
        where = path ? `${path}.${key}` : key;
        break;
      }
  const reason = `nested too deep: JSON in a request may nest arrays and objects ${MAX_JSON_DEPTH} levels deep at most`;
  if (!where) throw new ApiError(400, `request body ${reason}`);
  throw new ApiError(400, `${where}: ${reason}`, { field: where });
}

/**
 * The response header that says a list's window was cut: a window asked longer than
 * the service answers (500 records) gets its first 500 and this header, never a 400
 * (real clients ask for large windows; the real service pages at 500). Its value reads
 * `start=0; end=500; asked=1000000`: the window answered, and the end asked for. Here,
 * below every layer, for the reason ApiError is: the route table writes it and both
 * transports read it.
 */
export const WINDOW_CUT_HEADER = 'x-amsg-window-cut';

/** A window the service cut: the one it answered [start, end), and the end asked for. */
export interface WindowCut {
  start: number;
  end: number;
  asked: number;
}

export const windowCutText = (cut: WindowCut) => `start=${cut.start}; end=${cut.end}; asked=${cut.asked}`;

/** The header's value read back; undefined when it is not one. */
export function parseWindowCut(text: string | undefined): WindowCut | undefined {
  const m = text && /^start=(\d+); end=(\d+); asked=(\d+)$/.exec(text.trim());
  return m ? { start: Number(m[1]), end: Number(m[2]), asked: Number(m[3]) } : undefined;
}
