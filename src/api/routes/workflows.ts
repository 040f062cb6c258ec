/**
 * Workflows (an extension: the spec says an ingested event powers "an automated
 * workflow" and gives the rules, not how one is configured) and their runs.
 */
import * as s from '../schema.js';
import { route } from '../route.js';
import { listQuery, windowedList } from './lists.js';
import { atD } from '../codecs.js';
import * as workflows from '../../service/events/workflows.js';
import type { WorkflowRecord } from '../../service/events/workflows.js';
import { encodeRun } from './events.js';

const workflowId = s.object({ workflow_id: s.idText() });
const name = s.string({ min: 1, max: 255 });
/** Checked by the service, which names the pair or action (and its field) that is wrong. */
const matchSchema = s.any();
const actionsSchema = s.any();

const encode = (w: WorkflowRecord) => ({ ...w, created_at: atD(w.created_at), modified_at: atD(w.modified_at) });

const ACTIONS_HELP =
  'match: {"key": value, "nested.key": value} (every pair equal); actions, in order: ' +
  '{"type": "add_to_groups", "group_ids": [..]}, {"type": "record_event", "event_type_id": N, "value_from": "order.total"}, ' +
  '{"type": "record_touchpoint", "touchpoint_type_id": N, "value_from": "key"}, ' +
  '{"type": "set_fields", "values": {"field": value}, "from": {"field": "payload.key"}}, {"type": "send_mailing", "mailing_id": N}';

export const workflowRoutes = [
  route({
    op: 'workflows.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/workflows',
    summary: 'List workflows in id order',
    extension: true,
    query: listQuery,
    returns: 'array of workflow, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? workflows.countWorkflows(ctx) : workflows.listWorkflows(ctx, query).map(encode)),
  }),
  route({
    op: 'workflows.create',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/workflows',
    summary: `Create a workflow; answers its id. ${ACTIONS_HELP}`,
    extension: true,
    body: s.object({ name, match: matchSchema, actions: actionsSchema }),
    returns: 'integer (workflow_id)',
    handler: ({ ctx, body }) => workflows.createWorkflow(ctx, body),
  }),
  route({
    op: 'workflows.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/workflows/{workflow_id}',
    summary: 'Get a workflow with its run count',
    extension: true,
    params: workflowId,
    returns: 'workflow',
    handler: ({ ctx, params }) => encode(workflows.getWorkflow(ctx, params.workflow_id)),
  }),
  route({
    op: 'workflows.update',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/workflows/{workflow_id}',
    summary: 'Change a workflow (name, match, actions: what is given)',
    extension: true,
    params: workflowId,
    body: s.object({ name: s.optional(name), match: s.optional(matchSchema), actions: s.optional(actionsSchema) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => workflows.updateWorkflow(ctx, params.workflow_id, body),
  }),
  route({
    op: 'workflows.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/workflows/{workflow_id}',
    summary: 'Delete a workflow and its runs',
    extension: true,
    params: workflowId,
    returns: 'true',
    handler: ({ ctx, params }) => workflows.deleteWorkflow(ctx, params.workflow_id),
  }),
  windowedList({
    op: 'workflows.runs',
    path: '/{account_id}/workflows/{workflow_id}/runs',
    id: 'workflow_id',
    summary: 'The runs of a workflow, oldest first: the event, the member, and each action with its result',
    extension: true,
    item: 'workflow run',
    list: workflows.workflowRuns,
    count: workflows.countWorkflowRuns,
    encode: encodeRun,
  }),
];
