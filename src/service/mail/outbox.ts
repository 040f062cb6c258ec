/**
 * Real mail out: what amsg writes to its SMTP outbox (mail_outbox, migration 026), always
 * inside the transaction of what caused it, so a change that rolls back sends nothing and
 * one that commits cannot lose its mail. Sending is src/service/mail/deliver.ts, loaded
 * only by a process that delivers (nodemailer with it).
 *
 * What goes out, when the process holding the database has an SMTP server (settings.ts):
 * - test sends (POST /mailings/{id}/test): the mailing's content, personalized with one
 *   member's values or each field's sample value, subject prefixed `[Test] `, to the
 *   addresses named;
 * - heads-up copies, when a mailing with heads_up_emails starts sending: their sent_ts is
 *   then the time the SMTP server accepted them (deliver.ts), not the start;
 * - opt-in confirmations of POST /members/signup (unless opt_in_confirmation is false);
 * - a mailing's own messages, to the recipients whose address matches an allow pattern
 *   only: one INSERT … SELECT per send batch, composed at delivery from the frozen message.
 * Without an SMTP server none of this is queued and every send stays simulated.
 */
import { randomBytes } from 'node:crypto';
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { ApiError, badRequest } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { FieldCatalog, type FieldRecord } from '../audience/fields.js';
import { rowByEmail, setStatuses } from '../audience/members.js';
import { compileContent, mailingRow, messageValues, RenderedMessage, VIEW_BASE, type MailingRow } from '../mailings/mailings.js';
import type { RenderValues } from '../mailings/personalization.js';
import type { ComposedMessage } from './message.js';
import { allowGlob, mailSettings, type MailSettings } from './settings.js';

export type { ComposedMessage };

export type MailKind = 'test' | 'headsup' | 'confirm' | 'send';

/** The right side of every Message-ID amsg makes. */
export const MESSAGE_ID_DOMAIN = 'mail.amsg.example.com';
const newMessageId = () => `<${randomBytes(12).toString('hex')}@${MESSAGE_ID_DOMAIN}>`;
/** The same, made by SQLite for the rows of a send batch. */
const MESSAGE_ID_SQL = `'<' || lower(hex(randomblob(12))) || '@${MESSAGE_ID_DOMAIN}>'`;
const UNSUBSCRIBE_MAILBOX = 'unsubscribe@view.amsg.example.com';

/** The SMTP settings of the process holding ctx's database, or a 409 saying how to give them. */
function requireMail(ctx: Ctx): MailSettings {
  const settings = mailSettings(ctx.db);
  if (!settings)
    throw new ApiError(
      409,
      'no SMTP server is configured, so no real mail can go out: start amsg serve with --smtp URL, or set AMSG_SMTP_URL (or the profile setting smtp) for local mode',
    );
  return settings;
}

function queue(
  ctx: Ctx,
  row: { kind: MailKind; to: string; mailing_id?: number | null; member_id?: number | null; message: ComposedMessage },
) {
  const now = stamp(ctx.clock.now());
  return Number(
    stmt(
      ctx.db,
      `INSERT INTO mail_outbox (account_id, kind, mailing_id, member_id, to_email, subject, message, message_id, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      row.kind,
      row.mailing_id ?? null,
      row.member_id ?? null,
      row.to,
      row.message.subject,
      JSON.stringify(row.message),
      newMessageId(),
      now,
      now,
    ).lastInsertRowid,
  );
}

// ---------------------------------------------------------------- composing a mailing

/** The unsubscribe targets of a member's message of a mailing: its opt-out link and a mailto naming it. */
export function unsubscribeTargets(optoutUrl: string, accountId: number, mailingId: number, memberId: number): string[] {
  return [optoutUrl, `mailto:${UNSUBSCRIBE_MAILBOX}?subject=unsubscribe-${accountId}-${mailingId}-${memberId}`];
}

/** A mailing's message for one member's values and its parts as rendered for them: the one shape every send takes. */
function composed(
  mailing: Pick<MailingRow, 'account_id' | 'mailing_id' | 'sender' | 'reply_to'>,
  v: RenderValues,
  parts: { subject: string; text: string; html: string },
): ComposedMessage {
  return {
    from: mailing.sender,
    reply_to: mailing.reply_to,
    ...parts,
    list_unsubscribe: unsubscribeTargets(v.optout_url, mailing.account_id, mailing.mailing_id, v.member_id),
    webview_url: v.webview_url,
  };
}

/**
 * A mailing's message for one set of values (RenderedMessage), as it goes out. `textOnly`:
 * the member gets the plain text only (delivery type t: it prefers text, or the mailing is
 * plaintext only), as the send delivers it.
 */
export function composeMailing(
  mailing: Pick<MailingRow, 'account_id' | 'mailing_id' | 'sender' | 'reply_to'>,
  rendered: RenderedMessage,
  opts: { subjectPrefix?: string; textOnly?: boolean } = {},
): ComposedMessage {
  return composed(mailing, rendered.values, {
    subject: (opts.subjectPrefix ?? '') + rendered.subject(),
    text: rendered.plaintext(),
    html: opts.textOnly ? '' : rendered.html(),
  });
}

/** A frozen message of a mailing's own send (mailing_messages), as the deliverer reads it with its outbox row. */
export interface FrozenMessage {
  content_mailing_id: number;
  member_id: number;
  email: string;
  merge_values: string;
  /** h: HTML and text; t: the plain text only. */
  delivery_type: string;
}

/**
 * Composes the messages of one mailing's own send from their frozen rows, its templates
 * compiled once (a deliverer keeps one per mailing while it sends).
 */
export function sendComposer(ctx: Ctx, mailingId: number): (row: FrozenMessage) => ComposedMessage {
  const mailing = mailingRow(ctx, mailingId);
  const names = JSON.parse(mailing.merge_fields ?? '{}') as Record<string, string>;
  const compiled = new Map<number, ReturnType<typeof compileContent>>();
  return (row) => {
    let parts = compiled.get(row.content_mailing_id);
    if (!parts) {
      parts = compileContent(row.content_mailing_id === mailingId ? mailing : mailingRow(ctx, row.content_mailing_id));
      compiled.set(row.content_mailing_id, parts);
    }
    const v = messageValues(mailing, names, row);
    return composed(mailing, v, {
      subject: parts.subject(v),
      text: parts.plaintext(v),
      html: row.delivery_type === 't' ? '' : parts.html(v),
    });
  };
}

/** What a field shows in a test send without a member: a value of its type, plainly a sample. */
function sampleValue(f: FieldRecord): unknown {
  switch (f.field_type) {
    case 'text':
      return f.options?.[0] ?? `[${f.display_name}]`;
    case 'text[]':
      return f.options?.length ? [f.options[0]] : [`[${f.display_name}]`];
    case 'numeric':
      return 42;
    case 'boolean':
      return true;
    case 'date':
      return '2026-01-15';
    case 'timestamp':
      return '2026-01-15 09:30:00';
  }
}

/** The values a mailing is rendered with outside a send: a member's, or every field's sample. */
function valuesFor(ctx: Ctx, m: MailingRow, memberEmail: string | undefined, fallbackEmail: string) {
  const catalog = FieldCatalog.of(ctx);
  const names = Object.fromEntries([...catalog.byId.values()].map((f) => [f.field_id, f.shortcut_name]));
  const sent = { account_id: m.account_id, mailing_id: m.mailing_id, merge_fields: JSON.stringify(names) };
  if (memberEmail !== undefined) {
    const member = rowByEmail(ctx, memberEmail.trim().toLowerCase());
    if (!member || member.deleted_at)
      throw badRequest(`member_email: no member with the address ${memberEmail}`, { field: 'member_email' });
    return { sent, row: { member_id: member.member_id, email: member.email, merge_values: member.field_values } };
  }
  const samples = Object.fromEntries([...catalog.byId.values()].map((f) => [f.field_id, sampleValue(f)]));
  return { sent, row: { member_id: 0, email: fallbackEmail, merge_values: JSON.stringify(samples) } };
}

// ---------------------------------------------------------------- test sends

export interface TestSendInput {
  recipient_emails: string[];
  /** Whose values personalize the message; absent: each field's sample value. */
  member_email?: string;
}

export interface QueuedMail {
  mail_id: number;
  to: string;
  subject: string;
  message_id: string;
}

/** POST /mailings/{id}/test: queues the mailing's content, `[Test] `-prefixed, to each address. */
export function sendTest(ctx: Ctx, mailingId: number, input: TestSendInput): QueuedMail[] {
  return inTransaction(ctx.db, () => {
    // The mailing first: another account's id is a 404 whether or not mail can go out.
    const m = mailingRow(ctx, mailingId);
    requireMail(ctx);
    const to = [...new Set(input.recipient_emails.map((e) => e.trim().toLowerCase()))];
    const { sent, row } = valuesFor(ctx, m, input.member_email, to[0]);
    const message = composeMailing(m, new RenderedMessage(sent, m, row), { subjectPrefix: '[Test] ' });
    return to.map((address) => {
      const id = queue(ctx, { kind: 'test', to: address, mailing_id: m.mailing_id, member_id: row.member_id || null, message });
      return { mail_id: id, to: address, subject: message.subject, message_id: messageIdOf(ctx, id) };
    });
  });
}

const messageIdOf = (ctx: Ctx, mailId: number) =>
  stmt(ctx.db, 'SELECT message_id FROM mail_outbox WHERE mail_id = ?').pluck().get(mailId) as string;

// ---------------------------------------------------------------- heads-ups and allowed sends

/**
 * Queues a starting mailing's heads-up copies (its content with sample values). Answers
 * false when no SMTP server is set, and the heads-ups stay simulated (sent at the start).
 */
export function queueHeadsUps(ctx: Ctx, m: MailingRow): boolean {
  if (!mailSettings(ctx.db)) return false;
  const emails = stmt(ctx.db, 'SELECT email FROM mailing_headsup WHERE mailing_id = ? ORDER BY email')
    .pluck()
    .all(m.mailing_id) as string[];
  if (emails.length === 0) return true;
  const { sent, row } = valuesFor(ctx, m, undefined, emails[0]);
  const message = composeMailing(m, new RenderedMessage(sent, m, row));
  for (const email of emails) queue(ctx, { kind: 'headsup', to: email, mailing_id: m.mailing_id, message });
  return true;
}

/**
 * Queues the messages of one send batch (members after `after`, up to `upTo`) whose
 * address an allow pattern matches. Nothing at all without a pattern: the send loop pays
 * one lookup of a WeakMap. The batch's rows are read along the primary key.
 */
export function queueAllowedSends(ctx: Ctx, mailingId: number, after: number, upTo: number): number {
  const settings = mailSettings(ctx.db);
  if (!settings || settings.allow.length === 0) return 0;
  const globs = settings.allow.map(allowGlob);
  const now = stamp(ctx.clock.now());
  return stmt(
    ctx.db,
    `INSERT INTO mail_outbox (account_id, kind, mailing_id, member_id, to_email, message_id, next_attempt_at, created_at)
     SELECT ?, 'send', mm.mailing_id, mm.member_id, mm.email, ${MESSAGE_ID_SQL}, ?, ?
       FROM mailing_messages mm
      WHERE mm.mailing_id = ? AND mm.member_id > ? AND mm.member_id <= ?
        AND EXISTS (SELECT 1 FROM json_each(?) WHERE lower(mm.email) GLOB json_each.value)`,
  ).run(ctx.accountId, now, now, mailingId, after, upTo, JSON.stringify(globs)).changes;
}

// ---------------------------------------------------------------- opt-in confirmations

export const DEFAULT_OPT_IN_SUBJECT = 'Please confirm your subscription';
export const DEFAULT_OPT_IN_MESSAGE = `Hello,

You (or someone using [rsvp_email]) asked to receive e-mail from [rsvp_name].
Please confirm that you want it: [opt_in_url]

If you did not ask for it, opt out here: [opt_out_url]`;

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Queues the opt-in confirmation of a signup: the spec's [rsvp_name], [rsvp_email],
 * [opt_in_url] and [opt_out_url] filled. A message with HTML in it is sent as HTML (and
 * its text without tags); plain text is sent as text, and as HTML with its links made links.
 */
export function queueConfirmation(ctx: Ctx, memberId: number, email: string, input: { opt_in_subject?: string; opt_in_message?: string }) {
  const settings = mailSettings(ctx.db);
  if (!settings) return;
  const token = randomBytes(16).toString('hex');
  stmt(ctx.db, 'INSERT INTO signup_confirmations (token, account_id, member_id, created_at) VALUES (?, ?, ?, ?)').run(
    token,
    ctx.accountId,
    memberId,
    stamp(ctx.clock.now()),
  );
  const account = stmt(ctx.db, 'SELECT account_name, account_rsvp_name, account_rsvp_email FROM accounts WHERE account_id = ?').get(
    ctx.accountId,
  ) as {
    account_name: string;
    account_rsvp_name: string | null;
    account_rsvp_email: string | null;
  };
  const base = settings.publicUrl ?? VIEW_BASE;
  const urls = { opt_in_url: `${base}${CONFIRM_PATH}${token}`, opt_out_url: `${base}${OPTOUT_PATH}${token}` };
  const rsvpName = account.account_rsvp_name ?? account.account_name;
  const rsvpEmail = account.account_rsvp_email ?? `no-reply@${MESSAGE_ID_DOMAIN}`;
  const template = input.opt_in_message ?? DEFAULT_OPT_IN_MESSAGE;
  const isHtml = /<[a-z][^>]*>/i.test(template);
  const fill = (text: string, esc: (s: string) => string, link: (url: string) => string) =>
    text
      .replaceAll('[rsvp_name]', esc(rsvpName))
      .replaceAll('[rsvp_email]', esc(rsvpEmail))
      .replaceAll('[opt_in_url]', link(urls.opt_in_url))
      .replaceAll('[opt_out_url]', link(urls.opt_out_url));
  const html = isHtml
    ? fill(template, escapeHtml, escapeHtml)
    : `<p>${fill(escapeHtml(template), escapeHtml, (u) => `<a href="${escapeHtml(u)}">${escapeHtml(u)}</a>`)
        .replace(/\r?\n\r?\n/g, '</p><p>')
        .replace(/\r?\n/g, '<br>')}</p>`;
  const text = isHtml
    ? fill(
        template.replace(/<[^>]*>/g, ''),
        (s) => s,
        (u) => u,
      )
    : fill(
        template,
        (s) => s,
        (u) => u,
      );
  queue(ctx, {
    kind: 'confirm',
    to: email,
    member_id: memberId,
    message: {
      from: account.account_rsvp_name ? `"${rsvpName.replaceAll('"', '')}" <${rsvpEmail}>` : rsvpEmail,
      reply_to: null,
      subject: input.opt_in_subject ?? DEFAULT_OPT_IN_SUBJECT,
      text,
      html,
      list_unsubscribe: [urls.opt_out_url, `mailto:${UNSUBSCRIBE_MAILBOX}?subject=unsubscribe-${ctx.accountId}-confirm-${memberId}`],
      webview_url: null,
    },
  });
}

/** Where `amsg serve` answers a confirmation's links (outside the route table: a mail client clicks them, with no key). */
export const CONFIRM_PATH = '/_mail/confirm/';
export const OPTOUT_PATH = '/_mail/optout/';

/**
 * A click on a confirmation's link: confirms the signup, or opts the member out. Answers
 * what happened, for the page the link shows; an unknown token is null. A second click
 * changes nothing.
 */
export function followConfirmation(
  ctx: Omit<Ctx, 'actor' | 'accountId'> & { actorFor: (accountId: number) => Ctx['actor'] },
  token: string,
  action: 'confirm' | 'optout',
): { email: string; already: boolean } | null {
  return inTransaction(ctx.db, () => {
    const c = stmt(ctx.db, 'SELECT account_id, member_id, confirmed_at, opted_out_at FROM signup_confirmations WHERE token = ?').get(
      token,
    ) as { account_id: number; member_id: number; confirmed_at: string | null; opted_out_at: string | null } | undefined;
    if (!c) return null;
    const email = stmt(ctx.db, 'SELECT email FROM members WHERE member_id = ?').pluck().get(c.member_id) as string | undefined;
    if (email === undefined) return null;
    const now = stamp(ctx.clock.now());
    if (action === 'confirm') {
      if (c.confirmed_at) return { email, already: true };
      stmt(ctx.db, 'UPDATE signup_confirmations SET confirmed_at = ? WHERE token = ?').run(now, token);
      return { email, already: false };
    }
    if (c.opted_out_at) return { email, already: true };
    stmt(ctx.db, 'UPDATE signup_confirmations SET opted_out_at = ? WHERE token = ?').run(now, token);
    setStatuses({ db: ctx.db, clock: ctx.clock, actor: ctx.actorFor(c.account_id), accountId: c.account_id }, [c.member_id], 'o');
    return { email, already: false };
  });
}

// ---------------------------------------------------------------- the log

export const MAIL_STATES = ['queued', 'sending', 'sent', 'failed'] as const;
export type MailState = (typeof MAIL_STATES)[number];

export interface MailLogRow {
  mail_id: number;
  kind: MailKind;
  mailing_id: number | null;
  member_id: number | null;
  to: string;
  subject: string | null;
  message_id: string;
  state: MailState;
  attempts: number;
  last_reply: string | null;
  bounced: boolean;
  created_at: string;
  sent_at: string | null;
  next_attempt_at: string | null;
}

const LOG = `SELECT mail_id, kind, mailing_id, member_id, to_email, subject, message_id, status, lease_pid, attempts, last_reply, bounced,
                    created_at, sent_at, next_attempt_at FROM mail_outbox`;

function toLogRow(r: {
  mail_id: number;
  kind: MailKind;
  mailing_id: number | null;
  member_id: number | null;
  to_email: string;
  subject: string | null;
  message_id: string;
  status: string;
  lease_pid: number | null;
  attempts: number;
  last_reply: string | null;
  bounced: number;
  created_at: string;
  sent_at: string | null;
  next_attempt_at: string | null;
}): MailLogRow {
  const state: MailState = r.status === 's' ? 'sent' : r.status === 'f' ? 'failed' : r.lease_pid !== null ? 'sending' : 'queued';
  return {
    mail_id: r.mail_id,
    kind: r.kind,
    mailing_id: r.mailing_id,
    member_id: r.member_id,
    to: r.to_email,
    subject: r.subject,
    message_id: r.message_id,
    state,
    attempts: r.attempts,
    last_reply: r.last_reply,
    bounced: r.bounced === 1,
    created_at: r.created_at,
    sent_at: r.sent_at,
    next_attempt_at: state === 'queued' ? r.next_attempt_at : null,
  };
}

export interface MailFilter {
  /** Only messages refused for good or out of attempts (state failed), along mail_outbox_failed. */
  failed?: boolean;
}

const logWhere = (f: MailFilter) => `account_id = ?${f.failed ? " AND status = 'f'" : ''}`;

/** GET /mail/log: the account's outgoing mail, newest first, one window (along mail_outbox_account, or mail_outbox_failed). */
export function listMail(ctx: Ctx, w: Window = {}, f: MailFilter = {}): MailLogRow[] {
  const { limit, offset } = windowOf(w);
  return (
    stmt(ctx.db, `${LOG} WHERE ${logWhere(f)} ORDER BY mail_id DESC ${LIMIT_OFFSET}`).all(ctx.accountId, limit, offset) as Parameters<
      typeof toLogRow
    >[0][]
  ).map(toLogRow);
}

export function countMail(ctx: Ctx, f: MailFilter = {}): number {
  return stmt(ctx.db, `SELECT COUNT(*) FROM mail_outbox WHERE ${logWhere(f)}`)
    .pluck()
    .get(ctx.accountId) as number;
}

/** Whether anything is due or held by a process (a deliverer looks further only then). */
export function anyMailDue(ctx: Pick<Ctx, 'db' | 'clock'>): boolean {
  return (
    stmt(ctx.db, "SELECT 1 FROM mail_outbox WHERE status = 'q' AND next_attempt_at <= ? LIMIT 1").get(stamp(ctx.clock.now())) !==
      undefined || stmt(ctx.db, 'SELECT 1 FROM mail_outbox WHERE lease_pid IS NOT NULL LIMIT 1').get() !== undefined
  );
}
