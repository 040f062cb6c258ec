/**
 * What a prompt or a dry run names: the thing the user typed, as people know it
 * (`group "Trial" (7)`, `member hans@example.com (4)`), and how much it touches.
 * Read-only calls through the Api, like every lookup.
 */
import { MEMBER_STATUS_WORDS } from '../status-words.js';
import type { Api } from '../client/api.js';
import { ApiError } from '../errors.js';
import { humanDate, thousands } from './output.js';
import { pages } from './paging.js';

/** `27,190 memberships`, `1 member`. */
export const counted = (n: number, one: string, many = `${one}s`) => `${thousands(n)} ${n === 1 ? one : many}`;

/** Status letters as words, for people (JSON keeps the letters). */
export const STATUS_WORDS: Record<string, string> = { ...MEMBER_STATUS_WORDS, s: 'skipped' };
export const statusWord = (letter: string) => STATUS_WORDS[letter] ?? letter;

interface GroupCounts {
  group_name: string;
  active_count: number;
  error_count: number;
  optout_count: number;
}

/** A group as people name it, and how many members it has of each status. */
export async function describeGroup(api: Api, id: number) {
  const g = await api.get<GroupCounts>(`/groups/${id}`);
  const byStatus: Record<string, number> = { a: g.active_count, e: g.error_count, o: g.optout_count };
  return { label: `group "${g.group_name}" (${id})`, members: g.active_count + g.error_count + g.optout_count, byStatus };
}

/** `member ada@example.com (4)` (archived members too). */
export async function describeMember(api: Api, id: number): Promise<string> {
  const m = await api.get<{ email: string }>(`/members/${id}`, { deleted: true }).catch(() => undefined);
  return m ? `member ${m.email} (${id})` : `member ${id}`;
}

/** One member named, or how many. */
export async function describeMembers(api: Api, ids: number[]): Promise<string> {
  return ids.length === 1 ? describeMember(api, ids[0]) : counted(ids.length, 'member');
}

/** `mailing 1 "Spring sale", scheduled for 2026-12-01 09:00`. */
export async function describeMailing(api: Api, id: number): Promise<string> {
  const m = await api.get<{ name: string; send_at: string | null }>(`/mailings/${id}`).catch(() => undefined);
  if (!m) return `mailing ${id}`;
  return `mailing ${id} "${m.name}"${m.send_at ? `, scheduled for ${humanDate(m.send_at)}` : ''}`;
}

/** The mailing statuses the service cancels (DELETE /mailings/cancel/{id}): pending and paused. */
const CANCELLABLE = new Set(['p', 'a']);
const MAILING_STATUS_WORDS: Record<string, string> = {
  p: 'pending',
  a: 'paused',
  s: 'sending',
  c: 'complete',
  x: 'canceled',
  f: 'failed',
  w: 'waiting for a split-test winner',
  u: 'unapproved',
};

/**
 * The mailing to cancel, as the prompt names it; a mailing the service would refuse
 * to cancel (complete, sending, already canceled) is refused here, before anyone is
 * asked to confirm what cannot happen: the same 403 and words as the service's.
 */
export async function describeCancellable(api: Api, id: number): Promise<string> {
  const m = await api.get<{ name: string; mailing_status: string }>(`/mailings/${id}`);
  if (!CANCELLABLE.has(m.mailing_status))
    throw new ApiError(
      403,
      `mailing ${id} "${m.name}" is ${MAILING_STATUS_WORDS[m.mailing_status] ?? m.mailing_status} (${m.mailing_status}): only a pending (p) or paused (a) mailing can be canceled; nothing was changed`,
      { mailing_status: m.mailing_status },
    );
  return describeMailing(api, id);
}

type StatusCounts = Record<string, number>;

/**
 * How many members, of the account or of a group, live or archived, of one status or
 * of any: the counts the service keeps, so a dry run costs the same at 1k and 1M.
 */
export async function countMembers(api: Api, which: { group_id?: number; archived?: boolean; status?: string }): Promise<number> {
  const counts = await api.get<{ live: StatusCounts; archived: StatusCounts }>('/members/counts', { group_id: which.group_id });
  const byStatus = counts[which.archived ? 'archived' : 'live'];
  return which.status ? (byStatus[which.status] ?? 0) : Object.values(byStatus).reduce((a, b) => a + b, 0);
}

/**
 * How many records of a windowed list match, read a page at a time: only where the
 * service keeps no count for the question (the members holding a field's value).
 */
export async function countWhere<T>(
  api: Api,
  path: string,
  query: Record<string, string | boolean | undefined>,
  match: (row: T) => boolean,
) {
  let n = 0;
  for await (const page of pages<T>(api, path, query)) for (const row of page) if (match(row)) n++;
  return n;
}
