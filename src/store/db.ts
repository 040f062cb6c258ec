import Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/**
 * The addon's path, so better-sqlite3 loads it directly instead of having the
 * `bindings` package search a dozen directories on every start.
 */
const NATIVE_BINDING: string | undefined = (() => {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined; // an unusual install layout: let better-sqlite3 find it
  }
})();

/**
 * Opens (creating if needed) an amsg database and brings its schema up to date.
 *
 * WAL lets a reader and a writer work at once; the busy timeout lets two CLI
 * processes that write the same file queue behind each other instead of failing
 * with SQLITE_BUSY; foreign keys make purges cascade through every table.
 */
export function openDb(file: string): Db {
  const db = new Database(file, NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {});
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('foreign_keys = ON');
  // NORMAL is durable across a process kill in WAL mode (only an OS crash can lose
  // the last transactions), and it avoids an fsync per commit.
  db.pragma('synchronous = NORMAL');
  migrate(db);
  return db;
}

/** Applies the migrations newer than the database's user_version, each in its own transaction. */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current >= MIGRATIONS.length) return;
  // BEGIN IMMEDIATE takes the write lock first, so two processes opening a fresh
  // file at once do not both try to create the schema.
  const apply = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }
  });
  apply.immediate();
}

/**
 * Runs fn in one transaction (BEGIN IMMEDIATE, so a concurrent writer waits on the
 * busy timeout instead of failing half way). Nested calls join the outer transaction.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  return db.transaction(fn).immediate();
}
