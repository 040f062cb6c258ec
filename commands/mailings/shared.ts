// What the verbs of `amsg mailings` share: the status letters, the flag parsers (parseDuration
// serves triggers too; numeric ids are src/cli/resolve.ts numericId) and the audience flags of create and resend.
import { readFileSync } from 'node:fs';
import { MAILING_STATUS_WORDS } from '../../src/status-words.js';
import type { Command } from 'commander';
import type { Api } from '../../src/client/api.js';
import { UsageError, type RunContext } from '../../src/cli/context.js';
import { collectList, groupIds, parseIds, searchId, subscriptionId } from '../../src/cli/resolve.js';

/** The spec's mailing status letters, and the words people may type for them. */
export const STATUS_NAMES = MAILING_STATUS_WORDS;

export interface MailingRecord {
  mailing_id: number;
  mailing_type: string;
  mailing_status: string;
  recipient_count: number;
  send_at: string | null;
  failure_message: string | null;
  split_test?: { variants: { mailing_id: number; subject: string }[] };
}

/** `--status p,a` / `--status pending --status paused` to the letters the service takes. */
export function letters(values: string[] | undefined, names: Record<string, string>, flag: string): string | undefined {
  if (!values?.length) return undefined;
  const byWord = Object.fromEntries(Object.entries(names).map(([k, v]) => [v, k]));
  return values
    .map((v) => {
      const letter = names[v] ? v : byWord[v.toLowerCase()];
      if (!letter)
        throw new UsageError(
          `${flag} takes ${Object.entries(names)
            .map(([k, w]) => `${k} (${w})`)
            .join(', ')}; got "${v}"`,
        );
      return letter;
    })
    .join(',');
}

/** A duration in seconds: `90`, or units such as `1d2h`, `30m`, `1h30m15s`. */
export function parseDuration(value: string, flag: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/i.exec(value.trim());
  if (!m || !value.trim() || m.slice(1).every((x) => x === undefined))
    throw new UsageError(`${flag} takes seconds or units such as 1d2h, 30m, 1h30m15s; got "${value}"`);
  const [d, h, min, s] = m.slice(1).map((x) => Number(x ?? 0));
  return ((d * 24 + h) * 60 + min) * 60 + s;
}

export function parseInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number, got "${value}"`);
  return Number(value);
}

/** A date-time as people type it; the service checks it again and stores it. */
export function checkDateTime(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const text = value.replace(/^@D:/, '');
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) || Number.isNaN(new Date(zoned).getTime()))
    throw new UsageError(`${flag} takes a date-time such as 2026-05-01T09:00:00Z (UTC when no offset is given), got "${value}"`);
  return value;
}

/** The text of FILE, or of stdin for `-`. */
export function readText(file: string, flag: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${file === '-' ? 'stdin' : file}: ${(err as Error).message}`);
  }
}

export function readOptional(file: string | undefined, flag: string): string | undefined {
  return file === undefined ? undefined : readText(file, flag);
}

export function checkOneStdin(pairs: [string, string | string[] | undefined][]) {
  const fromStdin = pairs.filter(([, v]) => (Array.isArray(v) ? v.includes('-') : v === '-')).map(([flag]) => flag);
  if (fromStdin.length > 1) throw new UsageError(`only one of ${fromStdin.join(', ')} can read stdin (-); give a file for the others`);
}

/** A positional id argument. */

export const ids = (values: string[] | undefined, flag: string) => (values ? parseIds(values, flag) : undefined);
export const searchIds = async (api: Api, refs: string[] | undefined) =>
  refs ? Promise.all(refs.map((r) => searchId(api, r))) : undefined;

// ---------------------------------------------------------------- audience flags

export interface AudienceFlags {
  group?: string[];
  subscription?: string[];
  search?: string[];
  segment?: string[];
  to?: string[];
  headsUp?: string[];
}

export const audienceOptions = (cmd: Command) =>
  cmd
    .option('--group <name|id>', 'send to the members of this group (repeatable, or a comma list)', collectList)
    .option('--subscription <name|id>', 'send to the subscribed members of this subscription (repeatable)', collectList)
    .option('--search <name|id>', 'send to the members a saved search finds (repeatable)', collectList)
    .option('--segment <name|id>', 'send to the members of a segment (repeatable)', collectList)
    .option('--to <email>', 'send to this address; new addresses become members (repeatable, or a comma list)', collectList)
    .option('--heads-up <email>', 'send a heads-up copy to this address (repeatable, or a comma list)', collectList);

export async function audienceBody(api: Api, ctx: RunContext, o: AudienceFlags) {
  return {
    recipient_groups: o.group ? await groupIds(api, ctx, o.group) : undefined,
    recipient_subscriptions: o.subscription ? await Promise.all(o.subscription.map((r) => subscriptionId(api, r))) : undefined,
    recipient_searches: await searchIds(api, o.search),
    recipient_segments: await searchIds(api, o.segment),
    recipient_emails: o.to,
    heads_up_emails: o.headsUp,
  };
}
