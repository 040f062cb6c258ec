/**
 * The resource kinds a fixture can describe, in the order they are written: a kind
 * names only kinds before it (or itself: a search that uses another search). Each is
 * one declarative entry (see Kind in ./kind.ts); the resolver in ./seed.ts does the
 * rest.
 */
import { ApiError } from '../../errors.js';
import { allPages } from '../paging.js';
import { listedBy, norm, sameJson, type Kind, type Ref, type SeedRun } from './kind.js';
import { members } from './members.js';
import { mailings } from './mailings.js';
import { eventTypes, resetAutomation, touchpointTypes, workflows } from './automation.js';
import { memberEvents, touchpoints } from './records.js';
import { resetSms, smsCampaigns } from './sms.js';
import { resetSubaccounts, subaccounts } from './subaccounts.js';
import { resetWebhooks, webhooks } from './webhooks.js';
import * as v from './shape.js';

const FIELD_TYPES = ['text', 'text[]', 'numeric', 'boolean', 'date', 'timestamp'] as const;

const fieldRecord = v.obj(
  {
    shortcut_name: v.str({
      max: 64,
      pattern: /^[A-Za-z][A-Za-z0-9_]*$/,
      hint: 'must start with a letter and hold only letters, digits and _',
    }),
    display_name: v.str({ max: 255 }),
    short_display_name: v.str({ max: 255 }),
    field_type: v.oneOf(FIELD_TYPES),
    widget_type: v.str(),
    options: v.list(v.str()),
    column_order: v.num({ int: true, min: 0 }),
    required: v.bool,
  },
  ['shortcut_name', 'field_type'],
);
type FieldRecord = NonNullable<ReturnType<typeof fieldRecord>>;
export interface FieldRow {
  field_id: number;
  shortcut_name: string;
  display_name: string;
  field_type: string;
  widget_type: string | null;
  options: string[] | null;
  required?: boolean;
}

const fields: Kind<FieldRecord, FieldRow> = {
  name: 'fields',
  record: fieldRecord,
  key: (r) => r.shortcut_name,
  existing: listedBy('/fields', (f: FieldRow) => f.shortcut_name, false),
  idOf: (f) => f.field_id,
  differs: (_run, r, f) =>
    r.field_type !== f.field_type ||
    (r.display_name !== undefined && r.display_name !== f.display_name) ||
    (r.widget_type !== undefined && r.widget_type !== f.widget_type) ||
    (r.options !== undefined && JSON.stringify(r.options) !== JSON.stringify(f.options ?? [])),
  create: (run, r) => run.api.post<number>('/fields', { display_name: r.shortcut_name, ...r }).then(fieldIdOf),
  update: async (run, r, f) => void (await run.api.put(`/fields/${f.field_id}`, { display_name: r.shortcut_name, ...r })),
};
/** POST /fields answers the field (or its id): either way, its id. */
const fieldIdOf = (answer: unknown) => (typeof answer === 'number' ? answer : (answer as FieldRow).field_id);

const relationshipRecord = v.obj(
  {
    relationship_name: v.str({ max: 255 }),
    parent_field: v.str(),
    child_field: v.str(),
    options: v.record(v.list(v.str())),
  },
  ['relationship_name', 'parent_field', 'child_field', 'options'],
);
type RelationshipRecord = NonNullable<ReturnType<typeof relationshipRecord>>;
interface RelationshipRow {
  relationship_id: number;
  relationship_name: string;
  parent_field: { field_id: number };
  child_field: { field_id: number };
  options: Record<string, string[]>;
}

/** A parent field's option limits its child field's options; both fields are named by shortcut name. */
const fieldRelationships: Kind<RelationshipRecord, RelationshipRow> = {
  name: 'field_relationships',
  record: relationshipRecord,
  key: (r) => r.relationship_name,
  refs: (r, path) => [
    { kind: 'fields', name: r.parent_field, path: `${path}.parent_field` },
    { kind: 'fields', name: r.child_field, path: `${path}.child_field` },
  ],
  existing: listedBy('/fields/relationships', (r: RelationshipRow) => r.relationship_name, false),
  idOf: (r) => r.relationship_id,
  differs: (run, r, e) =>
    run.id('fields', r.parent_field) !== e.parent_field.field_id ||
    run.id('fields', r.child_field) !== e.child_field.field_id ||
    !sameJson(r.options, e.options),
  create: async (run, r) => (await run.api.post<RelationshipRow>('/fields/relationships', relationshipBody(run, r))).relationship_id,
  update: async (run, r, e) => void (await run.api.put(`/fields/relationships/${e.relationship_id}`, relationshipBody(run, r))),
};
const relationshipBody = (run: SeedRun, r: RelationshipRecord) => ({
  relationship_name: r.relationship_name,
  parent_field_id: run.id('fields', r.parent_field),
  child_field_id: run.id('fields', r.child_field),
  options: r.options,
});

const groupRecord = v.nameOr('group_name', v.obj({ group_name: v.str({ max: 255 }) }, ['group_name']));
interface GroupRow {
  member_group_id: number;
  group_name: string;
}

const groups: Kind<{ group_name: string }, GroupRow> = {
  name: 'groups',
  record: groupRecord,
  key: (r) => r.group_name,
  existing: listedBy('/groups', (g: GroupRow) => g.group_name),
  idOf: (g) => g.member_group_id,
  create: async (run, r) => (await run.api.post<GroupRow[]>('/groups', { groups: [{ group_name: r.group_name }] }))[0].member_group_id,
};

const subscriptionRecord = v.nameOr('name', v.obj({ name: v.str({ max: 255 }), description: v.str({ min: 0 }) }, ['name']));
interface SubscriptionRow {
  subscription_id: number;
  subscription_name: string;
  description: string | null;
}

const subscriptions: Kind<{ name: string; description?: string }, SubscriptionRow> = {
  name: 'subscriptions',
  record: subscriptionRecord,
  key: (r) => r.name,
  existing: listedBy('/subscriptions', (s: SubscriptionRow) => s.subscription_name, false),
  idOf: (s) => s.subscription_id,
  differs: (_run, r, s) => r.description !== undefined && r.description !== (s.description ?? ''),
  create: async (run, r) => (await run.api.post<SubscriptionRow>('/subscriptions', r)).subscription_id,
  update: async (run, r, s) => void (await run.api.put(`/subscriptions/${s.subscription_id}`, r)),
};

// ---------------------------------------------------------------- searches (and segments)

const searchRecord = v.obj({ name: v.str({ max: 255 }), criteria: v.any }, ['name', 'criteria']);
type SearchRecord = NonNullable<ReturnType<typeof searchRecord>>;
interface SearchRow {
  search_id: number;
  name: string;
  criteria: string;
}

const REFERRING_SUBJECTS: Record<string, string> = {
  group: 'groups',
  subscription: 'subscriptions',
  search: 'searches',
  segment: 'searches',
};

/**
 * Walks criteria and calls `visit` for each name that a group, subscription, search
 * or segment condition gives as text (`["group", "eq", "Gold"]`, `["search", "in", ["A", "B"]]`),
 * answering what to put in its place.
 */
function mapCriteriaNames(node: unknown, path: string, visit: (kind: string, name: string, path: string) => unknown): unknown {
  if (!Array.isArray(node) || typeof node[0] !== 'string') return node;
  const [head, ...rest] = node;
  if (head === 'and' || head === 'or' || head === 'not')
    return [head, ...rest.map((x, i) => mapCriteriaNames(x, `${path}[${i + 1}]`, visit))];
  const kind = REFERRING_SUBJECTS[head];
  if (!kind) return node;
  const value = (x: unknown, at: string) => (typeof x === 'string' ? visit(kind, x, at) : x);
  return [
    head,
    rest[0],
    ...rest
      .slice(1)
      .map((x, i) => (Array.isArray(x) ? x.map((y, j) => value(y, `${path}[${i + 2}][${j}]`)) : value(x, `${path}[${i + 2}]`))),
  ];
}

/** Criteria as the service takes them: search and segment names become ids (groups and subscriptions are taken by name). */
function resolvedCriteria(run: SeedRun, criteria: unknown): unknown {
  return mapCriteriaNames(criteria, '', (kind, name) => (kind === 'searches' ? (run.id('searches', name) ?? name) : name));
}

const searches: Kind<SearchRecord, SearchRow> = {
  name: 'searches',
  aliases: ['segments'],
  record: searchRecord,
  key: (r) => r.name,
  refs(r, path) {
    const refs: Ref[] = [];
    const criteria = typeof r.criteria === 'string' ? safeJson(r.criteria) : r.criteria;
    mapCriteriaNames(criteria, `${path}.criteria`, (kind, name, at) => refs.push({ kind, name, path: at }));
    return refs;
  },
  existing: listedBy('/searches', (s: SearchRow) => s.name),
  idOf: (s) => s.search_id,
  differs: (run, r, s) => JSON.stringify(resolvedCriteria(run, criteriaOf(r))) !== JSON.stringify(safeJson(s.criteria)),
  create: (run, r) => run.api.post<number>('/searches', { name: r.name, criteria: resolvedCriteria(run, criteriaOf(r)) }),
  update: async (run, r, s) => void (await run.api.put(`/searches/${s.search_id}`, { criteria: resolvedCriteria(run, criteriaOf(r)) })),
};

const criteriaOf = (r: SearchRecord) => (typeof r.criteria === 'string' ? safeJson(r.criteria) : r.criteria);
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // the service names what is wrong with it
  }
}

// ---------------------------------------------------------------- triggers

const triggerRecord = v.obj(
  {
    name: v.str({ max: 255 }),
    mailing: v.str(),
    event_type: v.oneOf(['r', 's'] as const),
    field: v.str(),
    push_offset: v.num({ int: true, min: 0 }),
    start_ts: v.str(),
  },
  ['name', 'mailing', 'event_type'],
);
type TriggerRecord = NonNullable<ReturnType<typeof triggerRecord>>;
interface TriggerRow {
  trigger_id: number;
  name: string;
}

const triggers: Kind<TriggerRecord, TriggerRow> = {
  name: 'triggers',
  record: triggerRecord,
  key: (r) => r.name,
  refs: (r, path) => [
    { kind: 'mailings', name: r.mailing, path: `${path}.mailing` },
    ...(r.field ? [{ kind: 'fields', name: r.field, path: `${path}.field` }] : []),
  ],
  existing: listedBy('/triggers', (t: TriggerRow) => t.name, false),
  idOf: (t) => t.trigger_id,
  create: (run, r) =>
    run.api.post<number>('/triggers', {
      name: r.name,
      parent_mailing_id: run.id('mailings', r.mailing),
      event_type: r.event_type,
      field_id: r.field ? run.id('fields', r.field) : undefined,
      push_offset: r.push_offset,
      start_ts: r.start_ts,
    }),
};

/** Every kind, in the order they are written. */
export const KINDS: Kind[] = [
  fields,
  fieldRelationships,
  groups,
  subscriptions,
  searches,
  eventTypes,
  touchpointTypes,
  members,
  mailings,
  smsCampaigns,
  triggers,
  workflows,
  memberEvents,
  touchpoints,
  subaccounts,
  // Last: the seed's own writes fire none of them.
  webhooks,
];

/**
 * Empties the account's audience and content (`amsg seed --reset`), through the
 * service's own operations so it works on a remote service too: webhooks first (so
 * the reset fires none), workflows, triggers, SMS campaigns and mailings (archived:
 * the service keeps what was sent), searches (those no other search uses first),
 * event and touchpoint types (their records go with them), members (archived, then
 * purged), subscriptions, groups, field relationships, fields other than the
 * standard first_name and last_name, and last the HQ's sub-accounts (retired).
 */
export async function resetAccount(run: Pick<SeedRun, 'api' | 'note'>): Promise<void> {
  const { api } = run;
  await resetWebhooks(run);
  await resetAutomation(run, 'workflows');
  for (const t of await api.get<TriggerRow[]>('/triggers')) await api.delete(`/triggers/${t.trigger_id}`);
  await resetSms(run);
  for (const m of await api.get<{ mailing_id: number; mailing_status: string }[]>('/mailings', { mailing_statuses: 'p,a,u,w,i,s,c,f' })) {
    if (m.mailing_status === 'p' || m.mailing_status === 'a') await api.delete(`/mailings/cancel/${m.mailing_id}`);
    await api.delete(`/mailings/${m.mailing_id}`);
  }
  let left = await allPages<SearchRow>(api, '/searches');
  while (left.length) {
    const kept: SearchRow[] = [];
    for (const s of left)
      await api.delete(`/searches/${s.search_id}`).catch((err) => {
        // Used by another search: deleted once that one is gone.
        if (err instanceof ApiError && err.status < 500) kept.push(s);
        else throw err;
      });
    if (kept.length === left.length)
      throw kept.length ? new Error(`cannot delete searches ${kept.map((s) => s.name).join(', ')}`) : new Error();
    left = kept;
  }
  await resetAutomation(run, 'types');
  for (const status of ['a', 'e', 'o']) await api.delete('/members', { member_status_id: status });
  // Members of status f (forwarded-to addresses) have no bulk archive: by id.
  const rest = await allPages<{ member_id: number }>(api, '/members');
  for (let i = 0; i < rest.length; i += 5000)
    await api.put('/members/delete', { member_ids: rest.slice(i, i + 5000).map((m) => m.member_id) });
  await api.put('/members/purgeall', {});
  for (const s of await api.get<SubscriptionRow[]>('/subscriptions')) await api.delete(`/subscriptions/${s.subscription_id}`);
  for (const g of await allPages<GroupRow>(api, '/groups')) await api.delete(`/groups/${g.member_group_id}`);
  for (const r of await api.get<RelationshipRow[]>('/fields/relationships')) await api.delete(`/fields/relationships/${r.relationship_id}`);
  for (const f of await api.get<FieldRow[]>('/fields'))
    if (!STANDARD_FIELDS.has(norm(f.shortcut_name))) await api.delete(`/fields/${f.field_id}`);
  await resetSubaccounts(run);
}

/**
 * What `seed --reset` would delete, kind by kind (read-only): for its prompt and
 * its dry run. Members count live and archived ones, since the reset purges both.
 */
export async function resetCounts(api: SeedRun['api']): Promise<[kind: string, count: number][]> {
  const triggers = (await api.get<TriggerRow[]>('/triggers')).length;
  const mailings = (await api.get<unknown[]>('/mailings', { mailing_statuses: 'p,a,u,w,i,s,c,f' })).length;
  const searches = await api.get<number>('/searches', { count: true });
  const members = await api.get<number>('/members', { deleted: true, count: true });
  const subscriptions = (await api.get<SubscriptionRow[]>('/subscriptions')).length;
  const groups = await api.get<number>('/groups', { count: true });
  const fields = (await api.get<FieldRow[]>('/fields')).filter((f) => !STANDARD_FIELDS.has(norm(f.shortcut_name))).length;
  return Object.entries({ triggers, mailings, searches, members, subscriptions, groups, fields });
}

/** The fields every new account has; a reset keeps them (as a new account would have them). */
export const STANDARD_FIELDS = new Set(['first_name', 'last_name']);
