/** The job of a staged import (POST /members), advanced by the one job runner. */
import { inSavepoint, inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { stamp, type Clock } from '../clock.js';
import type { Ctx } from '../context.js';
import { localActor, RETIRED_ACCOUNTS } from '../accounts/accounts.js';
import { FieldCatalog } from '../audience/fields.js';
import { checkRows } from './check.js';
import { importFinishEvent, importRow, type ImportRow } from './records.js';
import { emitEvent } from '../webhooks/webhooks.js';
import { beginWrite, saveCounters, writeRows } from './write.js';

/** Rows applied per transaction by the job runner. */
const JOB_BATCH = 2_000;

/**
 * Advances queued and running POST /members jobs for up to budgetMs. Answers whether
 * work is left. Called by `amsg serve` in the background and by the local transport
 * after each request.
 *
 * The jobs one look finds share one transaction (applyLook): a burst of small bulk
 * adds is many jobs of one batch each, and a commit of its own was a fifth of each
 * one's cost (bench/RESULTS.md).
 */
export function advanceImports(db: Db, clock: Clock, budgetMs: number): boolean {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    // The partial index of migration 015 holds only the jobs still to run: this runs
    // every few milliseconds in `amsg serve`, whatever the number of finished imports.
    // Several at a time: a burst of small bulk adds is many jobs of one batch each.
    const jobs = stmt(
      db,
      `SELECT * FROM member_imports WHERE mode = 'job' AND status IN ('q','p') AND account_id NOT IN (${RETIRED_ACCOUNTS}) ORDER BY import_id LIMIT ${JOBS_AT_ONCE}`,
    ).all() as ImportRow[];
    if (!jobs.length) return false;
    if (Date.now() >= deadline) return true;
    let firstFailed: unknown;
    let look: 'more' | 'next';
    try {
      look = inTransaction(db, () =>
        applyLook(db, clock, jobs, deadline, (err) => {
          firstFailed = err;
        }),
      );
    } catch (err) {
      // Another process holds the database longer than the busy timeout: try later.
      if (isBusy(err)) return true;
      if (err !== firstFailed) throw err;
      // The first job of the look failed, and its transaction held nothing else.
      failJob(db, clock, jobs[0], (err as Error).message);
      continue;
    }
    if (look === 'more') return true;
  }
}

/**
 * Applies the next batch of each job of one look, in order, in the transaction open.
 * The first job runs as it is: when it fails, the transaction (which holds nothing
 * else) is undone and onFirstFailed said so. Each later job runs in a savepoint, so
 * one that fails undoes only its own writes and ends in e here, the jobs before it
 * staying applied. A job with batches left ends the look: it goes on before any later
 * job starts. Answers 'more' at the deadline, else 'next' (look again).
 */
function applyLook(db: Db, clock: Clock, jobs: ImportRow[], deadline: number, onFirstFailed: (err: unknown) => void): 'more' | 'next' {
  for (const [i, job] of jobs.entries()) {
    let finished: boolean;
    if (i === 0)
      try {
        finished = advanceJob(db, clock, job);
      } catch (err) {
        onFirstFailed(err);
        throw err;
      }
    else {
      if (Date.now() >= deadline) return 'more';
      try {
        finished = inSavepoint(db, () => advanceJob(db, clock, job));
      } catch (err) {
        if (isBusy(err)) throw err;
        // A batch that cannot be applied (a group deleted since) would fail on every
        // attempt and hold up every job after it: the job ends in e, saying why.
        failJob(db, clock, job, (err as Error).message);
        finished = true;
      }
    }
    if (!finished) return 'next';
  }
  return 'next';
}

const isBusy = (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY';

/** How many waiting jobs one look finds. */
const JOBS_AT_ONCE = 16;

/** Applies the next batch of a job in one transaction, and marks it done in the same one when no row is left; answers whether it is done. */
function advanceJob(db: Db, clock: Clock, job: ImportRow): boolean {
  return inTransaction(db, () => {
    // Read in the transaction: outside one, each read takes and drops the read lock.
    const ctx = jobContext(db, clock, job);
    const imp = importRow(ctx, job.import_id);
    // Another process's runner finished it since it was found.
    if (imp.status !== 'q' && imp.status !== 'p') return true;
    if (imp.status === 'q')
      stmt(db, "UPDATE member_imports SET status = 'p', import_started = ? WHERE import_id = ?").run(stamp(clock.now()), imp.import_id);
    const staged = stmt(db, `SELECT seq, member FROM import_rows WHERE import_id = ? ORDER BY seq LIMIT ${JOB_BATCH}`).all(
      imp.import_id,
    ) as { seq: number; member: string }[];
    if (staged.length) {
      const w = beginWrite(ctx, imp, stamp(clock.now()));
      writeRows(
        w,
        checkRows(
          FieldCatalog.of(ctx),
          staged.map((r) => JSON.parse(r.member) as Record<string, unknown>),
        ),
      );
      saveCounters(ctx, imp, staged.length, w.c);
      stmt(db, 'DELETE FROM import_rows WHERE import_id = ? AND seq <= ?').run(imp.import_id, staged[staged.length - 1].seq);
    }
    // A job's rows are all staged when it is created, so a short batch was its last: it
    // ends in the same transaction (a small bulk add is one transaction, not two).
    if (staged.length < JOB_BATCH) {
      stmt(db, "UPDATE member_imports SET status = 'o', import_finished = ? WHERE import_id = ?").run(stamp(clock.now()), imp.import_id);
      emitEvent(ctx, 'import_finish', () => importFinishEvent(ctx, imp.import_id));
      return true;
    }
    return false;
  });
}

/** A job acts as its account's local owner, as the CLI would. */
function jobContext(db: Db, clock: Clock, job: ImportRow): Ctx {
  return { db, clock, actor: localActor(db, job.account_id), accountId: job.account_id };
}

/** Ends a job in error; its staged rows will never be applied, so they go. */
function failJob(db: Db, clock: Clock, job: ImportRow, message: string) {
  const importId = job.import_id;
  inTransaction(db, () => {
    const ctx = jobContext(db, clock, job);
    const now = stamp(ctx.clock.now());
    stmt(
      ctx.db,
      `UPDATE member_imports SET status = 'e', error_message = ?, import_started = COALESCE(import_started, ?),
              import_finished = ?
        WHERE import_id = ?`,
    ).run(message, now, now, importId);
    stmt(ctx.db, 'DELETE FROM import_rows WHERE import_id = ?').run(importId);
    emitEvent(ctx, 'import_finish', () => importFinishEvent(ctx, importId));
  });
}
