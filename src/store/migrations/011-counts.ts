/**
 * Counts kept by the writes that move them (src/store/counters.ts keeps them), filled
 * here from the rows once; and the indexes that give the member lists their order:
 * members_live and members_archived hold (account_id, member_id) of the live and of
 * the archived members, so a page of either is a walk of its index in id order, and a
 * deep page skips index entries without reading members (the list of all members
 * merges the two walks). members_live's entry is appended at the right edge of its
 * b-tree for each new member (ids only grow), the cheapest entry an import can add.
 */
import { TRUE_COUNTS } from '../counters.js';

export const sql = `
  CREATE TABLE member_counts (
    account_id       INTEGER NOT NULL,
    member_status_id TEXT NOT NULL,
    archived         INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    PRIMARY KEY (account_id, member_status_id, archived)
  ) WITHOUT ROWID;
  CREATE TABLE group_counts (
    member_group_id  INTEGER NOT NULL,
    member_status_id TEXT NOT NULL,
    archived         INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    PRIMARY KEY (member_group_id, member_status_id, archived)
  ) WITHOUT ROWID;
  CREATE TABLE subscription_counts (
    subscription_id  INTEGER NOT NULL,
    status           TEXT NOT NULL,
    member_status_id TEXT NOT NULL,
    archived         INTEGER NOT NULL,
    n                INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, status, member_status_id, archived)
  ) WITHOUT ROWID;
  INSERT INTO member_counts ${TRUE_COUNTS.member_counts};
  INSERT INTO group_counts ${TRUE_COUNTS.group_counts};
  INSERT INTO subscription_counts ${TRUE_COUNTS.subscription_counts};

  CREATE INDEX members_live ON members(account_id) WHERE deleted_at IS NULL;
  CREATE INDEX members_archived ON members(account_id) WHERE deleted_at IS NOT NULL;
`;
