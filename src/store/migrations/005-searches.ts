/**
 * Saved searches. A segment is a saved search (one table, one id space: a segment id
 * is a search id). The criteria are kept as the JSON text of the nested condition
 * list, and evaluated in SQL whenever the search runs, so a search never holds a
 * stale member list.
 */
export const sql = `
  CREATE TABLE searches (
    search_id   INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(account_id),
    name        TEXT NOT NULL,
    -- the nested condition list as given, re-serialized as compact JSON
    criteria    TEXT NOT NULL,
    -- when the counts were last computed, which is when the search last ran (every read runs it)
    cached_at   TEXT,
    last_run_at TEXT,
    created_at  TEXT NOT NULL,
    deleted_at  TEXT,
    purged_at   TEXT
  );
  -- A deleted search frees its name.
  CREATE UNIQUE INDEX searches_live_name ON searches(account_id, name COLLATE NOCASE)
    WHERE deleted_at IS NULL;
`;
