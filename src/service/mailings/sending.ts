/**
 * Simulated sending: a due mailing moves p → i → s → c, in steps the job runner
 * takes one transaction at a time (so a pause or cancel lands between batches and a
 * killed process resumes where it stopped).
 *
 * - p → i: the audience is resolved once into mailing_queue (groups, subscribed
 *   members of subscriptions, saved searches and segments, and members named
 *   individually, minus suppressed searches, segments and members; de-duplicated;
 *   live members with status a or f only, so opted-out and error members are
 *   skipped). A split test gives its test share (a pseudo-random but repeatable
 *   selection) the variants in turn and leaves the rest waiting for the winner.
 *   Heads-up copies go out.
 * - i: batches of the queue become messages: each member's address and field values
 *   frozen (the text is rendered from them when read). Members archived or opted out
 *   since the start are dropped.
 * - i → w: a split test whose test share is built waits for its winner; when the
 *   test time is up, the variant with the most opens (then clicks, then the lowest
 *   id) wins, and the rest are built with its content.
 * - i → s → c: delivery is simulated: a message is delivered as it is built; s counts
 *   the messages into recipient_count and completes the mailing.
 */
import type { Db } from '../../store/db.js';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import type { Clock } from '../clock.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { localActor, RETIRED_ACCOUNTS } from '../accounts/accounts.js';
import { FieldCatalog } from '../audience/fields.js';
import { searchMembersSql } from '../audience/searches.js';
import { missingRequiredTags } from './personalization.js';
import { countBuilt, openResponse, testShareSplit } from './reports.js';
import { emitEvent } from '../webhooks/webhooks.js';
import { queueAllowedSends, queueHeadsUps } from '../mail/outbox.js';
import { mailSettings } from '../mail/settings.js';
import {
  audienceOf,
  declareWinner,
  mailingRow,
  setStatus,
  variantResults,
  variantsOf,
  type AudienceRef,
  type MailingRow,
} from './mailings.js';

/** Recipients built into messages per transaction. */
const BUILD_BATCH = 10_000;

/**
 * Advances due mailings for up to budgetMs (at least one step), one step per transaction. Answers
 * whether work is left. Called by `amsg serve` in the background and by the local
 * transport after each request (see jobs.ts).
 */
export function advanceMailings(db: Db, clock: Clock, budgetMs: number): boolean {
  const deadline = Date.now() + budgetMs;
  let first = true;
  for (;;) {
    const now = stamp(clock.now());
    const due = stmt(
      db,
      `SELECT mailing_id, account_id FROM mailings
          WHERE split_test_id IS NULL AND (
                (mailing_status = 'p' AND (send_at IS NULL OR send_at <= ?))
             OR mailing_status IN ('i','s')
             OR (mailing_status = 'w' AND winner_mailing_id IS NULL
                 AND unixepoch(test_sent_at) + test_duration_seconds <= unixepoch(?)))
            AND account_id NOT IN (${RETIRED_ACCOUNTS})
          ORDER BY mailing_id LIMIT 1`,
    ).get(now, now) as { mailing_id: number; account_id: number } | undefined;
    if (!due) return false;
    // At least one step per call, so a small budget still makes progress.
    if (first) first = false;
    else if (Date.now() >= deadline) return true;
    const ctx: Ctx = { db, clock, actor: localActor(db, due.account_id), accountId: due.account_id };
    try {
      step(ctx, due.mailing_id);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      // A send that cannot go on would be retried for ever and hold up every other one.
      fail(ctx, due.mailing_id, (err as Error).message);
    }
  }
}

/** Sends a mailing to the end now, whatever else is due (for benchmarks and tests). */
export function sendNow(ctx: Ctx, mailingId: number): MailingRow {
  for (let guard = 0; guard < 1_000_000; guard++) {
    const m = mailingRow(ctx, mailingId);
    if (!['p', 'i', 's'].includes(m.mailing_status)) return m;
    step(ctx, mailingId);
  }
  throw new Error(`mailing ${mailingId} did not finish`);
}

function step(ctx: Ctx, mailingId: number) {
  inTransaction(ctx.db, () => {
    const m = mailingRow(ctx, mailingId);
    switch (m.mailing_status) {
      case 'p':
        return m.send_started === null ? start(ctx, m) : setStatus(ctx, m, 'i');
      case 'i':
        return build(ctx, m);
      case 's':
        return finish(ctx, m);
      case 'w':
        return autoWinner(ctx, m);
    }
  });
}

function fail(ctx: Ctx, mailingId: number, message: string) {
  inTransaction(ctx.db, () => {
    stmt(
      ctx.db,
      `UPDATE mailings SET mailing_status = 'f', failure_ts = ?, failure_message = ? WHERE mailing_id = ? OR split_test_id = ?`,
    ).run(stamp(ctx.clock.now()), message, mailingId, mailingId);
    stmt(ctx.db, 'DELETE FROM mailing_queue WHERE mailing_id = ?').run(mailingId);
  });
}

// ---------------------------------------------------------------- audience

/** SQL selecting the member ids of a mailing's audience (with repeats), with its parameters. */
export function audienceSql(ctx: Ctx, mailingId: number): { sql: string; params: unknown[] } {
  return audienceSqlOf(ctx, audienceOf(ctx, mailingId));
}

/**
 * SQL selecting the live members of these references (with repeats) that meet
 * `memberCondition` (on `m`): a mailing's take statuses a and f; an SMS campaign's take
 * their SMS consent instead (src/service/sms/sending.ts).
 */
export function audienceSqlOf(
  ctx: Ctx,
  refs: readonly AudienceRef[],
  memberCondition = "m.member_status_id IN ('a','f')",
): { sql: string; params: unknown[] } {
  const include: string[] = [];
  const suppress: string[] = [];
  const params: { include: unknown[]; suppress: unknown[] } = { include: [], suppress: [] };
  const byKind = new Map<string, number[]>();
  for (const a of refs) {
    const key = `${a.role}:${a.kind}`;
    // Pushed, not copied: a copy per reference cost 73 s for 100,000 members named individually.
    const listed = byKind.get(key);
    if (listed) listed.push(a.ref_id);
    else byKind.set(key, [a.ref_id]);
    if (a.kind === 'search' || a.kind === 'segment') {
      const q = searchMembersSql(ctx, a.ref_id);
      (a.role === 'include' ? include : suppress).push(q.sql);
      params[a.role].push(...q.params);
    }
  }
  const ids = (key: string) => JSON.stringify(byKind.get(key) ?? []);
  include.push(
    'SELECT member_id FROM group_members WHERE member_group_id IN (SELECT value FROM json_each(?))',
    "SELECT member_id FROM subscription_members WHERE status = 'subscribed' AND subscription_id IN (SELECT value FROM json_each(?))",
    'SELECT value AS member_id FROM json_each(?)',
  );
  params.include.push(ids('include:group'), ids('include:subscription'), ids('include:member'));
  suppress.push('SELECT value FROM json_each(?)');
  params.suppress.push(ids('suppress:member'));
  // Driven from the sources (CROSS JOIN keeps that order: the planner would otherwise
  // walk the members and probe the sources, 3× slower at 100,000). A member in two
  // sources comes twice; the queue's primary key keeps one.
  return {
    sql: `SELECT m.member_id FROM (${include.join(' UNION ALL ')}) source
           CROSS JOIN members m ON m.member_id = source.member_id
           WHERE m.account_id = ? AND m.deleted_at IS NULL AND ${memberCondition}
             AND m.member_id NOT IN (${suppress.join(' UNION ')})`,
    params: [...params.include, ctx.accountId, ...params.suppress],
  };
}

function start(ctx: Ctx, m: MailingRow) {
  const now = stamp(ctx.clock.now());
  const variants = variantsOf(ctx, m.mailing_id);
  for (const t of [m, ...variants]) {
    const missing = [...missingRequiredTags(t.html_body), ...missingRequiredTags(t.plaintext)];
    if (missing.length) throw new Error(`mailing ${t.mailing_id} lacks the required tag ${missing[0]}`);
  }
  const audience = audienceSql(ctx, m.mailing_id);
  const isSplit = m.test_percent !== null && variants.length > 0;
  const queued = ctx.db
    .prepare(
      `INSERT OR IGNORE INTO mailing_queue (mailing_id, member_id, content_mailing_id) SELECT ?, member_id, ? FROM (${audience.sql})`,
    )
    .run(m.mailing_id, isSplit ? null : m.mailing_id, ...audience.params).changes;
  let testShare = 0;
  if (isSplit) {
    testShare = Math.min(queued, Math.max(variants.length, Math.ceil((queued * m.test_percent!) / 100)));
    // A repeatable shuffle (Knuth's multiplicative hash), so the test share is not
    // simply the oldest members.
    ctx.db
      .prepare(
        `WITH ranked AS (
           SELECT member_id, ROW_NUMBER() OVER (ORDER BY (member_id * 2654435761) % 4294967296, member_id) AS rn
             FROM mailing_queue WHERE mailing_id = ?)
         UPDATE mailing_queue SET content_mailing_id = json_extract(?, '$[' || ((ranked.rn - 1) % CAST(? AS INTEGER)) || ']')
           FROM ranked
          WHERE mailing_queue.mailing_id = ? AND mailing_queue.member_id = ranked.member_id AND ranked.rn <= ?`,
      )
      .run(m.mailing_id, JSON.stringify(variants.map((v) => v.mailing_id)), variants.length, m.mailing_id, testShare);
  }
  openResponse(
    ctx.db,
    m,
    now,
    queued,
    testShareSplit(
      variants.map((v) => v.mailing_id),
      testShare,
    ),
  );
  // Over SMTP, a heads-up's sent_ts is when the server accepted it (mail/deliver.ts); simulated, the start.
  if (!queueHeadsUps(ctx, m)) stmt(ctx.db, 'UPDATE mailing_headsup SET sent_ts = ? WHERE mailing_id = ?').run(now, m.mailing_id);
  const fieldNames = Object.fromEntries([...FieldCatalog.of(ctx).byId.values()].map((f) => [f.field_id, f.shortcut_name]));
  stmt(ctx.db, 'UPDATE mailings SET recipient_count = ?, merge_fields = ? WHERE mailing_id = ?').run(
    queued,
    JSON.stringify(fieldNames),
    m.mailing_id,
  );
  stmt(ctx.db, "UPDATE mailings SET mailing_status = 'i', send_started = ? WHERE mailing_id = ? OR split_test_id = ?").run(
    now,
    m.mailing_id,
    m.mailing_id,
  );
  emitEvent(ctx, 'mailing_start', () => mailingEvent(ctx, m.mailing_id));
}

/** A mailing as its webhook events (mailing_start, mailing_finish) tell it. */
function mailingEvent(ctx: Ctx, mailingId: number) {
  const m = mailingRow(ctx, mailingId);
  return { mailing_id: m.mailing_id, name: m.name, subject: m.subject, mailing_type: m.mailing_type, recipient_count: m.recipient_count };
}

// ---------------------------------------------------------------- messages

/**
 * Builds the next batch of queued recipients into messages, in member id order: one
 * INSERT … SELECT freezing each member's address and field values (see the
 * mailing_messages table), then the batch leaves the queue. Members archived, opted
 * out or in error since the start are dropped.
 */
function build(ctx: Ctx, m: MailingRow) {
  const boundary = stmt(
    ctx.db,
    `SELECT member_id FROM mailing_queue WHERE mailing_id = ? AND content_mailing_id IS NOT NULL
      ORDER BY member_id LIMIT 1 OFFSET CAST(? AS INTEGER)`,
  )
    .pluck()
    .get(m.mailing_id, BUILD_BATCH - 1) as number | undefined;
  const upTo = boundary ?? Number.MAX_SAFE_INTEGER;
  // The batch's first member, for the allowed sends' range (read only when there are allow patterns).
  const after = () =>
    (stmt(ctx.db, 'SELECT member_id FROM mailing_queue WHERE mailing_id = ? AND content_mailing_id IS NOT NULL ORDER BY member_id LIMIT 1')
      .pluck()
      .get(m.mailing_id) as number) - 1;
  const from = mailSettings(ctx.db)?.allow.length ? after() : undefined;
  const now = stamp(ctx.clock.now());
  const built = stmt(
    ctx.db,
    `INSERT INTO mailing_messages (mailing_id, member_id, content_mailing_id, delivery_type, email, merge_values, built_at, sent, delivery_ts)
     SELECT q.mailing_id, q.member_id, q.content_mailing_id,
            CASE WHEN c.plaintext_only = 1 OR mb.plaintext_preferred = 1 THEN 't' ELSE 'h' END,
            mb.email, mb.field_values, ?, ?, ?
       FROM mailing_queue q
       JOIN members mb ON mb.member_id = q.member_id
       JOIN mailings c ON c.mailing_id = q.content_mailing_id
      WHERE q.mailing_id = ? AND q.content_mailing_id IS NOT NULL AND q.member_id <= ?
        AND mb.deleted_at IS NULL AND mb.member_status_id IN ('a','f')`,
  ).run(now, now, now, m.mailing_id, upTo).changes;
  countBuilt(ctx.db, m, upTo, built);
  // Real mail to the recipients an allow pattern names (--smtp-allow); the rest stay simulated.
  if (from !== undefined && built > 0) queueAllowedSends(ctx, m.mailing_id, from, upTo);
  const taken = stmt(ctx.db, 'DELETE FROM mailing_queue WHERE mailing_id = ? AND content_mailing_id IS NOT NULL AND member_id <= ?').run(
    m.mailing_id,
    upTo,
  ).changes;
  if (taken > 0) return;
  const waiting = stmt(ctx.db, 'SELECT 1 FROM mailing_queue WHERE mailing_id = ? LIMIT 1').get(m.mailing_id);
  if (waiting) {
    stmt(ctx.db, 'UPDATE mailings SET test_sent_at = COALESCE(test_sent_at, ?) WHERE mailing_id = ?').run(now, m.mailing_id);
    return setStatus(ctx, m, 'w');
  }
  setStatus(ctx, m, 's');
}

/** Completes the mailing (and its variants), each counting the messages built with its content. */
function finish(ctx: Ctx, m: MailingRow) {
  stmt(
    ctx.db,
    `UPDATE mailings SET mailing_status = 'c', send_finished = @now,
            recipient_count = (SELECT COUNT(*) FROM mailing_messages mm
                                WHERE mm.mailing_id = @id AND (mailings.mailing_id = @id OR mm.content_mailing_id = mailings.mailing_id))
      WHERE mailing_id = @id OR split_test_id = @id`,
  ).run({ now: stamp(ctx.clock.now()), id: m.mailing_id });
  emitEvent(ctx, 'mailing_finish', () => mailingEvent(ctx, m.mailing_id));
}

function autoWinner(ctx: Ctx, m: MailingRow) {
  const results = variantResults(ctx, m.mailing_id);
  const [winner] = Object.entries(results).sort(
    ([ia, a], [ib, b]) => b.opened - a.opened || b.clicked - a.clicked || Number(ia) - Number(ib),
  );
  declareWinner(ctx, m.mailing_id, Number(winner[0]));
}
