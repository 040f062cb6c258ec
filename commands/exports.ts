import { TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import type { Api } from '../src/client/api.js';
import { action, examples, UsageError, type RunContext } from '../src/cli/context.js';
import { isStdout, saveDownload } from '../src/cli/download.js';
import { actingUserEmail, waitForExport, type ExportRecord } from '../src/cli/exports.js';
import { collectList, groupIds, memberId, parseIds, statusLetter } from '../src/cli/resolve.js';

/** Refuses to write a zip to a terminal before anything is requested. */
function checkTarget(ctx: RunContext, type: 'a' | 'm', target: string | undefined) {
  if (type === 'm' && isStdout(target) && ctx.stdout.isTTY)
    throw new UsageError('an individual export is a zip file: give --file FILE (or redirect stdout)');
}

/** Waits for the export, downloads it to target, and prints the export record unless the data went to stdout. */
async function finish(ctx: RunContext, api: Api, id: number, target: string | undefined) {
  const record = await waitForExport(ctx, api, id);
  if (target !== undefined) {
    checkTarget(ctx, record.export_type, target);
    await saveDownload(ctx, await api.download(`/exports/${id}/download`), target);
    if (isStdout(target)) return;
  }
  await ctx.print(record);
}

/** --fields: all, none, or a comma list of field names. */
function includeFields(value: string | undefined): true | string[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'all') return true;
  if (value === 'none') return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function register(cmd: Command) {
  examples(
    cmd
      .command('create')
      .description('export members to CSV: the union of groups, subscriptions and members (everyone when none is given)')
      .option('--group <name|id>', 'members of this group (repeatable, or a comma list)', collectList)
      .option('--subscription <id>', 'members of this subscription (repeatable)', collectList)
      .option('--member <id|email>', 'this member (repeatable)', collectList)
      .option('--status <list>', 'member statuses to include, e.g. a,o (default a)')
      .option('--fields <all|none|names>', 'field columns: all (default), none, or a comma list of field names')
      .option('--sms-fields <list>', 'SMS columns: phone_number, promotional_status, transactional_status, region_code')
      .option('--delimiter <text>', 'joins the values of multi-value (text[]) fields (default ,)')
      .option('--user-email <address>', 'the requesting user recorded on the export (default: the user you act as)')
      .option('--wait', 'wait until the export is done and print it')
      .option('--download <file>', 'wait, then save the CSV to FILE (- for stdout)')
      .action(
        action(
          async (
            ctx,
            o: {
              group?: string[];
              subscription?: string[];
              member?: string[];
              status?: string;
              fields?: string;
              smsFields?: string;
              delimiter?: string;
              userEmail?: string;
              wait?: boolean;
              download?: string;
            },
          ) => {
            const api = await ctx.api();
            const criteria = {
              groups: o.group ? await groupIds(api, ctx, o.group) : undefined,
              subscriptions: o.subscription ? parseIds(o.subscription, '--subscription') : undefined,
              member_ids: o.member ? await Promise.all(o.member.map((m) => memberId(api, m))) : undefined,
              member_status_ids: o.status?.split(',').map((s) => statusLetter(s.trim(), ['a', 'e', 'o'])),
              include_fields: includeFields(o.fields),
              mfv_delimiter: o.delimiter,
              sms: o.smsFields
                ? {
                    fields: o.smsFields
                      .split(',')
                      .map((s) => s.trim())
                      .filter(Boolean),
                  }
                : undefined,
            };
            const created = await api.post<{ export_id: number }>('/exports', {
              user_id: await actingUserEmail(api, o.userEmail),
              criteria,
            });
            if (!o.wait && o.download === undefined) return ctx.done(created, `Created export ${created.export_id}.`);
            await finish(ctx, api, created.export_id, o.download);
          },
        ),
      ),
    [
      'amsg exports create --download members.csv',
      'amsg exports create --group Newsletter --group VIP --status a,o --fields first_name,city --wait',
      'amsg exports create --member ada@example.com --sms-fields phone_number,region_code --delimiter ";" --download -',
    ],
  );

  examples(
    cmd
      .command('member <member>')
      .description('export all data of one member (id or e-mail) as a zip of JSON files')
      .option('--download <file>', 'wait, then save the zip to FILE')
      .action(
        action(async (ctx, ref: string, o: { download?: string }) => {
          if (o.download !== undefined) checkTarget(ctx, 'm', o.download);
          const api = await ctx.api();
          const id = await memberId(api, ref);
          const created = await api.post<{ export_id: number }>(`/exports/members/${id}`);
          if (o.download === undefined) return ctx.done(created, `Created export ${created.export_id} of member ${id}.`);
          await finish(ctx, api, created.export_id, o.download);
        }),
      ),
    ['amsg exports member ada@example.com --download ada.zip', 'amsg exports member 42'],
  );

  examples(
    listOptions(cmd.command('list'), { windowed: false })
      .description('exports created over the past seven days')
      .option('--type <a|m>', 'a audience exports (default), m individual member exports', 'a')
      .action(
        action(async (ctx, o: ListFlags & { type: string }) => {
          if (o.type !== 'a' && o.type !== 'm') throw new UsageError(`--type must be a or m, got "${o.type}"`);
          await printList(ctx, '/exports', { export_type: o.type }, o, { table: TABLES.exports }, { windowed: false });
        }),
      ),
    ['amsg exports list', 'amsg exports list --type m --output table'],
  );

  examples(
    cmd
      .command('get <export>')
      .description('one export with its criteria')
      .action(
        action(async (ctx, ref: string) => {
          const [id] = parseIds([ref], 'the export');
          const api = await ctx.api();
          await ctx.print(await api.get(`/exports/${id}`));
        }),
      ),
    ['amsg exports get 7'],
  );

  examples(
    cmd
      .command('download <export>')
      .description('save an export: the CSV of an audience export, the zip of a member export')
      .option('--file <file>', 'write to FILE (default: stdout, also with -)')
      .action(
        action(async (ctx, ref: string, o: { file?: string }) => {
          const [id] = parseIds([ref], 'the export');
          const api = await ctx.api();
          const record = await api.get<ExportRecord>(`/exports/${id}`);
          checkTarget(ctx, record.export_type, o.file);
          await saveDownload(ctx, await api.download(`/exports/${id}/download`), o.file);
        }),
      ),
    ['amsg exports download 7 --file members.csv', 'amsg exports download 7 | head', 'amsg exports download 8 --file ada.zip'],
  );
}
