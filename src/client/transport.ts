import type { WindowCut } from '../errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | undefined;

export interface ApiCall {
  method: Method;
  /** Absolute service path, percent-encoded (e.g. `/1/members/email/a%2Bb%40x.org`). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

/** A non-JSON answer (an export's CSV or zip), read as it arrives. */
export interface Download {
  contentType: string;
  /** The file name the service suggests (Content-Disposition). */
  filename?: string;
  body: AsyncIterable<Buffer>;
}

/** How the Api reaches the service: in-process over SQLite, or HTTP. Both answer parsed JSON or throw ApiError. */
export interface Transport {
  request(call: ApiCall): Promise<unknown>;
  /** A GET whose answer is a file: streamed, not parsed. Errors are ApiError as for request. */
  download(call: ApiCall): Promise<Download>;
  /** Where calls go, for the "acting on …" line (a file path or a URL). */
  readonly target: string;
  /**
   * True when each call itself runs due jobs for a while (local mode): a command
   * waiting for a job then polls without pausing, since a pause is time no job runs.
   */
  readonly runsJobs: boolean;
  /**
   * Runs due background work (jobs, webhook posts) for up to budgetMs when this process
   * holds the database (local mode); a remote service does its own. For long-running
   * commands that make no calls for a while (`amsg webhooks listen`).
   */
  advance?(budgetMs: number): Promise<void>;
  /**
   * A streamed import is coming (`members import`, `seed`): in local mode the import
   * writer's thread starts now, while the command reads or makes its rows, so that
   * it has started when they come (starting it takes about as long as writing 2,000
   * rows). A remote service has its own; nothing to do.
   */
  expectImport?(): void;
  /**
   * Told when the service cut a list's window to the records it answers at a time
   * (WINDOW_CUT_HEADER): the command says so, since the records it shows are fewer
   * than it asked for.
   */
  onWindowCut?: (cut: WindowCut) => void;
  close(): Promise<void>;
}

/** The service could not be reached at all (exit code 3), as opposed to refusing (ApiError). */
export class ConnectionError extends Error {
  /**
   * @param hint how to fix it, when it is not the remote one (check the base URL and
   *   that the service runs): a missing local database says `amsg init` and `--db`.
   */
  constructor(
    message: string,
    cause?: unknown,
    readonly hint?: string,
  ) {
    super(message, { cause });
    this.name = 'ConnectionError';
  }
}

export function queryString(query: Record<string, QueryValue> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) out[k] = String(v);
  return out;
}
