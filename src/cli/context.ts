import type { Command } from 'commander';
import { ApiError } from '../errors.js';
import { connect, type Api } from '../client/api.js';
import { resolveSettings, SettingsError, isTrue, type ConnectionFlags, type Settings } from '../client/config.js';
import { ConnectionError } from '../client/transport.js';
import { FORMATS, listWriter, render, type Format, type ListWriter, type View } from './output.js';

/** Exit codes, documented in the README. */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, rowErrors: 4 } as const;

/** Bad usage detected by amsg itself (exit 2). */
export class UsageError extends Error {}

export interface GlobalOptions extends ConnectionFlags {
  json?: boolean;
  yes?: boolean;
  quiet?: boolean;
  color?: boolean;
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
    readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
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

  /** The Api, connected on first use; says once on stderr where the command acts. */
  api(): Promise<Api> {
    return (this.apiPromise ??= (async () => {
      const s = this.settings;
      const api = await connect(s);
      this.note(
        s.mode === 'local' ? `acting on local database ${s.db} (account ${s.account})` : `acting on ${s.baseUrl} (account ${s.account})`,
      );
      return api;
    })());
  }

  /** A line for people on stderr (suppressed by --quiet). */
  note(message: string) {
    if (!this.quiet) this.stderr.write(`amsg: ${message}\n`);
  }

  /** Prints an answer in the chosen format. */
  async print(value: unknown, view?: View) {
    this.stdout.write(await render(value, this.format, view));
  }

  /** Writes to stdout, waiting while the reader is behind (so a streamed list holds one page at a time). */
  async write(text: string): Promise<void> {
    if (!text || this.stdout.write(text)) return;
    await new Promise<void>((resolve) => this.stdout.once('drain', resolve));
  }

  /** A list printed as its pages arrive, in the chosen format (see printList). */
  async listWriter(view: View = {}): Promise<ListWriter> {
    return listWriter(this.format, view, (t) => this.write(t), (m) => this.note(m));
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
   * Confirms a destructive step: asks on a terminal; off a terminal only --yes
   * (or AMSG_YES=1) lets it through, so a script never deletes by accident.
   */
  async confirm(action: string): Promise<void> {
    if (this.opts.yes || isTrue(this.env.AMSG_YES)) return;
    if (!process.stdin.isTTY || !this.stderr.isTTY)
      throw new UsageError(`refusing to ${action} without --yes (no terminal to confirm on)`);
    const { createInterface } = await import('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: this.stderr });
    try {
      const answer = await rl.question(`${action[0].toUpperCase()}${action.slice(1)}? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('cancelled; nothing was changed');
    } finally {
      rl.close();
    }
  }

  async close() {
    if (this.apiPromise) await (await this.apiPromise.catch(() => undefined))?.close();
  }
}

/** Maps an error to its message and exit code (never a stack trace unless AMSG_DEBUG is set). */
export function describeFailure(err: unknown, env: NodeJS.ProcessEnv = process.env): { message: string; code: number } {
  if (err instanceof ApiError) {
    const { error: _e, ...details } = err.body;
    const extra = Object.keys(details).filter((k) => k !== 'field').length ? ` ${JSON.stringify(details)}` : '';
    return { message: `the service refused (HTTP ${err.status}): ${err.message}${extra}`, code: EXIT.refused };
  }
  if (err instanceof ConnectionError)
    return {
      message: `${err.message}\n  check --base-url / AMSG_BASE_URL and that the service is running, or use --local`,
      code: EXIT.unreachable,
    };
  if (err instanceof UsageError || err instanceof SettingsError) return { message: err.message, code: EXIT.usage };
  const e = err as Error;
  return {
    message: isTrue(env.AMSG_DEBUG) ? (e.stack ?? String(e)) : `unexpected error: ${e?.message ?? String(err)} (AMSG_DEBUG=1 shows more)`,
    code: EXIT.refused,
  };
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
    } catch (err) {
      const { message, code } = describeFailure(err);
      process.stderr.write(`amsg: ${message}\n`);
      process.exitCode = code;
    } finally {
      await ctx.close();
    }
  };
}

/** Adds examples to a command's --help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
