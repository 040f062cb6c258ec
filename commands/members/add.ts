// Writing one member: `amsg members add`, `signup` and `update`.
import type { Command } from 'commander';
import { action, dryRunOption, examples, UsageError } from '../../src/cli/context.js';
import { counted, describeMember, statusWord } from '../../src/cli/describe.js';
import { collect, collectList, groupIds, memberId, parseFieldPairs, statusLetter } from '../../src/cli/resolve.js';

/** The sms object from CLI flags, or undefined when none was given. */
function smsFrom(o: { phone?: string; smsTransactional?: string; smsPromotional?: string }) {
  if (!o.phone && !o.smsTransactional && !o.smsPromotional) return undefined;
  return {
    phone_number: o.phone,
    transactional_status: o.smsTransactional,
    promotional_status: o.smsPromotional,
  };
}

export function registerWrites(members: Command) {
  examples(
    members
      .command('add <email>')
      .description('add a member, or update the member with this address (an opt-out stays opted out)')
      .option('--field <name=value>', 'a field value (repeatable); JSON for lists: tags=["a","b"]', collect)
      .option('--group <name|id>', 'add to this group, created if no group has the name (repeatable)', collectList)
      .option('--phone <number>', 'SMS phone number in international form')
      .option('--sms-transactional <a|o>', 'SMS transactional status')
      .option('--sms-promotional <a|o>', 'SMS promotional status')
      .action(
        action(
          async (
            ctx,
            email: string,
            o: { field?: string[]; group?: string[]; phone?: string; smsTransactional?: string; smsPromotional?: string },
          ) => {
            const fields = parseFieldPairs(o.field);
            const api = await ctx.api();
            const group_ids = await groupIds(api, ctx, o.group, true);
            const result = await api.post<{ member_id: number; added: boolean; status: string }>('/members/add', {
              email,
              fields,
              group_ids: group_ids.length ? group_ids : undefined,
              sms: smsFrom(o),
            });
            await ctx.done(result, `${result.added ? 'Added' : 'Updated'} member ${result.member_id} (status ${result.status}).`);
          },
        ),
      ),
    [
      'amsg members add ada@example.com --field first_name=Ada --group Newsletter',
      'amsg members add bo@example.com --phone +4791234567 --sms-promotional a',
    ],
  );

  examples(
    members
      .command('signup <email>')
      .description('sign a member up into groups (nothing changes when the member is already in them)')
      .requiredOption('--group <name|id>', 'group to sign up to (repeatable)', collectList)
      .option('--field <name=value>', 'a field value (repeatable)', collect)
      .action(
        action(async (ctx, email: string, o: { group: string[]; field?: string[] }) => {
          const api = await ctx.api();
          const result = await api.post<{ member_id: number; status: string }>('/members/signup', {
            email,
            group_ids: await groupIds(api, ctx, o.group),
            fields: o.field ? parseFieldPairs(o.field) : undefined,
          });
          await ctx.done(result, `Member ${result.member_id} signed up (status ${result.status}).`);
        }),
      ),
    ['amsg members signup ada@example.com --group Newsletter'],
  );

  examples(
    dryRunOption(
      members
        .command('update <member>')
        .description('change a member (archived ones too): e-mail, fields, status, phone')
        .option('--email <address>', 'new e-mail address')
        .option('--field <name=value>', 'a field value (repeatable; empty value clears it)', collect)
        .option('--status <a|e|o>', 'new status')
        .option('--phone <number>', 'SMS phone number')
        .option('--sms-transactional <a|o>', 'SMS transactional status')
        .option('--sms-promotional <a|o>', 'SMS promotional status'),
    ).action(
      action(
        async (
          ctx,
          ref: string,
          o: { email?: string; field?: string[]; status?: string; phone?: string; smsTransactional?: string; smsPromotional?: string },
        ) => {
          const body = {
            email: o.email,
            fields: o.field ? parseFieldPairs(o.field) : undefined,
            status_to: o.status ? statusLetter(o.status, ['a', 'e', 'o']) : undefined,
            sms: smsFrom(o),
          };
          if (Object.values(body).every((v) => v === undefined))
            throw new UsageError('nothing to change: give --email, --field, --status or --phone');
          const api = await ctx.api();
          const id = await memberId(api, ref);
          if (ctx.opts.dryRun) {
            const changes = [
              body.email && `e-mail → ${body.email}`,
              body.fields && `${counted(Object.keys(body.fields).length, 'field')} (${Object.keys(body.fields).join(', ')})`,
              body.status_to && `status → ${statusWord(body.status_to)}`,
              body.sms && 'SMS settings',
            ].filter(Boolean);
            return ctx.wouldChange(`update ${await describeMember(api, id)}: ${changes.join('; ')}`, 1);
          }
          // A status change confirms here as it does in `members status`.
          if (body.status_to) await ctx.confirm(`set the status of ${await describeMember(api, id)} to ${statusWord(body.status_to)}`);
          await ctx.done(await api.put(`/members/${id}`, body), `Updated member ${id}.`);
        },
      ),
    ),
    ['amsg members update ada@example.com --field first_name=Ada --field city=Oslo', 'amsg members update 42 --email new@example.com'],
  );
}
