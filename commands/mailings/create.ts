// `amsg mailings create`: a mailing, or a split test of its subject or content.
import { type Command, Option } from 'commander';
import { action, examples, UsageError } from '../../src/cli/context.js';
import { collect, collectList, memberId } from '../../src/cli/resolve.js';
import {
  type AudienceFlags,
  audienceBody,
  audienceOptions,
  checkDateTime,
  checkOneStdin,
  parseDuration,
  parseInteger,
  readOptional,
  readText,
  searchIds,
} from './shared.js';
import { printTagProblems, tagProblems } from './validate.js';
import { createdMailing, waitFlags } from './waiting.js';

interface CreateFlags extends AudienceFlags {
  name: string;
  subject?: string;
  sender: string;
  replyTo?: string;
  html?: string;
  plaintext?: string;
  plaintextOnly?: boolean;
  suppressSearch?: string[];
  suppressSegment?: string[];
  suppressMember?: string[];
  sendAt?: string;
  draft?: boolean;
  type?: string;
  variantSubject?: string[];
  variantHtml?: string[];
  testPercent?: string;
  testDuration?: string;
  wait?: boolean;
  timeout?: string;
}

function splitTest(o: CreateFlags) {
  if (o.variantSubject && o.variantHtml)
    throw new UsageError('a split test varies the subject (--variant-subject) or the content (--variant-html), not both');
  const variants: { subject?: string; html_body?: string }[] | undefined =
    o.variantSubject?.map((subject) => ({ subject })) ?? o.variantHtml?.map((file) => ({ html_body: readText(file, '--variant-html') }));
  if (!variants) {
    if (o.testPercent !== undefined || o.testDuration !== undefined)
      throw new UsageError(
        '--test-percent and --test-duration belong to a split test: give two or more --variant-subject or --variant-html',
      );
    return undefined;
  }
  if (variants.length < 2)
    throw new UsageError(`a split test needs two to ten variants: repeat ${o.variantSubject ? '--variant-subject' : '--variant-html'}`);
  if (o.type) throw new UsageError('--type does not go with a split test (its type is s with --variant-subject, c with --variant-html)');
  return {
    mailing_type: o.variantSubject ? 's' : 'c',
    split_test: {
      variants,
      test_percent: parseInteger(o.testPercent, '--test-percent'),
      test_duration_seconds: o.testDuration === undefined ? undefined : parseDuration(o.testDuration, '--test-duration'),
    },
  };
}

export function registerCreate(mailings: Command) {
  examples(
    audienceOptions(
      mailings
        .command('create')
        .description('create a mailing; it is sent at --send-at, or as soon as the sender runs (every body needs [% optout_url %])')
        .requiredOption('--name <name>', 'the name people see in lists')
        .option('--subject <text>', 'the subject (personalization tags allowed); with --variant-subject, the first variant by default')
        .requiredOption('--sender <address>', 'the From address')
        .option('--reply-to <address>', 'the Reply-To address')
        .option('--html <file>', 'the HTML body from FILE (- for stdin); with --variant-html, the first variant by default')
        .option('--plaintext <file>', 'the plaintext body from FILE (- for stdin)')
        .option('--plaintext-only', 'send the plaintext body only'),
    )
      .option('--suppress-search <name|id>', 'keep out the members a saved search finds (repeatable)', collectList)
      .option('--suppress-segment <name|id>', 'keep out the members of a segment (repeatable)', collectList)
      .option('--suppress-member <id|email>', 'keep out this member (repeatable)', collectList)
      .option('--send-at <datetime>', 'send at this time, e.g. 2026-05-01T09:00:00Z (UTC when no offset is given)')
      .option('--draft', 'keep it as an unapproved draft (status u) until `amsg mailings resume ID`')
      .addOption(new Option('--type <m|t>', 'm standard (default) or t test').choices(['m', 't']))
      .option('--variant-subject <text>', 'a subject split test (type s): one variant per flag, two to ten', collect)
      .option('--variant-html <file>', 'a content split test (type c): the HTML body of one variant per flag', collect)
      .option('--test-percent <n>', 'split test: the share of the audience that gets the variants (default 20)')
      .option('--test-duration <seconds|1d2h>', 'split test: how long before the variant with the most opens wins (default 1d)')
      .option('--wait', 'wait until the mailing is sent (or canceled, failed, or waiting for a winner) and print it')
      .option('--timeout <seconds|1h>', 'with --wait: stop waiting after this long (exit 1)')
      .action(
        action(async (ctx, o: CreateFlags) => {
          if (o.wait && o.draft)
            throw new UsageError('--wait does not go with --draft: a draft is not sent until `amsg mailings resume ID`');
          const timeout = waitFlags(o);
          checkOneStdin([
            ['--html', o.html],
            ['--plaintext', o.plaintext],
            ['--variant-html', o.variantHtml],
          ]);
          const split = splitTest(o);
          const subject = o.subject ?? o.variantSubject?.[0];
          if (subject === undefined) throw new UsageError('give --subject (the subject line; personalization tags allowed)');
          if (o.html === undefined && o.plaintext === undefined && !o.variantHtml)
            throw new UsageError('give the body: --html FILE and/or --plaintext FILE (- reads stdin)');
          const sendAt = checkDateTime(o.sendAt, '--send-at');
          // A content test's own body (what the rest of the audience gets before a winner) defaults to its first variant's.
          const html_body =
            readOptional(o.html, '--html') ?? (split?.mailing_type === 'c' ? split.split_test.variants[0].html_body : undefined);
          const plaintext = readOptional(o.plaintext, '--plaintext');
          const api = await ctx.api();
          const body = {
            name: o.name,
            subject,
            sender: o.sender,
            reply_to: o.replyTo,
            html_body,
            plaintext,
            plaintext_only: o.plaintextOnly,
            mailing_type: o.type,
            send_at: sendAt,
            status: o.draft ? 'u' : undefined,
            ...(await audienceBody(api, ctx, o)),
            suppressed_searches: await searchIds(api, o.suppressSearch),
            suppressed_segments: await searchIds(api, o.suppressSegment),
            suppressed_member_ids: o.suppressMember ? await Promise.all(o.suppressMember.map((m) => memberId(api, m))) : undefined,
            ...split,
          };
          let created: { mailing_id: number };
          try {
            created = await api.post<{ mailing_id: number }>('/mailings', body);
          } catch (err) {
            const problems = tagProblems(err);
            if (problems) return printTagProblems(ctx, problems);
            throw err;
          }
          const id = created.mailing_id;
          const sentence = o.draft
            ? `Created mailing ${id} as a draft (status u): approve it with \`amsg mailings resume ${id}\`.`
            : `Created mailing ${id}${sendAt ? `, to be sent at ${sendAt}` : ''}.`;
          await createdMailing(ctx, api, created, sentence, !!o.wait, timeout);
        }),
      ),
    [
      'amsg mailings create --name "May news" --subject "Hi [% member:first_name | default:\\"there\\" %]" --sender news@example.com --html may.html --group Newsletter --wait',
      'amsg mailings create --name Test --subject Test --sender me@example.com --plaintext note.txt --to ada@example.com --type t',
      'cat may.html | amsg mailings create --name May --subject May --sender news@example.com --html - --group 3 --send-at 2026-05-01T09:00:00Z',
      'amsg mailings create --name "Subject test" --sender news@example.com --html may.html --group Newsletter --variant-subject "May news" --variant-subject "News for May" --test-percent 20 --test-duration 4h',
    ],
  );
}
