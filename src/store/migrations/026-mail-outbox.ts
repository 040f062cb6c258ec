/**
 * Real mail out over SMTP (src/service/mail/): the outbox of messages that leave amsg.
 *
 * - mail_outbox: one row per message and recipient, written in the transaction of the test
 *   send, mailing start (heads-up copies), send batch (allowed sends) or signup (opt-in
 *   confirmation) that caused it, and delivered after the commit. `message` holds what was
 *   composed then (JSON: from, reply_to, subject, text, html, list_unsubscribe, webview_url);
 *   a mailing's own send leaves it null and is composed at delivery from its frozen
 *   mailing_messages row, so a send batch writes one plain INSERT … SELECT. `message_id` is
 *   fixed at insert: a message sent again after a kill carries the same Message-ID.
 *   status q (queued, or retrying), s (the server accepted it), f (refused for good, or out of
 *   attempts). A deliverer claims a row before sending (attempts + 1, lease_pid, next_attempt_at
 *   at the end of the lease) and commits that claim first: a process killed mid-send leaves the
 *   row claimed, and the next deliverer sends it again (at least once).
 * - signup_confirmations: the token of each opt-in confirmation's links (confirm, opt out).
 */
export const sql = `
  CREATE TABLE mail_outbox (
    mail_id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       INTEGER NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('test','headsup','confirm','send')),
    mailing_id       INTEGER,
    member_id        INTEGER,
    to_email         TEXT NOT NULL,
    subject          TEXT,
    message          TEXT,
    message_id       TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'q' CHECK (status IN ('q','s','f')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT,
    lease_pid        INTEGER,
    last_reply       TEXT,
    bounced          INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    sent_at          TEXT
  );
  -- The log, newest first.
  CREATE INDEX mail_outbox_account ON mail_outbox(account_id, mail_id);
  -- What a deliverer looks for: what is due, and what a process holds.
  CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, mail_id) WHERE status = 'q';
  CREATE INDEX mail_outbox_leased ON mail_outbox(lease_pid) WHERE lease_pid IS NOT NULL;

  CREATE TABLE signup_confirmations (
    token        TEXT PRIMARY KEY,
    account_id   INTEGER NOT NULL,
    member_id    INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    confirmed_at TEXT,
    opted_out_at TEXT
  ) WITHOUT ROWID;
`;
