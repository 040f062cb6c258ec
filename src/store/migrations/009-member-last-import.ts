/**
 * members.last_import_id: the highest id of the imports that wrote the member (it
 * only grows). A re-import asks of every member whether this import already wrote
 * it (a second row for one address is a duplicate, not another update); the ledger
 * (migration 007) answers exactly but costs a lookup per member, about a fifth of a
 * re-import. This column answers at once for nearly every member: below the import's
 * id, the import has not written it; equal, it has; above (a later import wrote it
 * since), the ledger decides. An import that only skips a member (add_only) does not
 * write it, and such imports ask the ledger.
 */
export const sql = `
  ALTER TABLE members ADD COLUMN last_import_id INTEGER;
`;
