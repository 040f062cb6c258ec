import { Command } from 'commander';
import { resolve } from 'node:path';
import { action, examples } from '../src/cli/context.js';

export function register(init: Command) {
  examples(
    init
      .option('--account-name <name>', 'name of the account', 'My account')
      .option('--owner-email <email>', "the owner user's e-mail address", 'owner@localhost')
      .action(
        action(async (ctx, o: { accountName: string; ownerEmail: string }) => {
          const db = ctx.settings.db;
          // init only ever sets up a local file: a configured base URL is not where it acts.
          if (ctx.settings.mode === 'remote')
            ctx.note(`a base URL is configured (${ctx.settings.baseUrl}); init sets up a local database and ignored it`);
          const { initLocalDatabase } = await import('../src/client/local-transport.js');
          const result = initLocalDatabase(db, { accountName: o.accountName, ownerEmail: o.ownerEmail });
          if (!result.created) {
            ctx.note(`${db} is already set up (account ${result.account_id}); nothing was created`);
            return ctx.print({ account_id: result.account_id, db: resolve(db), created: false });
          }
          const out = {
            account_id: result.account_id,
            public_key: result.public_key,
            private_key: result.private_key,
            db: resolve(db),
          };
          ctx.note(`created ${db} with account ${result.account_id}; the private key is shown only now`);
          await ctx.print(out);
        }),
      ),
    [
      'amsg init',
      'amsg init --json > credentials.json',
      'AMSG_DB=/tmp/sandbox.db amsg init --account-name "CI sandbox"',
    ],
  );
}
