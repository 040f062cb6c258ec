import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import { action, dryRunOption, examples, UsageError } from '../src/cli/context.js';
import { collectList, fieldId, memberId, parseIds } from '../src/cli/resolve.js';
import { numericId } from '../src/cli/resolve.js';
import { parseDuration } from './mailings/shared.js';

/** The event a trigger answers: r (a date field's day) or s (a signup), as letters or words. */
function eventType(value: string): 'r' | 's' {
  const words: Record<string, 'r' | 's'> = { r: 'r', date: 'r', s: 's', signup: 's' };
  const letter = words[value.toLowerCase()];
  if (!letter) throw new UsageError(`--event takes r (date: the day of a date field) or s (signup), got "${value}"`);
  return letter;
}

export function register(triggers: Command) {
  examples(
    listOptions(triggers.command('list').description('list triggers (automated sends of a parent mailing; deprecated in the service)'), {
      windowed: false,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/triggers', {}, o, { table: TABLES.triggers }, { windowed: false });
      }),
    ),
    ['amsg triggers list', 'amsg triggers list --json | jq ".[].name"'],
  );

  examples(
    triggers
      .command('get <trigger>')
      .description('a trigger, with its parent mailing')
      .action(
        action(async (ctx, id: string) => {
          const triggerId = numericId(id, 'TRIGGER');
          const api = await ctx.api();
          await ctx.print(await api.get(`/triggers/${triggerId}`));
        }),
      ),
    ['amsg triggers get 3'],
  );

  examples(
    triggers
      .command('create')
      .description('create a trigger that sends a parent mailing to each member its event happens to, after --push-offset')
      .requiredOption('--name <name>', 'the name of the trigger')
      .requiredOption('--mailing <id>', 'the parent mailing, whose content each send copies (a draft made with --draft will do)')
      .requiredOption('--event <r|s>', 'r (date: the day of a date field, needs --field) or s (signup)')
      .option('--field <name|id>', 'the date field whose day fires a date trigger')
      .option('--push-offset <seconds|1d2h>', 'send this long after the event (default 0)')
      .option('--start <datetime>', 'when the trigger starts (default now)')
      .option('--signup <id>', 'a signup form the trigger answers (repeatable)', collectList)
      .action(
        action(
          async (
            ctx,
            o: { name: string; mailing: string; event: string; field?: string; pushOffset?: string; start?: string; signup?: string[] },
          ) => {
            const event_type = eventType(o.event);
            const parent_mailing_id = numericId(o.mailing, '--mailing');
            const push_offset = o.pushOffset === undefined ? undefined : parseDuration(o.pushOffset, '--push-offset');
            const signups = o.signup ? parseIds(o.signup, '--signup') : undefined;
            const api = await ctx.api();
            const body = {
              name: o.name,
              parent_mailing_id,
              event_type,
              field_id: o.field === undefined ? undefined : await fieldId(api, o.field),
              push_offset,
              start_ts: o.start,
              signups,
            };
            const id = await api.post<number>('/triggers', body);
            await ctx.done(id, `Created trigger ${id} over mailing ${parent_mailing_id}.`);
          },
        ),
      ),
    [
      'amsg fields create birthday --type date && amsg triggers create --name Birthday --mailing 12 --event r --field birthday --push-offset 9h',
      'amsg triggers create --name Welcome --mailing 13 --event s --push-offset 1d',
    ],
  );

  examples(
    triggers
      .command('rename <trigger> <name>')
      .description('rename a trigger')
      .action(
        action(async (ctx, id: string, name: string) => {
          const triggerId = numericId(id, 'TRIGGER');
          const api = await ctx.api();
          await ctx.done(await api.put(`/triggers/${triggerId}`, { name }), `Renamed trigger ${triggerId} to "${name}".`);
        }),
      ),
    ['amsg triggers rename 3 "Happy birthday"'],
  );

  examples(
    dryRunOption(
      triggers.command('delete <trigger>').description('delete a trigger (asks first; --yes off a terminal); the mailings it sent stay'),
    ).action(
      action(async (ctx, id: string) => {
        const triggerId = numericId(id, 'TRIGGER');
        const api = await ctx.api();
        const t = await api.get<{ name: string }>(`/triggers/${triggerId}`);
        await ctx.change(
          `delete trigger ${triggerId} "${t.name}"`,
          1,
          () => api.delete(`/triggers/${triggerId}`),
          `Deleted trigger ${triggerId}.`,
        );
      }),
    ),
    ['amsg triggers delete 3 --yes'],
  );

  examples(
    listOptions(triggers.command('mailings <trigger>').description('the mailings (type r) a trigger sent, oldest first'), {
      windowed: false,
    }).action(
      action(async (ctx, id: string, o: ListFlags) => {
        const triggerId = numericId(id, 'TRIGGER');
        await printList(ctx, `/triggers/${triggerId}/mailings`, {}, o, { table: TABLES.mailings }, { windowed: false });
      }),
    ),
    ['amsg triggers mailings 3'],
  );

  examples(
    triggers
      .command('fire <trigger> <member>')
      .description("fire a trigger for one member (id or e-mail): a mailing of the parent's content, sent after the push offset")
      .action(
        action(async (ctx, id: string, memberRef: string) => {
          const triggerId = numericId(id, 'TRIGGER');
          const api = await ctx.api();
          const member = await memberId(api, memberRef);
          const fired = await api.post<{ mailing_id: number }>(`/triggers/${triggerId}/members/${member}`);
          await ctx.done(
            fired,
            `Trigger ${triggerId} fired for member ${member}: mailing ${fired.mailing_id} (amsg mailings wait ${fired.mailing_id}).`,
          );
        }),
      ),
    ['amsg triggers fire 3 ada@example.com', 'amsg triggers fire 3 42 --json | jq .mailing_id'],
  );
}
