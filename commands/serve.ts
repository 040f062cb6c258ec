import type { Command } from 'commander';
import { action, examples, UsageError, type RunContext } from '../src/cli/context.js';
// Static: the CLI loads it anyway, and a dynamic import of it split it into a file of its own.
import { connect } from '../src/client/api.js';
import { checkAllowPattern, parseSmtpUrl, SmtpUrlError } from '../src/client/smtp-url.js';
import { isTrue, type Settings } from '../src/client/config.js';

export function register(serve: Command) {
  examples(
    serve
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <n>', 'port (0 picks a free one)', '8080')
      .option('--rate-limit <n>', 'requests per API key per minute (off by default)')
      .option('--seed <files...>', 'seed the database from fixture files before listening (see amsg seed)')
      .option('--snapshot <file>', 'start from a snapshot (amsg db snapshot): its contents replace the database first')
      .option('--strict', 'answer 400 for query and body parameters an operation does not know (ignored and logged by default)')
      .option(
        '--smtp <url>',
        'send real mail (test sends, heads-ups, confirmations, allowed sends) through smtp://user:pass@host:port or smtps://… (AMSG_SMTP_URL)',
      )
      .option('--smtp-tls-insecure', "accept the SMTP server's self-signed certificate (a dev server's; AMSG_SMTP_TLS_INSECURE=1)")
      .option(
        '--smtp-allow <pattern>',
        "audience addresses a mailing's own sends really go to, e.g. '*@example.test' (repeatable; AMSG_SMTP_ALLOW, comma-separated); none: no member is mailed",
        (value: string, previous: string[] = []) => [...previous, value],
      )
      .option('--no-console', 'no web console under /ui (on by default: a one-time sign-in link is printed on stderr)')
      .action(
        action(async (ctx, o: ServeOptions) => {
          if (!/^\d+$/.test(o.port) || Number(o.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${o.port}"`);
          if (o.rateLimit !== undefined && !/^[1-9]\d*$/.test(o.rateLimit))
            throw new UsageError(`--rate-limit must be a positive whole number, got "${o.rateLimit}"`);
          const mail = mailOptions(ctx.settings, ctx.env, o);
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
            resetTo: o.seed ? undefined : o.snapshot,
            keepStartingState: !!o.seed,
            strict: o.strict,
            mail,
            console: o.console ? undefined : false,
          });
          const keys = created ?? server.created;
          if (keys) ctx.note(`created ${db}; API key (shown only now): ${keys.public_key}:${keys.private_key}`);
          ctx.note(`serving ${db} at ${server.url} (Ctrl-C stops)`);
          if (mail)
            ctx.note(
              `real mail goes out through ${mail.smtp.display}; ${mail.allow.length ? `a mailing's own sends to ${mail.allow.join(', ')} only` : "no mailing's own send (no --smtp-allow)"}`,
            );
          // One line, whatever --quiet says: the link is how one gets in (valid 10 minutes, once).
          if (server.consoleUrl) process.stderr.write(`console: ${server.consoleUrl()}\n`);
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
    [
      'amsg serve --port 8080',
      'amsg serve --db /tmp/sandbox.db --port 0 --rate-limit 600',
      'amsg serve --db /tmp/ci.db --port 0 --seed fixtures/ci.yaml     # POST /_sandbox/reset goes back to the seeded state',
      'amsg serve --db /tmp/ci.db --snapshot seeded.db',
      'amsg serve --strict                                             # unknown parameters are 400s, not ignored',
      "amsg serve --smtp smtp://127.0.0.1:1025 --smtp-allow '*@example.test'   # real mail to Mailpit, the audience only at example.test",
      'amsg serve --no-console                                         # no web console under /ui',
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

interface ServeOptions {
  host: string;
  port: string;
  rateLimit?: string;
  seed?: string[];
  snapshot?: string;
  strict?: boolean;
  smtp?: string;
  smtpTlsInsecure?: boolean;
  smtpAllow?: string[];
  /** false with --no-console. */
  console: boolean;
}

/**
 * The SMTP settings: --smtp, else AMSG_SMTP_URL or the profile's smtp (resolved with the
 * other settings); --smtp-allow and --smtp-tls-insecure win over theirs. A bad URL or
 * pattern is a usage error, before anything starts.
 */
function mailOptions(settings: Settings, env: NodeJS.ProcessEnv, o: ServeOptions) {
  try {
    const allow = o.smtpAllow?.map(checkAllowPattern) ?? settings.mail?.allow ?? [];
    if (o.smtp) return { smtp: parseSmtpUrl(o.smtp, { tlsInsecure: o.smtpTlsInsecure || isTrue(env.AMSG_SMTP_TLS_INSECURE) }), allow };
    if (!settings.mail) {
      if (o.smtpAllow || o.smtpTlsInsecure) throw new UsageError('--smtp-allow and --smtp-tls-insecure need --smtp URL (or AMSG_SMTP_URL)');
      return undefined;
    }
    return { smtp: { ...settings.mail.smtp, ...(o.smtpTlsInsecure ? { tlsInsecure: true } : {}) }, allow };
  } catch (err) {
    throw err instanceof SmtpUrlError ? new UsageError(`--smtp: ${err.message}`) : err;
  }
}
