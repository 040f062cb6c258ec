import { TABLES } from '../src/cli/columns.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { type Command, Option } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { collectList, memberId, parseIds, subscriptionId } from '../src/cli/resolve.js';

interface EditFlags {
  description?: string;
  order?: string;
  showOnPreferenceForm?: boolean;
}

/** The optional parts of a create or update body, from flags (only those given). */
function editBody(o: EditFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.description !== undefined) body.description = o.description;
  if (o.order !== undefined) {
    if (o.order !== 'none' && !/^-?\d+$/.test(o.order)) throw new UsageError(`--order takes an integer or none, got "${o.order}"`);
    body.subscription_order = o.order === 'none' ? null : Number(o.order);
  }
  if (o.showOnPreferenceForm !== undefined) body.settings = { show_on_default_preference_form: o.showOnPreferenceForm };
  return body;
}

const withEditFlags = (cmd: Command) =>
  cmd
    .option('--description <text>', 'what members get from this subscription')
    .option('--order <n|none>', 'position among subscriptions (subscription_order); none clears it')
    .option('--show-on-preference-form', 'list it on the default preference form (settings)')
    .option('--no-show-on-preference-form', 'do not list it on the default preference form');

const windowFlags = (cmd: Command) => listOptions(cmd);

export function register(subscriptions: Command) {
  examples(
    listOptions(
      subscriptions
        .command('list')
        .description('list subscriptions with member and opt-out counts (live ones unless told otherwise)')
        .addOption(new Option('--deleted-only', 'only deleted subscriptions').conflicts('includeDeleted'))
        .option('--include-deleted', 'deleted subscriptions too'),
      { windowed: false },
    ).action(
      action(async (ctx, o: ListFlags & { deletedOnly?: boolean; includeDeleted?: boolean }) => {
        const query = { deleted_only: o.deletedOnly, include_deleted: o.includeDeleted };
        await printList(ctx, '/subscriptions', query, o, { table: TABLES.subscriptions }, { windowed: false });
      }),
    ),
    ['amsg subscriptions list', 'amsg subscriptions list --include-deleted --json | jq ".[].subscription_name"'],
  );

  examples(
    subscriptions
      .command('get <subscription>')
      .description('show a subscription, by id or name (a deleted one by id)')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/subscriptions/${await subscriptionId(api, ref)}`));
        }),
      ),
    ['amsg subscriptions get "Weekly digest"', 'amsg subscriptions get 3 --json'],
  );

  examples(
    withEditFlags(subscriptions.command('create <name>').description('create a subscription')).action(
      action(async (ctx, name: string, o: EditFlags) => {
        const api = await ctx.api();
        await ctx.print(await api.post('/subscriptions', { name, ...editBody(o) }));
      }),
    ),
    [
      'amsg subscriptions create "Weekly digest" --description "The week in one e-mail"',
      'amsg subscriptions create Offers --order 2 --show-on-preference-form',
    ],
  );

  examples(
    withEditFlags(
      subscriptions
        .command('update <subscription>')
        .description('rename a subscription or change its description')
        .option('--name <name>', 'the new name'),
    ).action(
      action(async (ctx, ref: string, o: EditFlags & { name?: string }) => {
        const api = await ctx.api();
        const id = await subscriptionId(api, ref);
        const body = { ...(o.name !== undefined ? { name: o.name } : {}), ...editBody(o) };
        await ctx.print(await api.put(`/subscriptions/${id}`, body));
      }),
    ),
    ['amsg subscriptions update "Weekly digest" --name "Monthly digest"', 'amsg subscriptions update 3 --description ""'],
  );

  examples(
    subscriptions
      .command('delete <subscription>')
      .description('delete a subscription (it frees its name; reads by id still show it)')
      .option('--dry-run', 'say what would change, and how many, and change nothing')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          const id = await subscriptionId(api, ref);
          const sub = await api.get<{ subscription_name: string }>(`/subscriptions/${id}`);
          await ctx.change(
            `delete subscription "${sub.subscription_name}" (${id})`,
            1,
            () => api.delete(`/subscriptions/${id}`),
            `Deleted subscription ${id}.`,
          );
        }),
      ),
    ['amsg subscriptions delete Offers --yes'],
  );

  examples(
    windowFlags(subscriptions.command('members <subscription>').description('ids of the subscribed members')).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/subscriptions/${await subscriptionId(api, ref)}/members`, {}, o);
      }),
    ),
    ['amsg subscriptions members "Weekly digest"', 'amsg subscriptions members 3 --start 500 --end 1000 --output csv'],
  );

  examples(
    windowFlags(
      subscriptions.command('optouts <subscription>').description('ids of the members opted out of it (or of everything)'),
    ).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/subscriptions/${await subscriptionId(api, ref)}/optouts`, {}, o);
      }),
    ),
    ['amsg subscriptions optouts "Weekly digest"'],
  );

  examples(
    subscriptions
      .command('add-members <subscription>')
      .description('subscribe members, or every member an import added or updated (members who opted out stay out)')
      .option('--member <id|email>', 'a member to subscribe (repeatable, or comma-separated)', collectList)
      .addOption(new Option('--import <id>', 'subscribe the members of this import').conflicts('member'))
      .action(
        action(async (ctx, ref: string, o: { member?: string[]; import?: string }) => {
          if (!o.member && o.import === undefined) throw new UsageError('give --member (one or more) or --import');
          const api = await ctx.api();
          const id = await subscriptionId(api, ref);
          const body = o.member
            ? { member_ids: await Promise.all(o.member.map((r) => memberId(api, r))) }
            : { import_id: parseIds([o.import!], '--import')[0] };
          await ctx.done(await api.post(`/subscriptions/${id}/members/bulk`, body), `Subscribed to subscription ${id}.`);
        }),
      ),
    [
      'amsg subscriptions add-members "Weekly digest" --member 1 --member ada@example.com',
      'amsg subscriptions add-members "Weekly digest" --import 12',
    ],
  );

  examples(
    subscriptions
      .command('optout <subscription> <member>')
      .description('opt a member (id or e-mail address) out of this subscription only')
      .action(
        action(async (ctx, ref: string, memberRef: string) => {
          const api = await ctx.api();
          const id = await subscriptionId(api, ref);
          const member = await memberId(api, memberRef);
          await ctx.done(
            await api.put(`/subscriptions/${id}/members/${member}/optout`),
            `Opted member ${member} out of subscription ${id}.`,
          );
        }),
      ),
    ['amsg subscriptions optout "Weekly digest" ada@example.com'],
  );

  examples(
    subscriptions
      .command('remove-member <subscription> <member>')
      .description('remove a member from a subscription, its opt-out of it included')
      .action(
        action(async (ctx, ref: string, memberRef: string) => {
          const api = await ctx.api();
          const id = await subscriptionId(api, ref);
          const member = await memberId(api, memberRef);
          await ctx.done(await api.delete(`/subscriptions/${id}/members/${member}`), `Removed member ${member} from subscription ${id}.`);
        }),
      ),
    ['amsg subscriptions remove-member "Weekly digest" 42'],
  );
}
