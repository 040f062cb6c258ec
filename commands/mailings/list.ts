// `amsg mailings list` and `get`.
import { TABLES } from '../../src/cli/columns.js';
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../../src/cli/paging.js';
import { collectList, mailingId as mailingRef } from '../../src/cli/resolve.js';
import { letters, STATUS_NAMES } from './shared.js';

const TYPE_NAMES: Record<string, string> = { m: 'standard', t: 'test', r: 'trigger', s: 'subject', c: 'content' };

export function registerList(mailings: Command) {
  examples(
    listOptions(mailings.command('list'), { windowed: false })
      .description('list mailings (canceled and archived ones only when asked for)')
      .option('--status <letters>', 'only these statuses: p,a,i,s,x,c,w,u,f or words (pending, paused, complete…)', collectList)
      .option('--type <letters>', 'only these types: m (standard), t (test), r (trigger), s, c (split tests); default m,t', collectList)
      .option('--archived', 'include archived mailings')
      .option('--scheduled', 'only mailings with a send time')
      .option('--with-html', 'include html_body')
      .option('--with-plaintext', 'include plaintext')
      .action(
        action(
          async (
            ctx,
            o: ListFlags & {
              status?: string[];
              type?: string[];
              archived?: boolean;
              scheduled?: boolean;
              withHtml?: boolean;
              withPlaintext?: boolean;
            },
          ) => {
            const query = {
              mailing_statuses: letters(o.status, STATUS_NAMES, '--status'),
              mailing_types: letters(o.type, TYPE_NAMES, '--type'),
              include_archived: o.archived,
              is_scheduled: o.scheduled,
              with_html_body: o.withHtml,
              with_plaintext: o.withPlaintext,
            };
            await printList(
              ctx,
              '/mailings',
              query,
              o,
              { table: TABLES.mailings, words: { mailing_status: STATUS_NAMES } },
              { windowed: false },
            );
          },
        ),
      ),
    [
      'amsg mailings list',
      'amsg mailings list --status p,a --scheduled',
      'amsg mailings list --type m,t,r --archived --json | jq ".[].mailing_id"',
    ],
  );
}

export function registerGet(mailings: Command) {
  examples(
    mailings
      .command('get <mailing>')
      .description('a mailing in detail: audience, links, split test')
      .option('--segment-names', 'name the segments')
      .option('--subscription-names', 'name the subscriptions')
      .action(
        action(async (ctx, id: string, o: { segmentNames?: boolean; subscriptionNames?: boolean }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const query = { include_segment_names: o.segmentNames, include_subscription_names: o.subscriptionNames };
          await ctx.print(await api.get(`/mailings/${mailingId}`, query));
        }),
      ),
    ['amsg mailings get 12', 'amsg mailings get 12 --subscription-names --json | jq .recipient_subscriptions'],
  );
}
