import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError, type RunContext } from '../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import type { Api } from '../src/client/api.js';
import { collectList } from '../src/cli/resolve.js';
import { counted } from '../src/cli/describe.js';

const WEBHOOK_COLUMNS = ['webhook_id', 'event', 'method', 'url', 'public_key'];
const DELIVERY_COLUMNS = [
  'delivery_id',
  'webhook_id',
  'event_id',
  'event',
  'status',
  'attempts',
  'last_status_code',
  'next_attempt_at',
  'last_error',
];

const numeric = (what: string, ref: string) => {
  if (!/^\d+$/.test(ref)) throw new UsageError(`${what} is a numeric id, got "${ref}"`);
  return Number(ref);
};

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

export function register(webhooks: Command) {
  webhooks.addHelpText(
    'after',
    `
A webhook is a URL that gets one event type, signed (x-amsg-signature: t=…,v1=… HMAC-SHA256 of
"t.body" keyed with its secret; the README has a verifier). Deliveries are retried 8 times over about
a day; each delivery is in the log (deliveries) and can be sent again (replay).
`,
  );

  examples(
    listOptions(webhooks.command('list').description("the account's webhooks (every one unless --limit or --start)"), {
      countable: true,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/webhooks', {}, o, { columns: WEBHOOK_COLUMNS }, { countable: true, allByDefault: true });
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
          await ctx.print(await api.get(`/webhooks/${numeric('WEBHOOK', ref)}`));
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
          const id = numeric('WEBHOOK', ref);
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
        const id = numeric('WEBHOOK', ref);
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
        const id = numeric('WEBHOOK', ref);
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
        const query = { webhook_id: ref === undefined ? undefined : numeric('WEBHOOK', ref), status: o.failed ? 'e' : o.status };
        await printList(ctx, '/webhooks/deliveries', query, o, { columns: DELIVERY_COLUMNS }, { countable: true });
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
          const id = numeric('DELIVERY', ref);
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

  examples(
    webhooks
      .command('listen')
      .description('receive events on 127.0.0.1 and print them (and forward them) until Ctrl-C, as `stripe listen` does')
      .option('--events <names>', 'the events to listen for, comma-separated (default: all)', collectList)
      .option('--forward-to <url>', 'forward each post, body and signature headers as received, to this URL')
      .option('--port <n>', 'the port of the receiver on 127.0.0.1 (default: any free one)', '0')
      .action(action(async (ctx, o: { events?: string[]; forwardTo?: string; port: string }) => listen(ctx, o))),
    [
      'amsg webhooks listen',
      'amsg webhooks listen --events member_add,message_open --forward-to http://127.0.0.1:3000/hook',
      'amsg webhooks listen --json | jq .data',
    ],
  );
}

/**
 * `amsg webhooks listen`: a receiver on 127.0.0.1, a temporary webhook per event pointing
 * to it (all with one secret, printed, so a forwarded post verifies with it), deleted
 * again on Ctrl-C or SIGTERM. In local mode this process also delivers (it holds the
 * database), every quarter second.
 */
async function listen(ctx: RunContext, o: { events?: string[]; forwardTo?: string; port: string }) {
  if (o.forwardTo !== undefined && !/^https?:\/\//.test(o.forwardTo))
    throw new UsageError(`--forward-to takes an http(s) URL, got "${o.forwardTo}"`);
  if (!/^\d{1,5}$/.test(o.port) || Number(o.port) > 65535)
    throw new UsageError(`--port takes a port number (0 for any free one), got "${o.port}"`);
  const { createServer } = await import('node:http');
  const { randomBytes } = await import('node:crypto');
  const api = await ctx.api();
  const events = o.events?.length ? o.events : ((await api.get('/webhooks/events')) as { event_name: string }[]).map((e) => e.event_name);
  const lines = ctx.stdout.isTTY && ctx.format === 'table';
  const out = (line: string) => ctx.stdout.write(`${line}\n`);

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw =
        req.method === 'GET'
          ? (new URL(req.url ?? '/', 'http://x').searchParams.get('payload') ?? '')
          : Buffer.concat(chunks).toString('utf8');
      // Received is delivered: a slow --forward-to target must not make the post time out and come again.
      res.end();
      let forwarded = '';
      if (o.forwardTo) {
        try {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          for (const h of ['x-amsg-signature', 'x-amsg-event-id', 'x-amsg-delivery-id', 'x-amsg-event'])
            if (req.headers[h]) headers[h] = String(req.headers[h]);
          const answer = await fetch(o.forwardTo, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(10_000) });
          await answer.arrayBuffer();
          forwarded = ` → ${answer.status}`;
        } catch (err) {
          forwarded = ` → ${(err as Error).message}`;
        }
      }
      if (!lines) return out(raw.replace(/\n/g, ' '));
      let event: { event?: string; event_id?: number; occurred_at?: string } = {};
      try {
        event = JSON.parse(raw);
      } catch {
        // printed as it came
      }
      out(
        `${event.occurred_at ?? ''}  ${event.event ?? '?'}  event ${event.event_id ?? req.headers['x-amsg-event-id']}  delivery ${req.headers['x-amsg-delivery-id']}${forwarded}`,
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new UsageError(`cannot listen on 127.0.0.1:${o.port}: ${err.message}`)));
    server.listen(Number(o.port), '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const ids: number[] = [];
  const cleanUp = async () => {
    for (const id of ids.splice(0)) await api.delete(`/webhooks/${id}`).catch(() => undefined);
  };
  try {
    for (const event of events) ids.push((await api.post<number>('/webhooks', { url, event, secret })) as number);
  } catch (err) {
    await cleanUp();
    server.close();
    throw err;
  }
  // The secret goes to stderr whatever --quiet says: forwarded posts are checked with it.
  ctx.stderr.write(
    `amsg: Ready! Listening on ${url} for ${events.length === 22 ? 'every event' : events.join(', ')} (webhooks ${ids.join(', ')}). Signing secret: ${secret}\n`,
  );
  ctx.stderr.write('amsg: Ctrl-C stops and deletes these webhooks.\n');

  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // Local mode: this process holds the database, so it delivers (a remote service does its own).
  let running = true;
  const delivering = (async () => {
    while (running) {
      await api.advance(500);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await stopped;
  running = false;
  await delivering;
  await cleanUp();
  server.closeAllConnections();
  server.close();
  ctx.note(`stopped; deleted the temporary webhooks`);
}
