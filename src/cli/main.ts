import { Command, CommanderError, Option } from 'commander';
import { EXIT } from './context.js';
import { register as registerMembers } from '../../commands/members.js';
import { register as registerGroups } from '../../commands/groups.js';
import { register as registerFields } from '../../commands/fields.js';
import { register as registerWebhooks } from '../../commands/webhooks.js';
import { register as registerInit } from '../../commands/init.js';
import { register as registerServe } from '../../commands/serve.js';
import { register as registerKeys } from '../../commands/keys.js';
import { register as registerConfig } from '../../commands/config.js';
import { register as registerApi } from '../../commands/api.js';

export function buildProgram(version: string): Command {
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
    .option('-y, --yes', 'confirm destructive operations without asking (AMSG_YES=1)')
    .option('-q, --quiet', 'no notes on stderr (AMSG_QUIET=1)')
    .option('--no-color', 'no colour in output')
    .showHelpAfterError('(add --help for usage and examples)')
    .enablePositionalOptions(false)
    .exitOverride();
  program.addHelpText(
    'after',
    `
Modes: local (default) runs the service in-process over ./amsg.db; remote when a
base URL is given by --base-url, AMSG_BASE_URL or the profile.

Exit codes: 0 ok, 1 the service refused, 2 bad usage, 3 cannot reach the service,
4 finished with row-level errors.

Examples:
  $ amsg init
  $ amsg members add ada@example.com --field first_name=Ada --group Newsletter
  $ amsg members list --output table
  $ AMSG_BASE_URL=http://127.0.0.1:8080 AMSG_API_KEY=pub:priv amsg members list --json
`,
  );
  for (const register of [
    registerInit,
    registerMembers,
    registerGroups,
    registerFields,
    registerWebhooks,
    registerKeys,
    registerServe,
    registerConfig,
    registerApi,
  ])
    register(program);
  // Every subcommand reports usage errors with exit code 2 instead of exiting itself.
  const override = (cmd: Command) => {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  };
  override(program);
  return program;
}

export async function main(argv: string[], version: string): Promise<void> {
  const program = buildProgram(version);
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
