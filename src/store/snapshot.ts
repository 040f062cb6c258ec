/**
 * Snapshots of a database file for fast resets (`amsg db snapshot|restore`, `amsg
 * serve --snapshot`, `POST /_sandbox/reset`), with SQLite's online backup API.
 *
 * Both directions copy pages through SQLite's own locking, so they are safe while
 * another process (`amsg serve`) has the file open: a snapshot reads one consistent
 * state of it; a restore writes into the live file as one write transaction, so the
 * server's connection sees the restored state at its next read (its memos see
 * `data_version` move, and the backup bumps the schema cookie so its prepared
 * statements are checked again). Replacing the file instead (a rename over it) would
 * leave the server reading the old, unlinked file through its open descriptor.
 *
 * Each copy is one backup step: a backup taken in many steps starts over whenever
 * another connection writes the source in between, so under a busy server it might
 * never end.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, renameSync, rmSync } from 'node:fs';
import { MIGRATIONS } from './migrations/index.js';
import { NATIVE_BINDING } from './db.js';

/** A connection with none of openDb's set-up (no migrations, no triggers): these files are only copied. */
const open = (file: string, opts: { readonly?: boolean } = {}) =>
  new Database(file, { ...opts, ...(NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {}) });

/** Every page in one step (better-sqlite3 runs a first step of 0 pages, then asks how many). */
const ALL_PAGES = { progress: () => 0x7fffffff };

export class SnapshotError extends Error {}

function openPlain(file: string, readonly: boolean) {
  if (!existsSync(file)) throw new SnapshotError(`no database at ${file}`);
  const db = open(file, { readonly });
  db.pragma('busy_timeout = 10000');
  return db;
}

/**
 * Copies the database `dbFile` into `outFile`, a self-contained file (rollback
 * journal, no -wal to go with it), readable by its owner alone. Written as
 * FILE.partial and renamed, so a snapshot that exists is whole.
 */
export async function takeSnapshot(dbFile: string, outFile: string): Promise<{ bytes: number }> {
  const source = openPlain(dbFile, false);
  const partial = `${outFile}.partial`;
  try {
    rmSync(partial, { force: true });
    await source.backup(partial, ALL_PAGES);
  } finally {
    source.close();
  }
  const copy = open(partial);
  copy.pragma('journal_mode = DELETE');
  const bytes = (copy.pragma('page_count', { simple: true }) as number) * (copy.pragma('page_size', { simple: true }) as number);
  copy.close();
  chmodSync(partial, 0o600);
  renameSync(partial, outFile);
  return { bytes };
}

/**
 * Writes the snapshot `snapshotFile` into the database `dbFile` (created if it is
 * not there), whether or not a server has it open. Refuses a file that is not an
 * amsg snapshot of this version's schema, before writing anything.
 */
export async function restoreSnapshot(snapshotFile: string, dbFile: string): Promise<void> {
  const source = openPlain(snapshotFile, true);
  try {
    let applied: string[];
    try {
      applied = source.prepare('SELECT name FROM schema_migrations ORDER BY name').pluck().all() as string[];
    } catch {
      throw new SnapshotError(`${snapshotFile} is not an amsg database snapshot`);
    }
    const known = MIGRATIONS.map((m) => m.name).sort();
    if (applied.join('\n') !== known.join('\n'))
      throw new SnapshotError(
        `${snapshotFile} was taken with another version of amsg (its schema has ${applied.length} migrations, this one ${known.length}); take a new snapshot`,
      );
    const created = !existsSync(dbFile);
    await source.backup(dbFile, ALL_PAGES);
    if (created) chmodSync(dbFile, 0o600);
  } finally {
    source.close();
  }
}
