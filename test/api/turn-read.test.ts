/**
 * `amsg serve`'s GETs of one turn of the event loop share one read transaction
 * (readInTurn in src/store/memo.ts). What must hold: a write never joins it (its
 * snapshot may be older than another connection's commit, and a write upgraded from
 * a stale snapshot fails with SQLITE_BUSY_SNAPSHOT instead of waiting), it ends with
 * the turn, and the next turn sees what other connections committed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction, openDb, type Db } from '../../src/store/db.js';
import { checkOncePerTurn, readInTurn } from '../../src/store/memo.js';
import { stmt } from '../../src/store/statements.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let served: Db;
let other: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-turn-'));
  served = openDb(join(dir, 'amsg.db'));
  other = openDb(join(dir, 'amsg.db'));
  for (const db of [served, other]) db.exec('CREATE TABLE IF NOT EXISTS t (n INTEGER)');
  checkOncePerTurn(served);
});

afterEach(() => {
  served.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = (db: Db) => stmt(db, 'SELECT count(*) FROM t').pluck().get() as number;
const insertElsewhere = () => other.prepare('INSERT INTO t (n) VALUES (1)').run();

describe('GETs of one turn share a read transaction', () => {
  it('reads of one turn see one snapshot; the read ends with the turn; the next turn sees other commits', async () => {
    expect(readInTurn(served, () => count(served))).toBe(0);
    expect(served.inTransaction).toBe(true);
    insertElsewhere();
    // Still the same snapshot in this turn.
    expect(readInTurn(served, () => count(served))).toBe(0);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
    expect(readInTurn(served, () => count(served))).toBe(1);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
  });

  it('a write transaction after a read of the turn, with another connection committed between them, is written (no SQLITE_BUSY_SNAPSHOT)', async () => {
    readInTurn(served, () => count(served));
    insertElsewhere();
    inTransaction(served, () => stmt(served, 'INSERT INTO t (n) VALUES (2)').run());
    expect(served.inTransaction).toBe(false);
    expect(count(other)).toBe(2);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
  });

  it('a lone write statement outside a transaction ends the read too', async () => {
    readInTurn(served, () => count(served));
    insertElsewhere();
    stmt(served, 'INSERT INTO t (n) VALUES (3)').run();
    expect(served.inTransaction).toBe(false);
    expect(count(other)).toBe(2);
    // The next read of the same turn opens a new snapshot that holds both.
    expect(readInTurn(served, () => count(served))).toBe(2);
    await nextTurn();
    expect(served.inTransaction).toBe(false);
  });

  it('a route that reads one statement (snapshot: false) joins the turn read on a served connection, and reads alone elsewhere', async () => {
    readInTurn(served, () => count(served), false);
    expect(served.inTransaction).toBe(true);
    await nextTurn();
    const local = openDb(join(dir, 'amsg.db'));
    try {
      expect(readInTurn(local, () => local.inTransaction, false)).toBe(false);
      expect(readInTurn(local, () => local.inTransaction)).toBe(true);
      expect(local.inTransaction).toBe(false);
    } finally {
      local.close();
    }
  });
});
