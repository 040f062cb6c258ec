// `amsg sms count`: the encoding and segments of a message.
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { memberId } from '../../src/cli/resolve.js';

export function registerCount(sms: Command) {
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
