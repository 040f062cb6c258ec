import type { Db } from '../store/db.js';
import type { Clock } from './clock.js';
import type { ImportWriter } from './imports/import-writer.js';

export type Role = 'owner' | 'manager' | 'user';

/** The user on whose behalf an operation runs (the key's user, or the owner in local mode). */
export interface Actor {
  user_id: number;
  account_id: number;
  email: string;
  role: Role;
  billing_access: boolean;
  manage_users: boolean;
}

/** What every service function receives: the store, the clock, who asks, and for which account. */
export interface Ctx {
  db: Db;
  clock: Clock;
  actor: Actor;
  /** The account the operation's path names, already checked to be one the actor may use. */
  accountId: number;
  /** Writes streamed-import batches on a thread of its own (the built CLI and `amsg serve`; see import-writer.ts). */
  importWriter?: ImportWriter;
}
