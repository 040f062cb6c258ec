// Reading members: `amsg members list`, `find` (by part of the address) and `get`.
import { TABLES } from '../../src/cli/columns.js';
import { type Command, Option } from 'commander';
import { action, examples, UsageError, type RunContext } from '../../src/cli/context.js';
import { seg } from '../../src/client/api.js';
import { listOptions, pages, PAGE_SIZE, printList, wholeNumber, type ListFlags } from '../../src/cli/paging.js';

export function registerReads(members: Command) {
  examples(
    listOptions(
      members
        .command('list')
        .description('list members (live ones unless told otherwise), a window of 500 at a time unless --all')
        .option('--deleted', 'include archived members')
        .option('--deleted-only', 'only archived members')
        .option('--deleted-range <from~to>', 'archived in a date range: YYYY-MM-DD~YYYY-MM-DD, either side optional')
        .option('--exclude-fields', 'base attributes only')
        .option('--email-contains <text>', 'only members whose address contains this text (case-insensitive; reads the list page by page)'),
      { countable: true },
    ).action(
      action(
        async (
          ctx,
          o: ListFlags & {
            deleted?: boolean;
            deletedOnly?: boolean;
            deletedRange?: string;
            excludeFields?: boolean;
            emailContains?: string;
          },
        ) => {
          const query = {
            deleted: o.deleted,
            deleted_only: o.deletedOnly,
            deleted_range: o.deletedRange,
            exclude_fields: o.excludeFields,
          };
          if (o.emailContains !== undefined)
            return findMembers(ctx, o.emailContains, query, { ...o, limit: o.all ? undefined : (o.limit ?? PAGE_SIZE) });
          await printList(ctx, '/members', query, o, { table: TABLES.members }, { countable: true });
        },
      ),
    ),
    [
      'amsg members list',
      'amsg members list --all --output csv > members.csv',
      'amsg members list --deleted-range 2026-01-01~ --json',
      'amsg members list --count',
    ],
  );

  examples(
    members
      .command('find <text>')
      .description('members whose e-mail address contains TEXT (case-insensitive), archived ones too; the first 20 unless --limit or --all')
      .option('--all', 'every match')
      .addOption(new Option('--limit <n>', 'at most this many matches (default 20)').argParser(wholeNumber(1)))
      .action(
        action(async (ctx, text: string, o: ListFlags) => {
          await findMembers(ctx, text, { deleted: true }, { ...o, limit: o.all ? undefined : (o.limit ?? 20) });
        }),
      ),
    ['amsg members find tina.mueller', 'amsg members find @example.org --all --output csv'],
  );

  examples(
    members
      .command('get <member>')
      .description('show one member, by id or e-mail address')
      .option('--deleted', 'also find an archived member')
      .action(
        action(async (ctx, ref: string, o: { deleted?: boolean }) => {
          const api = await ctx.api();
          const path = /^\d+$/.test(ref) ? `/members/${ref}` : `/members/email/${seg(ref)}`;
          await ctx.print(await api.get(path, { deleted: o.deleted }));
        }),
      ),
    ['amsg members get 42', 'amsg members get ada@example.com --json'],
  );
}

/**
 * Members whose address contains `text`. The service has no such filter (and a
 * substring match cannot use an index), so the list is read page by page and
 * filtered here, stopping as soon as enough are found.
 */
async function findMembers(ctx: RunContext, text: string, query: Record<string, boolean | string | undefined>, o: ListFlags) {
  if (!text.trim()) throw new UsageError('give some text of the address to look for');
  const needle = text.trim().toLowerCase();
  const api = await ctx.api();
  const out = await ctx.listWriter({ table: TABLES.members });
  const wanted = o.limit ?? Infinity;
  let found = 0;
  let more = false;
  for await (const page of pages<{ email: string }>(api, '/members', { ...query, exclude_fields: query.exclude_fields })) {
    const hits = page.filter((m) => m.email.toLowerCase().includes(needle));
    const take = hits.slice(0, wanted - found);
    await out.write(take);
    found += take.length;
    if (found >= wanted) {
      more = hits.length > take.length || page.length === PAGE_SIZE;
      break;
    }
  }
  await out.end();
  if (!found) ctx.note(`no member's address contains "${text}"`);
  else if (more) ctx.note(`the first ${found} matches shown; --all finds every one`);
}
