import type { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, examples } from '../src/cli/context.js';
import { registerAccess } from './accounts.js';

export function register(users: Command) {
  examples(
    listOptions(users.command('list').description('list users'), { windowed: false }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/users', {}, o, {}, { windowed: false });
      }),
    ),
    ['amsg users list'],
  );
  examples(
    users
      .command('create <email>')
      .description('add a user')
      .requiredOption('--role <role>', 'owner, manager or user')
      .option('--billing-access', 'may read and change billing settings')
      .option('--manage-users', 'may manage users (managers)')
      .action(
        action(async (ctx, email: string, o: { role: string; billingAccess?: boolean; manageUsers?: boolean }) => {
          const api = await ctx.api();
          await ctx.print(await api.post('/users', { email, role: o.role, billing_access: o.billingAccess, manage_users: o.manageUsers }));
        }),
      ),
    ['amsg users create ops@example.com --role manager --manage-users'],
  );
  registerAccess(users.command('access').description('which sub-accounts of the HQ a user may act on'));
}
