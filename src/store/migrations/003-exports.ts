/**
 * Member exports: the job record, the member ids an audience export holds, and the
 * zip of an individual member's export.
 *
 * Erasure is by foreign key: purging a member deletes its rows in export_members
 * (so it is in no audience export's download) and its individual exports.
 */
export const sql = `
  CREATE TABLE exports (
    export_id     INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL REFERENCES accounts(account_id),
    -- a audience, m individual member
    export_type   TEXT NOT NULL CHECK (export_type IN ('a','m')),
    status        TEXT NOT NULL DEFAULT 'q' CHECK (status IN ('q','p','o','e')),
    export_name   TEXT NOT NULL,
    -- the requesting user's e-mail address, as the spec shows it
    user_id       TEXT NOT NULL,
    -- the criteria as answered on the wire (JSON)
    criteria      TEXT NOT NULL,
    -- field ids of the field columns, fixed when the export is created (JSON array)
    field_ids     TEXT NOT NULL DEFAULT '[]',
    error_message TEXT,
    created_at    TEXT NOT NULL,
    completed_at  TEXT,
    -- type m: the member and the zip of its data (small, so kept in the row)
    member_id     INTEGER REFERENCES members(member_id) ON DELETE CASCADE,
    content       BLOB,
    CHECK ((export_type = 'm') = (member_id IS NOT NULL))
  );
  CREATE INDEX exports_account ON exports(account_id, export_type, created_at);
  CREATE INDEX exports_member ON exports(member_id) WHERE member_id IS NOT NULL;

  -- The members of an audience export, fixed when it is created; the download reads
  -- their current values.
  CREATE TABLE export_members (
    export_id INTEGER NOT NULL REFERENCES exports(export_id) ON DELETE CASCADE,
    member_id INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    PRIMARY KEY (export_id, member_id)
  ) WITHOUT ROWID;
  -- Purging a member finds its rows here without scanning every export.
  CREATE INDEX export_members_member ON export_members(member_id);
`;
