/**
 * Turning what people type (names, e-mail addresses, k=v pairs) into what the
 * service takes (ids, objects). Lookups go through the Api like any other call.
 */
import type { Api } from '../client/api.js';
import { seg } from '../client/api.js';
import { ApiError } from '../errors.js';
import { UsageError, type RunContext } from './context.js';
import { allPages } from './paging.js';

const isId = (ref: string) => /^\d+$/.test(ref);

/** Repeatable-option collector for commander. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Comma lists as well as repeats: `--group a,b --group c`. */
export const collectList = (value: string, previous: string[] = []) => [
  ...previous,
  ...value.split(',').map((s) => s.trim()).filter(Boolean),
];

/** `--field name=value` pairs to an object; a value starting with [ or { is JSON (text[] fields). */
export function parseFieldPairs(pairs: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--field takes name=value, got "${pair}"`);
    const name = pair.slice(0, eq).trim();
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    if (/^\s*[[{]/.test(raw)) {
      try {
        value = JSON.parse(raw);
      } catch {
        throw new UsageError(`--field ${name}: the value looks like JSON but does not parse: ${raw}`);
      }
    } else if (raw === '') value = null;
    out[name] = value;
  }
  return out;
}

export function parseIds(refs: string[], what: string): number[] {
  return refs.map((r) => {
    if (!isId(r)) throw new UsageError(`${what} must be numeric ids, got "${r}"`);
    return Number(r);
  });
}

/** A member id, or the id of the member with this e-mail address. */
export async function memberId(api: Api, ref: string, deleted = true): Promise<number> {
  if (isId(ref)) return Number(ref);
  if (!ref.includes('@')) throw new UsageError(`a member is a numeric id or an e-mail address, got "${ref}"`);
  const m = await api.get<{ member_id: number }>(`/members/email/${seg(ref)}`, deleted ? { deleted: true } : undefined);
  return m.member_id;
}

interface GroupRef {
  member_group_id: number;
  group_name: string;
}

/**
 * Group ids for ids or names (case-insensitive). With create, missing names are
 * created (and said so); otherwise an unknown name is a usage error.
 */
export async function groupIds(api: Api, ctx: RunContext, refs: string[] = [], create = false): Promise<number[]> {
  if (!refs.length) return [];
  const names = refs.filter((r) => !isId(r));
  const byName = new Map<string, number>();
  if (names.length) {
    const groups = await allPages<GroupRef>(api, '/groups', { group_types: 'g,h,s' });
    for (const g of groups) byName.set(g.group_name.toLowerCase(), g.member_group_id);
    const missing = [...new Set(names.filter((n) => !byName.has(n.toLowerCase())))];
    if (missing.length && !create)
      throw new UsageError(`no group named ${missing.map((m) => `"${m}"`).join(', ')} (see amsg groups list)`);
    if (missing.length) {
      try {
        const created = await api.post<GroupRef[]>('/groups', { groups: missing.map((group_name) => ({ group_name })) });
        for (const g of created) {
          byName.set(g.group_name.toLowerCase(), g.member_group_id);
          ctx.note(`created group "${g.group_name}" (id ${g.member_group_id})`);
        }
      } catch (err) {
        // Another process (a parallel import script) created one of them first:
        // creation is all-or-none, so look them all up again.
        if (!(err instanceof ApiError && err.status === 400 && /already exists/.test(err.message))) throw err;
        const again = await allPages<GroupRef>(api, '/groups', { group_types: 'g,h,s' });
        for (const g of again) byName.set(g.group_name.toLowerCase(), g.member_group_id);
        const still = missing.filter((n) => !byName.has(n.toLowerCase()));
        if (still.length) return groupIds(api, ctx, refs, create);
      }
    }
  }
  return refs.map((r) => (isId(r) ? Number(r) : byName.get(r.toLowerCase())!));
}

export async function groupId(api: Api, ctx: RunContext, ref: string): Promise<number> {
  return (await groupIds(api, ctx, [ref]))[0];
}

/**
 * A subscription id for an id or a name (case-insensitive, among live subscriptions;
 * a deleted one is reached by its id).
 */
export async function subscriptionId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const subscriptions = await api.get<{ subscription_id: number; subscription_name: string }[]>('/subscriptions');
  const found = subscriptions.find((x) => x.subscription_name.toLowerCase() === ref.toLowerCase());
  if (!found) throw new UsageError(`no subscription named "${ref}" (see amsg subscriptions list)`);
  return found.subscription_id;
}

/** A saved search (or segment) id for an id or a name (case-insensitive, among live searches). */
export async function searchId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const searches = await allPages<{ search_id: number; name: string }>(api, '/searches');
  const found = searches.find((x) => x.name.toLowerCase() === ref.toLowerCase());
  if (!found) throw new UsageError(`no search named "${ref}" (see amsg searches list)`);
  return found.search_id;
}

/** A field id for an id or a shortcut name. */
export async function fieldId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const fields = await api.get<{ field_id: number; shortcut_name: string }[]>('/fields');
  const f = fields.find((x) => x.shortcut_name.toLowerCase() === ref.toLowerCase());
  if (!f) throw new UsageError(`no field named "${ref}" (see amsg fields list)`);
  return f.field_id;
}

/** Status letters or words to the letter the service takes. */
export function statusLetter(value: string, allowed: string[]): string {
  const words: Record<string, string> = { active: 'a', error: 'e', optout: 'o', 'opt-out': 'o', forwarded: 'f' };
  const letter = words[value.toLowerCase()] ?? value;
  if (!allowed.includes(letter))
    throw new UsageError(`status must be one of ${allowed.join(', ')} (or active, error, optout), got "${value}"`);
  return letter;
}
