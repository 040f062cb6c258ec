/** inTransaction and inSavepoint (src/store/db.ts): one write transaction, all or nothing, nested calls joining it; a savepoint undoing its own writes only. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inSavepoint, inTransaction, openDb, type Db } from '../../src/store/db.js';

describe('inTransaction', () => {
  let dir: string;
  let db: Db;
  let other: Db;
  const names = (d: Db) => d.prepare('SELECT name FROM t ORDER BY name').pluck().all();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'amsg-tx-'));
    db = openDb(join(dir, 'a.db'));
    db.exec('CREATE TABLE t (name TEXT PRIMARY KEY)');
    other = openDb(join(dir, 'a.db'));
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits what fn wrote and answers what fn answered; another connection sees it after, not during', () => {
    const answer = inTransaction(db, () => {
      db.prepare("INSERT INTO t VALUES ('a')").run();
      // BEGIN IMMEDIATE: the write lock is held from the start, and nothing is visible yet.
      expect(db.inTransaction).toBe(true);
      expect(names(other)).toEqual([]);
      return 42;
    });
    expect(answer).toBe(42);
    expect(db.inTransaction).toBe(false);
    expect(names(other)).toEqual(['a']);
  });

  it('a throw rolls back every write of fn and goes on up', () => {
    const boom = new Error('boom');
    expect(() =>
      inTransaction(db, () => {
        db.prepare("INSERT INTO t VALUES ('a')").run();
        db.prepare("INSERT INTO t VALUES ('b')").run();
        throw boom;
      }),
    ).toThrow(boom);
    expect(db.inTransaction).toBe(false);
    expect(names(db)).toEqual([]);
  });

  it('an SQL error inside rolls back the writes before it', () => {
    expect(() =>
      inTransaction(db, () => {
        db.prepare("INSERT INTO t VALUES ('a')").run();
        db.prepare("INSERT INTO t VALUES ('a')").run();
      }),
    ).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }));
    expect(db.inTransaction).toBe(false);
    expect(names(db)).toEqual([]);
  });

  it('a nested call joins the outer transaction: its writes go with the outer rollback', () => {
    expect(() =>
      inTransaction(db, () => {
        inTransaction(db, () => db.prepare("INSERT INTO t VALUES ('inner')").run());
        expect(db.inTransaction).toBe(true);
        throw new Error('outer fails');
      }),
    ).toThrow('outer fails');
    expect(names(db)).toEqual([]);
  });

  it('refuses an async fn (it would commit before its awaits) and writes nothing', async () => {
    let later: Promise<unknown> | undefined;
    expect(() =>
      inTransaction(db, () => {
        db.prepare("INSERT INTO t VALUES ('a')").run();
        later = (async () => {})();
        return later;
      }),
    ).toThrow(/must not be async/);
    await later;
    expect(db.inTransaction).toBe(false);
    expect(names(db)).toEqual([]);
  });

  it('works again after a failure (the prepared begin, commit and rollback are reused)', () => {
    expect(() =>
      inTransaction(db, () => {
        throw new Error('first');
      }),
    ).toThrow('first');
    inTransaction(db, () => db.prepare("INSERT INTO t VALUES ('b')").run());
    inTransaction(db, () => db.prepare("INSERT INTO t VALUES ('c')").run());
    expect(names(other)).toEqual(['b', 'c']);
  });

  it('inSavepoint: a throw undoes its own writes only; the transaction goes on and commits the rest', () => {
    const boom = new Error('boom');
    inTransaction(db, () => {
      db.prepare("INSERT INTO t VALUES ('before')").run();
      expect(() =>
        inSavepoint(db, () => {
          db.prepare("INSERT INTO t VALUES ('undone')").run();
          throw boom;
        }),
      ).toThrow(boom);
      expect(db.inTransaction).toBe(true);
      expect(inSavepoint(db, () => db.prepare("INSERT INTO t VALUES ('kept')").run().changes)).toBe(1);
    });
    expect(names(other)).toEqual(['before', 'kept']);
  });

  it('inSavepoint outside a transaction is refused: it would open one of its own', () => {
    expect(() => inSavepoint(db, () => db.prepare("INSERT INTO t VALUES ('a')").run())).toThrow(/no transaction is open/);
    expect(db.inTransaction).toBe(false);
    expect(names(other)).toEqual([]);
  });
});
