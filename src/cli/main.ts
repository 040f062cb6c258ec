import { Command, CommanderError, Option } from 'commander';
import { EXIT, examples, failureText, RELEASE, wantsJsonErrors } from './context.js';
import { STDERR, STDOUT } from './stdio.js';

import * as init from '../../commands/init.js';
import * as members from '../../commands/members/index.js';
import * as groups from '../../commands/groups.js';
import * as subscriptions from '../../commands/subscriptions.js';
import * as searches from '../../commands/searches.js';
import * as fields from '../../commands/fields.js';
import * as webhooks from '../../commands/webhooks/index.js';
import * as mail from '../../commands/mail.js';
import * as keys from '../../commands/keys.js';
import * as users from '../../commands/users.js';
import * as accounts from '../../commands/accounts.js';
import * as serve from '../../commands/serve.js';
import * as consoleCommand from '../../commands/console.js';
import * as config from '../../commands/config.js';
import * as api from '../../commands/api.js';
import * as exportsCommand from '../../commands/exports.js';
import * as mailings from '../../commands/mailings/index.js';
import * as triggers from '../../commands/triggers.js';
import * as sim from '../../commands/sim.js';
import * as reports from '../../commands/reports.js';
import * as sms from '../../commands/sms/index.js';
import * as seed from '../../commands/seed.js';
import * as db from '../../commands/db.js';
import * as events from '../../commands/events.js';
import * as touchpoints from '../../commands/touchpoints.js';
import * as workflows from '../../commands/workflows.js';
import * as completion from '../../commands/completion.js';
import * as versionCommand from '../../commands/version.js';
// bin/amsg.js hands the bundle its import() (src/cli/ink.ts).
export { setEsmImport } from './ink.js';

/**
 * The top-level commands: name, one-line description, and the module that defines
 * its subcommands, flags and examples. The modules are bundled with this file (one
 * file to load instead of three), but only the command being run is registered:
 * defining every subcommand with its options and help is what costs at start.
 */
const COMMANDS: Record<string, [description: string, module: { register(cmd: Command): void }]> = {
  init: ['set up a local database: account 1, its owner and an API key pair', init],
  members: ['members: add, read, update, status changes, archive and purge', members],
  groups: ['groups of members, with their counts', groups],
  subscriptions: ['subscriptions (topics members subscribe to)', subscriptions],
  searches: ['saved searches and segments: criteria, counts, members', searches],
  exports: ['audience and individual member exports', exportsCommand],
  mailings: ['mailings: create, send, wait, pause, cancel, resend, forward, split-test winners, messages', mailings],
  triggers: ['triggers: automated sends of a parent mailing (deprecated in the service)', triggers],
  reports: ['response reports: how mailings did (sends, opens, clicks, bounces, opt-outs, links), live with --watch', reports],
  sim: ['simulate engagement with sent messages: opens, clicks, bounces, shares, opt-outs, forwards; SMS clicks and replies', sim],
  sms: ['SMS campaigns, credit usage, settings, segment counts', sms],
  events: ['member events, their types, and event ingestion (amsg events ingest FILE)', events],
  touchpoints: ['touchpoints and their types', touchpoints],
  workflows: ['workflows that ingested events run', workflows],
  fields: ['custom member fields', fields],
  webhooks: ['webhooks: register, deliveries and replays, sample events, listen for events locally', webhooks],
  mail: ['real mail out over SMTP: the log of what went (amsg mail log)', mail],
  keys: ['API key pairs', keys],
  users: ['users of the account, with roles and permissions', users],
  seed: ['seed the account from fixture files (JSON or YAML): names resolved, idempotent, ids printed', seed],
  db: ['snapshots of the local database: snapshot, restore', db],
  accounts: ['sub-accounts of an HQ account: list, create, get, retire', accounts],
  serve: ['serve the local database over HTTP (HTTP Basic auth with an API key pair)', serve],
  console: ['the web console over the local database: a one-time sign-in link on stderr (--open opens it)', consoleCommand],
  config: ['configuration profiles', config],
  api: ['the raw service interface: OpenAPI document, single requests', api],
  completion: ['print a shell completion script: amsg completion bash|zsh|fish', completion],
  version: ['print the version and its release date (--version prints the version alone)', versionCommand],
};

/** Global options that take a value, so the command name can be found after them. */
const VALUE_OPTIONS = new Set(['--db', '--base-url', '--api-key', '--account', '--profile', '-o', '--output']);

/** The top-level command named in argv (after `help`, the one help is asked for). */
export function commandName(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a === 'help' ? commandName(args.slice(i + 1)) : a;
  }
  return undefined;
}

/** --json and --output as typed, before commander parses them: usage errors need to know how to be written. */
function outputFlags(args: string[]): { json?: boolean; output?: string } {
  const out: { json?: boolean; output?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if (a === '--json') out.json = true;
    else if (a === '-o' || a === '--output') out.output = args[++i];
    else if (a.startsWith('--output=')) out.output = a.slice('--output='.length);
  }
  return out;
}

/** Every command registered, with all its subcommands and flags: what `amsg completion` describes. */
export function fullProgram(version: string): Command {
  return buildProgram(version, [], process.env, true);
}

export function buildProgram(version: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env, everyCommand = false): Command {
  const program = new Command('amsg')
    .description('Administer the audience-messaging service: remotely over HTTP, or locally over a SQLite file.')
    .version(version)
    .option('--local', 'use the local SQLite database even if a base URL is configured (AMSG_LOCAL=1)')
    .option('--db <file>', 'local database file (AMSG_DB; default ./amsg.db); implies --local')
    .option('--base-url <url>', 'remote service base URL (AMSG_BASE_URL)')
    .option('--api-key <public:private>', 'API key pair for the remote service (AMSG_API_KEY)')
    .option('--account <id>', 'account id to act on (AMSG_ACCOUNT; default 1)')
    .option('--profile <name>', 'configuration profile (AMSG_PROFILE)')
    .addOption(new Option('-o, --output <format>', 'output format (AMSG_OUTPUT)').choices(['table', 'json', 'ndjson', 'csv']))
    .option('--json', 'shorthand for --output json')
    .option('--columns <a,b,c>', 'the columns a table or CSV shows, by their JSON names')
    .option('-y, --yes', 'confirm destructive operations without asking (AMSG_YES=1)')
    .option('--no-input', 'never prompt, even on a terminal (AMSG_NO_INPUT=1; also when CI=true)')
    .option('-q, --quiet', 'no notes on stderr (AMSG_QUIET=1)')
    .option('--no-color', 'no colour in output');
  // Help and usage errors go out as every other output does (src/cli/stdio.ts).
  program.configureOutput({ writeOut: (text) => void STDOUT.write(text), writeErr: (text) => void STDERR.write(text) });
  // Usage errors (unknown flags, bad values) are one JSON object on stderr for scripts, as every other error is.
  if (wantsJsonErrors(outputFlags(args), env, STDOUT.isTTY))
    program.configureOutput({
      outputError: (text, write) =>
        write(failureText({ message: text, error: text.replace(/^error: /, '').trim(), code: EXIT.usage }, true)),
    });
  else program.showHelpAfterError('(add --help for usage and examples)');
  program.addHelpText(
    'after',
    `
Modes: local (default) runs the service in-process over ./amsg.db; remote when a
base URL is given by --base-url, AMSG_BASE_URL or the profile.

Exit codes: 0 ok, 1 the service refused, 2 bad usage, 3 cannot reach the service,
4 finished with row-level errors, 5 stopped by the service's rate limit (the
message says how to continue: --resume, --start).`,
  );
  examples(program, [
    'amsg init',
    'amsg members add ada@example.com --field first_name=Ada --group Newsletter',
    'amsg members list --output table',
    'AMSG_BASE_URL=http://127.0.0.1:8080 AMSG_API_KEY=pub:priv amsg members list --json',
  ]);
  const wanted = commandName(args);
  for (const [name, [description, module]] of Object.entries(COMMANDS)) {
    const cmd = program.command(name).description(description);
    // The other commands stay bare: enough for the top-level help and for
    // commander to tell a known command from a typo.
    if (name === wanted || everyCommand) module.register(cmd);
  }
  // What the completion scripts call for the names of groups, mailings, fields … at a Tab:
  // hidden, and silent (nothing and exit 0 on any failure).
  program
    .command('__complete <kind>', { hidden: true })
    .description('names for shell completion')
    .action(async (kind: string) => {
      const { completeNames } = await import('./complete-run.js');
      await completeNames(program.opts(), kind);
    });
  // Every command reports usage errors with exit code 2 instead of exiting itself.
  const override = (cmd: Command) => {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  };
  override(program);
  return program;
}

/**
 * Whether the command path typed names a command that does not exist (`amsg
 * nosuchcommand`, `amsg members nosuch`). With --help, commander would show the help
 * of the last command it knows and exit 0, as if the typo were fine.
 */
export function namesUnknownCommand(program: Command, args: string[]): boolean {
  let cmd = program;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return false;
    if (VALUE_OPTIONS.has(a)) i++;
    if (a.startsWith('-')) continue;
    // A leaf command's words are its arguments; `help` is commander's own.
    if (!cmd.commands.length || (cmd === program && a === 'help')) return false;
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) return true;
    cmd = sub;
  }
  return false;
}

export async function main(argv: string[], version: string, releaseDate?: string): Promise<void> {
  RELEASE.date = releaseDate;
  const program = buildProgram(version, argv.slice(2));
  // `--help` after an unknown command: the unknown command is the answer (exit 2), not some help.
  const end = argv.indexOf('--');
  const options = end < 0 ? argv : argv.slice(0, end);
  if ((options.includes('--help') || options.includes('-h')) && namesUnknownCommand(program, argv.slice(2)))
    argv = argv.filter((a, i) => (end >= 0 && i >= end) || (a !== '--help' && a !== '-h'));
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version "fail" with exit code 0 by design.
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    throw err;
  }
}
