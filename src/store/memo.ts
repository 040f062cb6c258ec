import type { Db } from './db.js';
import { stmt } from './statements.js';

/**
 * A number that changes whenever the database changes: `data_version` moves when
 * another connection commits, `total_changes()` when this one writes (even inside
 * an open transaction).
 */
function generation(db: Db): string {
  return `${externalGeneration(db)}:${stmt(db, 'SELECT total_changes()').pluck().get() as number}`;
}

/** Moves when another connection commits (or, inside a read snapshot, the snapshot's). */
function externalGeneration(db: Db): number {
  return snapshots.get(db)?.external ?? (stmt(db, 'PRAGMA data_version').pluck().get() as number);
}

/**
 * Per watched table, how many rows this connection's statements have written to it:
 * bumped by TEMP triggers through a JS function, so it never moves back (a rolled
 * back write still counts; a counter kept in a table would be rolled back with it and
 * could come back to a value a different content was cached under).
 */
const tableWrites = new WeakMap<Db, Map<string, number>>();

/**
 * Watches tables whose memos should survive writes to other tables (memoOnTables):
 * the field catalog and a key pair's user are read by nearly every request and
 * changed by almost none, but a memo on the whole database's generation rebuilt them
 * after every member write (bench/mixed.js).
 * Called by openDb on each connection.
 */
export function watchTables(db: Db, tables: readonly string[]): void {
  const counts = new Map<string, number>(tables.map((t) => [t, 0]));
  db.function('amsg_table_written', { deterministic: false, varargs: false }, (table: unknown) => {
    counts.set(String(table), (counts.get(String(table)) ?? 0) + 1);
    return null;
  });
  for (const t of tables)
    for (const op of ['INSERT', 'UPDATE', 'DELETE'])
      db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS memo_${t}_${op.toLowerCase()} AFTER ${op} ON main.${t} BEGIN SELECT amsg_table_written('${t}'); END`);
  tableWrites.set(db, counts);
}

/**
 * Like memo, for a value read from the given tables alone: computed again only once
 * one of them has been written by this connection or another connection has
 * committed anything. On a connection that does not watch them all, the same as memo.
 */
export function memoOnTables<T>(db: Db, tables: readonly string[], key: string, compute: () => T): T {
  const counts = tableWrites.get(db);
  let now = '';
  for (const table of tables) {
    const writes = counts?.get(table);
    if (writes === undefined) return memo(db, key, compute);
    now += `:${writes}`;
  }
  return cached(db, key, `${externalGeneration(db)}${now}`, compute);
}

const memos = new WeakMap<Db, Map<string, { generation: string; value: unknown }>>();
/** The generation of a read snapshot in progress (readSnapshot), which cannot move until it ends. */
const snapshots = new WeakMap<Db, { generation: string; external: number }>();

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
    const external = stmt(db, 'PRAGMA data_version').pluck().get() as number;
    snapshots.set(db, { external, generation: `${external}:${stmt(db, 'SELECT total_changes()').pluck().get() as number}` });
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
  return cached(db, key, snapshots.get(db)?.generation ?? generation(db), compute);
}

function cached<T>(db: Db, key: string, now: string, compute: () => T): T {
  let byKey = memos.get(db);
  if (!byKey) memos.set(db, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit && hit.generation === now) return hit.value as T;
  const value = compute();
  if (byKey.size >= MAX_ENTRIES) byKey.clear();
  byKey.set(key, { generation: now, value });
  return value;
}
