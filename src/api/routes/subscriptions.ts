import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as subscriptions from '../../service/audience/subscriptions.js';

const subscriptionId = s.object({ subscription_id: s.idText() });
const subscriptionMember = s.object({ subscription_id: s.idText(), member_id: s.idText() });
const window = s.object({
  ...s.windowParams(),
});
/** Accepted in create and update though the spec shows them only in answers (extensions). */
const extraFields = {
  settings: s.optional(s.nullable(s.object({ show_on_default_preference_form: s.boolean() }))),
  subscription_order: s.optional(s.nullable(s.int())),
};
const name = s.string({ min: 1, max: 255 });

export const subscriptionRoutes = [
  route({
    op: 'subscriptions.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/subscriptions',
    summary: 'List subscriptions with their member and opt-out counts (live ones unless told otherwise)',
    query: s.object({
      deleted_only: s.optional(s.flag()),
      include_deleted: s.optional(s.flag()),
    }),
    returns: 'array of subscription (list shape, with import_status)',
    handler: ({ ctx, query }) => subscriptions.listSubscriptions(ctx, query).map(enc.subscriptionListItem),
  }),
  route({
    op: 'subscriptions.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/subscriptions/{subscription_id}',
    summary: 'Get a subscription (a deleted one too, with deleted_at set)',
    params: subscriptionId,
    returns: 'subscription',
    handler: ({ ctx, params }) => enc.subscription(subscriptions.getSubscription(ctx, params.subscription_id)),
  }),
  route({
    op: 'subscriptions.members',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/subscriptions/{subscription_id}/members',
    summary: 'The subscribed members (those member_count counts)',
    params: subscriptionId,
    query: window,
    returns: 'array of {member_id}',
    handler: ({ ctx, params, query }) => subscriptions.subscriptionMembers(ctx, params.subscription_id, query),
  }),
  route({
    op: 'subscriptions.optouts',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/subscriptions/{subscription_id}/optouts',
    summary: 'The opted-out members (those optout_count counts)',
    params: subscriptionId,
    query: window,
    returns: 'array of {member_id}',
    handler: ({ ctx, params, query }) => subscriptions.subscriptionOptouts(ctx, params.subscription_id, query),
  }),
  route({
    op: 'subscriptions.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/subscriptions',
    summary: 'Create a subscription (names are unique among live subscriptions)',
    body: s.object({ name, description: s.optional(s.string()), ...extraFields }),
    returns: 'subscription',
    handler: ({ ctx, body }) => enc.subscription(subscriptions.createSubscription(ctx, body)),
  }),
  route({
    op: 'subscriptions.addMembers',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/subscriptions/{subscription_id}/members/bulk',
    summary: 'Subscribe members by id, or every member an import added or updated (exactly one of the two)',
    params: subscriptionId,
    body: s.object({
      member_ids: s.optional(s.array(s.id(), { min: 1 })),
      import_id: s.optional(s.id()),
    }),
    returns: 'true',
    handler: ({ ctx, params, body }) => subscriptions.subscribeMembers(ctx, params.subscription_id, body),
  }),
  route({
    op: 'subscriptions.update',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/subscriptions/{subscription_id}',
    summary: 'Rename a subscription or change its description',
    params: subscriptionId,
    body: s.object({ name: s.optional(name), description: s.optional(s.string()), ...extraFields }),
    returns: 'subscription',
    handler: ({ ctx, params, body }) => enc.subscription(subscriptions.updateSubscription(ctx, params.subscription_id, body)),
  }),
  route({
    op: 'subscriptions.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/subscriptions/{subscription_id}',
    summary: 'Delete a subscription (answers it with deleted_at set; again when already deleted)',
    params: subscriptionId,
    returns: 'subscription',
    handler: ({ ctx, params }) => enc.subscription(subscriptions.deleteSubscription(ctx, params.subscription_id)),
  }),
  route({
    op: 'subscriptions.optoutMember',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/subscriptions/{subscription_id}/members/{member_id}/optout',
    summary: 'Opt a member out of this subscription only (true also when already opted out)',
    extension: true,
    params: subscriptionMember,
    body: s.object({}),
    returns: 'true',
    handler: ({ ctx, params }) => subscriptions.optOutMember(ctx, params.subscription_id, params.member_id),
  }),
  route({
    op: 'subscriptions.removeMember',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/subscriptions/{subscription_id}/members/{member_id}',
    summary: 'Remove a member from a subscription, opt-out included (true also when it was not in it)',
    extension: true,
    params: subscriptionMember,
    returns: 'true',
    handler: ({ ctx, params }) => subscriptions.removeMember(ctx, params.subscription_id, params.member_id),
  }),
];
