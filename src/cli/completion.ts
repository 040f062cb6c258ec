/**
 * Shell completion scripts, generated from the program itself (every command
 * registered), so they cover every command, flag and enumerated value there is.
 */
import type { Command, Option } from 'commander';
import type { NameKind } from './complete-names.js';
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

/** The arguments that name a thing, by the argument's name (`groups get <group>`): what their values are completed from. */
const ARGUMENT_KINDS: Record<string, NameKind> = {
  group: 'groups',
  mailing: 'mailings',
  field: 'fields',
  search: 'searches',
  segment: 'segments',
  subscription: 'subscriptions',
};

/** The flags that name a thing, by the flag and what its value is (`--group <name|id>`); `--field <name=value>` completes `name=`. */
const FLAG_KINDS: Record<string, NameKind> = {
  '--group <name|id>': 'groups',
  '--subscription <name|id>': 'subscriptions',
  '--search <name|id>': 'searches',
  '--suppress-search <name|id>': 'searches',
  '--segment <name|id>': 'segments',
  '--suppress-segment <name|id>': 'segments',
  '--field <name=value>': 'fields',
  '--parent <field>': 'fields',
  '--child <field>': 'fields',
};

interface Node {
  path: string;
  subcommands: { name: string; description: string }[];
  flags: { flag: string; description: string; takesValue: boolean }[];
  /** The values of this command's flags that enumerate them (`--type` of mailings message). */
  choices: Record<string, string[]>;
  /** The flags whose values are names of a kind (`--group`: groups). */
  named: Record<string, NameKind>;
  /** What each positional argument names, in order (undefined: nothing to complete); a variadic last one repeats. */
  args: (NameKind | undefined)[];
  variadic: boolean;
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
    const named: Record<string, NameKind> = {};
    for (const o of cmd.options)
      if (o.long && FLAG_KINDS[o.flags.replace(/^-\w, /, '')]) named[o.long] = FLAG_KINDS[o.flags.replace(/^-\w, /, '')];
    const visible = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    nodes.push({
      path: path.join(' '),
      subcommands: visible.map((c) => ({ name: c.name(), description: c.description() })),
      flags: [...own, ...globals, { flag: '--help', description: 'show help', takesValue: false }],
      choices,
      named,
      args: cmd.registeredArguments.map((a) => ARGUMENT_KINDS[a.name()]),
      variadic: !!cmd.registeredArguments.at(-1)?.variadic,
    });
    for (const c of visible) walk(c, [...path, c.name()]);
  };
  walk(program, []);
  return { nodes, values: FLAG_VALUES };
}

const quoteWords = (words: string[]) => words.join(' ').replace(/"/g, '\\"');

/** The flags that take a value, anywhere: their values are not positional arguments. */
const valueFlags = (nodes: Node[]) => [...new Set(nodes.flatMap((n) => n.flags.filter((f) => f.takesValue).map((f) => f.flag)))].sort();

/** The connection flags a completion passes on to `amsg __complete`, so the names come from where the command would act. */
const CONNECTION_FLAGS = ['--db', '--base-url', '--api-key', '--account', '--profile'];

/** `path#argn` patterns of the positional arguments that name a thing, with their kinds (a variadic last one: any later position). */
const argumentCases = (nodes: Node[]) =>
  nodes.flatMap((n) =>
    n.args.flatMap((kind, i) => {
      if (!kind) return [];
      const last = n.variadic && i === n.args.length - 1;
      return [[last ? `"${n.path}#"*` : `"${n.path}#${i}"`, kind] as const];
    }),
  );

export function bashScript(program: Command): string {
  const { nodes, values } = completionTree(program);
  const subPairs = nodes.flatMap((n) => n.subcommands.map((s) => `"${n.path}/${s.name}"`));
  const valueCases = [
    ...nodes.flatMap((n) => Object.entries(n.choices).map(([flag, list]) => [`"${n.path}|${flag}"`, list] as const)),
    ...Object.entries(values).map(([flag, list]) => [`*"|${flag}"`, list] as const),
  ];
  const nameCases = nodes.flatMap((n) => Object.entries(n.named).map(([flag, kind]) => [`"${n.path}|${flag}"`, kind, flag] as const));
  return `# amsg completion for bash: source <(amsg completion bash)
_amsg_is_sub() {
  case "$1/$2" in
    ${subPairs.join('|')}) return 0 ;;
  esac
  return 1
}
_amsg_takes_value() {
  case "$1" in
    ${valueFlags(nodes).join('|')}) return 0 ;;
  esac
  return 1
}
# The names of a kind (groups, mailings, fields …) from where the command would act; $2 is put after each (--field name=).
_amsg_names() {
  local IFS=$'\\n' name
  local -a names
  names=($(amsg "\${conn[@]}" __complete "$1" 2>/dev/null))
  COMPREPLY=()
  for name in "\${names[@]}"; do
    [[ "$name" == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")$2")
  done
  if [[ -n "$2" ]]; then compopt -o nospace 2>/dev/null; fi
  return 0
}
_amsg_complete() {
  local cur prev path w i words argn skip
  local -a conn
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  argn=0
  skip=0
  conn=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      ${CONNECTION_FLAGS.join('|')}) conn+=("$w" "\${COMP_WORDS[i+1]}") ;;
      --local) conn+=("$w") ;;
    esac
    case "$w" in -*) if _amsg_takes_value "$w"; then skip=1; fi; continue ;; esac
    if _amsg_is_sub "$path" "$w"; then path="\${path:+$path }$w"; else argn=$((argn + 1)); fi
  done
  case "$path|$prev" in
${nameCases.map(([pattern, kind, flag]) => `    ${pattern}) _amsg_names ${kind}${flag === '--field' ? ' =' : ''}; return ;;`).join('\n')}
${valueCases.map(([pattern, list]) => `    ${pattern}) COMPREPLY=($(compgen -W "${quoteWords(list)}" -- "$cur")); return ;;`).join('\n')}
  esac
  if [[ "$cur" != -* ]]; then
    case "$path#$argn" in
${argumentCases(nodes)
  .map(([pattern, kind]) => `      ${pattern}) _amsg_names ${kind}; return ;;`)
  .join('\n')}
    esac
  fi
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
    `set -g __amsg_value_flags ${valueFlags(nodes).map(fishQuote).join(' ')}`,
    '# The positional arguments typed after the command path: exactly $argv[1] of them, or at least with $argv[2] = +.',
    'function __amsg_argn',
    '  set -l words (commandline -opc)',
    '  set -e words[1]',
    '  set -l path ""',
    '  set -l n 0',
    '  set -l skip 0',
    '  for w in $words',
    '    if test $skip = 1; set skip 0; continue; end',
    "    if string match -q -- '-*' $w",
    '      if contains -- $w $__amsg_value_flags; set skip 1; end',
    '      continue',
    '    end',
    '    if contains -- "$path/$w" $__amsg_subs',
    '      if test -z "$path"; set path $w; else; set path "$path $w"; end',
    '    else',
    '      set n (math $n + 1)',
    '    end',
    '  end',
    '  if test "$argv[2]" = +; test $n -ge $argv[1]; else; test $n -eq $argv[1]; end',
    'end',
    '# The connection flags as typed, so the names come from where the command would act.',
    'function __amsg_conn',
    '  set -l words (commandline -opc)',
    '  set -l i 2',
    '  while test $i -le (count $words)',
    '    switch $words[$i]',
    `      case ${CONNECTION_FLAGS.join(' ')}`,
    '        echo $words[$i]',
    '        set i (math $i + 1)',
    '        echo $words[$i]',
    '      case --local',
    '        echo --local',
    '    end',
    '    set i (math $i + 1)',
    '  end',
    'end',
    '# The names of a kind (groups, mailings, fields …); $argv[2] is put after each (--field name=).',
    'function __amsg_names',
    '  amsg (__amsg_conn) __complete $argv[1] 2>/dev/null | string replace -r -- \'$\' "$argv[2]"',
    'end',
    'complete -c amsg -f',
  ];
  for (const n of nodes) {
    const at = `-n ${fishQuote(`__amsg_at ${fishQuote(n.path)}`)}`;
    for (const s of n.subcommands) lines.push(`complete -c amsg ${at} -a ${fishQuote(s.name)} -d ${fishQuote(s.description)}`);
    n.args.forEach((kind, i) => {
      if (!kind) return;
      const atLeast = n.variadic && i === n.args.length - 1 ? ' +' : '';
      lines.push(
        `complete -c amsg -n ${fishQuote(`__amsg_at ${fishQuote(n.path)}; and __amsg_argn ${i}${atLeast}`)} -a ${fishQuote(`(__amsg_names ${kind})`)}`,
      );
    });
    const seen = new Set<string>();
    for (const f of n.flags) {
      if (seen.has(f.flag)) continue;
      seen.add(f.flag);
      const name = f.flag.startsWith('--') ? `-l ${f.flag.slice(2)}` : `-s ${f.flag.slice(1)}`;
      const kind = n.named[f.flag];
      if (kind) {
        const names = `(__amsg_names ${kind}${f.flag === '--field' ? ' =' : ''})`;
        lines.push(`complete -c amsg ${at} ${name} -x -a ${fishQuote(names)} -d ${fishQuote(f.description)}`);
        continue;
      }
      const choices = n.choices[f.flag] ?? values[f.flag];
      lines.push(
        // -x (a value, no files) where the values are known; -r keeps file names for the rest (--db FILE).
        `complete -c amsg ${at} ${name}${f.takesValue ? (choices ? ' -x' : ' -r') : ''}${choices ? ` -a ${fishQuote(choices.join(' '))}` : ''} -d ${fishQuote(f.description)}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
