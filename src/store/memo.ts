import type { Db } from './db.js';
import { setBeforeWrite, stmt } from './statements.js';

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
  const snapshot = snapshots.get(db);
  if (snapshot !== undefined) return snapshot;
  const turn = perTurn.get(db);
  if (!turn) return stmt(db, 'PRAGMA data_version').pluck().get() as number;
  if (turn.version === undefined) {
    turn.version = stmt(db, 'PRAGMA data_version').pluck().get() as number;
    setImmediate(() => (turn.version = undefined));
  }
  return turn.version;
}

interface Turn {
  /** data_version as first read in this turn (outside a shared read). */
  version: number | undefined;
  /** Whether this turn's GETs share an open read transaction (readInTurn). */
  reading: boolean;
}
/** Connections that look at other connections' commits once per turn of the event loop (checkOncePerTurn). */
const perTurn = new WeakMap<Db, Turn>();

/**
 * `amsg serve`'s connection works in turns of the event loop: its GETs share a read
 * per turn (readInTurn), and its memos look for other connections' commits once per
 * turn, not once per request outside a read snapshot (a write's key check):
 * `PRAGMA data_version` outside a transaction takes and drops the read lock, which cost
 * as much as the rest of accepting an event. The requests answered in one turn arrived
 * together, so seeing another process's commit from the next turn on is the same as
 * their having arrived just before it. This connection's own writes still count at once.
 */
export function checkOncePerTurn(db: Db): void {
  perTurn.set(db, { version: undefined, reading: false });
  setBeforeWrite(db, () => endTurnRead(db));
}

/**
 * `amsg serve`: the GETs answered in one turn of the event loop read in one shared
 * read transaction, ended at the turn's end (setImmediate) or before anything writes,
 * whichever comes first. A read lock taken and dropped per request (two fcntl calls
 * and an fstat, and SQLite's page checks) was the largest share of a member GET's
 * cost after node's own (bench/RESULTS.md); a turn answers several requests that
 * arrived together, as if each had arrived just before the next. Elsewhere (the
 * local transport, tests), the same as readSnapshot, or fn alone for a route that
 * reads one statement (`snapshot: false`).
 */
export function readInTurn<T>(db: Db, fn: () => T, snapshot = true): T {
  const turn = perTurn.get(db);
  if (!turn) return snapshot ? readSnapshot(db, fn) : fn();
  if (!turn.reading) {
    // Another transaction of this connection (there is none between requests): join it.
    if (db.inTransaction) return fn();
    beginRead(db);
    turn.reading = true;
    setImmediate(endTurnRead, db);
  }
  return fn();
}

/** Ends the turn's shared read, if one is open (readInTurn). */
function endTurnRead(db: Db): void {
  const turn = perTurn.get(db);
  if (!turn?.reading) return;
  turn.reading = false;
  endRead(db);
}

interface Watch {
  tables: ReadonlySet<string>;
  /**
   * How many rows this connection's statements have written to any watched table:
   * bumped by TEMP triggers through a JS function, so it never moves back (a rolled
   * back write still counts; a counter kept in a table would be rolled back with it
   * and could come back to a value a different content was cached under). One number
   * for all of them: they are written so rarely that telling them apart would only
   * add a string per check to every request.
   */
  writes: number;
}
const watches = new WeakMap<Db, Watch>();

/**
 * Watches tables whose memos should survive writes to other tables (TableMemo):
 * the field catalog and a key pair's user are read by nearly every request and
 * changed by almost none, but a memo on the whole database's generation rebuilt them
 * after every member write (bench/mixed.js).
 * Called by openDb on each connection.
 */
export function watchTables(db: Db, tables: readonly string[]): void {
  const watch: Watch = { tables: new Set(tables), writes: 0 };
  db.function('amsg_table_written', { deterministic: false, varargs: false }, (_table: unknown) => {
    watch.writes++;
    return null;
  });
  // One exec for all of them: each command's start runs this.
  db.exec(
    tables
      .flatMap((t) =>
        ['INSERT', 'UPDATE', 'DELETE'].map(
          (op) =>
            `CREATE TEMP TRIGGER IF NOT EXISTS memo_${t}_${op.toLowerCase()} AFTER ${op} ON main.${t} BEGIN SELECT amsg_table_written('${t}'); END;`,
        ),
      )
      .join('\n'),
  );
  watches.set(db, watch);
}

interface Entry<V> {
  external: number;
  writes: number;
  value: V;
}

/**
 * A memo of values read from the given tables alone (the field catalog, a key pair's
 * user): computed again only once a watched table has been written by this connection
 * or another connection has committed anything. One instance per kind of value, made
 * once at module level: a request checks it with a WeakMap lookup, two number
 * comparisons and a Map lookup of its key (a number or the string it already has), so
 * nothing is built or hashed per request but that key. On a connection that does not
 * watch all of its tables, the same as memo.
 */
export class TableMemo<K extends string | number, V> {
  private readonly perDb = new WeakMap<Db, { watch: Watch; entries: Map<K, Entry<V>> }>();

  constructor(
    /** Names the memo in the fallback memo's keys. */
    readonly name: string,
    readonly tables: readonly string[],
  ) {}

  get(db: Db, key: K, compute: () => V): V {
    let state = this.perDb.get(db);
    if (!state) {
      const watch = watches.get(db);
      if (!watch || !this.tables.every((t) => watch.tables.has(t))) return memo(db, `${this.name}:${key}`, compute);
      this.perDb.set(db, (state = { watch, entries: new Map() }));
    }
    const external = externalGeneration(db);
    const hit = state.entries.get(key);
    if (hit && hit.external === external && hit.writes === state.watch.writes) return hit.value;
    const value = compute();
    if (state.entries.size >= MAX_ENTRIES) state.entries.clear();
    state.entries.set(key, { external, writes: state.watch.writes, value });
    return value;
  }
}

const memos = new WeakMap<Db, Map<string, { generation: string; value: unknown }>>();
/** The data_version of a read snapshot in progress (readSnapshot), which cannot move until it ends. */
const snapshots = new WeakMap<Db, number>();

/**
 * Runs a read-only fn in one read transaction: its statements share one snapshot and
 * one lock (a statement outside a transaction takes and drops the file's read lock
 * each time: two fcntl calls and an fstat), and the memos check the generation once
 * instead of at every use. For reads only: a write in it would need the write lock
 * while holding a read snapshot, which another writer can make stale.
 */
export function readSnapshot<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  beginRead(db);
  try {
    return fn();
  } finally {
    endRead(db);
  }
}

/** Opens a read transaction; its first read takes the read lock and fixes the snapshot, whose data_version the memos use. */
function beginRead(db: Db): void {
  stmt(db, 'BEGIN').run();
  snapshots.set(db, stmt(db, 'PRAGMA data_version').pluck().get() as number);
}

function endRead(db: Db): void {
  snapshots.delete(db);
  if (db.inTransaction) stmt(db, 'COMMIT').run();
}
/** Bounds the memo of one database; past this it starts over. */
const MAX_ENTRIES = 1_000;

/**
 * A value read from the database, computed again only once the database has
 * changed. For small hot reads that every request repeats (the field catalog, a key
 * pair's user); checking the generation costs two tiny statements.
 */
export function memo<T>(db: Db, key: string, compute: () => T): T {
  const now = generation(db);
  let byKey = memos.get(db);
  if (!byKey) memos.set(db, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit && hit.generation === now) return hit.value as T;
  const value = compute();
  if (byKey.size >= MAX_ENTRIES) byKey.clear();
  byKey.set(key, { generation: now, value });
  return value;
}
