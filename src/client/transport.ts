import type { WindowCut } from '../errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | undefined;

export interface ApiCall {
  method: Method;
  /** Absolute service path, percent-encoded (e.g. `/1/members/email/a%2Bb%40x.org`). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /**
   * The service knows this call again when it comes twice (a streamed-import batch
   * names its offset), so it may be sent again after a failure that leaves unknown
   * whether it arrived, as a GET may.
   */
  repeatable?: boolean;
}

/** Told when a call waits out the service's rate limit, with how long (whole seconds). */
export type WaitReporter = (seconds: number) => void;

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
  /**
   * Who is told of rate-limit waits (a note on stderr, the import's progress view);
   * answers the one told before, to put back. Local mode has no rate limit.
   */
  reportWaits?(reporter: WaitReporter | undefined): WaitReporter | undefined;
  close(): Promise<void>;
}

/**
 * The service's rate limit stopped a command: it asked for a longer wait than amsg
 * may wait (AMSG_MAX_WAIT), or kept refusing after the waits. Exit code 5; the
 * command adds how to go on from where it stopped (`--resume 12`, `--start 32000`).
 */
export class RateLimitedError extends Error {
  /** How to continue, as the command that stopped knows it: `continue with --resume 12`. */
  continueWith?: string;
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'RateLimitedError';
  }
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
