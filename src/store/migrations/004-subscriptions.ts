/**
 * Subscriptions: topics members subscribe to, and who is subscribed or opted out of each.
 * (The name subscription_members is read by the export code; keep it.)
 */
export const sql = `
  CREATE TABLE subscriptions (
    subscription_id    INTEGER PRIMARY KEY,
    account_id         INTEGER NOT NULL REFERENCES accounts(account_id),
    subscription_name  TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    -- JSON {"show_on_default_preference_form": boolean}, or NULL
    settings           TEXT,
    subscription_order INTEGER,
    created_at         TEXT NOT NULL,
    modified_at        TEXT NOT NULL,
    deleted_at         TEXT,
    purged_at          TEXT
  );
  -- A deleted subscription frees its name.
  CREATE UNIQUE INDEX subscriptions_live_name ON subscriptions(account_id, subscription_name COLLATE NOCASE)
    WHERE deleted_at IS NULL;

  -- One row per member a subscription knows: subscribed, or opted out of this subscription
  -- only (an account-wide opt-out is the member's own status). Counts are computed from
  -- these rows on every read. Purging a member removes its rows (cascade).
  CREATE TABLE subscription_members (
    subscription_id INTEGER NOT NULL REFERENCES subscriptions(subscription_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    status          TEXT NOT NULL DEFAULT 'subscribed' CHECK (status IN ('subscribed','opted_out')),
    -- NULL for a member who opted out without ever having been subscribed
    subscribed_at   TEXT,
    opted_out_at    TEXT,
    CHECK ((status = 'opted_out') = (opted_out_at IS NOT NULL)),
    PRIMARY KEY (subscription_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX subscription_members_member ON subscription_members(member_id);
`;
