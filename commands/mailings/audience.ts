// A mailing's audience: its members, groups, subscriptions, suppressed members, heads-up
// copies and searches; `recipients` names groups, segments and subscriptions by id.
import { TABLES, type TableSpec } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { collectList, groupIds, mailingId as mailingRef, subscriptionId } from '../../src/cli/resolve.js';
import { ids } from './shared.js';

export function registerAudience(mailings: Command) {
  // Member lists come a window at a time; the command prints them whole unless told otherwise.
  const readCommand = (name: string, description: string, path: string, table?: TableSpec, paged = false) =>
    examples(
      listOptions(mailings.command(`${name} <mailing>`).description(description), { windowed: paged }).action(
        action(async (ctx, id: string, o: ListFlags) => {
          const mailingId = await mailingRef(await ctx.api(), id);
          await printList(ctx, `/mailings/${mailingId}${path}`, {}, o, { table }, { windowed: paged, allByDefault: true });
        }),
      ),
      [`amsg mailings ${name} 12`],
    );
  readCommand(
    'members',
    'the members a mailing was sent to individually (not through groups or searches)',
    '/members',
    TABLES.members,
    true,
  );
  readCommand('groups', 'the groups a mailing goes to', '/groups');
  readCommand('subscriptions', 'the subscriptions a mailing goes to', '/subscriptions');
  readCommand('suppressed-members', 'the members kept out of a mailing', '/suppressed_members', TABLES.members, true);
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
