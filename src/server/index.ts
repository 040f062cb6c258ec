import { commitPerTurn, commitTurn, openDb, outsideTurn } from '../store/db.js';
import { clockFromEnv } from '../service/clock.js';
import { initialize } from '../service/accounts/accounts.js';
import { advanceJobs, advanceServerJobs } from '../service/jobs.js';
import { ImportWriter } from '../service/imports/import-writer.js';
import { preferAccepting } from '../service/events/workflows.js';
import { Deliverer } from '../service/webhooks/deliver.js';
import { configureMail, type MailSettings } from '../service/mail/settings.js';
import type { MailDeliverOptions } from '../service/mail/deliver.js';
import { startServer, type RunningServer } from './server.js';
import type { ConsoleOptions } from './console/index.js';
import { restoreSnapshot, takeSnapshot } from '../store/snapshot.js';
import { checkOncePerTurn } from '../store/memo.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long one slice of background jobs may hold the event loop (one import batch may overrun it). */
export const JOB_SLICE_MS = 4;
/** How long the server must have had no request before it indexes e-mails for the search. */
export const INDEX_AFTER_IDLE_MS = 500;

export interface ServeRequest {
  db: string;
  host?: string;
  port?: number;
  rateLimit?: number;
  /** The rate limit's window in ms (a minute by default). */
  rateLimitWindowMs?: number;
  /** A snapshot file `POST /_sandbox/reset` restores (the one `--snapshot` started from). */
  resetTo?: string;
  /** Take a snapshot of the database as it is at start, for `POST /_sandbox/reset` (after `--seed`). */
  keepStartingState?: boolean;
  strict?: boolean;
  /** The web console under /ui: on unless false (`--no-console`). */
  console?: false | ConsoleOptions;
  /** The import writer to use (tests give one with the built thread script); by default the one for `db`. */
  importWriter?: ImportWriter;
  /** Real mail out over SMTP (--smtp, --smtp-allow); the links of its confirmations point at this server. */
  mail?: Omit<MailSettings, 'publicUrl'> & { deliver?: MailDeliverOptions };
}

/**
 * Opens (and if new, initializes) a database and serves it. A sandbox should start
 * with one command, so a fresh file is set up and its key pair handed back once.
 */
export async function serve(req: ServeRequest): Promise<RunningServer & { created?: { public_key: string; private_key: string } }> {
  const db = openDb(req.db);
  const clock = clockFromEnv();
  const init = initialize(db, clock);
  const importWriter = req.importWriter ?? ImportWriter.for(req.db);
  // Started now, not at the first streamed import: a server lives long, and while the
  // thread starts (70-90 ms) the import's first batches would be written on this
  // thread, holding every other request about 25 ms each (a local command, with
  // nothing else to do meanwhile, starts it only when an import is coming).
  importWriter?.warm();
  // The state POST /_sandbox/reset goes back to: the snapshot it started from, or one
  // taken now of a seeded or new database (a new one is tiny). A large database served
  // as it is gets none: copying it at every start would cost more than most want.
  let resetTo = req.resetTo;
  let ownSnapshotDir: string | undefined;
  if (!resetTo && (req.keepStartingState || init.created)) {
    ownSnapshotDir = mkdtempSync(join(tmpdir(), 'amsg-sandbox-'));
    resetTo = join(ownSnapshotDir, 'start.db');
    await takeSnapshot(req.db, resetTo);
  }
  // Ingested events are processed between bursts, so accepting them stays fast.
  preferAccepting(db);
  checkOncePerTurn(db);
  commitPerTurn(db);
  const running = await startServer({
    db,
    clock,
    host: req.host,
    port: req.port,
    rateLimit: req.rateLimit,
    rateLimitWindowMs: req.rateLimitWindowMs,
    importWriter,
    sandboxReset: resetTo ? () => restoreSnapshot(resetTo, req.db) : undefined,
    strict: req.strict,
    console: req.console,
  }).catch(async (err: unknown) => {
    // Nothing listens (a port taken): what was started for it stops, so the process can end.
    await importWriter?.close();
    db.close();
    if (ownSnapshotDir) rmSync(ownSnapshotDir, { recursive: true, force: true });
    throw err;
  });
  // Due jobs run in the background, in short slices so requests are not held up:
  // a slice holds the event loop (and every request waiting on it) for its whole
  // length, so the mixed-load p99 was about the slice (50 ms, bench/mixed.js). With
  // work left, the next slice comes after the requests that arrived meanwhile
  // (setImmediate runs after the poll phase); idle, it looks again in 200 ms.
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const tick = () => {
    immediate = undefined;
    // Each job batch commits on its own, as before commitPerTurn: held open into the next
    // turn, a slice's writes made every answer of that turn wait for the slice after it.
    // The e-mail search index is background work nobody waits for: it runs only once the
    // server has had no request for a while and no streamed import is writing. Indexing
    // between requests made every read of a freshly served million-member file wait behind
    // its slices (bench/scale.js), and beside the writer thread it took turns with it for
    // the write lock and halved the import's rate.
    const more = outsideTurn(
      db,
      () =>
        advanceJobs(db, clock, JOB_SLICE_MS) ||
        (running.idleFor(INDEX_AFTER_IDLE_MS) && !importWriter?.busy() && advanceServerJobs(db, JOB_SLICE_MS)),
    );
    // Not unref'd: an unref'd immediate does not keep the poll phase from blocking, so
    // with no request arriving the next slice waited for the next timer (~150 ms).
    if (more) immediate = setImmediate(tick);
    else (timer = setTimeout(tick, 200)).unref();
  };
  tick();
  // Webhook posts go out in the background too, woken by each event this process fires.
  const deliverer = new Deliverer(db, clock);
  deliverer.start();
  // And mail, when there is an SMTP server: nodemailer loads with the first message due.
  let mailer: import('../service/mail/deliver.js').MailDeliverer | undefined;
  if (req.mail) {
    const { deliver, ...settings } = req.mail;
    configureMail(db, { ...settings, publicUrl: running.url });
    const { MailDeliverer } = await import('../service/mail/deliver.js');
    mailer = new MailDeliverer(
      db,
      clock,
      { ...settings, publicUrl: running.url },
      {
        report: (line) => process.stderr.write(`amsg: ${line}\n`),
        ...deliver,
      },
    );
    mailer.start();
  }
  return {
    ...running,
    created: init.created ? { public_key: init.public_key!, private_key: init.private_key! } : undefined,
    close: async () => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
      await running.close();
      await deliverer.stop();
      await mailer?.stop();
      await importWriter?.close();
      commitTurn(db);
      db.close();
      if (ownSnapshotDir) rmSync(ownSnapshotDir, { recursive: true, force: true });
    },
  };
}
