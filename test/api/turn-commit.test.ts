/**
 * `amsg serve` commits the writes of one turn of the event loop together (commitPerTurn
 * in src/store/db.ts). What must hold: each write is undone alone when it fails (its
 * savepoint); another connection sees none of the turn's writes before the turn ends
 * and all of them after; what waits for the commit (every answer of the turn) runs
 * after it, or hears why it failed, in which case none of the turn's writes stays.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  afterCommit,
  commitPerTurn,
  commitTurn,
  inTransaction,
  openDb,
  outsideTurn,
  truncateWalAfterErasure,
  type Db,
} from '../../src/store/db.js';
import { checkOncePerTurn, readInTurn } from '../../src/store/memo.js';
import { stmt } from '../../src/store/statements.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let served: Db;
let other: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-turn-commit-'));
  served = openDb(join(dir, 'amsg.db'));
  other = openDb(join(dir, 'amsg.db'));
  served.exec(`CREATE TABLE t (n INTEGER);
               CREATE TABLE parent (id INTEGER PRIMARY KEY);
               CREATE TABLE child (parent_id INTEGER REFERENCES parent (id));`);
  // As amsg serve sets its connection up.
  checkOncePerTurn(served);
  commitPerTurn(served);
});

afterEach(() => {
  served.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = (db: Db) => stmt(db, 'SELECT n FROM t ORDER BY n').pluck().all() as number[];
const insert = (n: number) => () => stmt(served, 'INSERT INTO t (n) VALUES (?)').run(n);

describe('the writes of one turn share one commit', () => {
  it('another connection sees none of them during the turn and all of them after it; this one sees its own at once', async () => {
    inTransaction(served, insert(1));
    inTransaction(served, insert(2));
    expect(served.inTransaction).toBe(true);
    expect(rows(served)).toEqual([1, 2]);
    expect(rows(other)).toEqual([]);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
    expect(rows(other)).toEqual([1, 2]);
  });

  it('a write that fails undoes its own writes alone, and the turn commits the others', async () => {
    inTransaction(served, insert(1));
    expect(() =>
      inTransaction(served, () => {
        insert(2)();
        throw new Error('refused');
      }),
    ).toThrow('refused');
    // An SQL error too, after a write of its own.
    expect(() =>
      inTransaction(served, () => {
        insert(3)();
        stmt(served, 'INSERT INTO nowhere VALUES (1)').run();
      }),
    ).toThrow(/no such table/);
    inTransaction(served, insert(4));
    await nextTurn();
    expect(rows(other)).toEqual([1, 4]);
  });

  it('the first write of a turn, which opened it, undoes the turn when it fails (it holds nothing else); the next write opens another', async () => {
    const failures: unknown[] = [];
    expect(() =>
      inTransaction(served, () => {
        insert(1)();
        afterCommit(served, (failed) => failures.push(failed));
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(served.inTransaction).toBe(false);
    expect(failures).toEqual([new Error('refused')]);
    inTransaction(served, insert(2));
    expect(served.inTransaction).toBe(true);
    await nextTurn();
    expect(rows(other)).toEqual([2]);
  });

  it('outsideTurn (the background jobs) commits the turn first, then each of its transactions on its own', async () => {
    inTransaction(served, insert(1));
    outsideTurn(served, () => {
      expect(rows(other)).toEqual([1]);
      inTransaction(served, insert(2));
      expect(served.inTransaction).toBe(false);
      expect(rows(other)).toEqual([1, 2]);
      expect(() =>
        inTransaction(served, () => {
          insert(3)();
          throw new Error('a failed batch');
        }),
      ).toThrow('a failed batch');
      inTransaction(served, insert(4));
    });
    expect(served.inTransaction).toBe(false);
    expect(rows(other)).toEqual([1, 2, 4]);
    // After it, writes share the turn again.
    inTransaction(served, insert(5));
    expect(rows(other)).toEqual([1, 2, 4]);
    await nextTurn();
    expect(rows(other)).toEqual([1, 2, 4, 5]);
  });

  it('a nested call joins the outer write: a throw in the outer one undoes both', async () => {
    expect(() =>
      inTransaction(served, () => {
        inTransaction(served, insert(1));
        throw new Error('outer refused');
      }),
    ).toThrow('outer refused');
    inTransaction(served, () => inTransaction(served, insert(2)));
    await nextTurn();
    expect(rows(other)).toEqual([2]);
  });

  it('reads of the turn after its first write read in it (what the turn wrote), and the next turn starts clean', async () => {
    expect(readInTurn(served, () => rows(served))).toEqual([]);
    inTransaction(served, insert(1));
    expect(readInTurn(served, () => rows(served))).toEqual([1]);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
    other.prepare('INSERT INTO t (n) VALUES (2)').run();
    expect(readInTurn(served, () => rows(served))).toEqual([1, 2]);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
  });
});

describe('what waits for the commit', () => {
  it('runs after it, in order, when the writes are there for everyone; at once when nothing is open', async () => {
    const seen: unknown[] = [];
    afterCommit(served, (failed) => seen.push(['idle', failed]));
    expect(seen).toEqual([['idle', undefined]]);

    inTransaction(served, insert(1));
    afterCommit(served, (failed) => seen.push(['first', failed, rows(other)]));
    inTransaction(served, insert(2));
    afterCommit(served, (failed) => seen.push(['second', failed, rows(other)]));
    expect(seen).toHaveLength(1);
    await nextTurn();
    expect(seen).toEqual([
      ['idle', undefined],
      ['first', undefined, [1, 2]],
      ['second', undefined, [1, 2]],
    ]);
  });

  it("hears why when the commit fails, and none of the turn's writes stays; the next turn commits again", async () => {
    inTransaction(served, insert(1));
    // A foreign key checked at the commit: the commit, not the statement, fails.
    inTransaction(served, () => {
      served.pragma('defer_foreign_keys = ON');
      stmt(served, 'INSERT INTO child (parent_id) VALUES (99)').run();
    });
    const failures: unknown[] = [];
    afterCommit(served, (failed) => failures.push(failed));
    await nextTurn();
    expect(failures).toEqual([expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' })]);
    expect(served.inTransaction).toBe(false);
    expect(rows(other)).toEqual([]);
    expect(other.prepare('SELECT count(*) FROM child').pluck().get()).toBe(0);

    inTransaction(served, insert(2));
    await nextTurn();
    expect(rows(other)).toEqual([2]);
  });

  it('commitTurn commits at once (before a dry run, a reset, a close), and does nothing inside a write', () => {
    const seen: unknown[] = [];
    inTransaction(served, () => {
      insert(1)();
      afterCommit(served, (failed) => seen.push(failed));
      commitTurn(served);
      expect(served.inTransaction).toBe(true);
      expect(seen).toEqual([]);
    });
    commitTurn(served);
    expect(served.inTransaction).toBe(false);
    expect(seen).toEqual([undefined]);
    expect(rows(other)).toEqual([1]);
  });

  it("an erasure's WAL truncation waits for the commit that holds the erasure", async () => {
    const wal = join(dir, 'amsg.db-wal');
    inTransaction(served, insert(1));
    truncateWalAfterErasure(served);
    expect(served.inTransaction).toBe(true);
    await nextTurn();
    expect(rows(other)).toEqual([1]);
    expect(statSync(wal).size).toBe(0);
  });
});
