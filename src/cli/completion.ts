/**
 * Shell completion scripts, generated from the program itself (every command
 * registered), so they cover every command, flag and enumerated value there is.
 */
import type { Command, Option } from 'commander';
import { FORMATS } from './output.js';

/** Values of flags that commander does not enumerate itself: member statuses. */
const STATUS_VALUES = ['a', 'e', 'o', 'f', 'active', 'error', 'optout'];
const FLAG_VALUES: Record<string, string[]> = {
  '--output': [...FORMATS],
  '-o': [...FORMATS],
  '--status': STATUS_VALUES,
  '--to': ['a', 'e', 'o', 'active', 'error', 'optout'],
  '--from': STATUS_VALUES,
};

interface Node {
  path: string;
  subcommands: { name: string; description: string }[];
  flags: { flag: string; description: string; takesValue: boolean }[];
  /** The values of this command's flags that enumerate them (`--type` of mailings message). */
  choices: Record<string, string[]>;
}

const flagsOf = (options: readonly Option[]) =>
  options.flatMap((o) =>
    [o.long, o.short]
      .filter((f): f is string => !!f)
      .map((flag) => ({ flag, description: o.description, takesValue: o.required || o.optional })),
  );

/** Every command path with its subcommands and flags (the global flags at every level). */
export function completionTree(program: Command): { nodes: Node[]; values: Record<string, string[]> } {
  const globals = flagsOf(program.options);
  const nodes: Node[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const choices: Record<string, string[]> = {};
    for (const o of [...cmd.options, ...program.options])
      if (o.argChoices) for (const f of [o.long, o.short]) if (f) choices[f] = [...o.argChoices];
    const own = path.length ? flagsOf(cmd.options) : [];
    nodes.push({
      path: path.join(' '),
      subcommands: cmd.commands.map((c) => ({ name: c.name(), description: c.description() })),
      flags: [...own, ...globals, { flag: '--help', description: 'show help', takesValue: false }],
      choices,
    });
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(program, []);
  return { nodes, values: FLAG_VALUES };
}

const quoteWords = (words: string[]) => words.join(' ').replace(/"/g, '\\"');

export function bashScript(program: Command): string {
  const { nodes, values } = completionTree(program);
  const subPairs = nodes.flatMap((n) => n.subcommands.map((s) => `"${n.path}/${s.name}"`));
  const valueCases = [
    ...nodes.flatMap((n) => Object.entries(n.choices).map(([flag, list]) => [`"${n.path}|${flag}"`, list] as const)),
    ...Object.entries(values).map(([flag, list]) => [`*"|${flag}"`, list] as const),
  ];
  return `# amsg completion for bash: source <(amsg completion bash)
_amsg_is_sub() {
  case "$1/$2" in
    ${subPairs.join('|')}) return 0 ;;
  esac
  return 1
}
_amsg_complete() {
  local cur prev path w i words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    if _amsg_is_sub "$path" "$w"; then path="\${path:+$path }$w"; fi
  done
  case "$path|$prev" in
${valueCases.map(([pattern, list]) => `    ${pattern}) COMPREPLY=($(compgen -W "${quoteWords(list)}" -- "$cur")); return ;;`).join('\n')}
  esac
  case "$path" in
${nodes.map((n) => `    "${n.path}") words="${quoteWords([...n.subcommands.map((s) => s.name), ...new Set(n.flags.map((f) => f.flag))])}" ;;`).join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _amsg_complete amsg
`;
}

export function zshScript(program: Command): string {
  return `#compdef amsg
# amsg completion for zsh: source <(amsg completion zsh)  (uses zsh's bash completion support)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`;
}

const fishQuote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function fishScript(program: Command): string {
  const { nodes, values } = completionTree(program);
  const subs = nodes.flatMap((n) => n.subcommands.map((s) => fishQuote(`${n.path}/${s.name}`)));
  const lines = [
    '# amsg completion for fish: amsg completion fish | source',
    `set -g __amsg_subs ${subs.join(' ')}`,
    'function __amsg_path',
    '  set -l words (commandline -opc)',
    '  set -e words[1]',
    '  set -l path ""',
    '  for w in $words',
    "    if string match -q -- '-*' $w; continue; end",
    '    if contains -- "$path/$w" $__amsg_subs',
    '      if test -z "$path"; set path $w; else; set path "$path $w"; end',
    '    end',
    '  end',
    '  echo $path',
    'end',
    'function __amsg_at',
    '  set -l p (__amsg_path)',
    '  test "$p" = "$argv[1]"',
    'end',
    'complete -c amsg -f',
  ];
  for (const n of nodes) {
    const at = `-n ${fishQuote(`__amsg_at ${fishQuote(n.path)}`)}`;
    for (const s of n.subcommands) lines.push(`complete -c amsg ${at} -a ${fishQuote(s.name)} -d ${fishQuote(s.description)}`);
    const seen = new Set<string>();
    for (const f of n.flags) {
      if (seen.has(f.flag)) continue;
      seen.add(f.flag);
      const name = f.flag.startsWith('--') ? `-l ${f.flag.slice(2)}` : `-s ${f.flag.slice(1)}`;
      const choices = n.choices[f.flag] ?? values[f.flag];
      lines.push(
        // -x (a value, no files) where the values are known; -r keeps file names for the rest (--db FILE).
        `complete -c amsg ${at} ${name}${f.takesValue ? (choices ? ' -x' : ' -r') : ''}${choices ? ` -a ${fishQuote(choices.join(' '))}` : ''} -d ${fishQuote(f.description)}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
