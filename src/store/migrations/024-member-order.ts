/**
 * A version of each account's member lists that changes whenever they change other than
 * at their end: a member archived, restored or deleted. A new member is appended at the
 * end (ids only grow), which moves no one else's position; anything else changes the
 * version. The member list keeps the ids at every 100th position of a list
 * (src/service/audience/members.ts, anchorBefore) while the version stays the same, so a page deep
 * in a large list starts from the nearest one instead of walking the index from its
 * first entry (OFFSET).
 *
 * The version is random, not a count: `amsg db restore` can put back an older state or
 * another database's while `amsg serve` keeps its anchors, and a count could come back to
 * a value it had on a different list (archive one, restore, archive another). Every
 * account has one from its creation, for the same reason.
 * An upsert, not INSERT OR REPLACE: a statement's own conflict clause (an import's
 * INSERT OR IGNORE) overrides the one of an INSERT in a trigger it fires.
 * The members of a retired account are not counted as its purge deletes them: the purge
 * removes this table's row of the account too, and must leave none behind.
 */
export const sql = `
  CREATE TABLE member_order (
    account_id INTEGER PRIMARY KEY,
    version    INTEGER NOT NULL
  );
  INSERT INTO member_order (account_id, version) SELECT account_id, random() >> 11 FROM accounts WHERE retired_at IS NULL;
  CREATE TRIGGER member_order_account AFTER INSERT ON accounts BEGIN
    INSERT INTO member_order (account_id, version) VALUES (NEW.account_id, random() >> 11)
      ON CONFLICT (account_id) DO UPDATE SET version = excluded.version;
  END;
  CREATE TRIGGER member_order_archive AFTER UPDATE OF deleted_at ON members
    WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
  BEGIN
    INSERT INTO member_order (account_id, version) VALUES (NEW.account_id, random() >> 11)
      ON CONFLICT (account_id) DO UPDATE SET version = excluded.version;
  END;
  CREATE TRIGGER member_order_delete AFTER DELETE ON members
    WHEN NOT EXISTS (SELECT 1 FROM accounts WHERE account_id = OLD.account_id AND retired_at IS NOT NULL)
  BEGIN
    INSERT INTO member_order (account_id, version) VALUES (OLD.account_id, random() >> 11)
      ON CONFLICT (account_id) DO UPDATE SET version = excluded.version;
  END;
`;
