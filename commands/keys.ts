import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, dryRunOption, examples, NotFoundError, UsageError } from '../src/cli/context.js';

export function register(keys: Command) {
  examples(
    listOptions(
      keys.command('list').description("the account's keys (public halves)").option('--include-revoked', 'include revoked keys'),
      { windowed: false },
    ).action(
      action(async (ctx, o: ListFlags & { includeRevoked?: boolean }) => {
        await printList(ctx, '/keys', { include_revoked: o.includeRevoked }, o, { table: TABLES.keys }, { windowed: false });
      }),
    ),
    ['amsg keys list'],
  );
  examples(
    keys
      .command('create')
      .description('create a key pair; the private key is shown only this once')
      .option('--user <id>', 'the user the key acts as (default: you)')
      .option('--label <text>', 'what the key is for')
      .action(
        action(async (ctx, o: { user?: string; label?: string }) => {
          if (o.user !== undefined && !/^\d+$/.test(o.user)) throw new UsageError(`--user must be a user id, got "${o.user}"`);
          const api = await ctx.api();
          const key = await api.post<{ public_key: string; private_key: string }>('/keys', {
            user_id: o.user === undefined ? undefined : Number(o.user),
            label: o.label,
          });
          ctx.note('the private key is shown only now; AMSG_API_KEY takes public:private');
          await ctx.print(key);
        }),
      ),
    ['amsg keys create --label "CI job"', 'amsg keys create --user 2 --json'],
  );
  examples(
    dryRunOption(keys.command('revoke <key-id>').description('revoke a key; calls with it fail from now on')).action(
      action(async (ctx, id: string) => {
        if (!/^\d+$/.test(id)) throw new UsageError(`the key id must be a number (see amsg keys list), got "${id}"`);
        const api = await ctx.api();
        type Key = { key_id: number; public_key: string; label: string | null; user_email: string; revoked_at: string | null };
        const k = (await api.get<Key[]>('/keys', { include_revoked: true })).find((x) => x.key_id === Number(id));
        // The service's own refusal otherwise; a dry run has no call to refuse it.
        if (!k && ctx.opts.dryRun) throw new NotFoundError(`key ${id} not found (see amsg keys list)`, 'key_id');
        const named = k
          ? `key ${id} "${k.label ?? k.public_key}" of ${k.user_email}${k.revoked_at ? ' (revoked already)' : ''}`
          : `key ${id}`;
        await ctx.change(`revoke ${named}`, k?.revoked_at ? 0 : 1, () => api.delete(`/keys/${id}`), `Revoked key ${id}.`);
      }),
    ),
    ['amsg keys revoke 3 --yes'],
  );
}
