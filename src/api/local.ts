/**
 * The in-process face of the route table: what the local transport and `amsg init`
 * use to reach the service over a SQLite file without HTTP.
 */
import { openDb, type Db } from '../store/db.js';
import { clockFromEnv, type Clock } from '../service/clock.js';
import { initialize, isInitialized, localActor, type InitResult } from '../service/accounts/accounts.js';
import { advanceJobs } from '../service/jobs.js';
import { ImportWriter } from '../service/imports/import-writer.js';
import { anyDeliveryDue } from '../service/webhooks/webhooks.js';
// Bundled with the engine (a lazy chunk of its own split the store out of it: one more file
// for every local command); it loads undici only when it posts.
import { backgroundError, deliverFor } from '../service/webhooks/deliver.js';
import type { Actor } from '../service/context.js';
import { ApiError } from '../errors.js';
import { Router } from './router.js';

export interface LocalService {
  db: Db;
  router: Router;
  actor: Actor;
  /** Runs due jobs (imports, mailing sends) for up to budgetMs; answers whether work is left. */
  advanceJobs(budgetMs: number): boolean;
  /** Posts the webhook deliveries that are due, for up to budgetMs (undici loads only when one is due). */
  deliverWebhooks(budgetMs: number): Promise<void>;
  /** Stops the import writer's thread, if it started, and closes the database. */
  close(): Promise<void>;
}

/** Opens an initialized database as its account's owner. */
export function openLocal(file: string, accountId: number, clock: Clock = clockFromEnv()): LocalService {
  const db = openDb(file);
  if (!isInitialized(db)) {
    db.close();
    throw new ApiError(404, `the database ${file} is not set up: run \`amsg init\``);
  }
  const importWriter = ImportWriter.for(file);
  return {
    db,
    router: new Router(db, clock, undefined, importWriter),
    actor: localActor(db, accountId),
    advanceJobs: (budgetMs) => advanceJobs(db, clock, budgetMs),
    deliverWebhooks: async (budgetMs) => {
      if (!anyDeliveryDue(db, clock)) return;
      // A post that could not be made is made by a later run: it never fails the call it follows.
      await deliverFor(db, clock, budgetMs).catch(backgroundError);
    },
    close: async () => {
      await importWriter?.close();
      db.close();
    },
  };
}

/** Creates (or finds already set up) a database file. */
export function initializeLocal(
  file: string,
  opts: { accountName?: string; ownerEmail?: string; hq?: boolean } = {},
  clock: Clock = clockFromEnv(),
): InitResult {
  const db = openDb(file);
  try {
    return initialize(db, clock, opts);
  } finally {
    db.close();
  }
}
