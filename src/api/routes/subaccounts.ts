import * as s from '../schema.js';
import { route } from '../route.js';
import { atD } from '../codecs.js';
import * as subaccounts from '../../service/accounts/subaccounts.js';
import { SUBACCOUNT_STATUSES, type SubaccountRecord } from '../../service/accounts/subaccounts.js';

const text = () => s.optional(s.string({ max: 255 }));
const listQuery = s.object({
  status: s.optional(s.letterList(SUBACCOUNT_STATUSES)),
  searchterm: s.optional(s.string({ max: 255 })),
  ...s.windowParams(),
  count: s.optional(s.flag()),
});
const record = (r: SubaccountRecord) => ({
  ...r,
  created_at: atD(r.created_at),
  retired_at: atD(r.retired_at),
  purge_after: atD(r.purge_after),
});

// The HQ routes name their account {parent_account_id}: the Router checks it as every
// route's account, so a key reaches these only on its own HQ.
export const subaccountRoutes = [
  route({
    op: 'subaccounts.create',
    access: 'people',
    method: 'POST',
    path: '/{parent_account_id}/enterprise/subaccount',
    summary: 'Create a sub-account of an HQ account (trial by default, and always while the HQ is in trial)',
    body: s.object({
      account_name: s.string({ min: 1, max: 255 }),
      account_rsvp_email: s.optional(s.email()),
      account_rsvp_name: text(),
      account_rsvp_address_1: text(),
      account_rsvp_address_2: text(),
      account_rsvp_city: text(),
      account_rsvp_province: text(),
      account_rsvp_state: text(),
      account_rsvp_zip_code: text(),
      account_rsvp_country: text(),
      account_status: s.optional(s.oneOf(['active', 'trial'] as const)),
      account_timezone: text(),
      country_abbrev: s.optional(s.oneOf(['true', 'false'] as const)),
      send_response_summary: s.optional(s.boolean()),
      show_code_your_own: s.optional(s.boolean()),
      show_blank_template: s.optional(s.boolean()),
    }),
    returns: '{account_name, account_id, parent_account_id}',
    handler: ({ ctx, body }) => subaccounts.createSubaccount(ctx, body),
  }),
  route({
    op: 'subaccounts.retire',
    access: 'people',
    method: 'DELETE',
    path: '/{parent_account_id}/enterprise/subaccount/{subaccount_id}',
    summary: 'Retire a sub-account: unreachable at once, its data purged after 30 days; not reversible',
    params: s.object({ subaccount_id: s.idText() }),
    returns: '{account_name, status: "retired"}',
    handler: ({ ctx, params }) => subaccounts.retireSubaccount(ctx, params.subaccount_id),
  }),
  route({
    op: 'subaccounts.get',
    access: 'user',
    method: 'GET',
    path: '/{parent_account_id}/enterprise/subaccount/{subaccount_id}',
    summary: 'One sub-account with its settings, and when it was retired and will be purged',
    extension: true,
    params: s.object({ subaccount_id: s.idText() }),
    returns: 'subaccount record',
    handler: ({ ctx, params }) => record(subaccounts.getSubaccount(ctx, params.subaccount_id)),
  }),
  route({
    op: 'subaccounts.list',
    access: 'user',
    method: 'GET',
    path: '/{parent_account_id}/enterprise/subaccounts',
    summary: "The HQ's sub-accounts the requesting user can access, in id order",
    query: listQuery,
    returns: '{subaccounts: array of subaccount list item}, or an integer with count=true (extension)',
    handler: ({ ctx, query }) => subaccounts.listSubaccounts(ctx, query, query.count ?? false),
  }),
  route({
    op: 'subaccounts.access.set',
    access: 'people',
    method: 'PUT',
    path: '/{parent_account_id}/enterprise/{user_id}/subaccounts',
    summary: "Replace a user's whole list of accessible sub-accounts",
    params: s.object({ user_id: s.idText() }),
    body: s.object({ accounts: s.array(s.id(), { max: 10_000 }) }),
    returns: '{message: true}',
    handler: ({ ctx, params, body }) => subaccounts.setAccess(ctx, params.user_id, body.accounts),
  }),
  route({
    op: 'subaccounts.access.list',
    access: 'people',
    method: 'GET',
    path: '/{parent_account_id}/enterprise/{user_id}/subaccounts',
    summary: 'The sub-accounts a user of the HQ can access (all of them for an owner)',
    extension: true,
    params: s.object({ user_id: s.idText() }),
    query: s.object({ ...s.windowParams(), count: s.optional(s.flag()) }),
    returns: '{subaccounts: array of subaccount list item}, or an integer with count=true',
    handler: ({ ctx, params, query }) => subaccounts.listAccess(ctx, params.user_id, query, query.count ?? false),
  }),
];
