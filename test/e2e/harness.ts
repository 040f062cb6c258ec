import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// AMSG_TEST_BIN lets a parallel worker test its own private build (scripts/build.js --outdir).
export const BIN = process.env.AMSG_TEST_BIN ?? fileURLToPath(new URL('../../bin/amsg.js', import.meta.url));
/** Pinned "now" for every process, so both modes print the same timestamps. */
export const NOW = '2026-05-06T07:08:09Z';

export interface Run {
  args: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export type Mode = 'local' | 'remote';

/**
 * One amsg sandbox for the end-to-end suite: a fresh database, and for remote mode
 * an `amsg serve` child on an ephemeral 127.0.0.1 port. `amsg(...)` runs the real
 * CLI against it in a child process with no terminal attached.
 */
export class Sandbox {
  readonly dir = mkdtempSync(join(tmpdir(), 'amsg-e2e-'));
  readonly db = join(this.dir, 'amsg.db');
  env: Record<string, string> = {};
  private server?: ResultPromise;
  url?: string;

  /** @param serveArgs more arguments for the `amsg serve` of remote mode (`--rate-limit 50`). */
  constructor(
    readonly mode: Mode,
    readonly serveArgs: string[] = [],
  ) {}

  get baseEnv(): Record<string, string | undefined> {
    return {
      AMSG_NOW: NOW,
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      AMSG_BASE_URL: '',
      AMSG_API_KEY: '',
      AMSG_DB: '',
      AMSG_YES: '',
      AMSG_QUIET: '',
      AMSG_OUTPUT: '',
      AMSG_NO_INPUT: '',
      // Off a terminal (as every run here is) an error is JSON unless a format for people is
      // chosen; the suites assert the sentences people read, so they ask for those. The
      // JSON default is asserted by script-errors.test.ts (which clears this) and cli-errors.test.ts.
      AMSG_ERRORS: 'text',
      // A CI runner's CI=true turns prompts off (and Ink's live view, for any value):
      // left out, and set by the tests that mean it.
      CI: undefined,
      // Tables and prompts show local times: one zone, so both modes and every machine print the same.
      TZ: 'UTC',
    };
  }

  async start(): Promise<{ public_key: string; private_key: string }> {
    const init = await this.raw(['init', '--json'], { AMSG_DB: this.db });
    if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr}`);
    const creds = JSON.parse(init.stdout) as { public_key: string; private_key: string };
    if (this.mode === 'local') {
      this.env = { AMSG_DB: this.db };
    } else {
      this.server = execa('node', [BIN, 'serve', '--port', '0', '--db', this.db, ...this.serveArgs], {
        env: { ...process.env, ...this.baseEnv },
        reject: false,
      });
      this.url = await new Promise<string>((resolveUrl, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`serve did not print its URL: ${out}`)), 15_000);
        this.server!.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n')[0];
          if (out.includes('\n')) {
            clearTimeout(timer);
            resolveUrl(line.trim());
          }
        });
      });
      this.env = { AMSG_BASE_URL: this.url, AMSG_API_KEY: `${creds.public_key}:${creds.private_key}` };
    }
    return creds;
  }

  raw(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
    return execa('node', [BIN, ...args], {
      env: { ...process.env, ...this.baseEnv, ...env },
      reject: false,
      input,
      stdin: input === undefined ? 'ignore' : undefined,
    }).then((r) => ({ args, exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr }));
  }

  /** Runs amsg in this sandbox's mode. */
  amsg(...args: string[]): Promise<Run> {
    return this.raw(args, this.env);
  }

  /** Runs amsg and parses its JSON stdout, failing loudly on a non-zero exit. */
  async json<T = any>(...args: string[]): Promise<T> {
    const r = await this.amsg(...args);
    if (r.exitCode !== 0) throw new Error(`amsg ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  }

  async stop() {
    if (this.server) {
      this.server.kill('SIGTERM');
      await this.server;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The recording helpers of a two-mode suite: every run goes into `log` (exit code
 * and stdout; the sandbox's own directory written as DIR, since it differs between
 * the modes), so the local and remote transcripts can be compared at the end.
 */
export function recorder(box: Sandbox, log: Run[]) {
  const record = (r: Run) =>
    log.push({ ...r, args: r.args.map((a) => a.replaceAll(box.dir, 'DIR')), stdout: r.stdout.replaceAll(box.dir, 'DIR'), stderr: '' });
  const run = async (...args: string[]) => {
    const r = await box.amsg(...args);
    record(r);
    return r;
  };
  /** Runs amsg, expects exit 0, and answers the parsed JSON stdout. */
  const json = async (...args: string[]) => {
    const r = await run(...args);
    if (r.exitCode !== 0) throw new Error(`amsg ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  return { record, run, json };
}

/** What of a transcript must match between the modes: each run's arguments, exit code and stdout. */
export const transcriptView = (runs: Run[]) => runs.map((r) => ({ args: r.args.join(' '), exitCode: r.exitCode, stdout: r.stdout }));
