/** The batches of a streamed import: taken in offset order, written here or on the import writer's thread, finished; and the dry run. */
import { commitTurn, inTransaction, type Db } from '../../store/db.js';
import { beforeWrite, stmt } from '../../store/statements.js';
import { ApiError, badRequest } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from '../audience/fields.js';
import { checkColumns, checkRows, rowCount, type BatchResult, type RowsInput } from './check.js';
import { checkOptions, insertImport } from './create.js';
import { getImport, importFinishEvent, importRow, type ImportOptions, type ImportRecord, type ImportRow } from './records.js';
import { emitEvent } from '../webhooks/webhooks.js';
import { beginWrite, finishWrite, saveCounters, type BatchWrite, writeRows } from './write.js';

/**
 * The streamed import's row, checked to take rows; an interrupted import (status e)
 * is in progress again, and not finished.
 */
function importTakingRows(ctx: Ctx, importId: number, offset?: number): ImportRow {
  const imp = importRow(ctx, importId);
  if (imp.mode !== 'stream') throw badRequest(`import ${importId} was made by POST /members; it takes no more rows`);
  if (imp.status === 'o') throw badRequest(`import ${importId} is finished; start a new import`);
  // A batch sent before the one it follows was applied (or after that one failed)
  // must not be applied: what an import holds is always a prefix of its file.
  if (offset !== undefined && offset !== imp.num_members)
    throw new ApiError(409, `offset: this batch follows row ${offset}, but import ${importId} has ${imp.num_members} rows`, {
      field: 'offset',
      num_members: imp.num_members,
      expected_offset: imp.num_members,
    });
  if (imp.status === 'e')
    stmt(ctx.db, "UPDATE member_imports SET status = 'p', error_message = NULL, import_finished = NULL WHERE import_id = ?").run(importId);
  return imp;
}

/** Starts a batch of a streamed import inside the caller's transaction (here, or on the import writer's thread). */
export function beginAppend(ctx: Ctx, importId: number, now: string, offset?: number): BatchWrite {
  return beginWrite(ctx, importTakingRows(ctx, importId, offset), now);
}

/**
 * Ends a batch of a streamed import: its counters are saved with it. `rejected`
 * counts rows of the batch the client refused before sending (a CSV row with the
 * wrong number of columns): they are rows of the import that were skipped as
 * errors, so num_members counts every data row of the file done so far, and a
 * resume skips exactly num_members rows.
 */
export function finishAppend(w: BatchWrite, received: number, rejected: number): BatchResult {
  saveCounters(w.ctx, w.imp, received, w.c, rejected);
  const result = { import_id: w.imp.import_id, num_members: w.imp.num_members + received, ...finishWrite(w, received, rejected) };
  keepAnswer(w.ctx.db, w.imp.import_id, w.imp.num_members, result.num_members, result);
  return result;
}

/**
 * How many batch answers an import keeps: a client has a batch or two in flight
 * (amsg members import: two), and only those can be sent again.
 */
const ANSWERS_KEPT = 4;

/** Keeps a batch's answer with it, in its transaction, for a repeat of the batch (migration 031). */
function keepAnswer(db: Db, importId: number, offset: number, end: number, answer: BatchResult) {
  stmt(db, 'INSERT OR REPLACE INTO import_batch_answers (import_id, batch_offset, batch_end, answer) VALUES (?, ?, ?, ?)').run(
    importId,
    offset,
    end,
    JSON.stringify(answer),
  );
  stmt(
    db,
    `DELETE FROM import_batch_answers WHERE import_id = ? AND batch_offset <
       (SELECT batch_offset FROM import_batch_answers WHERE import_id = ? ORDER BY batch_offset DESC LIMIT 1 OFFSET ${ANSWERS_KEPT - 1})`,
  ).run(importId, importId);
}

/** The answer of a batch this import already applied at this offset, with as many rows: the same batch, sent again. */
function answerGiven(ctx: Ctx, importId: number, offset: number, end: number): BatchResult | undefined {
  const answer = stmt(ctx.db, 'SELECT answer FROM import_batch_answers WHERE import_id = ? AND batch_offset = ? AND batch_end = ?')
    .pluck()
    .get(importId, offset, end) as string | undefined;
  return answer === undefined ? undefined : (JSON.parse(answer) as BatchResult);
}

/**
 * Applies one batch of a streamed import in one transaction: either the whole batch
 * and its counters are committed, or nothing (a consistent prefix survives a kill).
 * With an import writer (the built CLI and `amsg serve`), the batch is checked here
 * while that thread writes it; otherwise both happen here.
 */
export function appendRows(ctx: Ctx, importId: number, rows: RowsInput, rejected = 0, offset?: number): BatchResult | Promise<BatchResult> {
  if (offset === undefined) return appendNow(ctx, importId, rows, rejected);
  // Looked up before the order is touched: another account's import id is a 404
  // here, and leaves that import's waiting batches alone.
  const imp = importRow(ctx, importId);
  const end = offset + rowCount(rows) + rejected;
  // The same batch again (a retry whose first try was applied): answered as it was.
  const given = offset < imp.num_members ? answerGiven(ctx, importId, offset, end) : undefined;
  if (given) return given;
  // Sent again while its first try was being written: that one's answer, once it is kept.
  const again = (err: unknown) => {
    const kept = err instanceof ApiError && err.status === 409 ? answerGiven(ctx, importId, offset, end) : undefined;
    if (kept) return kept;
    throw err;
  };
  let result: BatchResult | Promise<BatchResult>;
  try {
    result = appendInOrder(ctx, imp, rows, rejected, offset, end);
  } catch (err) {
    return again(err);
  }
  return result instanceof Promise ? result.catch(again) : result;
}

/** A batch with an offset: applied in offset order (see BatchOrder). */
function appendInOrder(
  ctx: Ctx,
  imp: ImportRow,
  rows: RowsInput,
  rejected: number,
  offset: number,
  end: number,
): BatchResult | Promise<BatchResult> {
  const importId = imp.import_id;
  const order = BatchOrder.of(ctx.db);
  const key = `${imp.account_id}:${importId}`;
  const expected = order.expected(key) ?? imp.num_members;
  // Behind the import (a batch sent again, or one overlapping a batch being written),
  // or an import that takes no rows: the write applies or refuses it at once, and its
  // refusal changes nothing in the order. Applied (it was sent again after the one it
  // repeats failed), it is the import's last batch: the one after it may go, if the
  // order had lost track.
  if (offset < expected || imp.mode !== 'stream' || imp.status === 'o') {
    const applied = <T>(r: T) => {
      if (order.expected(key) === undefined) order.taken(key, end);
      return r;
    };
    const result = appendNow(ctx, importId, rows, rejected, offset);
    return result instanceof Promise ? result.then(applied) : applied(result);
  }
  const run = () => {
    let result: BatchResult | Promise<BatchResult>;
    try {
      result = appendNow(ctx, importId, rows, rejected, offset);
    } catch (err) {
      order.failed(key);
      throw err;
    }
    // Handed over (the writer has the whole batch): the one after it may go.
    order.taken(key, end);
    if (result instanceof Promise)
      result = result.catch((err: unknown) => {
        order.failed(key);
        throw err;
      });
    return result;
  };
  if (offset === expected) return run();
  return order.waitFor(key, offset).then(run, (err: unknown) => {
    if (err !== BatchOrder.TIMED_OUT) throw err;
    const has = importRow(ctx, importId).num_members;
    const next = order.expected(key) ?? has;
    throw new ApiError(
      409,
      `offset: import ${importId} expects the batch at row ${next} next; the batch at row ${offset} waited ${BATCH_WAIT_MS / 1000} s for it and is not applied`,
      { field: 'offset', expected_offset: next, num_members: has },
    );
  });
}

/** Applies a batch now: on the import writer's thread, or here. */
function appendNow(ctx: Ctx, importId: number, rows: RowsInput, rejected: number, offset?: number) {
  checkColumns(FieldCatalog.of(ctx), rows);
  // The writer takes the batch (all of it) before this returns, once its thread has started.
  if (ctx.importWriter?.takes()) return ctx.importWriter.append(ctx, importId, rows, rejected, offset);
  return appendRowsHere(ctx, importId, rows, rejected, offset);
}

/**
 * How long a batch that arrived ahead of the one it follows waits for it. The client
 * sent that one first, so it is normally here within milliseconds; one that does not
 * come was lost (its connection failed), and the client should hear so soon, not
 * after a minute.
 */
export const BATCH_WAIT_MS = 5_000;

/**
 * Streamed-import batches taken in the order of their offsets. A client sends the
 * next batch before the last one is answered, so the writer always has one waiting;
 * over HTTP the two may arrive on two connections in either order, and the later
 * one then waits here for the one it follows (BATCH_WAIT_MS at most). The order is
 * only for speed: the write itself refuses a batch whose offset is not the import's
 * row count (a 409), so nothing is applied out of order whatever arrives when.
 *
 * Keyed by account and import id (`account:import`), and entered only after the
 * import was found in the caller's account: a batch of another account for the
 * same id must neither wake, replace nor release this import's batches.
 */
class BatchOrder {
  private static readonly byDb = new WeakMap<Db, BatchOrder>();
  static readonly TIMED_OUT = Symbol('timed out');
  /** Per import, the offset of the batch that comes next (after those taken). */
  private readonly next = new Map<string, number>();
  /** Per import, the batches waiting for their turn, by offset (more than one: the same batch sent twice). */
  private readonly waiting = new Map<string, Map<number, (() => void)[]>>();

  static of(db: Db): BatchOrder {
    let order = BatchOrder.byDb.get(db);
    if (!order) BatchOrder.byDb.set(db, (order = new BatchOrder()));
    return order;
  }

  /** The offset of the batch this import takes next, when a batch was taken since the order last lost track. */
  expected(key: string): number | undefined {
    return this.next.get(key);
  }

  /** Resolves when it is this offset's turn (or the import ended or failed); rejects with TIMED_OUT after BATCH_WAIT_MS. */
  waitFor(key: string, offset: number): Promise<void> {
    let byOffset = this.waiting.get(key);
    if (!byOffset) this.waiting.set(key, (byOffset = new Map()));
    const wakes = byOffset.get(offset) ?? [];
    byOffset.set(offset, wakes);
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.forget(key, offset, wake);
        reject(BatchOrder.TIMED_OUT);
      }, BATCH_WAIT_MS);
      timer.unref();
      wakes.push(wake);
    });
  }

  private forget(key: string, offset: number, wake: () => void) {
    const byOffset = this.waiting.get(key);
    const wakes = byOffset?.get(offset)?.filter((w) => w !== wake);
    if (!byOffset || !wakes) return;
    if (wakes.length) byOffset.set(offset, wakes);
    else byOffset.delete(offset);
    if (!byOffset.size) this.waiting.delete(key);
  }

  /** Wakes the batches waiting at one offset, or (none given) every batch waiting for this import. */
  private wake(key: string, offset?: number) {
    const byOffset = this.waiting.get(key);
    if (!byOffset) return;
    const offsets = offset === undefined ? [...byOffset.keys()] : [offset];
    for (const o of offsets) {
      const wakes = byOffset.get(o) ?? [];
      byOffset.delete(o);
      for (const w of wakes) w();
    }
    if (!byOffset.size) this.waiting.delete(key);
  }

  /** The import ended: batches still waiting go now (and are refused: they follow rows it does not have). */
  release(key: string) {
    this.next.delete(key);
    this.wake(key);
  }

  /**
   * A batch failed: the import has fewer rows than the batches after it expect.
   * Those waiting go now (to be refused), and the next batch's turn is read from
   * the import's row count again (a client resuming sends that as its offset).
   */
  failed(key: string) {
    this.release(key);
  }

  /** A batch was taken (written, failed, or handed to the writer): the one after it may go. */
  taken(key: string, nextOffset: number) {
    this.next.set(key, nextOffset);
    this.wake(key, nextOffset);
  }
}

/** appendRows on this thread and connection. */
export function appendRowsHere(ctx: Ctx, importId: number, rows: RowsInput, rejected = 0, offset?: number): BatchResult {
  return withBulkCheckpoints(ctx.db, () =>
    inTransaction(ctx.db, () => {
      const w = beginAppend(ctx, importId, stamp(ctx.clock.now()), offset);
      const catalog = FieldCatalog.of(ctx);
      checkColumns(catalog, rows);
      writeRows(w, checkRows(catalog, rows));
      return finishAppend(w, rowCount(rows) + rejected, rejected);
    }),
  );
}

/** WAL pages between automatic checkpoints while a batch commits (SQLite's default is 1,000). */
export const BULK_CHECKPOINT_PAGES = 10_000;

/**
 * Runs a batch's transaction with checkpoints ten times rarer, then restores the
 * connection's setting. A checkpoint copies the WAL into the database file as part of
 * a commit; the pages a large import rewrites in every batch (index interiors, the
 * table's end) were copied once per thousand pages written, about a tenth of the
 * import. WAL mode and synchronous stay as they are, so a killed import is as safe as
 * before; the WAL grows to about 40 MB, and the import's last commit (finish)
 * checkpoints with the usual setting.
 */
function withBulkCheckpoints<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  const before = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  if (before <= 0 || before >= BULK_CHECKPOINT_PAGES) return fn();
  db.pragma(`wal_autocheckpoint = ${BULK_CHECKPOINT_PAGES}`);
  try {
    return fn();
  } finally {
    db.pragma(`wal_autocheckpoint = ${before}`);
  }
}

/** Ends a streamed import: status o, or e with a message (an interrupted import can be resumed). */
export function finishImport(ctx: Ctx, importId: number, error?: string): ImportRecord {
  return inTransaction(ctx.db, () => {
    const imp = importRow(ctx, importId);
    if (imp.mode !== 'stream') throw badRequest(`import ${importId} was made by POST /members; the job runner finishes it`);
    if (imp.status === 'o') throw badRequest(`import ${importId} is already finished`);
    stmt(ctx.db, 'UPDATE member_imports SET status = ?, error_message = ?, import_finished = ? WHERE import_id = ?').run(
      error ? 'e' : 'o',
      error ?? null,
      stamp(ctx.clock.now()),
      importId,
    );
    // A finished import takes no batch again: the answers kept for repeats go.
    if (!error) stmt(ctx.db, 'DELETE FROM import_batch_answers WHERE import_id = ?').run(importId);
    BatchOrder.of(ctx.db).release(`${imp.account_id}:${importId}`);
    emitEvent(ctx, 'import_finish', () => importFinishEvent(ctx, importId));
    return getImport(ctx, importId);
  });
}

/** Thrown to roll a dry run back. */
const DRY_RUN = Symbol('dry run');

/**
 * What importing these rows would do, with the exact rules of a real import, and
 * nothing written: the rows are applied to a scratch import and rolled back.
 */
export function validateRows(ctx: Ctx, rows: RowsInput, opts: ImportOptions): Omit<BatchResult, 'import_id' | 'num_members'> {
  // Rolled back by a throw: in amsg serve, the turn's writes are committed first.
  commitTurn(ctx.db);
  beforeWrite(ctx.db);
  if (ctx.db.inTransaction) throw new Error('validateRows must not run inside another transaction');
  let result: Omit<BatchResult, 'import_id' | 'num_members'> | undefined;
  try {
    ctx.db.transaction(() => {
      checkOptions(ctx, opts);
      checkColumns(FieldCatalog.of(ctx), rows);
      const imp = importRow(ctx, insertImport(ctx, opts, 'stream'));
      const w = beginWrite(ctx, imp, stamp(ctx.clock.now()));
      writeRows(w, checkRows(FieldCatalog.of(ctx), rows));
      result = finishWrite(w, rowCount(rows), 0);
      throw DRY_RUN;
    })();
  } catch (err) {
    if (err !== DRY_RUN) throw err;
  }
  return result!;
}
