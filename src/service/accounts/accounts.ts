import { createRequire } from 'node:module';
import { inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { TableMemo } from '../../store/memo.js';
import { badRequest, notFound, forbidden } from '../../errors.js';
import { stamp, type Clock } from '../clock.js';
import type { Actor, Ctx, Role } from '../context.js';

// ---------------------------------------------------------------- accounts

/** An account's parent and retirement, asked by every request (the account in its path). */
const ACCOUNTS = new TableMemo<number, { parent_account_id: number | null; retired_at: string | null } | undefined>('account', [
  'accounts',
]);

/**
 * The one rule of who reaches which account, applied by the Router to every request
 * (the account in the path): a live account of one's own, or a live sub-account of
 * one's HQ that one's access list holds (the HQ's owners reach all its sub-accounts).
 * A retired account is reached by no one until it is purged, and then it is gone.
 */
export function accountAccessible(db: Db, actor: Actor, accountId: number): boolean {
  // Every request asks (the account in its path); accounts change rarely.
  const row = ACCOUNTS.get(
    db,
    accountId,
    () =>
      stmt(db, 'SELECT parent_account_id, retired_at FROM accounts WHERE account_id = ?').get(accountId) as
        | { parent_account_id: number | null; retired_at: string | null }
        | undefined,
  );
  if (!row || row.retired_at !== null) return false;
  if (accountId === actor.account_id) return true;
  if (row.parent_account_id !== actor.account_id) return false;
  if (actor.role === 'owner') return true;
  return !!stmt(db, 'SELECT 1 FROM user_account_access WHERE user_id = ? AND account_id = ?').get(actor.user_id, accountId);
}

/**
 * The retired accounts, as SQL for `account_id NOT IN (…)`: the job runners leave their
 * work (queued imports, scheduled sends, search refreshes) as it is until the purge.
 */
export const RETIRED_ACCOUNTS = 'SELECT account_id FROM accounts WHERE retired_at IS NOT NULL';

const STANDARD_FIELDS = [
  ['first_name', 'First Name'],
  ['last_name', 'Last Name'],
] as const;

export interface InitResult {
  created: boolean;
  account_id: number;
  user_id: number;
  public_key?: string;
  private_key?: string;
  /** Only when asked for an HQ: the account is an HQ parent (made one now if it existed). */
  hq?: true;
}

/**
 * Sets up a fresh database: account 1, its owner, and one key pair. On a database
 * that already has an account it creates nothing (so scripts can run it every time),
 * except that `hq` makes that account an HQ parent, so a sandbox in use can take
 * sub-accounts.
 */
export function initialize(
  db: Db,
  clock: Clock,
  opts: { accountName?: string; ownerEmail?: string; standardFields?: boolean; hq?: boolean } = {},
): InitResult {
  return inTransaction(db, () => {
    const existing = db.prepare('SELECT account_id FROM accounts ORDER BY account_id LIMIT 1').get() as { account_id: number } | undefined;
    if (existing) {
      const owner = ownerOf(db, existing.account_id);
      if (opts.hq) stmt(db, 'UPDATE accounts SET is_hq = 1 WHERE account_id = ? AND is_hq = 0').run(existing.account_id);
      return { created: false, account_id: existing.account_id, user_id: owner?.user_id ?? 0, ...(opts.hq ? { hq: true as const } : {}) };
    }
    const now = stamp(clock.now());
    const accountId = Number(
      db
        .prepare('INSERT INTO accounts (account_id, account_name, is_hq, created_at) VALUES (1, ?, ?, ?)')
        .run(opts.accountName ?? 'My account', opts.hq ? 1 : 0, now).lastInsertRowid,
    );
    const userId = setUpAccount(db, accountId, opts.ownerEmail ?? 'owner@localhost', now, opts.standardFields !== false);
    const key = insertKey(db, userId, 'created by amsg init', now);
    return { created: true, account_id: accountId, user_id: userId, ...key, ...(opts.hq ? { hq: true as const } : {}) };
  });
}

/**
 * What every new account gets, from `amsg init` or as a sub-account: its owner user
 * and, as new accounts of the real service have, the standard name fields. Answers
 * the owner's user id.
 */
export function setUpAccount(db: Db, accountId: number, ownerEmail: string, now: string, standardFields = true): number {
  const userId = Number(
    stmt(
      db,
      `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at)
       VALUES (?, ?, 'owner', 1, 1, ?)`,
    ).run(accountId, ownerEmail.toLowerCase(), now).lastInsertRowid,
  );
  if (standardFields)
    for (const [i, [name, display]] of STANDARD_FIELDS.entries())
      stmt(
        db,
        `INSERT INTO fields (account_id, shortcut_name, display_name, field_type, widget_type, column_order)
         VALUES (?, ?, ?, 'text', 'text', ?)`,
      ).run(accountId, name, display, i + 1);
  return userId;
}

export function isInitialized(db: Db): boolean {
  return !!db.prepare('SELECT 1 FROM accounts LIMIT 1').get();
}

// ---------------------------------------------------------------- users

interface UserRow {
  user_id: number;
  account_id: number;
  email: string;
  role: Role;
  billing_access: number;
  manage_users: number;
  created_at: string;
}

const toActor = (u: UserRow): Actor => ({
  user_id: u.user_id,
  account_id: u.account_id,
  email: u.email,
  role: u.role,
  billing_access: u.billing_access === 1,
  manage_users: u.manage_users === 1,
});

function ownerOf(db: Db, accountId: number): UserRow | undefined {
  return stmt(db, `SELECT * FROM users WHERE account_id = ? AND role = 'owner' ORDER BY user_id LIMIT 1`).get(accountId) as
    | UserRow
    | undefined;
}

/**
 * Local mode acts as the account's owner: whoever holds the file holds every right.
 * On a sub-account it acts as its HQ's owner, as an HQ key does remotely, so both
 * modes answer alike (users/me names the same user).
 */
export function localActor(db: Db, accountId: number): Actor {
  const row = stmt(db, 'SELECT parent_account_id FROM accounts WHERE account_id = ?').get(accountId) as
    | { parent_account_id: number | null }
    | undefined;
  const owner = ownerOf(db, row?.parent_account_id ?? accountId);
  if (!owner) throw notFound(`account ${accountId} not found in this database`);
  return toActor(owner);
}

export interface UserRecord extends Actor {
  created_at: string;
}

const toUser = (u: UserRow): UserRecord => ({ ...toActor(u), created_at: u.created_at });

export function listUsers(ctx: Ctx): UserRecord[] {
  return (stmt(ctx.db, 'SELECT * FROM users WHERE account_id = ? ORDER BY user_id').all(ctx.accountId) as UserRow[]).map(toUser);
}

export const ROLE_RANK: Record<Role, number> = { owner: 3, manager: 2, user: 1 };

/** Owners, and managers with manage_users, may add users of a lower role than their own. */
export function mayManageUsers(actor: Actor): boolean {
  return actor.role === 'owner' || (actor.role === 'manager' && actor.manage_users);
}

/**
 * What an operation asks of the caller, as an ESP grants it: every user reads and
 * makes the day-to-day writes (one member, one mailing); managers do bulk and
 * destructive work (imports, exports, purges, moves of many members, deleting
 * fields, groups and lists); `people` is managing users and keys (owners, managers
 * with manage_users); `billing` needs billing access (owners have every right).
 */
export type Access = 'user' | 'manager' | 'people' | 'billing';

export const ACCESS_NEEDS: Record<Access, string> = {
  user: 'any user',
  manager: 'a manager or owner',
  people: 'an owner, or a manager with manage_users',
  billing: 'an owner, or a user with billing access',
};

export function mayCall(actor: Actor, access: Access): boolean {
  if (actor.role === 'owner') return true;
  switch (access) {
    case 'user':
      return true;
    case 'manager':
      return ROLE_RANK[actor.role] >= ROLE_RANK.manager;
    case 'people':
      return mayManageUsers(actor);
    case 'billing':
      return actor.billing_access;
  }
}

/**
 * The one rule for acting on users and their keys: on oneself, or, for those who
 * manage people, on users of a lower role than one's own; owners act on anyone.
 */
function mayActOn(actor: Actor, user: { user_id: number; role: Role }): boolean {
  if (user.user_id === actor.user_id || actor.role === 'owner') return true;
  return mayManageUsers(actor) && ROLE_RANK[user.role] < ROLE_RANK[actor.role];
}

/**
 * The sandbox's owner (`POST /_sandbox/reset`, which restores every account): an owner
 * of the account `amsg init` made, the first one (the HQ when there are sub-accounts).
 * A sub-account's owner owns only that account, so is not.
 */
export function isSandboxOwner(db: Db, actor: Actor): boolean {
  return actor.role === 'owner' && actor.account_id === initAccountId(db);
}

/** The account `amsg init` made: the first one (initialize makes it when there is none). */
export function initAccountId(db: Db): number | undefined {
  return (stmt(db, 'SELECT account_id FROM accounts ORDER BY account_id LIMIT 1').get() as { account_id: number } | undefined)?.account_id;
}

export function createUser(ctx: Ctx, input: { email: string; role: Role; billing_access?: boolean; manage_users?: boolean }): UserRecord {
  if (!mayManageUsers(ctx.actor)) throw forbidden('only owners and managers with manage_users may add users');
  if (ROLE_RANK[input.role] >= ROLE_RANK[ctx.actor.role] && ctx.actor.role !== 'owner')
    throw forbidden(`a ${ctx.actor.role} cannot create a user with role ${input.role}`);
  const taken = stmt(ctx.db, 'SELECT user_id FROM users WHERE account_id = ? AND email = ?').get(ctx.accountId, input.email);
  if (taken) throw badRequest(`email: a user with e-mail ${input.email} already exists`, { field: 'email' });
  const id = stmt(
    ctx.db,
    `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(
    ctx.accountId,
    input.email,
    input.role,
    input.billing_access ? 1 : 0,
    input.manage_users ? 1 : 0,
    stamp(ctx.clock.now()),
  ).lastInsertRowid;
  return getUser(ctx, Number(id));
}

/** The user the request acts as (the key's user; the owner in local mode), whichever account the path names. */
export function currentUser(ctx: Ctx): UserRecord {
  const row = stmt(ctx.db, 'SELECT * FROM users WHERE user_id = ?').get(ctx.actor.user_id) as UserRow | undefined;
  if (!row) throw notFound(`user ${ctx.actor.user_id} not found`);
  return toUser(row);
}

export function getUser(ctx: Ctx, userId: number): UserRecord {
  const row = stmt(ctx.db, 'SELECT * FROM users WHERE account_id = ? AND user_id = ?').get(ctx.accountId, userId) as UserRow | undefined;
  if (!row) throw notFound(`user ${userId} not found`);
  return toUser(row);
}

// ---------------------------------------------------------------- API keys

/**
 * node:crypto on first use only: it is ~20 internal modules, and most local
 * commands never touch a key (bench/RESULTS.md, startup of `members get`).
 */
let cryptoModule: typeof import('node:crypto') | undefined;
const crypto = () => (cryptoModule ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));

const hashKey = (salt: string, privateKey: string) => crypto().createHash('sha256').update(salt).update(privateKey).digest('hex');
const randomBytes = (n: number) => crypto().randomBytes(n);

function insertKey(db: Db, userId: number, label: string | null, now: string) {
  const public_key = randomBytes(10).toString('hex');
  const private_key = randomBytes(24).toString('base64url');
  const salt = randomBytes(16).toString('hex');
  const keyId = stmt(
    db,
    `INSERT INTO api_keys (user_id, public_key, private_key_hash, salt, label, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(userId, public_key, hashKey(salt, private_key), salt, label, now).lastInsertRowid;
  return { key_id: Number(keyId), public_key, private_key };
}

export interface KeyRecord {
  key_id: number;
  user_id: number;
  user_email: string;
  public_key: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

const KEY_SELECT = `SELECT k.key_id, k.user_id, u.email AS user_email, k.public_key, k.label, k.created_at,
                           k.revoked_at
                      FROM api_keys k JOIN users u ON u.user_id = k.user_id`;

export function listKeys(ctx: Ctx, includeRevoked: boolean): KeyRecord[] {
  return stmt(ctx.db, `${KEY_SELECT} WHERE u.account_id = ? ${includeRevoked ? '' : 'AND k.revoked_at IS NULL'} ORDER BY k.key_id`).all(
    ctx.accountId,
  ) as KeyRecord[];
}

function keyOf(ctx: Ctx, keyId: number): KeyRecord {
  const key = stmt(ctx.db, `${KEY_SELECT} WHERE u.account_id = ? AND k.key_id = ?`).get(ctx.accountId, keyId) as KeyRecord | undefined;
  if (!key) throw notFound(`key ${keyId} not found`);
  return key;
}

/** Creates a key pair for a user (the caller by default). The private key is shown only here. */
export function createKey(ctx: Ctx, input: { user_id?: number; label?: string }) {
  const userId = input.user_id ?? ctx.actor.user_id;
  const user = getUser(ctx, userId);
  if (!mayActOn(ctx.actor, user))
    throw forbidden(
      mayManageUsers(ctx.actor)
        ? `a ${ctx.actor.role} cannot create keys for a ${user.role}: only for users of a lower role`
        : 'only owners and managers with manage_users may create keys for other users',
    );
  const created = insertKey(ctx.db, userId, input.label ?? null, stamp(ctx.clock.now()));
  return { ...keyOf(ctx, created.key_id), private_key: created.private_key };
}

export function revokeKey(ctx: Ctx, keyId: number): true {
  const key = keyOf(ctx, keyId);
  const user = getUser(ctx, key.user_id);
  if (!mayActOn(ctx.actor, user))
    throw forbidden(
      mayManageUsers(ctx.actor)
        ? `a ${ctx.actor.role} cannot revoke the keys of a ${user.role}: only of users of a lower role`
        : 'only owners and managers with manage_users may revoke other users’ keys',
    );
  if (!key.revoked_at) stmt(ctx.db, 'UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(stamp(ctx.clock.now()), keyId);
  return true;
}

/**
 * Resolves `public:private` credentials to the key's user, or undefined. The hash
 * comparison is constant-time; an unknown public key costs the same hash.
 */
export function authenticate(db: Db, publicKey: string, privateKey: string): Actor | undefined {
  const row = stmt(
    db,
    `SELECT k.private_key_hash, k.salt, u.* FROM api_keys k JOIN users u ON u.user_id = k.user_id
      WHERE k.public_key = ? AND k.revoked_at IS NULL`,
  ).get(publicKey) as (UserRow & { private_key_hash: string; salt: string }) | undefined;
  const expected = Buffer.from(row?.private_key_hash ?? '0'.repeat(64), 'hex');
  const given = Buffer.from(hashKey(row?.salt ?? '', privateKey), 'hex');
  if (!row || !crypto().timingSafeEqual(expected, given)) return undefined;
  return toActor(row);
}

// ---------------------------------------------------------------- console sessions

/**
 * The user of a live (not revoked) key, by its public key alone: a console session
 * signed in with a key pair re-reads it on each request, so revoking the key ends the
 * session as it ends the key's API access.
 */
export function actorOfKey(db: Db, publicKey: string): Actor | undefined {
  const row = stmt(
    db,
    `SELECT u.* FROM api_keys k JOIN users u ON u.user_id = k.user_id WHERE k.public_key = ? AND k.revoked_at IS NULL`,
  ).get(publicKey) as UserRow | undefined;
  return row && toActor(row);
}

/** A user by id (a console session signed in by the one-time link is the user's, not a key's). */
export function actorOfUser(db: Db, userId: number): Actor | undefined {
  const row = stmt(db, 'SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
  return row && toActor(row);
}

/** Who the one-time console link signs in as: the owner of the database's first account (local mode's user). */
export function firstOwner(db: Db): Actor | undefined {
  const first = db.prepare('SELECT account_id FROM accounts ORDER BY account_id LIMIT 1').get() as { account_id: number } | undefined;
  return first && localActor(db, first.account_id);
}

export interface AccessibleAccount {
  account_id: number;
  name: string;
  is_hq: boolean;
  parent_account_id: number | null;
}

/**
 * The accounts a user may open, by accountAccessible's rule: its own, then its HQ's
 * live sub-accounts it may reach, by id. An HQ has few sub-accounts.
 */
export function accessibleAccounts(db: Db, actor: Actor): AccessibleAccount[] {
  const rows = stmt(
    db,
    `SELECT account_id, account_name AS name, is_hq, parent_account_id FROM accounts
      WHERE retired_at IS NULL AND (account_id = ? OR parent_account_id = ?)
      ORDER BY account_id <> ?, account_id`,
  ).all(actor.account_id, actor.account_id, actor.account_id) as (Omit<AccessibleAccount, 'is_hq'> & { is_hq: number })[];
  return rows
    .filter((r) => accountAccessible(db, actor, r.account_id))
    .map((r) => ({ account_id: r.account_id, name: r.name, is_hq: r.is_hq === 1, parent_account_id: r.parent_account_id }));
}
