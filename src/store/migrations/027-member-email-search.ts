/**
 * Member search by part of an e-mail address (the console's search box, GET
 * /members/search): an FTS5 trigram index over every member's e-mail, so a search reads
 * the matches, never the audience.
 *
 * The index is filled by the job runner, not by a trigger on each insert: a trigram
 * row costs ~45 µs to write, which would have made a 1M import several times slower
 * (bench/RESULTS.md). `indexed_through` is the highest member id indexed; ids only grow,
 * so the members above it are the ones still to index (the search scans a bounded number
 * of them itself). `ever_indexed` is the highest id ever put in the index: below it a row
 * may already be there (a purged member's id reused) and is replaced.
 *
 * Contentless (the e-mail is kept only in members): a hit is joined back to its member and
 * the e-mail checked again. Two triggers keep the index true where an insert alone would not:
 * - an e-mail changed on an indexed member replaces its row (members.update; rare);
 * - a deleted (purged) member's row leaves the index, with secure-delete so no trace of the
 *   address stays (erasure); and a delete that leaves no member above the deleted id moves
 *   `indexed_through` down to the highest id left: SQLite gives the next member that id
 *   again, and it must be indexed.
 */
export const sql = `
  CREATE VIRTUAL TABLE member_email_search USING fts5(email, content='', contentless_delete=1, tokenize='trigram');
  CREATE TABLE member_email_search_state (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through  INTEGER NOT NULL,
    ever_indexed     INTEGER NOT NULL
  );
  -- A purged member's e-mail leaves the index itself, not only a tombstone (right to erasure).
  INSERT INTO member_email_search (member_email_search, rank) VALUES ('secure-delete', 1);
  INSERT INTO member_email_search_state (id, indexed_through, ever_indexed) VALUES (1, 0, 0);

  CREATE TRIGGER member_email_search_update AFTER UPDATE OF email ON members
    WHEN OLD.email <> NEW.email AND NEW.member_id <= (SELECT ever_indexed FROM member_email_search_state WHERE id = 1)
  BEGIN
    INSERT OR REPLACE INTO member_email_search (rowid, email) VALUES (NEW.member_id, NEW.email);
  END;

  CREATE TRIGGER member_email_search_delete AFTER DELETE ON members
    WHEN OLD.member_id <= (SELECT ever_indexed FROM member_email_search_state WHERE id = 1)
  BEGIN
    DELETE FROM member_email_search WHERE rowid = OLD.member_id;
    UPDATE member_email_search_state SET indexed_through = (SELECT IFNULL(max(member_id), 0) FROM members)
      WHERE id = 1 AND indexed_through >= OLD.member_id AND NOT EXISTS (SELECT 1 FROM members WHERE member_id > OLD.member_id);
  END;
`;
