import { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, examples } from '../src/cli/context.js';

export function register(webhooks: Command) {
  examples(
    listOptions(webhooks.command('events').description('the webhook event types'), { windowed: false })
      .action(
        action(async (ctx, o: ListFlags) => {
          await printList(ctx, '/webhooks/events', {}, o, {}, { windowed: false });
        }),
      ),
    ['amsg webhooks events', 'amsg webhooks events --json | jq -r ".[].event_name"'],
  );
}
