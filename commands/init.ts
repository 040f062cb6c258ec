import type { Command } from 'commander';
import { resolve } from 'node:path';
import { action, examples, UsageError } from '../src/cli/context.js';

export function register(init: Command) {
  examples(
    init
      .option('--account-name <name>', 'name of the account', 'My account')
      .option('--owner-email <email>', "the owner user's e-mail address", 'owner@localhost')
      .option(
        '--hq',
        'make the account an HQ (parent) account that can have sub-accounts; on a database already set up, makes its account one',
      )
      .action(
        action(async (ctx, o: { accountName: string; ownerEmail: string; hq?: boolean }) => {
          const db = ctx.settings.db;
          // init only ever sets up a local file. A base URL typed on this command says the
          // user meant the remote service, which init cannot set up: refused. One merely
          // configured (the environment, a profile) is not where init acts: said, and ignored.
          if (ctx.opts.baseUrl !== undefined && !ctx.opts.local && ctx.opts.db === undefined)
            throw new UsageError(
              `init sets up a local database; --base-url ${ctx.opts.baseUrl} names a remote service, which has its own accounts and keys. ` +
                'Leave out --base-url to set up a local one (amsg init), or use the remote service with --base-url and --api-key',
              'base_url',
            );
          if (ctx.settings.mode === 'remote')
            ctx.note(`a base URL is configured (${ctx.settings.baseUrl}); init sets up a local database and ignored it`);
          const { initLocalDatabase } = await import('../src/client/local-transport.js');
          const result = initLocalDatabase(db, { accountName: o.accountName, ownerEmail: o.ownerEmail, hq: o.hq });
          const hq = result.hq ? { hq: true } : {};
          if (!result.created) {
            ctx.note(
              `${db} is already set up (account ${result.account_id}); ${o.hq ? `account ${result.account_id} is an HQ account` : 'nothing was created'}`,
            );
            return ctx.print({ account_id: result.account_id, db: resolve(db), created: false, ...hq });
          }
          const out = {
            account_id: result.account_id,
            public_key: result.public_key,
            private_key: result.private_key,
            db: resolve(db),
            ...hq,
          };
          ctx.note(`created ${db} with account ${result.account_id}; the private key is shown only now`);
          await ctx.print(out);
        }),
      ),
    [
      'amsg init',
      'amsg init --json > credentials.json',
      'AMSG_DB=/tmp/sandbox.db amsg init --account-name "CI sandbox"',
      'amsg init --hq && amsg accounts create "Oslo branch"',
    ],
  );
}
