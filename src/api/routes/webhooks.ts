import * as s from '../schema.js';
import { invalid, type Schema } from '../schema.js';
import { route } from '../route.js';
import { atD } from '../codecs.js';
import { RawJson } from '../json-text.js';
import * as webhooks from '../../service/webhooks/webhooks.js';
import {
  DELIVERY_STATUSES,
  EVENT_NAMES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_METHODS,
  type DeliveryRow,
  type AttemptRow,
} from '../../service/webhooks/webhooks.js';

const webhookId = s.object({ webhook_id: s.idText() });
const deliveryId = s.object({ delivery_id: s.idText() });
const event = s.oneOf(EVENT_NAMES);
const url = s.string({ min: 1, max: 2000 });
/** POST or GET, in any case (clients send "post" too). */
const method: Schema<(typeof WEBHOOK_METHODS)[number]> = {
  json: () => ({ type: 'string', enum: [...WEBHOOK_METHODS], description: 'POST (the default) or GET, in any case' }),
  parse(v, path) {
    const upper = typeof v === 'string' ? v.toUpperCase() : v;
    if (!(WEBHOOK_METHODS as readonly unknown[]).includes(upper)) throw invalid(path, `must be POST or GET, got ${s.preview(v)}`);
    return upper as (typeof WEBHOOK_METHODS)[number];
  },
};
const publicKey = s.optional(s.nullable(s.string({ max: 200 })));
/** A secret of one's own (extension; `amsg webhooks listen` signs all its webhooks with one). */
const secret = s.optional(s.string({ min: 16, max: 200 }));

const attempt = (a: AttemptRow) => ({ ...a, attempted_at: atD(a.attempted_at) });
const delivery = (d: DeliveryRow & { attempt_log: AttemptRow[] }) => ({
  ...d,
  next_attempt_at: atD(d.next_attempt_at),
  created_at: atD(d.created_at),
  delivered_at: atD(d.delivered_at),
  attempt_log: d.attempt_log.map(attempt),
});

// The real service's /webhooks endpoints (the spec lists only the event types), with
// its answer shapes; the delivery log, replay, secrets and trigger are ours.
export const webhookRoutes = [
  route({
    op: 'webhooks.events',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/webhooks/events',
    summary: 'The webhook event types',
    returns: 'array of webhook event type',
    handler: () => WEBHOOK_EVENT_TYPES,
  }),
  route({
    op: 'webhooks.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/webhooks',
    summary: "The account's webhooks, in id order",
    extension: true,
    query: s.object({ ...s.windowParams(), count: s.optional(s.flag()) }),
    returns: 'array of {webhook_id, url, method, event, public_key}, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? webhooks.countWebhooks(ctx) : webhooks.listWebhooks(ctx, query)),
  }),
  route({
    op: 'webhooks.create',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/webhooks',
    summary: 'Register a webhook for one event; its signing secret is answered only with include_secret=true, this once',
    extension: true,
    query: s.object({ include_secret: s.optional(s.flag()) }),
    body: s.object({ url, event, method: s.optional(method), public_key: publicKey, secret }),
    returns: 'integer (webhook_id), or {webhook_id, secret} with include_secret=true',
    handler: ({ ctx, query, body }) => {
      const created = webhooks.createWebhook(ctx, body);
      // The real service answers the bare id, which its clients parse; the secret is opt-in.
      return query.include_secret ? created : created.webhook_id;
    },
  }),
  route({
    op: 'webhooks.deleteAll',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/webhooks',
    summary: "Delete all of the account's webhooks",
    extension: true,
    returns: 'true',
    handler: ({ ctx }) => webhooks.deleteAllWebhooks(ctx),
  }),
  route({
    op: 'webhooks.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/webhooks/{webhook_id}',
    summary: 'One webhook',
    extension: true,
    params: webhookId,
    returns: '{webhook_id, url, method, event, public_key}',
    handler: ({ ctx, params }) => webhooks.getWebhook(ctx, params.webhook_id),
  }),
  route({
    op: 'webhooks.update',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/webhooks/{webhook_id}',
    summary: 'Change any of url, event, method, public_key',
    extension: true,
    params: webhookId,
    body: s.object({ url: s.optional(url), event: s.optional(event), method: s.optional(method), public_key: publicKey }),
    returns: 'integer (webhook_id)',
    handler: ({ ctx, params, body }) => webhooks.updateWebhook(ctx, params.webhook_id, body),
  }),
  route({
    op: 'webhooks.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/webhooks/{webhook_id}',
    summary: 'Delete a webhook (its pending deliveries and log go with it)',
    extension: true,
    params: webhookId,
    returns: 'true',
    handler: ({ ctx, params }) => webhooks.deleteWebhook(ctx, params.webhook_id),
  }),
  route({
    op: 'webhooks.rollSecret',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/webhooks/{webhook_id}/secret',
    summary: 'Roll the signing secret: the new one is answered this once and signs every post from now on',
    extension: true,
    params: webhookId,
    body: s.object({ secret }),
    returns: '{webhook_id, secret}',
    handler: ({ ctx, params, body }) => webhooks.rollSecret(ctx, params.webhook_id, body.secret),
  }),
  route({
    op: 'webhooks.trigger',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/webhooks/trigger',
    summary: "Fire a sample event of a type to the account's webhooks for it (data.sample is true)",
    extension: true,
    body: s.object({ event }),
    returns: '{event_id, deliveries} (event_id null when no webhook wants the event)',
    handler: ({ ctx, body }) => webhooks.triggerSample(ctx, body.event),
  }),
  route({
    op: 'webhooks.deliveries',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/webhooks/deliveries',
    summary: 'The delivery log, newest first: each delivery with its attempts, status codes and next retry',
    extension: true,
    query: s.object({
      ...s.windowParams(),
      count: s.optional(s.flag()),
      webhook_id: s.optional(s.idText()),
      status: s.optional(s.oneOf(DELIVERY_STATUSES)),
      // The console's "failures": given up (e), or retrying after a failed attempt (p, attempts > 0).
      failing: s.optional(s.flag()),
    }),
    returns: 'array of delivery, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? webhooks.countDeliveries(ctx, query) : webhooks.listDeliveries(ctx, query).map(delivery)),
  }),
  route({
    op: 'webhooks.delivery',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/webhooks/deliveries/{delivery_id}',
    summary: 'One delivery with its attempts (status codes, the start of each answer), next retry, and the payload sent',
    extension: true,
    params: deliveryId,
    returns: 'delivery, with payload (the JSON body sent) and each attempt_log item with response_body',
    handler: ({ ctx, params }) => {
      const { payload, ...d } = webhooks.deliveryDetail(ctx, params.delivery_id);
      return { ...delivery(d), payload: new RawJson(payload) };
    },
  }),
  route({
    op: 'webhooks.replay',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/webhooks/deliveries/{delivery_id}/replay',
    summary: "Send a delivery's event again to its webhook (same event id, a new delivery)",
    extension: true,
    params: deliveryId,
    returns: 'integer (the new delivery_id)',
    handler: ({ ctx, params }) => webhooks.replayDelivery(ctx, params.delivery_id),
  }),
];
