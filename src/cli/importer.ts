/**
 * `amsg members import`: streams a CSV into one import record. Columns are mapped to
 * fields before anything is written; rows go in batches, each applied by the
 * service in one transaction; rejected rows are reported with their line numbers
 * (and written to --errors-out). Field values are checked by the service itself (a
 * dry run asks it without writing), so the CLI repeats no field rule.
 */
import { createWriteStream, renameSync, type WriteStream } from 'node:fs';
import { ApiError } from '../api/errors.js';
import type { Api } from '../client/api.js';
import { CsvError, openCsv, type CsvRecord, type CsvSource } from './csv-source.js';
import type { ImportProgress } from './import-progress.js';

export interface ImportRequest {
  file: string;
  groupIds: number[];
  addOnly: boolean;
  /** column → field (or email, phone_number, groups) */
  map: Record<string, string>;
  sourceName?: string;
  delimiter?: string;
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
  /** The import record as the service has it at the end (absent for a dry run). */
  imports: Record<string, unknown>[];
  /** What a dry run would do. */
  dryRun?: { received: number; added: number; updated: number; duplicates: number; skipped: number };
  rowsRead: number;
  rowsSent: number;
  rejected: Rejected[];
  rejectedCount: number;
  interrupted: boolean;
  /** The last line of the file that was read. */
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

interface Column {
  index: number;
  name: string;
  /** 'email', 'phone_number', 'groups', or a field's shortcut name */
  target: string;
}

/** Maps the header to targets, or throws one error naming every problem. */
export function mapColumns(header: string[], fieldNames: string[], map: Record<string, string>): Column[] {
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
    if (!seen.has(c)) problems.push(`--map names column "${c}", which is not in the header (${header.join(', ')})`);
  const columns: Column[] = [];
  const unknown: string[] = [];
  header.forEach((name, index) => {
    if (!name) return;
    const wanted = explicit.get(name.toLowerCase()) ?? name;
    const special = SPECIAL[wanted.toLowerCase()];
    const field = fields.get(wanted.toLowerCase());
    if (special) columns.push({ index, name, target: special });
    else if (field) columns.push({ index, name, target: field });
    else if (explicit.has(name.toLowerCase())) problems.push(`--map ${name}=${wanted}: there is no field "${wanted}"`);
    else unknown.push(name);
  });
  if (unknown.length)
    problems.push(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}: ` +
        'map each to a field with --map column=field, or create the field (amsg fields create NAME --type text)',
    );
  const emails = columns.filter((c) => c.target === 'email');
  if (!emails.length && !problems.length)
    problems.push(`no email column in the header (${header.join(', ')}); name one with --map column=email`);
  if (emails.length > 1) problems.push(`more than one column maps to email: ${emails.map((c) => c.name).join(', ')}`);
  if (problems.length) throw new CsvError(`the header cannot be imported:\n  - ${problems.join('\n  - ')}`);
  return columns;
}

/** A record to the member object the service takes; empty cells leave values as they are. */
function toMember(columns: Column[], values: string[]): Record<string, unknown> {
  const member: Record<string, unknown> = {};
  for (const c of columns) {
    const v = values[c.index]?.trim();
    if (!v) continue;
    if (c.target === 'phone_number') member.sms = { phone_number: v };
    else if (c.target === 'groups') member.groups = v.split(/\s*[;|]\s*/).filter(Boolean);
    else member[c.target] = v;
  }
  return member;
}

class ErrorsFile {
  private out?: WriteStream;
  private stringify?: (rows: string[][]) => string;
  constructor(
    private readonly path: string | undefined,
    private readonly header: string[],
  ) {}

  async write(values: string[], reason: string) {
    if (!this.path) return;
    if (!this.out) {
      const { stringify } = await import('csv-stringify/sync');
      this.stringify = (rows) => stringify(rows);
      this.out = createWriteStream(`${this.path}.partial`);
      this.out.write(this.stringify([[...this.header, 'error']]));
    }
    this.out.write(this.stringify!([[...values, reason]]));
  }

  /** Moves the file into place (an empty errors file is still written when asked for). */
  async close() {
    if (!this.path) return;
    if (!this.out) await this.write([], '').then(() => undefined);
    await new Promise<void>((resolve) => this.out!.end(resolve));
    renameSync(`${this.path}.partial`, this.path);
  }
}

interface Batch {
  members: Record<string, unknown>[];
  records: CsvRecord[];
}

/**
 * Runs an import. `progress` is told as rows are read and sent; `stopSignal` ends
 * the import cleanly after the batch in flight (Ctrl-C).
 */
export async function runImport(
  api: Api,
  req: ImportRequest,
  progress: ImportProgress,
  note: (message: string) => void,
  stopSignal: { stopped: boolean; onStop?: () => void },
): Promise<ImportOutcome> {
  const source: CsvSource = await openCsv(req.file, { delimiter: req.delimiter });
  const fieldNames = (await api.get<{ shortcut_name: string }[]>('/fields')).map((f) => f.shortcut_name);
  const columns = mapColumns(source.header, fieldNames, req.map);
  stopSignal.onStop = () => source.stop();
  const errors = new ErrorsFile(req.errorsOut, source.header);
  const outcome: ImportOutcome = {
    imports: [],
    rowsRead: 0,
    rowsSent: 0,
    rejected: [],
    rejectedCount: 0,
    interrupted: false,
    lastLine: 1,
  };
  const reject = async (record: CsvRecord, reason: string) => {
    outcome.rejectedCount++;
    if (outcome.rejected.length < 1000) outcome.rejected.push({ line: record.line, reason });
    await errors.write(record.values, reason);
    progress.update({ rejected: outcome.rejectedCount });
  };
  const options = {
    group_ids: req.groupIds.length ? req.groupIds : undefined,
    add_only: req.addOnly || undefined,
    source_filename: req.file === '-' ? 'stdin' : req.file.split(/[\\/]/).pop(),
    source_name: req.sourceName,
  };

  // How the rows go: a dry run asks without writing; a streamed import (amsg serve
  // and local mode) keeps one record; a service without that extension gets the
  // spec's POST /members, one import record per batch.
  let send: (batch: Batch) => Promise<void>;
  let finish: (error?: string) => Promise<void>;
  let skip = 0;
  const dry = { received: 0, added: 0, updated: 0, duplicates: 0, skipped: 0 };
  const rowErrors = async (batch: Batch, list: { index: number; error: string }[]) => {
    for (const e of list) await reject(batch.records[e.index], e.error);
  };

  if (req.dryRun) {
    send = async (batch) => {
      const r = await api.post<typeof dry & { errors: { index: number; error: string }[] }>('/members/imports/validate', {
        members: batch.members,
        ...options,
      });
      for (const k of Object.keys(dry) as (keyof typeof dry)[]) dry[k] += r[k];
      await rowErrors(batch, r.errors);
    };
    finish = async () => {
      outcome.dryRun = dry;
    };
  } else {
    let importId: number | undefined = req.resume;
    let streamed = true;
    if (req.resume !== undefined) {
      const current = await api.get<{ mode: string; status: string; num_members: number }>(`/members/imports/${req.resume}`);
      if (current.mode !== 'stream') throw new CsvError(`import ${req.resume} was not made by amsg members import; it cannot be resumed`);
      if (current.status === 'o') throw new CsvError(`import ${req.resume} is already finished`);
      skip = current.num_members;
      note(`resuming import ${req.resume}: skipping the ${skip} rows it already has`);
    } else {
      try {
        importId = (await api.post<{ import_id: number }>('/members/imports', options)).import_id;
      } catch (err) {
        if (!(err instanceof ApiError && (err.status === 404 || err.status === 405))) throw err;
        streamed = false;
        note(
          `the service has no streamed imports: sending ${req.batchSize}-row batches with POST /members, one import record per batch`,
        );
      }
    }
    progress.update({ importId });
    if (streamed) {
      send = async (batch) => {
        const r = await api.post<{ errors: { index: number; error: string }[] }>(`/members/imports/${importId}/rows`, {
          members: batch.members,
        });
        await rowErrors(batch, r.errors);
      };
      finish = async (error) => {
        outcome.imports = [await api.post(`/members/imports/${importId}/finish`, error ? { error } : {})];
      };
    } else {
      const jobs: number[] = [];
      send = async (batch) => {
        const r = await api.post<{ import_id: number }>('/members', { members: batch.members, ...options });
        jobs.push(r.import_id);
        progress.update({ importId: r.import_id });
      };
      finish = async () => {
        for (const id of jobs) {
          let record = await api.get<Record<string, unknown>>(`/members/imports/${id}`);
          while (req.wait && (record.status === 'q' || record.status === 'p')) {
            progress.update({ serverStatus: String(record.status) });
            await new Promise((r) => setTimeout(r, 500));
            record = await api.get<Record<string, unknown>>(`/members/imports/${id}`);
          }
          outcome.imports.push(record);
        }
      };
    }
  }

  // Reading runs one batch ahead of sending: the next batch is parsed while the
  // previous one is applied.
  let inFlight: Promise<void> = Promise.resolve();
  let batch: Batch = { members: [], records: [] };
  const flush = async () => {
    const sending = batch;
    batch = { members: [], records: [] };
    await inFlight;
    inFlight = send(sending).then(() => {
      outcome.rowsSent += sending.members.length;
      progress.update({ rowsSent: outcome.rowsSent });
    });
  };
  let failure: Error | undefined;
  try {
    let dataRows = 0;
    for await (const record of source.records) {
      if (stopSignal.stopped) break;
      outcome.lastLine = record.line;
      if (dataRows++ < skip) continue;
      outcome.rowsRead++;
      progress.update({ rowsRead: outcome.rowsRead, bytesRead: source.bytesRead(), totalBytes: source.totalBytes });
      if (record.values.length !== source.header.length) {
        await reject(record, `has ${record.values.length} columns; the header has ${source.header.length}`);
        continue;
      }
      batch.members.push(toMember(columns, record.values));
      batch.records.push(record);
      if (batch.members.length >= req.batchSize) await flush();
    }
    if (batch.members.length) await flush();
    await inFlight;
  } catch (err) {
    failure = err as Error;
    await inFlight.catch(() => undefined);
  }
  outcome.interrupted = stopSignal.stopped;
  await errors.close();
  if (failure && !(failure instanceof CsvError)) throw failure;
  const stoppedAt = `after line ${outcome.lastLine}`;
  await finish(
    failure
      ? `${failure.message} (stopped ${stoppedAt})`
      : outcome.interrupted
        ? `interrupted ${stoppedAt}; resume with --resume`
        : undefined,
  );
  if (failure) throw Object.assign(failure, { outcome });
  return outcome;
}
