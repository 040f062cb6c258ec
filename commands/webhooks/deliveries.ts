// Events and deliveries: `amsg webhooks events`, `deliveries`, `replay` and `trigger`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { numericId } from '../../src/cli/resolve.js';

export function registerDeliveries(webhooks: Command) {
  examples(
    listOptions(webhooks.command('events').description('the webhook event types'), { windowed: false }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/webhooks/events', {}, o, {}, { windowed: false, allByDefault: true });
      }),
    ),
    ['amsg webhooks events', 'amsg webhooks events --json | jq -r ".[].event_name"'],
  );

  examples(
    listOptions(
      webhooks
        .command('deliveries [webhook]')
        .description('the delivery log, newest first: attempts, status codes, next retry (of one webhook, or all)')
        .option('--failed', 'only deliveries that failed for good (status e)')
        .option('--status <p|o|e>', 'only deliveries in this status: p pending or retrying, o delivered, e failed'),
      { countable: true },
    ).action(
      action(async (ctx, ref: string | undefined, o: ListFlags & { failed?: boolean; status?: string }) => {
        if (o.failed && o.status && o.status !== 'e') throw new UsageError('--failed is --status e; give one of them');
        const query = { webhook_id: ref === undefined ? undefined : numericId(ref, 'WEBHOOK'), status: o.failed ? 'e' : o.status };
        await printList(ctx, '/webhooks/deliveries', query, o, { table: TABLES.webhookDeliveries }, { countable: true });
      }),
    ),
    ['amsg webhooks deliveries', 'amsg webhooks deliveries 3 --failed', 'amsg webhooks deliveries --json | jq ".[0].attempt_log"'],
  );

  examples(
    webhooks
      .command('replay <delivery>')
      .description("send a delivery's event again to its webhook (same event id, a new delivery id)")
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          const id = numericId(ref, 'DELIVERY');
          const replay = await api.post<number>(`/webhooks/deliveries/${id}/replay`);
          await ctx.done(replay, `Delivery ${id} is sent again as delivery ${replay}.`);
        }),
      ),
    ['amsg webhooks replay 41'],
  );

  examples(
    webhooks
      .command('trigger <event>')
      .description("fire a sample event of this type to the account's webhooks for it (data.sample is true)")
      .action(
        action(async (ctx, event: string) => {
          const api = await ctx.api();
          const fired = (await api.post('/webhooks/trigger', { event })) as { event_id: number | null; deliveries: number };
          await ctx.done(
            fired,
            fired.event_id === null
              ? `No webhook listens for ${event}; nothing was sent.`
              : `Fired sample event ${fired.event_id} (${event}) to ${fired.deliveries} webhook(s).`,
          );
        }),
      ),
    ['amsg webhooks trigger member_add', 'amsg webhooks trigger import_finish --json'],
  );
}
