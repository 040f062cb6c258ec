/**
 * A mailing as a recipient would see it (GET /mailings/{id}/preview, the console's
 * mailing page), before or after its send: the message a member got (rendered from
 * what the send froze, as GET /messages/{member_id} answers), the message a member
 * would get now (their current fields), or one with sample values in every tag; with
 * the headers a real send would carry.
 */
import { stmt } from '../../store/statements.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from '../audience/fields.js';
import { memberRow } from '../audience/members.js';
import { mailingRow, optoutUrl, RenderedMessage, type MailingRow } from './mailings.js';

export type PreviewSource = 'sent' | 'member' | 'sample';

export interface Preview {
  member_id: number | null;
  source: PreviewSource;
  subject: string;
  html_body: string;
  plaintext: string;
  /** [name, value] in the order a message carries them. */
  headers: [string, string][];
}

/** The address a sample message goes to. */
export const SAMPLE_EMAIL = 'member@example.com';

export function mailingPreview(ctx: Ctx, mailingId: number, memberId?: number): Preview {
  const mailing = mailingRow(ctx, mailingId);
  const fieldNames = () => Object.fromEntries([...FieldCatalog.of(ctx).byId.values()].map((f) => [f.field_id, f.shortcut_name]));
  if (memberId !== undefined) {
    const sent = stmt(
      ctx.db,
      'SELECT member_id, content_mailing_id, email, merge_values, delivery_type, sent, built_at FROM mailing_messages WHERE mailing_id = ? AND member_id = ?',
    ).get(mailingId, memberId) as
      | {
          member_id: number;
          content_mailing_id: number;
          email: string;
          merge_values: string;
          delivery_type: string;
          sent: string | null;
          built_at: string;
        }
      | undefined;
    if (sent) {
      const content = sent.content_mailing_id === mailingId ? mailing : mailingRow(ctx, sent.content_mailing_id);
      const message = new RenderedMessage(mailing, content, sent);
      return preview(mailing, message, sent.email, memberId, 'sent', sent.delivery_type === 't', sent.sent ?? sent.built_at);
    }
    const member = memberRow(ctx, memberId, true);
    const message = new RenderedMessage({ ...mailing, merge_fields: JSON.stringify(fieldNames()) }, mailing, {
      member_id: memberId,
      email: member.email,
      merge_values: member.field_values,
    });
    const textOnly = mailing.plaintext_only === 1 || member.plaintext_preferred === 1;
    return preview(mailing, message, member.email, memberId, 'member', textOnly);
  }
  // Every field a value that shows which field it is: "[First Name]".
  const samples = Object.fromEntries([...FieldCatalog.of(ctx).byId.values()].map((f) => [f.field_id, `[${f.display_name}]`]));
  const message = new RenderedMessage({ ...mailing, merge_fields: JSON.stringify(fieldNames()) }, mailing, {
    member_id: 0,
    email: SAMPLE_EMAIL,
    merge_values: JSON.stringify(samples),
  });
  return preview(mailing, message, SAMPLE_EMAIL, null, 'sample', mailing.plaintext_only === 1);
}

function preview(
  mailing: MailingRow,
  message: RenderedMessage,
  to: string,
  memberId: number | null,
  source: PreviewSource,
  textOnly: boolean,
  sentAt?: string,
): Preview {
  const subject = message.subject();
  const html = textOnly ? '' : message.html();
  const plaintext = message.plaintext();
  return {
    member_id: memberId,
    source,
    subject,
    html_body: html,
    plaintext,
    headers: messageHeaders(mailing, { to, memberId: memberId ?? 0, subject, html: html !== '', text: plaintext !== '', sentAt }),
  };
}

/** RFC 5322 date text of a stored timestamp (`Tue, 03 Mar 2026 04:05:06 +0000`). */
function rfc5322(stored: string): string {
  const d = new Date(`${stored.slice(0, 19)}Z`);
  return d.toUTCString().replace('GMT', '+0000');
}

/**
 * The headers the message would carry: the envelope of the mailing, the member's
 * address, the one-click unsubscribe (RFC 8058) pointing at the opt-out link the tags
 * use, and the MIME structure its parts make.
 */
export function messageHeaders(
  mailing: MailingRow,
  m: { to: string; memberId: number; subject: string; html: boolean; text: boolean; sentAt?: string },
): [string, string][] {
  const domain = mailing.sender.includes('@') ? mailing.sender.slice(mailing.sender.lastIndexOf('@') + 1) : 'amsg.example.com';
  const boundary = `amsg-${mailing.mailing_id}-${m.memberId}`;
  const headers: [string, string][] = [
    ['From', mailing.sender],
    ...(mailing.reply_to ? [['Reply-To', mailing.reply_to] as [string, string]] : []),
    ['To', m.to],
    ['Subject', m.subject],
    ...(m.sentAt ? [['Date', rfc5322(m.sentAt)] as [string, string]] : []),
    ['Message-ID', `<${mailing.mailing_id}.${m.memberId}.${mailing.account_id}@${domain}>`],
    ['List-Unsubscribe', `<${optoutUrl(mailing.account_id, mailing.mailing_id, m.memberId)}>`],
    ['List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'],
    ['MIME-Version', '1.0'],
  ];
  if (m.html && m.text) headers.push(['Content-Type', `multipart/alternative; boundary="${boundary}"`]);
  else headers.push(['Content-Type', `${m.html ? 'text/html' : 'text/plain'}; charset=utf-8`]);
  return headers;
}
