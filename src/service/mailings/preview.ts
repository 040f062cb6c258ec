/**
 * A mailing as a recipient would see it (GET /mailings/{id}/preview, the console's
 * mailing page), before or after its send: the message a member got (rendered from
 * what the send froze, as GET /messages/{member_id} answers), the message a member
 * would get now (their current fields), or one with sample values in every tag; with
 * the headers a real send over SMTP carries (src/service/mail/message.ts decides them for
 * both; the Message-ID is a stand-in: a real one is drawn when the message is queued).
 */
import { stmt } from '../../store/statements.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from '../audience/fields.js';
import { memberRow } from '../audience/members.js';
import { composeMailing, MESSAGE_ID_DOMAIN } from '../mail/outbox.js';
import { mailHeaders, outgoingMail } from '../mail/message.js';
import { mailingRow, RenderedMessage, type MailingRow } from './mailings.js';

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
  const composed = composeMailing(mailing, message, { textOnly });
  return {
    member_id: memberId,
    source,
    subject: composed.subject,
    html_body: composed.html,
    plaintext: composed.text,
    // The headers of the message as the SMTP deliverer would send it: one function decides both.
    headers: mailHeaders(
      outgoingMail(to, composed),
      `<preview.${mailing.mailing_id}.${memberId ?? 0}@${MESSAGE_ID_DOMAIN}>`,
      sentAt ? new Date(`${sentAt.slice(0, 19)}Z`) : undefined,
    ),
  };
}
