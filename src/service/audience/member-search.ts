/**
 * Members by part of their e-mail address (GET /members/search), at the same cost at
 * 1k and 1M members: three or more characters are looked up in the trigram index
 * (store migration 026), one or two are a prefix of the e-mail index. The index is
 * filled in the background by the job runner (advanceEmailSearch); the members it has
 * not reached yet are scanned, at most UNINDEXED_SCAN of them, so a search right after a
 * large import stays bounded and says how many it could not look at.
 */
import { inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest } from '../../errors.js';
import { LIMIT_BOUND, LIMIT_OFFSET, windowOf, type Window } from '../paging.js';
import type { Ctx } from '../context.js';
import { wireMembersByIds, type WireMember } from './members.js';

/** Members above the indexed ones a search scans itself, at most. */
export const UNINDEXED_SCAN = 5_000;
/** Members the indexer reads at a time (then it looks at its budget). */
const INDEX_BATCH = 100;

export const STATE = 'SELECT indexed_through, ever_indexed FROM member_email_search_state WHERE id = 1';

/** Matches of the index, in id order: the member checked again (live, this account, the e-mail still holds q). */
export const INDEXED_MATCHES = `SELECT m.member_id FROM member_email_search s CROSS JOIN members m ON m.member_id = s.rowid
  WHERE member_email_search MATCH ? AND m.account_id = ? AND m.deleted_at IS NULL AND instr(m.email, ?) > 0
  ORDER BY s.rowid ${LIMIT_BOUND}`;
/** Matches among the members not indexed yet (a bounded range of ids above indexed_through). */
export const UNINDEXED_MATCHES = `SELECT member_id FROM members
  WHERE member_id > ? AND member_id <= ? AND account_id = ? AND deleted_at IS NULL AND instr(email, ?) > 0
  ORDER BY member_id ${LIMIT_BOUND}`;
/** One or two characters: a prefix of the e-mail, in e-mail order (the unique index on account and e-mail). */
export const PREFIX_MATCHES = `SELECT member_id FROM members
  WHERE account_id = ? AND email >= ? AND email < ? AND deleted_at IS NULL
  ORDER BY email ${LIMIT_OFFSET}`;

export interface SearchAnswer {
  members: WireMember[];
  /** Members the index has not reached that this search did not look at (0 once the index has caught up). */
  unindexed: number;
}

/** An FTS5 string: the text as one phrase, quotes doubled, so no character of q is query syntax. */
const phrase = (q: string) => `"${q.replaceAll('"', '""')}"`;

export function searchMembers(ctx: Ctx, text: string, window: Window): SearchAnswer {
  const q = text.trim().toLowerCase();
  if (q.length === 0) throw badRequest('q: give part of an e-mail address (at least one character)', { field: 'q' });
  // No address holds a control character, and FTS5 ends a phrase at a NUL ("unterminated string").
  if (/[\u0000-\u001f\u007f]/.test(q)) throw badRequest('q: an e-mail address holds no control characters', { field: 'q' });
  const { limit, offset } = windowOf(window);
  if (q.length < 3) {
    const ids = stmt(ctx.db, PREFIX_MATCHES).pluck().all(ctx.accountId, q, `${q}\u{10ffff}`, limit, offset) as number[];
    return { members: wireMembersByIds(ctx, ids), unindexed: 0 };
  }
  const state = stmt(ctx.db, STATE).get() as { indexed_through: number };
  const wanted = offset + limit;
  const ids = stmt(ctx.db, INDEXED_MATCHES).pluck().all(phrase(q), ctx.accountId, q, wanted) as number[];
  const top = (stmt(ctx.db, 'SELECT max(member_id) FROM members').pluck().get() as number | null) ?? 0;
  const scanTo = Math.min(top, state.indexed_through + UNINDEXED_SCAN);
  if (ids.length < wanted && scanTo > state.indexed_through)
    ids.push(
      ...(stmt(ctx.db, UNINDEXED_MATCHES)
        .pluck()
        .all(state.indexed_through, scanTo, ctx.accountId, q, wanted - ids.length) as number[]),
    );
  return { members: wireMembersByIds(ctx, ids.slice(offset)), unindexed: Math.max(0, top - scanTo) };
}

/**
 * Indexes members above indexed_through for up to budgetMs, a batch a transaction;
 * answers whether any are left. A read first: with nothing to index (nearly every
 * call) no write lock is taken.
 */
export function advanceEmailSearch(db: Db, budgetMs: number): boolean {
  const started = Date.now();
  const pending = () =>
    stmt(db, 'SELECT EXISTS (SELECT 1 FROM members WHERE member_id > (SELECT indexed_through FROM member_email_search_state WHERE id = 1))')
      .pluck()
      .get() as number;
  if (!pending()) return false;
  for (;;) {
    let more: boolean;
    try {
      more = inTransaction(db, () => indexBatch(db));
    } catch (err) {
      // Another process holds the write lock: the next run goes on.
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      throw err;
    }
    if (!more) return false;
    if (Date.now() - started >= budgetMs) return true;
  }
}

function indexBatch(db: Db): boolean {
  const state = stmt(db, STATE).get() as { indexed_through: number; ever_indexed: number };
  const rows = stmt(db, `SELECT member_id, email FROM members WHERE member_id > ? ORDER BY member_id ${LIMIT_BOUND}`).all(
    state.indexed_through,
    INDEX_BATCH,
  ) as { member_id: number; email: string }[];
  if (rows.length === 0) return false;
  const insert = stmt(db, 'INSERT INTO member_email_search (rowid, email) VALUES (?, ?)');
  const replace = stmt(db, 'INSERT OR REPLACE INTO member_email_search (rowid, email) VALUES (?, ?)');
  for (const r of rows) (r.member_id <= state.ever_indexed ? replace : insert).run(r.member_id, r.email);
  const last = rows[rows.length - 1].member_id;
  stmt(db, 'UPDATE member_email_search_state SET indexed_through = ?, ever_indexed = max(ever_indexed, ?) WHERE id = 1').run(last, last);
  return rows.length === INDEX_BATCH;
}
