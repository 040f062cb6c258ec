import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples } from '../src/cli/context.js';
import { counted, describeGroup, statusWord } from '../src/cli/describe.js';
import { collectList, groupId, memberId, statusLetter } from '../src/cli/resolve.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';

export function register(groups: Command) {
  examples(
    listOptions(
      groups
        .command('list')
        .description('list groups with active, error and opt-out counts (every group unless --limit or --start)')
        .option('--type <letters>', 'group types, e.g. g,h,s (default g)'),
      { countable: true },
    ).action(
      action(async (ctx, o: ListFlags & { type?: string }) => {
        await printList(ctx, '/groups', { group_types: o.type }, o, { table: TABLES.groups }, { countable: true, allByDefault: true });
      }),
    ),
    ['amsg groups list', 'amsg groups list --json | jq ".[].group_name"'],
  );

  examples(
    groups
      .command('create <names...>')
      .description('create groups (all or none)')
      .action(
        action(async (ctx, names: string[]) => {
          const api = await ctx.api();
          const created = await api.post<{ member_group_id: number }[]>('/groups', {
            groups: names.map((group_name) => ({ group_name })),
          });
          await ctx.print(created);
        }),
      ),
    ['amsg groups create Newsletter "VIP customers"'],
  );

  examples(
    groups
      .command('get <group>')
      .description('show a group, by id or name')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/groups/${await groupId(api, ctx, ref)}`));
        }),
      ),
    ['amsg groups get Newsletter'],
  );

  examples(
    groups
      .command('rename <group> <new-name>')
      .description('rename a group')
      .action(
        action(async (ctx, ref: string, name: string) => {
          const api = await ctx.api();
          const id = await groupId(api, ctx, ref);
          await ctx.done(await api.put(`/groups/${id}`, { group_name: name }), `Renamed group ${id} to "${name}".`);
        }),
      ),
    ['amsg groups rename Newsletter "Weekly newsletter"'],
  );

  examples(
    dryRunOption(groups.command('delete <group>').description('delete a group (its members stay; only the memberships go)')).action(
      action(async (ctx, ref: string) => {
        const api = await ctx.api();
        const id = await groupId(api, ctx, ref);
        const group = await describeGroup(api, id);
        const what = `delete ${group.label} and its ${counted(group.members, 'membership')}`;
        await ctx.change(what, group.members, () => api.delete(`/groups/${id}`), `Deleted group ${id}.`);
      }),
    ),
    ['amsg groups delete 7 --yes'],
  );

  examples(
    listOptions(
      groups
        .command('members <group>')
        .description("a group's members, a window of 500 at a time unless --all")
        .option('--deleted', 'include archived members'),
    ).action(
      action(async (ctx, ref: string, o: ListFlags & { deleted?: boolean }) => {
        const api = await ctx.api();
        const id = await groupId(api, ctx, ref);
        // The group's kept counts say how many members it has, for the "N of M shown" note.
        const total = async () => {
          if (o.deleted) return undefined;
          const g = await api.get<{ active_count: number; error_count: number; optout_count: number }>(`/groups/${id}`);
          return g.active_count + g.error_count + g.optout_count;
        };
        await printList(ctx, `/groups/${id}/members`, { deleted: o.deleted }, o, { table: TABLES.members }, { total });
      }),
    ),
    ['amsg groups members Newsletter --all --output csv > newsletter.csv', 'amsg groups members Newsletter --limit 20'],
  );

  examples(
    groups
      .command('add-members <group> <members...>')
      .description('add members (ids or e-mail addresses) to a group; prints the ids newly added')
      .action(
        action(async (ctx, ref: string, refs: string[]) => {
          const api = await ctx.api();
          const id = await groupId(api, ctx, ref);
          const ids = await Promise.all(refs.map((r) => memberId(api, r)));
          const added = await api.put<number[]>(`/groups/${id}/members`, { member_ids: ids });
          await ctx.done(added, `Added ${added.length} member(s) to group ${id}.`);
        }),
      ),
    ['amsg groups add-members Newsletter 1 2 ada@example.com'],
  );

  examples(
    groups
      .command('remove-members <group> <members...>')
      .description('remove members from a group; prints the ids actually removed')
      .action(
        action(async (ctx, ref: string, refs: string[]) => {
          const api = await ctx.api();
          const id = await groupId(api, ctx, ref);
          const ids = await Promise.all(refs.map((r) => memberId(api, r)));
          const removed = await api.put<number[]>(`/groups/${id}/members/remove`, { member_ids: ids });
          await ctx.done(removed, `Removed ${removed.length} member(s) from group ${id}.`);
        }),
      ),
    ['amsg groups remove-members Newsletter 2'],
  );

  examples(
    dryRunOption(
      groups
        .command('clear <group>')
        .description('remove every member from a group, or only those of one status')
        .option('--status <a|e|f|o>', 'only members with this status'),
    ).action(
      action(async (ctx, ref: string, o: { status?: string; dryRun?: boolean }) => {
        const status = o.status ? statusLetter(o.status, ['a', 'e', 'f', 'o']) : undefined;
        const api = await ctx.api();
        const id = await groupId(api, ctx, ref);
        const group = await describeGroup(api, id);
        const n = status ? (group.byStatus[status] ?? 0) : group.members;
        const what = `remove ${counted(n, status ? `${statusWord(status)} member` : 'member')} from ${group.label}`;
        await ctx.change(
          what,
          n,
          () => api.delete<number>(`/groups/${id}/members`, { member_status_id: status }),
          (removed) => `Removed ${counted(removed, 'member')} from ${group.label}.`,
        );
      }),
    ),
    ['amsg groups clear Newsletter --status o --yes'],
  );

  examples(
    groups
      .command('copy <from> <to>')
      .description('copy the members of one group into another')
      .option('--status <list>', 'only these statuses, e.g. a,o', collectList)
      .action(
        action(async (ctx, fromRef: string, toRef: string, o: { status?: string[] }) => {
          const api = await ctx.api();
          const from = await groupId(api, ctx, fromRef);
          const to = await groupId(api, ctx, toRef);
          const body = { member_status_id: o.status?.map((s) => statusLetter(s, ['a', 'e', 'f', 'o'])) };
          await ctx.done(await api.put(`/groups/${from}/${to}/members/copy`, body), `Copied group ${from} into group ${to}.`);
        }),
      ),
    ['amsg groups copy Newsletter Everyone --status a'],
  );
}
