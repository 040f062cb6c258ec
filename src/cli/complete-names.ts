/**
 * The names a shell completes where a command takes a group, mailing, field, search,
 * segment or subscription (`amsg __complete KIND`, called by the completion scripts):
 * read from the database or service the command would act on, one a line. It must
 * be quick and quiet, since it runs at each Tab: no notes, and on any error (no
 * database, no service, a bad key) it prints nothing and exits 0.
 */
import type { Api } from '../client/api.js';

export const NAME_KINDS = ['groups', 'mailings', 'fields', 'searches', 'segments', 'subscriptions'] as const;
export type NameKind = (typeof NAME_KINDS)[number];

/** Each kind's list and the key of its name there. */
const LISTS: Record<NameKind, [path: string, key: string]> = {
  groups: ['/groups', 'group_name'],
  mailings: ['/mailings', 'name'],
  fields: ['/fields', 'shortcut_name'],
  searches: ['/searches', 'name'],
  segments: ['/segments', 'name'],
  subscriptions: ['/subscriptions', 'subscription_name'],
};

/** The names of a kind, each once, in the service's order. */
export async function namesOf(api: Api, kind: NameKind): Promise<string[]> {
  const [path, key] = LISTS[kind];
  const rows = await api.get<Record<string, unknown>[]>(path);
  const names = rows.map((r) => r[key]).filter((n): n is string => typeof n === 'string' && n.length > 0);
  return [...new Set(names)];
}

/** Completion has about a second: a service that has not answered by then gets no more time. */
export const COMPLETE_TIMEOUT_MS = 1500;
