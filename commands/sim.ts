import type { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { thousands } from '../src/cli/output.js';
import { collectList, mailingId, memberId } from '../src/cli/resolve.js';
import { numericId } from '../src/cli/resolve.js';

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

/** A share as people write it: `40%`, or a fraction `0.4`; a bare number over 1 is surely a percentage without its sign. */
export function share(flag: string) {
  return (text: string): number => {
    const t = text.trim();
    const percent = /^(\d+(?:\.\d+)?)%$/.exec(t);
    const value = percent ? Number(percent[1]) / 100 : /^\d*\.?\d+$/.test(t) ? Number(t) : Number.NaN;
    if (Number.isNaN(value)) throw new UsageError(`${flag} takes a share of the send: 40% or 0.4, got "${text}"`, flag);
    if (!percent && value > 1) throw new UsageError(`${flag} ${text}: a share is 0 to 1, or a percentage with its sign (${text}%)`, flag);
    if (value > 1) throw new UsageError(`${flag} ${text}: a share is at most 100%`, flag);
    return value;
  };
}

interface SendFlags {
  opens?: string;
  clicks?: string;
  bounces?: string;
  optouts?: string;
  shares?: string;
  hard?: boolean;
  seed?: number;
}

/** What POST /sim/mailing/{id} answers: how many messages of the send did each. */
interface SendEngagement {
  mailing_id: number;
  seed: number;
  messages: number;
  opens: number;
  clicks: number;
  bounces: number;
  optouts: number;
  shares: number;
}

export function register(sim: Command) {
  examples(
    sim
      .command('mailing <mailing>')
      .description(
        'simulate engagement with a whole send in one operation: shares of its messages open, click, bounce, opt out and share, drawn reproducibly with --seed and recorded as the one-member commands record them (reports, webhooks, history)',
      )
      .option('--opens <share>', 'the share that opens (40% or 0.4); at least --clicks, since a click counts as an open')
      .option('--clicks <share>', "the share that clicks, drawn from the openers; clicks land on the mailing's links in turn")
      .option('--bounces <share>', 'the share that bounces (these open nothing)')
      .option('--optouts <share>', 'the share that opts out through the mailing (openers who did not click, first)')
      .option('--shares <share>', 'the share that shares the message')
      .option('--hard', "the bounces are hard: those members' status becomes e (error)")
      .option('--seed <n>', 'draw the same members again (the answer names the seed a run without it drew with)', (v) => {
        if (!/^\d+$/.test(v) || Number(v) > 2 ** 32 - 1)
          throw new UsageError(`--seed takes a whole number from 0 to ${2 ** 32 - 1}, got "${v}"`, 'seed');
        return Number(v);
      })
      .action(
        action(async (ctx, ref: string, o: SendFlags) => {
          const body: Record<string, unknown> = { hard: o.hard, seed: o.seed };
          for (const kind of ['opens', 'clicks', 'bounces', 'optouts', 'shares'] as const)
            if (o[kind] !== undefined) body[kind] = share(`--${kind}`)(o[kind]!);
          if (!['opens', 'clicks', 'bounces', 'optouts', 'shares'].some((k) => body[k] !== undefined))
            throw new UsageError('say what the members do: --opens, --clicks, --bounces, --optouts or --shares (e.g. --opens 40%)');
          const api = await ctx.api();
          const id = await mailingId(api, ref);
          const r = await api.post<SendEngagement>(`/sim/mailing/${id}`, body);
          const did = (['opens', 'clicks', 'bounces', 'optouts', 'shares'] as const)
            .filter((k) => body[k] !== undefined)
            .map((k) => `${thousands(r[k])} ${k === 'optouts' ? 'opt-outs' : k}`)
            .join(', ');
          await ctx.done(
            r,
            `Recorded ${did} of the ${thousands(r.messages)} messages of mailing ${id} (seed ${r.seed}: --seed ${r.seed} draws the same members).`,
          );
        }),
      ),
    [
      'amsg sim mailing 12 --opens 40% --clicks 8% --bounces 1% --optouts 0.5% --seed 7',
      'amsg sim mailing "Spring sale" --opens 0.3 --clicks 0.05',
      'amsg reports mailing 12',
    ],
  );

  for (const [kind, [phrase, description]] of Object.entries(KINDS)) {
    const cmd = sim.command(`${kind} <mailing> <member>`).description(`simulate ${phrase} a sent message: ${description}`);
    if (kind === 'click') cmd.option('--link <id>', 'the link clicked (see the links of amsg mailings get); the first link by default');
    if (kind === 'bounce') cmd.option('--hard', "a hard bounce: the member's status becomes e (error)");
    examples(
      cmd.action(
        action(async (ctx, mailing: string, member: string, o: { link?: string; hard?: boolean }) => {
          const link_id = o.link === undefined ? undefined : numericId(o.link, '--link');
          const api = await ctx.api();
          const mailing_id = await mailingId(api, mailing);
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
          const api = await ctx.api();
          const forwarded = await mailingId(api, mailing);
          const member = await memberId(api, ref);
          const created = await api.post<{ mailing_id: number }>(`/forwards/${forwarded}/${member}`, {
            recipient_emails: o.to,
            heads_up_emails: o.headsUp,
          });
          await ctx.done(created, `Member ${member} forwarded mailing ${forwarded} as mailing ${created.mailing_id}.`);
        }),
      ),
    ['amsg sim forward 12 ada@example.com --to bo@example.com,cy@example.com'],
  );
}
