/**
 * The import writer: a thread with its own connection that writes the batches of
 * streamed imports, while the thread that received them checks the next rows.
 *
 * Why a thread: a large import's SQL (the member rows, their indexes and
 * memberships, the commits) and its JavaScript (reading the CSV, checking each value,
 * building each member's JSON) each cost about as much as the whole `sqlite3 .import`
 * of the same file, so on one core an import could not come within 2× of it
 * (bench/RESULTS.md). The checks need no database (checkRows); the writing needs no
 * row objects, only the checked rows' strings, which cross between threads cheaply.
 *
 * A batch goes as slices: the writer begins the batch's transaction with the first
 * slice and writes each as it arrives, so checking a batch overlaps writing it, and
 * it still commits (or fails) as one transaction. Rows checked against another field
 * catalog than the writer's own (a field changed since) are not written by it: the
 * batch is then written here instead.
 */
import type { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../errors.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from '../audience/fields.js';
import { appendRowsHere, checkRows, rowCount, sliceRows, type BatchResult, type CheckedRows, type RowsInput } from './index.js';

/** Rows checked and sent together: small enough that the writer starts soon, large enough that a message is cheap. */
const SLICE_ROWS = 500;

/** What the writer thread is sent, in this order for each batch: begin, rows (once or more), end. */
export type WriterMessage =
  | { kind: 'begin'; batch: number; importId: number; offset?: number; accountId: number; actor: Ctx['actor']; at: number; catalog: string }
  | { kind: 'rows'; batch: number; rows: CheckedRows }
  | { kind: 'end'; batch: number; received: number; rejected: number; abort?: boolean };

/** What it answers: once that it is ready (its connection open), then once per batch. */
export type WriterAnswer = { ready: true } | BatchAnswer;

type BatchAnswer =
  | { batch: number; result: BatchResult }
  | { batch: number; catalogChanged: true }
  | { batch: number; apiError: { status: number; body: unknown } }
  | { batch: number; failure: { message: string; code?: string } };

/** The built thread script, next to this module in dist/ (running from the TypeScript sources there is none). */
const SCRIPT = fileURLToPath(new URL('./import-writer-thread.js', import.meta.url));

export class ImportWriter {
  private worker?: Worker;
  /**
   * Set by the thread once its connection is open. Shared memory, not only a message:
   * a local command's calls run from one microtask to the next without the event loop
   * turning, so a message saying so would be read only after the import.
   */
  private readyFlag?: Int32Array;
  /** Whether the thread takes batches now (asking starts nothing). */
  get ready(): boolean {
    return this.readyFlag !== undefined && Atomics.load(this.readyFlag, 0) === 1;
  }
  private nextBatch = 1;
  /** Batches handed to the thread so far (the others were written where they arrived). */
  batchesSent = 0;
  /** When the last batch was handed over or answered (Date.now()), for busy(). */
  private lastBatchAt = 0;
  private readonly waiting = new Map<number, { resolve: (a: BatchAnswer) => void; reject: (e: Error) => void }>();

  constructor(
    readonly file: string,
    private readonly script = SCRIPT,
  ) {}

  /** A writer for this database file, or none where it cannot run (an in-memory database, no built script). */
  static for(file: string): ImportWriter | undefined {
    return file !== ':memory:' && existsSync(SCRIPT) ? new ImportWriter(file) : undefined;
  }

  /**
   * Whether the thread takes this batch. Until it is ready, batches are written where
   * they arrive while it starts (and it is started if it was not): starting a thread
   * costs about as much as writing 2,000 rows, so an import of a batch or two (most
   * of a CI job's) is done before the thread could take it, and a large one gives it
   * only its first batches.
   */
  takes(): boolean {
    if (this.ready) return true;
    this.start();
    return false;
  }

  /** Resolves once the thread takes batches (started if it was not). */
  whenReady(): Promise<void> {
    const worker = this.start();
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (a: WriterAnswer) => {
        if (!('ready' in a)) return;
        worker.off('message', check);
        resolve();
      };
      worker.on('message', check);
      worker.once('exit', (code) => reject(new Error(`the import writer stopped (exit code ${code})`)));
    });
  }

  /** Appends one batch to a streamed import (imports.appendRows), written by the writer thread. */
  async append(ctx: Ctx, importId: number, rows: RowsInput, rejected: number, offset?: number): Promise<BatchResult> {
    const worker = this.start();
    this.batchesSent++;
    this.lastBatchAt = Date.now();
    const batch = this.nextBatch++;
    const answer = new Promise<BatchAnswer>((resolve, reject) => this.waiting.set(batch, { resolve, reject }));
    worker.ref();
    const catalog = FieldCatalog.of(ctx);
    const send = (m: WriterMessage) => worker.postMessage(m);
    send({
      kind: 'begin',
      batch,
      importId,
      offset,
      accountId: ctx.accountId,
      actor: ctx.actor,
      at: ctx.clock.now().getTime(),
      catalog: catalog.signature,
    });
    const count = rowCount(rows);
    try {
      for (let start = 0; start < count; start += SLICE_ROWS)
        send({ kind: 'rows', batch, rows: checkRows(catalog, sliceRows(rows, start, start + SLICE_ROWS), start) });
    } catch (err) {
      // Checking failed as a whole (not row by row): the writer rolls the batch back.
      send({ kind: 'end', batch, received: 0, rejected: 0, abort: true });
      answer.catch(() => {});
      throw err;
    }
    send({ kind: 'end', batch, received: count + rejected, rejected });
    const a = await answer;
    this.lastBatchAt = Date.now();
    if ('result' in a) return a.result;
    if ('catalogChanged' in a) return appendRowsHere(ctx, importId, rows, rejected, offset);
    if ('apiError' in a) throw ApiError.fromResponse(a.apiError.status, a.apiError.body);
    throw Object.assign(new Error(a.failure.message), { code: a.failure.code });
  }

  /**
   * Whether a streamed import is writing now: a batch in the thread, or one answered less
   * than withinMs ago (the next is on its way). Background work that writes (the e-mail
   * search index) waits meanwhile, so it does not contend with the writer for the lock.
   */
  busy(withinMs = 1_000): boolean {
    return this.waiting.size > 0 || Date.now() - this.lastBatchAt < withinMs;
  }

  /** Starts the thread ahead of the first batch (a streamed import was just opened), so that batch does not wait for it. */
  warm() {
    this.start();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    // Loaded on first use: every local command loads this module, few start a writer.
    const { Worker } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
    const readyFlag = (this.readyFlag = new Int32Array(new SharedArrayBuffer(4)));
    const worker = new Worker(this.script, { workerData: { file: this.file, readyFlag } });
    worker.on('message', (a: WriterAnswer) => {
      if ('ready' in a) return;
      const w = this.waiting.get(a.batch);
      this.waiting.delete(a.batch);
      // Idle, the thread must not keep the process alive.
      if (!this.waiting.size) worker.unref();
      w?.resolve(a);
    });
    const lost = (why: Error) => {
      this.worker = undefined;
      this.readyFlag = undefined;
      for (const w of this.waiting.values()) w.reject(why);
      this.waiting.clear();
    };
    worker.on('error', (err) => lost(err));
    worker.on('exit', (code) => lost(new Error(`the import writer stopped (exit code ${code})`)));
    worker.unref();
    return (this.worker = worker);
  }

  /** Stops the thread (a batch it is writing is rolled back, as if the process were killed). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.readyFlag = undefined;
    if (worker) await worker.terminate();
  }
}
