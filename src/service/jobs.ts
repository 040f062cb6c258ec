/**
 * The one job runner: whichever process holds the database advances due work in
 * short slices: member imports (POST /members) first, then mailing sends. `amsg
 * serve` calls it in the background, the local transport after each request.
 */
import type { Db } from '../store/db.js';
import type { Clock } from './clock.js';
import { advanceImports } from './imports.js';
import { advanceMailings } from './sending.js';

/** Runs due jobs for up to budgetMs; answers whether work is left. */
export function advanceJobs(db: Db, clock: Clock, budgetMs: number): boolean {
  const started = Date.now();
  const importsLeft = advanceImports(db, clock, budgetMs);
  const mailingsLeft = advanceMailings(db, clock, Math.max(0, budgetMs - (Date.now() - started)));
  return importsLeft || mailingsLeft;
}
