/**
 * The message a recipient gets over SMTP, decided in one place: what the deliverer
 * (deliver.ts) hands to nodemailer, and the headers the console's preview shows
 * (GET /mailings/{id}/preview). Pure: no database, no nodemailer, so the preview loads none
 * of the SMTP code and the two cannot drift (test/mail/smtp.test.ts compares the preview's
 * headers with those of a message a real SMTP server received).
 *
 * Decided here: From and Reply-To (the mailing's sender and reply_to), To, Subject, the
 * List-Unsubscribe targets with List-Unsubscribe-Post (RFC 8058), the web view link put
 * first in both parts, a text part made from the HTML when the message has none, and so
 * the MIME structure. Left to nodemailer: the Message-ID's place and form on the wire (its
 * value is the outbox row's), the Date's, the MIME boundary and the transfer encoding.
 */

/** A message as composed when it was queued (a mailing's own send is composed at delivery, the same way). */
export interface ComposedMessage {
  from: string;
  reply_to: string | null;
  subject: string;
  text: string;
  html: string;
  /** The List-Unsubscribe targets: the opt-out link, then a mailto. */
  list_unsubscribe: string[];
  webview_url: string | null;
}

/** What goes out for one recipient: nodemailer's message fields, less the Message-ID and Date of the send. */
export interface OutgoingMail {
  from: string;
  replyTo?: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  headers: { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': string };
}

/** The message for `to`: the web view link first in each part, both parts when there is HTML, the unsubscribe headers. */
export function outgoingMail(to: string, m: ComposedMessage): OutgoingMail {
  let { text, html } = m;
  if (m.webview_url) {
    if (text && !text.includes(m.webview_url)) text = `View this message in a browser: ${m.webview_url}\n\n${text}`;
    if (html && !html.includes(m.webview_url)) html = `<p><a href="${m.webview_url}">View this message in a browser</a></p>\n${html}`;
  }
  // Both parts when there is HTML: a client shows the one it can.
  if (!text && html)
    text = html
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
      .replace(/<[^>]*>/g, '')
      .trim();
  return {
    from: m.from,
    ...(m.reply_to ? { replyTo: m.reply_to } : {}),
    to,
    subject: m.subject,
    text,
    ...(html ? { html } : {}),
    headers: {
      'List-Unsubscribe': m.list_unsubscribe.map((u) => `<${u}>`).join(', '),
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

/** RFC 5322 date text, as nodemailer writes it (`Tue, 03 Mar 2026 04:05:06 +0000`). */
export const rfc5322Date = (d: Date) => d.toUTCString().replace('GMT', '+0000');

/**
 * The header lines of the message, unfolded and undecoded, in the order nodemailer writes
 * them (its own headers after the custom ones). `date` absent: no Date line (a message not
 * sent yet). Content-Type names the structure without the boundary nodemailer picks; a
 * single-part message's Content-Transfer-Encoding (nodemailer's pick from the content) is
 * not among them.
 */
export function mailHeaders(mail: OutgoingMail, messageId: string, date?: Date): [string, string][] {
  return [
    ['List-Unsubscribe', mail.headers['List-Unsubscribe']],
    ['List-Unsubscribe-Post', mail.headers['List-Unsubscribe-Post']],
    ['From', mail.from],
    ['To', mail.to],
    ...(mail.replyTo ? [['Reply-To', mail.replyTo] as [string, string]] : []),
    ['Subject', mail.subject],
    ['Message-ID', messageId],
    ...(date ? [['Date', rfc5322Date(date)] as [string, string]] : []),
    ['MIME-Version', '1.0'],
    ['Content-Type', mail.html ? 'multipart/alternative' : 'text/plain; charset=utf-8'],
  ];
}
