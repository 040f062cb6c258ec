/**
 * Continuing a streamed import (`amsg members import FILE --resume ID`): the import
 * was opened with options, some kept by the service (groups, add-only, source name,
 * file name) and some the CLI's own (--map, --ignore, --delimiter), which it
 * recorded on the import as client_options. A resume goes on with those: each may be
 * left out (the first run's is used) or given again, and one given with another value
 * is refused, by name, before any row is sent, since the rows already written were
 * read with the first run's.
 */
import type { Api } from '../client/api.js';
import { NotFoundError, UsageError } from './context.js';
import { CsvError } from './csv-source.js';

/** The options of `amsg members import` the service does not know, as recorded on the import. */
export interface ClientOptions {
  map: Record<string, string>;
  ignore: string[];
  /** As given (undefined: detected from the header). */
  delimiter?: string;
}

/** What a resume is given, as the command was typed this time. */
export interface ResumeRequest {
  file: string;
  map: Record<string, string>;
  ignore?: string[];
  delimiter?: string;
  addOnly: boolean;
  sourceName?: string;
  /** The --group flags given this time, as typed (none: the import's own). */
  groupNames?: string[];
  /** Their ids (of the groups that exist: a resume creates none). */
  groups: () => Promise<number[]>;
}

interface ResumableImport {
  mode: string;
  status: string;
  num_members: number;
  source_filename: string | null;
  source_name: string | null;
  add_only: boolean;
  group_ids: number[];
  client_options?: Partial<ClientOptions>;
}

/** The name a file is recorded under (source_filename). */
export const recordedFileName = (file: string) => (file === '-' ? 'stdin' : file.split(/[\\/]/).pop());

const sortedPairs = (map: Record<string, string>) =>
  Object.entries(map)
    .map(([c, f]) => `${c.toLowerCase()}=${f}`)
    .sort();
const sortedNames = (names: string[]) => [...new Set(names.map((n) => n.toLowerCase()))].sort();
const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const shown = (list: string[]) => (list.length ? list.join(', ') : 'none');
const delimiterName = (d: string | undefined) => (d === undefined ? 'detected' : d === '\t' ? 'tab' : `"${d}"`);

/**
 * Reads the import to continue, checks it can take rows, and answers how many rows
 * of the file it has and the options to go on with (the first run's, where this
 * run leaves one out). Refuses options that differ from the first run's, naming each.
 */
export async function prepareResume(
  api: Api,
  importId: number,
  req: ResumeRequest,
): Promise<{ skip: number; map: Record<string, string>; ignore: string[]; delimiter?: string }> {
  const current = await api.get<ResumableImport>(`/members/imports/${importId}`);
  if (current.mode !== 'stream') throw new CsvError(`import ${importId} was not made by amsg members import; it cannot be resumed`);
  if (current.status === 'o') throw new CsvError(`import ${importId} is already finished`);
  const recorded: Partial<ClientOptions> = current.client_options ?? {};
  const differ: string[] = [];
  const file = recordedFileName(req.file);
  if (current.source_filename && file !== current.source_filename)
    differ.push(`the file: import ${importId} is of ${current.source_filename}, this is ${file}`);
  if (Object.keys(req.map).length && recorded.map && !same(sortedPairs(req.map), sortedPairs(recorded.map)))
    differ.push(`--map: first run ${shown(sortedPairs(recorded.map))}, now ${shown(sortedPairs(req.map))}`);
  if (req.ignore?.length && recorded.ignore && !same(sortedNames(req.ignore), sortedNames(recorded.ignore)))
    differ.push(`--ignore: first run ${shown(sortedNames(recorded.ignore))}, now ${shown(sortedNames(req.ignore))}`);
  if (req.delimiter !== undefined && current.client_options && req.delimiter !== recorded.delimiter)
    differ.push(`--delimiter: first run ${delimiterName(recorded.delimiter)}, now ${delimiterName(req.delimiter)}`);
  if (req.addOnly && !current.add_only) differ.push('--add-only: the first run added and updated members');
  if (req.sourceName !== undefined && req.sourceName !== (current.source_name ?? undefined))
    differ.push(`--source-name: first run ${current.source_name === null ? 'none' : `"${current.source_name}"`}, now "${req.sourceName}"`);
  if (req.groupNames?.length) {
    const ids = (list: number[]) => [...new Set(list)].sort((a, b) => a - b).map(String);
    // A name that matches no group cannot be one of the import's.
    const given = await req.groups().catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    if (!given || !same(ids(given), ids(current.group_ids)))
      differ.push(
        `--group: first run group ids ${shown(ids(current.group_ids))}, now ${req.groupNames.join(', ')}${given ? ` (ids ${shown(ids(given))})` : ' (no such group)'}`,
      );
  }
  if (differ.length)
    throw new UsageError(
      `--resume ${importId} goes on with the options the import was started with (leave them out, or give the same); these differ:\n  - ${differ.join('\n  - ')}`,
    );
  return {
    skip: current.num_members,
    map: Object.keys(req.map).length ? req.map : (recorded.map ?? {}),
    ignore: req.ignore?.length ? req.ignore : (recorded.ignore ?? []),
    delimiter: req.delimiter ?? recorded.delimiter,
  };
}
