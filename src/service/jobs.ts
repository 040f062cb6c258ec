/**
 * The one job runner: whichever process holds the database advances due work in
 * short slices: member imports (POST /members) first, then inbound events (their
 * workflows), then mailing and SMS sends, then the refresh of saved searches whose
 * stored result may be stale, then the purge of sub-accounts retired 30 days ago, then
 * the prune of webhook deliveries and events past retention.
 * `amsg serve` calls it
 * in the background, the local transport after each request.
 */
import type { Db } from '../store/db.js';
import type { Clock } from './clock.js';
import { advanceImports } from './imports/index.js';
import { advanceMailings } from './mailings/sending.js';
import { advanceSms } from './sms/sending.js';
import { advanceSearches, ownWrites } from './audience/searches.js';
import { advancePurges } from './accounts/subaccounts.js';
import { advanceInbound } from './events/workflows.js';
import { advanceWebhookPrune } from './webhooks/retention.js';
import { advanceEmailSearch } from './audience/member-search.js';

/** Runs due jobs for up to budgetMs; answers whether work is left. */
export function advanceJobs(db: Db, clock: Clock, budgetMs: number): boolean {
  const started = Date.now();
  const left = () => Math.max(0, budgetMs - (Date.now() - started));
  const importsLeft = advanceImports(db, clock, budgetMs);
  // Before sends: a workflow's mailing copy is then sent in the same round.
  const inboundLeft = advanceInbound(db, clock, left());
  // A send writes messages and histories, nothing a search looks at: it makes no search stale.
  const mailingsLeft = ownWrites(db, () => advanceMailings(db, clock, left()));
  // Likewise an SMS send: deliveries, totals and credit usage only.
  const smsLeft = ownWrites(db, () => advanceSms(db, clock, left()));
  const searchesLeft = advanceSearches(db, clock, left());
  // A purge removes only a retired account's rows, which no search of a live account holds.
  const purgesLeft = ownWrites(db, () => advancePurges(db, clock, left()));
  // The outbox is written by firing alone, which no search looks at.
  const pruneLeft = ownWrites(db, () => advanceWebhookPrune(db, clock, left()));
  return importsLeft || inboundLeft || mailingsLeft || smsLeft || searchesLeft || purgesLeft || pruneLeft;
}

/**
 * Background work only a long-running server does (`amsg serve`, `amsg console`), when
 * no job is due: the e-mail search index of new members (members/search). Not after each
 * local command: indexing a large import's members (~45 µs each) would slow every
 * command after it until done; a search scans the members not indexed yet itself.
 */
export function advanceServerJobs(db: Db, budgetMs: number): boolean {
  // Read by nothing a saved search looks at.
  return ownWrites(db, () => advanceEmailSearch(db, budgetMs));
}
