import type { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { collectList, memberId } from '../src/cli/resolve.js';
import { numericId } from './mailings/shared.js';

/** What each kind of simulated engagement does, for --help and the sentence printed. */
const KINDS = {
  open: ['an open of', 'stamp the first open on the message (its history shows opened)'],
  click: ['a click in', 'stamp the first click (and open) on the message; --link picks the link'],
  bounce: ['a bounce of', "stamp a bounce and count it on the member; --hard also sets the member's status to e"],
  share: ['a share of', 'stamp the first share on the message (its history shows shared)'],
  share_click: ['a click on a shared link of', 'someone followed a link the member shared (fires message_share_click; stamps nothing)'],
  optout: ['an opt-out through', 'opt the member out (status o), recorded against this mailing'],
} as const;

/** The member as the service's sim route takes it: an id, or an e-mail address as it is. */
function memberRef(ref: string): { member_id: number } | { email: string } {
  if (/^\d+$/.test(ref)) return { member_id: Number(ref) };
  if (!ref.includes('@')) throw new UsageError(`MEMBER is a numeric id or an e-mail address, got "${ref}"`);
  return { email: ref };
}

export function register(sim: Command) {
  for (const [kind, [phrase, description]] of Object.entries(KINDS)) {
    const cmd = sim.command(`${kind} <mailing> <member>`).description(`simulate ${phrase} a sent message: ${description}`);
    if (kind === 'click') cmd.option('--link <id>', 'the link clicked (see the links of amsg mailings get); the first link by default');
    if (kind === 'bounce') cmd.option('--hard', "a hard bounce: the member's status becomes e (error)");
    examples(
      cmd.action(
        action(async (ctx, mailing: string, member: string, o: { link?: string; hard?: boolean }) => {
          const mailing_id = numericId(mailing, 'MAILING');
          const link_id = o.link === undefined ? undefined : numericId(o.link, '--link');
          const api = await ctx.api();
          const body = { mailing_id, ...memberRef(member), link_id, hard: o.hard };
          await ctx.done(await api.post(`/sim/${kind}`, body), `Recorded ${phrase} mailing ${mailing_id} by member ${member}.`);
        }),
      ),
      [
        `amsg sim ${kind} 12 ada@example.com`,
        ...(kind === 'click' ? ['amsg sim click 12 42 --link 3'] : kind === 'bounce' ? ['amsg sim bounce 12 42 --hard'] : []),
        'amsg members mailings ada@example.com',
      ],
    );
  }

  examples(
    sim
      .command('sms-click <campaign> <member> [link]')
      .description('simulate a click on a short link of a delivered SMS (the first link unless LINK, an sms_link_id, is given)')
      .action(
        action(async (ctx, campaign: string, member: string, link?: string) => {
          const id = numericId(campaign, 'CAMPAIGN');
          const sms_link_id = link === undefined ? undefined : numericId(link, 'LINK');
          const api = await ctx.api();
          const answer = await api.post(`/sms/campaigns/${id}/sim/click`, { ...memberRef(member), sms_link_id });
          await ctx.done(answer, `Recorded a click in SMS campaign ${id} by member ${member}.`);
        }),
      ),
    ['amsg sim sms-click 3 ada@example.com', 'amsg sim sms-click 3 42 7', 'amsg sms campaigns clicks 3'],
  );

  examples(
    sim
      .command('sms-reply <campaign> <member> <text>')
      .description('simulate a reply to a delivered SMS: STOP opts the member out of promotional SMS, START opts back in')
      .action(
        action(async (ctx, campaign: string, member: string, text: string) => {
          const id = numericId(campaign, 'CAMPAIGN');
          const api = await ctx.api();
          const answer = await api.post(`/sms/campaigns/${id}/sim/reply`, { ...memberRef(member), text });
          await ctx.done(answer, `Recorded the reply "${text}" to SMS campaign ${id} by member ${member}.`);
        }),
      ),
    ['amsg sim sms-reply 3 ada@example.com STOP', 'amsg sim sms-reply 3 ada@example.com START'],
  );

  examples(
    sim
      .command('forward <mailing> <member>')
      .description("a member (id or e-mail) forwards its message (the service's POST /forwards); new addresses join with status f")
      .requiredOption('--to <email>', 'forward to this address (repeatable, or a comma list)', collectList)
      .option('--heads-up <email>', 'send a heads-up copy to this address (repeatable, or a comma list)', collectList)
      .action(
        action(async (ctx, mailing: string, ref: string, o: { to: string[]; headsUp?: string[] }) => {
          const mailingId = numericId(mailing, 'MAILING');
          const api = await ctx.api();
          const member = await memberId(api, ref);
          const created = await api.post<{ mailing_id: number }>(`/forwards/${mailingId}/${member}`, {
            recipient_emails: o.to,
            heads_up_emails: o.headsUp,
          });
          await ctx.done(created, `Member ${member} forwarded mailing ${mailingId} as mailing ${created.mailing_id}.`);
        }),
      ),
    ['amsg sim forward 12 ada@example.com --to bo@example.com,cy@example.com'],
  );
}
