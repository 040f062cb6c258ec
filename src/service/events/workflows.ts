/**
 * Event ingestion and the workflows it runs (the spec's "Inbound events": an event
 * "powers an automated workflow" when four rules hold; how a workflow is configured
 * is ours, an extension).
 *
 * Accepting a post stores it and nothing more (status q), so accepting stays fast
 * under load. The job runner processes queued events in batches: each batch claims
 * its events, runs their workflows and marks them processed (status o, with their
 * outcome) in ONE transaction, so a process killed half way leaves the batch queued
 * as it was and whichever process runs jobs next does it again from the start: an
 * event is processed once, and none is lost.
 */
import { afterCommit, commitTurn, inTransaction, type Db } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import { isEmail } from '../../values.js';
import { stamp, type Clock } from '../clock.js';
import type { Actor, Ctx } from '../context.js';
import { LIMIT_OFFSET, type Window, windowOf } from '../paging.js';
import { EVENTS, TOUCHPOINTS, insertRecord, typeExists, type Kind } from './events.js';
import { requireGroups } from '../audience/groups.js';
import { joinGroups, updateMember } from '../audience/members.js';
import { FieldCatalog } from '../audience/fields.js';
import { createMemberCopy, mailingRow } from '../mailings/mailings.js';

/** The spec's event payload limit: 262,035 bytes (stated as 256KB). */
export const INBOUND_LIMIT = 262_035;

/** Why a processed event ran no workflow, or `ran`. */
export const OUTCOMES = ['ran', 'invalid email', 'no member', 'member not active', 'no workflow matched'] as const;
export type Outcome = (typeof OUTCOMES)[number];
/** The count key of events not processed yet. */
export const QUEUED = 'queued';

// ---------------------------------------------------------------- workflows

export type Scalar = string | number | boolean | null;

export type Action =
  | { type: 'add_to_groups'; group_ids: number[] }
  | { type: 'record_event'; event_type_id: number; value_from?: string }
  | { type: 'record_touchpoint'; touchpoint_type_id: number; value_from?: string }
  | { type: 'set_fields'; values?: Record<string, unknown>; from?: Record<string, string> }
  | { type: 'send_mailing'; mailing_id: number };

export const ACTION_TYPES = ['add_to_groups', 'record_event', 'record_touchpoint', 'set_fields', 'send_mailing'] as const;

export interface WorkflowRecord {
  workflow_id: number;
  account_id: number;
  name: string;
  match: Record<string, Scalar>;
  actions: Action[];
  run_count: number;
  created_at: string;
  modified_at: string;
}

interface WorkflowRow extends Omit<WorkflowRecord, 'match' | 'actions'> {
  match: string;
  actions: string;
}

const toRecord = (r: WorkflowRow): WorkflowRecord => ({ ...r, match: JSON.parse(r.match), actions: JSON.parse(r.actions) });

export function getWorkflow(ctx: Ctx, workflowId: number): WorkflowRecord {
  const row = stmt(ctx.db, 'SELECT * FROM workflows WHERE workflow_id = ? AND account_id = ?').get(workflowId, ctx.accountId) as
    | WorkflowRow
    | undefined;
  if (!row) throw notFound(`workflow ${workflowId} not found`);
  return toRecord(row);
}

export function listWorkflows(ctx: Ctx, w: Window = {}): WorkflowRecord[] {
  const { limit, offset } = windowOf(w);
  return (
    stmt(ctx.db, `SELECT * FROM workflows WHERE account_id = ? ORDER BY workflow_id ${LIMIT_OFFSET}`).all(
      ctx.accountId,
      limit,
      offset,
    ) as WorkflowRow[]
  ).map(toRecord);
}

/**
 * The workflows by state, as the real service counts them (`GET /automation/counts`):
 * an amsg workflow runs whenever an event matches it, so every one is active.
 */
export function workflowCounts(ctx: Ctx): { account_id: number; active: number; inactive: number; draft: number } {
  return { account_id: ctx.accountId, active: countWorkflows(ctx), inactive: 0, draft: 0 };
}

export function countWorkflows(ctx: Ctx): number {
  return stmt(ctx.db, 'SELECT COUNT(*) FROM workflows WHERE account_id = ?').pluck().get(ctx.accountId) as number;
}

const fail = (path: string, reason: string) => badRequest(`${path}: ${reason}`, { field: path });
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** `match`: at least one pair; keys are dotted paths into the payload, values JSON scalars compared exactly. */
function checkMatch(match: unknown): Record<string, Scalar> {
  if (!isObject(match)) throw fail('match', 'must be an object of key/value pairs such as {"type": "purchase"}');
  const keys = Object.keys(match);
  if (!keys.length) throw fail('match', 'must hold at least one key/value pair (a workflow that matches everything is refused)');
  for (const key of keys) {
    if (!key || key.split('.').some((part) => !part)) throw fail(`match.${key}`, 'a key is a name or a dotted path such as order.channel');
    const v = match[key];
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
      throw fail(`match.${key}`, 'must be a string, number, boolean or null (every pair must be equal)');
  }
  return match as Record<string, Scalar>;
}

const PATH = /^[^.]+(\.[^.]+)*$/;

function checkPath(v: unknown, path: string): string {
  if (typeof v !== 'string' || !PATH.test(v))
    throw fail(path, 'must be a key of the payload, dotted for nested objects (e.g. order.total)');
  return v;
}

function checkId(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw fail(path, 'must be a positive integer id');
  return v;
}

function checkKeys(a: Record<string, unknown>, allowed: string[], path: string) {
  for (const k of Object.keys(a))
    if (!allowed.includes(k)) throw fail(`${path}.${k}`, `unknown parameter (expected one of: ${allowed.join(', ')})`);
}

/** Checks each action against the account: its groups, types, fields and mailings must exist. */
function checkActions(ctx: Ctx, actions: unknown): Action[] {
  if (!Array.isArray(actions) || !actions.length) throw fail('actions', 'must be a non-empty array of actions');
  if (actions.length > 20) throw fail('actions', 'at most 20 actions');
  return actions.map((a, i): Action => {
    const path = `actions[${i}]`;
    if (!isObject(a)) throw fail(path, 'must be an object with a type');
    const type = a.type;
    if (!ACTION_TYPES.includes(type as never)) throw fail(`${path}.type`, `must be one of ${ACTION_TYPES.join(', ')}`);
    switch (type) {
      case 'add_to_groups': {
        checkKeys(a, ['type', 'group_ids'], path);
        if (!Array.isArray(a.group_ids) || !a.group_ids.length) throw fail(`${path}.group_ids`, 'must be a non-empty array of group ids');
        const ids = a.group_ids.map((g, j) => checkId(g, `${path}.group_ids[${j}]`));
        ids.forEach((g, j) => {
          try {
            requireGroups(ctx, [g]);
          } catch {
            throw fail(`${path}.group_ids[${j}]`, `group ${g} not found`);
          }
        });
        return { type, group_ids: ids };
      }
      case 'record_event':
      case 'record_touchpoint': {
        const kind = type === 'record_event' ? EVENTS : TOUCHPOINTS;
        checkKeys(a, ['type', kind.typeId, 'value_from'], path);
        const typeId = checkId(a[kind.typeId], `${path}.${kind.typeId}`);
        if (!stmt(ctx.db, `SELECT 1 FROM ${kind.typesTable} WHERE ${kind.typeId} = ? AND account_id = ?`).get(typeId, ctx.accountId))
          throw fail(`${path}.${kind.typeId}`, `${kind.noun} type ${typeId} not found`);
        const valueFrom = a.value_from === undefined ? undefined : checkPath(a.value_from, `${path}.value_from`);
        return type === 'record_event'
          ? { type, event_type_id: typeId, ...(valueFrom ? { value_from: valueFrom } : {}) }
          : { type, touchpoint_type_id: typeId, ...(valueFrom ? { value_from: valueFrom } : {}) };
      }
      case 'set_fields': {
        checkKeys(a, ['type', 'values', 'from'], path);
        if (a.values !== undefined && !isObject(a.values)) throw fail(`${path}.values`, 'must be an object of field names and values');
        if (a.from !== undefined && !isObject(a.from)) throw fail(`${path}.from`, 'must be an object of field names and payload keys');
        const values = (a.values ?? {}) as Record<string, unknown>;
        const from = (a.from ?? {}) as Record<string, unknown>;
        if (!Object.keys(values).length && !Object.keys(from).length) throw fail(path, 'give values, from, or both');
        // The literal values are checked as a member update checks them (unknown fields, types).
        FieldCatalog.of(ctx).toStored(values, `${path}.values`);
        const catalog = FieldCatalog.of(ctx);
        for (const [name, key] of Object.entries(from)) {
          if (!catalog.byName.has(name.toLowerCase())) throw fail(`${path}.from.${name}`, `unknown field "${name}"`);
          checkPath(key, `${path}.from.${name}`);
        }
        return {
          type,
          ...(a.values !== undefined ? { values } : {}),
          ...(a.from !== undefined ? { from: from as Record<string, string> } : {}),
        };
      }
      default: {
        checkKeys(a, ['type', 'mailing_id'], path);
        const mailingId = checkId(a.mailing_id, `${path}.mailing_id`);
        try {
          mailingRow(ctx, mailingId);
        } catch {
          throw fail(`${path}.mailing_id`, `mailing ${mailingId} not found`);
        }
        return { type: 'send_mailing', mailing_id: mailingId };
      }
    }
  });
}

export interface WorkflowInput {
  name?: string;
  match?: unknown;
  actions?: unknown;
}

/** Creates a workflow; answers its id. */
export function createWorkflow(ctx: Ctx, input: WorkflowInput & { name: string }): number {
  return inTransaction(ctx.db, () => {
    const match = checkMatch(input.match);
    const actions = checkActions(ctx, input.actions);
    const now = stamp(ctx.clock.now());
    return Number(
      stmt(ctx.db, 'INSERT INTO workflows (account_id, name, match, actions, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        ctx.accountId,
        input.name,
        JSON.stringify(match),
        JSON.stringify(actions),
        now,
        now,
      ).lastInsertRowid,
    );
  });
}

/** Changes what is given (name, match, actions); events processed later use the new version. */
export function updateWorkflow(ctx: Ctx, workflowId: number, input: WorkflowInput): true {
  return inTransaction(ctx.db, () => {
    const current = getWorkflow(ctx, workflowId);
    const match = input.match === undefined ? current.match : checkMatch(input.match);
    const actions = input.actions === undefined ? current.actions : checkActions(ctx, input.actions);
    stmt(ctx.db, 'UPDATE workflows SET name = ?, match = ?, actions = ?, modified_at = ? WHERE workflow_id = ?').run(
      input.name ?? current.name,
      JSON.stringify(match),
      JSON.stringify(actions),
      stamp(ctx.clock.now()),
      workflowId,
    );
    return true;
  });
}

/** Deletes a workflow and its runs (the inbound events keep their outcome). */
export function deleteWorkflow(ctx: Ctx, workflowId: number): true {
  return inTransaction(ctx.db, () => {
    getWorkflow(ctx, workflowId);
    stmt(ctx.db, 'DELETE FROM workflows WHERE workflow_id = ?').run(workflowId);
    return true;
  });
}

export interface RunRecord {
  run_id: number;
  workflow_id: number;
  inbound_id: number;
  member_id: number | null;
  ran_at: string;
  actions: ActionResult[];
}

export function workflowRuns(ctx: Ctx, workflowId: number, w: Window = {}): RunRecord[] {
  const { limit, offset } = windowOf(w);
  getWorkflow(ctx, workflowId);
  return (
    stmt(
      ctx.db,
      `SELECT run_id, workflow_id, inbound_id, member_id, ran_at, actions FROM workflow_runs WHERE workflow_id = ? ORDER BY run_id ${LIMIT_OFFSET}`,
    ).all(workflowId, limit, offset) as (Omit<RunRecord, 'actions'> & { actions: string })[]
  ).map((r) => ({ ...r, actions: JSON.parse(r.actions) }));
}

/** The runs an inbound event made (a handful: one per workflow it matched). */
export function inboundRuns(ctx: Ctx, inboundId: number): RunRecord[] {
  return (
    stmt(
      ctx.db,
      'SELECT run_id, workflow_id, inbound_id, member_id, ran_at, actions FROM workflow_runs WHERE inbound_id = ? AND account_id = ? ORDER BY run_id',
    ).all(inboundId, ctx.accountId) as (Omit<RunRecord, 'actions'> & { actions: string })[]
  ).map((r) => ({ ...r, actions: JSON.parse(r.actions) }));
}

/** Kept by the runs' own triggers (migration 016). */
export function countWorkflowRuns(ctx: Ctx, workflowId: number): number {
  return getWorkflow(ctx, workflowId).run_count;
}

// ---------------------------------------------------------------- accepting

/** An object payload's key at a dotted path (`order.channel`); a top-level key with a dot in it wins. */
export function valueAt(payload: unknown, path: string): unknown {
  if (isObject(payload) && path in payload) return payload[path];
  let v: unknown = payload;
  for (const part of path.split('.')) {
    if (!isObject(v)) return undefined;
    v = v[part];
  }
  return v;
}

/**
 * POST {events_url}/v1/{account_id}/events: stores the event for processing and
 * answers {success: true} once it is committed. `text` is the payload as JSON text
 * (its size is the one the limit applies to).
 *
 * Events that arrive in the same turn of the event loop are written together, in as
 * few statements as possible, and committed together (a group commit; in amsg serve
 * with the rest of the turn's writes, commitPerTurn): a commit cost more than the rest
 * of accepting an event, and every answer still waits for its event to be on disk.
 */
export function acceptInbound(ctx: Ctx, payload: unknown, text: string): Promise<{ success: true }> {
  if (!isObject(payload)) throw badRequest('body: an event is a JSON object with an email key', { field: 'body' });
  if (!('email' in payload)) throw badRequest('email: an event must have an email key', { field: 'email' });
  const size = Buffer.byteLength(text);
  if (size > INBOUND_LIMIT) throw tooLarge(size);
  const email = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : JSON.stringify(payload.email);
  let batch = pendingAccepts.get(ctx.db);
  if (!batch) {
    pendingAccepts.set(ctx.db, (batch = []));
    setImmediate(() => commitAccepts(ctx.db));
  }
  const row: Accept['row'] = [ctx.accountId, email, text, stamp(ctx.clock.now())];
  return new Promise((resolve, reject) => batch.push({ row, resolve, reject }));
}

interface Accept {
  row: [accountId: number, email: string, payload: string, receivedAt: string];
  resolve(answer: { success: true }): void;
  reject(err: unknown): void;
}

const pendingAccepts = new Map<Db, Accept[]>();

/** Rows per INSERT of a group commit (4 parameters each, well under SQLite's 32,766). */
const ACCEPT_ROWS_PER_INSERT = 64;

/** `INSERT … VALUES (?, ?, ?, ?), …` of `rows` rows. */
const insertAccepts = (db: Db, rows: number) =>
  stmt(db, `INSERT INTO inbound_events (account_id, email, payload, received_at) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}`);

function commitAccepts(db: Db) {
  const batch = pendingAccepts.get(db) ?? [];
  pendingAccepts.delete(db);
  try {
    // A burst's events in as few statements as possible: one statement a row cost
    // more than the commit they shared.
    inTransaction(db, () => {
      for (let from = 0; from < batch.length; from += ACCEPT_ROWS_PER_INSERT) {
        const rows = batch.slice(from, from + ACCEPT_ROWS_PER_INSERT);
        insertAccepts(db, rows.length).run(rows.flatMap((a) => a.row));
      }
    });
  } catch (err) {
    for (const a of batch) a.reject(err);
    return;
  }
  afterCommit(db, (failed) => {
    if (failed === undefined) lastAccepted.set(db, Date.now());
    for (const a of batch) {
      if (failed === undefined) a.resolve({ success: true });
      else a.reject(failed);
    }
  });
  // In amsg serve the events join the turn's writes (commitPerTurn): this runs at the
  // turn's end already, so they are committed now, not with the next turn's requests.
  commitTurn(db);
}

const lastAccepted = new WeakMap<Db, number>();
const acceptFirst = new WeakSet<Db>();
const deferringSince = new WeakMap<Db, number>();

/** Events arriving less than this apart are a burst that processing waits out. */
const QUIET_MS = 50;
/** A burst longer than this no longer holds processing back (it shares the process with accepting). */
const MAX_DEFER_MS = 5_000;

/**
 * `amsg serve`: while events keep arriving, processing waits (for up to MAX_DEFER_MS),
 * so a burst is accepted at full speed and processed right after it. A local CLI
 * processes after each call instead, so it never waits.
 */
export function preferAccepting(db: Db): void {
  acceptFirst.add(db);
}

/** Whether processing should wait now (an accepting burst is under way and not too long). */
function waitingOutBurst(db: Db): boolean {
  if (!acceptFirst.has(db)) return false;
  const now = Date.now();
  if (now - (lastAccepted.get(db) ?? 0) >= QUIET_MS) return false;
  const since = deferringSince.get(db) ?? now;
  deferringSince.set(db, since);
  return now - since < MAX_DEFER_MS;
}

export const tooLarge = (size?: number) =>
  new ApiError(413, `an event payload may be at most ${INBOUND_LIMIT} bytes${size === undefined ? '' : ` (this one is ${size})`}`, {
    limit: INBOUND_LIMIT,
  });

export interface InboundRecord {
  inbound_id: number;
  account_id: number;
  email: string;
  payload: unknown;
  received_at: string;
  status: 'q' | 'o';
  processed_at: string | null;
  outcome: Outcome | null;
  member_id: number | null;
  workflow_ids: number[];
}

type InboundRow = Omit<InboundRecord, 'payload' | 'workflow_ids'> & { payload: string; workflow_ids: string | null };

const toInbound = (r: InboundRow): InboundRecord => ({
  ...r,
  payload: JSON.parse(r.payload),
  workflow_ids: r.workflow_ids ? JSON.parse(r.workflow_ids) : [],
});

/** Inbound events newest last, all or those of one outcome (`queued` for those not processed yet). */
export function listInbound(ctx: Ctx, q: Window & { outcome?: Outcome | typeof QUEUED }): InboundRecord[] {
  const { limit, offset } = windowOf(q);
  const rows =
    q.outcome === undefined
      ? stmt(ctx.db, `SELECT * FROM inbound_events WHERE account_id = ? ORDER BY inbound_id ${LIMIT_OFFSET}`).all(
          ctx.accountId,
          limit,
          offset,
        )
      : q.outcome === QUEUED
        ? stmt(ctx.db, `SELECT * FROM inbound_events WHERE account_id = ? AND outcome IS NULL ORDER BY inbound_id ${LIMIT_OFFSET}`).all(
            ctx.accountId,
            limit,
            offset,
          )
        : stmt(ctx.db, `SELECT * FROM inbound_events WHERE account_id = ? AND outcome = ? ORDER BY inbound_id ${LIMIT_OFFSET}`).all(
            ctx.accountId,
            q.outcome,
            limit,
            offset,
          );
  return (rows as InboundRow[]).map(toInbound);
}

/** From the kept counts (migration 016's triggers): a key lookup whatever the number of events. */
export function countInbound(ctx: Ctx, outcome?: Outcome | typeof QUEUED): number {
  return outcome === undefined
    ? (stmt(ctx.db, 'SELECT ifnull(sum(n), 0) FROM inbound_counts WHERE account_id = ?').pluck().get(ctx.accountId) as number)
    : ((stmt(ctx.db, 'SELECT n FROM inbound_counts WHERE account_id = ? AND outcome = ?').pluck().get(ctx.accountId, outcome) as
        | number
        | undefined) ?? 0);
}

export function getInbound(ctx: Ctx, inboundId: number): InboundRecord {
  const row = stmt(ctx.db, 'SELECT * FROM inbound_events WHERE inbound_id = ? AND account_id = ?').get(inboundId, ctx.accountId) as
    | InboundRow
    | undefined;
  if (!row) throw notFound(`inbound event ${inboundId} not found`);
  return toInbound(row);
}

// ---------------------------------------------------------------- processing

export type ActionResult =
  | { type: Action['type']; ok: true; [detail: string]: unknown }
  | { type: Action['type']; ok: false; error: string };

/** Workflows act for the account itself, not for a user. */
const workflowActor = (accountId: number): Actor => ({
  user_id: 0,
  account_id: accountId,
  email: 'workflows@localhost',
  role: 'owner',
  billing_access: false,
  manage_users: false,
});

/** A payload value as a monetary value: a number, or decimal text; anything else is none (0). */
function money(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) return Number(v);
  return 0;
}

function recordAction(
  ctx: Ctx,
  kind: Kind,
  typeId: number,
  valueFrom: string | undefined,
  memberId: number,
  inboundId: number,
  payload: unknown,
) {
  if (!typeExists(ctx, kind, typeId)) throw notFound(`${kind.noun} type ${typeId} not found`);
  const now = stamp(ctx.clock.now());
  const id = insertRecord(ctx, kind, {
    member_id: memberId,
    type_id: typeId,
    monetary_value: valueFrom ? money(valueAt(payload, valueFrom)) : 0,
    timestamp: now,
    inserted_at: now,
    mailing_id: null,
    attributes: { inbound_id: inboundId },
  });
  return { [kind.recordId]: id };
}

/** Runs one action; if it fails its writes are undone alone (the rest of the event's stand) and the failure is recorded. */
function runAction(ctx: Ctx, action: Action, memberId: number, inboundId: number, payload: unknown): ActionResult {
  // Adding to groups and recording check everything before their one write; the others
  // write in steps, so they get a savepoint of their own (prepared statements: a
  // better-sqlite3 transaction function per action cost a tenth of processing an event).
  const steps = action.type === 'set_fields' || action.type === 'send_mailing';
  if (steps) stmt(ctx.db, 'SAVEPOINT workflow_action').run();
  try {
    const detail = ((): Record<string, unknown> => {
      switch (action.type) {
        case 'add_to_groups':
          requireGroups(ctx, action.group_ids);
          return { added_to: joinGroups(ctx, memberId, action.group_ids) };
        case 'record_event':
          return recordAction(ctx, EVENTS, action.event_type_id, action.value_from, memberId, inboundId, payload);
        case 'record_touchpoint':
          return recordAction(ctx, TOUCHPOINTS, action.touchpoint_type_id, action.value_from, memberId, inboundId, payload);
        case 'set_fields': {
          const fields: Record<string, unknown> = { ...action.values };
          for (const [name, key] of Object.entries(action.from ?? {})) {
            const v = valueAt(payload, key);
            if (v !== undefined) fields[name] = v;
          }
          updateMember(ctx, memberId, { fields });
          return { fields: Object.keys(fields) };
        }
        case 'send_mailing': {
          const mailingId = createMemberCopy(ctx, action.mailing_id, memberId);
          return { mailing_id: mailingId };
        }
      }
    })();
    if (steps) stmt(ctx.db, 'RELEASE workflow_action').run();
    return { type: action.type, ok: true, ...detail };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (steps) {
      stmt(ctx.db, 'ROLLBACK TO workflow_action').run();
      stmt(ctx.db, 'RELEASE workflow_action').run();
    }
    return { type: action.type, ok: false, error: err.message };
  }
}

/** Events read per transaction at most: enough that a commit is a small share of the work. */
const BATCH = 500;

interface Matcher {
  workflow_id: number;
  pairs: [string, Scalar][];
  actions: Action[];
}

/**
 * Processes queued inbound events for up to budgetMs (at least one when any is
 * queued); answers whether any are left.
 */
export function advanceInbound(db: Db, clock: Clock, budgetMs: number): boolean {
  // A read first: with nothing queued (most ticks) no write lock is taken.
  if (!stmt(db, "SELECT 1 FROM inbound_events WHERE status = 'q' LIMIT 1").get()) {
    deferringSince.delete(db);
    return false;
  }
  // Answering "nothing left" while waiting: the runner looks again in a moment, not in a busy loop.
  if (waitingOutBurst(db)) return false;
  const started = Date.now();
  const next = stmt(
    db,
    `SELECT inbound_id, account_id, email, payload FROM inbound_events WHERE status = 'q' ORDER BY inbound_id LIMIT ${BATCH}`,
  );
  for (;;) {
    const left = inTransaction(db, () => {
      // Read inside the write transaction: another process waits for it and then sees
      // these events processed, so no event is taken twice. Those the budget leaves
      // unprocessed stay queued (nothing marks them).
      const batch = next.all() as { inbound_id: number; account_id: number; email: string; payload: string }[];
      const workflows = new Map<number, Matcher[]>();
      let i = 0;
      while (i < batch.length) {
        processOne(db, clock, batch[i++], workflows);
        if ((i & 15) === 0 && Date.now() - started >= budgetMs) break;
      }
      return i < batch.length || batch.length === BATCH;
    });
    if (!left) return false;
    if (Date.now() - started >= budgetMs) return true;
  }
}

function matchersOf(db: Db, accountId: number, cache: Map<number, Matcher[]>): Matcher[] {
  let found = cache.get(accountId);
  if (!found) {
    const rows = stmt(db, 'SELECT workflow_id, match, actions FROM workflows WHERE account_id = ? ORDER BY workflow_id').all(accountId) as {
      workflow_id: number;
      match: string;
      actions: string;
    }[];
    found = rows.map((r) => ({ workflow_id: r.workflow_id, pairs: Object.entries(JSON.parse(r.match)), actions: JSON.parse(r.actions) }));
    cache.set(accountId, found);
  }
  return found;
}

function processOne(
  db: Db,
  clock: Clock,
  event: { inbound_id: number; account_id: number; email: string; payload: string },
  cache: Map<number, Matcher[]>,
) {
  const now = stamp(clock.now());
  const mark = (outcome: Outcome, memberId: number | null, workflowIds: number[] | null) => {
    stmt(
      db,
      "UPDATE inbound_events SET status = 'o', processed_at = ?, outcome = ?, member_id = ?, workflow_ids = ? WHERE inbound_id = ?",
    ).run(now, outcome, memberId, workflowIds ? JSON.stringify(workflowIds) : null, event.inbound_id);
  };
  // The spec's four rules; the fourth (the size) was checked when the event was accepted.
  if (!isEmail(event.email)) return mark('invalid email', null, null);
  const member = stmt(db, 'SELECT member_id, member_status_id, deleted_at FROM members WHERE account_id = ? AND email = ?').get(
    event.account_id,
    event.email,
  ) as { member_id: number; member_status_id: string; deleted_at: string | null } | undefined;
  if (!member || member.deleted_at) return mark('no member', null, null);
  if (member.member_status_id !== 'a') return mark('member not active', member.member_id, null);
  const payload = JSON.parse(event.payload) as unknown;
  const matching = matchersOf(db, event.account_id, cache).filter((w) => w.pairs.every(([key, value]) => valueAt(payload, key) === value));
  if (!matching.length) return mark('no workflow matched', member.member_id, null);
  const ctx: Ctx = { db, clock, actor: workflowActor(event.account_id), accountId: event.account_id };
  const insertRun = stmt(
    db,
    'INSERT INTO workflow_runs (workflow_id, account_id, inbound_id, member_id, ran_at, actions) VALUES (?, ?, ?, ?, ?, ?)',
  );
  for (const w of matching) {
    const results = w.actions.map((a) => runAction(ctx, a, member.member_id, event.inbound_id, payload));
    insertRun.run(w.workflow_id, event.account_id, event.inbound_id, member.member_id, now, JSON.stringify(results));
  }
  mark(
    'ran',
    member.member_id,
    matching.map((w) => w.workflow_id),
  );
}
