import type { Command } from 'commander';
import { action, examples } from '../src/cli/context.js';
import { counted } from '../src/cli/describe.js';

export function register(seed: Command) {
  examples(
    seed
      .argument('<files...>', 'fixture files, JSON or YAML (.yaml/.yml), applied together')
      .option(
        '--reset',
        'first empty the account: members, groups, fields, subscriptions, searches, mailings, triggers (confirm, or --yes)',
      )
      .option(
        '--dry-run',
        'print what would be created, updated or left unchanged (and what --reset would delete, with counts); write nothing',
      )
      .description('seed the account from fixture files: records matched by name, created or updated; prints each name with its id')
      .action(
        action(async (ctx, files: string[], o: { reset?: boolean; dryRun?: boolean }) => {
          // The seeding code (and yaml and faker with it) loads only for this command.
          const { seed, describeSummary, reportSeedFailure, resetCounts } = await import('../src/cli/seed/seed.js');
          const api = await ctx.api();
          if (o.reset) {
            const doomed = (await resetCounts(api))
              .filter(([, n]) => n)
              .map(([kind, n]) => counted(n, kind === 'searches' ? 'search' : kind.slice(0, -1), kind));
            const deleting = doomed.length ? doomed.join(', ') : 'nothing (the account is empty)';
            if (o.dryRun) ctx.note(`--reset would delete ${deleting}`);
            else await ctx.confirm(`empty the account before seeding it, deleting ${deleting}`);
          }
          try {
            const result = await seed(api, files, { dryRun: o.dryRun, reset: o.reset, note: (m) => ctx.note(m) });
            for (const line of describeSummary(result, !!o.dryRun)) ctx.note(line);
            if (ctx.format === 'table')
              await ctx.print(
                Object.entries(result.ids).flatMap(([kind, ids]) =>
                  Object.entries(ids).map(([name, id]) => ({ kind, name, [o.dryRun ? 'plan' : 'id']: id })),
                ),
              );
            else await ctx.print(result.ids);
          } catch (err) {
            reportSeedFailure(ctx, err);
          }
        }),
      ),
    [
      'amsg seed fixtures/small.yaml',
      'amsg seed fixtures/small.yaml --dry-run',
      'amsg seed fixtures/ci.yaml --reset --yes --json | jq .groups.Gold',
      'AMSG_BASE_URL=http://127.0.0.1:8080 AMSG_API_KEY=pub:priv amsg seed fixtures/audience.json',
    ],
  );
}
