import type { Command } from 'commander';
import { action, examples } from '../src/cli/context.js';

export function register(version: Command) {
  examples(
    version.action(
      action(async (ctx) => {
        // The program's own (bin/amsg.js read it once); importing src/version.js here split it
        // out of the engine into a file every local command loaded.
        const VERSION = version.parent!.version()!;
        // The bare version, as --version prints it; --json gives {version} to a script.
        if (ctx.opts.json) await ctx.print({ version: VERSION });
        else ctx.stdout.write(`${VERSION}\n`);
      }),
    ),
    ['amsg version', 'amsg version --json'],
  );
}
