/**
 * Webhooks (src/service/webhooks/webhooks.ts) and their transactional outbox:
 *
 * - webhooks: an account's registrations, one event each, as the real service has them,
 *   plus the signing secret (kept as it is: every post is signed with it);
 * - webhook_events: the outbox. A change writes its event row in its own transaction,
 *   so an event exists exactly when its change committed;
 * - webhook_deliveries: one per event and webhook registered for it when the event was
 *   written (same transaction). status p (due or retrying), o (delivered), e (failed
 *   after the last attempt); next_attempt_at is when it is due. A process that takes one
 *   leases it: next_attempt_at moves to the end of the lease on the service clock and
 *   lease_pid says who holds it. A process killed mid-post leaves it leased, and once the
 *   lease is over (or its process is gone) it is due again, with the same ids;
 * - webhook_attempts: each post's outcome, for the delivery log.
 *
 * Webhook, event and delivery ids are never reused (AUTOINCREMENT): receivers
 * de-duplicate on event and delivery ids, and a deleted webhook takes its deliveries along.
 */
export const sql = `
  CREATE TABLE webhooks (
    webhook_id  INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(account_id),
    url         TEXT NOT NULL,
    method      TEXT NOT NULL CHECK (method IN ('POST','GET')),
    event       TEXT NOT NULL,
    public_key  TEXT,
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL
  );
  -- An account's webhooks in id order (an account has few: the event is filtered on the walk).
  CREATE INDEX webhooks_account ON webhooks(account_id);

  CREATE TABLE webhook_events (
    event_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(account_id),
    event       TEXT NOT NULL,
    data        TEXT NOT NULL,
    occurred_at TEXT NOT NULL
  );

  CREATE TABLE webhook_deliveries (
    delivery_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       INTEGER NOT NULL,
    webhook_id       INTEGER NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
    event_id         INTEGER NOT NULL REFERENCES webhook_events(event_id),
    status           TEXT NOT NULL DEFAULT 'p' CHECK (status IN ('p','o','e')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT,
    lease_pid        INTEGER,
    last_status_code INTEGER,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    delivered_at     TEXT,
    replay_of        INTEGER
  );
  -- The log, newest first: all of an account's, one status, or one webhook's.
  CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id, delivery_id);
  CREATE INDEX webhook_deliveries_account_status ON webhook_deliveries(account_id, status, delivery_id);
  CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, status, delivery_id);
  CREATE INDEX webhook_deliveries_webhook_all ON webhook_deliveries(webhook_id, delivery_id);
  -- What a deliverer looks for: is anything due, and each webhook's oldest pending one.
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'p';
  CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(lease_pid) WHERE lease_pid IS NOT NULL;

  CREATE TABLE webhook_attempts (
    attempt_id   INTEGER PRIMARY KEY,
    delivery_id  INTEGER NOT NULL REFERENCES webhook_deliveries(delivery_id) ON DELETE CASCADE,
    attempted_at TEXT NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    duration_ms  INTEGER NOT NULL
  );
  CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt_id);
`;
