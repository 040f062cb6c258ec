/**
 * The members table checks member_status_id with comparisons joined by OR instead of
 * an IN list: the same rule, at no cost per row.
 *
 * SQLite codes a CHECK's IN list of more than two values as a temporary index that it
 * builds again for every row it checks (OpenEphemeral and one IdxInsert per value, in
 * EXPLAIN of any INSERT into members). That cost 0.6–0.9 µs a member, about a fifth of
 * the SQL of a million-member import (bench/RESULTS.md). An UPDATE that leaves the
 * status alone does not check it, so only inserts and status changes paid.
 *
 * A CHECK constraint is not part of the file format: SQLite documents changing one by
 * rewriting the table's text in sqlite_schema and bumping schema_version
 * (https://sqlite.org/lang_altertable.html#otheralter), which costs the same at any
 * number of members, where rebuilding the table would copy every one. Rows already
 * stored meet the new rule, since it is the old one.
 */
import type { Db } from '../db.js';

const BEFORE = "CHECK (member_status_id IN ('a','e','o','f'))";
const AFTER = "CHECK (member_status_id = 'a' OR member_status_id = 'e' OR member_status_id = 'o' OR member_status_id = 'f')";

export function apply(db: Db): void {
  const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'members'").pluck().get() as string;
  if (!sql.includes(BEFORE)) throw new Error('migration 025: the members table does not have the CHECK it rewrites');
  const version = db.pragma('schema_version', { simple: true }) as number;
  // better-sqlite3 opens connections in SQLite's defensive mode, which refuses writes
  // to sqlite_schema; it is lifted for these statements alone.
  db.unsafeMode(true);
  try {
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'members'").run(sql.replace(BEFORE, AFTER));
    // Other connections (and this one) read the schema again when its version moves.
    db.pragma(`schema_version = ${version + 1}`);
    db.pragma('writable_schema = OFF');
  } finally {
    db.unsafeMode(false);
  }
  const problems = db.pragma('quick_check(members)', { simple: true });
  if (problems !== 'ok') throw new Error(`migration 025: quick_check after the rewrite: ${String(problems)}`);
}
