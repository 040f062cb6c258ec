/**
 * Counts kept by the writes that move them, so a read of a count costs the same at a
 * thousand and at a million members (migration 011 makes the tables):
 *
 * - member_counts: an account's members by status and archived or not (`count=true`);
 * - group_counts: a group's members by status and archived or not (`active_count`,
 *   `error_count`, `optout_count` are the live ones);
 * - subscription_counts: a subscription's members by the row's status, the member's
 *   status and archived or not (`member_count`, `optout_count`).
 *
 * On an ordinary connection, TEMP triggers keep them exact: they run inside the
 * statement that writes a member, a membership or a subscription row, so the count
 * commits (or rolls back, or dies with a killed process) with the write that moved
 * it, and no code path can forget them. A trigger costs about half a microsecond a
 * row, which the import writer thread cannot afford (a million-member import is the
 * hot path of bench/RESULTS.md): its connection opens without them, and the batch
 * adds what it wrote in a few statements (`countInMembers`, imports.ts). Anything
 * else that writes the file directly (the sqlite3 shell) leaves the counts wrong;
 * `recountAll` puts them right.
 *
 * The archived keys are not answered as counts; they tell a list whether it can walk
 * its rows alone (no member there is archived) or must read each row's member.
 */
import type { Db } from './db.js';
import { stmt } from './statements.js';

const withTriggers = new WeakSet<Db>();

/**
 * Every count is keyed by the member's status and whether it is archived (0 or 1),
 * so a change of either moves the member between two keys, in its account and in
 * every group and subscription it is in; a purged member leaves its groups and
 * subscriptions first, so their triggers (below) still see its status.
 */
const TRIGGERS = `
  CREATE TEMP TRIGGER counts_member_insert AFTER INSERT ON main.members BEGIN
    INSERT INTO member_counts (account_id, member_status_id, archived, n)
      VALUES (NEW.account_id, NEW.member_status_id, NEW.deleted_at IS NOT NULL, 1)
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;

  CREATE TEMP TRIGGER counts_member_update AFTER UPDATE OF member_status_id, deleted_at ON main.members
    WHEN OLD.member_status_id IS NOT NEW.member_status_id OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
  BEGIN
    UPDATE member_counts SET n = n - 1
     WHERE account_id = OLD.account_id AND member_status_id = OLD.member_status_id AND archived = (OLD.deleted_at IS NOT NULL);
    INSERT INTO member_counts (account_id, member_status_id, archived, n)
      VALUES (NEW.account_id, NEW.member_status_id, NEW.deleted_at IS NOT NULL, 1)
      ON CONFLICT DO UPDATE SET n = n + 1;
    UPDATE group_counts SET n = n - 1
     WHERE member_status_id = OLD.member_status_id AND archived = (OLD.deleted_at IS NOT NULL)
       AND member_group_id IN (SELECT member_group_id FROM group_members WHERE member_id = OLD.member_id);
    INSERT INTO group_counts (member_group_id, member_status_id, archived, n)
      SELECT member_group_id, NEW.member_status_id, NEW.deleted_at IS NOT NULL, 1 FROM group_members
       WHERE member_id = NEW.member_id
      ON CONFLICT DO UPDATE SET n = n + 1;
    UPDATE subscription_counts SET n = n - 1
     WHERE member_status_id = OLD.member_status_id AND archived = (OLD.deleted_at IS NOT NULL)
       AND (subscription_id, status) IN (SELECT subscription_id, status FROM subscription_members WHERE member_id = OLD.member_id);
    INSERT INTO subscription_counts (subscription_id, status, member_status_id, archived, n)
      SELECT subscription_id, status, NEW.member_status_id, NEW.deleted_at IS NOT NULL, 1 FROM subscription_members
       WHERE member_id = NEW.member_id
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;

  CREATE TEMP TRIGGER counts_member_delete BEFORE DELETE ON main.members BEGIN
    UPDATE member_counts SET n = n - 1
     WHERE account_id = OLD.account_id AND member_status_id = OLD.member_status_id AND archived = (OLD.deleted_at IS NOT NULL);
    DELETE FROM group_members WHERE member_id = OLD.member_id;
    DELETE FROM subscription_members WHERE member_id = OLD.member_id;
  END;

  CREATE TEMP TRIGGER counts_membership_insert AFTER INSERT ON main.group_members BEGIN
    INSERT INTO group_counts (member_group_id, member_status_id, archived, n)
      SELECT NEW.member_group_id, member_status_id, deleted_at IS NOT NULL, 1 FROM members WHERE member_id = NEW.member_id
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;

  CREATE TEMP TRIGGER counts_membership_delete AFTER DELETE ON main.group_members BEGIN
    UPDATE group_counts SET n = n - 1
     WHERE member_group_id = OLD.member_group_id
       AND (member_status_id, archived) = (SELECT member_status_id, deleted_at IS NOT NULL FROM members WHERE member_id = OLD.member_id);
  END;

  CREATE TEMP TRIGGER counts_subscriber_insert AFTER INSERT ON main.subscription_members BEGIN
    INSERT INTO subscription_counts (subscription_id, status, member_status_id, archived, n)
      SELECT NEW.subscription_id, NEW.status, member_status_id, deleted_at IS NOT NULL, 1 FROM members WHERE member_id = NEW.member_id
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;

  CREATE TEMP TRIGGER counts_subscriber_update AFTER UPDATE OF status, subscription_id ON main.subscription_members
    WHEN OLD.status IS NOT NEW.status OR OLD.subscription_id IS NOT NEW.subscription_id
  BEGIN
    UPDATE subscription_counts SET n = n - 1
     WHERE subscription_id = OLD.subscription_id AND status = OLD.status
       AND (member_status_id, archived) = (SELECT member_status_id, deleted_at IS NOT NULL FROM members WHERE member_id = OLD.member_id);
    INSERT INTO subscription_counts (subscription_id, status, member_status_id, archived, n)
      SELECT NEW.subscription_id, NEW.status, member_status_id, deleted_at IS NOT NULL, 1 FROM members WHERE member_id = NEW.member_id
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;

  CREATE TEMP TRIGGER counts_subscriber_delete AFTER DELETE ON main.subscription_members BEGIN
    UPDATE subscription_counts SET n = n - 1
     WHERE subscription_id = OLD.subscription_id AND status = OLD.status
       AND (member_status_id, archived) = (SELECT member_status_id, deleted_at IS NOT NULL FROM members WHERE member_id = OLD.member_id);
  END;
`;

/** Installs the counting triggers on this connection (openDb does, unless told not to). */
export function installCountTriggers(db: Db): void {
  db.exec(TRIGGERS);
  withTriggers.add(db);
}

/** Whether this connection's writes move the counts by themselves (its triggers are installed). */
export const countsFollowWrites = (db: Db): boolean => withTriggers.has(db);

/** The counts as the rows say they are: what the tables must hold (the migration fills them from it; tests compare). */
export const TRUE_COUNTS = {
  member_counts: `SELECT account_id, member_status_id, deleted_at IS NOT NULL AS archived, COUNT(*) AS n
                    FROM members GROUP BY 1, 2, 3`,
  group_counts: `SELECT gm.member_group_id, m.member_status_id, m.deleted_at IS NOT NULL AS archived, COUNT(*) AS n
                   FROM group_members gm JOIN members m ON m.member_id = gm.member_id GROUP BY 1, 2, 3`,
  subscription_counts: `SELECT sm.subscription_id, sm.status, m.member_status_id, m.deleted_at IS NOT NULL AS archived, COUNT(*) AS n
                          FROM subscription_members sm JOIN members m ON m.member_id = sm.member_id GROUP BY 1, 2, 3, 4`,
} as const;

/** Puts every count right from the rows (a full scan: for repairs and the migration, never for a read). */
export function recountAll(db: Db): void {
  db.transaction(() => {
    for (const [table, truth] of Object.entries(TRUE_COUNTS)) {
      db.exec(`DELETE FROM ${table}`);
      db.exec(`INSERT INTO ${table} ${truth}`);
    }
  }).immediate();
}

/**
 * Moves archived members back among the live in every count, on a connection without
 * the triggers: `ids` (a JSON array) are members an import brought back, with the
 * memberships and subscription rows they had while archived.
 */
export function countRestored(db: Db, ids: string): void {
  for (const [table, key, rows] of [
    [
      'member_counts',
      'account_id',
      `SELECT account_id, member_status_id, COUNT(*) AS k FROM members
                                      WHERE member_id IN (SELECT value FROM json_each(@ids)) GROUP BY 1, 2`,
    ],
    [
      'group_counts',
      'member_group_id',
      `SELECT gm.member_group_id, m.member_status_id, COUNT(*) AS k
                                           FROM members m JOIN group_members gm ON gm.member_id = m.member_id
                                          WHERE m.member_id IN (SELECT value FROM json_each(@ids)) GROUP BY 1, 2`,
    ],
  ] as const) {
    stmt(
      db,
      `UPDATE ${table} SET n = n - c.k FROM (${rows}) AS c
        WHERE ${table}.${key} = c.${key} AND ${table}.member_status_id = c.member_status_id AND ${table}.archived = 1`,
    ).run({ ids });
    stmt(
      db,
      `INSERT INTO ${table} (${key}, member_status_id, archived, n) SELECT ${key}, member_status_id, 0, k FROM (${rows}) WHERE true
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    ).run({ ids });
  }
  const subscriptionRows = `SELECT sm.subscription_id, sm.status, m.member_status_id, COUNT(*) AS k
                              FROM members m JOIN subscription_members sm ON sm.member_id = m.member_id
                             WHERE m.member_id IN (SELECT value FROM json_each(@ids)) GROUP BY 1, 2, 3`;
  stmt(
    db,
    `UPDATE subscription_counts SET n = n - c.k FROM (${subscriptionRows}) AS c
      WHERE subscription_counts.subscription_id = c.subscription_id AND subscription_counts.status = c.status
        AND subscription_counts.member_status_id = c.member_status_id AND subscription_counts.archived = 1`,
  ).run({ ids });
  stmt(
    db,
    `INSERT INTO subscription_counts (subscription_id, status, member_status_id, archived, n)
       SELECT subscription_id, status, member_status_id, 0, k FROM (${subscriptionRows}) WHERE true
     ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  ).run({ ids });
}

/** Counts in the new memberships of group `group` of these members (`ids`, a JSON array), on a connection without the triggers. */
export function countJoined(db: Db, ids: string, group: number): void {
  stmt(
    db,
    `INSERT INTO group_counts (member_group_id, member_status_id, archived, n)
       SELECT @group, member_status_id, deleted_at IS NOT NULL, COUNT(*) FROM members
        WHERE member_id IN (SELECT value FROM json_each(@ids)) GROUP BY 2, 3
     ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  ).run({ ids, group });
}

/** Adds n live active members to a count: a batch's new members (status a) and their memberships, without a look at them. */
export function addActive(db: Db, into: { accountId: number } | { groupId: number }, n: number): void {
  if (!n) return;
  if ('accountId' in into)
    stmt(
      db,
      `INSERT INTO member_counts (account_id, member_status_id, archived, n) VALUES (?, 'a', 0, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    ).run(into.accountId, n);
  else
    stmt(
      db,
      `INSERT INTO group_counts (member_group_id, member_status_id, archived, n) VALUES (?, 'a', 0, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    ).run(into.groupId, n);
}
