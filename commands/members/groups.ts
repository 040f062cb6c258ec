// Members and groups: `amsg members groups list|add|remove`, `remove-from-groups`, `copy-to-group`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../../src/cli/context.js';
import { counted, describeMember } from '../../src/cli/describe.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { collectList, groupId, groupIds, memberId, parseIds, statusLetter } from '../../src/cli/resolve.js';

export function registerGroups(members: Command) {
  const groups = members.command('groups').description("a member's groups");
  examples(
    listOptions(groups.command('list <member>').description('the groups a member is in'), { windowed: false }).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/members/${await memberId(api, ref)}/groups`, {}, o, { table: TABLES.groups }, { windowed: false });
      }),
    ),
    ['amsg members groups list ada@example.com'],
  );
  examples(
    groups
      .command('add <member>')
      .description('add a member to groups (prints the groups newly joined)')
      .requiredOption('--group <name|id>', 'group (repeatable)', collectList)
      .action(
        action(async (ctx, ref: string, o: { group: string[] }) => {
          const api = await ctx.api();
          const id = await memberId(api, ref);
          const added = await api.put<number[]>(`/members/${id}/groups`, { group_ids: await groupIds(api, ctx, o.group) });
          await ctx.done(added, `Member ${id} joined ${added.length} group(s).`);
        }),
      ),
    ['amsg members groups add 42 --group Newsletter --group VIP'],
  );
  examples(
    dryRunOption(
      groups
        .command('remove <member>')
        .description('remove a member from some groups, or from all of them')
        .option('--group <name|id>', 'group (repeatable)', collectList)
        .option('--all', 'remove from every group'),
    ).action(
      action(async (ctx, ref: string, o: { group?: string[]; all?: boolean }) => {
        if (!o.all === !o.group?.length) throw new UsageError('give --group or --all');
        const api = await ctx.api();
        const id = await memberId(api, ref);
        const joined = async () => (await api.get<{ member_group_id: number }[]>(`/members/${id}/groups`)).map((g) => g.member_group_id);
        if (o.all) {
          const n = (await joined()).length;
          const what = `remove ${await describeMember(api, id)} from every group (${counted(n, 'group')})`;
          return ctx.change(what, n, () => api.delete(`/members/${id}/groups`), `Member ${id} left every group.`);
        }
        if (ctx.opts.dryRun) {
          const ids = await groupIds(api, ctx, o.group);
          const now = new Set(await joined());
          const n = ids.filter((g) => now.has(g)).length;
          return ctx.wouldChange(`remove ${await describeMember(api, id)} from ${counted(n, 'group')}`, n);
        }
        const removed = await api.put<number[]>(`/members/${id}/groups/remove`, { group_ids: await groupIds(api, ctx, o.group) });
        await ctx.done(removed, `Member ${id} left ${removed.length} group(s).`);
      }),
    ),
    ['amsg members groups remove 42 --group VIP', 'amsg members groups remove 42 --all --yes'],
  );

  examples(
    members
      .command('remove-from-groups')
      .description('remove several members from several groups (nothing changes if any does not exist)')
      .requiredOption('--member <id>', 'member id (repeatable)', collectList)
      .requiredOption('--group <name|id>', 'group (repeatable)', collectList)
      .action(
        action(async (ctx, o: { member: string[]; group: string[] }) => {
          const api = await ctx.api();
          const body = { member_ids: parseIds(o.member, '--member'), group_ids: await groupIds(api, ctx, o.group) };
          await ctx.done(await api.put('/members/groups/remove', body), 'Removed.');
        }),
      ),
    ['amsg members remove-from-groups --member 1,2,3 --group Newsletter'],
  );

  examples(
    members
      .command('copy-to-group <group>')
      .description('copy every member of the given statuses into a group')
      .option('--status <list>', 'statuses to copy, e.g. a,o', 'a')
      .action(
        action(async (ctx, ref: string, o: { status: string }) => {
          const api = await ctx.api();
          const id = await groupId(api, ctx, ref);
          const statuses = o.status.split(',').map((s) => statusLetter(s.trim(), ['a', 'e', 'o']));
          await ctx.done(await api.put(`/members/${id}/copy`, { member_status_id: statuses }), `Copied members into group ${id}.`);
        }),
      ),
    ['amsg members copy-to-group Everyone --status a,o'],
  );
}
