import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

const cache = new WeakMap<Db, Map<string, Statement>>();

/**
 * What must happen on a connection before anything writes on it: `amsg serve` ends
 * the read transaction its GETs share for a turn of the event loop (memo.ts,
 * readInTurn), which a write must not join (its snapshot may be older than another
 * connection's commit, and upgrading it would fail instead of waiting).
 */
const beforeWriteHooks = new WeakMap<Db, () => void>();
/** Statements that change the database, found once when prepared. */
const writers = new WeakSet<Statement>();

export function setBeforeWrite(db: Db, hook: () => void): void {
  beforeWriteHooks.set(db, hook);
}

/** Runs the connection's before-write hook: every write transaction starts with it. */
export function beforeWrite(db: Db): void {
  beforeWriteHooks.get(db)?.();
}

/**
 * A prepared statement for this database, compiled once. Preparing costs more than
 * running a small query, and the hot paths (get member, import rows) run the same
 * few statements many times.
 */
export function stmt(db: Db, sql: string): Statement {
  let byText = cache.get(db);
  if (!byText) cache.set(db, (byText = new Map()));
  let s = byText.get(sql);
  if (!s) {
    byText.set(sql, (s = db.prepare(sql)));
    if (!s.readonly) writers.add(s);
  }
  // A lone write outside inTransaction is its own transaction: the hook runs for it too.
  if (writers.has(s)) beforeWrite(db);
  return s;
}
