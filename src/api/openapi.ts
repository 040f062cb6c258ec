import type { Route } from './route.js';
import { WINDOW_CUT_HEADER } from '../errors.js';

/** OpenAPI 3.1 document generated from the route table; extensions carry `x-amsg-extension: true`. */
export function openapiDocument(routes: Route[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const placeholders = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const paramProps = (r.params?.json().properties ?? {}) as Record<string, unknown>;
    const queryJson = r.query?.json() as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const parameters = [
      ...placeholders.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema:
          name === 'account_id' || name === 'parent_account_id'
            ? { type: 'integer', minimum: 1 }
            : (paramProps[name] ?? { type: 'string' }),
      })),
      ...Object.entries(queryJson?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: queryJson?.required?.includes(name) ?? false,
        schema,
      })),
    ];
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.op,
      summary: r.summary,
      ...(r.extension ? { 'x-amsg-extension': true } : {}),
      // The permission table: who may call the operation (ACCESS_NEEDS in src/service/accounts/accounts.ts).
      'x-amsg-access': r.access,
      parameters,
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body.json() } } } } : {}),
      responses: {
        200: {
          description: r.returns,
          ...(queryJson?.properties && 'start' in queryJson.properties && 'end' in queryJson.properties
            ? {
                headers: {
                  [WINDOW_CUT_HEADER]: {
                    description:
                      'Present when the window asked (start/end) was longer than 500: the answer holds its first 500 records. Reads `start=0; end=500; asked=1000000`.',
                    schema: { type: 'string' },
                  },
                },
              }
            : {}),
        },
        default: {
          description: 'error',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
            },
          },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Audience messaging service (amsg)',
      version,
      description:
        'Generated from the amsg route table. Operations marked x-amsg-extension are not in the service interface spec. ' +
        'x-amsg-access says who may call each: user (any user), manager (managers and owners), people (owners, managers with manage_users), billing (owners, users with billing access).',
    },
    components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
    security: [{ basic: [] }],
    paths,
  };
}
