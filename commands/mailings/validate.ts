// `amsg mailings validate`, and the listing of bad personalization tags that create shares.
import type { Command } from 'commander';
import { action, examples, EXIT, UsageError, type RunContext } from '../../src/cli/context.js';
import { fieldSuggestion } from '../../src/cli/resolve.js';
import { checkOneStdin, readOptional } from './shared.js';

interface TagProblem {
  part: string;
  tag: string;
  line: number;
  column: number;
  reason: string;
}

export async function printTagProblems(ctx: RunContext, problems: TagProblem[]) {
  // An unknown member field gets a suggestion from the account's fields (the answer itself stays the service's).
  const api = await ctx.api();
  const hints = await Promise.all(
    problems.map(async (p) => {
      const field = /unknown member field "([^"]+)"/.exec(p.reason)?.[1];
      return field ? fieldSuggestion(api, field) : '';
    }),
  );
  if (ctx.format === 'table')
    ctx.stdout.write(problems.map((p, i) => `${p.part}:${p.line}:${p.column}: ${p.reason}${hints[i]}: ${p.tag}\n`).join(''));
  else {
    await ctx.print(problems);
    problems.forEach((p, i) => hints[i] && ctx.note(`${p.part}:${p.line}:${p.column}: ${p.reason}${hints[i]}`));
  }
  ctx.stderr.write(
    `amsg: ${problems.length} invalid personalization tag${problems.length === 1 ? '' : 's'} (part:line:column); fix them and validate again\n`,
  );
  process.exitCode = EXIT.refused;
}

/** Answers invalid_tags when the service refused templates for their tags (a 400 ApiError that lists them). */
export function tagProblems(err: unknown): TagProblem[] | undefined {
  const refusal = err as { status?: number; body?: { invalid_tags?: unknown } } | undefined;
  if (refusal?.status === 400 && Array.isArray(refusal.body?.invalid_tags)) return refusal.body.invalid_tags as TagProblem[];
  return undefined;
}

export function registerValidate(mailings: Command) {
  examples(
    mailings
      .command('validate')
      .description('check the personalization tags of a subject and bodies; exits 1 listing each bad tag as part:line:column')
      .option('--html <file>', 'the HTML body from FILE (- for stdin)')
      .option('--plaintext <file>', 'the plaintext body from FILE (- for stdin)')
      .option('--subject <text>', 'the subject line')
      .action(
        action(async (ctx, o: { html?: string; plaintext?: string; subject?: string }) => {
          if (o.html === undefined && o.plaintext === undefined && o.subject === undefined)
            throw new UsageError('give something to check: --html FILE, --plaintext FILE and/or --subject TEXT');
          checkOneStdin([
            ['--html', o.html],
            ['--plaintext', o.plaintext],
          ]);
          const body = {
            html_body: readOptional(o.html, '--html'),
            plaintext: readOptional(o.plaintext, '--plaintext'),
            subject: o.subject,
          };
          const api = await ctx.api();
          try {
            await ctx.done(await api.post('/mailings/validate', body), 'Every tag is valid.');
          } catch (err) {
            const problems = tagProblems(err);
            if (problems) return printTagProblems(ctx, problems);
            throw err;
          }
        }),
      ),
    [
      'amsg mailings validate --html may.html --subject "Hi [% member:first_name %]"',
      'amsg mailings validate --plaintext - < note.txt --json',
    ],
  );
}
