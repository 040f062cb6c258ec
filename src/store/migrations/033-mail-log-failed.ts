/**
 * The mail log filtered to failures (GET /mail/log?failed=true, the console's mail page):
 * an account's failed messages, newest first, read along this partial index, so a page
 * costs the same however much mail went out fine.
 */
export const sql = `
  CREATE INDEX mail_outbox_failed ON mail_outbox(account_id, mail_id) WHERE status = 'f';
`;
