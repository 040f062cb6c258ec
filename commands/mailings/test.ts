import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { mailingId as mailingRef } from '../../src/cli/resolve.js';

/** `amsg mailings test`: a real test send over SMTP (moves into commands/mailings/ with the other verbs). */
export function registerTest(mailings: Command) {
  examples(
    mailings
      .command('test <mailing>')
      .description("mail a test of a mailing over SMTP: its content with a member's values (or sample values), subject prefixed [Test]")
      .requiredOption('--to <addresses...>', 'where the test goes (one or more addresses)')
      .option('--as <email>', "personalize with this member's values (default: each field's sample value)")
      .action(
        action(async (ctx, ref: string, o: { to: string[]; as?: string }) => {
          const api = await ctx.api();
          const id = await mailingRef(api, ref);
          const to = o.to
            .flatMap((a) => a.split(','))
            .map((a) => a.trim())
            .filter(Boolean);
          const queued = await api.post<{ mail_id: number; to: string; subject: string }[]>(`/mailings/${id}/test`, {
            recipient_emails: to,
            ...(o.as !== undefined ? { member_email: o.as } : {}),
          });
          await ctx.done(
            queued,
            `Queued a test of mailing ${id} ("${queued[0]?.subject ?? ''}") to ${queued.map((q) => q.to).join(', ')}; amsg mail log shows whether it went.`,
          );
        }),
      ),
    ['amsg mailings test 12 --to me@example.com', 'amsg mailings test Spring --to me@example.com qa@example.com --as ada@example.com'],
  );
}
