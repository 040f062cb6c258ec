import type { Command } from 'commander';
import { action, examples, RELEASE } from '../src/cli/context.js';

export function register(version: Command) {
  examples(
    version.action(
      action(async (ctx) => {
        // The program's own (bin/amsg.js read it once); importing src/version.js here split it
        // out of the engine into a file every local command loaded.
        const VERSION = version.parent!.version()!;
        const released = RELEASE.date ?? null;
        // The release, `amsg 0.2.0 (2026-11-28)`; --version prints the bare version for scripts,
        // and --json gives {version, released}.
        if (ctx.opts.json) await ctx.print({ version: VERSION, released });
        else ctx.stdout.write(`amsg ${VERSION}${released ? ` (${released})` : ''}\n`);
      }),
    ),
    ['amsg version', 'amsg version --json', 'amsg --version'],
  );
}
