/** Accounts, users, keys, members, groups, fields. */
export const sql = `
  CREATE TABLE accounts (
    account_id        INTEGER PRIMARY KEY,
    account_name      TEXT NOT NULL,
    parent_account_id INTEGER REFERENCES accounts(account_id),
    account_status    TEXT NOT NULL DEFAULT 'active'
                      CHECK (account_status IN ('active','trial','pending_retirement','retired')),
    created_at        TEXT NOT NULL
  );

  CREATE TABLE users (
    user_id        INTEGER PRIMARY KEY,
    account_id     INTEGER NOT NULL REFERENCES accounts(account_id),
    email          TEXT NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('owner','manager','user')),
    billing_access INTEGER NOT NULL DEFAULT 0 CHECK (billing_access IN (0,1)),
    manage_users   INTEGER NOT NULL DEFAULT 0 CHECK (manage_users IN (0,1)),
    created_at     TEXT NOT NULL,
    UNIQUE (account_id, email)
  );

  -- Only a salted SHA-256 of the private key is kept: keys are 32 random bytes, so a
  -- slow password hash would cost every request without adding safety.
  CREATE TABLE api_keys (
    key_id           INTEGER PRIMARY KEY,
    user_id          INTEGER NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    public_key       TEXT NOT NULL UNIQUE,
    private_key_hash TEXT NOT NULL,
    salt             TEXT NOT NULL,
    label            TEXT,
    created_at       TEXT NOT NULL,
    revoked_at       TEXT
  );

  CREATE TABLE fields (
    field_id            INTEGER PRIMARY KEY,
    account_id          INTEGER NOT NULL REFERENCES accounts(account_id),
    shortcut_name       TEXT NOT NULL,
    display_name        TEXT NOT NULL,
    short_display_name  TEXT,
    field_type          TEXT NOT NULL
                        CHECK (field_type IN ('text','text[]','numeric','boolean','date','timestamp')),
    widget_type         TEXT NOT NULL,
    required            INTEGER NOT NULL DEFAULT 0 CHECK (required IN (0,1)),
    column_order        INTEGER NOT NULL,
    options             TEXT,
    deleted_at          TEXT
  );
  -- A deleted field frees its name.
  CREATE UNIQUE INDEX fields_live_name ON fields(account_id, shortcut_name COLLATE NOCASE)
    WHERE deleted_at IS NULL;

  -- Field values live in one JSON object per member, keyed by field_id: a member and
  -- its values are one row (no partial member can exist), renaming a field rewrites
  -- nothing, and a bulk import writes one row per member.
  CREATE TABLE members (
    member_id           INTEGER PRIMARY KEY,
    account_id          INTEGER NOT NULL REFERENCES accounts(account_id),
    email               TEXT NOT NULL,
    member_status_id    TEXT NOT NULL DEFAULT 'a' CHECK (member_status_id IN ('a','e','o','f')),
    plaintext_preferred INTEGER NOT NULL DEFAULT 0 CHECK (plaintext_preferred IN (0,1)),
    bounce_count        INTEGER NOT NULL DEFAULT 0,
    member_since        TEXT NOT NULL,
    last_modified_at    TEXT NOT NULL,
    deleted_at          TEXT,
    field_values        TEXT NOT NULL DEFAULT '{}',
    sms_phone_number    TEXT,
    sms_region_code     TEXT,
    sms_transactional_status            TEXT CHECK (sms_transactional_status IN ('a','o')),
    sms_transactional_status_updated_at TEXT,
    sms_promotional_status              TEXT CHECK (sms_promotional_status IN ('a','o')),
    sms_promotional_status_updated_at   TEXT
  );
  -- Emails are stored lower-cased, so this is the case-insensitive identity of a member.
  CREATE UNIQUE INDEX members_email ON members(account_id, email);
  CREATE INDEX members_status ON members(account_id, member_status_id);
  CREATE INDEX members_deleted ON members(account_id, deleted_at) WHERE deleted_at IS NOT NULL;

  CREATE TABLE member_optouts (
    optout_id  INTEGER PRIMARY KEY,
    member_id  INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    mailing_id INTEGER,
    optout_ts  TEXT NOT NULL
  );
  CREATE INDEX member_optouts_member ON member_optouts(member_id);

  CREATE TABLE member_groups (
    member_group_id INTEGER PRIMARY KEY,
    account_id      INTEGER NOT NULL REFERENCES accounts(account_id),
    group_name      TEXT NOT NULL,
    group_type      TEXT NOT NULL DEFAULT 'g',
    created_at      TEXT NOT NULL,
    deleted_at      TEXT,
    purged_at       TEXT
  );
  CREATE UNIQUE INDEX member_groups_live_name ON member_groups(account_id, group_name COLLATE NOCASE)
    WHERE deleted_at IS NULL;

  CREATE TABLE group_members (
    member_group_id INTEGER NOT NULL REFERENCES member_groups(member_group_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    added_at        TEXT NOT NULL,
    PRIMARY KEY (member_group_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX group_members_member ON group_members(member_id);
  `;
