import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../src/cli/context.js';
import { describeMember } from '../src/cli/describe.js';
import { humanDate } from '../src/cli/output.js';
import { registerKind, type KindNames } from './events.js';

const TOUCHPOINT_NAMES: KindNames = {
  base: 'touchpoints',
  noun: 'touchpoint',
  typeId: 'touchpoint_type_id',
  typeName: 'type_name',
  recordId: 'touchpoint_id',
  prefix: 'touchpoint',
  itemsKey: 'touchpoints',
};

const touchpointId = (ref: string) => {
  if (!/^\d+$/.test(ref)) throw new UsageError(`a touchpoint is a numeric id, got "${ref}"`);
  return Number(ref);
};

export function register(touchpoints: Command) {
  registerKind(touchpoints, TOUCHPOINT_NAMES);

  examples(
    touchpoints
      .command('get <id>')
      .description('show one touchpoint')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/touchpoints/members/touchpoints/${touchpointId(ref)}`));
        }),
      ),
    ['amsg touchpoints get 12'],
  );

  examples(
    dryRunOption(touchpoints.command('delete <id>').description('delete one touchpoint (irreversible)')).action(
      action(async (ctx, ref: string) => {
        const id = touchpointId(ref);
        const api = await ctx.api();
        const t = await api.get<{ member_id: number; touchpoint_timestamp: string }>(`/touchpoints/members/touchpoints/${id}`);
        await ctx.change(
          `delete touchpoint ${id} of ${await describeMember(api, t.member_id)}, at ${humanDate(t.touchpoint_timestamp)}`,
          1,
          () => api.delete(`/touchpoints/members/touchpoints/${id}`),
          `Deleted touchpoint ${id}.`,
        );
      }),
    ),
    ['amsg touchpoints delete 12 --yes'],
  );
}
