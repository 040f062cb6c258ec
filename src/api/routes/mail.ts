import * as s from '../schema.js';
import { route } from '../route.js';
import { atD } from '../codecs.js';
import * as mail from '../../service/mail/outbox.js';
import type { MailLogRow } from '../../service/mail/outbox.js';

const logRow = (r: MailLogRow) => ({
  ...r,
  created_at: atD(r.created_at),
  sent_at: atD(r.sent_at),
  next_attempt_at: atD(r.next_attempt_at),
});

// Real mail out over SMTP (extensions): test sends and the log of what left.
export const mailRoutes = [
  route({
    op: 'mailings.test',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings/{mailing_id}/test',
    summary:
      "Send a test of a mailing over SMTP: its content, subject prefixed [Test], personalized with member_email's values (or each field's sample value), to each address",
    extension: true,
    params: s.object({ mailing_id: s.idText() }),
    body: s.object({
      recipient_emails: s.array(s.email(), { min: 1, max: 50 }),
      member_email: s.optional(s.email()),
    }),
    returns: 'array of {mail_id, to, subject, message_id} (queued; 409 when the server has no SMTP server)',
    handler: ({ ctx, params, body }) => mail.sendTest(ctx, params.mailing_id, body),
  }),
  route({
    op: 'mail.log',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mail/log',
    summary: 'The mail that went (or is going) out over SMTP, newest first: to, subject, state, attempts, the last server reply',
    extension: true,
    query: s.object({ ...s.windowParams(), count: s.optional(s.flag()), failed: s.optional(s.flag()) }),
    returns:
      'array of {mail_id, kind, mailing_id, member_id, to, subject, message_id, state (queued, sending, sent, failed), attempts, last_reply, bounced, created_at, sent_at, next_attempt_at}, or an integer with count=true; failed=true: only the failed ones',
    handler: ({ ctx, query }) => {
      const filter = { failed: query.failed };
      return query.count ? mail.countMail(ctx, filter) : mail.listMail(ctx, query, filter).map(logRow);
    },
  }),
];
