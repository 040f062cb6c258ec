import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Api } from '../src/client/api.js';
import { action, dryRunOption, examples, EXIT, UsageError, type RunContext } from '../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { collectList, groupIds, memberId, searchId } from '../src/cli/resolve.js';
import { numericId } from './mailings/shared.js';

const CAMPAIGN_COLUMNS = [
  'sms_campaign_id',
  'sms_campaign_name',
  'send_status',
  'is_promotional',
  'total_sent',
  'deliveries',
  'bounces',
  'message_segments',
  'scheduled_at',
  'send_finished',
];
const DELIVERY_COLUMNS = ['member_id', 'delivery_type', 'bounce_type', 'to_phone_number', 'opted_out_at'];
const CLICK_COLUMNS = ['member_id', 'sms_link_id', 'sms_link_target', 'to_phone_number', 'click_timestamp'];

/** The send_status letters (the README's table). */
const STATUS_NAMES: Record<string, string> = {
  d: 'draft',
  s: 'scheduled',
  p: 'pending',
  i: 'sending',
  c: 'complete',
  x: 'canceled',
  f: 'failed',
};
/** Where `--wait` stops: the campaign will not move again by itself. */
const SETTLED = ['d', 'c', 'x', 'f'];

interface Campaign {
  sms_campaign_id: number;
  send_status: string;
  total_sent: number;
  scheduled_at: string | null;
  results_message: string | null;
}

interface CampaignFlags {
  name?: string;
  message?: string;
  messageFile?: string;
  from?: string;
  group?: string[];
  member?: string[];
  segment?: string[];
  suppressSegment?: string[];
  promotional?: boolean;
  test?: boolean;
  shortenLinks?: boolean;
  mediaUrl?: string;
  at?: string;
}

const campaignOptions = (cmd: Command) =>
  cmd
    .option('--name <name>', 'the campaign name')
    .option('--message <text>', 'the message; personalization tags such as [% member:first_name %] are rendered per member')
    .option('--message-file <file>', 'read the message from a file (- for stdin)')
    .option('--from <phone>', 'the number it is sent from, in international form (+15555550100)')
    .option('--group <name|id>', 'send to the members of this group (repeatable, or a comma list)', collectList)
    .option('--member <id|email>', 'send to this member (repeatable, or a comma list)', collectList)
    .option('--segment <name|id>', 'send to the members of this segment (a saved search; repeatable)', collectList)
    .option('--suppress-segment <name|id>', 'keep the members of this segment out (repeatable)', collectList)
    .option('--promotional', 'a promotional message: only members whose promotional status allows it')
    .option('--no-promotional', 'a transactional message')
    .option('--test', 'mark the campaign as a test')
    .option('--no-test', 'not a test')
    .option('--shorten-links', 'rewrite each URL of the message to a short link whose clicks are counted')
    .option('--no-shorten-links', 'send URLs as written')
    .option('--media-url <url>', 'an image or other media to send with it (MMS)')
    .option('--at <datetime>', 'when to send it, e.g. 2026-12-01T09:00:00Z (UTC when no offset is given)');

function messageOf(o: CampaignFlags): string | undefined {
  if (o.message !== undefined && o.messageFile !== undefined) throw new UsageError('give --message or --message-file, not both');
  if (o.messageFile === undefined) return o.message;
  try {
    return readFileSync(o.messageFile === '-' ? 0 : o.messageFile, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new UsageError(`--message-file: cannot read ${o.messageFile}: ${(err as Error).message}`);
  }
}

/** The audience flags as the service's recipients object, or undefined when none was given. */
async function recipientsOf(api: Api, ctx: RunContext, o: CampaignFlags) {
  if (!o.group && !o.member && !o.segment && !o.suppressSegment) return undefined;
  const segments = (refs: string[] = []) => Promise.all(refs.map((r) => searchId(api, r)));
  return {
    groups: await groupIds(api, ctx, o.group ?? []),
    members: await Promise.all((o.member ?? []).map((r) => memberId(api, r, false))),
    segments: await segments(o.segment),
    suppression_segments: await segments(o.suppressSegment),
  };
}

async function bodyOf(api: Api, ctx: RunContext, o: CampaignFlags) {
  return {
    sms_campaign_name: o.name,
    message: messageOf(o),
    from_phone_number: o.from,
    recipients: await recipientsOf(api, ctx, o),
    is_promotional: o.promotional,
    is_test: o.test,
    shorten_links: o.shortenLinks,
    media_url: o.mediaUrl,
    scheduled_at: o.at,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a campaign until it settles, saying each new status on stderr; a failed one exits 1. */
async function waitForCampaign(ctx: RunContext, api: Api, id: number): Promise<void> {
  let said = '';
  let delay = 100;
  for (;;) {
    const c = await api.get<Campaign>(`/sms/campaigns/${id}`);
    if (SETTLED.includes(c.send_status) || c.send_status === 's') {
      if (c.send_status === 's') ctx.note(`SMS campaign ${id} is scheduled for ${c.scheduled_at?.replace(/^@D:/, '')} UTC`);
      await ctx.print(c, { columns: CAMPAIGN_COLUMNS });
      if (c.send_status === 'f') {
        ctx.stderr.write(`amsg: SMS campaign ${id} failed: ${c.results_message}\n`);
        process.exitCode = EXIT.refused;
      }
      return;
    }
    const saying = `${c.send_status}:${c.total_sent}`;
    if (saying !== said) ctx.note(`SMS campaign ${id}: ${STATUS_NAMES[c.send_status] ?? c.send_status} (${c.total_sent} sent)…`);
    said = saying;
    // Locally each call sends for a quarter second: pausing would only slow it.
    if (api.transport.runsJobs) continue;
    await sleep(delay);
    delay = Math.min(delay * 1.5, 1_000);
  }
}

function registerCampaigns(campaigns: Command) {
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
          { columns: CAMPAIGN_COLUMNS },
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

  examples(
    campaigns
      .command('send <campaign>')
      .description('send a draft now, or at --at (or the scheduled_at it has)')
      .option('--at <datetime>', 'send at this time, e.g. 2026-12-01T09:00:00Z (UTC when no offset is given)')
      .option('--wait', 'wait until it is sent (or scheduled, canceled or failed) and print it')
      .action(
        action(async (ctx, ref: string, o: { at?: string; wait?: boolean }) => {
          const id = numericId(ref, 'CAMPAIGN');
          const api = await ctx.api();
          const answer = await api.post(`/sms/campaigns/${id}/send`, o.at === undefined ? {} : { scheduled_at: o.at });
          if (o.wait) return waitForCampaign(ctx, api, id);
          await ctx.done(answer, o.at ? `SMS campaign ${id} is scheduled.` : `SMS campaign ${id} is on its way.`);
        }),
      ),
    ['amsg sms campaigns send 3 --wait', 'amsg sms campaigns send 3 --at 2026-12-01T09:00:00Z'],
  );

  examples(
    dryRunOption(
      campaigns
        .command('cancel <campaign>')
        .description('cancel a draft, scheduled or pending campaign (asks first; --yes off a terminal)'),
    ).action(
      action(async (ctx, ref: string) => {
        const id = numericId(ref, 'CAMPAIGN');
        const api = await ctx.api();
        const c = await api.get<{ sms_campaign_name: string }>(`/sms/campaigns/${id}`);
        await ctx.change(
          `cancel SMS campaign ${id} "${c.sms_campaign_name}"`,
          1,
          () => api.post(`/sms/campaigns/${id}/cancel`),
          `Canceled SMS campaign ${id}.`,
        );
      }),
    ),
    ['amsg sms campaigns cancel 3', 'amsg sms campaigns cancel 3 --yes'],
  );

  examples(
    campaigns
      .command('archive <campaign>')
      .description('archive a campaign: it leaves the list (see --archived); its status stays')
      .action(
        action(async (ctx, ref: string) => {
          const id = numericId(ref, 'CAMPAIGN');
          const api = await ctx.api();
          await ctx.done(await api.delete(`/sms/campaigns/${id}`), `Archived SMS campaign ${id}.`);
        }),
      ),
    ['amsg sms campaigns archive 3'],
  );

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
    ['deliveries', DELIVERY_COLUMNS, 'its deliveries (d delivered, b bounced), in member id order'],
    ['clicks', CLICK_COLUMNS, 'the clicks on its short links, in the order they came'],
  ] as const)
    examples(
      listOptions(campaigns.command(`${verb} <campaign>`).description(`a campaign's ${what}, a window of 500 at a time unless --all`), {
        countable: true,
      }).action(
        action(async (ctx, ref: string, o: ListFlags) => {
          await printList(
            ctx,
            `/sms/campaigns/${numericId(ref, 'CAMPAIGN')}/${verb}`,
            {},
            o,
            { columns: [...columns] },
            { countable: true },
          );
        }),
      ),
      [`amsg sms campaigns ${verb} 3`],
    );
}

/** A date for --from/--to, checked again by the service. */
function day(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required (YYYY-MM-DD, UTC)`);
  return value;
}

export function register(sms: Command) {
  registerCampaigns(sms.command('campaigns').description('SMS campaigns: create, update, send, cancel, archive, copy, deliveries, clicks'));

  examples(
    sms
      .command('usage')
      .description('credit usage: the segments sent from --from (inclusive) to --to (exclusive), UTC days')
      .option('--from <date>', 'first day, YYYY-MM-DD')
      .option('--to <date>', 'the day after the last, YYYY-MM-DD')
      .action(
        action(async (ctx, o: { from?: string; to?: string }) => {
          const api = await ctx.api();
          const used = await api.get<number>('/sms/billing/credit_usage', { from_date: day(o.from, '--from'), to_date: day(o.to, '--to') });
          await ctx.done(used, `${used} segment${used === 1 ? '' : 's'} sent from ${o.from} to ${o.to} (exclusive).`);
        }),
      ),
    ['amsg sms usage --from 2026-11-01 --to 2026-12-01'],
  );

  const settings = sms.command('settings').description("the account's SMS settings (billing access)");
  examples(
    settings
      .command('get')
      .description('the segment limit and whether it is shown')
      .action(
        action(async (ctx) => {
          const api = await ctx.api();
          await ctx.print(await api.get('/accounts/sms_settings'));
        }),
      ),
    ['amsg sms settings get'],
  );
  examples(
    settings
      .command('set')
      .description('change the settings (billing access)')
      .option('--segment-limit <n>', 'the most segments a message may take for any recipient (0: no limit)')
      .option('--visible', 'show the limit to users')
      .option('--no-visible', 'do not show it')
      .action(
        action(async (ctx, o: { segmentLimit?: string; visible?: boolean }) => {
          if (o.segmentLimit !== undefined && !/^\d+$/.test(o.segmentLimit))
            throw new UsageError(`--segment-limit takes a whole number, got "${o.segmentLimit}"`);
          const api = await ctx.api();
          const body = {
            sub_message_segment_limit: o.segmentLimit === undefined ? undefined : Number(o.segmentLimit),
            sub_message_segment_limit_visible: o.visible,
          };
          await ctx.print(await api.patch('/accounts/sms_settings', body));
        }),
      ),
    ['amsg sms settings set --segment-limit 3 --visible'],
  );

  examples(
    sms
      .command('count <message>')
      .description('the encoding (GSM-7 or UCS-2) and segments of a message, to check it before sending')
      .option('--member <id|email>', "render its tags with this member's values")
      .action(
        action(async (ctx, message: string, o: { member?: string }) => {
          const api = await ctx.api();
          const member_id = o.member === undefined ? undefined : await memberId(api, o.member);
          await ctx.print(await api.post('/sms/count', { message, member_id }));
        }),
      ),
    ['amsg sms count "Hi [% member:first_name %], 20% off today"', 'amsg sms count "Ça va? 😀" --json | jq .segments'],
  );
}
