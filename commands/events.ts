import { eventTables, TABLES } from '../src/cli/columns.js';
import type { Command } from 'commander';
import { action, dryRunOption, examples, EXIT, NotFoundError, UsageError, type RunContext } from '../src/cli/context.js';
import { collect, didYouMean, memberId } from '../src/cli/resolve.js';
import { allPages, listOptions, printList, type ListFlags } from '../src/cli/paging.js';
import type { Api } from '../src/client/api.js';
import type { Transport } from '../src/client/transport.js';

/** What differs between member events and touchpoints, for the commands both have. */
export interface KindNames {
  /** `events` or `touchpoints`: the path segment and the command. */
  base: string;
  noun: string;
  typeId: string;
  typeName: string;
  recordId: string;
  prefix: string;
  itemsKey: string;
}

export const EVENT_NAMES: KindNames = {
  base: 'events',
  noun: 'event',
  typeId: 'event_type_id',
  typeName: 'event_type',
  recordId: 'event_id',
  prefix: 'event',
  itemsKey: 'events',
};

const isId = (ref: string) => /^\d+$/.test(ref);
/** `an event`, `a touchpoint`. */
const an = (k: KindNames) => `${/^[aeiou]/.test(k.noun) ? 'an' : 'a'} ${k.noun}`;

/** A type by id, or by its name in any case. */
async function typeId(api: Api, k: KindNames, ref: string): Promise<number> {
  if (isId(ref)) return Number(ref);
  const types = await allPages<Record<string, string | number>>(api, `/${k.base}`);
  const found = types.find((t) => String(t[k.typeName]).toLowerCase() === ref.toLowerCase());
  if (!found)
    throw new NotFoundError(
      `no ${k.noun} type is named "${ref}" (amsg ${k.base} types list shows them)${didYouMean(
        ref,
        types.map((t) => String(t[k.typeName])),
      )}`,
      'type',
    );
  return found[k.typeId] as number;
}

/** `--attr key=value` pairs (text values), merged over `--attributes JSON`. */
function attributesOf(o: { attr?: string[]; attributes?: string }): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (o.attributes !== undefined) {
    try {
      out = JSON.parse(o.attributes);
    } catch (err) {
      throw new UsageError(`--attributes is not JSON: ${(err as Error).message}`);
    }
  }
  for (const pair of o.attr ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--attr takes key=value, got "${pair}"`);
    out = { ...(out ?? {}), [pair.slice(0, eq)]: pair.slice(eq + 1) };
  }
  return out;
}

/** `types list|get|create|rename|delete` and `record`/`list`, the same for both kinds. */
export function registerKind(cmd: Command, k: KindNames) {
  const tables = eventTables(k);
  const types = cmd.command('types').description(`the ${k.noun} type catalogue`);

  examples(
    listOptions(types.command('list').description(`list ${k.noun} types (every one unless --limit or --start)`), {
      countable: true,
    }).action(
      action(async (ctx, o: ListFlags) => {
        await printList(ctx, `/${k.base}`, {}, o, { table: tables.types }, { countable: true, allByDefault: true });
      }),
    ),
    [`amsg ${k.base} types list`],
  );

  examples(
    types
      .command('get <type>')
      .description(`show ${an(k)} type, by id or name`)
      .action(
        action(async (ctx, ref: string) => {
          const api = await ctx.api();
          await ctx.print(await api.get(`/${k.base}/${await typeId(api, k, ref)}`));
        }),
      ),
    [`amsg ${k.base} types get purchase`],
  );

  examples(
    types
      .command('create <name>')
      .description(`create ${an(k)} type`)
      .option('--display-name <text>', 'the name people see (default: the name)')
      .action(
        action(async (ctx, name: string, o: { displayName?: string }) => {
          const api = await ctx.api();
          const created = await api.post<Record<string, unknown>>(`/${k.base}`, {
            [k.typeName]: name,
            display_name: o.displayName ?? name,
          });
          await ctx.done(created, `Created ${k.noun} type ${created[k.typeId]} "${name}".`);
        }),
      ),
    [`amsg ${k.base} types create purchase --display-name "Purchase"`],
  );

  examples(
    types
      .command('rename <type> <new-name>')
      .description(`rename ${an(k)} type (its display name too with --display-name)`)
      .option('--display-name <text>', 'the new display name (default: kept)')
      .action(
        action(async (ctx, ref: string, name: string, o: { displayName?: string }) => {
          const api = await ctx.api();
          const id = await typeId(api, k, ref);
          // The service takes both names on every update.
          const displayName = o.displayName ?? (await api.get<{ display_name: string }>(`/${k.base}/${id}`)).display_name;
          const updated = await api.put(`/${k.base}/${id}`, { [k.typeName]: name, display_name: displayName });
          await ctx.done(updated, `Renamed ${k.noun} type ${id} to "${name}".`);
        }),
      ),
    [`amsg ${k.base} types rename purchase order --display-name "Order"`],
  );

  examples(
    dryRunOption(types.command('delete <type>').description(`delete ${an(k)} type and every ${k.noun} of it (irreversible)`)).action(
      action(async (ctx, ref: string) => {
        const api = await ctx.api();
        const id = await typeId(api, k, ref);
        const type = await api.get<Record<string, string>>(`/${k.base}/${id}`);
        // The service keeps no count of a type's records; the phrase says they go too.
        await ctx.change(
          `delete ${k.noun} type "${type[k.typeName]}" (${id}) and every ${k.noun} of it`,
          1,
          () => api.delete(`/${k.base}/${id}`),
          `Deleted ${k.noun} type ${id} and its ${k.noun}s.`,
        );
      }),
    ),
    [`amsg ${k.base} types delete purchase --yes`],
  );

  examples(
    cmd
      .command('record <member>')
      .description(`record ${an(k)} for a member (by id or e-mail address)`)
      .requiredOption('--type <type>', `the ${k.noun} type, by id or name`)
      .option('--value <number>', 'monetary value')
      .option('--attr <key=value>', 'an attribute (repeatable)', collect)
      .option('--attributes <json>', 'attributes as a JSON object')
      .option('--mailing <id>', 'the mailing it came from')
      .option('--at <datetime>', 'when it happened (default now), e.g. 2026-05-01T09:00:00Z')
      .action(
        action(
          async (
            ctx,
            member: string,
            o: { type: string; value?: string; attr?: string[]; attributes?: string; mailing?: string; at?: string },
          ) => {
            const item: Record<string, unknown> = isId(member) ? { member_id: Number(member) } : { email: member };
            if (isId(o.type)) item[k.typeId] = Number(o.type);
            else item[k.typeName] = o.type;
            if (o.value !== undefined) {
              const value = Number(o.value);
              if (o.value.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--value must be a number, got "${o.value}"`);
              item[`${k.prefix}_monetary_value`] = value;
            }
            const attributes = attributesOf(o);
            if (attributes !== undefined) item.attributes = attributes;
            if (o.mailing !== undefined) {
              if (!isId(o.mailing)) throw new UsageError(`--mailing must be a mailing id, got "${o.mailing}"`);
              item.mailing_id = Number(o.mailing);
            }
            if (o.at !== undefined) item[`${k.prefix}_timestamp`] = o.at;
            const api = await ctx.api();
            const [created] = await api.post<Record<string, unknown>[]>(`/${k.base}/members`, { [k.itemsKey]: [item] });
            await ctx.done([created], `Recorded ${k.noun} ${created[k.recordId]} for member ${created.member_id}.`);
          },
        ),
      ),
    [
      `amsg ${k.base} record ada@example.com --type purchase --value 19.99 --attr sku=A1 --mailing 7`,
      `amsg ${k.base} record 42 --type 3 --attributes '{"items": [1, 2]}' --at 2026-05-01T09:00:00Z`,
    ],
  );

  examples(
    listOptions(cmd.command('list <member>').description(`a member's ${k.noun}s, oldest first, a window of 500 at a time unless --all`), {
      countable: true,
    }).action(
      action(async (ctx, member: string, o: ListFlags) => {
        const api = await ctx.api();
        const id = await memberId(api, member);
        await printList(ctx, `/${k.base}/members/${id}`, {}, o, { table: tables.records }, { countable: true });
      }),
    ),
    [`amsg ${k.base} list ada@example.com`, `amsg ${k.base} list 42 --count`],
  );
}

const OUTCOMES = ['ran', 'invalid-email', 'no-member', 'not-active', 'no-match', 'queued'];

/** Where ingested events go: events_url when it differs from the base URL, else the service itself. */
async function ingestTransport(ctx: RunContext, api: Api): Promise<{ transport: Transport; own: boolean }> {
  const s = ctx.settings;
  if (s.mode === 'remote' && s.eventsUrl && s.eventsUrl !== s.baseUrl) {
    const { HttpTransport } = await import('../src/client/http-transport.js');
    return { transport: new HttpTransport({ baseUrl: s.eventsUrl, apiKey: s.apiKey }), own: true };
  }
  return { transport: api.transport, own: false };
}

export function register(events: Command) {
  registerKind(events, EVENT_NAMES);

  examples(
    events
      .command('ingest <file>')
      .description('send events (NDJSON, one a line, or a JSON array; - for stdin) to the ingestion endpoint')
      .option('--concurrency <n>', 'requests in flight', '8')
      .option('--errors-out <file>', 'write the refused lines as NDJSON: {line, error, text}')
      .action(
        action(async (ctx, file: string, o: { concurrency: string; errorsOut?: string }) => {
          const concurrency = Number(o.concurrency);
          if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
            throw new UsageError(`--concurrency must be an integer from 1 to 64, got "${o.concurrency}"`);
          const { createReadStream } = await import('node:fs');
          const { readEvents, ingestEvents, createIngestProgress } = await import('../src/cli/ingest.js');
          const input = file === '-' ? process.stdin : createReadStream(file);
          const opened = new Promise<void>((resolve, reject) => {
            if (file === '-') return resolve();
            input.once('open', () => resolve());
            input.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`cannot read ${file}: ${err.code ?? err.message}`)));
          });
          await opened;
          const api = await ctx.api();
          const { transport, own } = await ingestTransport(ctx, api);
          const progress = await createIngestProgress(ctx.stderr.stream, { quiet: ctx.quiet });
          let result: Awaited<ReturnType<typeof ingestEvents>>;
          try {
            result = await ingestEvents(readEvents(input), transport, api.accountId, {
              concurrency,
              onProgress: (s) => progress.update(s),
            });
          } finally {
            await progress.stop();
            if (own) await transport.close();
          }
          const { state, refusals } = result;
          const shown = refusals.slice(0, 20);
          for (const r of shown) ctx.stderr.write(`amsg: line ${r.line}: ${r.error}\n`);
          if (refusals.length > shown.length)
            ctx.stderr.write(
              `amsg: … and ${refusals.length - shown.length} more refused lines${o.errorsOut ? ` (all in ${o.errorsOut})` : ' (--errors-out FILE lists them all)'}\n`,
            );
          if (o.errorsOut) {
            const { writeFile } = await import('node:fs/promises');
            await writeFile(o.errorsOut, refusals.map((r) => JSON.stringify(r) + '\n').join(''));
          }
          const summary = { read: state.read, sent: state.sent, refused: state.refused };
          await ctx.done(summary, `Sent ${state.sent} of ${state.read} events; ${state.refused} refused.`);
          if (state.refused) process.exitCode = EXIT.rowErrors;
        }),
      ),
    [
      'amsg events ingest march.ndjson --errors-out refused.ndjson',
      'cat events.json | amsg events ingest -',
      'AMSG_EVENTS_URL=https://events.example.com amsg events ingest backfill.ndjson --concurrency 16',
    ],
  );

  examples(
    listOptions(
      events
        .command('inbound [id]')
        .description(
          'ingested events with their outcome, a window of 500 at a time unless --all (one, with the workflow runs it made, by id)',
        )
        .option('--outcome <outcome>', `only these: ${OUTCOMES.join(', ')}`),
      { countable: true },
    ).action(
      action(async (ctx, id: string | undefined, o: ListFlags & { outcome?: string }) => {
        const api = await ctx.api();
        if (id !== undefined) {
          if (!isId(id)) throw new UsageError(`an inbound event is a numeric id, got "${id}"`);
          return ctx.print(await api.get(`/events/inbound/${id}`));
        }
        if (o.outcome !== undefined && !OUTCOMES.includes(o.outcome))
          throw new UsageError(`--outcome must be one of ${OUTCOMES.join(', ')}, got "${o.outcome}"`);
        await printList(ctx, '/events/inbound', { outcome: o.outcome }, o, { table: TABLES.inboundEvents }, { countable: true });
      }),
    ),
    ['amsg events inbound --outcome no-match', 'amsg events inbound 17 --json', 'amsg events inbound --outcome queued --count'],
  );
}
