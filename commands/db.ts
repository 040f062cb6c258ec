import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError, type RunContext } from '../src/cli/context.js';

/** Snapshots are of a local database file: the one --db / AMSG_DB names (and `amsg serve` may have open). */
function localDb(ctx: RunContext): string {
  if (ctx.settings.mode !== 'local')
    throw new UsageError('amsg db works on a local database file: pass --db FILE or --local (a remote service has its own backups)');
  return ctx.settings.db;
}

/** The snapshot module (better-sqlite3's backup), loaded only by these commands. */
const snapshots = () => import('../src/store/snapshot.js');

async function run<T>(fn: () => Promise<T>): Promise<T> {
  const { SnapshotError } = await snapshots();
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SnapshotError) throw new UsageError(err.message);
    throw err;
  }
}

export function register(db: Command) {
  db.description('snapshots of the local database, for resets in milliseconds (safe while amsg serve runs)');

  examples(
    db
      .command('snapshot <file>')
      .description('copy the local database into FILE (SQLite online backup: one consistent state, even while amsg serve writes)')
      .action(
        action(async (ctx, file: string) => {
          const source = localDb(ctx);
          const started = performance.now();
          const { takeSnapshot } = await snapshots();
          const { bytes } = await run(() => takeSnapshot(source, file));
          ctx.note(`snapshot taken in ${Math.round(performance.now() - started)} ms`);
          const out = { snapshot: file, db: source, bytes };
          await ctx.done(out, `Wrote a snapshot of ${source} to ${file} (${bytes} bytes).`);
        }),
      ),
    ['amsg db snapshot seeded.db', 'amsg --db ci.db db snapshot /tmp/ci-start.db'],
  );

  examples(
    dryRunOption(
      db
        .command('restore <file>')
        .description('replace the contents of the local database with a snapshot (a running amsg serve sees it at its next request)'),
    ).action(
      action(async (ctx, file: string) => {
        const target = localDb(ctx);
        const what = `replace everything in ${target} with the snapshot ${file}`;
        if (ctx.opts.dryRun) {
          const { existsSync } = await import('node:fs');
          if (!existsSync(file)) throw new UsageError(`there is no snapshot ${file}`, 'file');
          return ctx.wouldChange(what, 1);
        }
        await ctx.confirm(what);
        const started = performance.now();
        const { restoreSnapshot } = await snapshots();
        await run(() => restoreSnapshot(file, target));
        ctx.note(`restored in ${Math.round(performance.now() - started)} ms`);
        const out = { restored: file, db: target };
        await ctx.done(out, `Restored ${target} from ${file}.`);
      }),
    ),
    ['amsg db restore seeded.db --yes', 'amsg --db ci.db db restore /tmp/ci-start.db --yes'],
  );
}
