/**
 * Retention of the webhook outbox: a delivered (o) or failed (e) delivery is deleted
 * WEBHOOK_RETENTION_DAYS after it was made (on the service clock), its attempts with it,
 * and an event older than that once no delivery names it (its deliveries were pruned or
 * its webhook was deleted). A pending delivery is never deleted, nor its event.
 *
 * The job runner calls it in bounded steps, each its own short transaction; the state
 * is the data itself (the oldest prunable rows go first), so a step interrupted or
 * taken by another process leaves nothing to resume but the next step.
 */
import type { Db } from '../../store/db.js';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { stamp, type Clock } from '../clock.js';
import { WEBHOOK_RETENTION_DAYS } from './webhooks.js';

const DAY_MS = 86_400_000;
/** Rows of each kind one step deletes at most: a delivery costs its attempts and a few indexes. */
export const PRUNE_BATCH = 200;

/** The settled deliveries made before the cutoff, oldest first (the partial index holds only settled ones). */
export const PRUNABLE_DELIVERIES = `SELECT delivery_id, account_id FROM webhook_deliveries
  WHERE status <> 'p' AND created_at < ? ORDER BY created_at LIMIT ${PRUNE_BATCH}`;
/**
 * Events before the cutoff that no delivery names. Old events that still have one (a
 * pending delivery, or a recent replay) are stepped over: few, since retries end within a day.
 */
export const PRUNABLE_EVENTS = `SELECT event_id FROM webhook_events e
  WHERE occurred_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id)
  ORDER BY occurred_at LIMIT ${PRUNE_BATCH}`;

/** One step; answers whether more may be left. */
function pruneStep(db: Db, cutoff: string): boolean {
  const deliveries = stmt(db, PRUNABLE_DELIVERIES).all(cutoff) as { delivery_id: number; account_id: number }[];
  if (deliveries.length > 0) {
    const through = new Map<number, number>();
    for (const d of deliveries) through.set(d.account_id, Math.max(through.get(d.account_id) ?? 0, d.delivery_id));
    const mark = stmt(
      db,
      `INSERT INTO webhook_retention (account_id, pruned_through) VALUES (?, ?)
       ON CONFLICT (account_id) DO UPDATE SET pruned_through = max(pruned_through, excluded.pruned_through)`,
    );
    for (const [account, id] of through) mark.run(account, id);
    stmt(db, 'DELETE FROM webhook_deliveries WHERE delivery_id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(deliveries.map((d) => d.delivery_id)),
    );
  }
  const events = stmt(db, `DELETE FROM webhook_events WHERE event_id IN (${PRUNABLE_EVENTS})`).run(cutoff).changes;
  return deliveries.length === PRUNE_BATCH || events === PRUNE_BATCH;
}

/** The instant before which settled deliveries and orphaned events are pruned. */
export function retentionCutoff(clock: Clock): string {
  return stamp(new Date(clock.now().getTime() - WEBHOOK_RETENTION_DAYS * DAY_MS));
}

/** Prunes the outbox in steps for up to budgetMs; answers whether anything is still due. */
export function advanceWebhookPrune(db: Db, clock: Clock, budgetMs: number): boolean {
  const started = Date.now();
  const cutoff = retentionCutoff(clock);
  // A read first: with nothing past retention (nearly every call) no write lock is
  // taken, so a local import's writer thread is never held up between its batches.
  if (!stmt(db, `SELECT EXISTS (${PRUNABLE_DELIVERIES}) OR EXISTS (${PRUNABLE_EVENTS})`).pluck().get(cutoff, cutoff)) return false;
  for (;;) {
    let more: boolean;
    try {
      more = inTransaction(db, () => pruneStep(db, cutoff));
    } catch (err) {
      // Another process holds the write lock: the next run goes on.
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      throw err;
    }
    if (!more) return false;
    if (Date.now() - started >= budgetMs) return true;
  }
}
