import { Command } from 'commander';
import { action, examples } from '../src/cli/context.js';

export function register(webhooks: Command) {
  examples(
    webhooks
      .command('events')
      .description('the webhook event types')
      .action(
        action(async (ctx) => {
          const api = await ctx.api();
          await ctx.print(await api.get('/webhooks/events'));
        }),
      ),
    ['amsg webhooks events', 'amsg webhooks events --json | jq -r ".[].event_name"'],
  );
}
