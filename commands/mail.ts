import type { Command } from 'commander';
import { action, examples } from '../src/cli/context.js';
import { listOptions, printList, type ListFlags } from '../src/cli/paging.js';

const LOG_COLUMNS = ['mail_id', 'to', 'subject', 'state', 'attempts', 'last_reply', 'kind', 'sent_at', 'message_id'];

export function register(mail: Command) {
  mail.addHelpText(
    'after',
    `
Real mail goes out over SMTP when an SMTP server is set: amsg serve --smtp URL, or for local
mode AMSG_SMTP_URL or the profile setting smtp (amsg config set smtp smtp://127.0.0.1:1025).
Test sends, heads-up copies and opt-in confirmations go to the addresses they name; a mailing's
own sends only to addresses an allow pattern matches (--smtp-allow '*@example.test').
`,
  );
  examples(
    listOptions(mail.command('log').description('the mail that went (or is going) out over SMTP, newest first'), {
      countable: true,
    })
      .option('--failed', 'only the messages that failed (refused for good, or out of attempts)')
      .action(
        action(async (ctx, o: ListFlags & { failed?: boolean }) => {
          await printList(ctx, '/mail/log', { failed: o.failed ? 'true' : undefined }, o, { columns: LOG_COLUMNS }, { countable: true });
        }),
      ),
    [
      'amsg mail log',
      'amsg mail log --limit 20 --json | jq -r ".[] | select(.state != \\"sent\\") | .last_reply"',
      'amsg mail log --count',
      'amsg mail log --failed',
    ],
  );
}
