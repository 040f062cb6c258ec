/**
 * What the console's webhook page shows of a delivery (issue 33):
 * - each attempt keeps the start of the receiver's answer (RESPONSE_BODY_KEPT bytes);
 * - the failing deliveries (given up, or retrying after a failed attempt) have indexes of
 *   their own, so "show failures" is a walk of the failures, newest first, not of the log.
 */
export const sql = `
  ALTER TABLE webhook_attempts ADD COLUMN response_body TEXT;
  CREATE INDEX webhook_deliveries_account_failed ON webhook_deliveries(account_id, delivery_id)
    WHERE status = 'e' OR (status = 'p' AND attempts > 0);
  CREATE INDEX webhook_deliveries_webhook_failed ON webhook_deliveries(webhook_id, delivery_id)
    WHERE status = 'e' OR (status = 'p' AND attempts > 0);
`;
