import * as s from '../schema.js';
import { route } from '../route.js';
import { atD } from '../codecs.js';
import * as accounts from '../../service/accounts/accounts.js';
import type { KeyRecord, UserRecord } from '../../service/accounts/accounts.js';

const user = (u: UserRecord) => ({ ...u, created_at: atD(u.created_at) });
const key = <K extends KeyRecord>(k: K) => ({ ...k, created_at: atD(k.created_at), revoked_at: atD(k.revoked_at) });

export const accountRoutes = [
  route({
    op: 'users.list',
    access: 'people',
    method: 'GET',
    path: '/{account_id}/users',
    summary: "The account's users with their roles and permissions",
    extension: true,
    returns: 'array of user',
    handler: ({ ctx }) => accounts.listUsers(ctx).map(user),
  }),
  route({
    op: 'users.me',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/users/me',
    summary: 'The user this request acts as (the owner of the key pair; the owner in local mode)',
    extension: true,
    returns: 'user',
    handler: ({ ctx }) => user(accounts.currentUser(ctx)),
  }),
  route({
    op: 'users.create',
    access: 'people',
    method: 'POST',
    path: '/{account_id}/users',
    summary: 'Add a user (owners, and managers with manage_users)',
    extension: true,
    body: s.object({
      email: s.email(),
      role: s.oneOf(['owner', 'manager', 'user'] as const),
      billing_access: s.optional(s.boolean()),
      manage_users: s.optional(s.boolean()),
    }),
    returns: 'user',
    handler: ({ ctx, body }) => user(accounts.createUser(ctx, body)),
  }),
  route({
    op: 'keys.list',
    access: 'people',
    method: 'GET',
    path: '/{account_id}/keys',
    summary: "The account's API keys (public halves only)",
    extension: true,
    query: s.object({ include_revoked: s.optional(s.flag()) }),
    returns: 'array of key',
    handler: ({ ctx, query }) => accounts.listKeys(ctx, query.include_revoked ?? false).map(key),
  }),
  route({
    op: 'keys.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/keys',
    summary: 'Create an API key pair; the private key is answered only this once',
    extension: true,
    body: s.object({ user_id: s.optional(s.id()), label: s.optional(s.string({ max: 200 })) }),
    returns: 'key with private_key',
    handler: ({ ctx, body }) => key(accounts.createKey(ctx, body)),
  }),
  route({
    op: 'keys.revoke',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/keys/{key_id}',
    summary: 'Revoke an API key',
    extension: true,
    params: s.object({ key_id: s.idText() }),
    returns: 'true',
    handler: ({ ctx, params }) => accounts.revokeKey(ctx, params.key_id),
  }),
];
