// `amsg webhooks listen`: receive events on 127.0.0.1, print and forward them.
import type { Command } from 'commander';
import { action, examples, UsageError, type RunContext } from '../../src/cli/context.js';
import { collectList } from '../../src/cli/resolve.js';

export function registerListen(webhooks: Command) {
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
