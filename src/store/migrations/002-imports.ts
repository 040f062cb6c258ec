/** Member imports: the job record, rows staged by POST /members, and what each import did to which member. */
export const sql = `
  CREATE TABLE member_imports (
    import_id                INTEGER PRIMARY KEY,
    account_id               INTEGER NOT NULL REFERENCES accounts(account_id),
    status                   TEXT NOT NULL DEFAULT 'q' CHECK (status IN ('q','p','o','e')),
    -- job: POST /members, rows staged and applied by the job runner;
    -- stream: rows sent in batches by a client (amsg members import), finished by it
    mode                     TEXT NOT NULL DEFAULT 'job' CHECK (mode IN ('job','stream')),
    source_name              TEXT,
    source_filename          TEXT,
    add_only                 INTEGER NOT NULL DEFAULT 0 CHECK (add_only IN (0,1)),
    group_ids                TEXT NOT NULL DEFAULT '[]',
    automate_field_changes   INTEGER NOT NULL DEFAULT 0 CHECK (automate_field_changes IN (0,1)),
    automate_contact_imports INTEGER NOT NULL DEFAULT 0 CHECK (automate_contact_imports IN (0,1)),
    -- criteria.sms of the request: statuses given to imported members with a phone number
    sms_criteria             TEXT,
    -- rows received so far (a resumed import continues after them)
    num_members              INTEGER NOT NULL DEFAULT 0,
    num_members_added        INTEGER NOT NULL DEFAULT 0,
    num_members_updated      INTEGER NOT NULL DEFAULT 0,
    num_duplicates           INTEGER NOT NULL DEFAULT 0,
    num_skipped              INTEGER NOT NULL DEFAULT 0,
    num_errors               INTEGER NOT NULL DEFAULT 0,
    -- JSON: {group_id: members newly added to it}, and the field names that received values
    num_added_by_group       TEXT NOT NULL DEFAULT '{}',
    fields_updated           TEXT NOT NULL DEFAULT '[]',
    error_message            TEXT,
    created_at               TEXT NOT NULL,
    import_started           TEXT,
    import_finished          TEXT
  );
  CREATE INDEX member_imports_account ON member_imports(account_id, import_id);

  -- Rows of a POST /members import waiting for the job runner; deleted as they are applied.
  CREATE TABLE import_rows (
    import_id INTEGER NOT NULL REFERENCES member_imports(import_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    member    TEXT NOT NULL,
    PRIMARY KEY (import_id, seq)
  ) WITHOUT ROWID;

  -- What an import did to each member: a added, u updated, s skipped (add_only hit).
  -- Purging a member removes its rows here, so an erased member is in no import's list.
  CREATE TABLE import_members (
    import_id       INTEGER NOT NULL REFERENCES member_imports(import_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    change_type     TEXT NOT NULL CHECK (change_type IN ('a','u','s')),
    added_to_groups INTEGER NOT NULL DEFAULT 0 CHECK (added_to_groups IN (0,1)),
    PRIMARY KEY (import_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX import_members_member ON import_members(member_id);
`;
