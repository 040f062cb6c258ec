/**
 * The schema, as named migrations applied in this order. Each is applied once, in
 * its own transaction, and recorded by name in schema_migrations; names (not
 * positions) are what is recorded, so migrations added side by side in parallel
 * work do not collide. Never edit a migration that has shipped: add a new file.
 *
 * Timestamps are stored as UTC text 'YYYY-MM-DDThh:mm:ss.ffffff' so they sort as text
 * and each wire encoding (@D:, ISO with offset, RFC 1123) is a slice or a reformat.
 */
import type { Db } from '../db.js';
import * as spine from './001-spine.js';
import * as imports from './002-imports.js';
import * as exportsSchema from './003-exports.js';
import * as subscriptions from './004-subscriptions.js';
import * as searches from './005-searches.js';
import * as mailings from './006-mailings.js';
import * as importLedger from './007-import-ledger.js';
import * as statusIndexPartial from './008-status-index-partial.js';
import * as memberLastImport from './009-member-last-import.js';
import * as membershipAddedWithMember from './010-membership-added-with-member.js';
import * as counts from './011-counts.js';
import * as searchResults from './012-search-results.js';
import * as listIndexes from './013-list-indexes.js';
import * as liveGroups from './014-live-groups.js';
import * as pendingImportJobs from './015-pending-import-jobs.js';
import * as memberEvents from './016-member-events.js';
import * as sms from './017-sms.js';
import * as subaccounts from './018-subaccounts.js';
import * as webhooks from './019-webhooks.js';
import * as fieldRelationships from './020-field-relationships.js';
import * as responseCounters from './021-response-counters.js';
import * as smsKeptCounts from './022-sms-kept-counts.js';
import * as webhookRetention from './023-webhook-retention.js';
import * as memberOrder from './024-member-order.js';
import * as memberStatusCheck from './025-member-status-check.js';
import * as mailOutbox from './026-mail-outbox.js';
import * as memberEmailSearch from './027-member-email-search.js';
import * as responseTimes from './028-response-times.js';
import * as webhookLogDetail from './029-webhook-log-detail.js';
import * as importRowErrors from './030-import-row-errors.js';
import * as importResume from './031-import-resume.js';
import * as clickMemberLinkIndex from './032-click-member-link-index.js';
import * as mailLogFailed from './033-mail-log-failed.js';

/** A migration is SQL, or a function for what SQL alone cannot say (025). */
export type Migration = { name: string; sql: string } | { name: string; apply: (db: Db) => void };

export const MIGRATIONS: Migration[] = [
  { name: '001-spine', sql: spine.sql },
  { name: '002-imports', sql: imports.sql },
  { name: '003-exports', sql: exportsSchema.sql },
  { name: '004-subscriptions', sql: subscriptions.sql },
  { name: '005-searches', sql: searches.sql },
  { name: '006-mailings', sql: mailings.sql },
  { name: '007-import-ledger', sql: importLedger.sql },
  { name: '008-status-index-partial', sql: statusIndexPartial.sql },
  { name: '009-member-last-import', sql: memberLastImport.sql },
  { name: '010-membership-added-with-member', sql: membershipAddedWithMember.sql },
  { name: '011-counts', sql: counts.sql },
  { name: '012-search-results', sql: searchResults.sql },
  { name: '013-list-indexes', sql: listIndexes.sql },
  { name: '014-live-groups', sql: liveGroups.sql },
  { name: '015-pending-import-jobs', sql: pendingImportJobs.sql },
  { name: '016-member-events', sql: memberEvents.sql },
  { name: '017-sms', sql: sms.sql },
  { name: '018-subaccounts', sql: subaccounts.sql },
  { name: '019-webhooks', sql: webhooks.sql },
  { name: '020-field-relationships', sql: fieldRelationships.sql },
  { name: '021-response-counters', sql: responseCounters.sql },
  { name: '022-sms-kept-counts', sql: smsKeptCounts.sql },
  { name: '023-webhook-retention', sql: webhookRetention.sql },
  { name: '024-member-order', sql: memberOrder.sql },
  { name: '025-member-status-check', apply: memberStatusCheck.apply },
  { name: '026-mail-outbox', sql: mailOutbox.sql },
  { name: '027-member-email-search', sql: memberEmailSearch.sql },
  { name: '028-response-times', sql: responseTimes.sql },
  { name: '029-webhook-log-detail', sql: webhookLogDetail.sql },
  { name: '030-import-row-errors', sql: importRowErrors.sql },
  { name: '031-import-resume', sql: importResume.sql },
  { name: '032-click-member-link-index', sql: clickMemberLinkIndex.sql },
  { name: '033-mail-log-failed', sql: mailLogFailed.sql },
];
