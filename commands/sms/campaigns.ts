// `amsg sms campaigns`: list, get, create, update, copy, deliveries and clicks here; send,
// cancel and archive in send.ts, registered between them (the order of the help).
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { numericId } from '../../src/cli/resolve.js';
import { registerSendCancelArchive } from './send.js';
import { bodyOf, type CampaignFlags, campaignOptions } from './shared.js';

export function registerCampaigns(campaigns: Command) {
  examples(
    listOptions(
      campaigns
        .command('list')
        .description('SMS campaigns, every one unless --limit or --start (archived ones with --archived)')
        .option('--archived', 'include archived campaigns'),
      { countable: true },
    ).action(
      action(async (ctx, o: ListFlags & { archived?: boolean }) => {
        await printList(
          ctx,
          '/sms/campaigns',
          { include_archived: o.archived },
          o,
          { table: TABLES.smsCampaigns },
          { countable: true, allByDefault: true },
        );
      }),
    ),
    ['amsg sms campaigns list', 'amsg sms campaigns list --archived --json | jq ".[].send_status"'],
  );

  examples(
    campaigns
      .command('get <campaign>')
      .description('one SMS campaign with its totals')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/sms/campaigns/${numericId(ref, 'CAMPAIGN')}`));
        }),
      ),
    ['amsg sms campaigns get 3'],
  );

  examples(
    campaignOptions(
      campaigns.command('create').description('create an SMS campaign as a draft (send it with `amsg sms campaigns send`)'),
    ).action(
      action(async (ctx, o: CampaignFlags) => {
        if (!o.name) throw new UsageError('--name is required');
        if (o.message === undefined && o.messageFile === undefined) throw new UsageError('--message or --message-file is required');
        if (!o.from) throw new UsageError('--from is required');
        const api = await ctx.api();
        const id = await api.post<number>('/sms/campaigns', await bodyOf(api, ctx, o));
        await ctx.done(id, `Created SMS campaign ${id} (a draft).`);
      }),
    ),
    [
      `amsg sms campaigns create --name Sale --from +15555550100 --group Newsletter --promotional --shorten-links \\\n      --message 'Hi [% member:first_name | default:"there" %], 20% off today: https://shop.example.com/sale'`,
      'amsg sms campaigns create --name Receipt --from +15555550100 --member ada@example.com --message-file receipt.txt',
    ],
  );

  examples(
    campaignOptions(
      campaigns.command('update <campaign>').description('change a draft (audience flags replace its whole audience)'),
    ).action(
      action(async (ctx, ref: string, o: CampaignFlags) => {
        const id = numericId(ref, 'CAMPAIGN');
        const api = await ctx.api();
        await ctx.done(await api.patch(`/sms/campaigns/${id}`, await bodyOf(api, ctx, o)), `Updated SMS campaign ${id}.`);
      }),
    ),
    ['amsg sms campaigns update 3 --message "Last day: 20% off" --no-shorten-links'],
  );
  registerSendCancelArchive(campaigns);

  examples(
    campaigns
      .command('copy <campaign>')
      .description('copy a campaign into a new draft')
      .option('--name <name>', 'the copy\'s name (default: "<name> (copy)")')
      .action(
        action(async (ctx, ref: string, o: { name?: string }) => {
          const id = numericId(ref, 'CAMPAIGN');
          const api = await ctx.api();
          const copy = await api.post<number>(`/sms/campaigns/${id}/copy`, { sms_campaign_name: o.name });
          await ctx.done(copy, `Copied SMS campaign ${id} as draft ${copy}.`);
        }),
      ),
    ['amsg sms campaigns copy 3 --name "Sale, again"'],
  );

  for (const [verb, columns, what] of [
    ['deliveries', TABLES.smsDeliveries, 'its deliveries (d delivered, b bounced), in member id order'],
    ['clicks', TABLES.smsClicks, 'the clicks on its short links, in the order they came'],
  ] as const)
    examples(
      listOptions(campaigns.command(`${verb} <campaign>`).description(`a campaign's ${what}, a window of 500 at a time unless --all`), {
        countable: true,
      }).action(
        action(async (ctx, ref: string, o: ListFlags) => {
          await printList(ctx, `/sms/campaigns/${numericId(ref, 'CAMPAIGN')}/${verb}`, {}, o, { table: columns }, { countable: true });
        }),
      ),
      [`amsg sms campaigns ${verb} 3`],
    );
}
