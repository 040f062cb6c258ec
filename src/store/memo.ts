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
  const now = generation(db);
  const hit = byKey.get(key);
  if (hit && hit.generation === now) return hit.value as T;
  const value = compute();
  if (byKey.size >= MAX_ENTRIES) byKey.clear();
  byKey.set(key, { generation: now, value });
  return value;
}
