/**
 * Member imports, a folder of parts (records, create, check, write, append, jobs); this
 * is what the rest of the service uses. Two ways in, one way of applying rows:
 * - a job (POST /members, the spec's bulk call): the rows are staged in one
 *   transaction, answered with {import_id} at once, and applied q → p → o by whichever
 *   process holds the database (advanceImports);
 * - a stream (amsg members import, an extension): the client opens an import, sends
 *   the rows in batches that are each applied in one transaction, and finishes it.
 *   One file is one import record whatever the body limit, and a killed import
 *   leaves a consistent prefix that can be resumed.
 */
export {
  type ChangeType,
  type ImportMemberItem,
  type ImportOptions,
  type ImportRecord,
  type ImportStatus,
  LEDGER_SPAN,
  countImportRowErrors,
  deleteImports,
  getImport,
  importMembers,
  importRowErrors,
  ledgerHolds,
  listImports,
} from './records.js';
export { openImport, stageImport } from './create.js';
export {
  type BatchResult,
  type CheckedRows,
  type CsvRows,
  type DuplicateRow,
  type RowError,
  type RowsInput,
  checkRows,
  rowCount,
  sliceRows,
} from './check.js';
export { type BatchWrite, writeRows } from './write.js';
export {
  BATCH_WAIT_MS,
  BULK_CHECKPOINT_PAGES,
  appendRows,
  appendRowsHere,
  beginAppend,
  finishAppend,
  finishImport,
  validateRows,
} from './append.js';
export { advanceImports } from './jobs.js';
