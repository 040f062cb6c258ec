// `amsg mailings winner`: a split test's winning variant.
import type { Command } from 'commander';
import { action, examples } from '../../src/cli/context.js';
import { mailingId as mailingRef } from '../../src/cli/resolve.js';
import { numericId } from '../../src/cli/resolve.js';

export function registerWinner(mailings: Command) {
  examples(
    mailings
      .command('winner <mailing> <variant>')
      .description("declare a split test's winning variant: the rest of the audience gets its content")
      .action(
        action(async (ctx, id: string, winner: string) => {
          const winnerId = numericId(winner, 'VARIANT');
          const api = await ctx.api();
          const mailingId = await mailingRef(api, id);
          await ctx.done(
            await api.post(`/mailings/${mailingId}/winner/${winnerId}`, {}),
            `Variant ${winnerId} wins split test ${mailingId}.`,
          );
        }),
      ),
    ['amsg mailings get 12 --json | jq .split_test.variants', 'amsg mailings winner 12 14'],
  );
}
