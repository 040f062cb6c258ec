import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { jsonArgument, searchId } from '../src/cli/resolve.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';

const CRITERIA_HELP = 'the condition list as JSON, @FILE to read it from a file, or - for stdin';

const windowFlags = (cmd: Command) => listOptions(cmd, { countable: true });

export function register(searches: Command) {
  searches.addHelpText(
    'after',
    `
Criteria are nested JSON lists, as the service writes them:
  ["and", ["member_field:city", "eq", "Oslo"], ["group", "eq", "Gold"]]
Predicates: and, or (one or more conditions), not (exactly one).
Operators: eq, lt, gt, between (two values, inclusive), contains (a glob: * and ?),
in (a list of values), any (a text[] field holds any of a list).
Subjects: member_field:<name>, member:email, member_status_id, member_since,
group and subscription (name or id), search and segment (id).
A segment is a saved search. Counts and members are those of the stored result, computed when
the search is saved and refreshed in the background after the audience changes (cached_at says when).
`,
  );

  examples(
    windowFlags(searches.command('list').description('list saved searches with active, error and opt-out counts')).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/searches', {}, o, { table: TABLES.searches }, { countable: true, allByDefault: true });
      }),
    ),
    ['amsg searches list', 'amsg searches list --json | jq ".[] | {name, active_count}"'],
  );

  examples(
    searches
      .command('get <search>')
      .description('show a saved search, by id or name, with its counts')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/searches/${await searchId(api, ref)}`));
        }),
      ),
    ['amsg searches get "Oslo VIPs"', 'amsg searches get 3 --json | jq -r .criteria'],
  );

  examples(
    searches
      .command('create <name>')
      .description('save a search')
      .requiredOption('--criteria <json|@file|->', CRITERIA_HELP)
      .action(
        action(async (ctx, name: string, o: { criteria: string }) => {
          const criteria = await jsonArgument('--criteria', o.criteria, { stdin: true });
          const api = await ctx.api();
          const id = await api.post<number>('/searches', { name, criteria });
          await ctx.done(id, `Saved search ${id} "${name}".`);
        }),
      ),
    [
      `amsg searches create "Oslo VIPs" --criteria '["and", ["member_field:city", "eq", "Oslo"], ["group", "eq", "VIP"]]'`,
      `amsg searches create "Example staff" --criteria '["member:email", "contains", "*@example.com"]'`,
      'amsg searches create "Lapsed" --criteria @lapsed.json',
      'amsg searches get "Oslo VIPs" --json | jq .criteria | amsg --account 2 searches create "Oslo VIPs" --criteria -',
    ],
  );

  examples(
    searches
      .command('update <search>')
      .description('rename a saved search or change its criteria')
      .option('--name <name>', 'the new name')
      .option('--criteria <json|@file|->', CRITERIA_HELP)
      .action(
        action(async (ctx, ref: string, o: { name?: string; criteria?: string }) => {
          if (o.name === undefined && o.criteria === undefined) throw new UsageError('give --name, --criteria or both');
          const criteria = o.criteria === undefined ? undefined : await jsonArgument('--criteria', o.criteria, { stdin: true });
          const api = await ctx.api();
          const id = await searchId(api, ref);
          const body = { ...(o.name !== undefined ? { name: o.name } : {}), ...(criteria !== undefined ? { criteria } : {}) };
          await ctx.done(await api.put(`/searches/${id}`, body), `Updated search ${id}.`);
        }),
      ),
    ['amsg searches update "Oslo VIPs" --name "Oslo gold"', `amsg searches update 3 --criteria '["member_field:age", "between", 18, 30]'`],
  );

  examples(
    searches
      .command('delete <search>')
      .description('delete a saved search (refused while another search uses it)')
      .option('--dry-run', 'say what would change, and how many, and change nothing')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          const id = await searchId(api, ref);
          const search = await api.get<{ name: string }>(`/searches/${id}`);
          await ctx.change(`delete search "${search.name}" (${id})`, 1, () => api.delete(`/searches/${id}`), `Deleted search ${id}.`);
        }),
      ),
    ['amsg searches delete "Oslo VIPs" --yes'],
  );

  examples(
    windowFlags(searches.command('members <search>').description('the members a saved search matches now (any status)')).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        const id = await searchId(api, ref);
        await printList(ctx, `/searches/${id}/members`, {}, o, { table: TABLES.members }, { countable: true });
      }),
    ),
    ['amsg searches members "Oslo VIPs"', 'amsg searches members 3 --count', 'amsg searches members 3 --output csv > oslo.csv'],
  );

  examples(
    windowFlags(
      searches
        .command('segments [segment]')
        .description('segments (saved searches as mailings and exports name them): all, or one by id or name'),
    ).action(
      action(async (ctx, ref: string | undefined, o: ListFlags) => {
        const api = await ctx.api();
        if (ref === undefined)
          await printList(ctx, '/segments', {}, o, { table: TABLES.segments }, { countable: true, allByDefault: true });
        else await ctx.print(await api.get(`/segments/${await searchId(api, ref)}`));
      }),
    ),
    ['amsg searches segments', 'amsg searches segments "Oslo VIPs" --json'],
  );
}
