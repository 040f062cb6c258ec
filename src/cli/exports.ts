/** What the exports commands need beyond plain calls: who is asking, and waiting for an export to be done. */
import { ApiError } from '../errors.js';
import type { Api } from '../client/api.js';
import { UsageError, type RunContext } from './context.js';

export interface ExportRecord {
  export_id: number;
  export_type: 'a' | 'm';
  status: 'q' | 'p' | 'o' | 'e';
  export_name: string;
}

const STATUS_WORDS: Record<string, string> = { q: 'queued', p: 'in progress', o: 'ok', e: 'error' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The requesting user's e-mail (the spec's user_id): the given one, else whom the key (or local mode) acts as. */
export async function actingUserEmail(api: Api, given: string | undefined): Promise<string> {
  if (given) return given;
  try {
    return (await api.get<{ email: string }>('/users/me')).email;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw new UsageError('cannot tell which user you are (this service has no GET /users/me): give --user-email');
    throw err;
  }
}

/**
 * Polls an export until it is done (o), saying each new status on stderr. The local
 * service answers exports already done; a remote one may run them as jobs.
 */
export async function waitForExport(ctx: RunContext, api: Api, id: number): Promise<ExportRecord> {
  let delay = 250;
  let said = '';
  const started = Date.now();
  let saidAt = started;
  for (;;) {
    const record = await api.get<ExportRecord>(`/exports/${id}`);
    if (record.status === 'o') return record;
    if (record.status === 'e') throw new ApiError(500, `export ${id} failed on the service (status e)`);
    // While the service builds the file: each new status, and every few seconds how long it has taken.
    const now = Date.now();
    if (record.status !== said || now - saidAt >= 5_000) {
      const elapsed = record.status === said ? ` (${Math.round((now - started) / 1000)}s)` : '';
      ctx.note(`export ${id}: ${STATUS_WORDS[record.status] ?? record.status}…${elapsed}`);
      saidAt = now;
    }
    said = record.status;
    await sleep(delay);
    delay = Math.min(delay * 1.5, 2_000);
  }
}
