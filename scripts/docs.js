#!/usr/bin/env node
// Generates the references that must not go stale, from the code itself:
//   docs/reference/cli.md   every command and subcommand (arguments, flags, defaults, choices,
//                           examples), walked from the commander tree (`fullProgram()`);
//   man/amsg.1              the same walk as a man page (roff), shipped in the npm package;
//   docs/reference/api.md   every operation of the route table, spec or extension, from the
//                           document /openapi.json serves (`openapiDocument(ROUTES)`).
//
// `npm run docs` writes them; test/docs/generated.test.ts calls generate() and fails when
// a committed copy differs. Everything here is deterministic: no clock, no terminal width,
// no environment (the version and release date come from package.json).
//
// The sources are bundled in memory with esbuild (the one entry below), so the
// references follow the TypeScript as it is, built or not.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What the generator reads from the sources: the command tree and the route table. */
async function loadSources() {
  const out = await build({
    stdin: {
      contents: [
        "export { fullProgram } from './src/cli/main.ts';",
        "export { examplesOf } from './src/cli/context.ts';",
        "export { ROUTES } from './src/api/routes/index.ts';",
        "export { openapiDocument } from './src/api/openapi.ts';",
      ].join('\n'),
      resolveDir: ROOT,
      loader: 'ts',
      sourcefile: 'docs-entry.ts',
    },
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // As scripts/build.js bundles the CLI: packages in (an ES-module-only package a command
    // imports would not load through require()); out, as there, native addons, Ink's devtools
    // hook and the live views' ES module (Ink waits at its top level, which CommonJS cannot).
    external: ['*.node', 'react-devtools-core', './ink-react.js'],
    supported: { 'dynamic-import': false },
    logLevel: 'silent',
    // src/version.ts reads ../package.json relative to its own URL: any file of src/ will do.
    define: { 'import.meta.url': '__docsModuleUrl' },
  });
  const module = { exports: {} };
  const url = pathToFileURL(join(ROOT, 'src', 'docs-entry.js')).href;
  new Function('module', 'exports', 'require', '__docsModuleUrl', out.outputFiles[0].text)(
    module,
    module.exports,
    createRequire(join(ROOT, 'package.json')),
    url,
  );
  return module.exports;
}

/** The package's version and release date (what `amsg version` prints). */
function release() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return { version: pkg.version, date: pkg.releaseDate ?? '' };
}

// ---------------------------------------------------------------- the command tree

/**
 * Help text a command adds after its options besides its examples (a note on criteria,
 * the actions of a workflow …). commander keeps it as listeners of its `afterHelp` event
 * (addHelpText), so each is asked for its text as --help would.
 */
function notesOf(cmd) {
  const notes = [];
  for (const listener of cmd.listeners('afterHelp')) {
    let text = '';
    listener({ error: false, command: cmd, write: (s) => (text += s) });
    if (!text.startsWith('\nExamples:\n')) notes.push(text.replace(/^\n+|\n+$/g, ''));
  }
  return notes.filter(Boolean);
}

/** One command, with what the references print about it. */
function describeCommand(cmd, examplesOf, path) {
  const name = [...path, cmd.name()].join(' ');
  const visibleOptions = cmd.options.filter((o) => !o.hidden);
  return {
    name,
    depth: path.length,
    usage: `${name} ${cmd.usage()}`.trim(),
    description: cmd.description(),
    aliases: cmd.aliases(),
    args: cmd.registeredArguments.map((a) => ({
      name: a.name(),
      required: a.required,
      variadic: a.variadic,
      description: a.description,
      default: a.defaultValue,
      choices: a.argChoices,
    })),
    options: visibleOptions.map((o) => ({
      flags: o.flags,
      description: o.description,
      default: o.negate ? undefined : o.defaultValue,
      choices: o.argChoices,
      mandatory: o.mandatory,
    })),
    notes: notesOf(cmd),
    examples: [...examplesOf(cmd)],
    subcommands: cmd.commands.filter((c) => !c._hidden).map((c) => c.name()),
  };
}

/** Every command, depth first in the order they are registered (the order of --help). */
function walk(program, examplesOf) {
  const out = [];
  const visit = (cmd, path) => {
    for (const sub of cmd.commands) {
      if (sub._hidden || sub.name() === 'help') continue;
      out.push(describeCommand(sub, examplesOf, path));
      visit(sub, [...path, sub.name()]);
    }
  };
  visit(program, ['amsg']);
  return out;
}

const cell = (text) =>
  String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
const code = (text) => (String(text).includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

function cliMarkdown(program, commands, { version }) {
  const lines = [
    '# Command reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/docs.js) from the command tree; do not edit. -->',
    '',
    `Every command of amsg ${version}, with its arguments, flags, defaults and examples, as \`amsg COMMAND --help\``,
    'prints them. The same reference is the man page (`man amsg`). Guides by subject are in [docs/](../README.md);',
    'exit codes and output formats in [output and exit codes](../guide/output-and-exit-codes.md).',
    '',
    '```',
    `amsg ${program.usage()}`,
    '```',
    '',
    program.description(),
    '',
    ...notesOf(program).flatMap((n) => [n, '']),
    '## Global options',
    '',
    'Every command takes these (before or after the command name).',
    '',
    ...optionTable(describeCommand(program, () => [], []).options),
    '',
    '## Commands',
    '',
    ...commands.filter((c) => c.depth === 1).map((c) => `- [${c.name}](#${anchor(c.name)}): ${c.description}`),
    '',
  ];
  for (const c of commands) {
    lines.push(`${'#'.repeat(Math.min(c.depth + 1, 6))} ${c.name}`, '');
    if (c.description) lines.push(c.description, '');
    if (c.aliases.length) lines.push(`Also: ${c.aliases.map((a) => code(a)).join(', ')}.`, '');
    if (c.subcommands.length && !c.args.length && !c.options.length) {
      lines.push(`Subcommands: ${c.subcommands.map((s) => `[${s}](#${anchor(`${c.name} ${s}`)})`).join(', ')}.`, '');
      for (const n of c.notes) lines.push('```text', n, '```', '');
      if (c.examples.length) lines.push('Examples:', '', '```sh', ...c.examples, '```', '');
      continue;
    }
    lines.push('```', c.usage, '```', '');
    // Arguments are in the usage line; a table only for those with more to say.
    const told = c.args.filter((a) => a.description || a.default !== undefined || a.choices?.length);
    if (told.length) {
      lines.push('| argument | description |', '|---|---|');
      for (const a of told) lines.push(`| ${cell(code(argName(a)))} | ${cell(withDefaults(a.description, a.default, a.choices))} |`);
      lines.push('');
    }
    if (c.options.length) lines.push(...optionTable(c.options), '');
    if (c.subcommands.length)
      lines.push(`Subcommands: ${c.subcommands.map((s) => `[${s}](#${anchor(`${c.name} ${s}`)})`).join(', ')}.`, '');
    for (const n of c.notes) lines.push('```text', n, '```', '');
    if (c.examples.length) lines.push('Examples:', '', '```sh', ...c.examples, '```', '');
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

function optionTable(options) {
  return [
    '| flag | description |',
    '|---|---|',
    ...options.map(
      (o) => `| ${cell(code(o.flags))}${o.mandatory ? ' (required)' : ''} | ${cell(withDefaults(o.description, o.default, o.choices))} |`,
    ),
  ];
}

/** `<member>`, `[groups...]`: an argument as the usage line writes it. */
const argName = (a) => `${a.required ? '<' : '['}${a.name}${a.variadic ? '...' : ''}${a.required ? '>' : ']'}`;

// ---------------------------------------------------------------- the man page

/** Text for roff: backslashes and hyphens escaped, a leading dot or quote kept from being a request. */
const roff = (text) =>
  String(text ?? '')
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1')
    // Plain ASCII, so any roff reads it (groff without preconv too): other characters by code point.
    .replace(/[^\x00-\x7f]/gu, (ch) => `\\[u${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}]`);

function manPage(program, commands, { version, date }) {
  const out = [
    '.\\" Generated by `npm run docs` (scripts/docs.js) from the command tree; do not edit.',
    `.TH AMSG 1 "${date}" "amsg ${version}" "amsg manual"`,
    '.SH NAME',
    `amsg \\- ${roff(
      program
        .description()
        .replace(/\.$/, '')
        .replace(/^./, (c) => c.toLowerCase()),
    )}`,
    '.SH SYNOPSIS',
    '.B amsg',
    '[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIsubcommand\\fR] [\\fIarguments\\fR] [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    roff(program.description()),
    '.PP',
    // The program's notes, a paragraph each (their lines joined: roff fills them).
    ...notesOf(program).flatMap((n) => n.split(/\n\n+/).flatMap((para) => [roff(para.replace(/\n/g, ' ')), '.PP'])),
    'Every command has examples in \\fB\\-\\-help\\fR. When standard output is not a terminal, commands print the',
    "service's JSON. The guides are in the project's \\fIdocs/\\fR folder.",
    '.SH GLOBAL OPTIONS',
    ...manOptions(describeCommand(program, () => [], []).options),
    '.SH COMMANDS',
  ];
  for (const c of commands) {
    out.push(`.SS "${roff(c.name)}"`);
    if (c.description) out.push(roff(c.description));
    if (c.aliases.length) out.push('.br', `Also: ${roff(c.aliases.join(', '))}.`);
    if (!(c.subcommands.length && !c.args.length && !c.options.length)) {
      out.push('.PP', '.nf', `.B ${roff(c.usage)}`, '.fi');
      for (const a of c.args.filter((a) => a.description || a.default !== undefined || a.choices?.length))
        out.push('.TP', `.I ${roff(argName(a))}`, roff(withDefaults(a.description, a.default, a.choices)));
      out.push(...manOptions(c.options));
    }
    if (c.subcommands.length) out.push('.PP', `Subcommands: ${roff(c.subcommands.join(', '))}.`);
    for (const n of c.notes) out.push('.PP', '.nf', roff(n), '.fi');
    if (c.examples.length) out.push('.PP', 'Examples:', '.RS', '.nf', ...c.examples.map((e) => roff(e)), '.fi', '.RE');
  }
  out.push(
    '.SH EXIT STATUS',
    '.TP',
    '.B 0',
    'ok',
    '.TP',
    '.B 1',
    'the service refused (the message names the field and the reason), or a name matched nothing',
    '.TP',
    '.B 2',
    'bad usage: unknown command or flag, bad flag value, a destructive command without \\fB\\-\\-yes\\fR off a terminal',
    '.TP',
    '.B 3',
    'cannot reach the service, or no local database file',
    '.TP',
    '.B 4',
    'finished with row\\-level errors (imports, event ingestion)',
    '.TP',
    '.B 130',
    'stopped by Ctrl\\-C, or cancelled at a prompt',
    '.SH ENVIRONMENT',
    ...[
      ['AMSG_BASE_URL', 'remote mode against this service'],
      ['AMSG_API_KEY', 'PUBLIC:PRIVATE key pair for remote mode'],
      ['AMSG_EVENTS_URL', 'event\\-ingestion host (default: the base URL)'],
      ['AMSG_DB', 'local database file (default ./amsg.db)'],
      ['AMSG_LOCAL', '1: local mode even when a base URL is configured'],
      ['AMSG_ACCOUNT', 'account to act on (default 1)'],
      ['AMSG_PROFILE', 'configuration profile to read'],
      ['AMSG_OUTPUT', 'table, json, ndjson or csv'],
      ['AMSG_YES', '1: confirm destructive operations'],
      ['AMSG_NO_INPUT', '1: never prompt (also CI=true)'],
      ['AMSG_QUIET', '1: no notes on stderr'],
      ['AMSG_NO_COLOR, NO_COLOR', 'no colour'],
      ['AMSG_NOW', 'pin the clock, e.g. 2026\\-01\\-02T03:04:05Z'],
      ['AMSG_DEBUG', '1: stack traces for unexpected errors'],
    ].flatMap(([name, text]) => ['.TP', `.B ${name}`, text]),
    '.SH FILES',
    '.TP',
    '.I ./amsg.db',
    'the local database (SQLite), created by \\fBamsg init\\fR',
    '.TP',
    '.I $XDG_CONFIG_HOME/amsg/config.json',
    'profiles (default \\fI~/.config/amsg/config.json\\fR), written with mode 0600',
    '.SH SEE ALSO',
    "The guides and the API reference in the project's \\fIdocs/\\fR folder; \\fBamsg api spec\\fR for the OpenAPI document.",
  );
  return `${out.join('\n')}\n`;
}

function withDefaults(description, dflt, choices) {
  return [
    description ?? '',
    choices?.length ? `(one of: ${choices.join(', ')})` : '',
    dflt !== undefined ? `(default: ${Array.isArray(dflt) ? dflt.join(',') : typeof dflt === 'string' ? dflt : JSON.stringify(dflt)})` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function manOptions(options) {
  return options.flatMap((o) => ['.TP', `.B ${roff(o.flags)}`, roff(withDefaults(o.description, o.default, o.choices))]);
}

// ---------------------------------------------------------------- the route table

/** A JSON Schema in a few words: `integer ≥ 1`, `"a" | "o" | "e"`, `array of string`, `{email, fields?}`. */
function typeOf(schema, depth = 0) {
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, depth)).join(' or ');
  if (schema.oneOf) return schema.oneOf.map((s) => typeOf(s, depth)).join(' or ');
  const t = Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type;
  if (t === 'array') return `array of ${typeOf(schema.items, depth + 1)}`;
  if (t === 'object' || schema.properties) {
    const props = Object.keys(schema.properties ?? {});
    if (!props.length) return 'object';
    if (depth > 0) return `{${props.map((p) => (schema.required?.includes(p) ? p : `${p}?`)).join(', ')}}`;
    return 'object';
  }
  const bounds = [];
  if (schema.minimum !== undefined) bounds.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) bounds.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined) bounds.push(`length ≥ ${schema.minLength}`);
  if (schema.maxLength !== undefined) bounds.push(`length ≤ ${schema.maxLength}`);
  const format = schema.format ? ` (${schema.format})` : '';
  return `${t ?? 'any'}${format}${bounds.length ? ` ${bounds.join(', ')}` : ''}`;
}

const defaultOf = (schema) => (schema && schema.default !== undefined ? code(JSON.stringify(schema.default)) : '');

function apiMarkdown(doc, { version }) {
  const ops = [];
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) ops.push({ path, method: method.toUpperCase(), ...op });
  const resource = (op) => op.operationId.split('.')[0];
  const resources = [...new Set(ops.map(resource))];
  const extensions = ops.filter((o) => o['x-amsg-extension']).length;
  const lines = [
    '# API reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/docs.js) from the route table; do not edit. -->',
    '',
    `Every operation amsg ${version} answers, locally and on \`amsg serve\`: ${ops.length} operations,`,
    `${ops.length - extensions} of the service interface spec and ${extensions} **extensions** (marked; the spec does not list them).`,
    'It is the same data as `GET /openapi.json` (and `amsg api spec`), generated from the route table',
    '(`src/api/routes/`). Auth is HTTP Basic with an API key pair; bodies are JSON; every path but the',
    'ingestion route starts with the account id. Who may call what (`access`): `user` any user, `manager`',
    'managers and owners, `people` owners and managers with manage_users, `billing` owners and users with',
    'billing access. Errors are a JSON object with an `error` key. What the answers look like, and the',
    'choices the spec leaves open: [serve](../guide/serve.md), [decisions](../decisions.md).',
    '',
    '## Operations',
    '',
    ...resources.map((r) => `- [${r}](#${anchor(r)}): ${ops.filter((o) => resource(o) === r).length}`),
    '',
  ];
  for (const r of resources) {
    lines.push(`## ${r}`, '', '| operation | method and path | summary |', '|---|---|---|');
    for (const op of ops.filter((o) => resource(o) === r))
      lines.push(
        `| [${code(op.operationId)}](#${anchor(op.operationId)})${op['x-amsg-extension'] ? ' (extension)' : ''} | ${cell(code(`${op.method} ${op.path}`))} | ${cell(op.summary)} |`,
      );
    lines.push('');
    for (const op of ops.filter((o) => resource(o) === r)) {
      lines.push(`### ${op.operationId}`, '');
      lines.push(`${code(`${op.method} ${op.path}`)}${op['x-amsg-extension'] ? ' — **extension**' : ''}`, '');
      if (op.summary) lines.push(op.summary, '');
      lines.push(`Access: \`${op['x-amsg-access']}\`.`, '');
      if (op.parameters.length) {
        lines.push('| parameter | in | type | required | default |', '|---|---|---|---|---|');
        for (const p of op.parameters)
          lines.push(
            `| ${code(p.name)} | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(defaultOf(p.schema))} |`,
          );
        lines.push('');
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) {
        const props = Object.entries(body.properties ?? {});
        if (props.length) {
          lines.push('Body (JSON):', '', '| key | type | required | default |', '|---|---|---|---|');
          for (const [name, schema] of props)
            lines.push(
              `| ${code(name)} | ${cell(typeOf(schema, 1))} | ${body.required?.includes(name) ? 'yes' : ''} | ${cell(defaultOf(schema))} |`,
            );
          lines.push('');
        } else lines.push(`Body (JSON): ${cell(typeOf(body, 1))}.`, '');
      }
      lines.push(`Answer: ${cell(op.responses?.[200]?.description ?? '')}.`, '');
    }
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

// ---------------------------------------------------------------- entry

/** The generated files, by path from the project root: what `npm run docs` writes and the test compares. */
export async function generate() {
  const { fullProgram, examplesOf, ROUTES, openapiDocument } = await loadSources();
  const rel = release();
  // The one environment-dependent text in the tree (`amsg config`'s description names the
  // config file): written as the variable it comes from, whoever generates.
  const xdg = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = '$XDG_CONFIG_HOME';
  let program;
  try {
    program = fullProgram(rel.version);
  } finally {
    if (xdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = xdg;
  }
  const commands = walk(program, examplesOf);
  return {
    'docs/reference/cli.md': cliMarkdown(program, commands, rel),
    'man/amsg.1': manPage(program, commands, rel),
    'docs/reference/api.md': apiMarkdown(openapiDocument(ROUTES, rel.version), rel),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [file, text] of Object.entries(await generate())) {
    mkdirSync(dirname(join(ROOT, file)), { recursive: true });
    writeFileSync(join(ROOT, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
