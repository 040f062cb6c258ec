import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, dryRunOption, examples, NotFoundError, UsageError } from '../src/cli/context.js';
import { counted, countWhere } from '../src/cli/describe.js';
import type { Api } from '../src/client/api.js';
import { collect, didYouMean, fieldId } from '../src/cli/resolve.js';

interface DefinitionFlags {
  name?: string;
  displayName?: string;
  shortDisplayName?: string;
  type?: string;
  widget?: string;
  options?: string;
  order?: string;
  required?: boolean;
}

function definition(o: DefinitionFlags) {
  if (o.order !== undefined && !/^\d+$/.test(o.order)) throw new UsageError(`--order must be a whole number, got "${o.order}"`);
  return {
    shortcut_name: o.name,
    display_name: o.displayName,
    short_display_name: o.shortDisplayName,
    field_type: o.type,
    widget_type: o.widget,
    options: o.options
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    column_order: o.order === undefined ? undefined : Number(o.order),
    required: o.required,
  };
}

const withDefinitionFlags = (cmd: Command) =>
  cmd
    .option('--display-name <text>', 'name shown to people')
    .option('--short-display-name <text>', 'short name shown to people')
    .option('--widget <widget>', 'widget_type (e.g. text, long, radio, "select one", check_multiple)')
    .option('--options <a,b,c>', 'options, for radio, select and multiple-choice widgets')
    .option('--order <n>', 'column order')
    .option('--required', 'the field is required on forms');

/** `--allow "EU=Oslo,Paris"`, repeated: each parent option to the child options it allows. */
function allowedOptions(pairs: string[] | undefined): Record<string, string[]> | undefined {
  if (!pairs) return undefined;
  const out: Record<string, string[]> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--allow takes PARENT=CHILD,CHILD, got "${pair}"`);
    const parent = pair.slice(0, eq).trim();
    out[parent] = [
      ...(out[parent] ?? []),
      ...pair
        .slice(eq + 1)
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
    ];
  }
  return out;
}

/** A relationship id, or the id of the relationship with this name. */
async function relationshipId(api: Api, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const all = await api.get<{ relationship_id: number; relationship_name: string }[]>('/fields/relationships');
  const r = all.find((x) => x.relationship_name.toLowerCase() === ref.toLowerCase());
  if (!r)
    throw new NotFoundError(
      `no field relationship named "${ref}" (see amsg fields relationships list)${didYouMean(
        ref,
        all.map((x) => x.relationship_name),
      )}`,
      'relationship',
    );
  return r.relationship_id;
}

interface RelationshipFlags {
  name?: string;
  parent?: string;
  child?: string;
  allow?: string[];
}

async function relationshipBody(api: Api, o: RelationshipFlags) {
  return {
    relationship_name: o.name,
    parent_field_id: o.parent === undefined ? undefined : await fieldId(api, o.parent),
    child_field_id: o.child === undefined ? undefined : await fieldId(api, o.child),
    options: allowedOptions(o.allow),
  };
}

interface Relationship {
  relationship_name: string;
  parent_field: { shortcut_name: string };
  child_field: { shortcut_name: string };
}

function registerRelationships(relationships: Command) {
  relationships.description("field relationships: a parent field's option limits the child field's options");
  examples(
    listOptions(relationships.command('list').description('list field relationships (every one unless --limit)'), {
      windowed: false,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/fields/relationships', {}, o, { table: TABLES.fieldRelationships }, { windowed: false, allByDefault: true });
      }),
    ),
    ['amsg fields relationships list'],
  );
  examples(
    relationships
      .command('get <relationship>')
      .description('show a relationship, by id or name')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/fields/relationships/${await relationshipId(api, ref)}`));
        }),
      ),
    ['amsg fields relationships get "Region → Office"'],
  );
  examples(
    relationships
      .command('create <name>')
      .description('relate two option fields; prints the relationship')
      .requiredOption('--parent <field>', 'the parent field (id or shortcut name)')
      .requiredOption('--child <field>', 'the child field (id or shortcut name)')
      .option('--allow <PARENT=CHILD,CHILD>', 'a parent option and the child options it allows (repeat it)', collect)
      .action(
        action(async (ctx, name: string, o: RelationshipFlags) => {
          const api = await ctx.api();
          const body = await relationshipBody(api, { ...o, name });
          const created = await api.post<{ relationship_id: number }>('/fields/relationships', { ...body, options: body.options ?? {} });
          await ctx.done(created, `Created field relationship ${name} (id ${created.relationship_id}).`);
        }),
      ),
    ['amsg fields relationships create "Region → Office" --parent region --child office --allow "EU=Oslo,Paris" --allow "US=Austin"'],
  );
  examples(
    relationships
      .command('update <relationship>')
      .description('change a relationship (--allow replaces all the options); prints it')
      .option('--name <name>', 'new name')
      .option('--parent <field>', 'new parent field')
      .option('--child <field>', 'new child field')
      .option('--allow <PARENT=CHILD,CHILD>', 'a parent option and the child options it allows (repeat it)', collect)
      .action(
        action(async (ctx, ref: string, o: RelationshipFlags) => {
          const api = await ctx.api();
          const body = await relationshipBody(api, o);
          if (Object.values(body).every((v) => v === undefined)) throw new UsageError('nothing to change: give at least one option');
          const id = await relationshipId(api, ref);
          await ctx.done(await api.put(`/fields/relationships/${id}`, body), `Updated field relationship ${id}.`);
        }),
      ),
    ['amsg fields relationships update "Region → Office" --allow "EU=Oslo" --allow "US=Austin,Boston"'],
  );
  examples(
    dryRunOption(relationships.command('delete <relationship>').description('delete a relationship (member values stay)')).action(
      action(async (ctx, ref: string) => {
        const api = await ctx.api();
        const id = await relationshipId(api, ref);
        const r = await api.get<Relationship>(`/fields/relationships/${id}`);
        await ctx.change(
          `delete field relationship "${r.relationship_name}" (${id}) of ${r.parent_field.shortcut_name} → ${r.child_field.shortcut_name}`,
          1,
          () => api.delete(`/fields/relationships/${id}`),
          `Deleted field relationship ${id}.`,
        );
      }),
    ),
    ['amsg fields relationships delete "Region → Office" --yes'],
  );
}

export function register(fields: Command) {
  registerRelationships(fields.command('relationships'));

  examples(
    listOptions(fields.command('list').description('list fields in column order').option('--deleted', 'include deleted fields'), {
      windowed: false,
    }).action(
      action(async (ctx, o: ListFlags & { deleted?: boolean }) => {
        await printList(ctx, '/fields', { deleted: o.deleted }, o, { table: TABLES.fields }, { windowed: false });
      }),
    ),
    ['amsg fields list'],
  );

  examples(
    fields
      .command('get <field>')
      .description('show a field, by id or shortcut name')
      .option('--deleted', 'also find a deleted field (by id)')
      .action(
        action(async (ctx, ref: string, o: { deleted?: boolean }) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/fields/${await fieldId(api, ref)}`, { deleted: o.deleted }));
        }),
      ),
    ['amsg fields get first_name'],
  );

  examples(
    withDefinitionFlags(
      fields
        .command('create <shortcut-name>')
        .description('create a field; prints its id')
        .requiredOption('--type <type>', 'text, text[], numeric, boolean, date or timestamp'),
    ).action(
      action(async (ctx, name: string, o: DefinitionFlags) => {
        const api = await ctx.api();
        const body = definition({ ...o, name });
        const id = await api.post<number>('/fields', { ...body, display_name: body.display_name ?? name });
        await ctx.done(id, `Created field ${name} (id ${id}).`);
      }),
    ),
    [
      'amsg fields create city --type text',
      'amsg fields create birthday --type date --display-name "Birthday"',
      'amsg fields create interests --type "text[]" --widget check_multiple --options news,offers,events',
    ],
  );

  examples(
    withDefinitionFlags(
      fields
        .command('update <field>')
        .description('change a field; prints its id')
        .option('--name <shortcut-name>', 'new shortcut name')
        .option('--type <type>', 'new field type (only while no member has a value)'),
    ).action(
      action(async (ctx, ref: string, o: DefinitionFlags) => {
        const body = definition(o);
        if (Object.values(body).every((v) => v === undefined)) throw new UsageError('nothing to change: give at least one option');
        const api = await ctx.api();
        const id = await fieldId(api, ref);
        await ctx.done(await api.put(`/fields/${id}`, body), `Updated field ${id}.`);
      }),
    ),
    ['amsg fields update city --display-name "Town"'],
  );

  examples(
    dryRunOption(fields.command('delete <field>').description('delete a field and every member value of it')).action(
      action(async (ctx, ref: string, o: { dryRun?: boolean }) => {
        const api = await ctx.api();
        const id = await fieldId(api, ref);
        const what = await fieldChange(api, id, 'delete', o.dryRun);
        await ctx.change(what.phrase, what.count, () => api.delete(`/fields/${id}`), `Deleted field ${id}.`);
      }),
    ),
    ['amsg fields delete city --yes'],
  );

  examples(
    dryRunOption(fields.command('clear <field>').description("clear the field's value for every member")).action(
      action(async (ctx, ref: string, o: { dryRun?: boolean }) => {
        const api = await ctx.api();
        const id = await fieldId(api, ref);
        const what = await fieldChange(api, id, 'clear', o.dryRun);
        await ctx.change(what.phrase, what.count, () => api.post(`/fields/${id}/clear`, {}), `Cleared field ${id}.`);
      }),
    ),
    ['amsg fields clear city --yes'],
  );
}

/**
 * What clearing or deleting a field touches, for its prompt and its dry run; the
 * dry run counts the members that hold a value (read-only, a page at a time).
 */
async function fieldChange(api: Api, id: number, verb: 'clear' | 'delete', count = false) {
  const field = await api.get<{ shortcut_name: string }>(`/fields/${id}`);
  const name = field.shortcut_name;
  const holders = count
    ? await countWhere<{ fields?: Record<string, unknown> }>(api, '/members', { deleted: true }, (m) => (m.fields?.[name] ?? null) !== null)
    : undefined;
  const values = holders === undefined ? 'every member' : counted(holders, 'member');
  const phrase =
    verb === 'clear' ? `clear field "${name}" (${id}) for ${values}` : `delete field "${name}" (${id}) and its values for ${values}`;
  return { phrase, count: holders ?? null };
}
