import type { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { collect } from '../src/cli/resolve.js';
import type { Method } from '../src/client/transport.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function register(api: Command) {
  examples(
    api
      .command('spec')
      .description('the OpenAPI document generated from the route table')
      .action(
        action(async (ctx) => {
          const client = await ctx.api({ anonymous: true });
          await ctx.print(await client.transport.request({ method: 'GET', path: '/openapi.json' }));
        }),
      ),
    ['amsg api spec --json > openapi.json'],
  );

  examples(
    api
      .command('call <method> <path>')
      .description('send one request; the path is absolute, e.g. /1/members')
      .option('--data <json>', 'request body (JSON)')
      .option('--query <name=value>', 'query parameter (repeatable)', collect)
      .action(
        action(async (ctx, method: string, path: string, o: { data?: string; query?: string[] }) => {
          const m = method.toUpperCase();
          if (!METHODS.includes(m)) throw new UsageError(`method must be one of ${METHODS.join(', ')}`);
          if (!path.startsWith('/')) throw new UsageError('the path starts with /, e.g. /1/members');
          let body: unknown;
          if (o.data !== undefined) {
            try {
              body = JSON.parse(o.data);
            } catch (err) {
              throw new UsageError(`--data is not JSON: ${(err as Error).message}`);
            }
          }
          const query: Record<string, string> = {};
          for (const pair of o.query ?? []) {
            const eq = pair.indexOf('=');
            if (eq < 1) throw new UsageError(`--query takes name=value, got "${pair}"`);
            query[pair.slice(0, eq)] = pair.slice(eq + 1);
          }
          const client = await ctx.api();
          await ctx.print(await client.transport.request({ method: m as Method, path, query, body }));
        }),
      ),
    ['amsg api call GET /1/members --query count=true', `amsg api call POST /1/members/add --data '{"email":"a@b.co"}'`],
  );
}
