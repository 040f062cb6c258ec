/**
 * Retention of the webhook outbox (src/service/webhooks/retention.ts): delivered and
 * failed deliveries are deleted some days after they were made, and events once no
 * delivery names them.
 *
 * - webhook_deliveries_settled: the settled deliveries, oldest first, so the prune
 *   walks only what it deletes (pending ones are not in it);
 * - webhook_deliveries_event: whether an event still has a delivery, and the foreign-key
 *   check when an event is deleted (without it each deleted event scans every delivery);
 * - webhook_events_occurred: events oldest first, for those no delivery names any more
 *   (their webhook was deleted, or their deliveries were pruned);
 * - webhook_retention: per account, the highest delivery id pruned, so a look-up or
 *   replay of a pruned delivery says it is past retention rather than just missing.
 */
export const sql = `
  CREATE INDEX webhook_deliveries_settled ON webhook_deliveries(created_at) WHERE status <> 'p';
  CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
  CREATE INDEX webhook_events_occurred ON webhook_events(occurred_at);
  CREATE TABLE webhook_retention (
    account_id     INTEGER PRIMARY KEY REFERENCES accounts(account_id),
    pruned_through INTEGER NOT NULL
  );
`;
