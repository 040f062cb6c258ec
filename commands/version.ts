import { Command } from 'commander';
import { action, examples } from '../src/cli/context.js';

export function register(version: Command) {
  examples(
    version.action(
      action(async (ctx) => {
        // Loaded here: reading package.json at start would cost every other command.
        const { VERSION } = await import('../src/version.js');
        // The bare version, as --version prints it; --json gives {version} to a script.
        if (ctx.opts.json) await ctx.print({ version: VERSION });
        else ctx.stdout.write(`${VERSION}\n`);
      }),
    ),
    ['amsg version', 'amsg version --json'],
  );
}
