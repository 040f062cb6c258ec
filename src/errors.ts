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

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, message, details);
export const notFound = (message: string) => new ApiError(404, message);
export const forbidden = (message: string) => new ApiError(403, message);

/** Throws a 400 naming the field when cond is false. */
export function check(cond: unknown, field: string, reason: string): asserts cond {
  if (!cond) throw badRequest(`${field}: ${reason}`, { field });
}
