/**
 * What ingested events run on: member event types and touchpoint types (the spec's
 * "Member events" and "Touchpoints" catalogues) and workflows (an extension), whose
 * actions name groups, fields, mailings and types by name in a fixture.
 */
import { allPages } from '../paging.js';
import { listedBy, sameJson, type Kind, type Ref, type SeedRun } from './kind.js';
import * as v from './shape.js';

// ---------------------------------------------------------------- event and touchpoint types

type TypeRecord = { name: string; display_name?: string };
type TypeRow = Record<string, string | number>;

/**
 * A type catalogue: a bare name or `{<typeName>: purchase, display_name: Purchase}`.
 * The display name defaults to the name (the service requires one).
 */
function typeKind(name: string, base: string, typeName: string, typeId: string): Kind<TypeRecord, TypeRow> {
  const full = v.obj({ [typeName]: v.str({ max: 255 }), display_name: v.str({ max: 255 }) } as Record<string, v.Shape<string>>, [typeName]);
  const record: v.Shape<TypeRecord> = (x, path, c) => {
    const r = v.nameOr(typeName, full)(x, path, c) as Record<string, string> | undefined;
    return r && { name: r[typeName], display_name: r.display_name };
  };
  const body = (r: TypeRecord) => ({ [typeName]: r.name, display_name: r.display_name ?? r.name });
  return {
    name,
    record,
    key: (r) => r.name,
    existing: listedBy(`/${base}`, (t: TypeRow) => String(t[typeName])),
    idOf: (t) => Number(t[typeId]),
    differs: (_run, r, t) => r.display_name !== undefined && r.display_name !== t.display_name,
    create: async (run, r) => Number((await run.api.post<TypeRow>(`/${base}`, body(r)))[typeId]),
    update: async (run, r, t) => void (await run.api.put(`/${base}/${t[typeId]}`, body(r))),
  };
}

export const eventTypes = typeKind('event_types', 'events', 'event_type', 'event_type_id');
export const touchpointTypes = typeKind('touchpoint_types', 'touchpoints', 'type_name', 'touchpoint_type_id');

// ---------------------------------------------------------------- workflows

const names = v.list(v.str(), { min: 1 });
const valueFrom = v.str({
  pattern: /^[^.]+(\.[^.]+)*$/,
  hint: 'must be a key of the payload, dotted for nested objects (e.g. order.total)',
});

/** Each action as the file writes it: what it names by name (the service takes ids). */
const ACTION_SHAPES = {
  add_to_groups: v.obj({ type: v.str(), groups: names }, ['groups']),
  record_event: v.obj({ type: v.str(), event_type: v.str(), value_from: valueFrom }, ['event_type']),
  record_touchpoint: v.obj({ type: v.str(), touchpoint_type: v.str(), value_from: valueFrom }, ['touchpoint_type']),
  set_fields: v.obj({ type: v.str(), values: v.record(v.any), from: v.record(valueFrom) }),
  send_mailing: v.obj({ type: v.str(), mailing: v.str() }, ['mailing']),
};
type ActionType = keyof typeof ACTION_SHAPES;
type ActionRecord = {
  type: ActionType;
  groups?: string[];
  event_type?: string;
  touchpoint_type?: string;
  value_from?: string;
  values?: Record<string, unknown>;
  from?: Record<string, string>;
  mailing?: string;
};

const action: v.Shape<ActionRecord> = (x, path, c) => {
  const type = (x as { type?: unknown } | null)?.type;
  if (!x || typeof x !== 'object' || Array.isArray(x) || typeof type !== 'string' || !(type in ACTION_SHAPES)) {
    if (x && typeof x === 'object' && !Array.isArray(x))
      return c.fail(`${path}.type`, `must be one of ${Object.keys(ACTION_SHAPES).join(', ')}, got ${JSON.stringify(type) ?? 'nothing'}`);
    return c.fail(path, 'must be an object with a type');
  }
  const r = ACTION_SHAPES[type as ActionType](x, path, c) as ActionRecord | undefined;
  if (r && type === 'set_fields' && !r.values && !r.from) return c.fail(path, 'give values, from, or both');
  return r;
};

const workflowRecord = v.obj({ name: v.str({ max: 255 }), match: v.record(v.any), actions: v.list(action, { min: 1 }) }, [
  'name',
  'match',
  'actions',
]);
type WorkflowRecord = NonNullable<ReturnType<typeof workflowRecord>>;
interface WorkflowRow {
  workflow_id: number;
  name: string;
  match: Record<string, unknown>;
  actions: Record<string, unknown>[];
}

/** The actions as the service takes (and stores) them: names become ids. */
function resolvedActions(run: SeedRun, actions: ActionRecord[]) {
  const opt = (key: string, value: unknown) => (value === undefined ? {} : { [key]: value });
  return actions.map((a) => {
    switch (a.type) {
      case 'add_to_groups':
        return { type: a.type, group_ids: a.groups!.map((g) => run.id('groups', g)) };
      case 'record_event':
        return { type: a.type, event_type_id: run.id('event_types', a.event_type!), ...opt('value_from', a.value_from) };
      case 'record_touchpoint':
        return { type: a.type, touchpoint_type_id: run.id('touchpoint_types', a.touchpoint_type!), ...opt('value_from', a.value_from) };
      case 'set_fields':
        return { type: a.type, ...opt('values', a.values), ...opt('from', a.from) };
      default:
        return { type: a.type, mailing_id: run.id('mailings', a.mailing!) };
    }
  });
}

export const workflows: Kind<WorkflowRecord, WorkflowRow> = {
  name: 'workflows',
  record: workflowRecord,
  key: (r) => r.name,
  refs(r, path) {
    const refs: Ref[] = [];
    r.actions.forEach((a, i) => {
      const at = `${path}.actions[${i}]`;
      a.groups?.forEach((name, j) => refs.push({ kind: 'groups', name, path: `${at}.groups[${j}]` }));
      if (a.event_type) refs.push({ kind: 'event_types', name: a.event_type, path: `${at}.event_type` });
      if (a.touchpoint_type) refs.push({ kind: 'touchpoint_types', name: a.touchpoint_type, path: `${at}.touchpoint_type` });
      if (a.mailing) refs.push({ kind: 'mailings', name: a.mailing, path: `${at}.mailing` });
      for (const part of ['values', 'from'] as const)
        for (const name of Object.keys(a[part] ?? {})) refs.push({ kind: 'fields', name, path: `${at}.${part}.${name}` });
    });
    return refs;
  },
  existing: listedBy('/workflows', (w: WorkflowRow) => w.name),
  idOf: (w) => w.workflow_id,
  differs: (run, r, w) => !sameJson(r.match, w.match) || !sameJson(resolvedActions(run, r.actions), w.actions),
  create: (run, r) => run.api.post<number>('/workflows', { name: r.name, match: r.match, actions: resolvedActions(run, r.actions) }),
  update: async (run, r, w) =>
    void (await run.api.put(`/workflows/${w.workflow_id}`, { match: r.match, actions: resolvedActions(run, r.actions) })),
};

/** Deletes workflows, then the event and touchpoint types (their records go with them). */
export async function resetAutomation(run: Pick<SeedRun, 'api'>, what: 'workflows' | 'types'): Promise<void> {
  const { api } = run;
  if (what === 'workflows') {
    for (const w of await allPages<WorkflowRow>(api, '/workflows')) await api.delete(`/workflows/${w.workflow_id}`);
    return;
  }
  for (const t of await allPages<TypeRow>(api, '/events')) await api.delete(`/events/${t.event_type_id}`);
  for (const t of await allPages<TypeRow>(api, '/touchpoints')) await api.delete(`/touchpoints/${t.touchpoint_type_id}`);
}
