/**
 * The import writer's thread (import-writer.ts): writes each batch it is sent in one
 * transaction over its own connection, and answers what the batch did.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ApiError } from '../../errors.js';
import { openDb } from '../../store/db.js';
import { fixedClock, stamp } from '../clock.js';
import { FieldCatalog } from '../audience/fields.js';
import { beginAppend, BULK_CHECKPOINT_PAGES, finishAppend, writeRows, type BatchWrite } from './index.js';
import type { WriterAnswer, WriterMessage } from './import-writer.js';

// No counting triggers: each batch adds what it wrote to the counts in a few
// statements (src/store/counters.ts), where triggers cost half a microsecond a row.
const { file, readyFlag } = workerData as { file: string; readyFlag: Int32Array };
const db = openDb(file, { countTriggers: false });
// This connection only ever writes import batches, whose rows reference what the
// batch itself checked inside its transaction (the account of the request, groups
// found or created, members just inserted or looked up) and which delete nothing.
// Foreign key checks would repeat those checks for every row (about 0.45 µs a
// member, a tenth of the writer's time at a million members).
db.pragma('foreign_keys = OFF');
// Checkpoints ten times rarer, as imports.ts does around a batch on other connections.
db.pragma(`wal_autocheckpoint = ${BULK_CHECKPOINT_PAGES}`);

const CATALOG_CHANGED = Symbol('catalog changed');

let current: { batch: number; write?: BatchWrite; failed?: unknown } | undefined;

const answer = (a: WriterAnswer) => parentPort!.postMessage(a);
// The connection is open: batches may come here now (until then they are written where they arrive).
Atomics.store(readyFlag, 0, 1);
answer({ ready: true });

function fail(err: unknown) {
  current!.failed ??= err;
  if (db.inTransaction) db.exec('ROLLBACK');
}

parentPort!.on('message', (m: WriterMessage) => {
  if (m.kind === 'begin') {
    current = { batch: m.batch };
    try {
      db.exec('BEGIN IMMEDIATE');
      // The time of the request, as the thread that received it read its clock.
      const clock = fixedClock(new Date(m.at));
      const ctx = { db, clock, actor: m.actor, accountId: m.accountId };
      if (FieldCatalog.of(ctx).signature !== m.catalog) throw CATALOG_CHANGED;
      current.write = beginAppend(ctx, m.importId, stamp(clock.now()), m.offset);
    } catch (err) {
      fail(err);
    }
    return;
  }
  if (!current || current.batch !== m.batch) return;
  if (m.kind === 'rows') {
    if (current.failed === undefined)
      try {
        writeRows(current.write!, m.rows);
      } catch (err) {
        fail(err);
      }
    return;
  }
  const { batch } = current;
  if (m.abort) fail(new Error('the batch was abandoned'));
  if (current.failed === undefined)
    try {
      const result = finishAppend(current.write!, m.received, m.rejected);
      db.exec('COMMIT');
      answer({ batch, result });
    } catch (err) {
      fail(err);
    }
  const failed = current.failed;
  current = undefined;
  if (failed === undefined) return;
  if (failed === CATALOG_CHANGED) answer({ batch, catalogChanged: true });
  else if (failed instanceof ApiError) answer({ batch, apiError: { status: failed.status, body: failed.body } });
  else answer({ batch, failure: { message: (failed as Error)?.message ?? String(failed), code: (failed as { code?: string })?.code } });
});
