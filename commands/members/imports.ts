// `amsg members imports list|get|members`: the import records and what they did.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { parseIds } from '../../src/cli/resolve.js';

export function registerImports(members: Command) {
  const imports = members.command('imports').description('member imports and what they did');
  examples(
    listOptions(imports.command('list').description('the member imports'), { windowed: false }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/members/imports', {}, o, { table: TABLES.imports }, { windowed: false });
      }),
    ),
    ['amsg members imports list'],
  );
  examples(
    imports
      .command('get <import-id>')
      .description('one import with its counts')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/members/imports/${parseIds([id], 'the import id')[0]}`));
        }),
      ),
    ['amsg members imports get 3'],
  );
  examples(
    listOptions(
      imports
        .command('members <import-id>')
        .description('the members an import touched, with their change type (a added, u updated, s skipped)')
        .option('--added-only', 'only the members it added')
        .option('--added-to-groups', 'only the members it put in a group'),
    ).action(
      action(async (ctx, id: string, o: ListFlags & { addedOnly?: boolean; addedToGroups?: boolean }) => {
        const path = `/members/imports/${parseIds([id], 'the import id')[0]}/members`;
        await printList(ctx, path, { added_only: o.addedOnly, added_to_groups: o.addedToGroups }, o, {}, { allByDefault: true });
      }),
    ),
    ['amsg members imports members 3 --added-only'],
  );
}
