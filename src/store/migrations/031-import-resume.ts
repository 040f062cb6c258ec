/**
 * What a streamed import needs to be continued safely:
 * - client_options: the options the client opened it with, as the client words them
 *   (`amsg members import` records its --map, --ignore and --delimiter), so a resume
 *   can take the same ones and refuse different ones by name;
 * - import_batch_answers: the answers of its last few batches, by offset, so a batch
 *   sent again (its answer was lost, or a retry after a failure that left unknown
 *   whether it arrived) is answered as it was the first time instead of being
 *   written twice or refused. Kept while the import takes rows; dropped when it is finished.
 */
export const sql = `
  ALTER TABLE member_imports ADD COLUMN client_options TEXT;
  CREATE TABLE import_batch_answers (
    import_id    INTEGER NOT NULL REFERENCES member_imports(import_id) ON DELETE CASCADE,
    batch_offset INTEGER NOT NULL,
    batch_end    INTEGER NOT NULL,
    answer       TEXT NOT NULL,
    PRIMARY KEY (import_id, batch_offset)
  ) WITHOUT ROWID;
`;
