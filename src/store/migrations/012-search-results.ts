/**
 * A saved search's stored result and counts, so reading a search or a page of its
 * members costs the same at a thousand and at a million members (src/service/audience/searches.ts
 * says when the result is computed and how it is kept fresh):
 *
 * - search_results: the members the search matched when it was computed, walked in
 *   member id order by its primary key (a deep page skips index entries). Purging a
 *   member cascades here, on the member_id index;
 * - searches gains the counts of that computation and member_count, the number of
 *   its rows in search_results (a trigger takes purged members out of it, since the
 *   cascade cannot); stale_since, set when the audience may have changed since; and
 *   compute_ms, what computing it last took, which spaces refreshes out;
 * - search_refreshes: a background refresh in progress, one range of member ids per
 *   step, with the counts so far;
 * - searches_live: an account's live searches in id order, so their list is not sorted.
 *
 * Searches saved before this migration have no result yet: cached_at and last_run_at
 * go back to NULL, which the job runner computes first.
 */
export const sql = `
  ALTER TABLE searches ADD COLUMN active_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE searches ADD COLUMN error_count  INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE searches ADD COLUMN optout_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE searches ADD COLUMN member_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE searches ADD COLUMN compute_ms   INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE searches ADD COLUMN stale_since  TEXT;
  UPDATE searches SET cached_at = NULL, last_run_at = NULL;
  -- The live searches of an account in id order: a page of them needs no sort.
  CREATE INDEX searches_live ON searches(account_id) WHERE deleted_at IS NULL;

  CREATE TABLE search_results (
    search_id INTEGER NOT NULL REFERENCES searches(search_id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    PRIMARY KEY (search_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX search_results_member ON search_results(member_id);

  CREATE TABLE search_refreshes (
    search_id    INTEGER PRIMARY KEY REFERENCES searches(search_id) ON DELETE CASCADE,
    started_at   TEXT NOT NULL,
    -- members with ids up to this one are done
    done_to      INTEGER NOT NULL,
    active_count INTEGER NOT NULL DEFAULT 0,
    error_count  INTEGER NOT NULL DEFAULT 0,
    optout_count INTEGER NOT NULL DEFAULT 0,
    ms           INTEGER NOT NULL DEFAULT 0
  );

  CREATE TRIGGER search_results_purged BEFORE DELETE ON members BEGIN
    UPDATE searches SET member_count = member_count - 1
     WHERE search_id IN (SELECT search_id FROM search_results WHERE member_id = OLD.member_id);
  END;
`;
