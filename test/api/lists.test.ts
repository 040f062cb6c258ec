import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { ROUTES } from '../../src/api/routes/index.js';
import { windowedList } from '../../src/api/routes/lists.js';

/** The windowed lists of one parent record, declared by one helper (src/api/routes/lists.ts). */

const WINDOWED = [
  'sms.campaigns.deliveries',
  'sms.campaigns.clicks',
  'workflows.runs',
  'events.member',
  'touchpoints.member',
  'response.sends',
  'response.opens',
  'response.links',
];

let s: TestService;
beforeAll(() => (s = makeService()));
afterAll(() => s.close());

describe('windowed list routes', () => {
  it.each(WINDOWED)('%s is a user GET with start, end and count=true', (op) => {
    const r = ROUTES.find((x) => x.op === op)!;
    expect(r).toBeDefined();
    expect([r.method, r.access]).toEqual(['GET', 'user']);
    expect(Object.keys((r.query!.json() as { properties: object }).properties)).toEqual(['start', 'end', 'count']);
    expect(r.returns).toMatch(/^array of .+, or an integer with count=true$/);
  });

  it('answers the encoded window, or the count; a bad parent id or window is a 400 naming it', async () => {
    const rows = [{ n: 1 }, { n: 2 }, { n: 3 }];
    const r = windowedList({
      op: 'things.list',
      path: '/{account_id}/things/{thing_id}',
      id: 'thing_id',
      summary: 'things',
      item: 'thing',
      list: (_ctx, id, w) => rows.slice(w.start ?? 0, w.end === undefined ? undefined : w.end + 1).map((x) => ({ ...x, id })),
      count: (_ctx, id) => rows.length * 10 + id,
      encode: (x) => `${x.id}:${x.n}`,
    });
    const call = (params: Record<string, string>, query: Record<string, string>) =>
      r.handler({ ctx: {} as never, params: r.params!.parse(params, ''), query: r.query!.parse(query, ''), body: {} });
    expect(call({ thing_id: '7' }, { start: '1', end: '2' })).toEqual(['7:2', '7:3']);
    expect(call({ thing_id: '7' }, { count: 'true' })).toBe(37);
    expect(() => call({ thing_id: 'x' }, {})).toThrow(/thing_id/);
    expect(() => call({ thing_id: '7' }, { start: '-1' })).toThrow(/start/);
    expect(r.returns).toBe('array of thing, or an integer with count=true');
    expect(r.extension).toBeUndefined();
  });
});
