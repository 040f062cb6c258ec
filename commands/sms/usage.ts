// `amsg sms usage`: the credit used between two days.
import type { Command } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';

/** A date for --from/--to, checked again by the service. */
function day(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required (YYYY-MM-DD, UTC)`);
  return value;
}

export function registerUsage(sms: Command) {
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
}
