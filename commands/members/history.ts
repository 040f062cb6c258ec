// A member's history: `amsg members optouts` and `mailings`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { memberId } from '../../src/cli/resolve.js';

export function registerHistory(members: Command) {
  examples(
    listOptions(members.command('optouts <member>').description("a member's opt-out history"), { windowed: false }).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/members/${await memberId(api, ref)}/optout`, {}, o, { table: TABLES.memberOptouts }, { windowed: false });
      }),
    ),
    ['amsg members optouts ada@example.com'],
  );

  examples(
    listOptions(members.command('mailings <member>').description("a member's mailing history")).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(
          ctx,
          `/members/${await memberId(api, ref)}/mailings`,
          {},
          o,
          { table: TABLES.memberMailings },
          { allByDefault: true },
        );
      }),
    ),
    ['amsg members mailings 42'],
  );
}
