// A mailing's status: wait for it, cancel, pause, resume (or approve), archive.
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { describeMailing } from '../../src/cli/describe.js';
import { mailingId as mailingRef } from '../../src/cli/resolve.js';
import { type MailingRecord, STATUS_NAMES } from './shared.js';
import { reportSettled, timeoutMs } from './waiting.js';

export function registerStatusChanges(mailings: Command) {
  examples(
    mailings
      .command('wait <mailing>')
      .description('wait until a mailing is complete (c), canceled (x), failed (f) or waits for a split-test winner (w), and print it')
      .option('--timeout <seconds|1h>', 'stop waiting after this long (exit 1)')
      .action(
        action(async (ctx, id: string, o: { timeout?: string }) => {
          const timeout = timeoutMs(o.timeout);
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await reportSettled(ctx, api, mailingId, timeout);
        }),
      ),
    ['amsg mailings wait 12', 'amsg mailings wait 12 --timeout 10m --json | jq .recipient_count'],
  );

  examples(
    mailings
      .command('cancel <mailing>')
      .description('cancel a pending or paused mailing (asks first; --yes off a terminal)')
      .option('--dry-run', 'say what would be canceled, and cancel nothing')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const what = `cancel ${await describeMailing(api, mailingId)}`;
          await ctx.change(what, 1, () => api.delete(`/mailings/cancel/${mailingId}`), `Canceled mailing ${mailingId}.`);
        }),
      ),
    ['amsg mailings cancel 12', 'amsg mailings cancel 12 --yes'],
  );

  const statusCommand = (name: string, word: 'paused' | 'ready', description: string, past: string) =>
    examples(
      mailings
        .command(`${name} <mailing>`)
        .description(description)
        .action(
          action(async (ctx, id: string) => {
            const api = await ctx.api();
            const mailingId = await mailingRef(api, id);
            const m = await api.put<MailingRecord>(`/mailings/${mailingId}`, { status: word });
            await ctx.done(
              m,
              `${past} mailing ${mailingId}: now ${STATUS_NAMES[m.mailing_status] ?? m.mailing_status} (${m.mailing_status}).`,
            );
          }),
        ),
      [`amsg mailings ${name} 12`],
    );
  statusCommand('pause', 'paused', 'pause a mailing that is not complete, sending or canceled (status a)', 'Paused');
  statusCommand(
    'resume',
    'ready',
    'resume a paused mailing, or approve a draft (status p, or w when a split test waits for its winner)',
    'Resumed',
  );

  examples(
    mailings
      .command('archive <mailing>')
      .description('archive a mailing: it leaves the list (see --archived); its status stays')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await ctx.done(await api.delete(`/mailings/${mailingId}`), `Archived mailing ${mailingId}.`);
        }),
      ),
    ['amsg mailings archive 12'],
  );
}
