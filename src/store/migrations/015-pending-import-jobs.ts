/**
 * The staged import jobs still to run, in id order: the job runner asks for the next one
 * every few milliseconds in `amsg serve`, and without this it read every import ever made.
 */
export const sql = `
  CREATE INDEX member_imports_pending_jobs ON member_imports(import_id) WHERE mode = 'job' AND status IN ('q','p');
`;
