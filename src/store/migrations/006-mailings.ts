/**
 * Mailings: the mailing record, where its audience comes from, the personalized
 * message of each recipient (which is also the member's mailing history), links,
 * heads-up copies, and the deprecated triggers.
 */
export const sql = `
  CREATE TABLE triggers (
    trigger_id        INTEGER PRIMARY KEY,
    account_id        INTEGER NOT NULL REFERENCES accounts(account_id),
    name              TEXT NOT NULL,
    event_type        TEXT NOT NULL CHECK (event_type IN ('r','s')),
    field_id          INTEGER REFERENCES fields(field_id),
    parent_mailing_id INTEGER NOT NULL,
    start_ts          TEXT NOT NULL,
    -- seconds between the event and the send
    push_offset       INTEGER NOT NULL DEFAULT 0 CHECK (push_offset >= 0),
    -- JSON array of signup form ids, or NULL
    signups           TEXT,
    created_at        TEXT NOT NULL,
    deleted_at        TEXT,
    is_disabled       INTEGER NOT NULL DEFAULT 0 CHECK (is_disabled IN (0,1))
  );

  CREATE TABLE mailings (
    mailing_id        INTEGER PRIMARY KEY,
    account_id        INTEGER NOT NULL REFERENCES accounts(account_id),
    mailing_type      TEXT NOT NULL DEFAULT 'm' CHECK (mailing_type IN ('m','t','r','s','c')),
    mailing_status    TEXT NOT NULL DEFAULT 'p' CHECK (mailing_status IN ('p','a','i','s','x','c','w','u','f')),
    name              TEXT NOT NULL,
    subject           TEXT NOT NULL,
    sender            TEXT NOT NULL,
    reply_to          TEXT,
    html_body         TEXT,
    plaintext         TEXT,
    plaintext_only    INTEGER NOT NULL DEFAULT 0 CHECK (plaintext_only IN (0,1)),
    disabled          INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0,1)),
    recipient_count   INTEGER NOT NULL DEFAULT 0,
    created_ts        TEXT NOT NULL,
    send_at           TEXT,
    send_started      TEXT,
    send_finished     TEXT,
    cancel_ts         TEXT,
    failure_ts        TEXT,
    archived_ts       TEXT,
    purged_at         TEXT,
    deleted_at        TEXT,
    cancel_by_user_id INTEGER,
    -- the mailing this one was resent, forwarded or triggered from
    parent_mailing_id INTEGER REFERENCES mailings(mailing_id),
    signup_form_id    INTEGER,
    failure_message   TEXT,
    trigger_id        INTEGER REFERENCES triggers(trigger_id),
    -- Split tests: the test mailing (type s or c) holds the share of the audience that
    -- gets the variants and how long the test runs; each variant is a mailing whose
    -- split_test_id names the test. The winner's content goes to the rest.
    split_test_id          INTEGER REFERENCES mailings(mailing_id),
    test_percent           INTEGER CHECK (test_percent BETWEEN 1 AND 100),
    test_duration_seconds  INTEGER CHECK (test_duration_seconds >= 0),
    test_sent_at           TEXT,
    winner_mailing_id      INTEGER REFERENCES mailings(mailing_id),
    winner_declared_at     TEXT,
    -- JSON {variant mailing_id: {sent, opened, clicked}} frozen when the winner is declared
    test_results           TEXT,
    -- JSON {field_id: shortcut_name} of the account's fields when the send started: the
    -- names its messages' frozen values are rendered with
    merge_fields           TEXT
  );
  CREATE INDEX mailings_account ON mailings(account_id, mailing_status);
  CREATE INDEX mailings_split_test ON mailings(split_test_id) WHERE split_test_id IS NOT NULL;
  CREATE INDEX mailings_trigger ON mailings(trigger_id) WHERE trigger_id IS NOT NULL;

  -- Where a mailing's audience comes from (include) and who is kept out (suppress).
  -- ref_id is a group, subscription, search or member id (segments are saved searches).
  CREATE TABLE mailing_audience (
    mailing_id INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('include','suppress')),
    kind       TEXT NOT NULL CHECK (kind IN ('group','subscription','search','segment','member')),
    ref_id     INTEGER NOT NULL,
    position   INTEGER NOT NULL,
    PRIMARY KEY (mailing_id, role, kind, ref_id)
  ) WITHOUT ROWID;

  CREATE TABLE mailing_headsup (
    mailing_id INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    sent_ts    TEXT,
    PRIMARY KEY (mailing_id, email)
  ) WITHOUT ROWID;

  CREATE TABLE mailing_links (
    link_id     INTEGER PRIMARY KEY,
    mailing_id  INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    plaintext   INTEGER NOT NULL CHECK (plaintext IN (0,1)),
    link_name   TEXT NOT NULL,
    link_target TEXT NOT NULL,
    link_order  INTEGER NOT NULL
  );
  CREATE INDEX mailing_links_mailing ON mailing_links(mailing_id);

  -- Recipients resolved when the send starts and not yet built into messages. A NULL
  -- content_mailing_id waits for a split test's winner.
  CREATE TABLE mailing_queue (
    mailing_id         INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    member_id          INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    content_mailing_id INTEGER,
    PRIMARY KEY (mailing_id, member_id)
  ) WITHOUT ROWID;

  -- One personalized message per recipient, which is also the member's mailing history.
  -- A message is stored as what personalizes it: the address it went to and the
  -- member's field values (by field id, as in members.field_values), frozen when it is
  -- built; its subject, html and plaintext are rendered from the content mailing's
  -- templates when read, with the field names the mailing froze at its start
  -- (mailings.merge_fields). Content cannot change once a send has started, so that is
  -- the same text, and building a message is one INSERT … SELECT with no work per
  -- recipient in JavaScript. Delivery is simulated: a message is delivered when built.
  CREATE TABLE mailing_messages (
    mailing_id         INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    member_id          INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    content_mailing_id INTEGER NOT NULL,
    delivery_type      TEXT NOT NULL CHECK (delivery_type IN ('h','t')),
    email              TEXT NOT NULL,
    merge_values       TEXT NOT NULL,
    built_at           TEXT NOT NULL,
    sent               TEXT,
    delivery_ts        TEXT,
    opened             TEXT,
    clicked            TEXT,
    bounced            TEXT,
    forwarded          TEXT,
    shared             TEXT,
    PRIMARY KEY (mailing_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX mailing_messages_member ON mailing_messages(member_id);
`;
