/**
 * `amsg members import`: streams a CSV into one import record. Columns are mapped to
 * fields before anything is written; rows go in batches, each applied by the
 * service in one transaction; rejected rows are reported with their line numbers
 * (and written to --errors-out). Field values are checked by the service itself (a
 * dry run asks it without writing), so the CLI repeats no field rule.
 */
import { closeSync, createWriteStream, openSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import { ApiError } from '../errors.js';
import type { Api } from '../client/api.js';
import { RateLimitedError } from '../client/transport.js';
import { UsageError } from './context.js';
import { didYouMean } from './resolve.js';
import { CsvError, encodingName, openCsv, type CsvRecord, type CsvSource } from './csv-source.js';
import type { ImportProgress } from './import-progress.js';
import { thousands } from './output.js';
import { postBatch } from './batch-order.js';
import { prepareResume, recordedFileName, type ClientOptions } from './import-resume.js';

export interface ImportRequest {
  file: string;
  /**
   * The ids of the --group flags. Asked only once a row is about to be written, so a
   * file refused before that creates no group.
   */
  groups: () => Promise<number[]>;
  /** The --group flags as typed (a resume compares them with the import's groups). */
  groupNames?: string[];
  addOnly: boolean;
  /** column → field (or email, phone_number, groups); an empty field skips the column */
  map: Record<string, string>;
  /** columns to skip */
  ignore?: string[];
  sourceName?: string;
  delimiter?: string;
  /** The file's encoding (`--encoding`); detected when not given (see openCsv). */
  encoding?: string;
  dryRun: boolean;
  errorsOut?: string;
  batchSize: number;
  /** Continue this interrupted streamed import, skipping the rows it already has. */
  resume?: number;
  wait: boolean;
}

export interface Rejected {
  line: number;
  reason: string;
}

export interface ImportOutcome {
  /**
   * The import record as the service has it at the end: none for a dry run, or when
   * the import stopped before its first row was written (then nothing was).
   */
  imports: Record<string, unknown>[];
  /** The streamed import, once opened (what --resume takes, even when it could not be finished). */
  importId?: number;
  /** What a dry run would do. */
  dryRun?: { received: number; added: number; updated: number; duplicates: number; skipped: number };
  rowsRead: number;
  rowsSent: number;
  /** Rows refused, by the CLI or the service (the first 1,000); they make the exit code 4. */
  rejected: Rejected[];
  rejectedCount: number;
  /**
   * Rows not imported because an earlier row of the file has their address (the
   * first 1,000): the first row is the one imported, so they are no errors.
   */
  duplicates: Rejected[];
  duplicateCount: number;
  interrupted: boolean;
  /** The last line of the file that was applied (or checked, in a dry run); 1 is the header. */
  lastLine: number;
}

/** Column names that are not fields. */
const SPECIAL: Record<string, string> = {
  email: 'email',
  email_address: 'email',
  phone: 'phone_number',
  phone_number: 'phone_number',
  sms_phone_number: 'phone_number',
  group: 'groups',
  groups: 'groups',
  group_name: 'groups',
};

/**
 * Columns the service writes itself (an audience export, `members list --output
 * csv`): what they hold is not the importer's to set, so they are skipped, with a
 * note, and an exported file re-imports as it is.
 */
const SERVICE_COLUMNS = new Set([
  'member_id',
  'account_id',
  'member_since',
  'plaintext_preferred',
  'bounce_count',
  'status_name',
  'status',
  'member_status_id',
  'confirmed_opt_in',
  'last_modified_at',
  'deleted_at',
  'email_error',
  'promotional_status',
  'transactional_status',
  'region_code',
  'sms',
  'sms.promotional_status',
  'sms.transactional_status',
  'sms.region_code',
  'fields',
]);

/**
 * The columns of its own that --errors-out adds after the file's columns: the line
 * of the file each row was on, and the reason it was not imported.
 */
export const LINE_COLUMN = 'line';
export const ERROR_COLUMN = 'error';

/**
 * How many of the file's last columns are the rejected-rows file's own: `line` and
 * `error` (or `error` alone, as files before the line column have it), where no field
 * or --map claims the name. Not 0: the file is an --errors-out file coming back.
 */
export function ownErrorColumns(header: string[], fieldNames: string[], map: Record<string, string>): 0 | 1 | 2 {
  const own = (name: string | undefined, wanted: string) =>
    name?.toLowerCase() === wanted &&
    !fieldNames.some((f) => f.toLowerCase() === wanted) &&
    !Object.keys(map).some((c) => c.toLowerCase() === wanted);
  if (header.length < 2 || !own(header.at(-1), ERROR_COLUMN)) return 0;
  return header.length > 2 && own(header.at(-2), LINE_COLUMN) ? 2 : 1;
}

interface Column {
  index: number;
  name: string;
  /** 'email', 'phone_number', 'groups', or a field's shortcut name */
  target: string;
}

/**
 * Maps the header to targets, or throws one error naming every problem. A column
 * mapped to nothing (`--map col=`), named by --ignore, or one of the service's own
 * columns is skipped (and answered in `skipped`).
 */
export function mapColumns(
  header: string[],
  fieldNames: string[],
  map: Record<string, string>,
  ignore: string[] = [],
): Column[] & { skipped: string[]; serviceColumns: string[] } {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  header.forEach((h, i) => {
    const key = h.toLowerCase();
    if (!h) problems.push(`column ${i + 1} has no name`);
    else if (seen.has(key)) problems.push(`column "${h}" appears twice (columns ${seen.get(key)! + 1} and ${i + 1})`);
    seen.set(key, i);
  });
  const fields = new Map(fieldNames.map((f) => [f.toLowerCase(), f]));
  const explicit = new Map(Object.entries(map).map(([c, f]) => [c.toLowerCase(), f]));
  for (const c of explicit.keys())
    if (!seen.has(c)) problems.push(`--map names column "${c}", which is not in the header (${header.join(', ')})${didYouMean(c, header)}`);
  const ignored = new Set(ignore.map((c) => c.toLowerCase()));
  for (const c of ignore)
    if (!seen.has(c.toLowerCase()))
      problems.push(`--ignore names column "${c}", which is not in the header (${header.join(', ')})${didYouMean(c, header)}`);
  const columns = Object.assign([] as Column[], { skipped: [] as string[], serviceColumns: [] as string[] });
  const unknown: string[] = [];
  header.forEach((name, index) => {
    if (!name) return;
    const key = name.toLowerCase();
    if (ignored.has(key) || explicit.get(key) === '') return void columns.skipped.push(name);
    // Columns of the service's own CSV: fields.first_name is the field, sms.phone_number the phone.
    const wanted =
      explicit.get(key) ?? (/^fields\./i.test(name) ? name.slice('fields.'.length) : key === 'sms.phone_number' ? 'phone_number' : name);
    const special = SPECIAL[wanted.toLowerCase()];
    const field = fields.get(wanted.toLowerCase());
    if (!explicit.has(key) && !field && SERVICE_COLUMNS.has(key)) return void columns.serviceColumns.push(name);
    if (special) columns.push({ index, name, target: special });
    else if (field) columns.push({ index, name, target: field });
    else if (explicit.has(name.toLowerCase())) problems.push(`--map ${name}=${wanted}: there is no field "${wanted}"`);
    else unknown.push(name);
  });
  if (unknown.length)
    problems.push(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"${didYouMean(u, fieldNames, false).replace(/^; /, ' (').replace(/\?$/, '?)')}`).join(', ')}: ` +
        'map each to a field with --map column=field, skip it with --ignore column, or create the field (amsg fields create NAME --type text)',
    );
  const emails = columns.filter((c) => c.target === 'email');
  if (!emails.length) problems.push(`no email column in the header (${header.join(', ')}); name one with --map column=email`);
  if (emails.length > 1) problems.push(`more than one column maps to email: ${emails.map((c) => c.name).join(', ')}`);
  // Two columns for one field would leave the last one's value, silently.
  const byTarget = new Map<string, string[]>();
  for (const c of columns) if (c.target !== 'email') byTarget.set(c.target, [...(byTarget.get(c.target) ?? []), c.name]);
  for (const [target, names] of byTarget)
    if (names.length > 1) problems.push(`columns ${names.map((n) => `"${n}"`).join(' and ')} both map to ${target}`);
  if (problems.length) throw new CsvError(`the header cannot be imported:\n  - ${problems.join('\n  - ')}`);
  return columns;
}

/**
 * A group column's lists, split once each: a file repeats a few lists over and over.
 * The arrays are shared between rows and never changed. Bounded, for a file where
 * every row names its own groups.
 */
const groupLists = new Map<string, string[]>();

/**
 * A record to the member object of the spec's POST /members (for a service without
 * streamed imports, which take the CSV rows as they are); empty cells leave values
 * as they are, as the streamed import's CSV rows do.
 */
function toMember(columns: Column[], values: string[]): Record<string, unknown> {
  const member: Record<string, unknown> = {};
  for (const c of columns) {
    const v = values[c.index]?.trim();
    if (!v) continue;
    if (c.target === 'phone_number') member.sms = { phone_number: v };
    else if (c.target === 'groups') {
      let list = groupLists.get(v);
      if (!list) {
        list = v.split(/\s*[;|]\s*/).filter(Boolean);
        if (groupLists.size < 10_000) groupLists.set(v, list);
      }
      member.groups = list;
    } else member[c.target] = v;
  }
  return member;
}

/**
 * The --errors-out file: the rows not imported, each exactly as it was read, then
 * the reason. It re-imports as it is once the rows are fixed (the importer knows
 * its own `error` column). Written only when some row was not imported.
 */
class ErrorsFile {
  private fd?: number;
  private out?: WriteStream;
  private failed?: Error;
  private stringify?: (rows: string[][]) => string;
  private rows = 0;
  constructor(
    private readonly path: string | undefined,
    private readonly header: string[],
    private readonly note: (message: string) => void,
  ) {
    // Opened now, before any row is written: a path that cannot be written is bad
    // usage to say at once, not a crash half way through the import.
    if (!path) return;
    try {
      this.fd = openSync(`${path}.partial`, 'w');
    } catch (err) {
      throw new UsageError(`cannot write --errors-out ${path}: ${(err as Error).message}`);
    }
  }

  private async start() {
    const { stringify } = await import('csv-stringify/sync');
    this.stringify = (rows) => stringify(rows);
    this.out = createWriteStream('', { fd: this.fd });
    this.out.on('error', (err) => {
      this.failed ??= err;
    });
    this.out.write(this.stringify([[...this.header, LINE_COLUMN, ERROR_COLUMN]]));
  }

  async write(values: string[], line: number, reason: string) {
    if (!this.path) return;
    if (!this.out) await this.start();
    // The row's own cells, then its line and the reason: a ragged row is not padded or
    // cut, so it comes back exactly as it was (its line and reason then stand after its last cell).
    this.out!.write(this.stringify!([[...values, String(line), reason]]));
    this.rows++;
  }

  /**
   * Moves the file into place and says so; with no row to write, writes nothing and says
   * that, and why: every row was imported, or the import stopped before any was refused.
   */
  async close(stopped = false) {
    if (!this.path) return;
    if (!this.out) {
      closeSync(this.fd!);
      rmSync(`${this.path}.partial`, { force: true });
      this.note(
        stopped
          ? `the import stopped before any row was refused: nothing written to ${this.path}`
          : `every row was imported: nothing written to ${this.path}`,
      );
      return;
    }
    await new Promise<void>((resolve) => this.out!.end(resolve));
    if (this.failed) throw new Error(`cannot write --errors-out ${this.path}: ${this.failed.message}`);
    renameSync(`${this.path}.partial`, this.path);
    this.note(
      `wrote the ${thousands(this.rows)} row${this.rows === 1 ? '' : 's'} not imported to ${this.path} (fix them and import that file again)`,
    );
  }
}

/** Rows read together and sent in one call, with the ones refused before sending. */
interface Batch {
  /** The rows sent (their values, in header order, are the CSV rows of the streamed import). */
  sent: CsvRecord[];
  /** Rows the CLI refused itself (their column count). */
  refused: { record: CsvRecord; reason: string }[];
  /** Every row of the batch, sent or refused. */
  size: number;
  lastLine: number;
  /** The rows of the file before the batch, less those a resume skipped, as the import counts them (set when it is sent). */
  offset?: number;
}

const newBatch = (): Batch => ({ sent: [], refused: [], size: 0, lastLine: 0 });

/** The values of a batch's rows as sent. */
/** The cells sent of each row: all of them, or those of the columns kept (`keep`) when some are skipped. */
const rowsOf = (batch: Batch, keep?: number[]) =>
  keep ? batch.sent.map((r) => keep.map((i) => r.values[i])) : batch.sent.map((r) => r.values);

type RowErrors = { index: number; error: string }[];
/** Rows dropped as duplicates, by position, with the position of the row imported (null: in an earlier batch). */
type DuplicateRows = { index: number; duplicate_of: number | null }[];

/** What the service answered about a batch's rows. */
interface RowAnswer {
  errors: RowErrors;
  duplicates: DuplicateRows;
}
const NO_ROWS: RowAnswer = { errors: [], duplicates: [] };

/** The targets of the columns sent, and which cells of a row they are when some columns are skipped. */
interface SentColumns {
  targets: string[];
  keep?: number[];
}

/** Where the rows go: a dry run, a streamed import, or POST /members jobs. */
interface Target {
  /**
   * Applies (or checks) one batch; answers the rows the service refused or dropped,
   * by position. `prior` settles when the batch before it has been answered.
   */
  send(batch: Batch, prior?: Promise<unknown>): Promise<RowAnswer>;
  /** Ends the import; an error leaves it resumable (status e). */
  finish(error?: string): Promise<void>;
}

/** A dry run: every batch through the service's rules, nothing written. */
function dryRunTarget(api: Api, columns: SentColumns, options: () => Promise<Record<string, unknown>>, outcome: ImportOutcome): Target {
  const dry = { received: 0, added: 0, updated: 0, duplicates: 0, skipped: 0 };
  return {
    async send(batch) {
      if (!batch.sent.length) return NO_ROWS;
      const r = await api.post<typeof dry & { errors: RowErrors; duplicate_rows?: DuplicateRows }>('/members/imports/validate', {
        columns: columns.targets,
        rows: rowsOf(batch, columns.keep),
        ...(await options()),
      });
      for (const k of Object.keys(dry) as (keyof typeof dry)[]) dry[k] += r[k];
      return { errors: r.errors, duplicates: r.duplicate_rows ?? [] };
    },
    async finish(error) {
      // A dry run that did not get through the file has no answer to give.
      if (!error) outcome.dryRun = dry;
    },
  };
}

/**
 * A streamed import: one record for the whole file. It is opened with the first
 * batch, so a file refused before any row was written leaves no record behind. Rows
 * the CLI refused are counted with their batch, so num_members is the number of data
 * rows done and a resume skips exactly that many.
 */
function streamTarget(
  api: Api,
  columns: SentColumns,
  options: () => Promise<Record<string, unknown>>,
  outcome: ImportOutcome,
  progress: ImportProgress,
  clientOptions: ClientOptions,
  resume?: number,
): Target {
  let importId = resume;
  const opened = (id: number) => {
    outcome.importId = id;
    progress.update({ importId: id });
  };
  if (resume !== undefined) opened(resume);
  // Opened once, whichever batch asks first (two may be in flight).
  let opening: Promise<number> | undefined;
  const open = () =>
    (opening ??= (async () => {
      if (importId === undefined) {
        try {
          const body = { ...(await options()), client_options: clientOptions };
          importId = (await api.post<{ import_id: number }>('/members/imports', body)).import_id;
        } catch (err) {
          if (isMissingRoute(err)) throw new NoStreamedImports();
          throw err;
        }
        opened(importId);
      }
      return importId;
    })());
  return {
    async send(batch, prior) {
      const id = await open();
      // Named by its offset, a batch may be sent again: the service answers a repeat as
      // it answered the batch, and never writes it twice.
      const post = () =>
        api.postRepeatable<{ errors: RowErrors; duplicate_rows?: DuplicateRows }>(`/members/imports/${id}/rows`, {
          columns: columns.targets,
          rows: rowsOf(batch, columns.keep),
          ...(batch.refused.length ? { rejected: batch.refused.length } : {}),
          offset: batch.offset,
        });
      const r = await postBatch(post, batch.offset, prior);
      // An amsg serve from before duplicate_rows counts them only.
      return { errors: r.errors, duplicates: r.duplicate_rows ?? [] };
    },
    async finish(error) {
      // A failed or interrupted import that wrote nothing has no record to end.
      if (importId === undefined && error) return;
      const id = await open();
      outcome.imports = [await api.post(`/members/imports/${id}/finish`, error ? { error } : {})];
    },
  };
}

/** A service without streamed imports: the spec's POST /members, one import record per batch. */
function jobsTarget(
  api: Api,
  columns: Column[],
  options: () => Promise<Record<string, unknown>>,
  outcome: ImportOutcome,
  progress: ImportProgress,
  wait: boolean,
): Target {
  const jobs: number[] = [];
  return {
    async send(batch) {
      if (!batch.sent.length) return NO_ROWS;
      const members = batch.sent.map((r) => toMember(columns, r.values));
      const r = await api.post<{ import_id: number }>('/members', { members, ...(await options()) });
      jobs.push(r.import_id);
      progress.update({ importId: r.import_id });
      return NO_ROWS;
    },
    async finish() {
      for (const id of jobs) {
        let record = await api.get<Record<string, unknown>>(`/members/imports/${id}`);
        while (wait && (record.status === 'q' || record.status === 'p')) {
          progress.update({ serverStatus: String(record.status) });
          await new Promise((r) => setTimeout(r, 500));
          record = await api.get<Record<string, unknown>>(`/members/imports/${id}`);
        }
        outcome.imports.push(record);
      }
    },
  };
}

/**
 * Runs an import. `progress` is told as rows are read and sent, and of waits for the
 * service's rate limit; `stopSignal` ends the import cleanly after the batch in
 * flight (Ctrl-C). Stopped by the rate limit, it says how to go on (--resume).
 */
export async function runImport(
  api: Api,
  req: ImportRequest,
  progress: ImportProgress,
  note: (message: string) => void,
  stopSignal: { stopped: boolean; onStop?: () => void },
): Promise<ImportOutcome> {
  const restoreWaits = api.reportWaits((seconds) => {
    progress.update({ waitingUntil: Date.now() + seconds * 1000 });
    note(`rate limited: waiting ${seconds} s`);
  });
  try {
    return await importRows(api, req, progress, note, stopSignal);
  } catch (err) {
    const id = (err as { outcome?: ImportOutcome }).outcome?.importId ?? req.resume;
    if (err instanceof RateLimitedError && id !== undefined)
      err.continueWith = `continue with: amsg members import ${req.file} --resume ${id} (the rows imported stay imported)`;
    throw err;
  } finally {
    restoreWaits();
  }
}

async function importRows(
  api: Api,
  req: ImportRequest,
  progress: ImportProgress,
  note: (message: string) => void,
  stopSignal: { stopped: boolean; onStop?: () => void },
): Promise<ImportOutcome> {
  // A resume goes on with the first run's options (those left out are taken from it).
  const resumed = req.resume === undefined || req.dryRun ? undefined : await prepareResume(api, req.resume, req);
  const clientOptions: ClientOptions = {
    map: resumed?.map ?? req.map,
    ignore: resumed?.ignore ?? req.ignore ?? [],
    delimiter: resumed ? resumed.delimiter : req.delimiter,
  };
  const source: CsvSource = await openCsv(req.file, { delimiter: clientOptions.delimiter, encoding: req.encoding });
  if (source.encoding.why)
    note(`read ${req.file === '-' ? 'stdin' : req.file} as ${encodingName(source.encoding.name)} (${source.encoding.why})`);
  const fieldNames = (await api.get<{ shortcut_name: string }[]>('/fields')).map((f) => f.shortcut_name);
  // An --errors-out file coming back: its last cell is the old reason, and the cells
  // before it are the row exactly as it was (a ragged row too), so it goes again as it was.
  const ownErrors = ownErrorColumns(source.header, fieldNames, clientOptions.map);
  const header = source.header.slice(0, source.header.length - ownErrors);
  if (ownErrors === 2)
    note(
      `the last columns, "${source.header.at(-2)}" and "${source.header.at(-1)}", are the line and the reason amsg gave for rejecting each row: ignored`,
    );
  else if (ownErrors) note(`the last column, "${source.header.at(-1)}", is the reason amsg gave for rejecting each row: ignored`);
  const columns = mapColumns(header, fieldNames, clientOptions.map, clientOptions.ignore);
  if (columns.serviceColumns.length)
    note(
      `skipped the service's own column${columns.serviceColumns.length > 1 ? 's' : ''} ${columns.serviceColumns.join(', ')} (the service sets them; they are not imported)`,
    );
  if (columns.skipped.length)
    note(`skipped column${columns.skipped.length > 1 ? 's' : ''} ${columns.skipped.join(', ')} (--ignore or --map column=)`);
  // Every other column of the header maps to something (mapColumns refuses the rest):
  // the rows go as they were read, or only their kept cells when some are skipped.
  const sent: SentColumns = {
    targets: columns.map((c) => c.target),
    keep: columns.length === header.length ? undefined : columns.map((c) => c.index),
  };
  stopSignal.onStop = () => source.stop();
  const outcome: ImportOutcome = {
    imports: [],
    rowsRead: 0,
    rowsSent: 0,
    rejected: [],
    rejectedCount: 0,
    duplicates: [],
    duplicateCount: 0,
    interrupted: false,
    lastLine: 1,
  };
  let resolved: Promise<Record<string, unknown>> | undefined;
  const options = () =>
    (resolved ??= (async () => {
      const groupIds = await req.groups();
      return {
        group_ids: groupIds.length ? groupIds : undefined,
        add_only: req.addOnly || undefined,
        source_filename: recordedFileName(req.file),
        source_name: req.sourceName,
      };
    })());

  let skip = 0;
  let target: Target;
  if (req.dryRun) {
    target = dryRunTarget(api, sent, options, outcome);
    progress.update({ dryRun: true });
  } else if (resumed) {
    skip = resumed.skip;
    note(`resuming import ${req.resume}: skipping the ${skip} rows it already has`);
    target = streamTarget(api, sent, options, outcome, progress, clientOptions, req.resume);
  } else target = streamTarget(api, sent, options, outcome, progress, clientOptions);
  if (!req.dryRun) api.expectImport();

  const errors = new ErrorsFile(req.errorsOut, header, note);
  const reject = async (line: number, values: string[], reason: string) => {
    outcome.rejectedCount++;
    if (outcome.rejected.length < 1000) outcome.rejected.push({ line, reason });
    await errors.write(values, line, reason);
    progress.update({ rejected: outcome.rejectedCount });
  };

  const duplicate = async (line: number, values: string[], reason: string) => {
    outcome.duplicateCount++;
    if (outcome.duplicates.length < 1000) outcome.duplicates.push({ line, reason });
    await errors.write(values, line, reason);
  };
  /** Why a row was dropped as a duplicate: the line of the row imported, when it was in the same batch. */
  const duplicateReason = (batch: Batch, of: number | null) =>
    of === null
      ? 'duplicate of an earlier row, the one imported for this address'
      : `duplicate of line ${batch.sent[of].line}, the row imported for this address`;

  /**
   * Reports a batch's refused and duplicate rows in line order, the CLI's and the
   * service's together (--errors-out has them all, each with its reason).
   */
  const report = async (batch: Batch, answer: RowAnswer) => {
    const told = [
      ...batch.refused.map((r) => ({ line: r.record.line, values: r.record.values, reason: r.reason, dup: false })),
      ...answer.errors.map((e) => ({ line: batch.sent[e.index].line, values: batch.sent[e.index].values, reason: e.error, dup: false })),
      ...answer.duplicates.map((d) => ({
        line: batch.sent[d.index].line,
        values: batch.sent[d.index].values,
        reason: duplicateReason(batch, d.duplicate_of),
        dup: true,
      })),
    ].sort((a, b) => a.line - b.line);
    for (const r of told) await (r.dup ? duplicate : reject)(r.line, r.values, r.reason);
    outcome.rowsSent += batch.sent.length;
    outcome.lastLine = batch.lastLine;
    progress.update({ rowsSent: outcome.rowsSent });
  };

  let jobs: Target | undefined;
  /** Sends a batch; answers the rows the service refused or dropped. */
  const request = async (batch: Batch, prior: Promise<unknown>): Promise<RowAnswer> => {
    try {
      return await target.send(batch, prior);
    } catch (err) {
      // The spec's service has no streamed imports: fall back to its POST /members
      // (once, whichever batch in flight found out first).
      if (!(err instanceof NoStreamedImports)) throw err;
      if (!jobs) {
        note(`the service has no streamed imports: sending ${req.batchSize}-row batches with POST /members, one import record per batch`);
        target = jobs = jobsTarget(api, columns, options, outcome, progress, req.wait);
      }
      return jobs.send(batch);
    }
  };

  // Reading runs ahead of sending: the next batch is parsed while the ones before it
  // are applied, and two batches are in flight, so the service has the next one as
  // soon as it is done with one. Each carries its offset: the service takes them in
  // that order, and none after one before it failed. Answers are reported in batch
  // order. A failed send is held until the loop looks at it, so it is never an
  // unhandled rejection while the next batch is read.
  const depth = 2;
  const inFlight: Promise<void>[] = [];
  let reported: Promise<void> = Promise.resolve();
  let sendFailure: { error: unknown } | undefined;
  /** Waits until at most `keep` batches are in flight; throws the first failed send. */
  const settle = async (keep: number) => {
    const failed = () => {
      if (sendFailure) throw sendFailure.error;
    };
    failed();
    while (inFlight.length > keep) {
      await inFlight.shift();
      failed();
    }
  };
  // Whether Ctrl-C left rows of the file unsent (a stop after the last batch went changes nothing).
  let stoppedEarly = false;
  let batch = newBatch();
  /** Rows of the file the import has before the next batch (num_members, when it is streamed). */
  let offset = skip;
  const flush = async () => {
    const sending = batch;
    batch = newBatch();
    await settle(depth - 1);
    // Ctrl-C while this batch waited for the ones before: it is not sent either.
    if (stopSignal.stopped) {
      stoppedEarly = true;
      return;
    }
    sending.offset = offset;
    offset += sending.size;
    const answer = request(sending, reported);
    answer.catch(() => {});
    const done = reported.then(() => answer).then((rows) => report(sending, rows));
    reported = done.catch(() => {});
    inFlight.push(
      done.catch((error: unknown) => {
        sendFailure ??= { error };
      }),
    );
  };
  const readProgress = () => progress.update({ rowsRead: outcome.rowsRead, bytesRead: source.bytesRead(), totalBytes: source.totalBytes });
  let failure: Error | undefined;
  try {
    let dataRows = 0;
    reading: for await (const run of source.runs) {
      for (const record of run) {
        if (stopSignal.stopped) {
          stoppedEarly = true;
          break reading;
        }
        if (dataRows++ < skip) {
          outcome.lastLine = record.line;
          continue;
        }
        outcome.rowsRead++;
        if (ownErrors) record.values = record.values.slice(0, -ownErrors);
        if (record.problem) batch.refused.push({ record, reason: record.problem });
        else if (record.values.length !== header.length) {
          batch.refused.push({ record, reason: `has ${record.values.length} columns; the header has ${header.length}` });
        } else {
          batch.sent.push(record);
        }
        batch.lastLine = record.line;
        if (++batch.size >= req.batchSize) {
          readProgress();
          await flush();
        }
        if (sendFailure) break reading;
      }
      // Told once per run of parsed records and before each batch, not per row.
      readProgress();
    }
    // Ctrl-C: the rows read since the last full batch are not sent, so what was
    // written ends on a batch boundary (a resume reads them again).
    if (batch.size && stopSignal.stopped) stoppedEarly = true;
    else if (batch.size) await flush();
    await settle(0);
  } catch (err) {
    failure = err as Error;
    // The file broke (an unclosed quote, bad UTF-8): the rows read before the broken
    // one are complete, so they go in too, and the import holds every row before it
    // whatever the batch size (a resume starts at the broken row).
    if (failure instanceof CsvError && !sendFailure && batch.size && !stopSignal.stopped)
      try {
        await flush();
        await settle(0);
      } catch (sendError) {
        failure = sendError as Error;
      }
    // After a failed batch the ones in flight cannot be applied (they follow rows the
    // import does not have), and one may wait at the service for the failed one
    // until the import is ended below. After any other failure they are awaited
    // first, so the import is not ended under a batch still being written.
    if (!sendFailure) await Promise.all(inFlight);
  }
  outcome.interrupted = stoppedEarly && !failure;
  await errors.close(!!failure || outcome.interrupted);
  const stoppedAt = `after line ${outcome.lastLine}`;
  const error = failure
    ? `${failure.message} (stopped ${stoppedAt})`
    : outcome.interrupted
      ? `interrupted ${stoppedAt}; resume with --resume`
      : undefined;
  try {
    await target.finish(error);
  } catch (err) {
    // The import stays in progress (p) and can be resumed; the first failure is the one to tell.
    if (!failure) throw err;
  }
  await Promise.all(inFlight);
  if (failure) throw Object.assign(failure, { outcome });
  return outcome;
}

class NoStreamedImports extends Error {}

/** A 404 or 405 that says the route does not exist (not that a group or the account was not found). */
function isMissingRoute(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 405 || (err.status === 404 && !/^(group|account) \d+ not found/.test(err.message)));
}
