import { type Command, Option } from 'commander';
import { action, dryRunOption, examples, EXIT, NotFoundError, UsageError, type RunContext } from '../src/cli/context.js';
import { counted, countMembers, describeGroup, describeMember, describeMembers, statusWord } from '../src/cli/describe.js';
import { seg, type Api } from '../src/client/api.js';
import { listOptions, pages, PAGE_SIZE, printList, wholeNumber, type ListFlags } from '../src/cli/paging.js';
import { collect, collectList, groupId, groupIds, memberId, parseFieldPairs, parseIds, statusLetter } from '../src/cli/resolve.js';

const MEMBER_COLUMNS = ['member_id', 'email', 'status', 'fields', 'member_since', 'last_modified_at', 'deleted_at'];
const GROUP_COLUMNS = ['member_group_id', 'group_name', 'active_count', 'error_count', 'optout_count'];

/** The sms object from CLI flags, or undefined when none was given. */
function smsFrom(o: { phone?: string; smsTransactional?: string; smsPromotional?: string }) {
  if (!o.phone && !o.smsTransactional && !o.smsPromotional) return undefined;
  return {
    phone_number: o.phone,
    transactional_status: o.smsTransactional,
    promotional_status: o.smsPromotional,
  };
}

export function register(members: Command) {
  examples(
    listOptions(
      members
        .command('list')
        .description('list members (live ones unless told otherwise), a window of 500 at a time unless --all')
        .option('--deleted', 'include archived members')
        .option('--deleted-only', 'only archived members')
        .option('--deleted-range <from~to>', 'archived in a date range: YYYY-MM-DD~YYYY-MM-DD, either side optional')
        .option('--exclude-fields', 'base attributes only')
        .option('--email-contains <text>', 'only members whose address contains this text (case-insensitive; reads the list page by page)'),
      { countable: true },
    ).action(
      action(
        async (
          ctx,
          o: ListFlags & {
            deleted?: boolean;
            deletedOnly?: boolean;
            deletedRange?: string;
            excludeFields?: boolean;
            emailContains?: string;
          },
        ) => {
          const query = {
            deleted: o.deleted,
            deleted_only: o.deletedOnly,
            deleted_range: o.deletedRange,
            exclude_fields: o.excludeFields,
          };
          if (o.emailContains !== undefined)
            return findMembers(ctx, o.emailContains, query, { ...o, limit: o.all ? undefined : (o.limit ?? PAGE_SIZE) });
          await printList(ctx, '/members', query, o, { columns: MEMBER_COLUMNS }, { countable: true });
        },
      ),
    ),
    [
      'amsg members list',
      'amsg members list --all --output csv > members.csv',
      'amsg members list --deleted-range 2026-01-01~ --json',
      'amsg members list --count',
    ],
  );

  examples(
    members
      .command('find <text>')
      .description('members whose e-mail address contains TEXT (case-insensitive), archived ones too; the first 20 unless --limit or --all')
      .option('--all', 'every match')
      .addOption(new Option('--limit <n>', 'at most this many matches (default 20)').argParser(wholeNumber(1)))
      .action(
        action(async (ctx, text: string, o: ListFlags) => {
          await findMembers(ctx, text, { deleted: true }, { ...o, limit: o.all ? undefined : (o.limit ?? 20) });
        }),
      ),
    ['amsg members find tina.mueller', 'amsg members find @example.org --all --output csv'],
  );

  examples(
    members
      .command('get <member>')
      .description('show one member, by id or e-mail address')
      .option('--deleted', 'also find an archived member')
      .action(
        action(async (ctx, ref: string, o: { deleted?: boolean }) => {
          const api = await ctx.api();
          const path = /^\d+$/.test(ref) ? `/members/${ref}` : `/members/email/${seg(ref)}`;
          await ctx.print(await api.get(path, { deleted: o.deleted }));
        }),
      ),
    ['amsg members get 42', 'amsg members get ada@example.com --json'],
  );

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

  examples(
    members
      .command('optout <member>')
      .description('opt a member out, by e-mail address or id (true also when already opted out)')
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          // The service opts out by address: an id is looked up first, as every member command takes one.
          const email = /^\d+$/.test(ref) ? (await api.get<{ email: string }>(`/members/${ref}`)).email : ref;
          await ctx.done(await api.put(`/members/email/optout/${seg(email)}`), `Opted out ${email}.`);
        }),
      ),
    ['amsg members optout ada@example.com', 'amsg members optout 42'],
  );

  examples(
    listOptions(members.command('optouts <member>').description("a member's opt-out history"), { windowed: false }).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/members/${await memberId(api, ref)}/optout`, {}, o, {}, { windowed: false });
      }),
    ),
    ['amsg members optouts ada@example.com'],
  );

  examples(
    listOptions(members.command('mailings <member>').description("a member's mailing history")).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/members/${await memberId(api, ref)}/mailings`, {}, o, {}, { allByDefault: true });
      }),
    ),
    ['amsg members mailings 42'],
  );

  examples(
    dryRunOption(
      members
        .command('delete [members...]')
        .description('archive members (by id or e-mail), or every member of a status; archived members stay readable with --deleted')
        .option('--status <a|e|o>', 'archive every member with this status'),
    ).action(
      action(async (ctx, refs: string[], o: { status?: string; dryRun?: boolean }) => {
        if (o.status && refs.length) throw new UsageError('give members or --status, not both');
        if (!o.status && !refs.length) throw new UsageError('give the members to archive, or --status');
        const api = await ctx.api();
        if (o.status) {
          const status = statusLetter(o.status, ['a', 'e', 'o']);
          if (o.dryRun) {
            const n = await countMembers(api, { status });
            return ctx.wouldChange(`archive ${counted(n, `${statusWord(status)} member`)}`, n);
          }
          await ctx.confirm(`archive every ${statusWord(status)} member`);
          return ctx.done(await api.delete('/members', { member_status_id: status }), `Archived every member with status ${status}.`);
        }
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `archive ${await describeMembers(api, ids)}`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        if (ids.length === 1) return ctx.done(await api.delete(`/members/${ids[0]}`), `Archived member ${ids[0]}.`);
        const all = await api.put<boolean>('/members/delete', { member_ids: ids });
        await ctx.done(all, all ? `Archived ${ids.length} members.` : 'Archived the members that exist; some ids were not found.');
      }),
    ),
    ['amsg members delete 42 --yes', 'amsg members delete --status e --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('status <members...>')
        .description('set the status of members (ids or e-mail addresses)')
        .requiredOption('--to <a|e|o>', 'the new status'),
    ).action(
      action(async (ctx, refs: string[], o: { to: string; dryRun?: boolean }) => {
        const to = statusLetter(o.to, ['a', 'e', 'o']);
        const api = await ctx.api();
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `set the status of ${await describeMembers(api, ids)} to ${statusWord(to)}`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        const all = await api.put<boolean>('/members/status', { member_ids: ids, status_to: to });
        await ctx.done(all, all ? `Set ${ids.length} member(s) to status ${to}.` : 'Some members were not found; the others were changed.');
      }),
    ),
    ['amsg members status 42 43 --to o --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('move-status')
        .description('move every member of one status to another (optionally within one group)')
        .requiredOption('--from <a|e|f|o>', 'members currently in this status')
        .requiredOption('--to <a|e|o>', 'take this status')
        .option('--group <name|id>', 'only members of this group'),
    ).action(
      action(async (ctx, o: { from: string; to: string; group?: string; dryRun?: boolean }) => {
        const from = statusLetter(o.from, ['a', 'e', 'f', 'o']);
        const to = statusLetter(o.to, ['a', 'e', 'o']);
        const api = await ctx.api();
        const group_id = o.group ? await groupId(api, ctx, o.group) : undefined;
        const group = group_id ? await describeGroup(api, group_id) : undefined;
        const within = group ? ` in ${group.label}` : '';
        if (o.dryRun) {
          const n = group && from in group.byStatus ? group.byStatus[from] : await countMembers(api, { group_id, status: from });
          return ctx.wouldChange(`move ${counted(n, `${statusWord(from)} member`)}${within} to ${statusWord(to)}`, n);
        }
        await ctx.confirm(`move every ${statusWord(from)} member${within} to ${statusWord(to)}`);
        await ctx.done(await api.put(`/members/status/${from}/to/${to}`, { group_id }), `Moved members from ${from} to ${to}.`);
      }),
    ),
    ['amsg members move-status --from e --to a --group Newsletter --yes'],
  );

  const groups = members.command('groups').description("a member's groups");
  examples(
    listOptions(groups.command('list <member>').description('the groups a member is in'), { windowed: false }).action(
      action(async (ctx, ref: string, o: ListFlags) => {
        const api = await ctx.api();
        await printList(ctx, `/members/${await memberId(api, ref)}/groups`, {}, o, { columns: GROUP_COLUMNS }, { windowed: false });
      }),
    ),
    ['amsg members groups list ada@example.com'],
  );
  examples(
    groups
      .command('add <member>')
      .description('add a member to groups (prints the groups newly joined)')
      .requiredOption('--group <name|id>', 'group (repeatable)', collectList)
      .action(
        action(async (ctx, ref: string, o: { group: string[] }) => {
          const api = await ctx.api();
          const id = await memberId(api, ref);
          const added = await api.put<number[]>(`/members/${id}/groups`, { group_ids: await groupIds(api, ctx, o.group) });
          await ctx.done(added, `Member ${id} joined ${added.length} group(s).`);
        }),
      ),
    ['amsg members groups add 42 --group Newsletter --group VIP'],
  );
  examples(
    dryRunOption(
      groups
        .command('remove <member>')
        .description('remove a member from some groups, or from all of them')
        .option('--group <name|id>', 'group (repeatable)', collectList)
        .option('--all', 'remove from every group'),
    ).action(
      action(async (ctx, ref: string, o: { group?: string[]; all?: boolean }) => {
        if (!o.all === !o.group?.length) throw new UsageError('give --group or --all');
        const api = await ctx.api();
        const id = await memberId(api, ref);
        const joined = async () => (await api.get<{ member_group_id: number }[]>(`/members/${id}/groups`)).map((g) => g.member_group_id);
        if (o.all) {
          const n = (await joined()).length;
          const what = `remove ${await describeMember(api, id)} from every group (${counted(n, 'group')})`;
          return ctx.change(what, n, () => api.delete(`/members/${id}/groups`), `Member ${id} left every group.`);
        }
        if (ctx.opts.dryRun) {
          const ids = await groupIds(api, ctx, o.group);
          const now = new Set(await joined());
          const n = ids.filter((g) => now.has(g)).length;
          return ctx.wouldChange(`remove ${await describeMember(api, id)} from ${counted(n, 'group')}`, n);
        }
        const removed = await api.put<number[]>(`/members/${id}/groups/remove`, { group_ids: await groupIds(api, ctx, o.group) });
        await ctx.done(removed, `Member ${id} left ${removed.length} group(s).`);
      }),
    ),
    ['amsg members groups remove 42 --group VIP', 'amsg members groups remove 42 --all --yes'],
  );

  examples(
    members
      .command('remove-from-groups')
      .description('remove several members from several groups (nothing changes if any does not exist)')
      .requiredOption('--member <id>', 'member id (repeatable)', collectList)
      .requiredOption('--group <name|id>', 'group (repeatable)', collectList)
      .action(
        action(async (ctx, o: { member: string[]; group: string[] }) => {
          const api = await ctx.api();
          const body = { member_ids: parseIds(o.member, '--member'), group_ids: await groupIds(api, ctx, o.group) };
          await ctx.done(await api.put('/members/groups/remove', body), 'Removed.');
        }),
      ),
    ['amsg members remove-from-groups --member 1,2,3 --group Newsletter'],
  );

  examples(
    members
      .command('copy-to-group <group>')
      .description('copy every member of the given statuses into a group')
      .option('--status <list>', 'statuses to copy, e.g. a,o', 'a')
      .action(
        action(async (ctx, ref: string, o: { status: string }) => {
          const api = await ctx.api();
          const id = await groupId(api, ctx, ref);
          const statuses = o.status.split(',').map((s) => statusLetter(s.trim(), ['a', 'e', 'o']));
          await ctx.done(await api.put(`/members/${id}/copy`, { member_status_id: statuses }), `Copied members into group ${id}.`);
        }),
      ),
    ['amsg members copy-to-group Everyone --status a,o'],
  );

  examples(
    dryRunOption(
      members.command('purge <members...>').description('erase members from every table (right to erasure); cannot be undone'),
    ).action(
      action(async (ctx, refs: string[], o: { dryRun?: boolean }) => {
        const api = await ctx.api();
        const ids = await Promise.all(refs.map((r) => memberId(api, r)));
        const what = `erase ${await describeMembers(api, ids)} permanently`;
        if (o.dryRun) return ctx.wouldChange(what, ids.length);
        await ctx.confirm(what);
        await ctx.done(await api.post('/members/purge', { member_ids: ids }), `Erased ${ids.length} member(s).`);
      }),
    ),
    ['amsg members purge 42 --yes'],
  );

  examples(
    dryRunOption(
      members
        .command('purge-archived')
        .description('erase every archived member (optionally only of a status or group); cannot be undone')
        .option('--status <a|e|o>', 'only archived members with this status')
        .option('--group <name|id>', 'only archived members of this group'),
    ).action(
      action(async (ctx, o: { status?: string; group?: string; dryRun?: boolean }) => {
        const api = await ctx.api();
        const body = {
          member_status_id: o.status ? statusLetter(o.status, ['a', 'e', 'o']) : undefined,
          member_group_id: o.group ? String(await groupId(api, ctx, o.group)) : undefined,
        };
        const status = body.member_status_id;
        const group = body.member_group_id ? await describeGroup(api, Number(body.member_group_id)) : undefined;
        const which = `archived ${status ? `${statusWord(status)} ` : ''}member`;
        const within = group ? ` of ${group.label}` : '';
        if (o.dryRun) {
          const n = await countMembers(api, { group_id: group && Number(body.member_group_id), archived: true, status });
          return ctx.wouldChange(`erase ${counted(n, which)}${within} permanently`, n);
        }
        await ctx.confirm(`erase every ${which}${within} permanently`);
        await ctx.done(await api.put('/members/purgeall', body), 'Erased the archived members.');
      }),
    ),
    ['amsg members purge-archived --status o --yes'],
  );

  examples(
    members
      .command('import <file>')
      .description('import members from a CSV file (or - for stdin) as one import record; columns map to fields by name')
      .option('--group <name|id>', 'add every imported member to this group, created if missing (repeatable)', collectList)
      .option('--add-only', 'only add new members; existing ones are skipped')
      .option('--map <column=field>', 'map a column to a field (or to email, phone_number, groups); column= skips it (repeatable)', collect)
      .option('--ignore <column>', 'skip this column (repeatable, or a comma list)', collectList)
      .option('--source-name <text>', 'name recorded on the import')
      .option('--delimiter <char>', 'column delimiter: , ; tab or | (detected from the header by default)')
      .option(
        '--encoding <name>',
        "the file's encoding, e.g. windows-1252, latin1, utf-16le (default: UTF-8; a UTF-16 BOM or a file that is not UTF-8 is detected)",
      )
      .option('--dry-run', 'check every row with the service rules and write nothing')
      .option(
        '--errors-out <file>',
        'write the rows not imported (rejected, or duplicates of an imported row), with their columns and an error column, to this CSV',
      )
      .option('--batch-size <n>', 'rows per call', '2000')
      .option('--resume <import-id>', 'continue an interrupted import of the same file')
      .option('--no-wait', 'against a service without streamed imports: do not wait for the import jobs to finish')
      .action(
        action(async (ctx, file: string, o: ImportFlags) => {
          await importFile(ctx, file, o);
        }),
      ),
    [
      'amsg members import audience.csv --group Newsletter',
      'amsg members import audience.csv --map "E-mail=email" --map Town=city --errors-out rejected.csv',
      'amsg members import audience.csv --dry-run',
      'cat audience.csv | amsg members import - --delimiter ";"',
      'amsg members import audience.csv --resume 12',
    ],
  );

  const imports = members.command('imports').description('member imports and what they did');
  examples(
    listOptions(imports.command('list').description('the member imports'), { windowed: false }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, '/members/imports', {}, o, { columns: IMPORT_COLUMNS }, { windowed: false });
      }),
    ),
    ['amsg members imports list'],
  );
  examples(
    imports
      .command('get <import-id>')
      .description('one import with its counts')
      .action(
        action(async (ctx, id: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/members/imports/${parseIds([id], 'the import id')[0]}`));
        }),
      ),
    ['amsg members imports get 3'],
  );
  examples(
    listOptions(
      imports
        .command('members <import-id>')
        .description('the members an import touched, with their change type (a added, u updated, s skipped)')
        .option('--added-only', 'only the members it added')
        .option('--added-to-groups', 'only the members it put in a group'),
    ).action(
      action(async (ctx, id: string, o: ListFlags & { addedOnly?: boolean; addedToGroups?: boolean }) => {
        const path = `/members/imports/${parseIds([id], 'the import id')[0]}/members`;
        await printList(ctx, path, { added_only: o.addedOnly, added_to_groups: o.addedToGroups }, o, {}, { allByDefault: true });
      }),
    ),
    ['amsg members imports members 3 --added-only'],
  );
}

/**
 * Members whose address contains `text`. The service has no such filter (and a
 * substring match cannot use an index), so the list is read page by page and
 * filtered here, stopping as soon as enough are found.
 */
async function findMembers(ctx: RunContext, text: string, query: Record<string, boolean | string | undefined>, o: ListFlags) {
  if (!text.trim()) throw new UsageError('give some text of the address to look for');
  const needle = text.trim().toLowerCase();
  const api = await ctx.api();
  const out = await ctx.listWriter({ columns: MEMBER_COLUMNS });
  const wanted = o.limit ?? Infinity;
  let found = 0;
  let more = false;
  for await (const page of pages<{ email: string }>(api, '/members', { ...query, exclude_fields: query.exclude_fields })) {
    const hits = page.filter((m) => m.email.toLowerCase().includes(needle));
    const take = hits.slice(0, wanted - found);
    await out.write(take);
    found += take.length;
    if (found >= wanted) {
      more = hits.length > take.length || page.length === PAGE_SIZE;
      break;
    }
  }
  await out.end();
  if (!found) ctx.note(`no member's address contains "${text}"`);
  else if (more) ctx.note(`the first ${found} matches shown; --all finds every one`);
}

const IMPORT_COLUMNS = [
  'import_id',
  'status',
  'source_filename',
  'num_members',
  'num_members_added',
  'num_members_updated',
  'num_duplicates',
  'num_skipped',
  'num_errors',
  'import_started',
  'import_finished',
];

/** The counts of an import record (or of a dry run), in one order for both. */
const countsSentence = (r: Record<string, unknown>) =>
  `${r.num_members} rows, ${r.num_members_added} added, ${r.num_members_updated} updated, ` +
  `${r.num_duplicates} duplicates, ${r.num_skipped} skipped, ${r.num_errors} errors`;

interface ImportFlags {
  ignore?: string[];
  group?: string[];
  addOnly?: boolean;
  map?: string[];
  sourceName?: string;
  delimiter?: string;
  encoding?: string;
  dryRun?: boolean;
  errorsOut?: string;
  batchSize: string;
  resume?: string;
  wait: boolean;
}

const DELIMITERS: Record<string, string> = { ',': ',', ';': ';', tab: '\t', '\\t': '\t', '\t': '\t', '|': '|' };

async function importFile(ctx: RunContext, file: string, o: ImportFlags) {
  const { runImport } = await import('../src/cli/importer.js');
  const { createImportProgress } = await import('../src/cli/import-progress.js');
  if (!/^[1-9]\d*$/.test(o.batchSize)) throw new UsageError(`--batch-size must be a positive whole number, got "${o.batchSize}"`);
  // The service takes at most 100,000 rows per call: say so now, not after the import is opened.
  if (Number(o.batchSize) > 100_000) throw new UsageError(`--batch-size must be at most 100000 (rows per call), got ${o.batchSize}`);
  const delimiter = o.delimiter === undefined ? undefined : DELIMITERS[o.delimiter];
  if (o.delimiter !== undefined && !delimiter) throw new UsageError(`--delimiter must be one of , ; tab |, got "${o.delimiter}"`);
  const map: Record<string, string> = {};
  for (const pair of o.map ?? []) {
    // `--map column=` (nothing after the =) skips the column, as --ignore does.
    const eq = pair.lastIndexOf('=');
    if (eq < 1) throw new UsageError(`--map takes column=field (or column= to skip it), got "${pair}"`);
    map[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  if (o.resume !== undefined && o.dryRun) throw new UsageError('--resume and --dry-run do not go together');
  // A resumed import goes on with the options it was opened with.
  if (o.resume !== undefined && (o.group || o.addOnly || o.sourceName !== undefined))
    throw new UsageError('--resume continues the import with its own options: leave out --group, --add-only and --source-name');
  const api = await ctx.api();
  const progress = await createImportProgress(ctx.stderr.stream, { quiet: ctx.quiet, color: ctx.color, note: (m) => ctx.note(m) });
  const stop: { stopped: boolean; onStop?: () => void } = { stopped: false };
  const onSigint = () => {
    if (stop.stopped) process.exit(130);
    stop.stopped = true;
    stop.onStop?.();
    progress.note('stopping after the rows in flight (Ctrl-C again to quit at once)');
  };
  process.on('SIGINT', onSigint);
  let outcome: Awaited<ReturnType<typeof runImport>>;
  try {
    outcome = await runImport(
      api,
      {
        file,
        groups: o.dryRun ? () => existingGroupIds(api, ctx, o.group) : () => groupIds(api, ctx, o.group, true),
        addOnly: !!o.addOnly,
        map,
        sourceName: o.sourceName,
        delimiter,
        encoding: o.encoding,
        dryRun: !!o.dryRun,
        errorsOut: o.errorsOut,
        ignore: o.ignore,
        batchSize: Number(o.batchSize),
        resume: o.resume === undefined ? undefined : parseIds([o.resume], '--resume')[0],
        wait: o.wait,
      },
      progress,
      (m) => progress.note(m),
      stop,
    );
  } catch (err) {
    const partial = (err as { outcome?: Awaited<ReturnType<typeof runImport>> }).outcome;
    if (partial) await report(ctx, partial);
    const id = partial?.importId;
    if (id !== undefined)
      ctx.note(
        `import ${id} stopped after line ${partial!.lastLine}, which is written with every row before it; continue with --resume ${id} once the problem is fixed`,
      );
    throw err;
  } finally {
    process.off('SIGINT', onSigint);
    await progress.stop();
  }
  await report(ctx, outcome);
  if (outcome.interrupted) {
    process.exitCode = 130;
    const id = outcome.imports[0]?.import_id;
    if (id === undefined) ctx.note('stopped before the first batch was written; nothing was imported');
    else ctx.note(`stopped after line ${outcome.lastLine}, which is written with every row before it; continue with --resume ${id}`);
  } else if (outcome.rejectedCount) process.exitCode = EXIT.rowErrors;
}

/**
 * The --group ids for a dry run, which writes nothing and so creates no group: a
 * missing one is left out, with a note (the import would create it).
 */
async function existingGroupIds(api: Api, ctx: RunContext, refs: string[] = []): Promise<number[]> {
  const ids: number[] = [];
  for (const ref of refs) {
    try {
      ids.push(...(await groupIds(api, ctx, [ref], false)));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      ctx.note(`there is no group "${ref}" yet: the import would create it`);
    }
  }
  return ids;
}

async function report(ctx: RunContext, outcome: Awaited<ReturnType<typeof import('../src/cli/importer.js')['runImport']>>) {
  // Rejected rows and duplicates of an imported row, in line order: the rows not imported.
  const shown = [...outcome.rejected, ...outcome.duplicates].sort((a, b) => a.line - b.line).slice(0, 20);
  for (const r of shown) ctx.note(`line ${r.line}: ${r.reason}`);
  const notImported = outcome.rejectedCount + outcome.duplicateCount;
  if (notImported > shown.length)
    ctx.note(`… and ${notImported - shown.length} more rows not imported (--errors-out FILE writes them all)`);
  if (outcome.dryRun) {
    // The counts of the import record the real run would make, under the same names,
    // so a dry run and the real import of one file compare key by key.
    const d = outcome.dryRun;
    const refusedBySelf = outcome.rowsRead - d.received;
    const counts = {
      dry_run: true,
      num_members: outcome.rowsRead,
      num_members_added: d.added,
      num_members_updated: d.updated,
      num_duplicates: d.duplicates,
      num_skipped: d.skipped + refusedBySelf,
      num_errors: outcome.rejectedCount,
    };
    return summary(ctx, counts, `Dry run, nothing written: ${countsSentence(counts)}.`);
  }
  // Stopped before anything was written: there is no record to show (a note says so).
  if (!outcome.imports.length) return;
  const one = outcome.imports.length === 1 ? outcome.imports[0] : undefined;
  const sentence = one
    ? `Import ${one.import_id} (status ${one.status}): ${countsSentence(one)}` +
      (outcome.rejectedCount - Number(one.num_errors) > 0
        ? `; ${outcome.rejectedCount - Number(one.num_errors)} rows rejected before sending`
        : '') +
      '.'
    : `${outcome.imports.length} imports.`;
  await summary(ctx, one ?? outcome.imports, sentence);
}

/** The import's answer, and always one summary line for people: on stdout in a table, else on stderr (also when piped). */
async function summary(ctx: RunContext, value: unknown, sentence: string) {
  if (ctx.format !== 'table') ctx.note(sentence);
  await ctx.done(value, sentence);
}
