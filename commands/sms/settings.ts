// `amsg sms settings get|set`: the account's SMS settings.
import type { Command } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';

export function registerSettings(sms: Command) {
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
}
