// `amsg mailings message`: a member's personalized message.
import { type Command, Option } from 'commander';
import { action, examples, type RunContext } from '../../src/cli/context.js';
import { mailingId as mailingRef, memberId } from '../../src/cli/resolve.js';

const MESSAGE_TYPES = ['all', 'html', 'plaintext', 'subject', 'webview_url'];

async function printMessage(ctx: RunContext, message: Record<string, string>) {
  if (ctx.format !== 'table') return ctx.print(message);
  const keys = Object.keys(message);
  if (keys.length === 1) return void ctx.stdout.write(`${message[keys[0]]}\n`);
  const out = [
    `Subject: ${message.subject}`,
    `Webview: ${message.webview_url}`,
    '',
    '--- plaintext ---',
    message.plaintext || '(none)',
    '',
    '--- html_body ---',
    message.html_body || '(none)',
  ];
  ctx.stdout.write(`${out.join('\n')}\n`);
}

export function registerMessage(mailings: Command) {
  examples(
    mailings
      .command('message <mailing> <member>')
      .description("a member's personalized message (the member by id or e-mail)")
      .addOption(new Option('--type <part>', 'the part to show').choices(MESSAGE_TYPES).default('all'))
      .action(
        action(async (ctx, id: string, memberRef: string, o: { type: string }) => {
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          const member = await memberId(api, memberRef);
          await printMessage(ctx, await api.get(`/mailings/${mailingId}/messages/${member}`, { type: o.type }));
        }),
      ),
    ['amsg mailings message 12 ada@example.com', 'amsg mailings message 12 42 --type html -o table > ada.html'],
  );
}
