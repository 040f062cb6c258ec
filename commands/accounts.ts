import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples, NotFoundError } from '../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { didYouMean, parseIds } from '../src/cli/resolve.js';
import type { Api } from '../src/client/api.js';

/** Sub-account lists answer `{subaccounts: [...]}`, windowed and counted; printed whole unless --limit or --start. */
const SUBACCOUNTS = { key: 'subaccounts', countable: true, allByDefault: true };

const accountId = (ref: string) => parseIds([ref], 'the account')[0];

export function register(accounts: Command) {
  examples(
    listOptions(
      accounts
        .command('list')
        .description("the HQ account's sub-accounts you can access (every one unless --limit or --start)")
        .option('--status <list>', 'comma-separated: active, trial, pending_retirement, retired')
        .option('--search <text>', 'only names containing this text'),
      { countable: true },
    ).action(
      action(async (ctx, o: ListFlags & { status?: string; search?: string }) => {
        await printList(
          ctx,
          '/enterprise/subaccounts',
          { status: o.status, searchterm: o.search },
          o,
          { table: TABLES.subaccounts },
          SUBACCOUNTS,
        );
      }),
    ),
    ['amsg accounts list', 'amsg accounts list --status trial,active --search Oslo'],
  );
  examples(
    accounts
      .command('create <name>')
      .description('create a sub-account of the HQ account (trial unless --status active)')
      .option('--status <status>', 'active or trial (an HQ in trial creates trial accounts)')
      .option('--timezone <tz>', 'tz database name, e.g. Europe/Oslo')
      .option('--country <country>', '2-letter ISO code or English name; needs --city and --state or --province')
      .option('--city <city>')
      .option('--state <state>', 'US state: capitalized name or 2-letter abbreviation')
      .option('--province <province>', 'outside the US')
      .option('--sender-email <email>', 'the sender address of its mailings')
      .option('--sender-name <name>', 'the sender name of its mailings')
      .action(
        action(async (ctx, name: string, o: Record<string, string | undefined>) => {
          const api = await ctx.api();
          const created = await api.post<{ account_id: number }>('/enterprise/subaccount', {
            account_name: name,
            account_status: o.status,
            account_timezone: o.timezone,
            account_rsvp_country: o.country,
            account_rsvp_city: o.city,
            account_rsvp_state: o.state,
            account_rsvp_province: o.province,
            account_rsvp_email: o.senderEmail,
            account_rsvp_name: o.senderName,
          });
          await ctx.done(created, `Created sub-account ${created.account_id} "${name}"; act on it with --account ${created.account_id}.`);
        }),
      ),
    ['amsg accounts create "Oslo branch" --timezone Europe/Oslo --country NO --city Oslo --province Oslo', 'amsg --account 2 members list'],
  );
  examples(
    accounts
      .command('get <id>')
      .description('one sub-account with its settings (and, once retired, when it is purged)')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/enterprise/subaccount/${accountId(ref)}`));
        }),
      ),
    ['amsg accounts get 2'],
  );
  examples(
    dryRunOption(
      accounts
        .command('retire <id>')
        .description('retire a sub-account: unreachable at once, its data purged after 30 days; cannot be undone'),
    ).action(
      action(async (ctx, ref: string) => {
        const id = accountId(ref);
        const api = await ctx.api();
        // No name for an id that is not a sub-account: the retire itself says why (the HQ, another HQ's).
        // A dry run cannot leave that to the retire, so it answers the lookup's refusal.
        const account = await api.get<{ account_name: string }>(`/enterprise/subaccount/${id}`).catch((err) => {
          if (ctx.opts.dryRun) throw err;
          return undefined;
        });
        const named = account ? `sub-account "${account.account_name}" (${id})` : `sub-account ${id}`;
        await ctx.change(
          `retire ${named} (its data is purged in 30 days and cannot be recovered)`,
          1,
          () => api.delete(`/enterprise/subaccount/${id}`),
          `Retired sub-account ${id}; its data is purged in 30 days.`,
        );
      }),
    ),
    ['amsg accounts retire 2 --yes'],
  );
}

/** `amsg users access set|list`: which sub-accounts a user of the HQ may act on. */
export function registerAccess(access: Command) {
  const userId = async (api: Api, ref: string): Promise<number> => {
    if (/^\d+$/.test(ref)) return Number(ref);
    const users = await api.get<{ user_id: number; email: string }[]>('/users');
    const found = users.find((u) => u.email === ref.toLowerCase());
    if (!found)
      throw new NotFoundError(
        `no user with e-mail ${ref} (see amsg users list)${didYouMean(
          ref,
          users.map((u) => u.email),
        )}`,
        'user',
      );
    return found.user_id;
  };
  examples(
    access
      .command('set <user>')
      .description("replace a user's whole list of sub-accounts (by user id or e-mail)")
      .requiredOption('--accounts <ids>', 'comma-separated sub-account ids; an empty string clears the list')
      .action(
        action(async (ctx, ref: string, o: { accounts: string }) => {
          const ids = parseIds(
            o.accounts
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
            '--accounts',
          );
          const api = await ctx.api();
          const id = await userId(api, ref);
          await ctx.done(
            await api.put(`/enterprise/${id}/subaccounts`, { accounts: ids }),
            `User ${id} may now act on: ${ids.join(', ') || 'no sub-account'}.`,
          );
        }),
      ),
    ['amsg users access set ops@example.com --accounts 12,13', 'amsg users access set 4 --accounts ""'],
  );
  examples(
    listOptions(access.command('list <user>').description('the sub-accounts a user can act on (every one for an owner)'), {
      countable: true,
    }).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/enterprise/${await userId(api, ref)}/subaccounts`, {}, o, { table: TABLES.subaccounts }, SUBACCOUNTS);
      }),
    ),
    ['amsg users access list ops@example.com'],
  );
}
