import { Command } from 'commander';
import { action, examples, UsageError, type RunContext } from '../src/cli/context.js';
import { PAGE_SIZE } from '../src/cli/paging.js';
import { parseIds } from '../src/cli/resolve.js';
import type { Api } from '../src/client/api.js';
import type { QueryValue } from '../src/client/transport.js';

const COLUMNS = ['account_id', 'account_name', 'account_status'];
type Item = { account_id: number; account_name: string; account_status: string };

/** Every sub-account of a `{subaccounts}` list, a window at a time; a table of them, or the service's shape. */
export async function printSubaccounts(ctx: RunContext, api: Api, path: string, query: Record<string, QueryValue> = {}) {
  const all: Item[] = [];
  for (let start = 0; ; start += PAGE_SIZE) {
    const page = (await api.get<{ subaccounts: Item[] }>(path, { ...query, start, end: start + PAGE_SIZE })).subaccounts;
    all.push(...page);
    if (page.length < PAGE_SIZE) break;
  }
  await ctx.print(ctx.format === 'table' ? all : { subaccounts: all }, { columns: COLUMNS });
}

const accountId = (ref: string) => parseIds([ref], 'the account')[0];

export function register(accounts: Command) {
  examples(
    accounts
      .command('list')
      .description("the HQ account's sub-accounts you can access")
      .option('--status <list>', 'comma-separated: active, trial, pending_retirement, retired')
      .option('--search <text>', 'only names containing this text')
      .option('--count', 'print only how many there are')
      .action(
        action(async (ctx, o: { status?: string; search?: string; count?: boolean }) => {
          const api = await ctx.api();
          const query = { status: o.status, searchterm: o.search };
          if (o.count) return ctx.print(await api.get('/enterprise/subaccounts', { ...query, count: true }));
          await printSubaccounts(ctx, api, '/enterprise/subaccounts', query);
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
    accounts
      .command('retire <id>')
      .description('retire a sub-account: unreachable at once, its data purged after 30 days; cannot be undone')
      .action(
        action(async (ctx, ref: string) => {
          const id = accountId(ref);
          const api = await ctx.api();
          await ctx.confirm(`retire sub-account ${id} (its data is purged in 30 days and cannot be recovered)`);
          await ctx.done(await api.delete(`/enterprise/subaccount/${id}`), `Retired sub-account ${id}; its data is purged in 30 days.`);
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
    if (!found) throw new UsageError(`no user with e-mail ${ref} (see amsg users list)`);
    return found.user_id;
  };
  examples(
    access
      .command('set <user>')
      .description("replace a user's whole list of sub-accounts (by user id or e-mail)")
      .requiredOption('--accounts <ids>', 'comma-separated sub-account ids; an empty string clears the list')
      .action(
        action(async (ctx, ref: string, o: { accounts: string }) => {
          const ids = parseIds(o.accounts.split(',').map((x) => x.trim()).filter(Boolean), '--accounts');
          const api = await ctx.api();
          const id = await userId(api, ref);
          await ctx.done(await api.put(`/enterprise/${id}/subaccounts`, { accounts: ids }), `User ${id} may now act on: ${ids.join(', ') || 'no sub-account'}.`);
        }),
      ),
    ['amsg users access set ops@example.com --accounts 12,13', 'amsg users access set 4 --accounts ""'],
  );
  examples(
    access
      .command('list <user>')
      .description('the sub-accounts a user can act on (every one for an owner)')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await printSubaccounts(ctx, api, `/enterprise/${await userId(api, ref)}/subaccounts`);
        }),
      ),
    ['amsg users access list ops@example.com'],
  );
}
