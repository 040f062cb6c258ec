import type { Db } from './db.js';
import { stmt } from './statements.js';

/**
 * A number that changes whenever the database changes: `data_version` moves when
 * another connection commits, `total_changes()` when this one writes (even inside
 * an open transaction).
 */
function generation(db: Db): string {
  const external = stmt(db, 'PRAGMA data_version').pluck().get() as number;
  const own = stmt(db, 'SELECT total_changes()').pluck().get() as number;
  return `${external}:${own}`;
}

const memos = new WeakMap<Db, Map<string, { generation: string; value: unknown }>>();
/** The generation of a read snapshot in progress (readSnapshot), which cannot move until it ends. */
const snapshots = new WeakMap<Db, string>();

/**
 * Runs a read-only fn in one read transaction: its statements share one snapshot and
 * one lock (a statement outside a transaction takes and drops the file's read lock
 * each time: two fcntl calls and an fstat), and the memo checks the generation once
 * instead of at every use. For reads only: a write in it would need the write lock
 * while holding a read snapshot, which another writer can make stale.
 */
export function readSnapshot<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  stmt(db, 'BEGIN').run();
  try {
    snapshots.set(db, generation(db));
    return fn();
  } finally {
    snapshots.delete(db);
    if (db.inTransaction) stmt(db, 'COMMIT').run();
  }
}
/** Bounds the memo of one database; past this it starts over. */
const MAX_ENTRIES = 1_000;

/**
 * A value read from the database, computed again only once the database has
 * changed. For small hot reads that every request repeats (the field catalog, a key
 * pair's user); checking the generation costs two tiny statements.
 */
export function memo<T>(db: Db, key: string, compute: () => T): T {
  let byKey = memos.get(db);
  if (!byKey) memos.set(db, (byKey = new Map()));
  const now = snapshots.get(db) ?? generation(db);
  const hit = byKey.get(key);
  if (hit && hit.generation === now) return hit.value as T;
  const value = compute();
  if (byKey.size >= MAX_ENTRIES) byKey.clear();
  byKey.set(key, { generation: now, value });
  return value;
}
