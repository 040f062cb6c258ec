/**
 * Turning what people type (names, e-mail addresses, k=v pairs) into what the
 * service takes (ids, objects). Lookups go through the Api like any other call.
 */
import { readFileSync } from 'node:fs';
import type { Api } from '../client/api.js';
import { seg } from '../client/api.js';
import { ApiError } from '../errors.js';
import { NotFoundError, UsageError, type RunContext } from './context.js';
import { allPages } from './paging.js';

const isId = (ref: string) => /^\d+$/.test(ref);

/**
 * A flag that takes JSON (`--criteria`, `--actions`): the text itself, @FILE holding it,
 * or `-` for stdin where the flag allows it. Parsed here, so a typo is a usage error
 * before any call. The file is read synchronously: node:fs/promises loaded at the
 * start of every command cost more than reading a small file does.
 */
export async function jsonArgument(flag: string, arg: string, { stdin = false } = {}): Promise<unknown> {
  let text = arg;
  if (stdin && arg === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
  } else if (arg.startsWith('@')) {
    try {
      text = readFileSync(arg.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(`${flag} ${arg}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} is not JSON: ${(err as Error).message}`);
  }
}

/** Edit distance (insertions, deletions, substitutions, and swaps of neighbours: `frist` is one from `first`). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

/**
 * The known names closest to a mistyped one (case-insensitive; `_`, `-` and spaces
 * alike), within a distance that grows with the name's length; only the closest, at most three.
 */
export function similarNames(name: string, known: Iterable<string>): string[] {
  const norm = (x: string) => x.toLowerCase().replace(/[-_\s]+/g, '_');
  const wanted = norm(name);
  const limit = Math.max(1, Math.min(3, Math.floor(wanted.length / 4)));
  const scored = [...new Set(known)]
    .map((k) => ({ k, d: norm(k) === wanted ? 0 : distance(wanted, norm(k)) }))
    .map(({ k, d }) => ({ k, d: d > limit && wanted.length >= 3 && norm(k).includes(wanted) ? limit : d }))
    .filter(({ d }) => d <= limit)
    .sort((x, y) => x.d - y.d);
  // Only the closest: `frist_name` suggests first_name, not last_name too.
  return scored
    .filter(({ d }) => d === scored[0].d)
    .slice(0, 3)
    .map(({ k }) => k);
}

/** ` (did you mean "Gold"?)`, or nothing when no known name is close. */
export function didYouMean(name: string, known: Iterable<string>, quote = true): string {
  const similar = similarNames(name, known).map((k) => (quote ? `"${k}"` : k));
  return similar.length ? `; did you mean ${similar.join(' or ')}?` : '';
}

/** Repeatable-option collector for commander. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Comma lists as well as repeats: `--group a,b --group c`. */
export const collectList = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
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

/** A numeric id typed for WHAT (`MAILING`, `--mailing`), or a usage error that names it. */
export function numericId(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} is a numeric id, got "${value}"`);
  return Number(value);
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
      throw new NotFoundError(
        `no group named ${missing.map((m) => `"${m}"`).join(', ')} (see amsg groups list)${didYouMean(
          missing[0],
          groups.map((g) => g.group_name),
        )}`,
        'group',
      );
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
  if (!found)
    throw new NotFoundError(
      `no subscription named "${ref}" (see amsg subscriptions list)${didYouMean(
        ref,
        subscriptions.map((x) => x.subscription_name),
      )}`,
      'subscription',
    );
  return found.subscription_id;
}

/** A saved search (or segment) id for an id or a name (case-insensitive, among live searches). */
export async function searchId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const searches = await allPages<{ search_id: number; name: string }>(api, '/searches');
  const found = searches.find((x) => x.name.toLowerCase() === ref.toLowerCase());
  if (!found)
    throw new NotFoundError(
      `no search named "${ref}" (see amsg searches list)${didYouMean(
        ref,
        searches.map((x) => x.name),
      )}`,
      'search',
    );
  return found.search_id;
}

/** A field id for an id or a shortcut name. */
export async function fieldId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const fields = await api.get<{ field_id: number; shortcut_name: string }[]>('/fields');
  const f = fields.find((x) => x.shortcut_name.toLowerCase() === ref.toLowerCase());
  if (!f)
    throw new NotFoundError(
      `no field named "${ref}" (see amsg fields list)${didYouMean(
        ref,
        fields.map((x) => x.shortcut_name),
        false,
      )}`,
      'field',
    );
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

/** `unknown field "firstname"` → ` (did you mean first_name?)`, from the account's fields; nothing when none is close. */
export async function fieldSuggestion(api: Api, name: string): Promise<string> {
  const fields = await api.get<{ shortcut_name: string }[]>('/fields').catch(() => []);
  const similar = similarNames(
    name,
    fields.map((f) => f.shortcut_name),
  );
  return similar.length ? ` (did you mean ${similar.join(' or ')}?)` : '';
}

/** A mailing id for an id or a name (case-insensitive; archived and canceled ones too), refused when the name is ambiguous. */
export async function mailingId(api: Api, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const mailings = await api.get<{ mailing_id: number; name: string }[]>('/mailings', {
    include_archived: true,
    mailing_types: 'm,t,r,s,c',
    mailing_statuses: 'p,a,i,s,x,c,w,u,f',
  });
  const found = mailings.filter((m) => m.name.toLowerCase() === ref.toLowerCase());
  if (found.length > 1)
    throw new UsageError(`${found.length} mailings are named "${ref}" (${found.map((m) => m.mailing_id).join(', ')}): give the id`);
  if (!found.length)
    throw new NotFoundError(
      `no mailing named "${ref}" (see amsg mailings list)${didYouMean(
        ref,
        mailings.map((m) => m.name),
      )}`,
      'mailing',
    );
  return found[0].mailing_id;
}

/**
 * Adds what the service could not know to its refusal: a suggestion for an unknown
 * field name, and that a member not found is archived (and how to see it). Runs once
 * for every command's failure (see action() in context.ts); it only reads.
 */
export async function explainRefusal(api: Api, err: ApiError): Promise<ApiError> {
  const field = /unknown (?:member )?field "([^"]+)"/.exec(err.message)?.[1];
  if (err.status === 400 && field) {
    const hint = await fieldSuggestion(api, field);
    if (hint) return new ApiError(err.status, `${err.message}${hint}`, withoutError(err.body));
  }
  const member = /^member (\S+) not found$/.exec(err.message)?.[1];
  if (err.status === 404 && member) {
    const path = isId(member) ? `/members/${member}` : `/members/email/${seg(member)}`;
    const archived = await api.get<{ deleted_at: string | null }>(path, { deleted: true }).catch(() => undefined);
    if (archived?.deleted_at)
      return new ApiError(404, `${err.message}: it is archived (amsg members get ${member} --deleted shows it)`, withoutError(err.body));
  }
  return err;
}

const withoutError = (body: Record<string, unknown>) => {
  const { error: _e, ...details } = body;
  return details;
};
