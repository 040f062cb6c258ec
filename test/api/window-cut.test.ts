/**
 * A window longer than 500 (`start=0&end=1000000`, as real clients ask) is answered with
 * its first 500 records and WINDOW_CUT_HEADER, never a 400 (DESIGN.md), on every
 * windowed list of the route table, through the route table, the local transport and
 * HTTP alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../src/client/api.js';
import { LocalTransport } from '../../src/client/local-transport.js';
import { HttpTransport } from '../../src/client/http-transport.js';
import { initializeLocal, openLocal, type LocalService } from '../../src/api/local.js';
import { seed } from '../../src/cli/seed/seed.js';
import { ROUTES } from '../../src/api/routes/index.js';
import type { Route } from '../../src/api/route.js';
import { WINDOW_CUT_HEADER, type WindowCut } from '../../src/errors.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { fixedClock } from '../../src/service/clock.js';
import { jsonText } from '../../src/api/json-text.js';
import { fixture, SMALL_YAML_IDS } from '../fixtures.js';

let dir: string;
let file: string;
let api: Api;
let local: LocalService;
let importId: number;
const MEMBERS = 4 + 600;

beforeAll(async () => {
  process.env.AMSG_NOW = '2026-05-06T07:08:09Z';
  dir = mkdtempSync(join(tmpdir(), 'amsg-window-cut-'));
  file = join(dir, 'amsg.db');
  initializeLocal(file, { hq: true });
  api = new Api(new LocalTransport(file, 1), 1);
  await seed(api, [fixture('small.yaml')]);
  importId = ((await api.post('/members/imports', {})) as { import_id: number }).import_id;
  const members = Array.from({ length: 600 }, (_, i) => ({ email: `w${i}@example.com` }));
  await api.post(`/members/imports/${importId}/rows`, { members });
  await api.post(`/members/imports/${importId}/finish`, {});
  local = openLocal(file, 1);
}, 60_000);
afterAll(async () => {
  await api?.close();
  await local?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An existing record's id for each placeholder a windowed list's path has. */
const ids = (): Record<string, number> => ({
  account_id: 1,
  parent_account_id: 1,
  mailing_id: SMALL_YAML_IDS.mailings.Welcome,
  member_id: SMALL_YAML_IDS.members['ada@example.com'],
  import_id: importId,
  member_group_id: SMALL_YAML_IDS.groups.Gold,
  subscription_id: SMALL_YAML_IDS.subscriptions['Product news'],
  search_id: SMALL_YAML_IDS.searches.Oslo,
  campaign_id: SMALL_YAML_IDS.sms_campaigns['Flash sale'],
  user_id: 1,
  workflow_id: SMALL_YAML_IDS.workflows['Web buyers'],
});

const windowed = ROUTES.filter((r) => {
  const properties = (r.query?.json() as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return r.method === 'GET' && 'start' in properties && 'end' in properties;
});

const pathOf = (route: Route) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids()[name];
    if (id === undefined) throw new Error(`no id for {${name}} of ${route.path}: add one to ids()`);
    return String(id);
  });

/** One request through the route table, its body as the JSON a client reads. */
const get = async (route: Route | string, query: Record<string, string>) => {
  const res = await local.router.handle({
    method: 'GET',
    path: typeof route === 'string' ? route : pathOf(route),
    query,
    actor: local.actor,
  });
  return { ...res, body: JSON.parse(jsonText(res.body ?? null)) };
};

const listOf = (body: unknown) =>
  Array.isArray(body) ? body : Object.values(body as Record<string, unknown>).find((v) => Array.isArray(v));

describe('a window longer than 500', () => {
  it('the route table has windowed lists (members, groups, reports, …)', () => {
    expect(windowed.map((r) => r.op)).toEqual(
      expect.arrayContaining(['members.list', 'groups.list', 'response.opens', 'subaccounts.list']),
    );
  });

  it.each(windowed.map((r) => [r.op, r] as const))('%s: answered (not a 400), cut to 500, and the header says so', async (_op, route) => {
    const asked = await get(route, { start: '0', end: '1000000' });
    expect([asked.status, asked.headers?.[WINDOW_CUT_HEADER]], JSON.stringify(asked.body)).toEqual([
      200,
      'start=0; end=500; asked=1000000',
    ]);
    expect(listOf(asked.body)?.length ?? 0).toBeLessThanOrEqual(500);
    // The same records as the window of 500 itself, which is not cut and says nothing.
    const exact = await get(route, { start: '0', end: '500' });
    expect([exact.status, exact.headers?.[WINDOW_CUT_HEADER]]).toEqual([200, undefined]);
    expect(asked.body).toEqual(exact.body);
    const later = await get(route, { start: '7', end: '508' });
    expect(later.headers?.[WINDOW_CUT_HEADER]).toBe('start=7; end=507; asked=508');
    // A window whose end is before its start is still a bad window.
    expect((await get(route, { start: '10', end: '9' })).status).toBe(400);
  });

  it('GET /members?start=0&end=1000000 answers the first 500 members; start=100 the 500 after the first 100', async () => {
    const idsOf = (res: { body: unknown }) => (res.body as { member_id: number }[]).map((m) => m.member_id);
    // Every listed member (the archived one is not), a window of 500 at a time.
    const all = [
      ...idsOf(await get('/1/members', { start: '0', end: '500' })),
      ...idsOf(await get('/1/members', { start: '500', end: '1000' })),
    ];
    expect(all).toHaveLength(MEMBERS - 1);
    const first = await get('/1/members', { start: '0', end: '1000000' });
    expect(idsOf(first)).toEqual(all.slice(0, 500));
    const later = await get('/1/members', { start: '100', end: '1000000' });
    expect(idsOf(later)).toEqual(all.slice(100, 600));
    expect(later.headers?.[WINDOW_CUT_HEADER]).toBe('start=100; end=600; asked=1000000');
    // A count is a number, not a window: answered, and no window is said to be cut.
    const count = await get('/1/members', { count: 'true', start: '0', end: '1000000' });
    expect([count.status, count.body, count.headers?.[WINDOW_CUT_HEADER]]).toEqual([200, MEMBERS - 1, undefined]);
  });

  it('the local transport tells its listener; so does the HTTP transport, from the header amsg serve sends', async () => {
    const cuts: WindowCut[] = [];
    api.transport.onWindowCut = (cut) => cuts.push(cut);
    expect(((await api.get('/members', { start: 2, end: 100_000 })) as unknown[]).length).toBe(500);
    expect(((await api.get('/members', { start: 2, end: 502 })) as unknown[]).length).toBe(500);
    expect(cuts).toEqual([{ start: 2, end: 502, asked: 100_000 }]);

    const server: RunningServer = await startServer({ db: local.db, clock: fixedClock('2026-05-06T07:08:09Z') });
    const key = (await api.post('/keys', { label: 'window' })) as { public_key: string; private_key: string };
    const http = new HttpTransport({ baseUrl: server.url, apiKey: `${key.public_key}:${key.private_key}` });
    try {
      const res = await fetch(`${server.url}/1/members?start=0&end=1000000`, {
        headers: { authorization: `Basic ${Buffer.from(`${key.public_key}:${key.private_key}`).toString('base64')}` },
      });
      expect([res.status, res.headers.get(WINDOW_CUT_HEADER), ((await res.json()) as unknown[]).length]).toEqual([
        200,
        'start=0; end=500; asked=1000000',
        500,
      ]);
      const remoteCuts: WindowCut[] = [];
      http.onWindowCut = (cut) => remoteCuts.push(cut);
      const page = (await http.request({ method: 'GET', path: '/1/members', query: { start: 0, end: 1_000_000 } })) as unknown[];
      expect([page.length, remoteCuts]).toEqual([500, [{ start: 0, end: 500, asked: 1_000_000 }]]);
    } finally {
      await http.close();
      await server.close();
    }
  });
});
