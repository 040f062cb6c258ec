import { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';

export function register(serve: Command) {
  examples(
    serve
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <n>', 'port (0 picks a free one)', '8080')
      .option('--rate-limit <n>', 'requests per API key per minute (off by default)')
      .option('--strict', 'answer 400 for query and body parameters an operation does not know (ignored and logged by default)')
      .action(
        action(async (ctx, o: { host: string; port: string; rateLimit?: string; strict?: boolean }) => {
          if (!/^\d+$/.test(o.port) || Number(o.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${o.port}"`);
          if (o.rateLimit !== undefined && !/^[1-9]\d*$/.test(o.rateLimit))
            throw new UsageError(`--rate-limit must be a positive whole number, got "${o.rateLimit}"`);
          const { serve } = await import('../src/server/index.js');
          const db = ctx.settings.db;
          const server = await serve({
            db,
            host: o.host,
            port: Number(o.port),
            rateLimit: o.rateLimit ? Number(o.rateLimit) : undefined,
            strict: o.strict,
          });
          if (server.created)
            ctx.note(
              `created ${db}; API key (shown only now): ${server.created.public_key}:${server.created.private_key}`,
            );
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
        }),
      ),
    ['amsg serve --port 8080', 'amsg serve --db /tmp/sandbox.db --port 0 --rate-limit 600', 'amsg serve --strict'],
  );
}
