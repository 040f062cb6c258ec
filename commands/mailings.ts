import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import type { Api } from '../src/client/api.js';
import { action, examples, EXIT, UsageError, type RunContext } from '../src/cli/context.js';
import { describeCancellable } from '../src/cli/describe.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import {
  collect,
  collectList,
  fieldSuggestion,
  groupIds,
  mailingId as mailingRef,
  memberId,
  parseIds,
  searchId,
  subscriptionId,
} from '../src/cli/resolve.js';

const MAILING_COLUMNS = [
  'mailing_id',
  'mailing_type',
  'mailing_status',
  'name',
  'subject',
  'recipient_count',
  'send_at',
  'send_finished',
  'archived_ts',
];
const MEMBER_COLUMNS = ['member_id', 'email', 'status', 'fields', 'member_since', 'deleted_at'];

/** The spec's mailing status letters, and the words people may type for them. */
export const STATUS_NAMES: Record<string, string> = {
  p: 'pending',
  a: 'paused',
  i: 'injecting',
  s: 'sending',
  x: 'canceled',
  c: 'complete',
  w: 'waiting',
  u: 'unapproved',
  f: 'failed',
};
const TYPE_NAMES: Record<string, string> = { m: 'standard', t: 'test', r: 'trigger', s: 'subject', c: 'content' };
/** Where `wait` stops: the mailing will not move again by itself (w waits for a winner). */
const SETTLED = ['c', 'x', 'f', 'w'];
const MESSAGE_TYPES = ['all', 'html', 'plaintext', 'subject', 'webview_url'];

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
function letters(values: string[] | undefined, names: Record<string, string>, flag: string): string | undefined {
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

function parseInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number, got "${value}"`);
  return Number(value);
}

/** A date-time as people type it; the service checks it again and stores it. */
function checkDateTime(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const text = value.replace(/^@D:/, '');
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) || Number.isNaN(new Date(zoned).getTime()))
    throw new UsageError(`${flag} takes a date-time such as 2026-05-01T09:00:00Z (UTC when no offset is given), got "${value}"`);
  return value;
}

/** The text of FILE, or of stdin for `-`. */
function readText(file: string, flag: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${file === '-' ? 'stdin' : file}: ${(err as Error).message}`);
  }
}

function readOptional(file: string | undefined, flag: string): string | undefined {
  return file === undefined ? undefined : readText(file, flag);
}

function checkOneStdin(pairs: [string, string | string[] | undefined][]) {
  const fromStdin = pairs.filter(([, v]) => (Array.isArray(v) ? v.includes('-') : v === '-')).map(([flag]) => flag);
  if (fromStdin.length > 1) throw new UsageError(`only one of ${fromStdin.join(', ')} can read stdin (-); give a file for the others`);
}

/** A positional id argument. */
export function numericId(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} is a numeric id, got "${value}"`);
  return Number(value);
}

const ids = (values: string[] | undefined, flag: string) => (values ? parseIds(values, flag) : undefined);
const searchIds = async (api: Api, refs: string[] | undefined) => (refs ? Promise.all(refs.map((r) => searchId(api, r))) : undefined);

// ---------------------------------------------------------------- audience flags

interface AudienceFlags {
  group?: string[];
  subscription?: string[];
  search?: string[];
  segment?: string[];
  to?: string[];
  headsUp?: string[];
}

const audienceOptions = (cmd: Command) =>
  cmd
    .option('--group <name|id>', 'send to the members of this group (repeatable, or a comma list)', collectList)
    .option('--subscription <name|id>', 'send to the subscribed members of this subscription (repeatable)', collectList)
    .option('--search <name|id>', 'send to the members a saved search finds (repeatable)', collectList)
    .option('--segment <name|id>', 'send to the members of a segment (repeatable)', collectList)
    .option('--to <email>', 'send to this address; new addresses become members (repeatable, or a comma list)', collectList)
    .option('--heads-up <email>', 'send a heads-up copy to this address (repeatable, or a comma list)', collectList);

async function audienceBody(api: Api, ctx: RunContext, o: AudienceFlags) {
  return {
    recipient_groups: o.group ? await groupIds(api, ctx, o.group) : undefined,
    recipient_subscriptions: o.subscription ? await Promise.all(o.subscription.map((r) => subscriptionId(api, r))) : undefined,
    recipient_searches: await searchIds(api, o.search),
    recipient_segments: await searchIds(api, o.segment),
    recipient_emails: o.to,
    heads_up_emails: o.headsUp,
  };
}

// ---------------------------------------------------------------- waiting

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why a mailing in this status may not move on by itself, or undefined when it will. */
function stalledBecause(m: MailingRecord, now: number): string | undefined {
  if (m.mailing_status === 'u') return `it is an unapproved draft: approve it with \`amsg mailings resume ${m.mailing_id}\``;
  if (m.mailing_status === 'a') return `it is paused: \`amsg mailings resume ${m.mailing_id}\` goes on`;
  if (m.mailing_status === 'p' && m.send_at) {
    const at = new Date(`${m.send_at.replace(/^@D:/, '')}Z`).getTime();
    if (at > now) return `it is scheduled for ${m.send_at.replace(/^@D:/, '')} UTC`;
  }
  return undefined;
}

/**
 * Polls a mailing until it settles (c, x, f, or w waiting for a split test's winner),
 * saying each new status on stderr. Answers the last record read; undefined when
 * timeoutMs passed first.
 */
export async function waitForMailing(ctx: RunContext, api: Api, id: number, timeoutMs?: number): Promise<MailingRecord | undefined> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let delay = 100;
  let said = '';
  for (;;) {
    const m = await api.get<MailingRecord>(`/mailings/${id}`);
    if (SETTLED.includes(m.mailing_status)) return m;
    const saying = `${m.mailing_status}:${m.recipient_count}`;
    if (saying !== said) {
      const count = m.recipient_count ? ` (${m.recipient_count} recipients)` : '';
      const stalled = stalledBecause(m, Date.now());
      ctx.note(`mailing ${id}: ${STATUS_NAMES[m.mailing_status] ?? m.mailing_status}${count}${stalled ? `; ${stalled}; waiting` : ''}…`);
      said = saying;
    }
    if (Date.now() >= deadline) return undefined;
    // Locally each call sends for a quarter second: pausing would only stop the send.
    if (api.transport.runsJobs && !stalledBecause(m, Date.now())) continue;
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
    delay = Math.min(delay * 1.5, 1_000);
  }
}

/** Prints a settled mailing; a failed one (or a wait that timed out) exits 1. */
async function reportSettled(ctx: RunContext, api: Api, id: number, timeoutMs?: number) {
  const m = await waitForMailing(ctx, api, id, timeoutMs);
  if (!m) {
    const now = await api.get<MailingRecord>(`/mailings/${id}`);
    if (ctx.format !== 'table') await ctx.print(now);
    ctx.stderr.write(
      `amsg: mailing ${id} is still ${STATUS_NAMES[now.mailing_status] ?? now.mailing_status} (${now.mailing_status}) after --timeout; run \`amsg mailings wait ${id}\` to go on waiting\n`,
    );
    process.exitCode = EXIT.refused;
    return;
  }
  const word = STATUS_NAMES[m.mailing_status];
  const sentences: Record<string, string> = {
    c: `Mailing ${id} is complete: sent to ${m.recipient_count} recipient${m.recipient_count === 1 ? '' : 's'}.`,
    x: `Mailing ${id} was canceled.`,
    w: `Mailing ${id} sent its test share and waits for a winner: amsg mailings winner ${id} VARIANT_ID (variants ${m.split_test?.variants.map((v) => v.mailing_id).join(', ') ?? '?'}).`,
    f: `Mailing ${id} failed.`,
  };
  await ctx.done(m, sentences[m.mailing_status] ?? `Mailing ${id} is ${word}.`);
  if (m.mailing_status === 'f') {
    ctx.stderr.write(`amsg: mailing ${id} failed: ${m.failure_message ?? 'no reason given'}\n`);
    process.exitCode = EXIT.refused;
  }
}

/** `--timeout` in milliseconds. */
const timeoutMs = (value: string | undefined) => (value === undefined ? undefined : parseDuration(value, '--timeout') * 1000);

/** Prints the {mailing_id} of a new mailing, or waits for it to settle with --wait. */
async function createdMailing(
  ctx: RunContext,
  api: Api,
  created: { mailing_id: number },
  sentence: string,
  wait: boolean,
  timeout?: number,
) {
  if (!wait) return ctx.done(created, sentence);
  ctx.note(sentence);
  await reportSettled(ctx, api, created.mailing_id, timeout);
}

/** --wait and --timeout, checked before anything is created. */
function waitFlags(o: { wait?: boolean; timeout?: string }): number | undefined {
  if (o.timeout !== undefined && !o.wait) throw new UsageError('--timeout goes with --wait');
  return timeoutMs(o.timeout);
}

// ---------------------------------------------------------------- validate

interface TagProblem {
  part: string;
  tag: string;
  line: number;
  column: number;
  reason: string;
}

async function printTagProblems(ctx: RunContext, problems: TagProblem[]) {
  // An unknown member field gets a suggestion from the account's fields (the answer itself stays the service's).
  const api = await ctx.api();
  const hints = await Promise.all(
    problems.map(async (p) => {
      const field = /unknown member field "([^"]+)"/.exec(p.reason)?.[1];
      return field ? fieldSuggestion(api, field) : '';
    }),
  );
  if (ctx.format === 'table')
    ctx.stdout.write(problems.map((p, i) => `${p.part}:${p.line}:${p.column}: ${p.reason}${hints[i]}: ${p.tag}\n`).join(''));
  else {
    await ctx.print(problems);
    problems.forEach((p, i) => hints[i] && ctx.note(`${p.part}:${p.line}:${p.column}: ${p.reason}${hints[i]}`));
  }
  ctx.stderr.write(
    `amsg: ${problems.length} invalid personalization tag${problems.length === 1 ? '' : 's'} (part:line:column); fix them and validate again\n`,
  );
  process.exitCode = EXIT.refused;
}

/** Answers invalid_tags when the service refused templates for their tags (a 400 ApiError that lists them). */
function tagProblems(err: unknown): TagProblem[] | undefined {
  const refusal = err as { status?: number; body?: { invalid_tags?: unknown } } | undefined;
  if (refusal?.status === 400 && Array.isArray(refusal.body?.invalid_tags)) return refusal.body.invalid_tags as TagProblem[];
  return undefined;
}

// ---------------------------------------------------------------- messages

async function printMessage(ctx: RunContext, message: Record<string, string>) {
  if (ctx.format !== 'table') return ctx.print(message);
  const keys = Object.keys(message);
  if (keys.length === 1) return void ctx.stdout.write(`${message[keys[0]]}\n`);
  const out = [
    `Subject: ${message.subject}`,
    `Webview: ${message.webview_url}`,
    '',
    '--- plaintext ---',
    message.plaintext || '(none)',
    '',
    '--- html_body ---',
    message.html_body || '(none)',
  ];
  ctx.stdout.write(`${out.join('\n')}\n`);
}

// ---------------------------------------------------------------- commands

interface CreateFlags extends AudienceFlags {
  name: string;
  subject?: string;
  sender: string;
  replyTo?: string;
  html?: string;
  plaintext?: string;
  plaintextOnly?: boolean;
  suppressSearch?: string[];
  suppressSegment?: string[];
  suppressMember?: string[];
  sendAt?: string;
  draft?: boolean;
  type?: string;
  variantSubject?: string[];
  variantHtml?: string[];
  testPercent?: string;
  testDuration?: string;
  wait?: boolean;
  timeout?: string;
}

function splitTest(o: CreateFlags) {
  if (o.variantSubject && o.variantHtml)
    throw new UsageError('a split test varies the subject (--variant-subject) or the content (--variant-html), not both');
  const variants: { subject?: string; html_body?: string }[] | undefined =
    o.variantSubject?.map((subject) => ({ subject })) ?? o.variantHtml?.map((file) => ({ html_body: readText(file, '--variant-html') }));
  if (!variants) {
    if (o.testPercent !== undefined || o.testDuration !== undefined)
      throw new UsageError(
        '--test-percent and --test-duration belong to a split test: give two or more --variant-subject or --variant-html',
      );
    return undefined;
  }
  if (variants.length < 2)
    throw new UsageError(`a split test needs two to ten variants: repeat ${o.variantSubject ? '--variant-subject' : '--variant-html'}`);
  if (o.type) throw new UsageError('--type does not go with a split test (its type is s with --variant-subject, c with --variant-html)');
  return {
    mailing_type: o.variantSubject ? 's' : 'c',
    split_test: {
      variants,
      test_percent: parseInteger(o.testPercent, '--test-percent'),
      test_duration_seconds: o.testDuration === undefined ? undefined : parseDuration(o.testDuration, '--test-duration'),
    },
  };
}

export function register(mailings: Command) {
  examples(
    listOptions(mailings.command('list'), { windowed: false })
      .description('list mailings (canceled and archived ones only when asked for)')
      .option('--status <letters>', 'only these statuses: p,a,i,s,x,c,w,u,f or words (pending, paused, complete…)', collectList)
      .option('--type <letters>', 'only these types: m (standard), t (test), r (trigger), s, c (split tests); default m,t', collectList)
      .option('--archived', 'include archived mailings')
      .option('--scheduled', 'only mailings with a send time')
      .option('--with-html', 'include html_body')
      .option('--with-plaintext', 'include plaintext')
      .action(
        action(
          async (
            ctx,
            o: ListFlags & {
              status?: string[];
              type?: string[];
              archived?: boolean;
              scheduled?: boolean;
              withHtml?: boolean;
              withPlaintext?: boolean;
            },
          ) => {
            const query = {
              mailing_statuses: letters(o.status, STATUS_NAMES, '--status'),
              mailing_types: letters(o.type, TYPE_NAMES, '--type'),
              include_archived: o.archived,
              is_scheduled: o.scheduled,
              with_html_body: o.withHtml,
              with_plaintext: o.withPlaintext,
            };
            await printList(
              ctx,
              '/mailings',
              query,
              o,
              { columns: MAILING_COLUMNS, words: { mailing_status: STATUS_NAMES } },
              { windowed: false },
            );
          },
        ),
      ),
    [
      'amsg mailings list',
      'amsg mailings list --status p,a --scheduled',
      'amsg mailings list --type m,t,r --archived --json | jq ".[].mailing_id"',
    ],
  );

  examples(
    mailings
      .command('get <mailing>')
      .description('a mailing in detail: audience, links, split test')
      .option('--segment-names', 'name the segments')
      .option('--subscription-names', 'name the subscriptions')
      .action(
        action(async (ctx, id: string, o: { segmentNames?: boolean; subscriptionNames?: boolean }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const query = { include_segment_names: o.segmentNames, include_subscription_names: o.subscriptionNames };
          await ctx.print(await api.get(`/mailings/${mailingId}`, query));
        }),
      ),
    ['amsg mailings get 12', 'amsg mailings get 12 --subscription-names --json | jq .recipient_subscriptions'],
  );

  examples(
    audienceOptions(
      mailings
        .command('create')
        .description('create a mailing; it is sent at --send-at, or as soon as the sender runs (every body needs [% optout_url %])')
        .requiredOption('--name <name>', 'the name people see in lists')
        .option('--subject <text>', 'the subject (personalization tags allowed); with --variant-subject, the first variant by default')
        .requiredOption('--sender <address>', 'the From address')
        .option('--reply-to <address>', 'the Reply-To address')
        .option('--html <file>', 'the HTML body from FILE (- for stdin); with --variant-html, the first variant by default')
        .option('--plaintext <file>', 'the plaintext body from FILE (- for stdin)')
        .option('--plaintext-only', 'send the plaintext body only'),
    )
      .option('--suppress-search <name|id>', 'keep out the members a saved search finds (repeatable)', collectList)
      .option('--suppress-segment <name|id>', 'keep out the members of a segment (repeatable)', collectList)
      .option('--suppress-member <id|email>', 'keep out this member (repeatable)', collectList)
      .option('--send-at <datetime>', 'send at this time, e.g. 2026-05-01T09:00:00Z (UTC when no offset is given)')
      .option('--draft', 'keep it as an unapproved draft (status u) until `amsg mailings resume ID`')
      .addOption(new Option('--type <m|t>', 'm standard (default) or t test').choices(['m', 't']))
      .option('--variant-subject <text>', 'a subject split test (type s): one variant per flag, two to ten', collect)
      .option('--variant-html <file>', 'a content split test (type c): the HTML body of one variant per flag', collect)
      .option('--test-percent <n>', 'split test: the share of the audience that gets the variants (default 20)')
      .option('--test-duration <seconds|1d2h>', 'split test: how long before the variant with the most opens wins (default 1d)')
      .option('--wait', 'wait until the mailing is sent (or canceled, failed, or waiting for a winner) and print it')
      .option('--timeout <seconds|1h>', 'with --wait: stop waiting after this long (exit 1)')
      .action(
        action(async (ctx, o: CreateFlags) => {
          if (o.wait && o.draft)
            throw new UsageError('--wait does not go with --draft: a draft is not sent until `amsg mailings resume ID`');
          const timeout = waitFlags(o);
          checkOneStdin([
            ['--html', o.html],
            ['--plaintext', o.plaintext],
            ['--variant-html', o.variantHtml],
          ]);
          const split = splitTest(o);
          const subject = o.subject ?? o.variantSubject?.[0];
          if (subject === undefined) throw new UsageError('give --subject (the subject line; personalization tags allowed)');
          if (o.html === undefined && o.plaintext === undefined && !o.variantHtml)
            throw new UsageError('give the body: --html FILE and/or --plaintext FILE (- reads stdin)');
          const sendAt = checkDateTime(o.sendAt, '--send-at');
          // A content test's own body (what the rest of the audience gets before a winner) defaults to its first variant's.
          const html_body =
            readOptional(o.html, '--html') ?? (split?.mailing_type === 'c' ? split.split_test.variants[0].html_body : undefined);
          const plaintext = readOptional(o.plaintext, '--plaintext');
          const api = await ctx.api();
          const body = {
            name: o.name,
            subject,
            sender: o.sender,
            reply_to: o.replyTo,
            html_body,
            plaintext,
            plaintext_only: o.plaintextOnly,
            mailing_type: o.type,
            send_at: sendAt,
            status: o.draft ? 'u' : undefined,
            ...(await audienceBody(api, ctx, o)),
            suppressed_searches: await searchIds(api, o.suppressSearch),
            suppressed_segments: await searchIds(api, o.suppressSegment),
            suppressed_member_ids: o.suppressMember ? await Promise.all(o.suppressMember.map((m) => memberId(api, m))) : undefined,
            ...split,
          };
          let created: { mailing_id: number };
          try {
            created = await api.post<{ mailing_id: number }>('/mailings', body);
          } catch (err) {
            const problems = tagProblems(err);
            if (problems) return printTagProblems(ctx, problems);
            throw err;
          }
          const id = created.mailing_id;
          const sentence = o.draft
            ? `Created mailing ${id} as a draft (status u): approve it with \`amsg mailings resume ${id}\`.`
            : `Created mailing ${id}${sendAt ? `, to be sent at ${sendAt}` : ''}.`;
          await createdMailing(ctx, api, created, sentence, !!o.wait, timeout);
        }),
      ),
    [
      'amsg mailings create --name "May news" --subject "Hi [% member:first_name | default:\\"there\\" %]" --sender news@example.com --html may.html --group Newsletter --wait',
      'amsg mailings create --name Test --subject Test --sender me@example.com --plaintext note.txt --to ada@example.com --type t',
      'cat may.html | amsg mailings create --name May --subject May --sender news@example.com --html - --group 3 --send-at 2026-05-01T09:00:00Z',
      'amsg mailings create --name "Subject test" --sender news@example.com --html may.html --group Newsletter --variant-subject "May news" --variant-subject "News for May" --test-percent 20 --test-duration 4h',
    ],
  );

  examples(
    mailings
      .command('wait <mailing>')
      .description('wait until a mailing is complete (c), canceled (x), failed (f) or waits for a split-test winner (w), and print it')
      .option('--timeout <seconds|1h>', 'stop waiting after this long (exit 1)')
      .action(
        action(async (ctx, id: string, o: { timeout?: string }) => {
          const timeout = timeoutMs(o.timeout);
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await reportSettled(ctx, api, mailingId, timeout);
        }),
      ),
    ['amsg mailings wait 12', 'amsg mailings wait 12 --timeout 10m --json | jq .recipient_count'],
  );

  examples(
    mailings
      .command('cancel <mailing>')
      .description('cancel a pending or paused mailing (asks first; --yes off a terminal)')
      .option('--dry-run', 'say what would be canceled, and cancel nothing')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const what = `cancel ${await describeCancellable(api, mailingId)}`;
          await ctx.change(what, 1, () => api.delete(`/mailings/cancel/${mailingId}`), `Canceled mailing ${mailingId}.`);
        }),
      ),
    ['amsg mailings cancel 12', 'amsg mailings cancel 12 --yes'],
  );

  const statusCommand = (name: string, word: 'paused' | 'ready', description: string, past: string) =>
    examples(
      mailings
        .command(`${name} <mailing>`)
        .description(description)
        .action(
          action(async (ctx, id: string) => {
            const api = await ctx.api();
            const mailingId = await mailingRef(api, id);
            const m = await api.put<MailingRecord>(`/mailings/${mailingId}`, { status: word });
            await ctx.done(
              m,
              `${past} mailing ${mailingId}: now ${STATUS_NAMES[m.mailing_status] ?? m.mailing_status} (${m.mailing_status}).`,
            );
          }),
        ),
      [`amsg mailings ${name} 12`],
    );
  statusCommand('pause', 'paused', 'pause a mailing that is not complete, sending or canceled (status a)', 'Paused');
  statusCommand(
    'resume',
    'ready',
    'resume a paused mailing, or approve a draft (status p, or w when a split test waits for its winner)',
    'Resumed',
  );

  examples(
    mailings
      .command('archive <mailing>')
      .description('archive a mailing: it leaves the list (see --archived); its status stays')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await ctx.done(await api.delete(`/mailings/${mailingId}`), `Archived mailing ${mailingId}.`);
        }),
      ),
    ['amsg mailings archive 12'],
  );

  examples(
    audienceOptions(
      mailings
        .command('resend <mailing>')
        .description("send a mailing's content again (a split test's winner), to a new audience")
        .option('--sender <address>', 'the From address (default: the original sender)'),
    )
      .option('--suppress-segment <name|id>', 'keep out the members of a segment (repeatable)', collectList)
      .option('--wait', 'wait until the new mailing is sent and print it')
      .option('--timeout <seconds|1h>', 'with --wait: stop waiting after this long (exit 1)')
      .action(
        action(
          async (ctx, id: string, o: AudienceFlags & { sender?: string; suppressSegment?: string[]; wait?: boolean; timeout?: string }) => {
            const timeout = waitFlags(o);
            const api = await ctx.api();
            const mailingId = await mailingRef(api, id);
            const created = await api.post<{ mailing_id: number }>(`/mailings/${mailingId}`, {
              sender: o.sender,
              ...(await audienceBody(api, ctx, o)),
              suppression_segments: await searchIds(api, o.suppressSegment),
            });
            await createdMailing(
              ctx,
              api,
              created,
              `Created mailing ${created.mailing_id}, a resend of mailing ${mailingId}.`,
              !!o.wait,
              timeout,
            );
          },
        ),
      ),
    ['amsg mailings resend 12 --group "New members"', 'amsg mailings resend 12 --to ada@example.com --sender other@example.com --wait'],
  );

  examples(
    mailings
      .command('forward <mailing> <member>')
      .description('a member (id or e-mail) forwards its message; new addresses join with status f (forwarded)')
      .requiredOption('--to <email>', 'forward to this address (repeatable, or a comma list)', collectList)
      .option('--heads-up <email>', 'send a heads-up copy to this address (repeatable, or a comma list)', collectList)
      .option('--wait', 'wait until the forward is sent and print it')
      .action(
        action(async (ctx, id: string, memberRef: string, o: { to: string[]; headsUp?: string[]; wait?: boolean }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const member = await memberId(api, memberRef);
          const created = await api.post<{ mailing_id: number }>(`/forwards/${mailingId}/${member}`, {
            recipient_emails: o.to,
            heads_up_emails: o.headsUp,
          });
          await createdMailing(
            ctx,
            api,
            created,
            `Member ${member} forwarded mailing ${mailingId} as mailing ${created.mailing_id}.`,
            !!o.wait,
          );
        }),
      ),
    ['amsg mailings forward 12 ada@example.com --to bo@example.com,cy@example.com'],
  );

  examples(
    mailings
      .command('validate')
      .description('check the personalization tags of a subject and bodies; exits 1 listing each bad tag as part:line:column')
      .option('--html <file>', 'the HTML body from FILE (- for stdin)')
      .option('--plaintext <file>', 'the plaintext body from FILE (- for stdin)')
      .option('--subject <text>', 'the subject line')
      .action(
        action(async (ctx, o: { html?: string; plaintext?: string; subject?: string }) => {
          if (o.html === undefined && o.plaintext === undefined && o.subject === undefined)
            throw new UsageError('give something to check: --html FILE, --plaintext FILE and/or --subject TEXT');
          checkOneStdin([
            ['--html', o.html],
            ['--plaintext', o.plaintext],
          ]);
          const body = {
            html_body: readOptional(o.html, '--html'),
            plaintext: readOptional(o.plaintext, '--plaintext'),
            subject: o.subject,
          };
          const api = await ctx.api();
          try {
            await ctx.done(await api.post('/mailings/validate', body), 'Every tag is valid.');
          } catch (err) {
            const problems = tagProblems(err);
            if (problems) return printTagProblems(ctx, problems);
            throw err;
          }
        }),
      ),
    [
      'amsg mailings validate --html may.html --subject "Hi [% member:first_name %]"',
      'amsg mailings validate --plaintext - < note.txt --json',
    ],
  );

  examples(
    mailings
      .command('message <mailing> <member>')
      .description("a member's personalized message (the member by id or e-mail)")
      .addOption(new Option('--type <part>', 'the part to show').choices(MESSAGE_TYPES).default('all'))
      .action(
        action(async (ctx, id: string, memberRef: string, o: { type: string }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const member = await memberId(api, memberRef);
          await printMessage(ctx, await api.get(`/mailings/${mailingId}/messages/${member}`, { type: o.type }));
        }),
      ),
    ['amsg mailings message 12 ada@example.com', 'amsg mailings message 12 42 --type html -o table > ada.html'],
  );

  examples(
    mailings
      .command('winner <mailing> <variant>')
      .description("declare a split test's winning variant: the rest of the audience gets its content")
      .action(
        action(async (ctx, id: string, winner: string) => {
          const winnerId = numericId(winner, 'VARIANT');
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await ctx.done(
            await api.post(`/mailings/${mailingId}/winner/${winnerId}`, {}),
            `Variant ${winnerId} wins split test ${mailingId}.`,
          );
        }),
      ),
    ['amsg mailings get 12 --json | jq .split_test.variants', 'amsg mailings winner 12 14'],
  );

  // Member lists come a window at a time; the command prints them whole unless told otherwise.
  const readCommand = (name: string, description: string, path: string, columns?: string[], paged = false) =>
    examples(
      listOptions(mailings.command(`${name} <mailing>`).description(description), { windowed: paged }).action(
        action(async (ctx, id: string, o: ListFlags) => {
          const mailingId = await mailingRef(await ctx.api(), id);
          await printList(ctx, `/mailings/${mailingId}${path}`, {}, o, { columns }, { windowed: paged, allByDefault: true });
        }),
      ),
      [`amsg mailings ${name} 12`],
    );
  readCommand(
    'members',
    'the members a mailing was sent to individually (not through groups or searches)',
    '/members',
    MEMBER_COLUMNS,
    true,
  );
  readCommand('groups', 'the groups a mailing goes to', '/groups');
  readCommand('subscriptions', 'the subscriptions a mailing goes to', '/subscriptions');
  readCommand('suppressed-members', 'the members kept out of a mailing', '/suppressed_members', MEMBER_COLUMNS, true);
  readCommand('headsup', 'the heads-up copies of a mailing, with when they were sent', '/headsup');

  examples(
    listOptions(
      mailings
        .command('searches <mailing>')
        .description('the searches and segments a mailing goes to (or, with --suppressed, keeps out)')
        .option('--suppressed', 'the suppressed searches and segments instead'),
      { windowed: false },
    ).action(
      action(async (ctx, id: string, o: ListFlags & { suppressed?: boolean }) => {
        const api = await ctx.api();
        const mailingId = await mailingRef(api, id);
        await printList(ctx, `/mailings/${mailingId}/${o.suppressed ? 'suppressed_searches' : 'searches'}`, {}, o, {}, { windowed: false });
      }),
    ),
    ['amsg mailings searches 12', 'amsg mailings searches 12 --suppressed'],
  );

  examples(
    mailings
      .command('recipients')
      .description('the names of groups, segments and subscriptions, by id (checks that they exist)')
      .option('--group <name|id>', 'a group (repeatable, or a comma list)', collectList)
      .option('--segment <id>', 'a segment (repeatable)', collectList)
      .option('--subscription <name|id>', 'a subscription (repeatable)', collectList)
      .option('--suppressed-segment <id>', 'a suppressed segment (repeatable)', collectList)
      .action(
        action(async (ctx, o: { group?: string[]; segment?: string[]; subscription?: string[]; suppressedSegment?: string[] }) => {
          if (!o.group && !o.segment && !o.subscription && !o.suppressedSegment)
            throw new UsageError('give --group, --segment, --subscription or --suppressed-segment (one or more)');
          const segments = ids(o.segment, '--segment');
          const suppressed = ids(o.suppressedSegment, '--suppressed-segment');
          const api = await ctx.api();
          const answer = await api.post<Record<string, Record<string, unknown>[]>>('/mailings/recipients', {
            recipient_groups: o.group ? await groupIds(api, ctx, o.group) : undefined,
            recipient_segments: segments,
            recipient_subscriptions: o.subscription ? await Promise.all(o.subscription.map((r) => subscriptionId(api, r))) : undefined,
            suppressed_segments: suppressed,
          });
          if (ctx.format !== 'table') return ctx.print(answer);
          // One row per name for people: which list, the id, the name.
          const rows = Object.entries(answer).flatMap(([list, items]) =>
            items.map((item) => {
              const [idKey] = Object.keys(item).filter((k) => k !== 'name');
              return { list, id: item[idKey], name: item.name };
            }),
          );
          await ctx.print(rows);
        }),
      ),
    [
      'amsg mailings recipients --group Newsletter --group 4 --subscription "Weekly digest"',
      'amsg mailings recipients --segment 7 --suppressed-segment 9 --json',
    ],
  );
}
