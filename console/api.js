// The console's one way to the service: `/ui/api/<route path>` answers exactly what the API's
// route table answers for that path (the same operation, access rules and errors), with the
// signed-in session's cookie in place of the key pair. Writes carry the session's CSRF token.

/** An answer other than 2xx: the status and the service's JSON error body. */
export class ApiError extends Error {
  constructor(status, body) {
    super(typeof body?.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let sessionCsrf = '';
/** Set from GET /ui/api/session; every write sends it back in x-csrf-token. */
export const setCsrfToken = (token) => {
  sessionCsrf = token ?? '';
};
export const csrfToken = () => sessionCsrf;

/** Where the sign-in page returns to. */
export const loginUrl = () => `/ui/login?next=${encodeURIComponent(location.pathname + location.search)}`;

/**
 * Calls the service. `path` is the route table's path with its values filled in
 * (`/12/mailings/3`); `query` values that are undefined, null or '' are left out.
 */
export async function api(path, { method = 'GET', query, body, signal } = {}) {
  const url = new URL(`/ui/api${path}`, location.origin);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }
  const headers = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    headers['x-csrf-token'] = sessionCsrf;
  }
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text.slice(0, 200) };
  }
  if (res.status === 401 && path !== '/session') {
    location.assign(loginUrl());
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}
