/**
 * How many times an account's list of live members has changed other than at its end:
 * a member archived, restored or deleted. A new member is appended at the end (ids
 * only grow), which moves no one else's position; anything else counted here does.
 * The member list keeps the ids at every 100th position of a list (src/service/members.ts,
 * anchorBefore) while this count stays the same, so a page deep in a large list starts
 * from the nearest one instead of walking the index from its first entry (OFFSET).
 * The members of a retired account are not counted as its purge deletes them: the purge
 * removes this table's row of the account too, and must leave none behind.
 */
export const sql = `
  CREATE TABLE member_order (
    account_id INTEGER PRIMARY KEY,
    changes    INTEGER NOT NULL
  );
  CREATE TRIGGER member_order_archive AFTER UPDATE OF deleted_at ON members
    WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
  BEGIN
    INSERT INTO member_order (account_id, changes) VALUES (NEW.account_id, 1)
      ON CONFLICT (account_id) DO UPDATE SET changes = changes + 1;
  END;
  CREATE TRIGGER member_order_delete AFTER DELETE ON members
    WHEN NOT EXISTS (SELECT 1 FROM accounts WHERE account_id = OLD.account_id AND retired_at IS NOT NULL)
  BEGIN
    INSERT INTO member_order (account_id, changes) VALUES (OLD.account_id, 1)
      ON CONFLICT (account_id) DO UPDATE SET changes = changes + 1;
  END;
`;
