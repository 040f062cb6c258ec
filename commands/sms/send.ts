// `amsg sms campaigns send` (with --wait), `cancel` and `archive`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { SMS_SEND_STATUS_WORDS } from '../../src/status-words.js';
import type { Api } from '../../src/client/api.js';
import { action, dryRunOption, examples, EXIT, type RunContext } from '../../src/cli/context.js';
import { numericId } from '../../src/cli/resolve.js';

/** The send_status letters (the table in docs/guide/sms.md). */
const STATUS_NAMES: Record<string, string> = SMS_SEND_STATUS_WORDS;
/** Where `--wait` stops: the campaign will not move again by itself. */
const SETTLED = ['d', 'c', 'x', 'f'];

interface Campaign {
  sms_campaign_id: number;
  send_status: string;
  total_sent: number;
  scheduled_at: string | null;
  results_message: string | null;
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
      await ctx.print(c, { table: TABLES.smsCampaigns });
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

export function registerSendCancelArchive(campaigns: Command) {
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
}
