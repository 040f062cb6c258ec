import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { createRequire } from 'node:module';
import { MIGRATIONS } from './migrations/index.js';
import { installCountTriggers } from './counters.js';
import { watchTables } from './memo.js';
import { beforeWrite } from './statements.js';

export type Db = Database.Database;

/**
 * The addon's path, so better-sqlite3 loads it directly instead of having the
 * `bindings` package search a dozen directories on every start.
 */
export const NATIVE_BINDING: string | undefined = (() => {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined; // an unusual install layout: let better-sqlite3 find it
  }
})();

export interface OpenOptions {
  /** Called with the text of every statement run (query-plan tests, the scale bench). */
  trace?: (sql: string) => void;
  /**
   * false: no counting triggers (src/store/counters.ts). Only for the import writer
   * thread, which counts what each batch wrote itself.
   */
  countTriggers?: boolean;
}

/**
 * AMSG_SQL_LOG=FILE appends the text of every statement a connection runs to FILE, so
 * a benchmark can print the query plans of what a request ran. Off unless set.
 */
function sqlLogFromEnv(): ((sql: string) => void) | undefined {
  const file = process.env.AMSG_SQL_LOG;
  if (!file) return undefined;
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  return (sql) => fs.appendFileSync(file, `${sql.replace(/\s+/g, ' ').trim()}\n`);
}

/**
 * Creates a database file that is not there yet, readable and writable by its user
 * alone (0600): it holds members' personal data and the hashes of API keys. SQLite
 * would create it 0644 under a common umask; it creates the WAL and the
 * shared-memory file with the mode of the database file (its unix VFS), so they are
 * 0600 too. A file that is already there keeps the mode its owner gave it.
 */
function createPrivate(file: string) {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return;
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
  } catch {
    // There already (or two processes creating it at once), or not creatable at all:
    // SQLite opens it, or says why it cannot.
  }
}

/**
 * Opens (creating if needed) an amsg database and brings its schema up to date.
 *
 * WAL lets a reader and a writer work at once; the busy timeout lets two CLI
 * processes that write the same file queue behind each other instead of failing
 * with SQLITE_BUSY; foreign keys make purges cascade through every table;
 * secure_delete overwrites what a delete frees, so a purged member's address and
 * values are not left in the file's free space (nor in the WAL pages that carry
 * the purge).
 */
export function openDb(file: string, opts: OpenOptions = {}): Db {
  const trace = opts.trace ?? sqlLogFromEnv();
  createPrivate(file);
  const db = new Database(file, {
    ...(NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {}),
    ...(trace ? { verbose: (sql?: unknown) => trace(String(sql)) } : {}),
  });
  db.pragma('busy_timeout = 10000');
  useWal(db);
  db.pragma('foreign_keys = ON');
  // ON, not FAST: FAST leaves the content of whole pages a delete frees (a purge of
  // many members) on the freelist as it was.
  db.pragma('secure_delete = ON');
  // NORMAL is durable across a process kill in WAL mode (only an OS crash can lose
  // the last transactions), and it avoids an fsync per commit.
  db.pragma('synchronous = NORMAL');
  migrate(db);
  if (opts.countTriggers !== false) installCountTriggers(db);
  // The field catalog (FieldCatalog.of), the server's key check and the account check are memoized on
  // writes to the tables they read alone (TableMemo), not on every write.
  watchTables(db, ['fields', 'field_relationships', 'api_keys', 'users', 'webhooks', 'accounts']);
  return db;
}

/**
 * Switches to WAL. On a new file that another process is setting up at the same
 * moment (two `amsg init` at once) SQLite can answer SQLITE_BUSY here without
 * waiting on the busy timeout, so the switch is tried again for up to ten seconds.
 */
function useWal(db: Db) {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** Applies the migrations not yet recorded in schema_migrations, in order, each in its own transaction. */
export function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = () => new Set(db.prepare('SELECT name FROM schema_migrations').pluck().all() as string[]);
  // Read once: every command opens the database, and this is all an up-to-date one costs.
  const before = applied();
  if (MIGRATIONS.every((m) => before.has(m.name))) return;
  // BEGIN IMMEDIATE takes the write lock first, so two processes opening a fresh
  // file at once do not both apply the same migration.
  db.transaction(() => {
    const done = applied();
    for (const m of MIGRATIONS) {
      if (done.has(m.name)) continue;
      if ('sql' in m) db.exec(m.sql);
      else m.apply(db);
      db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(m.name, new Date().toISOString());
    }
  }).immediate();
}

/** A connection's transaction statements, prepared once. */
interface TransactionStatements {
  begin: Statement;
  commit: Statement;
  rollback: Statement;
  savepoint: Statement;
  release: Statement;
  rollbackTo: Statement;
}
const transactionStatements = new WeakMap<Db, TransactionStatements>();

function transactionStatementsOf(db: Db): TransactionStatements {
  let tx = transactionStatements.get(db);
  if (!tx)
    transactionStatements.set(
      db,
      (tx = {
        begin: db.prepare('BEGIN IMMEDIATE'),
        commit: db.prepare('COMMIT'),
        rollback: db.prepare('ROLLBACK'),
        savepoint: db.prepare('SAVEPOINT request'),
        release: db.prepare('RELEASE request'),
        rollbackTo: db.prepare('ROLLBACK TO request'),
      }),
    );
  return tx;
}

/**
 * Runs fn in one transaction (BEGIN IMMEDIATE, so a concurrent writer waits on the
 * busy timeout instead of failing half way). Nested calls join the outer transaction.
 * On a connection that commits per turn (commitPerTurn: amsg serve), fn runs in the
 * turn's transaction instead (inTurn: in a savepoint of its own unless it opened the turn).
 * Not better-sqlite3's db.transaction(fn): that builds four wrapper functions and
 * defines five properties on each at every call, 4% of the server's CPU under a load
 * of small bulk adds (bench/RESULTS.md); this is the same begin, commit and rollback.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  beforeWrite(db);
  const turn = turns.get(db);
  if (turn && !turn.outside && (turn.open || !db.inTransaction)) return inTurn(db, turn, fn);
  if (db.inTransaction) return fn();
  const tx = transactionStatementsOf(db);
  tx.begin.run();
  try {
    const result = fn();
    refuseAsync(result);
    tx.commit.run();
    return result;
  } catch (err) {
    // SQLite may have rolled back already (some errors end the transaction themselves).
    if (db.inTransaction) tx.rollback.run();
    throw err;
  }
}

/**
 * Runs fn in a savepoint of the open transaction: when fn throws, its own writes are
 * undone and the transaction's earlier ones stay. A savepoint copies each page it
 * changes that was there before it (SQLite's sub-journal), so it is for small writes.
 */
export function inSavepoint<T>(db: Db, fn: () => T): T {
  if (!db.inTransaction) throw new TypeError('inSavepoint: no transaction is open');
  const tx = transactionStatementsOf(db);
  tx.savepoint.run();
  try {
    const result = fn();
    refuseAsync(result);
    tx.release.run();
    return result;
  } catch (err) {
    // SQLite may have rolled the whole transaction back already (some errors do).
    if (db.inTransaction) {
      tx.rollbackTo.run();
      tx.release.run();
    }
    throw err;
  }
}

/** fn of inTransaction must be synchronous: its transaction would commit before its awaits. */
function refuseAsync(result: unknown) {
  if (result instanceof Promise) throw new TypeError('inTransaction: fn must not be async (the transaction would commit before it ended)');
}

/** The write transaction of a turn of the event loop (commitPerTurn), and what waits for its commit. */
interface Turn {
  open: boolean;
  /** inTransaction calls running (nested ones join the outermost's). */
  depth: number;
  /** outsideTurn calls running: transactions commit each on their own meanwhile. */
  outside: number;
  /** Run once the turn's writes are committed, or with why they are not. */
  waiting: ((failed: unknown) => void)[];
}
const turns = new WeakMap<Db, Turn>();

/**
 * `amsg serve`: the write transactions of one turn of the event loop share one commit
 * (a group commit). Each runs in a savepoint, so a request that fails undoes its own
 * writes alone; the turn's transaction commits at the turn's end (setImmediate), and
 * every answer given meanwhile waits for that commit (afterCommit), so no client hears
 * of a write that is not in the WAL yet, nor of a read of one that could still be
 * undone. Requests answered in one turn are still applied one after the other, as if
 * each had arrived just after the one before. A commit writes each page it changed to
 * the WAL and takes and drops the WAL's locks: per turn instead of per write, the
 * pages that every write changes (the counts, the ends of the tables and indexes) are
 * written once for all of them (bench/RESULTS.md).
 */
export function commitPerTurn(db: Db): void {
  turns.set(db, { open: false, depth: 0, outside: 0, waiting: [] });
}

/**
 * Runs fn in the turn's transaction: the first write of a turn opens it and runs without
 * a savepoint (there is nothing else in it to keep), the later ones each in a savepoint.
 * A savepoint copies every page it changes that was there before it, so a large write
 * late in a turn costs more than it would alone; the background jobs run outsideTurn.
 */
function inTurn<T>(db: Db, turn: Turn, fn: () => T): T {
  if (turn.depth > 0) return fn();
  const opener = !turn.open;
  if (opener) {
    transactionStatementsOf(db).begin.run();
    turn.open = true;
    setImmediate(commitTurn, db);
  }
  turn.depth++;
  try {
    if (!opener) return inSavepoint(db, fn);
    const result = fn();
    refuseAsync(result);
    return result;
  } catch (err) {
    // The turn held this write alone, or SQLite rolled the whole transaction back.
    if (opener || !db.inTransaction) {
      if (db.inTransaction) transactionStatementsOf(db).rollback.run();
      endTurn(turn, err);
    }
    throw err;
  } finally {
    turn.depth--;
  }
}

/**
 * Runs fn with each of its transactions committed on its own, as on a connection that
 * does not commit per turn, after committing the turn's writes. For the background
 * jobs: their batches are large (a savepoint in a shared turn would copy each page they
 * change), and a failed batch of one job must leave the jobs before it written.
 */
export function outsideTurn<T>(db: Db, fn: () => T): T {
  const turn = turns.get(db);
  if (!turn) return fn();
  commitTurn(db);
  turn.outside++;
  try {
    return fn();
  } finally {
    turn.outside--;
  }
}

/**
 * Commits the turn's writes now, if any are open (commitPerTurn), and runs what waited
 * for them. At the turn's end, and before anything that must not run inside a
 * transaction (a dry run, a checkpoint, a sandbox reset, closing).
 */
export function commitTurn(db: Db): void {
  const turn = turns.get(db);
  if (!turn?.open || turn.depth > 0) return;
  let failed: unknown;
  try {
    transactionStatementsOf(db).commit.run();
  } catch (err) {
    failed = err;
    if (db.inTransaction) transactionStatementsOf(db).rollback.run();
  }
  endTurn(turn, failed);
}

function endTurn(turn: Turn, failed: unknown) {
  turn.open = false;
  const waiting = turn.waiting;
  turn.waiting = [];
  // Each waiter is one request's answer: one that throws must not keep the others
  // unanswered, nor (at the turn's end, in a setImmediate) end the process.
  for (const then of waiting)
    try {
      then(failed);
    } catch (err) {
      process.emitWarning(err instanceof Error ? (err.stack ?? err.message) : String(err), 'AmsgInternalError');
    }
}

/**
 * Runs then once this turn's writes are committed (with undefined), or undone (with
 * why); at once when none are open. An answer given in a turn that wrote waits here.
 */
export function afterCommit(db: Db, then: (failed: unknown) => void): void {
  const turn = turns.get(db);
  if (turn?.open) turn.waiting.push(then);
  else then(undefined);
}

/**
 * After an erasure (a purge): copies the WAL into the file and truncates it, so the
 * frames written before the purge, which still hold the erased rows (secure_delete
 * cleans only the pages the purge itself writes), are gone too. Does not wait: while
 * another connection reads an older snapshot the WAL cannot be reset, and those frames
 * go at a later checkpoint instead of holding up the purge's answer. Outside a
 * transaction only (a checkpoint cannot run inside one).
 */
export function truncateWalAfterErasure(db: Db): void {
  // In a turn's transaction (amsg serve), once it is committed.
  if (turns.get(db)?.open) {
    afterCommit(db, (failed) => {
      if (failed === undefined) truncateWalAfterErasure(db);
    });
    return;
  }
  if (db.inTransaction) return;
  const timeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // Busy: a later checkpoint does it.
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}
