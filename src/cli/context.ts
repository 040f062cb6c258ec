import type { Command } from 'commander';
import { ApiError } from '../errors.js';
import { connect, type Api } from '../client/api.js';
import { resolveSettings, SettingsError, isTrue, type ConnectionFlags, type Settings } from '../client/config.js';
import { ConnectionError, RateLimitedError } from '../client/transport.js';
import { FORMATS, listWriter, render, type Format, type ListWriter, type View } from './output.js';
import { STDERR, STDOUT, type StdStream } from './stdio.js';
// Commands load it anyway (name lookups); a dynamic import here split it into a file of its own.
import { explainRefusal } from './resolve.js';

/**
 * Exit codes, documented in docs/guide/output-and-exit-codes.md. 5: the service's rate limit stopped the
 * command (after the waits amsg may do); what was done stays done, and the message
 * says how to continue (`--resume ID`, `--start N`).
 */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, rowErrors: 4, rateLimited: 5, cancelled: 130 } as const;

/** Bad usage detected by amsg itself (exit 2). */
export class UsageError extends Error {
  /**
   * @param detail for scripts: a short reason for the JSON error's `error` (the
   *   message is for people, and may run to several lines) and what the JSON error
   *   carries under `details` (each problem of a fixture as an object).
   */
  constructor(
    message: string,
    readonly field?: string,
    readonly detail?: { error: string; details: Record<string, unknown> },
  ) {
    super(message);
  }
}

/**
 * A name that matches nothing (`groups get Glod`): the same "not found" as the
 * service's 404 for an unknown id, so the same exit code (1) either way.
 */
export class NotFoundError extends Error {
  readonly status = 404;
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** The user said no at a prompt, or pressed Ctrl-C there (exit 130). */
export class CancelledError extends Error {}

export interface GlobalOptions extends ConnectionFlags {
  json?: boolean;
  yes?: boolean;
  quiet?: boolean;
  color?: boolean;
  /** --columns a,b,c: the columns a table or CSV shows (wire names). */
  columns?: string;
  /** A command's own --dry-run (commander merges it into the globals). */
  dryRun?: boolean;
}

/**
 * What a command's action works with: resolved settings, the Api, output in the
 * chosen format, notes on stderr, and confirmation of destructive steps.
 */
export class RunContext {
  readonly opts: GlobalOptions;
  private apiPromise?: Promise<Api>;
  private settingsCache?: Settings;

  constructor(
    opts: GlobalOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
    readonly stdout: StdStream = STDOUT,
    readonly stderr: StdStream = STDERR,
  ) {
    this.opts = opts;
  }

  get settings(): Settings {
    return (this.settingsCache ??= resolveSettings(this.opts, this.env));
  }

  get quiet(): boolean {
    return !!this.opts.quiet || isTrue(this.env.AMSG_QUIET);
  }

  get format(): Format {
    if (this.opts.json) return 'json';
    const chosen = this.opts.output ?? this.env.AMSG_OUTPUT ?? this.settings.output;
    if (chosen) {
      if (!(FORMATS as readonly string[]).includes(chosen))
        throw new UsageError(`--output must be one of ${FORMATS.join(', ')}, got "${chosen}"`);
      return chosen as Format;
    }
    // Tables for people; when piped, the JSON the service answered, so `| jq` always works.
    return this.stdout.isTTY ? 'table' : 'json';
  }

  /**
   * The Api, connected on first use; says once on stderr where the command acts.
   * Remote calls need a well-formed key pair, checked before any request is sent
   * (`anonymous` for the few paths the service answers without one).
   */
  api({ anonymous = false }: { anonymous?: boolean } = {}): Promise<Api> {
    return (this.apiPromise ??= (async () => {
      const s = this.settings;
      if (s.mode === 'remote' && !anonymous) checkApiKey(s.apiKey);
      const api = await connect(s, { note: (m) => this.note(m) });
      api.transport.onWindowCut = ({ start, end, asked }) =>
        this.note(
          `the service answers at most ${end - start} records at a time: records ${start} to ${end} of the ${start} to ${asked} asked for; ask for the next window from start=${end} (a list command's --all pages through)`,
        );
      // Long commands wait out the remote service's rate limit; people are told why nothing moves.
      api.reportWaits((seconds) => this.note(`rate limited: waiting ${seconds} s`));
      this.note(
        s.mode === 'local' ? `acting on local database ${s.db} (account ${s.account})` : `acting on ${s.baseUrl} (account ${s.account})`,
      );
      return api;
    })());
  }

  /** True once the Api has been asked for (a failure may then look things up to explain itself). */
  get connected(): boolean {
    return this.apiPromise !== undefined;
  }

  /** A line for people on stderr (suppressed by --quiet). */
  note(message: string) {
    if (!this.quiet) this.stderr.write(`amsg: ${message}\n`);
  }

  /** Colour only where wanted: not with --no-color, NO_COLOR (any value) or AMSG_NO_COLOR=1. */
  get color(): boolean {
    return this.opts.color !== false && !this.env.NO_COLOR && !isTrue(this.env.AMSG_NO_COLOR);
  }

  /**
   * A table fits the terminal it is drawn on (see fitTable: cells cut, columns left
   * out with a note naming them); piped, it keeps every column and character.
   * --columns chooses the columns of a table or CSV; a name no row has is bad usage.
   */
  private fitted(view: View = {}): View {
    const chosen = this.chosenColumns;
    const unknownColumns = (unknown: string[], known: string[]): never => {
      throw new UsageError(
        `--columns: no column ${unknown.map((c) => `"${c}"`).join(', ')} here; the columns are ${known.join(', ')}`,
        'columns',
      );
    };
    const width = this.stdout.isTTY ? this.stdout.columns : undefined;
    if (!width) return { ...view, chosen, unknownColumns };
    const leftOut = (columns: string[]) =>
      this.note(
        `left out ${columns.length === 1 ? 'a column' : `${columns.length} columns`} to fit the terminal's ${width} characters: ${columns.join(', ')}; --output json (or csv) shows every column, --columns chooses them`,
      );
    return { ...view, chosen, unknownColumns, width, leftOut };
  }

  /** The columns --columns names; JSON and ndjson print the service's answer whole, and a note says so once. */
  private get chosenColumns(): string[] | undefined {
    const text = this.opts.columns;
    if (text === undefined) return undefined;
    const names = text
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    if (!names.length)
      throw new UsageError('--columns needs one or more column names, comma-separated (e.g. --columns member_id,email)', 'columns');
    if ((this.format === 'json' || this.format === 'ndjson') && !this.columnsNoted) {
      this.columnsNoted = true;
      this.note(`--columns shapes tables and CSV; ${this.format} prints every key the service answered`);
    }
    return names;
  }
  private columnsNoted = false;

  /** Prints an answer in the chosen format. */
  async print(value: unknown, view?: View) {
    this.stdout.write(await render(value, this.format, this.fitted(view)));
  }

  /** Writes to stdout, waiting while the reader is behind (so a streamed list holds one page at a time). */
  async write(text: string): Promise<void> {
    if (!text || this.stdout.write(text)) return;
    await new Promise<void>((resolve) => this.stdout.once('drain', resolve));
  }

  /** A list printed as its pages arrive, in the chosen format (see printList). */
  async listWriter(view: View = {}): Promise<ListWriter> {
    return listWriter(
      this.format,
      this.fitted(view),
      (t) => this.write(t),
      (m) => this.note(m),
    );
  }

  /**
   * Prints the answer of a write: the service's value for machines, a sentence for
   * people at a terminal table.
   */
  async done(value: unknown, sentence: string) {
    if (this.format === 'table') this.stdout.write(`${sentence}\n`);
    else await this.print(value);
  }

  /**
   * Why no prompt may be shown, or undefined when one may: prompts need a terminal
   * on both ends, and CI (CI=true), --no-input or AMSG_NO_INPUT=1 turn them off even
   * with one attached (a job's pseudo-terminal must not hang on a question).
   */
  get noPromptReason(): string | undefined {
    if ((this.opts as { input?: boolean }).input === false) return '--no-input: prompts are off';
    if (isTrue(this.env.AMSG_NO_INPUT)) return 'AMSG_NO_INPUT: prompts are off';
    if (isTrue(this.env.CI)) return 'CI is set: prompts are off';
    if (!process.stdin.isTTY || !this.stderr.isTTY) return 'no terminal to confirm on';
    return undefined;
  }

  /**
   * Confirms a destructive or status-changing step. `action` names what the user
   * typed and what it touches: `delete group "Trial" (7) and its 27,190 memberships`.
   * Asks on a terminal; otherwise only --yes (or AMSG_YES=1) lets it through, so a
   * script never deletes by accident. A "no" or Ctrl-C at the prompt is a cancel (exit 130).
   */
  async confirm(action: string): Promise<void> {
    if (this.opts.yes || isTrue(this.env.AMSG_YES)) return;
    const reason = this.noPromptReason;
    if (reason) throw new UsageError(`refusing to ${action} without --yes (${reason})`);
    const { createInterface } = await import('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: this.stderr.stream });
    const abort = new AbortController();
    // readline takes Ctrl-C on a terminal (no SIGINT reaches the process) and Ctrl-D closes it.
    rl.on('SIGINT', () => abort.abort());
    rl.on('close', () => abort.abort());
    try {
      const answer = await rl.question(`${action[0].toUpperCase()}${action.slice(1)}? [y/N] `, { signal: abort.signal });
      if (!/^y(es)?$/i.test(answer.trim())) throw new CancelledError('cancelled; nothing was changed');
    } catch (err) {
      if (abort.signal.aborted) {
        this.stderr.write('\n');
        throw new CancelledError('cancelled; nothing was changed');
      }
      throw err;
    } finally {
      rl.close();
    }
  }

  /**
   * The answer of --dry-run: what the command would change (a phrase that names
   * how many), and nothing changed. JSON `{dry_run: true, would, count}` for machines.
   */
  async wouldChange(would: string, count: number | null) {
    await this.done({ dry_run: true, would, count }, `Dry run, nothing changed: would ${would}.`);
  }

  /**
   * The one path of every destructive or bulk change: with --dry-run it says what
   * would change and how many, and calls nothing; otherwise it confirms (naming
   * what is affected), calls, and prints the answer. A command using it must offer
   * --dry-run (dryRunOption); test/e2e/cli-dry-run.test.ts checks every command that can confirm.
   */
  async change<T>(what: string, count: number | null, call: () => Promise<T>, sentence: string | ((answer: T) => string)): Promise<void> {
    if (this.opts.dryRun) return this.wouldChange(what, count);
    await this.confirm(what);
    const answer = await call();
    await this.done(answer, typeof sentence === 'function' ? sentence(answer) : sentence);
  }

  async close() {
    if (this.apiPromise) await (await this.apiPromise.catch(() => undefined))?.close();
  }
}

export interface Failure {
  /** The sentence for people (stderr text). */
  message: string;
  code: number;
  /** The bare reason, for the JSON error object. */
  error?: string;
  status?: number;
  field?: string;
  details?: Record<string, unknown>;
}

const detailText = (v: unknown) => (Array.isArray(v) ? v.join('; ') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** Maps an error to its message and exit code (never a stack trace unless AMSG_DEBUG is set). */
export function describeFailure(err: unknown, env: NodeJS.ProcessEnv = process.env): Failure {
  if (err instanceof ApiError) {
    const { error: _e, field, ...details } = err.body;
    // Details of the refusal (missing tags, the row that failed) as lines, not pasted JSON.
    const extra = Object.entries(details)
      .map(([k, v]) => `\n  ${k}: ${detailText(v)}`)
      .join('');
    return {
      message: `the service refused (HTTP ${err.status}): ${err.message}${extra}`,
      code: EXIT.refused,
      error: err.message,
      status: err.status,
      field: typeof field === 'string' ? field : undefined,
      details: Object.keys(details).length ? details : undefined,
    };
  }
  if (err instanceof ConnectionError)
    return {
      message:
        err.hint === undefined
          ? `${err.message}\n  check --base-url / AMSG_BASE_URL and that the service is running, or use --local`
          : `${err.message}${err.hint}`,
      error: err.message,
      code: EXIT.unreachable,
    };
  if (err instanceof RateLimitedError) {
    const details = {
      ...(err.retryAfterSeconds !== undefined ? { retry_after: err.retryAfterSeconds } : {}),
      ...(err.continueWith ? { continue_with: err.continueWith } : {}),
    };
    return {
      message: `stopped by the service's rate limit: ${err.message}; ${err.continueWith ?? 'what was done stays done: run the command again later'}`,
      error: err.message,
      status: 403,
      code: EXIT.rateLimited,
      details: Object.keys(details).length ? details : undefined,
    };
  }
  if (err instanceof NotFoundError) return { message: err.message, error: err.message, code: EXIT.refused, status: 404, field: err.field };
  if (err instanceof CancelledError) return { message: err.message, error: err.message, code: EXIT.cancelled };
  if (err instanceof UsageError)
    return {
      message: err.message,
      error: err.detail?.error ?? err.message,
      code: EXIT.usage,
      field: err.field,
      details: err.detail?.details,
    };
  if (err instanceof SettingsError) return { message: err.message, error: err.message, code: EXIT.usage };
  const e = err as Error;
  return {
    message: isTrue(env.AMSG_DEBUG) ? (e.stack ?? String(e)) : `unexpected error: ${e?.message ?? String(err)} (AMSG_DEBUG=1 shows more)`,
    error: e?.message ?? String(err),
    code: EXIT.refused,
  };
}

/**
 * Errors go out as the data does: with --json, or when stdout is not a terminal and
 * the data is JSON (json or ndjson chosen, or no format chosen: piped output is
 * JSON), the error is one JSON object on stderr, so a script parsing the data parses
 * the error too. A format for people (table, csv) gets a sentence, and so does piped
 * output when AMSG_ERRORS=text asks for sentences (a person reading a pipeline's errors).
 */
export function wantsJsonErrors(
  opts: { json?: boolean; output?: string },
  env: NodeJS.ProcessEnv,
  stdoutIsTTY: boolean | undefined,
): boolean {
  if (opts.json) return true;
  if (stdoutIsTTY) return false;
  const format = opts.output || env.AMSG_OUTPUT;
  if (format) return format === 'json' || format === 'ndjson';
  return env.AMSG_ERRORS?.trim().toLowerCase() !== 'text';
}

/** The error line: `{"error", "status", "field", "exit_code"}` (and the service's details, if any) or `amsg: sentence`. */
export function failureText(f: Failure, json: boolean): string {
  if (!json) return `amsg: ${f.message}\n`;
  return (
    JSON.stringify({
      error: f.error ?? f.message,
      status: f.status ?? null,
      field: f.field ?? null,
      exit_code: f.code,
      ...(f.details ? { details: f.details } : {}),
    }) + '\n'
  );
}

/** The key pair of remote mode: PUBLIC:PRIVATE. Never echoed back, since it is a secret. */
function checkApiKey(key: string | undefined) {
  if (!key)
    throw new UsageError(
      'remote mode needs an API key pair: pass --api-key PUBLIC:PRIVATE or set AMSG_API_KEY (or use --local)',
      'api_key',
    );
  const colon = key.indexOf(':');
  if (colon < 1 || colon === key.length - 1)
    throw new UsageError('--api-key / AMSG_API_KEY must be PUBLIC:PRIVATE, the two halves of a key pair joined by a colon', 'api_key');
}

type ActionFn<A extends unknown[]> = (ctx: RunContext, ...args: A) => Promise<void>;

/**
 * Wraps a command action: builds its RunContext from the global options, runs it,
 * and turns failures into a message on stderr and the documented exit code.
 */
export function action<A extends unknown[]>(fn: ActionFn<A>) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const ctx = new RunContext(cmd.optsWithGlobals() as GlobalOptions);
    try {
      await fn(ctx, ...(args.slice(0, -1) as A));
    } catch (caught) {
      let err = caught;
      if (err instanceof ApiError && ctx.connected) {
        err = await explainRefusal(await ctx.api(), err).catch(() => err);
      }
      const failure = describeFailure(err);
      let json = false;
      try {
        json = wantsJsonErrors({ json: ctx.opts.json, output: ctx.opts.output ?? ctx.settings.output }, ctx.env, ctx.stdout.isTTY);
      } catch {
        json = wantsJsonErrors(ctx.opts, ctx.env, ctx.stdout.isTTY);
      }
      ctx.stderr.write(failureText(failure, json));
      process.exitCode = failure.code;
    } finally {
      await ctx.close();
    }
  };
}

/** The --dry-run flag of a bulk or destructive command (answered with ctx.wouldChange). */
export function dryRunOption(cmd: Command): Command {
  return cmd.option('--dry-run', 'say what would change, and how many, and change nothing');
}

/** The release this program is (package.json's releaseDate, handed over by bin/amsg.js): what `amsg version` names. */
export const RELEASE: { date?: string } = {};

/** Each command's examples, as given to examples(), so the generated references can read them back. */
const EXAMPLES = new WeakMap<Command, string[]>();

/** Adds examples to a command's --help. */
export function examples(cmd: Command, lines: string[]): Command {
  EXAMPLES.set(cmd, [...(EXAMPLES.get(cmd) ?? []), ...lines]);
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** The examples of a command's --help, in order (scripts/docs.js writes them into docs/reference/cli.md and the man page). */
export function examplesOf(cmd: Command): readonly string[] {
  return EXAMPLES.get(cmd) ?? [];
}
