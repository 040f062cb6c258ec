import { Argument, type Command } from 'commander';
import { action, examples } from '../src/cli/context.js';

export function register(completion: Command) {
  examples(
    completion.addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish'])).action(
      action(async (ctx, shell: string) => {
        // Every command is registered here (a normal run registers only its own), so the script covers them all.
        const [{ fullProgram }, scripts] = await Promise.all([import('../src/cli/main.js'), import('../src/cli/completion.js')]);
        const program = fullProgram(completion.parent!.version()!);
        const script =
          shell === 'bash' ? scripts.bashScript(program) : shell === 'zsh' ? scripts.zshScript(program) : scripts.fishScript(program);
        ctx.stdout.write(script);
      }),
    ),
    [
      'source <(amsg completion bash)                 # in ~/.bashrc',
      'amsg completion zsh > "${fpath[1]}/_amsg"',
      'amsg completion fish > ~/.config/fish/completions/amsg.fish',
    ],
  );
}
