import { openDb } from '../store/db.js';
import { clockFromEnv } from '../service/clock.js';
import { initialize } from '../service/accounts.js';
import { advanceJobs } from '../service/jobs.js';
import { ImportWriter } from '../service/import-writer.js';
import { startServer, type RunningServer } from './server.js';

/** How long one slice of background jobs may hold the event loop (one import batch may overrun it). */
export const JOB_SLICE_MS = 4;

export interface ServeRequest {
  db: string;
  host?: string;
  port?: number;
  rateLimit?: number;
  strict?: boolean;
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
  const running = await startServer({ db, clock, host: req.host, port: req.port, rateLimit: req.rateLimit, importWriter, strict: req.strict });
  // Due jobs run in the background, in short slices so requests are not held up:
  // a slice holds the event loop (and every request waiting on it) for its whole
  // length, so the mixed-load p99 was about the slice (50 ms, bench/mixed.js). With
  // work left, the next slice comes after the requests that arrived meanwhile
  // (setImmediate runs after the poll phase); idle, it looks again in 200 ms.
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const tick = () => {
    immediate = undefined;
    const more = advanceJobs(db, clock, JOB_SLICE_MS);
    if (more) (immediate = setImmediate(tick)).unref();
    else (timer = setTimeout(tick, 200)).unref();
  };
  tick();
  return {
    ...running,
    created: init.created ? { public_key: init.public_key!, private_key: init.private_key! } : undefined,
    close: async () => {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
      await running.close();
      await importWriter?.close();
      db.close();
    },
  };
}
