/**
 * What an import did to which member, as ranges of member ids instead of one row per
 * member: a million-member import wrote a million import_members rows (two b-trees,
 * about a tenth of its time); it now writes about one ledger row per batch, because
 * the members a batch adds get consecutive ids, and a re-import of the same file
 * touches them in the same order.
 *
 * - A row says: members first_id..last_id (inclusive, every id in between) were
 *   touched by the import with this change type and added_to_groups flag. A member is
 *   in at most one range of an import, so the ranges of one import never overlap.
 * - A range spans at most LEDGER_SPAN (4096) ids, so the ranges that hold a member are
 *   found with `first_id BETWEEN id - 4095 AND id AND last_id >= id` on the first_id
 *   index (src/service/imports.ts keeps the cap; the triggers below rely on it).
 * - Purging a member cuts it out of every range (trigger below), so an erased member
 *   is in no import's list, and a later member given the same id is not either.
 * - `import_members` stays as a view with the old columns (member_id expanded from the
 *   ranges) for code and tests that read it; inserting into it adds a one-member
 *   range. Hot paths query import_ledger directly: the view expands every range.
 */
export const sql = `
  CREATE TABLE import_ledger (
    import_id       INTEGER NOT NULL REFERENCES member_imports(import_id) ON DELETE CASCADE,
    first_id        INTEGER NOT NULL,
    last_id         INTEGER NOT NULL,
    change_type     TEXT NOT NULL CHECK (change_type IN ('a','u','s')),
    added_to_groups INTEGER NOT NULL DEFAULT 0 CHECK (added_to_groups IN (0,1)),
    PRIMARY KEY (import_id, first_id),
    CHECK (last_id >= first_id AND last_id - first_id < 4096)
  ) WITHOUT ROWID;
  CREATE INDEX import_ledger_member ON import_ledger(first_id);

  INSERT INTO import_ledger (import_id, first_id, last_id, change_type, added_to_groups)
    SELECT import_id, member_id, member_id, change_type, added_to_groups FROM import_members;
  DROP TABLE import_members;

  CREATE VIEW import_members (import_id, member_id, change_type, added_to_groups) AS
    WITH RECURSIVE expanded (import_id, member_id, last_id, change_type, added_to_groups) AS (
      SELECT import_id, first_id, last_id, change_type, added_to_groups FROM import_ledger
      UNION ALL
      SELECT import_id, member_id + 1, last_id, change_type, added_to_groups FROM expanded WHERE member_id < last_id
    )
    SELECT import_id, member_id, change_type, added_to_groups FROM expanded;

  CREATE TRIGGER import_members_insert INSTEAD OF INSERT ON import_members
  BEGIN
    INSERT INTO import_ledger (import_id, first_id, last_id, change_type, added_to_groups)
    VALUES (NEW.import_id, NEW.member_id, NEW.member_id, NEW.change_type, COALESCE(NEW.added_to_groups, 0));
  END;

  -- Erasure: the purged member is cut out of every range that holds it. The tail after
  -- it becomes a range of its own, the range is cut short before it, and a range that
  -- started at it goes (its tail, if any, was kept by the first statement).
  CREATE TRIGGER import_ledger_purge AFTER DELETE ON members
  BEGIN
    INSERT INTO import_ledger (import_id, first_id, last_id, change_type, added_to_groups)
      SELECT import_id, OLD.member_id + 1, last_id, change_type, added_to_groups FROM import_ledger
       WHERE first_id BETWEEN OLD.member_id - 4095 AND OLD.member_id AND last_id > OLD.member_id;
    UPDATE import_ledger SET last_id = OLD.member_id - 1
     WHERE first_id BETWEEN OLD.member_id - 4095 AND OLD.member_id - 1 AND last_id >= OLD.member_id;
    DELETE FROM import_ledger WHERE first_id = OLD.member_id;
  END;
`;
