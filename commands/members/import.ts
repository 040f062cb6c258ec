// `amsg members import FILE`: a CSV streamed into one import record (src/cli/importer.ts),
// with progress, Ctrl-C to stop and --resume to go on.
import type { Command } from 'commander';
import { action, examples, EXIT, NotFoundError, UsageError, type RunContext } from '../../src/cli/context.js';
import type { Api } from '../../src/client/api.js';
import { collect, collectList, groupIds, parseIds } from '../../src/cli/resolve.js';

export function registerImport(members: Command) {
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
      .option('--resume <import-id>', 'continue an interrupted import of the same file, with the options it was started with')
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
}

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
  const { runImport } = await import('../../src/cli/importer.js');
  const { createImportProgress } = await import('../../src/cli/import-progress.js');
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
        groups: o.dryRun
          ? () => existingGroupIds(api, ctx, o.group)
          : // A resume creates no group: a --group it is given must be one the import has.
            () => groupIds(api, ctx, o.group, o.resume === undefined),
        groupNames: o.group,
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
    if (partial) await report(ctx, partial, o.errorsOut);
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
  await report(ctx, outcome, o.errorsOut);
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

async function report(
  ctx: RunContext,
  outcome: Awaited<ReturnType<typeof import('../../src/cli/importer.js')['runImport']>>,
  errorsOut: string | undefined,
) {
  // Rejected rows and duplicates of an imported row, in line order: the rows not imported.
  const shown = [...outcome.rejected, ...outcome.duplicates].sort((a, b) => a.line - b.line).slice(0, 20);
  for (const r of shown) ctx.note(`line ${r.line}: ${r.reason}`);
  const notImported = outcome.rejectedCount + outcome.duplicateCount;
  if (notImported > shown.length)
    // With --errors-out the file has them all, and a note says where it went.
    ctx.note(`… and ${notImported - shown.length} more rows not imported${errorsOut ? '' : ' (--errors-out FILE writes them all)'}`);
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
