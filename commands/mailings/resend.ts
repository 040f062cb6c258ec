// New mailings from a sent one: `amsg mailings resend` (its content to a new audience) and `forward`.
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { collectList, mailingId as mailingRef, memberId } from '../../src/cli/resolve.js';
import { type AudienceFlags, audienceBody, audienceOptions, searchIds } from './shared.js';
import { createdMailing, waitFlags } from './waiting.js';

export function registerResend(mailings: Command) {
  examples(
    audienceOptions(
      mailings
        .command('resend <mailing>')
        .description("send a mailing's content again (a split test's winner), to a new audience")
        .option('--sender <address>', 'the From address (default: the original sender)'),
    )
      .option('--suppress-segment <name|id>', 'keep out the members of a segment (repeatable)', collectList)
      .option('--wait', 'wait until the new mailing is sent and print it')
      .option('--timeout <seconds|1h>', 'with --wait: stop waiting after this long (exit 1)')
      .action(
        action(
          async (ctx, id: string, o: AudienceFlags & { sender?: string; suppressSegment?: string[]; wait?: boolean; timeout?: string }) => {
            const timeout = waitFlags(o);
            const api = await ctx.api();
            const mailingId = await mailingRef(api, id);
            const created = await api.post<{ mailing_id: number }>(`/mailings/${mailingId}`, {
              sender: o.sender,
              ...(await audienceBody(api, ctx, o)),
              suppression_segments: await searchIds(api, o.suppressSegment),
            });
            await createdMailing(
              ctx,
              api,
              created,
              `Created mailing ${created.mailing_id}, a resend of mailing ${mailingId}.`,
              !!o.wait,
              timeout,
            );
          },
        ),
      ),
    ['amsg mailings resend 12 --group "New members"', 'amsg mailings resend 12 --to ada@example.com --sender other@example.com --wait'],
  );
}

export function registerForward(mailings: Command) {
  examples(
    mailings
      .command('forward <mailing> <member>')
      .description('a member (id or e-mail) forwards its message; new addresses join with status f (forwarded)')
      .requiredOption('--to <email>', 'forward to this address (repeatable, or a comma list)', collectList)
      .option('--heads-up <email>', 'send a heads-up copy to this address (repeatable, or a comma list)', collectList)
      .option('--wait', 'wait until the forward is sent and print it')
      .action(
        action(async (ctx, id: string, memberRef: string, o: { to: string[]; headsUp?: string[]; wait?: boolean }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const member = await memberId(api, memberRef);
          const created = await api.post<{ mailing_id: number }>(`/forwards/${mailingId}/${member}`, {
            recipient_emails: o.to,
            heads_up_emails: o.headsUp,
          });
          await createdMailing(
            ctx,
            api,
            created,
            `Member ${member} forwarded mailing ${mailingId} as mailing ${created.mailing_id}.`,
            !!o.wait,
          );
        }),
      ),
    ['amsg mailings forward 12 ada@example.com --to bo@example.com,cy@example.com'],
  );
}
