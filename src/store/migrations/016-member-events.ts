/**
 * Member events and touchpoints (each with its type catalogue), inbound events taken
 * by the ingestion endpoint, and the workflows they run.
 *
 * Events and touchpoints cascade from their member (a purge erases them) and from
 * their type (deleting a type deletes its records, the spec's rule). Lists walk
 * (member_id, id) and (workflow_id, run_id) indexes, so a page costs the same
 * whatever the audience size.
 */
export const sql = `
  CREATE TABLE member_event_types (
    event_type_id INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL REFERENCES accounts(account_id),
    event_type    TEXT NOT NULL,
    display_name  TEXT NOT NULL,
    created_at    TEXT NOT NULL
  );
  CREATE UNIQUE INDEX member_event_types_name ON member_event_types(account_id, event_type COLLATE NOCASE);
  CREATE INDEX member_event_types_account ON member_event_types(account_id, event_type_id);

  CREATE TABLE member_events (
    event_id             INTEGER PRIMARY KEY,
    account_id           INTEGER NOT NULL REFERENCES accounts(account_id),
    member_id            INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    event_type_id        INTEGER NOT NULL REFERENCES member_event_types(event_type_id) ON DELETE CASCADE,
    event_monetary_value REAL NOT NULL DEFAULT 0,
    event_timestamp      TEXT NOT NULL,
    inserted_at          TEXT NOT NULL,
    mailing_id           INTEGER,
    attributes           TEXT
  );
  CREATE INDEX member_events_member ON member_events(member_id, event_id);
  CREATE INDEX member_events_type ON member_events(event_type_id);

  CREATE TABLE touchpoint_types (
    touchpoint_type_id INTEGER PRIMARY KEY,
    account_id         INTEGER NOT NULL REFERENCES accounts(account_id),
    type_name          TEXT NOT NULL,
    display_name       TEXT NOT NULL,
    created_at         TEXT NOT NULL
  );
  CREATE UNIQUE INDEX touchpoint_types_name ON touchpoint_types(account_id, type_name COLLATE NOCASE);
  CREATE INDEX touchpoint_types_account ON touchpoint_types(account_id, touchpoint_type_id);

  CREATE TABLE touchpoints (
    touchpoint_id             INTEGER PRIMARY KEY,
    account_id                INTEGER NOT NULL REFERENCES accounts(account_id),
    member_id                 INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    touchpoint_type_id        INTEGER NOT NULL REFERENCES touchpoint_types(touchpoint_type_id) ON DELETE CASCADE,
    touchpoint_monetary_value REAL NOT NULL DEFAULT 0,
    touchpoint_timestamp      TEXT NOT NULL,
    inserted_at               TEXT NOT NULL,
    mailing_id                INTEGER,
    attributes                TEXT
  );
  CREATE INDEX touchpoints_member ON touchpoints(member_id, touchpoint_id);
  CREATE INDEX touchpoints_type ON touchpoints(touchpoint_type_id);

  CREATE TABLE workflows (
    workflow_id INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(account_id),
    name        TEXT NOT NULL,
    match       TEXT NOT NULL,
    actions     TEXT NOT NULL,
    run_count   INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    modified_at TEXT NOT NULL
  );
  CREATE INDEX workflows_account ON workflows(account_id, workflow_id);

  -- An accepted post, stored before it is processed (status q), then processed once
  -- (status o) with its outcome: ran, invalid email, no member, member not active,
  -- no workflow matched. The e-mail is kept apart so a purge can erase the member's events.
  CREATE TABLE inbound_events (
    inbound_id   INTEGER PRIMARY KEY,
    account_id   INTEGER NOT NULL REFERENCES accounts(account_id),
    email        TEXT NOT NULL,
    payload      TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'q' CHECK (status IN ('q','o')),
    processed_at TEXT,
    outcome      TEXT,
    member_id    INTEGER,
    workflow_ids TEXT
  );
  CREATE INDEX inbound_events_queued ON inbound_events(inbound_id) WHERE status = 'q';
  CREATE INDEX inbound_events_outcome ON inbound_events(account_id, outcome, inbound_id);
  CREATE INDEX inbound_events_account ON inbound_events(account_id, inbound_id);
  CREATE INDEX inbound_events_email ON inbound_events(account_id, email);

  -- How many inbound events an account has by outcome ('queued' while not processed):
  -- kept by the writes that move them, so count=true is a key lookup.
  CREATE TABLE inbound_counts (
    account_id INTEGER NOT NULL,
    outcome    TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (account_id, outcome)
  ) WITHOUT ROWID;

  CREATE TABLE workflow_runs (
    run_id      INTEGER PRIMARY KEY,
    workflow_id INTEGER NOT NULL REFERENCES workflows(workflow_id) ON DELETE CASCADE,
    account_id  INTEGER NOT NULL,
    inbound_id  INTEGER NOT NULL REFERENCES inbound_events(inbound_id) ON DELETE CASCADE,
    member_id   INTEGER,
    ran_at      TEXT NOT NULL,
    actions     TEXT NOT NULL
  );
  CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow_id, run_id);
  CREATE INDEX workflow_runs_inbound ON workflow_runs(inbound_id);

  -- The kept counts move with the rows, whatever deletes them (a purge, a workflow's delete).
  CREATE TRIGGER inbound_counts_insert AFTER INSERT ON inbound_events BEGIN
    INSERT INTO inbound_counts (account_id, outcome, n) VALUES (new.account_id, ifnull(new.outcome, 'queued'), 1)
      ON CONFLICT (account_id, outcome) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER inbound_counts_update AFTER UPDATE OF outcome ON inbound_events BEGIN
    UPDATE inbound_counts SET n = n - 1 WHERE account_id = old.account_id AND outcome = ifnull(old.outcome, 'queued');
    INSERT INTO inbound_counts (account_id, outcome, n) VALUES (new.account_id, ifnull(new.outcome, 'queued'), 1)
      ON CONFLICT (account_id, outcome) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER inbound_counts_delete AFTER DELETE ON inbound_events BEGIN
    UPDATE inbound_counts SET n = n - 1 WHERE account_id = old.account_id AND outcome = ifnull(old.outcome, 'queued');
  END;
  CREATE TRIGGER workflow_runs_count_insert AFTER INSERT ON workflow_runs BEGIN
    UPDATE workflows SET run_count = run_count + 1 WHERE workflow_id = new.workflow_id;
  END;
  CREATE TRIGGER workflow_runs_count_delete AFTER DELETE ON workflow_runs BEGIN
    UPDATE workflows SET run_count = run_count - 1 WHERE workflow_id = old.workflow_id;
  END;

  -- Erasure: a purged member's inbound events (which carry the address and whatever
  -- else the sender put in them) go with the member, and their runs with them.
  CREATE TRIGGER inbound_events_erase AFTER DELETE ON members BEGIN
    DELETE FROM inbound_events WHERE account_id = old.account_id AND email = old.email;
  END;
`;
