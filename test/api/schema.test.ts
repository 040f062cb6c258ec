/**
 * Schema changes that are not plain SQL: migration 025 rewrites the members table's
 * CHECK on member_status_id in sqlite_schema (an IN list of four values cost a
 * temporary index per inserted row).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NATIVE_BINDING, openDb, type Db } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

const plain = (file: string) => new Database(file, NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {});

/** The members table's statement as stored. */
const membersSql = (db: Database.Database) =>
  db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'members'").pluck().get() as string;

/** Whether an insert into members builds a temporary index (the IN list's cost) in its program. */
const insertBuildsIndex = (db: Database.Database) =>
  (
    db
      .prepare("EXPLAIN INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, 'x@example.com', 'now', 'now')")
      .all() as { opcode: string }[]
  ).some((op) => op.opcode === 'OpenEphemeral');

const insertWithStatus = (db: Database.Database, email: string, status: string) =>
  db
    .prepare("INSERT INTO members (account_id, email, member_status_id, member_since, last_modified_at) VALUES (1, ?, ?, 'now', 'now')")
    .run(email, status);

/** A file with the schema as it was before migration 025, and one member per status. */
function databaseBefore025(file: string) {
  const db = plain(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const m of MIGRATIONS) {
    if (m.name === '025-member-status-check') break;
    if (!('sql' in m)) throw new Error(`${m.name} comes before 025 and is not SQL: update this test`);
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(m.name, 'then');
  }
  db.exec("INSERT INTO accounts (account_id, account_name, created_at) VALUES (1, 'one', 'then')");
  for (const s of ['a', 'e', 'o', 'f']) insertWithStatus(db, `${s}@example.com`, s);
  return db;
}

describe('migration 025: the members status CHECK as comparisons', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'amsg-schema-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a new database checks the status without an IN list, builds no temporary index per insert, and still refuses other statuses', () => {
    const db: Db = openDb(join(dir, 'new.db'));
    try {
      expect(membersSql(db)).toContain(
        "CHECK (member_status_id = 'a' OR member_status_id = 'e' OR member_status_id = 'o' OR member_status_id = 'f')",
      );
      expect(membersSql(db)).not.toContain("member_status_id IN ('a','e','o','f')");
      expect(insertBuildsIndex(db)).toBe(false);
      db.exec("INSERT INTO accounts (account_id, account_name, created_at) VALUES (1, 'one', 'now')");
      for (const s of ['a', 'e', 'o', 'f']) expect(insertWithStatus(db, `${s}@example.com`, s).changes).toBe(1);
      for (const bad of ['x', 'A', ''])
        expect(() => insertWithStatus(db, `${bad || 'empty'}-bad@example.com`, bad)).toThrow(
          expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }),
        );
      expect(() => db.prepare("UPDATE members SET member_status_id = 'z' WHERE email = 'a@example.com'").run()).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }),
      );
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('an existing database keeps its members, and a connection opened before the migration reads the new schema', () => {
    const file = join(dir, 'old.db');
    const before = databaseBefore025(file);
    try {
      expect(insertBuildsIndex(before)).toBe(true);
      const migrated = openDb(file);
      try {
        expect(migrated.prepare("SELECT name FROM schema_migrations WHERE name = '025-member-status-check'").pluck().get()).toBe(
          '025-member-status-check',
        );
        expect(migrated.prepare('SELECT email, member_status_id FROM members ORDER BY member_id').all()).toEqual([
          { email: 'a@example.com', member_status_id: 'a' },
          { email: 'e@example.com', member_status_id: 'e' },
          { email: 'o@example.com', member_status_id: 'o' },
          { email: 'f@example.com', member_status_id: 'f' },
        ]);
        expect(migrated.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        migrated.close();
      }
      // The schema version moved, so the connection that was open reads the new text at
      // its next statement (EXPLAIN alone does not look at the version).
      expect(() => insertWithStatus(before, 'late@example.com', 'q')).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }));
      expect(insertWithStatus(before, 'late@example.com', 'o').changes).toBe(1);
      expect(insertBuildsIndex(before)).toBe(false);
      // Defensive mode is back on for the connection that migrated: a fresh open has it too.
      const again = openDb(file);
      try {
        expect(() => again.pragma('writable_schema = ON')).not.toThrow();
        expect(() => again.prepare("UPDATE sqlite_schema SET sql = sql WHERE name = 'members'").run()).toThrow();
      } finally {
        again.close();
      }
    } finally {
      before.close();
    }
  });
});
