import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../src/cli/context.js';
import { collect, jsonArgument } from '../src/cli/resolve.js';
import { counted } from '../src/cli/describe.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';

const workflowId = (ref: string) => {
  if (!/^\d+$/.test(ref)) throw new UsageError(`a workflow is a numeric id, got "${ref}"`);
  return Number(ref);
};

/** `--match key=value`: a value that reads as JSON (a number, true, null, "text") is that value, else text. */
function matchOf(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--match takes key=value, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      const parsed = JSON.parse(raw);
      if (parsed === null || typeof parsed !== 'object') value = parsed;
    } catch {
      // text
    }
    out[pair.slice(0, eq)] = value;
  }
  return out;
}

interface DefinitionFlags {
  name?: string;
  match?: string[];
  action?: string[];
  actions?: string;
}

async function definition(o: DefinitionFlags): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  if (o.name !== undefined) body.name = o.name;
  if (o.match?.length) body.match = matchOf(o.match);
  if (o.actions !== undefined && o.action?.length) throw new UsageError('give --action (repeatable) or --actions, not both');
  if (o.actions !== undefined) body.actions = await jsonArgument('--actions', o.actions);
  else if (o.action?.length) body.actions = await Promise.all(o.action.map((a) => jsonArgument('--action', a)));
  return body;
}

const definitionFlags = (cmd: Command) =>
  cmd
    .option('--match <key=value>', 'a pair the event must hold, dotted keys for nested objects (repeatable)', collect)
    .option('--action <json>', 'an action, in order (repeatable)', collect)
    .option('--actions <json|@file>', 'every action as one JSON array');

export function register(workflows: Command) {
  workflows.addHelpText(
    'after',
    `
An ingested event (amsg events ingest, POST /v1/{account}/events) runs every workflow whose
pairs it all holds, when its e-mail address belongs to an active member. Actions:
  {"type": "add_to_groups", "group_ids": [3, 4]}
  {"type": "record_event", "event_type_id": 1, "value_from": "order.total"}
  {"type": "record_touchpoint", "touchpoint_type_id": 2, "value_from": "amount"}
  {"type": "set_fields", "values": {"tier": "gold"}, "from": {"city": "address.city"}}
  {"type": "send_mailing", "mailing_id": 7}      (a copy of the mailing to the member)
`,
  );

  examples(
    listOptions(workflows.command('list').description('list workflows with their run counts (every one unless --limit or --start)'), {
      countable: true,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/workflows', {}, o, { table: TABLES.workflows }, { countable: true, allByDefault: true });
      }),
    ),
    ['amsg workflows list'],
  );

  examples(
    workflows
      .command('get <id>')
      .description('show a workflow')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/workflows/${workflowId(ref)}`));
        }),
      ),
    ['amsg workflows get 1 --json'],
  );

  examples(
    definitionFlags(workflows.command('create <name>').description('create a workflow')).action(
      action(async (ctx, name: string, o: DefinitionFlags) => {
        const body = await definition({ ...o, name });
        if (!body.match) throw new UsageError('give at least one --match key=value');
        if (!body.actions) throw new UsageError('give --action JSON (repeatable) or --actions');
        const api = await ctx.api();
        const id = await api.post<number>('/workflows', body);
        await ctx.done(id, `Created workflow ${id} "${name}".`);
      }),
    ),
    [
      `amsg workflows create "Web buyers" --match type=purchase --match order.channel=web --action '{"type": "add_to_groups", "group_ids": [3]}'`,
      'amsg workflows create "Welcome" --match type=signup --actions @welcome-actions.json',
    ],
  );

  examples(
    definitionFlags(
      workflows.command('update <id>').description('change a workflow: its name, its pairs (all replaced), its actions (all replaced)'),
    )
      .option('--name <name>', 'the new name')
      .action(
        action(async (ctx, ref: string, o: DefinitionFlags) => {
          const id = workflowId(ref);
          const body = await definition(o);
          if (!Object.keys(body).length) throw new UsageError('give --name, --match, --action or --actions');
          const api = await ctx.api();
          await ctx.done(await api.put(`/workflows/${id}`, body), `Updated workflow ${id}.`);
        }),
      ),
    ['amsg workflows update 1 --match type=purchase --match order.channel=app'],
  );

  examples(
    dryRunOption(workflows.command('delete <id>').description('delete a workflow and its runs')).action(
      action(async (ctx, ref: string) => {
        const id = workflowId(ref);
        const api = await ctx.api();
        const w = await api.get<{ name: string; run_count: number }>(`/workflows/${id}`);
        await ctx.change(
          `delete workflow ${id} "${w.name}" and its ${counted(w.run_count, 'run')}`,
          1,
          () => api.delete(`/workflows/${id}`),
          `Deleted workflow ${id}.`,
        );
      }),
    ),
    ['amsg workflows delete 1 --yes'],
  );

  examples(
    listOptions(
      workflows
        .command('runs <id>')
        .description('the runs of a workflow, a window of 500 at a time unless --all: event, member, and each action with its result'),
      { countable: true },
    ).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        await printList(ctx, `/workflows/${workflowId(ref)}/runs`, {}, o, { table: TABLES.workflowRuns }, { countable: true });
      }),
    ),
    ['amsg workflows runs 1', 'amsg workflows runs 1 --count'],
  );
}
