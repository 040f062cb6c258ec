/**
 * HQ accounts and their sub-accounts (the spec's Sub-accounts part):
 *
 * - accounts gains `is_hq` (an HQ parent may have sub-accounts; a sub-account is never
 *   one itself), the settings a sub-account is created with, and its retirement:
 *   `retired_at`, `purge_after` (retired_at + 30 days) and `purged_at`. A purged
 *   account's row stays as a tombstone, so its id is never given to a new account
 *   (INTEGER PRIMARY KEY without AUTOINCREMENT would reuse the highest id).
 * - `purge_task`/`purge_cursor`: where the background purge is, so each step is
 *   bounded and a killed process resumes where it stopped (src/service/accounts/subaccounts.ts).
 * - user_account_access: the sub-accounts a user of the HQ may act on (owners of the
 *   HQ reach all of them without a row). Its account_id column makes the generic purge
 *   remove the rows naming a purged sub-account.
 */
export const sql = `
  ALTER TABLE accounts ADD COLUMN is_hq INTEGER NOT NULL DEFAULT 0 CHECK (is_hq IN (0,1));
  ALTER TABLE accounts ADD COLUMN account_rsvp_email TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_name TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_address_1 TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_address_2 TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_city TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_province TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_state TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_zip_code TEXT;
  ALTER TABLE accounts ADD COLUMN account_rsvp_country TEXT;
  ALTER TABLE accounts ADD COLUMN account_timezone TEXT;
  ALTER TABLE accounts ADD COLUMN country_abbrev TEXT CHECK (country_abbrev IN ('true','false'));
  ALTER TABLE accounts ADD COLUMN send_response_summary INTEGER CHECK (send_response_summary IN (0,1));
  ALTER TABLE accounts ADD COLUMN show_code_your_own INTEGER CHECK (show_code_your_own IN (0,1));
  ALTER TABLE accounts ADD COLUMN show_blank_template INTEGER CHECK (show_blank_template IN (0,1));
  ALTER TABLE accounts ADD COLUMN retired_at TEXT;
  ALTER TABLE accounts ADD COLUMN purge_after TEXT;
  ALTER TABLE accounts ADD COLUMN purged_at TEXT;
  ALTER TABLE accounts ADD COLUMN purge_task TEXT;
  ALTER TABLE accounts ADD COLUMN purge_cursor INTEGER;

  -- An HQ's sub-accounts in id order (the list walks it), and the purges still to run.
  CREATE INDEX accounts_parent ON accounts(parent_account_id, account_id) WHERE parent_account_id IS NOT NULL;
  CREATE INDEX accounts_purges_due ON accounts(purge_after) WHERE retired_at IS NOT NULL AND purged_at IS NULL;

  CREATE TABLE user_account_access (
    user_id    INTEGER NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES accounts(account_id),
    PRIMARY KEY (user_id, account_id)
  ) WITHOUT ROWID;
  CREATE INDEX user_account_access_account ON user_account_access(account_id);
`;
