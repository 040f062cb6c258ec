import type { Command } from 'commander';
import { action, examples, UsageError, type RunContext } from '../src/cli/context.js';
// Static: the CLI loads it anyway, and a dynamic import of it split it into a file of its own.
import { connect } from '../src/client/api.js';

export function register(serve: Command) {
  examples(
    serve
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <n>', 'port (0 picks a free one)', '8080')
      .option(
        '--rate-limit <n>',
        'requests per API key per minute, answered 403 Rate Limit Exceeded past it, as the real service does (off by default)',
      )
      .option('--rate-limit-window <seconds>', 'the window --rate-limit counts in, in seconds (60 by default; shorter for tests)')
      .option('--seed <files...>', 'seed the database from fixture files before listening (see amsg seed)')
      .option('--snapshot <file>', 'start from a snapshot (amsg db snapshot): its contents replace the database first')
      .option('--strict', 'answer 400 for query and body parameters an operation does not know (ignored and logged by default)')
      .action(
        action(
          async (
            ctx,
            o: {
              host: string;
              port: string;
              rateLimit?: string;
              rateLimitWindow?: string;
              seed?: string[];
              snapshot?: string;
              strict?: boolean;
            },
          ) => {
            if (!/^\d+$/.test(o.port) || Number(o.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${o.port}"`);
            if (o.rateLimit !== undefined && !/^[1-9]\d*$/.test(o.rateLimit))
              throw new UsageError(`--rate-limit must be a positive whole number, got "${o.rateLimit}"`);
            if (o.rateLimitWindow !== undefined && !/^[1-9]\d*$/.test(o.rateLimitWindow))
              throw new UsageError(`--rate-limit-window must be a positive whole number of seconds, got "${o.rateLimitWindow}"`);
            if (o.rateLimitWindow !== undefined && o.rateLimit === undefined)
              throw new UsageError('--rate-limit-window goes with --rate-limit');
            const { serve } = await import('../src/server/index.js');
            const db = ctx.settings.db;
            if (o.snapshot) {
              const { restoreSnapshot, SnapshotError } = await import('../src/store/snapshot.js');
              await restoreSnapshot(o.snapshot, db).catch((err) => {
                throw err instanceof SnapshotError ? new UsageError(`--snapshot: ${err.message}`) : err;
              });
              ctx.note(`started from the snapshot ${o.snapshot}`);
            }
            const seeded = o.seed ? await seedBeforeServing(ctx, db, o.seed) : undefined;
            if (seeded?.failed) return; // said why; the server does not start half seeded
            const created = seeded?.created;
            const server = await serve({
              db,
              host: o.host,
              port: Number(o.port),
              rateLimit: o.rateLimit ? Number(o.rateLimit) : undefined,
              rateLimitWindowMs: o.rateLimitWindow ? Number(o.rateLimitWindow) * 1000 : undefined,
              resetTo: o.seed ? undefined : o.snapshot,
              keepStartingState: !!o.seed,
              strict: o.strict,
            }).catch((err: NodeJS.ErrnoException) => {
              if (err.code === 'EADDRINUSE')
                throw new UsageError(
                  `port ${o.port} on ${o.host} is taken (another amsg serve?): choose another with --port, or --port 0 for a free one`,
                  'port',
                );
              if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND')
                throw new UsageError(`cannot listen on --host ${o.host}: it is not an address of this machine`, 'host');
              if (err.code === 'EACCES')
                throw new UsageError(`port ${o.port} needs privileges to listen on: choose one above 1023 with --port`, 'port');
              throw err;
            });
            const keys = created ?? server.created;
            if (keys) ctx.note(`created ${db}; API key (shown only now): ${keys.public_key}:${keys.private_key}`);
            ctx.note(`serving ${db} at ${server.url} (Ctrl-C stops)`);
            // The base URL alone on stdout, so scripts can read it.
            process.stdout.write(`${server.url}\n`);
            await new Promise<void>((resolve) => {
              const stop = (signal: string) => {
                ctx.note(`${signal}: finishing open requests and closing ${db}`);
                server.close().then(resolve, resolve);
              };
              process.once('SIGINT', () => stop('SIGINT'));
              process.once('SIGTERM', () => stop('SIGTERM'));
            });
          },
        ),
      ),
    [
      'amsg serve --port 8080',
      "amsg serve --db /tmp/sandbox.db --port 0 --rate-limit 180          # the real service's limit: 180 calls a minute",
      'amsg serve --db /tmp/ci.db --port 0 --rate-limit 20 --rate-limit-window 1   # a tight limit for tests',
      'amsg serve --db /tmp/ci.db --port 0 --seed fixtures/ci.yaml     # POST /_sandbox/reset goes back to the seeded state',
      'amsg serve --db /tmp/ci.db --snapshot seeded.db',
      'amsg serve --strict                                             # unknown parameters are 400s, not ignored',
    ],
  );
}

/**
 * Seeds the database through the local engine (the same operations as `amsg seed`)
 * before the server listens, setting the file up first if it is new.
 */
async function seedBeforeServing(ctx: RunContext, db: string, files: string[]) {
  const { initLocalDatabase } = await import('../src/client/local-transport.js');
  const init = initLocalDatabase(db, {});
  const { seed, describeSummary, reportSeedFailure } = await import('../src/cli/seed/seed.js');
  const api = await connect({ ...ctx.settings, mode: 'local', db });
  try {
    const result = await seed(api, files, { note: (m) => ctx.note(m) });
    for (const line of describeSummary(result, false)) ctx.note(`--seed: ${line}`);
  } catch (err) {
    reportSeedFailure(ctx, err, '--seed: ');
    return { failed: true as const };
  } finally {
    await api.close();
  }
  return { failed: false as const, created: init.created ? { public_key: init.public_key!, private_key: init.private_key! } : undefined };
}
