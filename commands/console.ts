import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { action, examples, UsageError } from '../src/cli/context.js';

/** The desktop's "open this URL" program, if this machine has one on PATH. */
function opener(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const names = process.platform === 'darwin' ? ['open'] : process.platform === 'win32' ? [] : ['xdg-open'];
  for (const dir of (env.PATH ?? '').split(delimiter))
    for (const name of names) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

export function register(cmd: Command) {
  examples(
    cmd
      .option('--port <n>', 'port (0, the default, picks a free one)', '0')
      .option('--open', "open the sign-in link in the desktop's browser (xdg-open or open)")
      .action(
        action(async (ctx, o: { port: string; open?: boolean }) => {
          if (!/^\d+$/.test(o.port) || Number(o.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${o.port}"`);
          if (ctx.settings.mode !== 'local')
            throw new UsageError(
              `amsg console serves the local database; for the console of ${ctx.settings.baseUrl}, open ${ctx.settings.baseUrl}/ui/login and sign in with your key pair (or add --local)`,
            );
          const { serve } = await import('../src/server/index.js');
          const db = ctx.settings.db;
          const server = await serve({ db, host: '127.0.0.1', port: Number(o.port) });
          if (server.created)
            ctx.note(`created ${db}; API key (shown only now): ${server.created.public_key}:${server.created.private_key}`);
          ctx.note(`serving ${db} at ${server.url} with its console (Ctrl-C stops)`);
          const link = server.consoleUrl!();
          process.stderr.write(`console: ${link}\n`);
          if (o.open) {
            const program = opener();
            if (!program) ctx.note('--open: no xdg-open or open on PATH; open the link above yourself');
            // Loaded here: a plain command must not load node:child_process at start.
            else
              (await import('node:child_process'))
                .spawn(program, [link], { detached: true, stdio: 'ignore' })
                .on('error', () => {})
                .unref();
          }
          await new Promise<void>((resolve) => {
            const stop = (signal: string) => {
              ctx.note(`${signal}: closing ${db}`);
              server.close().then(resolve, resolve);
            };
            process.once('SIGINT', () => stop('SIGINT'));
            process.once('SIGTERM', () => stop('SIGTERM'));
          });
        }),
      ),
    ['amsg console', 'amsg console --open', 'amsg --db /tmp/sandbox.db console --port 8090'],
  );
}
