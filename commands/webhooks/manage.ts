// The webhooks themselves: `amsg webhooks list`, `get`, `create`, `update`, `roll-secret`,
// `delete` and `delete-all`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import type { Api } from '../../src/client/api.js';
import { counted } from '../../src/cli/describe.js';
import { numericId } from '../../src/cli/resolve.js';

interface WebhookFlags {
  url?: string;
  event?: string;
  method?: string;
  publicKey?: string;
}

const body = (o: WebhookFlags) => ({
  ...(o.url !== undefined ? { url: o.url } : {}),
  ...(o.event !== undefined ? { event: o.event } : {}),
  ...(o.method !== undefined ? { method: o.method } : {}),
  ...(o.publicKey !== undefined ? { public_key: o.publicKey } : {}),
});

/** `webhook 3 (member_add → https://example.com/hooks)`, as the prompt names it. */
async function describeWebhook(api: Api, id: number): Promise<string> {
  // No fallback: a webhook that is not there is a 404 now, before a prompt or a dry run speaks of it.
  const w = await api.get<{ event: string; url: string }>(`/webhooks/${id}`);
  return `webhook ${id} (${w.event} → ${w.url})`;
}

export function registerManage(webhooks: Command) {
  examples(
    listOptions(webhooks.command('list').description("the account's webhooks (every one unless --limit or --start)"), {
      countable: true,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/webhooks', {}, o, { table: TABLES.webhooks }, { countable: true, allByDefault: true });
      }),
    ),
    ['amsg webhooks list', 'amsg webhooks list --json | jq -r ".[].url"'],
  );

  examples(
    webhooks
      .command('get <webhook>')
      .description('one webhook')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/webhooks/${numericId(ref, 'WEBHOOK')}`));
        }),
      ),
    ['amsg webhooks get 3'],
  );

  examples(
    webhooks
      .command('create <url>')
      .description('register a webhook for one event; prints its id and, this once, its signing secret')
      .requiredOption('--event <name>', 'the event (see amsg webhooks events)')
      .option('--method <POST|GET>', 'POST (default): the event is the body; GET: the event is the payload query parameter')
      .option('--public-key <key>', 'the public key the webhook is recorded under (as the real service keeps it)')
      .action(
        action(async (ctx, url: string, o: WebhookFlags) => {
          const api = await ctx.api();
          const created = (await api.request('POST', '/webhooks', { body: { url, ...body(o) }, query: { include_secret: true } })) as {
            webhook_id: number;
            secret: string;
          };
          await ctx.done(
            created,
            `Created webhook ${created.webhook_id} (${o.event} → ${url}).\nSigning secret, shown this once: ${created.secret}`,
          );
        }),
      ),
    [
      'amsg webhooks create https://example.com/hooks --event member_add',
      'amsg webhooks create https://example.com/hooks --event import_finish --json | jq -r .secret > secret.txt',
    ],
  );

  examples(
    webhooks
      .command('update <webhook>')
      .description('change the URL, event, method or public key of a webhook')
      .option('--url <url>', 'the new URL')
      .option('--event <name>', 'the new event')
      .option('--method <POST|GET>', 'the new method')
      .option('--public-key <key>', 'the new public key')
      .action(
        action(async (ctx, ref: string, o: WebhookFlags) => {
          const changes = body(o);
          if (!Object.keys(changes).length) throw new UsageError('give at least one of --url, --event, --method, --public-key');
          const api = await ctx.api();
          const id = numericId(ref, 'WEBHOOK');
          await ctx.done(await api.put(`/webhooks/${id}`, changes), `Updated webhook ${id}.`);
        }),
      ),
    ['amsg webhooks update 3 --event member_update', 'amsg webhooks update 3 --url https://example.com/v2/hooks'],
  );

  examples(
    dryRunOption(
      webhooks
        .command('roll-secret <webhook>')
        .description('give a webhook a new signing secret (shown this once); the old one stops working at once'),
    ).action(
      action(async (ctx, ref: string) => {
        const api = await ctx.api();
        const id = numericId(ref, 'WEBHOOK');
        await ctx.change(
          `roll the signing secret of ${await describeWebhook(api, id)}`,
          1,
          () => api.post<{ secret: string }>(`/webhooks/${id}/secret`),
          (rolled) => `New signing secret of webhook ${id}, shown this once: ${rolled.secret}`,
        );
      }),
    ),
    ['amsg webhooks roll-secret 3 --yes --json | jq -r .secret'],
  );

  examples(
    dryRunOption(webhooks.command('delete <webhook>').description('delete a webhook (its pending deliveries and log go with it)')).action(
      action(async (ctx, ref: string) => {
        const api = await ctx.api();
        const id = numericId(ref, 'WEBHOOK');
        await ctx.change(`delete ${await describeWebhook(api, id)}`, 1, () => api.delete(`/webhooks/${id}`), `Deleted webhook ${id}.`);
      }),
    ),
    ['amsg webhooks delete 3 --yes'],
  );

  examples(
    dryRunOption(webhooks.command('delete-all').description("delete all of the account's webhooks")).action(
      action(async (ctx) => {
        const api = await ctx.api();
        const n = await api.get<number>('/webhooks', { count: true });
        await ctx.change(
          `delete every webhook of the account (${counted(n, 'webhook')})`,
          n,
          () => api.delete('/webhooks'),
          'Deleted every webhook.',
        );
      }),
    ),
    ['amsg webhooks delete-all --yes'],
  );
}
