/**
 * Field relationships (a parent field's option limits the child field's options), and
 * import records deleted by `DELETE /members/imports/delete` (the record goes from the
 * list; the members it wrote stay).
 */
export const sql = `
  CREATE TABLE field_relationships (
    relationship_id    INTEGER PRIMARY KEY,
    account_id         INTEGER NOT NULL REFERENCES accounts(account_id),
    relationship_name  TEXT NOT NULL,
    parent_field_id    INTEGER NOT NULL REFERENCES fields(field_id),
    child_field_id     INTEGER NOT NULL REFERENCES fields(field_id),
    -- JSON: {parent option: [child options]}
    options            TEXT NOT NULL,
    created_at         TEXT NOT NULL
  );
  CREATE UNIQUE INDEX field_relationships_name ON field_relationships(account_id, relationship_name COLLATE NOCASE);
  -- The list, in id order without a sort.
  CREATE INDEX field_relationships_account ON field_relationships(account_id, relationship_id);

  ALTER TABLE member_imports ADD COLUMN deleted_at TEXT;
`;
