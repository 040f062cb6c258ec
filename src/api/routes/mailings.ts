import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as menc from '../mailing-encode.js';
import { ApiError } from '../../errors.js';
import * as mailings from '../../service/mailings/mailings.js';
import * as triggers from '../../service/mailings/triggers.js';
import * as engagement from '../../service/mailings/engagement.js';
import * as preview from '../../service/mailings/preview.js';
import { checkHtml } from '../../service/mailings/html-check.js';
import * as reports from '../../service/mailings/reports.js';
import { getMemberByEmail } from '../../service/audience/members.js';
import { MAILING_STATUSES, MAILING_TYPES, MESSAGE_TYPES, STATUS_WORDS } from '../../service/mailings/mailings.js';

const mailingId = s.object({ mailing_id: s.idText() });
const ids = () => s.optional(s.array(s.id()));
const emails = (opts: { min?: number } = {}) => s.array(s.email(), opts);

const recipients = {
  recipient_groups: ids(),
  recipient_subscriptions: ids(),
  recipient_searches: ids(),
  recipient_segments: ids(),
  recipient_emails: s.optional(emails()),
  heads_up_emails: s.optional(emails()),
};

const templates = {
  subject: s.optional(s.string()),
  html_body: s.optional(s.string()),
  plaintext: s.optional(s.string()),
};

export const mailingRoutes = [
  route({
    op: 'mailings.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings',
    summary: 'List mailings (canceled and archived ones only when asked for)',
    query: s.object({
      include_archived: s.optional(s.flag()),
      mailing_types: s.optional(s.letterList(MAILING_TYPES)),
      mailing_statuses: s.optional(s.letterList(MAILING_STATUSES)),
      is_scheduled: s.optional(s.flag()),
      with_html_body: s.optional(s.flag()),
      with_plaintext: s.optional(s.flag()),
      // Extension: each mailing's kept response figures (the console's list), null when never sent.
      with_response: s.optional(s.flag()),
    }),
    returns:
      'array of mailing (list shape; with_response adds response: {sent, delivered, opened, clicked_unique, bounced, opted_out} or null)',
    handler: ({ ctx, query }) => {
      const list = mailings.listMailings(ctx, {
        types: query.mailing_types?.length ? query.mailing_types : ['m', 't'],
        statuses: query.mailing_statuses?.length ? query.mailing_statuses : undefined,
        includeArchived: query.include_archived,
        scheduledOnly: query.is_scheduled,
      });
      const figures = query.with_response
        ? reports.responseOf(
            ctx,
            list.map((m) => m.mailing_id),
          )
        : undefined;
      return list.map((m) => ({
        ...menc.mailing(m, { html: query.with_html_body, plaintext: query.with_plaintext }),
        ...(figures ? { response: figures.get(m.mailing_id) ?? null } : {}),
      }));
    },
  }),
  route({
    op: 'mailings.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings',
    summary: 'Create a mailing (pending, or an unapproved draft with status u), sent at send_at or at once',
    extension: true,
    body: s.object({
      name: s.string({ min: 1, max: 255 }),
      subject: s.string({ min: 1, max: 998 }),
      sender: s.string({ min: 1, max: 255 }),
      reply_to: s.optional(s.nullable(s.email())),
      html_body: s.optional(s.string()),
      plaintext: s.optional(s.string()),
      plaintext_only: s.optional(s.boolean()),
      mailing_type: s.optional(s.oneOf(['m', 't', 's', 'c'])),
      send_at: s.optional(s.nullable(s.dateTime())),
      status: s.optional(s.oneOf(['p', 'u'])),
      ...recipients,
      recipient_member_ids: ids(),
      suppressed_searches: ids(),
      suppressed_segments: ids(),
      suppressed_member_ids: ids(),
      split_test: s.optional(
        s.object({
          variants: s.array(
            s.object({
              name: s.optional(s.string({ min: 1, max: 255 })),
              subject: s.optional(s.string({ min: 1, max: 998 })),
              html_body: s.optional(s.string()),
              plaintext: s.optional(s.string()),
            }),
            { min: 2, max: 10 },
          ),
          test_percent: s.optional(s.int({ min: 1, max: 100 })),
          test_duration_seconds: s.optional(s.int({ min: 0 })),
        }),
      ),
    }),
    returns: '{mailing_id}',
    handler: ({ ctx, body }) => ({ mailing_id: mailings.createMailing(ctx, body) }),
  }),
  route({
    op: 'mailings.validate',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings/validate',
    summary: 'Check the personalization tags of html_body, plaintext and subject',
    body: s.object(templates),
    returns: 'true; 400 with invalid_tags [{part, tag, line, column, reason}]',
    handler: ({ ctx, body }) => mailings.validateTags(ctx, body),
  }),
  route({
    op: 'mailings.recipients',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings/recipients',
    summary: 'Names for lists of group, segment and subscription ids',
    body: s.object({
      recipient_groups: ids(),
      recipient_segments: ids(),
      recipient_subscriptions: ids(),
      suppressed_segments: ids(),
    }),
    returns: '{recipient_groups, recipient_segments, recipient_subscriptions, suppressed_segments}',
    handler: ({ ctx, body }) => mailings.recipientNames(ctx, body),
  }),
  route({
    op: 'mailings.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}',
    summary: 'A mailing in detail',
    params: mailingId,
    query: s.object({
      include_segment_names: s.optional(s.flag()),
      include_subscription_names: s.optional(s.flag()),
    }),
    returns: 'mailing (detail shape)',
    handler: ({ ctx, params, query }) =>
      menc.mailingDetail(
        mailings.mailingDetail(ctx, params.mailing_id, {
          segmentNames: query.include_segment_names,
          subscriptionNames: query.include_subscription_names,
        }),
      ),
  }),
  route({
    op: 'mailings.setStatus',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/mailings/{mailing_id}',
    summary: 'Cancel, pause or resume (ready) a mailing',
    params: mailingId,
    body: s.object({ status: s.oneOf(STATUS_WORDS) }),
    returns: 'mailing (list shape)',
    handler: ({ ctx, params, body }) => menc.mailing(mailings.changeStatus(ctx, params.mailing_id, body.status)),
  }),
  route({
    op: 'mailings.archive',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/mailings/{mailing_id}',
    summary: 'Archive a mailing (its status stays)',
    params: mailingId,
    returns: 'true',
    handler: ({ ctx, params }) => mailings.archiveMailing(ctx, params.mailing_id),
  }),
  route({
    op: 'mailings.cancel',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/mailings/cancel/{mailing_id}',
    summary: 'Cancel a pending or paused mailing',
    params: mailingId,
    returns: 'true',
    handler: ({ ctx, params }) => mailings.cancelMailing(ctx, params.mailing_id),
  }),
  route({
    op: 'mailings.resend',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings/{mailing_id}',
    summary: "Send a mailing's content again, to a new audience",
    params: mailingId,
    body: s.object({
      sender: s.optional(s.string({ min: 1, max: 255 })),
      ...recipients,
      suppression_segments: ids(),
    }),
    returns: '{mailing_id}',
    handler: ({ ctx, params, body }) => mailings.resendMailing(ctx, params.mailing_id, body),
  }),
  route({
    op: 'mailings.forward',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/forwards/{mailing_id}/{member_id}',
    summary: 'A member forwards its message; new addresses join with status f',
    params: s.object({ mailing_id: s.idText(), member_id: s.idText() }),
    body: s.object({
      heads_up_emails: s.optional(emails()),
      recipient_emails: emails({ min: 1 }),
      // The real service's documented parameter: the sender's words above the forwarded content.
      note: s.optional(s.string({ max: 10_000 })),
    }),
    returns: '{mailing_id}',
    handler: ({ ctx, params, body }) => mailings.forwardMailing(ctx, params.mailing_id, params.member_id, body),
  }),
  route({
    op: 'mailings.winner',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/mailings/{mailing_id}/winner/{winner_id}',
    summary: "Declare a split test's winner",
    params: s.object({ mailing_id: s.idText(), winner_id: s.idText() }),
    body: s.object({}),
    returns: 'true',
    handler: ({ ctx, params }) => mailings.declareWinner(ctx, params.mailing_id, params.winner_id),
  }),
  route({
    op: 'mailings.members',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/members',
    summary: 'The members a mailing was sent to individually, in member id order (start and end, a window of at most 500: local extension)',
    params: mailingId,
    query: s.object({ ...s.windowParams() }),
    returns: 'array of member',
    handler: ({ ctx, params, query }) => mailings.mailingMembers(ctx, params.mailing_id, query).map(enc.member),
  }),
  route({
    op: 'mailings.message',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/messages/{member_id}',
    summary: "A member's personalized message",
    params: s.object({ mailing_id: s.idText(), member_id: s.idText() }),
    query: s.object({ type: s.optional(s.string()) }),
    returns: 'message {plaintext, subject, html_body, webview_url} or the one key asked for',
    handler: ({ ctx, params, query }) => {
      const type = query.type ?? 'all';
      // The spec answers an unknown type with 500, not 400.
      if (!(MESSAGE_TYPES as readonly string[]).includes(type))
        throw new ApiError(500, `type: "${type}" is not an allowed type (${MESSAGE_TYPES.join(', ')})`, { field: 'type' });
      return mailings.memberMessage(ctx, params.mailing_id, params.member_id, type as mailings.MessageType);
    },
  }),
  route({
    op: 'mailings.preview',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/preview',
    summary:
      'A mailing as a recipient sees it, with the headers a real send carries: the message a member got (source sent), would get now (member), or with sample values (sample, no member_id)',
    extension: true,
    params: mailingId,
    query: s.object({ member_id: s.optional(s.idText()) }),
    returns: '{member_id, source, subject, html_body, plaintext, headers: [[name, value]]}',
    handler: ({ ctx, params, query }) => preview.mailingPreview(ctx, params.mailing_id, query.member_id),
  }),
  route({
    op: 'mailings.htmlCheck',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/html_check',
    summary:
      "How e-mail clients support the mailing's HTML (caniemail data): a score, each client's result, each feature unsupported or partly supported with the clients it fails in",
    extension: true,
    params: mailingId,
    query: s.object({
      member_id: s.optional(s.idText()),
      clients: s.optional(s.string({ min: 1, hint: 'comma-separated names or globs: gmail.*, *.ios, outlook.windows (default *)' })),
    }),
    returns:
      '{score, clients_checked, data_date, clients: [{client, name, status, unsupported, partial}], features: [{feature, title, url, category, support, unsupported_in, partial_in}]}',
    handler: ({ ctx, params, query }) =>
      checkHtml(preview.mailingPreview(ctx, params.mailing_id, query.member_id).html_body, query.clients?.split(',') ?? ['*']),
  }),
  route({
    op: 'mailings.groups',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/groups',
    summary: 'The groups a mailing goes to',
    params: mailingId,
    returns: 'array of group',
    handler: ({ ctx, params }) => mailings.mailingGroups(ctx, params.mailing_id).map(enc.group),
  }),
  route({
    op: 'mailings.subscriptions',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/subscriptions',
    summary: 'The subscriptions a mailing goes to',
    params: mailingId,
    returns: 'array of subscription',
    handler: ({ ctx, params }) => mailings.mailingSubscriptions(ctx, params.mailing_id).map(enc.subscription),
  }),
  route({
    op: 'mailings.searches',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/searches',
    summary: 'The searches (and segments) a mailing goes to',
    params: mailingId,
    returns: 'array of search',
    handler: ({ ctx, params }) => mailings.mailingSearches(ctx, params.mailing_id, 'include').map(enc.search),
  }),
  route({
    op: 'mailings.suppressedSearches',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/suppressed_searches',
    summary: 'The searches (and segments) kept out of a mailing',
    params: mailingId,
    returns: 'array of search',
    handler: ({ ctx, params }) => mailings.mailingSearches(ctx, params.mailing_id, 'suppress').map(enc.search),
  }),
  route({
    op: 'mailings.suppressedMembers',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/suppressed_members',
    summary: 'The members kept out of a mailing, in member id order (start and end, a window of at most 500: local extension)',
    params: mailingId,
    query: s.object({ ...s.windowParams() }),
    returns: 'array of member',
    handler: ({ ctx, params, query }) => mailings.suppressedMembers(ctx, params.mailing_id, query).map(enc.member),
  }),
  route({
    op: 'mailings.headsup',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/mailings/{mailing_id}/headsup',
    summary: 'The heads-up copies of a mailing',
    params: mailingId,
    returns: 'array of heads-up record',
    handler: ({ ctx, params }) => mailings.headsUp(ctx, params.mailing_id).map(menc.headsUp),
  }),

  // ---------------------------------------------------------------- simulation

  route({
    op: 'sim.record',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sim/{kind}',
    summary: 'Simulate an open, click, bounce, share or opt-out of a sent message',
    extension: true,
    params: s.object({ kind: s.oneOf(engagement.ENGAGEMENT_KINDS) }),
    body: s.object({
      mailing_id: s.id(),
      member_id: s.optional(s.id()),
      email: s.optional(s.email()),
      link_id: s.optional(s.id()),
      hard: s.optional(s.boolean()),
    }),
    returns: 'true',
    handler: ({ ctx, params, body }) => {
      if ((body.member_id === undefined) === (body.email === undefined))
        throw s.invalid('member_id', 'give the member as member_id or as email (one of them)');
      const memberId = body.member_id ?? getMemberByEmail(ctx, body.email!).member_id;
      return engagement.recordEngagement(ctx, params.kind, { ...body, member_id: memberId });
    },
  }),

  route({
    op: 'sim.send',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sim/mailing/{mailing_id}',
    summary:
      'Simulate engagement with a whole send: shares (0 to 1) of its messages open, click, bounce, opt out and share, drawn with a seed; one transaction, one webhook event per kind',
    extension: true,
    params: mailingId,
    body: s.object({
      opens: s.optional(s.fraction()),
      clicks: s.optional(s.fraction()),
      bounces: s.optional(s.fraction()),
      optouts: s.optional(s.fraction()),
      shares: s.optional(s.fraction()),
      hard: s.optional(s.boolean()),
      seed: s.optional(s.int({ min: 0, max: 2 ** 32 - 1 })),
    }),
    returns: '{mailing_id, seed, messages, opens, clicks, bounces, optouts, shares}',
    handler: ({ ctx, params, body }) => engagement.simulateSend(ctx, params.mailing_id, body),
  }),

  // ---------------------------------------------------------------- triggers (deprecated)

  route({
    op: 'triggers.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/triggers',
    summary: 'List triggers (deprecated)',
    returns: 'array of trigger',
    handler: ({ ctx }) => triggers.listTriggers(ctx).map(menc.trigger),
  }),
  route({
    op: 'triggers.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/triggers',
    summary: 'Create a trigger over a parent mailing (deprecated service part; local extension)',
    extension: true,
    body: s.object({
      name: s.string({ min: 1, max: 255 }),
      parent_mailing_id: s.id(),
      event_type: s.oneOf(triggers.TRIGGER_EVENT_TYPES),
      field_id: s.optional(s.nullable(s.id())),
      push_offset: s.optional(s.int({ min: 0 })),
      start_ts: s.optional(s.dateTime()),
      signups: s.optional(s.nullable(s.array(s.id()))),
    }),
    returns: 'integer trigger id',
    handler: ({ ctx, body }) => triggers.createTrigger(ctx, body),
  }),
  route({
    op: 'triggers.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/triggers/{trigger_id}',
    summary: 'A trigger (deprecated)',
    params: s.object({ trigger_id: s.idText() }),
    returns: 'trigger',
    handler: ({ ctx, params }) => menc.trigger(triggers.getTrigger(ctx, params.trigger_id)),
  }),
  route({
    op: 'triggers.update',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/triggers/{trigger_id}',
    summary: 'Rename a trigger (deprecated)',
    params: s.object({ trigger_id: s.idText() }),
    body: s.object({ name: s.string({ min: 1, max: 255 }) }),
    returns: 'integer trigger id',
    handler: ({ ctx, params, body }) => triggers.renameTrigger(ctx, params.trigger_id, body.name),
  }),
  route({
    op: 'triggers.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/triggers/{trigger_id}',
    summary: 'Delete a trigger (deprecated)',
    params: s.object({ trigger_id: s.idText() }),
    returns: 'true',
    handler: ({ ctx, params }) => triggers.deleteTrigger(ctx, params.trigger_id),
  }),
  route({
    op: 'triggers.mailings',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/triggers/{trigger_id}/mailings',
    summary: 'The mailings a trigger sent (deprecated)',
    params: s.object({ trigger_id: s.idText() }),
    returns: 'array of mailing',
    handler: ({ ctx, params }) => triggers.triggerMailings(ctx, params.trigger_id).map((m) => menc.mailing(m)),
  }),
  route({
    op: 'triggers.fire',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/triggers/{trigger_id}/members/{member_id}',
    summary: 'Fire a trigger for one member: its parent mailing is sent to them after push_offset (local extension)',
    extension: true,
    params: s.object({ trigger_id: s.idText(), member_id: s.idText() }),
    returns: '{mailing_id}',
    handler: ({ ctx, params }) => triggers.fireTrigger(ctx, params.trigger_id, params.member_id),
  }),
];
