import { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, dryRunOption, examples, UsageError } from '../src/cli/context.js';
import { counted, countWhere } from '../src/cli/describe.js';
import type { Api } from '../src/client/api.js';
import { fieldId } from '../src/cli/resolve.js';

const FIELD_COLUMNS = ['field_id', 'shortcut_name', 'display_name', 'field_type', 'widget_type', 'options', 'column_order'];

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
    options: o.options?.split(',').map((s) => s.trim()).filter(Boolean),
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

export function register(fields: Command) {

  examples(
    listOptions(fields.command('list').description('list fields in column order').option('--deleted', 'include deleted fields'), { windowed: false })
      .action(
        action(async (ctx, o: ListFlags & { deleted?: boolean }) => {
          await printList(ctx, '/fields', { deleted: o.deleted }, o, { columns: FIELD_COLUMNS }, { windowed: false });
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
    dryRunOption(fields.command('delete <field>').description('delete a field and every member value of it'))
      .action(
        action(async (ctx, ref: string, o: { dryRun?: boolean }) => {
          const api = await ctx.api();
          const id = await fieldId(api, ref);
          const what = await fieldChange(api, id, 'delete', o.dryRun);
          if (o.dryRun) return ctx.wouldChange(what.phrase, what.count);
          await ctx.confirm(what.phrase);
          await ctx.done(await api.delete(`/fields/${id}`), `Deleted field ${id}.`);
        }),
      ),
    ['amsg fields delete city --yes'],
  );

  examples(
    dryRunOption(fields.command('clear <field>').description("clear the field's value for every member"))
      .action(
        action(async (ctx, ref: string, o: { dryRun?: boolean }) => {
          const api = await ctx.api();
          const id = await fieldId(api, ref);
          const what = await fieldChange(api, id, 'clear', o.dryRun);
          if (o.dryRun) return ctx.wouldChange(what.phrase, what.count);
          await ctx.confirm(what.phrase);
          await ctx.done(await api.post(`/fields/${id}/clear`, {}), `Cleared field ${id}.`);
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
  const phrase = verb === 'clear' ? `clear field "${name}" (${id}) for ${values}` : `delete field "${name}" (${id}) and its values for ${values}`;
  return { phrase, count: holders ?? null };
}
