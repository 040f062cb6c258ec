import * as s from '../schema.js';
import { route, type Route } from '../route.js';
import { listParams, windowedList } from './lists.js';
import { atD } from '../codecs.js';
import * as reports from '../../service/mailings/reports.js';
import type { Ctx } from '../../service/context.js';

const mailingId = s.object({ mailing_id: s.idText() });

/** A list row on the wire: its times as `@D:` (the rows are otherwise the service's). */
function encodeRow<T extends { timestamp?: string | null; member_since?: string }>(row: T): T {
  const out = { ...row };
  if ('timestamp' in out) out.timestamp = atD(out.timestamp);
  if ('member_since' in out) out.member_since = atD(out.member_since) as string;
  return out;
}

const encodeList = (v: unknown[] | number) => (typeof v === 'number' ? v : (v as { timestamp?: string }[]).map(encodeRow));

/** One list of a mailing's response: GET /{account_id}/response/{mailing_id}/{name}. */
function responseList(
  name: string,
  summary: string,
  item: string,
  list: (ctx: Ctx, id: number, q: reports.ListQuery) => unknown[] | number,
): Route {
  return windowedList({
    op: `response.${name}`,
    path: `/{account_id}/response/{mailing_id}/${name}`,
    id: 'mailing_id',
    summary,
    extension: true,
    item,
    list: (ctx, id, window) => list(ctx, id, window) as { timestamp?: string }[],
    count: (ctx, id) => list(ctx, id, { count: true }) as number,
    encode: encodeRow,
  });
}

// The spec lists no response endpoints; these follow the real service's /response,
// whose shapes its official clients parse.
export const reportRoutes: Route[] = [
  route({
    op: 'response.summary',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/response',
    summary: "The account's response by month: its sent mailings (test mailings and forwards left out) by the month their send started",
    extension: true,
    query: s.object({
      range: s.optional(s.string({ hint: 'YYYY-MM-DD~YYYY-MM-DD (either side may be empty; one date is that day)' })),
      include_archived: s.optional(s.flag()),
    }),
    returns:
      'array of {account_id, month, year, mailings, sent, delivered, bounced, opened, clicked_unique, clicked, forwarded, shared, share_clicked, webview_shared, webview_share_clicked, opted_out, signed_up}',
    handler: ({ ctx, query }) => reports.accountResponse(ctx, query),
  }),
  route({
    op: 'response.mailing',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/response/{mailing_id}',
    summary: "One mailing's response counts (a split test's whole, or one variant's)",
    extension: true,
    params: mailingId,
    returns:
      '{name, subject, recipient_count, sent, delivered, bounced, opened, clicked_unique, clicked, forwarded, opted_out, signed_up, shared, share_clicked, webview_shared, webview_share_clicked, in_progress}',
    handler: ({ ctx, params }) => reports.mailingResponse(ctx, params.mailing_id),
  }),
  route({
    op: 'response.timeline',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/response/{mailing_id}/timeline',
    summary:
      "A mailing's unique opens and clicks in each minute, hour or day since its send started (kept counts: the cost of the buckets, not of the opens)",
    extension: true,
    params: mailingId,
    query: s.object({ bucket: s.optional(s.oneOf(reports.TIMELINE_BUCKETS)) }),
    returns: '{started_at, bucket, bucket_seconds, buckets: [{at, opens, clicks}]}',
    handler: ({ ctx, params, query }) => {
      const t = reports.responseTimeline(ctx, params.mailing_id, query.bucket);
      return { ...t, started_at: atD(t.started_at), buckets: t.buckets.map((b) => ({ ...b, at: atD(b.at) })) };
    },
  }),
  responseList('sends', 'The members a mailing was sent to', 'response member with timestamp', reports.sends),
  responseList('in_progress', 'The members a mailing is still being sent to', 'response member', reports.inProgress),
  route({
    op: 'response.deliveries',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/response/{mailing_id}/deliveries',
    summary: 'Delivery outcome of each message: delivered, or a hard or soft bounce',
    extension: true,
    params: mailingId,
    query: s.object({ ...listParams, result: s.optional(s.oneOf(reports.DELIVERY_RESULTS)) }),
    returns: 'array of response member with timestamp, delivery_type, mailing_id, mailing_name; or an integer with count=true',
    handler: ({ ctx, params, query }) => encodeList(reports.deliveries(ctx, params.mailing_id, query)),
  }),
  responseList('opens', 'The members who opened a mailing', 'response member with timestamp', reports.opens),
  responseList('optouts', "The members who opted out through a mailing's link", 'response member with timestamp', reports.optouts),
  responseList(
    'signups',
    'The members who signed up through a mailing',
    'response member with timestamp and ref_member_id',
    reports.signups,
  ),
  responseList('links', "A mailing's links with their unique and total clicks", 'link', reports.links),
  route({
    op: 'response.clicks',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/response/{mailing_id}/clicks',
    summary: 'Every click in a mailing, optionally of one member or on one link',
    extension: true,
    params: mailingId,
    query: s.object({ ...listParams, member_id: s.optional(s.idText()), link_id: s.optional(s.idText()) }),
    returns: 'array of response member with timestamp and link_id, or an integer with count=true',
    handler: ({ ctx, params, query }) => encodeList(reports.clicks(ctx, params.mailing_id, query)),
  }),
  responseList('forwards', 'Each forward of a mailing by a member', '{timestamp, forward_mailing_id, member_id, email}', reports.forwards),
  responseList('shares', 'The members who shared a mailing', 'response member with timestamp, network, share_clicks', reports.shares),
  responseList('customer_shares', "Shares of a mailing's public web view", 'customer share', (ctx, id, q) =>
    reports.customerShares(ctx, id, q, 'webview_shared'),
  ),
  responseList('customer_share_clicks', "Clicks on shares of a mailing's public web view", 'customer share click', (ctx, id, q) =>
    reports.customerShares(ctx, id, q, 'webview_share_clicked'),
  ),
];
