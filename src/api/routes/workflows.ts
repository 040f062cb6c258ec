/**
 * Workflows (an extension: the spec says an ingested event powers "an automated
 * workflow" and gives the rules, not how one is configured) and their runs; and the
 * same workflows at the real service's `/automation/…` paths, in its shapes.
 */
import * as s from '../schema.js';
import { route } from '../route.js';
import { listQuery, windowedList } from './lists.js';
import { atD, spacedMicros } from '../codecs.js';
import * as workflows from '../../service/events/workflows.js';
import type { WorkflowRecord } from '../../service/events/workflows.js';
import { encodeRun } from './events.js';

const workflowId = s.object({ workflow_id: s.idText() });
const name = s.string({ min: 1, max: 255 });
/** Checked by the service, which names the pair or action (and its field) that is wrong. */
const matchSchema = s.any();
const actionsSchema = s.any();

const encode = (w: WorkflowRecord) => ({ ...w, created_at: atD(w.created_at), modified_at: atD(w.modified_at) });

/**
 * A workflow as the real service lists its automation workflows (the shape its public
 * clients parse): the id as a string, a state (an amsg workflow runs whenever an event
 * matches, so it is active), and the times as `YYYY-MM-DD hh:mm:ss.ffffff`.
 */
const automationWorkflow = (w: WorkflowRecord) => ({
  workflow_id: String(w.workflow_id),
  name: w.name,
  status: 'active',
  created_at: spacedMicros(w.created_at),
  updated_at: spacedMicros(w.modified_at),
});

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
  route({
    op: 'automation.workflows.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/automation/workflows',
    summary:
      "The workflows at the real service's path, in its list shape ({workflow_id (a string), name, status, created_at, updated_at}); /workflows has amsg's own, with match and actions",
    extension: true,
    query: listQuery,
    returns: 'array of {workflow_id, name, status, created_at, updated_at}, or an integer with count=true',
    handler: ({ ctx, query }) =>
      query.count ? workflows.countWorkflows(ctx) : workflows.listWorkflows(ctx, query).map(automationWorkflow),
  }),
  route({
    op: 'automation.workflows.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/automation/workflows/{workflow_id}',
    summary: "One workflow at the real service's path, in its shape",
    extension: true,
    params: workflowId,
    returns: '{workflow_id, name, status, created_at, updated_at}',
    handler: ({ ctx, params }) => automationWorkflow(workflows.getWorkflow(ctx, params.workflow_id)),
  }),
  route({
    op: 'automation.counts',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/automation/counts',
    summary: "The workflows by state, at the real service's path (every amsg workflow is active)",
    extension: true,
    returns: '{account_id, active, inactive, draft}',
    handler: ({ ctx }) => workflows.workflowCounts(ctx),
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
