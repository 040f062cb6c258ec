// Erasure: `amsg members purge` and `purge-archived` (cannot be undone).
import type { Command } from 'commander';
import { action, dryRunOption, examples } from '../../src/cli/context.js';
import { counted, countMembers, describeGroup, describeMembers, statusWord } from '../../src/cli/describe.js';
import { groupId, memberId, statusLetter } from '../../src/cli/resolve.js';

export function registerPurges(members: Command) {
  examples(
    dryRunOption(
      members.command('purge <members...>').description('erase members from every table (right to erasure); cannot be undone'),
    ).action(
      action(async (ctx, refs: string[], o: { dryRun?: boolean }) => {
        const api = await ctx.api();
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `erase ${await describeMembers(api, ids)} permanently`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        await ctx.done(await api.post('/members/purge', { member_ids: ids }), `Erased ${ids.length} member(s).`);
      }),
    ),
    ['amsg members purge 42 --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('purge-archived')
        .description('erase every archived member (optionally only of a status or group); cannot be undone')
        .option('--status <a|e|o>', 'only archived members with this status')
        .option('--group <name|id>', 'only archived members of this group'),
    ).action(
      action(async (ctx, o: { status?: string; group?: string; dryRun?: boolean }) => {
        const api = await ctx.api();
        const body = {
          member_status_id: o.status ? statusLetter(o.status, ['a', 'e', 'o']) : undefined,
          member_group_id: o.group ? String(await groupId(api, ctx, o.group)) : undefined,
        };
        const status = body.member_status_id;
        const group = body.member_group_id ? await describeGroup(api, Number(body.member_group_id)) : undefined;
        const which = `archived ${status ? `${statusWord(status)} ` : ''}member`;
        const within = group ? ` of ${group.label}` : '';
        if (o.dryRun) {
          const n = await countMembers(api, { group_id: group && Number(body.member_group_id), archived: true, status });
          return ctx.wouldChange(`erase ${counted(n, which)}${within} permanently`, n);
        }
        await ctx.confirm(`erase every ${which}${within} permanently`);
        await ctx.done(await api.put('/members/purgeall', body), 'Erased the archived members.');
      }),
    ),
    ['amsg members purge-archived --status o --yes'],
  );
}
