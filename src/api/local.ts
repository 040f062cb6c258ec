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
import { configureMail, type MailSettings } from '../service/mail/settings.js';
import { anyMailDue } from '../service/mail/outbox.js';
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
  /**
   * Sends the mail that is due over SMTP, for up to budgetMs (nodemailer loads only when
   * something is due); answers what it did, or undefined when there was nothing to do.
   */
  deliverMail(budgetMs: number): Promise<MailRun | undefined>;
  /** Stops the import writer's thread, if it started, and closes the database. */
  close(): Promise<void>;
}

export interface MailRun {
  sent: number;
  failed: number;
  /** Still waiting in the outbox (retrying later, or cut off by the budget). */
  queued: number;
  /** The last reason a message did not go out. */
  problem?: string;
}

/** Opens an initialized database as its account's owner (with an SMTP server, real mail goes out after each call). */
export function openLocal(file: string, accountId: number, clock: Clock = clockFromEnv(), mail?: MailSettings): LocalService {
  const db = openDb(file);
  if (!isInitialized(db)) {
    db.close();
    throw new ApiError(404, `the database ${file} is not set up: run \`amsg init\``);
  }
  const importWriter = ImportWriter.for(file);
  configureMail(db, mail);
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
    deliverMail: async (budgetMs) => {
      if (!mail || !anyMailDue({ db, clock })) return undefined;
      const { MailDeliverer, backgroundError: mailError } = await import('../service/mail/deliver.js');
      const deliverer = new MailDeliverer(db, clock, mail);
      try {
        await deliverer.runFor(budgetMs);
      } catch (err) {
        // What could not be sent stays queued for the next process: it never fails the call it follows.
        mailError(err);
      }
      return { ...deliverer.done, queued: deliverer.queuedCount(), problem: deliverer.lastProblem };
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
