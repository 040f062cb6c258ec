/**
 * The rows an import refused, with why (GET /members/imports/{import_id}/errors, the
 * console's imports page): the first ROW_ERRORS_KEPT of each import (src/service/imports/
 * write.ts), past which they are only counted (num_errors). `row` is the row's number in
 * the import, from 1. Rows a client refused before sending them (a streamed import's
 * `rejected`) are counted by the import but never reach the server, so they are not here.
 */
export const sql = `
  CREATE TABLE import_row_errors (
    import_id INTEGER NOT NULL REFERENCES member_imports(import_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    row       INTEGER NOT NULL,
    email     TEXT,
    error     TEXT NOT NULL,
    PRIMARY KEY (import_id, seq)
  ) WITHOUT ROWID;
`;
