// Status changes: `amsg members optout`, and `delete` (archive), `status`, `move-status`.
import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../../src/cli/context.js';
import { counted, countMembers, describeGroup, describeMembers, statusWord } from '../../src/cli/describe.js';
import { seg } from '../../src/client/api.js';
import { groupId, memberId, statusLetter } from '../../src/cli/resolve.js';

export function registerOptout(members: Command) {
  examples(
    members
      .command('optout <member>')
      .description('opt a member out, by e-mail address or id (true also when already opted out)')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          // The service opts out by address: an id is looked up first, as every member command takes one.
          const email = /^\d+$/.test(ref) ? (await api.get<{ email: string }>(`/members/${ref}`)).email : ref;
          await ctx.done(await api.put(`/members/email/optout/${seg(email)}`), `Opted out ${email}.`);
        }),
      ),
    ['amsg members optout ada@example.com', 'amsg members optout 42'],
  );
}

export function registerStatusChanges(members: Command) {
  examples(
    dryRunOption(
      members
        .command('delete [members...]')
        .description('archive members (by id or e-mail), or every member of a status; archived members stay readable with --deleted')
        .option('--status <a|e|o>', 'archive every member with this status'),
    ).action(
      action(async (ctx, refs: string[], o: { status?: string; dryRun?: boolean }) => {
        if (o.status && refs.length) throw new UsageError('give members or --status, not both');
        if (!o.status && !refs.length) throw new UsageError('give the members to archive, or --status');
        const api = await ctx.api();
        if (o.status) {
          const status = statusLetter(o.status, ['a', 'e', 'o']);
          if (o.dryRun) {
            const n = await countMembers(api, { status });
            return ctx.wouldChange(`archive ${counted(n, `${statusWord(status)} member`)}`, n);
          }
          await ctx.confirm(`archive every ${statusWord(status)} member`);
          return ctx.done(await api.delete('/members', { member_status_id: status }), `Archived every member with status ${status}.`);
        }
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `archive ${await describeMembers(api, ids)}`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        if (ids.length === 1) return ctx.done(await api.delete(`/members/${ids[0]}`), `Archived member ${ids[0]}.`);
        const all = await api.put<boolean>('/members/delete', { member_ids: ids });
        await ctx.done(all, all ? `Archived ${ids.length} members.` : 'Archived the members that exist; some ids were not found.');
      }),
    ),
    ['amsg members delete 42 --yes', 'amsg members delete --status e --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('status <members...>')
        .description('set the status of members (ids or e-mail addresses)')
        .requiredOption('--to <a|e|o>', 'the new status'),
    ).action(
      action(async (ctx, refs: string[], o: { to: string; dryRun?: boolean }) => {
        const to = statusLetter(o.to, ['a', 'e', 'o']);
        const api = await ctx.api();
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `set the status of ${await describeMembers(api, ids)} to ${statusWord(to)}`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        const all = await api.put<boolean>('/members/status', { member_ids: ids, status_to: to });
        await ctx.done(all, all ? `Set ${ids.length} member(s) to status ${to}.` : 'Some members were not found; the others were changed.');
      }),
    ),
    ['amsg members status 42 43 --to o --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('move-status')
        .description('move every member of one status to another (optionally within one group)')
        .requiredOption('--from <a|e|f|o>', 'members currently in this status')
        .requiredOption('--to <a|e|o>', 'take this status')
        .option('--group <name|id>', 'only members of this group'),
    ).action(
      action(async (ctx, o: { from: string; to: string; group?: string; dryRun?: boolean }) => {
        const from = statusLetter(o.from, ['a', 'e', 'f', 'o']);
        const to = statusLetter(o.to, ['a', 'e', 'o']);
        const api = await ctx.api();
        const group_id = o.group ? await groupId(api, ctx, o.group) : undefined;
        const group = group_id ? await describeGroup(api, group_id) : undefined;
        const within = group ? ` in ${group.label}` : '';
        if (o.dryRun) {
          const n = group && from in group.byStatus ? group.byStatus[from] : await countMembers(api, { group_id, status: from });
          return ctx.wouldChange(`move ${counted(n, `${statusWord(from)} member`)}${within} to ${statusWord(to)}`, n);
        }
        await ctx.confirm(`move every ${statusWord(from)} member${within} to ${statusWord(to)}`);
        await ctx.done(await api.put(`/members/status/${from}/to/${to}`, { group_id }), `Moved members from ${from} to ${to}.`);
      }),
    ),
    ['amsg members move-status --from e --to a --group Newsletter --yes'],
  );
}
