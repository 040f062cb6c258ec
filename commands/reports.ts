import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples, UsageError, type RunContext } from '../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import type { MailingResponse } from '../src/cli/report-view.js';
import { mailingId } from '../src/cli/resolve.js';
import { numericId } from '../src/cli/resolve.js';

/**
 * The lists of a mailing's response: the command, the service's list, its table, and
 * what it shows; `members`: a list of members, printed by --output csv as the
 * columns amsg members import reads.
 */
const LISTS = {
  sends: { path: 'sends', table: TABLES.reportMembers, members: true, what: 'the members a mailing was sent to' },
  opens: { path: 'opens', table: TABLES.reportMembers, members: true, what: 'the members who opened a mailing' },
  clicks: { path: 'clicks', table: TABLES.reportClicks, members: true, what: 'every click in a mailing (--member, --link narrow it)' },
  bounces: {
    path: 'deliveries',
    table: TABLES.reportBounces,
    members: true,
    what: 'the messages that bounced (--hard or --soft for one kind)',
  },
  optouts: { path: 'optouts', table: TABLES.reportMembers, members: true, what: "the members who opted out through a mailing's link" },
  forwards: { path: 'forwards', table: TABLES.reportForwards, members: false, what: 'each forward of a mailing by a member' },
  links: { path: 'links', table: TABLES.reportLinks, members: false, what: "a mailing's links with their clicks" },
} as const;

interface ReportFlags extends ListFlags {
  member?: string;
  link?: string;
  hard?: boolean;
  soft?: boolean;
}

type Row = Record<string, unknown>;

/**
 * A list of members as CSV for `amsg members import`: its e-mail address and its fields
 * by shortcut name, the columns the importer maps (every other column would stop it).
 */
const importable = (r: Row) => ({ email: r.email, ...((r.fields as Record<string, unknown> | undefined) ?? {}) });

/** Loaded when a reports command draws a table (see its header). */
const reportView = () => import('../src/cli/report-view.js');

async function printSummary(ctx: RunContext, report: MailingResponse | Row[]) {
  if (ctx.format !== 'table') return ctx.print(report);
  const { rates, MONTH_COLUMNS, SUMMARY_ROWS } = await reportView();
  if (Array.isArray(report))
    return ctx.print(
      report.map((m) => ({ ...m, ...rates(m as unknown as MailingResponse) })),
      { columns: MONTH_COLUMNS },
    );
  const withRates: Row = { ...report, ...rates(report) };
  return ctx.print({ name: report.name, subject: report.subject, ...Object.fromEntries(SUMMARY_ROWS.map((k) => [k, withRates[k]])) });
}

export function register(reports: Command) {
  reports.addHelpText(
    'after',
    `
Figures are the service's response reports (GET /response…): kept as the send and the
engagement happen, so they agree with the lists (opened is the number of opens, …).
Lists print the first window of 500 (--start, --end, --limit) or every record with --all;
a note on stderr says when more remain.
With --output csv a member list prints the columns amsg members import reads (email and
the fields), so it pipes into a new group; --json or --output ndjson has every column.
`,
  );

  examples(
    reports
      .command('account')
      .description("the account's response by month: sent mailings, deliveries, opens, clicks, opt-outs")
      .option('--range <from~to>', 'the months of mailings sent in these dates: YYYY-MM-DD~YYYY-MM-DD, either side may be empty')
      .option('--archived', 'include archived mailings')
      .action(
        action(async (ctx, o: { range?: string; archived?: boolean }) => {
          const api = await ctx.api();
          await printSummary(ctx, await api.get<Row[]>('/response', { range: o.range, include_archived: o.archived ? true : undefined }));
        }),
      ),
    [
      'amsg reports account',
      'amsg reports account --range 2026-01-01~ --archived',
      'amsg reports account --json | jq ".[] | {month, opened}"',
    ],
  );

  examples(
    reports
      .command('mailing <mailing>')
      .description("one mailing's counts with its rates (a split test's whole, or a variant's); --watch draws them live")
      .option('--watch', 'on a terminal: redraw while the mailing sends and engagement arrives, until Ctrl-C')
      .action(
        action(async (ctx, mailing: string, o: { watch?: boolean }) => {
          if (o.watch && !ctx.stdout.isTTY)
            throw new UsageError('--watch draws on a terminal; off one, read the figures with amsg reports mailing ' + mailing);
          const api = await ctx.api();
          const id = await mailingId(api, mailing);
          const report = await api.get<MailingResponse>(`/response/${id}`);
          if (o.watch) return (await reportView()).watchMailing(api, id, ctx.stdout.stream);
          await printSummary(ctx, report);
        }),
      ),
    ['amsg reports mailing 12', 'amsg reports mailing 12 --watch', 'amsg reports mailing 12 --json | jq .opened'],
  );

  for (const [name, list] of Object.entries(LISTS)) {
    const cmd = listOptions(reports.command(`${name} <mailing>`).description(list.what), { countable: true });
    if (name === 'clicks') cmd.option('--member <id>', "only this member's clicks").option('--link <id>', 'only the clicks on this link');
    if (name === 'bounces') cmd.option('--hard', 'only hard bounces').option('--soft', 'only soft bounces');
    examples(
      cmd.action(
        action(async (ctx, mailing: string, o: ReportFlags) => {
          if (o.hard && o.soft) throw new UsageError('give --hard or --soft, not both');
          const query = {
            ...(name === 'bounces' ? { result: o.hard ? 'hard' : o.soft ? 'soft' : 'bounced' } : {}),
            member_id: o.member === undefined ? undefined : numericId(o.member, '--member'),
            link_id: o.link === undefined ? undefined : numericId(o.link, '--link'),
          };
          const id = await mailingId(await ctx.api(), mailing);
          const row = ctx.format === 'csv' && list.members ? importable : undefined;
          await printList(ctx, `/response/${id}/${list.path}`, query, o, { table: list.table }, { countable: true, row });
        }),
      ),
      [
        `amsg reports ${name} 12`,
        ...(name === 'opens'
          ? ['amsg reports opens 12 --output csv | amsg members import - --group Engaged', 'amsg reports opens 12 --all --json | jq length']
          : []),
        ...(name === 'clicks' ? ['amsg reports clicks 12 --link 3 --count'] : []),
        ...(name === 'bounces' ? ['amsg reports bounces 12 --hard --all --output csv > hard-bounces.csv'] : []),
      ],
    );
  }

  examples(
    reports
      .command('compare <mailing...>')
      .description('the counts and rates of several mailings side by side')
      .action(
        action(async (ctx, mailings: string[]) => {
          if (mailings.length < 2) throw new UsageError('compare needs two mailings or more');
          const api = await ctx.api();
          const ids = [];
          for (const m of mailings) ids.push(await mailingId(api, m));
          const answers = [];
          for (const mailing_id of ids) answers.push({ mailing_id, report: await api.get<MailingResponse>(`/response/${mailing_id}`) });
          if (ctx.format === 'table') return ctx.print((await reportView()).comparison(answers));
          await ctx.print(answers.map((a) => ({ mailing_id: a.mailing_id, ...a.report })));
        }),
      ),
    ['amsg reports compare 12 13', 'amsg reports compare 12 13 14 --json | jq ".[] | {mailing_id, opened}"'],
  );
}
