import { openDb } from '../store/db.js';
import { clockFromEnv } from '../service/clock.js';
import { initialize } from '../service/accounts.js';
import { advanceJobs } from '../service/jobs.js';
import { ImportWriter } from '../service/import-writer.js';
import { startServer, type RunningServer } from './server.js';

export interface ServeRequest {
  db: string;
  host?: string;
  port?: number;
  rateLimit?: number;
}

/**
 * Opens (and if new, initializes) a database and serves it. A sandbox should start
 * with one command, so a fresh file is set up and its key pair handed back once.
 */
export async function serve(req: ServeRequest): Promise<RunningServer & { created?: { public_key: string; private_key: string } }> {
  const db = openDb(req.db);
  const clock = clockFromEnv();
  const init = initialize(db, clock);
  const importWriter = ImportWriter.for(req.db);
  const running = await startServer({ db, clock, host: req.host, port: req.port, rateLimit: req.rateLimit, importWriter });
  // Due jobs run in the background, in short slices so requests are not held up.
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const more = advanceJobs(db, clock, 50);
    timer = setTimeout(tick, more ? 1 : 200);
    timer.unref();
  };
  tick();
  return {
    ...running,
    created: init.created ? { public_key: init.public_key!, private_key: init.private_key! } : undefined,
    close: async () => {
      clearTimeout(timer);
      await running.close();
      await importWriter?.close();
      db.close();
    },
  };
}
