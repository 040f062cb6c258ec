/**
 * Mailings: creating them (an extension: the spec does not show how), reading them,
 * the status rules of the spec's "Mailing status" table, resends, forwards and the
 * split-test winner. Sending itself is src/service/mailings/sending.ts.
 *
 * Status rules (the spec's table, and what it leaves open):
 * - DELETE cancel: only from p or a (else 403); → x.
 * - PUT status canceled | paused | ready: refused (400) from c and s, and from x
 *   ("a canceled mailing cannot be resumed"). From p or u the mailing must also
 *   carry the required tags and be schedulable (have an audience), else 400.
 *   canceled → x; paused → a; ready → w when a split test has sent its test share
 *   and waits for a winner, else p (a paused send resumes where it stopped).
 * - Archiving sets archived_ts only; canceled and archived mailings leave the
 *   normal list.
 */
import { inTransaction } from '../../store/db.js';
import { emitEvent, memberList } from '../webhooks/webhooks.js';
import { stmt } from '../../store/statements.js';
import { ApiError, badRequest, forbidden, notFound } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { FieldCatalog } from '../audience/fields.js';
import { getGroup, requireGroups, type GroupRecord } from '../audience/groups.js';
import { memberRow, membersByEmail, toMember, type MemberRecord, type MemberRow } from '../audience/members.js';
import { getSubscription, type SubscriptionRecord } from '../audience/subscriptions.js';
import { getSearch, searchNames, type SearchRecord } from '../audience/searches.js';
import { countWinnerQueued, recordForward } from './reports.js';
import {
  compileTemplate,
  isSystemLink,
  missingRequiredTags,
  TAG_OR,
  validateTemplates,
  type RenderValues,
  type TagProblem,
} from './personalization.js';

export const MAILING_TYPES = ['m', 't', 'r', 's', 'c'] as const;
export type MailingType = (typeof MAILING_TYPES)[number];
export const MAILING_STATUSES = ['p', 'a', 'i', 's', 'x', 'c', 'w', 'u', 'f'] as const;
export type MailingStatus = (typeof MAILING_STATUSES)[number];
/** The words PUT /mailings/{id} takes. */
export const STATUS_WORDS = ['canceled', 'paused', 'ready'] as const;
export type StatusWord = (typeof STATUS_WORDS)[number];
export const MESSAGE_TYPES = ['all', 'html', 'plaintext', 'subject', 'webview_url'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface MailingRow {
  mailing_id: number;
  account_id: number;
  mailing_type: MailingType;
  mailing_status: MailingStatus;
  name: string;
  subject: string;
  sender: string;
  reply_to: string | null;
  html_body: string | null;
  plaintext: string | null;
  plaintext_only: number;
  disabled: number;
  recipient_count: number;
  created_ts: string;
  send_at: string | null;
  send_started: string | null;
  send_finished: string | null;
  cancel_ts: string | null;
  failure_ts: string | null;
  archived_ts: string | null;
  purged_at: string | null;
  deleted_at: string | null;
  cancel_by_user_id: number | null;
  parent_mailing_id: number | null;
  signup_form_id: number | null;
  failure_message: string | null;
  trigger_id: number | null;
  split_test_id: number | null;
  test_percent: number | null;
  test_duration_seconds: number | null;
  test_sent_at: string | null;
  winner_mailing_id: number | null;
  winner_declared_at: string | null;
  test_results: string | null;
  merge_fields: string | null;
}

// ---------------------------------------------------------------- addresses

/** Where the sandbox says a message can be viewed or opted out of (example.com names nothing real). */
export const VIEW_BASE = 'https://view.amsg.example.com';
export const publicWebviewUrl = (m: Pick<MailingRow, 'account_id' | 'mailing_id'>) => `${VIEW_BASE}/${m.account_id}/${m.mailing_id}`;
export const memberWebviewUrl = (accountId: number, mailingId: number, memberId: number) =>
  `${VIEW_BASE}/${accountId}/${mailingId}/${memberId}`;
export const optoutUrl = (accountId: number, mailingId: number, memberId: number) =>
  `${VIEW_BASE}/optout/${accountId}/${mailingId}/${memberId}`;

// ---------------------------------------------------------------- reads

/** A mailing of ctx's account; another account's mailing is as missing as one that never was. */
export function mailingRow(ctx: Ctx, mailingId: number): MailingRow {
  const row = stmt(ctx.db, 'SELECT * FROM mailings WHERE mailing_id = ? AND account_id = ? AND purged_at IS NULL').get(
    mailingId,
    ctx.accountId,
  ) as MailingRow | undefined;
  if (!row) throw notFound(`mailing ${mailingId} not found`);
  return row;
}

export interface MailingListQuery {
  types: readonly MailingType[];
  /** Absent: every status but x (canceled mailings leave the normal list). */
  statuses?: readonly MailingStatus[];
  includeArchived?: boolean;
  scheduledOnly?: boolean;
}

export function listMailings(ctx: Ctx, q: MailingListQuery): MailingRow[] {
  const statuses = q.statuses ?? MAILING_STATUSES.filter((s) => s !== 'x');
  return stmt(
    ctx.db,
    `SELECT * FROM mailings
      WHERE account_id = ? AND purged_at IS NULL AND deleted_at IS NULL
        AND mailing_type IN (SELECT value FROM json_each(?))
        AND mailing_status IN (SELECT value FROM json_each(?))
        AND (? OR archived_ts IS NULL) AND (NOT ? OR send_at IS NOT NULL)
      ORDER BY mailing_id`,
  ).all(
    ctx.accountId,
    JSON.stringify(q.types),
    JSON.stringify(statuses),
    q.includeArchived ? 1 : 0,
    q.scheduledOnly ? 1 : 0,
  ) as MailingRow[];
}

export interface AudienceRef {
  role: 'include' | 'suppress';
  kind: 'group' | 'subscription' | 'search' | 'segment' | 'member';
  ref_id: number;
}

/** Every reference of a mailing's audience (the send resolves them all). */
export function audienceOf(ctx: Ctx, mailingId: number): AudienceRef[] {
  return stmt(ctx.db, 'SELECT role, kind, ref_id FROM mailing_audience WHERE mailing_id = ? ORDER BY role, kind, position').all(
    mailingId,
  ) as AudienceRef[];
}

/**
 * The references of one role and kind, in the order given (the order migration 013
 * indexes): the groups of a mailing read no member named individually.
 */
const refsOf = (ctx: Ctx, mailingId: number, role: AudienceRef['role'], kind: AudienceRef['kind']) =>
  stmt(ctx.db, 'SELECT ref_id FROM mailing_audience WHERE mailing_id = ? AND role = ? AND kind = ? ORDER BY position')
    .pluck()
    .all(mailingId, role, kind) as number[];

export interface LinkRecord {
  mailing_id: number;
  plaintext: boolean;
  link_id: number;
  link_name: string;
  link_target: string;
  link_order: number;
}

export interface MailingDetail {
  mailing: MailingRow;
  recipient_groups: { member_group_id: number; name: string }[];
  recipient_subscriptions: { subscription_id: number; subscription_name?: string }[];
  recipient_segments: { segment_id: number; name?: string }[];
  recipient_searches: { search_id: number; name: string }[];
  recipient_members: { email: string; member_id: number }[];
  heads_up_emails: string[];
  links: LinkRecord[];
  split_test: SplitTestInfo | null;
}

export interface SplitTestInfo {
  test_percent: number;
  test_duration_seconds: number;
  variants: { mailing_id: number; name: string; subject: string }[];
  test_sent_at: string | null;
  winner_mailing_id: number | null;
  winner_declared_at: string | null;
  results: Record<string, { sent: number; opened: number; clicked: number }> | null;
}

export function mailingDetail(
  ctx: Ctx,
  mailingId: number,
  opts: { segmentNames?: boolean; subscriptionNames?: boolean } = {},
): MailingDetail {
  const mailing = mailingRow(ctx, mailingId);
  const refs = (kind: AudienceRef['kind']) => refsOf(ctx, mailingId, 'include', kind);
  const groupName = stmt(ctx.db, 'SELECT group_name FROM member_groups WHERE member_group_id = ?');
  const subscriptionName = stmt(ctx.db, 'SELECT subscription_name FROM subscriptions WHERE subscription_id = ?');
  const searchName = stmt(ctx.db, 'SELECT name FROM searches WHERE search_id = ?');
  const nameOf = (s: ReturnType<typeof stmt>, id: number) => (s.pluck().get(id) as string | undefined) ?? '';
  return {
    mailing,
    recipient_groups: refs('group').map((id) => ({ member_group_id: id, name: nameOf(groupName, id) })),
    recipient_subscriptions: refs('subscription').map((id) =>
      opts.subscriptionNames ? { subscription_id: id, subscription_name: nameOf(subscriptionName, id) } : { subscription_id: id },
    ),
    recipient_segments: refs('segment').map((id) =>
      opts.segmentNames ? { segment_id: id, name: nameOf(searchName, id) } : { segment_id: id },
    ),
    recipient_searches: refs('search').map((id) => ({ search_id: id, name: nameOf(searchName, id) })),
    recipient_members: individualRecipients(ctx, mailingId, 'include'),
    heads_up_emails: stmt(ctx.db, 'SELECT email FROM mailing_headsup WHERE mailing_id = ? ORDER BY email')
      .pluck()
      .all(mailingId) as string[],
    links: linksOf(ctx, mailingId),
    split_test: splitTestInfo(ctx, mailing),
  };
}

/** A mailing's links in link_order: saved in that order at once, so link ids follow it and the index gives it. */
function linksOf(ctx: Ctx, mailingId: number): LinkRecord[] {
  return (
    stmt(
      ctx.db,
      'SELECT mailing_id, plaintext, link_id, link_name, link_target, link_order FROM mailing_links WHERE mailing_id = ? ORDER BY link_id',
    ).all(mailingId) as (Omit<LinkRecord, 'plaintext'> & { plaintext: number })[]
  ).map((l) => ({ ...l, plaintext: l.plaintext === 1 }));
}

export function variantsOf(ctx: Ctx, testId: number): MailingRow[] {
  return stmt(ctx.db, 'SELECT * FROM mailings WHERE split_test_id = ? ORDER BY mailing_id').all(testId) as MailingRow[];
}

function splitTestInfo(ctx: Ctx, m: MailingRow): SplitTestInfo | null {
  if (m.test_percent === null) return null;
  return {
    test_percent: m.test_percent,
    test_duration_seconds: m.test_duration_seconds ?? 0,
    variants: variantsOf(ctx, m.mailing_id).map((v) => ({ mailing_id: v.mailing_id, name: v.name, subject: v.subject })),
    test_sent_at: m.test_sent_at,
    winner_mailing_id: m.winner_mailing_id,
    winner_declared_at: m.winner_declared_at,
    results: m.test_results ? JSON.parse(m.test_results) : null,
  };
}

/**
 * Members named individually as recipients (include) or kept out (suppress), in the
 * order given: the detail record's whole list (the spec's shape has no window), so
 * only the two columns it shows are read.
 */
export function individualRecipients(ctx: Ctx, mailingId: number, role: AudienceRef['role']): { email: string; member_id: number }[] {
  return stmt(
    ctx.db,
    `SELECT m.email, m.member_id FROM mailing_audience a CROSS JOIN members m ON m.member_id = a.ref_id
      WHERE a.mailing_id = ? AND a.role = ? AND a.kind = 'member' ORDER BY a.position`,
  ).all(mailingId, role) as { email: string; member_id: number }[];
}

/**
 * A window of the members named individually, in member id order: the audience's
 * primary key ends with ref_id, so a page walks it without a sort (CROSS JOIN keeps
 * it the outer loop). Members purged since are left out before the window is taken,
 * so only the last page is short.
 */
function individualRecipientsPage(ctx: Ctx, mailingId: number, role: AudienceRef['role'], w: Window): MemberRecord[] {
  const { limit, offset } = windowOf(w);
  const rows = stmt(
    ctx.db,
    `SELECT m.* FROM mailing_audience a CROSS JOIN members m ON m.member_id = a.ref_id
      WHERE a.mailing_id = ? AND a.role = ? AND a.kind = 'member' ORDER BY a.ref_id ${LIMIT_OFFSET}`,
  ).all(mailingId, role, limit, offset) as MemberRow[];
  const catalog = FieldCatalog.of(ctx);
  return rows.map((r) => toMember(r, catalog));
}

/** GET /mailings/{id}/members: the members sent to individually (groups and searches excluded), one window of them. */
export function mailingMembers(ctx: Ctx, mailingId: number, w: Window = {}): MemberRecord[] {
  mailingRow(ctx, mailingId);
  return individualRecipientsPage(ctx, mailingId, 'include', w);
}

/** The records behind ids, leaving out those deleted since (a mailing keeps its history). */
function existing<T>(ids: number[], get: (id: number) => T): T[] {
  return ids.flatMap((id) => {
    try {
      return [get(id)];
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return [];
      throw err;
    }
  });
}

export function mailingGroups(ctx: Ctx, mailingId: number): GroupRecord[] {
  mailingRow(ctx, mailingId);
  return existing(refsOf(ctx, mailingId, 'include', 'group'), (id) => getGroup(ctx, id));
}

export function mailingSubscriptions(ctx: Ctx, mailingId: number): SubscriptionRecord[] {
  mailingRow(ctx, mailingId);
  return existing(refsOf(ctx, mailingId, 'include', 'subscription'), (id) => getSubscription(ctx, id));
}

/** Searches of the audience (saved searches and segments alike), included or suppressed. */
export function mailingSearches(ctx: Ctx, mailingId: number, role: AudienceRef['role']): SearchRecord[] {
  mailingRow(ctx, mailingId);
  const ids = [...new Set([...refsOf(ctx, mailingId, role, 'search'), ...refsOf(ctx, mailingId, role, 'segment')])];
  return existing(ids, (id) => getSearch(ctx, id));
}

export function suppressedMembers(ctx: Ctx, mailingId: number, w: Window = {}): MemberRecord[] {
  mailingRow(ctx, mailingId);
  return individualRecipientsPage(ctx, mailingId, 'suppress', w);
}

export function headsUp(ctx: Ctx, mailingId: number): { sent_ts: string | null; email: string; mailing_id: number }[] {
  mailingRow(ctx, mailingId);
  return stmt(ctx.db, 'SELECT sent_ts, email, mailing_id FROM mailing_headsup WHERE mailing_id = ? ORDER BY email').all(mailingId) as {
    sent_ts: string | null;
    email: string;
    mailing_id: number;
  }[];
}

// ---------------------------------------------------------------- messages

interface MessageRow {
  mailing_id: number;
  member_id: number;
  content_mailing_id: number;
  email: string;
  merge_values: string;
}

export interface Message {
  plaintext?: string;
  subject?: string;
  html_body?: string;
  webview_url?: string;
}

/**
 * One message as the member got it, rendered from what it froze (see the
 * mailing_messages table): `sent` is the mailing it belongs to, `content` the mailing
 * whose templates it used (a split-test variant, or the same mailing).
 */
export class RenderedMessage {
  readonly values: RenderValues;

  constructor(
    sent: Pick<MailingRow, 'account_id' | 'mailing_id' | 'merge_fields'>,
    private readonly content: Pick<MailingRow, 'subject' | 'html_body' | 'plaintext' | 'plaintext_only'>,
    row: Pick<MessageRow, 'member_id' | 'email' | 'merge_values'>,
  ) {
    this.values = messageValues(sent, JSON.parse(sent.merge_fields ?? '{}') as Record<string, string>, row);
  }

  subject = () => compileTemplate(this.content.subject)(this.values);
  html = () => compileContent(this.content).html(this.values);
  plaintext = () => compileContent(this.content).plaintext(this.values);
}

/** The values a frozen message renders from: its field values by name (`names`: field id → shortcut name) and its links. */
export function messageValues(
  sent: Pick<MailingRow, 'account_id' | 'mailing_id'>,
  names: Record<string, string>,
  row: Pick<MessageRow, 'member_id' | 'email' | 'merge_values'>,
): RenderValues {
  const fields: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(JSON.parse(row.merge_values) as Record<string, unknown>))
    if (names[id] !== undefined) fields[names[id]] = value;
  return {
    email: row.email,
    member_id: row.member_id,
    fields,
    mailing_id: sent.mailing_id,
    optout_url: optoutUrl(sent.account_id, sent.mailing_id, row.member_id),
    webview_url: memberWebviewUrl(sent.account_id, sent.mailing_id, row.member_id),
  };
}

/** A mailing's three parts compiled once, for rendering many messages (an HTML body is empty when plaintext only). */
export function compileContent(content: Pick<MailingRow, 'subject' | 'html_body' | 'plaintext' | 'plaintext_only'>) {
  return {
    subject: compileTemplate(content.subject),
    html: content.html_body === null || content.plaintext_only ? () => '' : compileTemplate(content.html_body, { escapeHtml: true }),
    plaintext: content.plaintext === null ? () => '' : compileTemplate(content.plaintext),
  };
}

/**
 * GET /mailings/{id}/messages/{member_id}: the member's personalized message. 404
 * when none was built for that member (not a recipient, or not sent yet).
 */
export function memberMessage(ctx: Ctx, mailingId: number, memberId: number, type: MessageType): Message {
  const mailing = mailingRow(ctx, mailingId);
  const row = stmt(
    ctx.db,
    'SELECT mailing_id, member_id, content_mailing_id, email, merge_values FROM mailing_messages WHERE mailing_id = ? AND member_id = ?',
  ).get(mailingId, memberId) as MessageRow | undefined;
  if (!row) throw notFound(`no message of mailing ${mailingId} for member ${memberId}`);
  const content = row.content_mailing_id === mailingId ? mailing : mailingRow(ctx, row.content_mailing_id);
  const message = new RenderedMessage(mailing, content, row);
  const webview_url = message.values.webview_url;
  switch (type) {
    case 'all':
      return { plaintext: message.plaintext(), subject: message.subject(), html_body: message.html(), webview_url };
    case 'html':
      return { html_body: message.html() };
    case 'plaintext':
      return { plaintext: message.plaintext() };
    case 'subject':
      return { subject: message.subject() };
    case 'webview_url':
      return { webview_url };
  }
}

export interface MailingHistoryItem {
  delivery_type: string;
  clicked: string | null;
  opened: string | null;
  delivery_ts: string | null;
  sent: string | null;
  forwarded: string | null;
  shared: string | null;
  mailing_id: number;
  name: string;
  subject: string;
  account_id: number;
}

/**
 * A member's messages (GET /members/{id}/mailings), newest mailing first, each subject
 * as the member got it; with a window, one page of them (the portability export takes
 * them all). Mailing id order is the order of the member's index on mailing_messages
 * (member_id, then the key's mailing_id), so a page reads its rows without a sort; the
 * CROSS JOINs keep that index the outer loop (walking the account's mailings instead
 * would cost every mailing the account ever sent, and a sort).
 */
export function mailingHistory(ctx: Ctx, memberId: number, w?: Window): MailingHistoryItem[] {
  memberRow(ctx, memberId);
  const { limit, offset } = w ? windowOf(w) : { limit: -1, offset: 0 };
  const rows = stmt(
    ctx.db,
    `SELECT mm.delivery_type, mm.clicked, mm.opened, mm.delivery_ts, mm.sent, mm.forwarded, mm.shared,
            m.mailing_id, m.name, m.account_id, m.merge_fields,
            mm.member_id, mm.email, mm.merge_values, c.subject, c.html_body, c.plaintext, c.plaintext_only
       FROM mailing_messages mm
       CROSS JOIN mailings m ON m.mailing_id = mm.mailing_id
       CROSS JOIN mailings c ON c.mailing_id = mm.content_mailing_id
      WHERE mm.member_id = ? AND m.account_id = ?
      ORDER BY mm.mailing_id DESC ${LIMIT_OFFSET}`,
  ).all(memberId, ctx.accountId, limit, offset) as (MailingHistoryItem &
    MessageRow &
    Pick<MailingRow, 'merge_fields' | 'html_body' | 'plaintext' | 'plaintext_only'>)[];
  return rows.map((r) => ({
    delivery_type: r.delivery_type,
    clicked: r.clicked,
    opened: r.opened,
    delivery_ts: r.delivery_ts,
    sent: r.sent,
    forwarded: r.forwarded,
    shared: r.shared,
    mailing_id: r.mailing_id,
    name: r.name,
    subject: new RenderedMessage(r, r, r).subject(),
    account_id: r.account_id,
  }));
}

// ---------------------------------------------------------------- tags

export interface Templates {
  subject?: string | null;
  html_body?: string | null;
  plaintext?: string | null;
}

/** The 400 of POST /mailings/validate and of every write that carries templates. */
export function invalidTags(problems: TagProblem[]): ApiError {
  const first = problems[0];
  return badRequest(
    `invalid personalization tags: ${problems.length} problem${problems.length === 1 ? '' : 's'}, the first in ${first.part} at line ${first.line}, column ${first.column}: ${first.reason}`,
    { invalid_tags: problems },
  );
}

/** POST /mailings/validate: true, or 400 listing every invalid tag with its place. */
export function validateTags(ctx: Ctx, t: Templates): true {
  const problems = validateTemplates(t, { fieldNames: FieldCatalog.of(ctx).byName.keys() });
  if (problems.length) throw invalidTags(problems);
  return true;
}

/** The required tags a mailing's bodies lack, as `part: tag` phrases. */
function missingTags(t: Templates): string[] {
  const out: string[] = [];
  for (const part of ['html_body', 'plaintext'] as const) for (const tag of missingRequiredTags(t[part])) out.push(`${part} lacks ${tag}`);
  return out;
}

function requireTags(t: Templates, what: string) {
  const missing = missingTags(t);
  if (missing.length)
    throw badRequest(`${what}: ${missing.join('; ')} (every mailing must carry its opt-out link)`, {
      field: missing[0].split(' ')[0],
      missing_tags: missing,
    });
}

// ---------------------------------------------------------------- create

export interface RecipientInput {
  recipient_groups?: number[];
  recipient_subscriptions?: number[];
  recipient_searches?: number[];
  recipient_segments?: number[];
  recipient_emails?: string[];
  recipient_member_ids?: number[];
  suppressed_searches?: number[];
  suppressed_segments?: number[];
  suppressed_member_ids?: number[];
  heads_up_emails?: string[];
}

export interface VariantInput {
  name?: string;
  subject?: string;
  html_body?: string;
  plaintext?: string;
}

export interface MailingInput extends RecipientInput {
  name: string;
  subject: string;
  sender: string;
  reply_to?: string | null;
  html_body?: string | null;
  plaintext?: string | null;
  plaintext_only?: boolean;
  mailing_type?: 'm' | 't' | 's' | 'c';
  /** Stored form; absent sends as soon as the sender runs. */
  send_at?: string | null;
  /** u keeps the mailing as an unapproved draft: it is not sent until PUT status ready. */
  status?: 'p' | 'u';
  split_test?: { variants: VariantInput[]; test_percent?: number; test_duration_seconds?: number };
}

/** Defaults of a split test: a fifth of the audience, a day to decide. */
export const SPLIT_TEST_DEFAULTS = { test_percent: 20, test_duration_seconds: 86_400 };

/** The extension POST /mailings: a new mailing, pending (or unapproved) with its audience. */
export function createMailing(
  ctx: Ctx,
  input: MailingInput,
  extra: { parent_mailing_id?: number; trigger_id?: number; mailing_type?: MailingType } = {},
): number {
  return inTransaction(ctx.db, () => {
    const type = extra.mailing_type ?? input.mailing_type ?? 'm';
    const status = input.status ?? 'p';
    checkContent(ctx, input, type, status);
    const now = stamp(ctx.clock.now());
    const isSplit = type === 's' || type === 'c';
    const test = isSplit ? { ...SPLIT_TEST_DEFAULTS, ...input.split_test } : undefined;
    const mailingId = insertMailing(ctx, {
      ...input,
      mailing_type: type,
      mailing_status: status,
      created_ts: now,
      parent_mailing_id: extra.parent_mailing_id ?? null,
      trigger_id: extra.trigger_id ?? null,
      test_percent: test?.test_percent ?? null,
      test_duration_seconds: test?.test_duration_seconds ?? null,
    });
    saveAudience(ctx, mailingId, input, status);
    saveLinks(ctx, mailingId, input);
    if (test)
      input.split_test!.variants.forEach((v, i) => {
        const variant = { ...input, ...v, name: v.name ?? `${input.name} (variant ${String.fromCharCode(65 + i)})` };
        const variantId = insertMailing(ctx, {
          ...variant,
          mailing_type: type,
          mailing_status: status,
          created_ts: now,
          split_test_id: mailingId,
        });
        saveLinks(ctx, variantId, variant);
      });
    return mailingId;
  });
}

/**
 * An automated copy of a mailing for one member (type r): what a trigger and a workflow's
 * send_mailing action send. The copy names its parent (and its trigger), and is sent now or
 * at sendAt.
 */
export function createMemberCopy(ctx: Ctx, parentId: number, memberId: number, opts: { sendAt?: string; triggerId?: number } = {}): number {
  const parent = mailingRow(ctx, parentId);
  return createMailing(
    ctx,
    {
      name: parent.name,
      subject: parent.subject,
      sender: parent.sender,
      reply_to: parent.reply_to,
      html_body: parent.html_body,
      plaintext: parent.plaintext,
      plaintext_only: parent.plaintext_only === 1,
      recipient_member_ids: [memberId],
      ...(opts.sendAt ? { send_at: opts.sendAt } : {}),
    },
    { parent_mailing_id: parent.mailing_id, ...(opts.triggerId !== undefined ? { trigger_id: opts.triggerId } : {}), mailing_type: 'r' },
  );
}

function checkContent(ctx: Ctx, input: MailingInput, type: MailingType, status: 'p' | 'u') {
  if (input.plaintext_only && !input.plaintext)
    throw badRequest('plaintext: a plaintext_only mailing needs a plaintext body', { field: 'plaintext' });
  if (!input.html_body && !input.plaintext)
    throw badRequest('html_body: a mailing needs an html_body or a plaintext body', { field: 'html_body' });
  const isSplit = type === 's' || type === 'c';
  if (isSplit !== Boolean(input.split_test))
    throw isSplit
      ? badRequest(`split_test: mailing_type ${type} is a split test and needs split_test.variants`, { field: 'split_test' })
      : badRequest('split_test: only mailing_type s (subject) or c (content) is a split test', { field: 'split_test' });
  const all: Templates[] = [input];
  if (input.split_test) {
    input.split_test.variants.forEach((v, i) => {
      const path = `split_test.variants[${i}]`;
      if (type === 's' && (v.html_body !== undefined || v.plaintext !== undefined))
        throw badRequest(`${path}: a subject split test varies the subject only`, { field: path });
      if (type === 's' && !v.subject)
        throw badRequest(`${path}.subject: each variant of a subject test needs a subject`, { field: `${path}.subject` });
      if (type === 'c' && v.html_body === undefined && v.plaintext === undefined)
        throw badRequest(`${path}: each variant of a content test needs html_body or plaintext`, { field: path });
      all.push({ ...input, ...v });
    });
  }
  const fieldNames = [...FieldCatalog.of(ctx).byName.keys()];
  const problems = all.flatMap((t) => validateTemplates(t, { fieldNames }));
  if (problems.length) throw invalidTags(problems);
  // An unapproved draft may lack them; a pending mailing is on its way out.
  if (status === 'p') for (const t of all) requireTags(t, 'mailing');
}

type NewMailing = Omit<MailingInput, 'mailing_type'> &
  Partial<Pick<MailingRow, 'parent_mailing_id' | 'trigger_id' | 'split_test_id' | 'test_percent' | 'test_duration_seconds'>> & {
    mailing_type: MailingType;
    mailing_status: MailingStatus;
    created_ts: string;
  };

function insertMailing(ctx: Ctx, m: NewMailing): number {
  return Number(
    stmt(
      ctx.db,
      `INSERT INTO mailings (account_id, mailing_type, mailing_status, name, subject, sender, reply_to, html_body, plaintext,
                             plaintext_only, created_ts, send_at, parent_mailing_id, trigger_id, split_test_id,
                             test_percent, test_duration_seconds)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      m.mailing_type,
      m.mailing_status,
      m.name,
      m.subject,
      m.sender,
      m.reply_to ?? null,
      m.html_body ?? null,
      m.plaintext ?? null,
      m.plaintext_only ? 1 : 0,
      m.created_ts,
      m.send_at ?? null,
      m.parent_mailing_id ?? null,
      m.trigger_id ?? null,
      m.split_test_id ?? null,
      m.test_percent ?? null,
      m.test_duration_seconds ?? null,
    ).lastInsertRowid,
  );
}

const hasAudience = (r: RecipientInput) =>
  Boolean(
    r.recipient_groups?.length ||
      r.recipient_subscriptions?.length ||
      r.recipient_searches?.length ||
      r.recipient_segments?.length ||
      r.recipient_emails?.length ||
      r.recipient_member_ids?.length,
  );

/** Checks every reference and records the audience; recipient emails that are not members yet join as a. */
function saveAudience(ctx: Ctx, mailingId: number, r: RecipientInput, status: MailingStatus) {
  if (status === 'p' && !hasAudience(r))
    throw badRequest(
      'recipients: a mailing needs recipients (recipient_groups, recipient_subscriptions, recipient_searches, recipient_segments or recipient_emails)',
      { field: 'recipient_groups' },
    );
  requireGroups(ctx, r.recipient_groups ?? []);
  for (const id of r.recipient_subscriptions ?? []) getSubscription(ctx, id);
  // searchNames checks existence without running the searches.
  searchNames(ctx, [
    ...(r.recipient_searches ?? []),
    ...(r.recipient_segments ?? []),
    ...(r.suppressed_searches ?? []),
    ...(r.suppressed_segments ?? []),
  ]);
  for (const id of [...(r.recipient_member_ids ?? []), ...(r.suppressed_member_ids ?? [])]) memberRow(ctx, id, false);
  const members = [...(r.recipient_member_ids ?? []), ...membersByEmail(ctx, r.recipient_emails ?? [], 'a')];
  const insert = stmt(ctx.db, 'INSERT OR IGNORE INTO mailing_audience (mailing_id, role, kind, ref_id, position) VALUES (?, ?, ?, ?, ?)');
  const add = (role: AudienceRef['role'], kind: AudienceRef['kind'], ids: readonly number[] = []) =>
    ids.forEach((id, i) => insert.run(mailingId, role, kind, id, i));
  add('include', 'group', r.recipient_groups);
  add('include', 'subscription', r.recipient_subscriptions);
  add('include', 'search', r.recipient_searches);
  add('include', 'segment', r.recipient_segments);
  add('include', 'member', members);
  add('suppress', 'search', r.suppressed_searches);
  add('suppress', 'segment', r.suppressed_segments);
  add('suppress', 'member', r.suppressed_member_ids);
  const headsUp = stmt(ctx.db, 'INSERT OR IGNORE INTO mailing_headsup (mailing_id, email) VALUES (?, ?)');
  for (const email of r.heads_up_emails ?? []) headsUp.run(mailingId, email.trim().toLowerCase());
}

/**
 * An anchor and its href: quoted in either quotes (a tag inside may hold the other
 * quote, or the same one: `default:"friend"`) or unquoted, then the anchor's text.
 */
const HTML_LINK = new RegExp(
  `<a\\s[^>]*?href\\s*=\\s*(?:"(${TAG_OR('"')}*)"|'(${TAG_OR("'")}*)'|([^\\s"'>]+))[^>]*>([\\s\\S]*?)<\\/a>`,
  'gi',
);
/** A URL of the plaintext, tags inside it included (spaces inside a tag do not end it). */
const TEXT_LINK = new RegExp(`https?:\\/\\/${TAG_OR('\\s<>"\'')}+`, 'g');

/**
 * The tracked links of a mailing: anchors of the html, then URLs of the plaintext. A URL
 * that holds personalization tags (`https://shop.example.com/spring?m=[% mailing_id %]`)
 * is one link as written, whatever each member's copy reads; only the system's own links
 * (an href that is just `[% optout_url %]` or `[% webview_url %]`) are not the mailing's.
 */
export function extractLinks(t: Templates): { plaintext: boolean; link_name: string; link_target: string }[] {
  const links: { plaintext: boolean; link_name: string; link_target: string }[] = [];
  for (const m of (t.html_body ?? '').matchAll(HTML_LINK)) {
    const target = m[1] ?? m[2] ?? m[3];
    if (isSystemLink(target)) continue;
    const name = m[4]
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    links.push({ plaintext: false, link_name: name || target, link_target: target });
  }
  for (const m of (t.plaintext ?? '').matchAll(TEXT_LINK)) links.push({ plaintext: true, link_name: m[0], link_target: m[0] });
  return links;
}

function saveLinks(ctx: Ctx, mailingId: number, t: Templates) {
  const insert = stmt(
    ctx.db,
    'INSERT INTO mailing_links (mailing_id, plaintext, link_name, link_target, link_order) VALUES (?, ?, ?, ?, ?)',
  );
  extractLinks(t).forEach((l, i) => insert.run(mailingId, l.plaintext ? 1 : 0, l.link_name, l.link_target, i + 1));
}

// ---------------------------------------------------------------- status changes

const FINAL_FOR_PUT: Partial<Record<MailingStatus, string>> = {
  c: 'the mailing is complete',
  s: 'the mailing is sending',
  x: 'a canceled mailing cannot be resumed',
};

/** PUT /mailings/{id} with status canceled | paused | ready: the updated mailing. */
export function changeStatus(ctx: Ctx, mailingId: number, word: StatusWord): MailingRow {
  return inTransaction(ctx.db, () => {
    const m = mailingRow(ctx, mailingId);
    const refused = FINAL_FOR_PUT[m.mailing_status];
    if (refused) throw badRequest(`status: ${refused} (mailing ${mailingId} is ${m.mailing_status})`, { field: 'status' });
    if (m.mailing_status === 'p' || m.mailing_status === 'u') {
      for (const t of [m, ...variantsOf(ctx, mailingId)]) requireTags(t, 'status');
      if (!audienceOf(ctx, mailingId).some((a) => a.role === 'include'))
        throw badRequest(`status: mailing ${mailingId} cannot be scheduled: it has no recipients`, { field: 'status' });
    }
    const now = stamp(ctx.clock.now());
    if (word === 'canceled') cancelRow(ctx, m, now);
    else setStatus(ctx, m, word === 'paused' ? 'a' : resumedStatus(m));
    return mailingRow(ctx, mailingId);
  });
}

/** Where a resumed mailing goes: back to waiting for a winner when its test share went out, else pending. */
const resumedStatus = (m: MailingRow): MailingStatus => (m.test_sent_at !== null && m.winner_mailing_id === null ? 'w' : 'p');

/** Moves a mailing and its split-test variants (which follow the test) to a status. */
export function setStatus(ctx: Ctx, m: Pick<MailingRow, 'mailing_id'>, to: MailingStatus) {
  stmt(ctx.db, 'UPDATE mailings SET mailing_status = ? WHERE mailing_id = ? OR split_test_id = ?').run(to, m.mailing_id, m.mailing_id);
}

function cancelRow(ctx: Ctx, m: MailingRow, now: string) {
  stmt(
    ctx.db,
    `UPDATE mailings SET mailing_status = 'x', cancel_ts = ?, cancel_by_user_id = ?
      WHERE mailing_id = ? OR split_test_id = ?`,
  ).run(now, ctx.actor.user_id, m.mailing_id, m.mailing_id);
  // Recipients not yet built will never be.
  stmt(ctx.db, 'DELETE FROM mailing_queue WHERE mailing_id = ?').run(m.mailing_id);
}

/** DELETE /mailings/cancel/{id}: only a pending or paused mailing can be canceled (403 otherwise). */
export function cancelMailing(ctx: Ctx, mailingId: number): true {
  return inTransaction(ctx.db, () => {
    const m = mailingRow(ctx, mailingId);
    if (m.mailing_status !== 'p' && m.mailing_status !== 'a')
      throw forbidden(`mailing ${mailingId} is ${m.mailing_status}: only a pending (p) or paused (a) mailing can be canceled`);
    cancelRow(ctx, m, stamp(ctx.clock.now()));
    return true;
  });
}

/** DELETE /mailings/{id}: archives (archived_ts), leaving the status as it is. */
export function archiveMailing(ctx: Ctx, mailingId: number): true {
  mailingRow(ctx, mailingId);
  stmt(ctx.db, 'UPDATE mailings SET archived_ts = COALESCE(archived_ts, ?) WHERE mailing_id = ?').run(stamp(ctx.clock.now()), mailingId);
  return true;
}

// ---------------------------------------------------------------- copies

export interface ResendInput extends RecipientInput {
  sender?: string;
  suppression_segments?: number[];
}

/** POST /mailings/{id}: a new pending mailing with the original's content and the given audience. */
export function resendMailing(ctx: Ctx, mailingId: number, input: ResendInput): { mailing_id: number } {
  return inTransaction(ctx.db, () => {
    const original = mailingRow(ctx, mailingId);
    const content = contentOf(ctx, original);
    const newId = createMailing(
      ctx,
      {
        ...input,
        suppressed_segments: [...(input.suppressed_segments ?? []), ...(input.suppression_segments ?? [])],
        name: original.name,
        subject: content.subject,
        sender: input.sender ?? original.sender,
        reply_to: original.reply_to,
        html_body: content.html_body,
        plaintext: content.plaintext,
        plaintext_only: original.plaintext_only === 1,
        mailing_type: original.mailing_type === 't' ? 't' : 'm',
      },
      { parent_mailing_id: original.mailing_id },
    );
    return { mailing_id: newId };
  });
}

/** A split test's content is its winner's once declared (before that, the test mailing's own). */
function contentOf(ctx: Ctx, m: MailingRow): MailingRow {
  return m.winner_mailing_id ? mailingRow(ctx, m.winner_mailing_id) : m;
}

/**
 * POST /forwards/{mailing_id}/{member_id}: the member forwards its message. The
 * recipients get a new mailing with the same content, sent at once; addresses not
 * in the audience join it with status f.
 */
/**
 * A forward's note above the content it forwards, as text (a tag-like `[%` in it is
 * only text: the note is the member's words, not a template).
 */
function withNote(body: string | null, note: string | undefined, kind: 'html' | 'text'): string | null {
  if (!note || body === null) return body;
  const text = note.replaceAll('[%', '[ %');
  if (kind === 'text') return `${text}\n\n${body}`;
  const html = text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<p class="forward-note">${html}</p>\n${body}`;
}

export function forwardMailing(
  ctx: Ctx,
  mailingId: number,
  memberId: number,
  input: { recipient_emails?: string[]; heads_up_emails?: string[]; note?: string },
): { mailing_id: number } {
  return inTransaction(ctx.db, () => {
    const original = mailingRow(ctx, mailingId);
    memberRow(ctx, memberId, false);
    const message = stmt(ctx.db, 'SELECT content_mailing_id FROM mailing_messages WHERE mailing_id = ? AND member_id = ?').get(
      mailingId,
      memberId,
    ) as { content_mailing_id: number } | undefined;
    if (!message) throw notFound(`member ${memberId} has no message of mailing ${mailingId} to forward`);
    if (!input.recipient_emails?.length)
      throw badRequest('recipient_emails: give at least one address to forward to', { field: 'recipient_emails' });
    const content = mailingRow(ctx, message.content_mailing_id);
    const recipients = membersByEmail(ctx, input.recipient_emails, 'f');
    const newId = createMailing(
      ctx,
      {
        name: original.name,
        subject: content.subject,
        sender: original.sender,
        reply_to: original.reply_to,
        html_body: withNote(content.html_body, input.note, 'html'),
        plaintext: withNote(content.plaintext, input.note, 'text'),
        plaintext_only: content.plaintext_only === 1,
        recipient_member_ids: recipients,
        heads_up_emails: input.heads_up_emails,
      },
      { parent_mailing_id: original.mailing_id },
    );
    recordForward(ctx, mailingId, message.content_mailing_id, memberId, newId);
    stmt(ctx.db, 'UPDATE mailing_messages SET forwarded = COALESCE(forwarded, ?) WHERE mailing_id = ? AND member_id = ?').run(
      stamp(ctx.clock.now()),
      mailingId,
      memberId,
    );
    emitEvent(ctx, 'message_forward', () => ({
      mailing_id: mailingId,
      forward_mailing_id: newId,
      forwarded_to: input.recipient_emails!.map((e) => e.trim().toLowerCase()),
      ...memberList(ctx, [memberId]),
    }));
    return { mailing_id: newId };
  });
}

// ---------------------------------------------------------------- names

export interface RecipientNamesInput {
  recipient_groups?: number[];
  recipient_segments?: number[];
  recipient_subscriptions?: number[];
  suppressed_segments?: number[];
}

/** POST /mailings/recipients: the names behind id lists (404 naming the first unknown id). */
export function recipientNames(ctx: Ctx, input: RecipientNamesInput) {
  const segments = (ids: number[] = []) => searchNames(ctx, ids).map((s) => ({ segment_id: s.search_id, name: s.name }));
  requireGroups(ctx, input.recipient_groups ?? []);
  const groupName = stmt(ctx.db, 'SELECT group_name FROM member_groups WHERE member_group_id = ?').pluck();
  return {
    recipient_groups: (input.recipient_groups ?? []).map((id) => ({ member_group_id: id, name: groupName.get(id) as string })),
    recipient_segments: segments(input.recipient_segments),
    recipient_subscriptions: (input.recipient_subscriptions ?? []).map((id) => ({
      subscription_id: id,
      name: getSubscription(ctx, id).subscription_name,
    })),
    suppressed_segments: segments(input.suppressed_segments),
  };
}

// ---------------------------------------------------------------- split tests

/** Opens and clicks per variant of a test so far. */
export function variantResults(ctx: Ctx, testId: number): Record<string, { sent: number; opened: number; clicked: number }> {
  const out: Record<string, { sent: number; opened: number; clicked: number }> = {};
  for (const v of variantsOf(ctx, testId)) out[v.mailing_id] = { sent: 0, opened: 0, clicked: 0 };
  const rows = stmt(
    ctx.db,
    `SELECT content_mailing_id AS id, COUNT(*) AS sent, COUNT(opened) AS opened, COUNT(clicked) AS clicked
       FROM mailing_messages WHERE mailing_id = ? GROUP BY content_mailing_id`,
  ).all(testId) as { id: number; sent: number; opened: number; clicked: number }[];
  for (const r of rows) if (out[r.id]) out[r.id] = { sent: r.sent, opened: r.opened, clicked: r.clicked };
  return out;
}

/**
 * Declares a split test's winner (by hand, or by the sender when the test time is
 * up): the results so far are frozen, the recipients still waiting get the winner's
 * content, and messages already built keep theirs.
 */
export function declareWinner(ctx: Ctx, mailingId: number, winnerId: number): true {
  return inTransaction(ctx.db, () => {
    const test = mailingRow(ctx, mailingId);
    const variants = variantsOf(ctx, mailingId);
    if (test.test_percent === null)
      throw forbidden(`mailing ${mailingId} is not a split test (type ${test.mailing_type}): it has no winner to declare`);
    if (!variants.some((v) => v.mailing_id === winnerId))
      throw notFound(
        `winner mailing ${winnerId} not found among the variants of split test ${mailingId} (${variants.map((v) => v.mailing_id).join(', ')})`,
      );
    if (test.winner_mailing_id !== null)
      throw forbidden(`split test ${mailingId} already has its winner (mailing ${test.winner_mailing_id})`);
    if (test.test_sent_at === null || !['w', 'a'].includes(test.mailing_status))
      throw forbidden(
        `split test ${mailingId} is ${test.mailing_status}: a winner can be declared once the test share has been sent and before the mailing is canceled`,
      );
    const now = stamp(ctx.clock.now());
    stmt(ctx.db, 'UPDATE mailings SET winner_mailing_id = ?, winner_declared_at = ?, test_results = ? WHERE mailing_id = ?').run(
      winnerId,
      now,
      JSON.stringify(variantResults(ctx, mailingId)),
      mailingId,
    );
    const waiting = stmt(ctx.db, 'UPDATE mailing_queue SET content_mailing_id = ? WHERE mailing_id = ? AND content_mailing_id IS NULL').run(
      winnerId,
      mailingId,
    ).changes;
    countWinnerQueued(ctx.db, winnerId, waiting);
    // Waiting for the winner is over; a paused test stays paused.
    if (test.mailing_status === 'w') setStatus(ctx, test, 'p');
    return true;
  });
}
