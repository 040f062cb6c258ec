import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

const cache = new WeakMap<Db, Map<string, Statement>>();

/**
 * A prepared statement for this database, compiled once. Preparing costs more than
 * running a small query, and the hot paths (get member, import rows) run the same
 * few statements many times.
 */
export function stmt(db: Db, sql: string): Statement {
  let byText = cache.get(db);
  if (!byText) cache.set(db, (byText = new Map()));
  let s = byText.get(sql);
  if (!s) byText.set(sql, (s = db.prepare(sql)));
  return s;
}
