/**
 * Isolation between accounts, generated from the route table, so a route added later
 * is probed without anyone remembering to. Two HQ families: HQ 1 with sub-accounts A
 * (the victim, one record of each kind) and C, and HQ 2 with sub-account B. For every
 * route:
 *
 * 1. keys with no access to the account in the path (the other HQ's owner, the owner of
 *    a sibling sub-account, and an HQ manager whose access list lacks A) call it with the
 *    victim's account and record ids: each must answer 401, 403 or 404;
 * 2. a key of the other family (HQ 2's owner, on its own HQ or on B) calls it naming the
 *    victim's record ids in the path and the body: a route whose path names a record
 *    must answer 401, 403 or 404; one that names records only in its body may refuse
 *    them (4xx) or pass them over exactly as it passes over an id that exists nowhere
 *    (the same answer), which tells nothing.
 *
 * After every request, a digest of the victim family's rows (every table with
 * account_id, and every table naming one of their records) must be unchanged. The
 * suite counts the routes it probed and asserts the count is the route table's length.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { authenticate, createKey, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { ROUTES } from '../../src/api/routes/index.js';
import type { Route } from '../../src/api/route.js';
import type { Actor } from '../../src/service/context.js';
import { ok } from './util.js';
import { configureMail } from '../../src/service/mail/settings.js';

let s: TestService;
const HQ1 = 1;
let A: number;
let C: number;
let HQ2: number;
let B: number;
const keys: Record<'otherHq' | 'sibling' | 'noList' | 'attacker', Actor> = {} as never;
/** The victim's record ids (and a few other values), by the names placeholders and body keys give them. */
let victim: Record<string, (number | string)[]>;

type JsonSchema = {
  type?: string | string[];
  enum?: string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  minItems?: number;
};

const send = (actor: Actor, method: string, path: string, body?: unknown) =>
  Promise.resolve(s.router.handle({ method, path, query: {}, body: body === undefined ? undefined : JSON.stringify(body), actor })).then(
    (r) => ({
      status: r.status,
      body: r.raw ? '(file)' : (r.body as unknown),
    }),
  );

/** An actor as the server would make it from a fresh key of that user. */
function keyOf(accountId: number, email: string): Actor {
  const userId = s.db.prepare('SELECT user_id FROM users WHERE account_id = ? AND email = ?').pluck().get(accountId, email) as number;
  const ctx = { db: s.db, clock: s.clock, actor: localActor(s.db, accountId), accountId };
  const key = createKey(ctx, { user_id: userId });
  return authenticate(s.db, key.public_key, key.private_key)!;
}

/** Every row of the given accounts, in every table that has account_id or names one of their records. */
function digest(accounts: number[]): string {
  const tables = s.db
    .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`)
    .pluck()
    .all() as string[];
  const columns = (t: string) =>
    s.db.prepare('SELECT name, pk, type FROM pragma_table_info(?)').all(t) as { name: string; pk: number; type: string }[];
  const list = `(${accounts.join(',')})`;
  const owners = new Map<string, string>(); // key column → table
  for (const t of tables) {
    const cols = columns(t);
    const pk = cols.filter((c) => c.pk > 0);
    if (cols.some((c) => c.name === 'account_id') && pk.length === 1 && pk[0].type === 'INTEGER') owners.set(pk[0].name, t);
  }
  return JSON.stringify(
    tables.map((t) => {
      const cols = columns(t).map((c) => c.name);
      if (cols.includes('account_id')) return s.db.prepare(`SELECT * FROM "${t}" WHERE account_id IN ${list} ORDER BY 1, 2`).all();
      const links = cols.filter((c) => owners.has(c));
      if (!links.length) return [];
      const where = links.map((c) => `"${c}" IN (SELECT "${c}" FROM "${owners.get(c)}" WHERE account_id IN ${list})`).join(' OR ');
      return s.db.prepare(`SELECT * FROM "${t}" WHERE ${where} ORDER BY 1, 2`).all();
    }),
  );
}

const VICTIMS = () => [HQ1, A];

beforeAll(async () => {
  s = makeService(T0);
  initialize(s.db, s.clock, { hq: true });
  A = (await ok(s, 'POST', '/1/enterprise/subaccount', { body: { account_name: 'A' } })).account_id;
  C = (await ok(s, 'POST', '/1/enterprise/subaccount', { body: { account_name: 'C' } })).account_id;
  // A second HQ family, set up as the first: an HQ account and its owner, and a sub-account.
  HQ2 = Number(
    s.db.prepare(`INSERT INTO accounts (account_name, is_hq, created_at) VALUES ('HQ 2', 1, '2026-01-01T00:00:00.000000')`).run()
      .lastInsertRowid,
  );
  s.db
    .prepare(
      `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at) VALUES (?, 'owner@hq2.org', 'owner', 1, 1, '2026-01-01T00:00:00.000000')`,
    )
    .run(HQ2);
  keys.attacker = keyOf(HQ2, 'owner@hq2.org');
  B = ((await send(keys.attacker, 'POST', `/${HQ2}/enterprise/subaccount`, { account_name: 'B' })).body as { account_id: number })
    .account_id;
  keys.otherHq = keys.attacker;
  keys.sibling = keyOf(C, 'owner@localhost');
  await ok(s, 'POST', '/1/users', { body: { email: 'manager@hq1.org', role: 'manager', manage_users: true } });
  keys.noList = keyOf(HQ1, 'manager@hq1.org');
  await ok(s, 'PUT', `/1/enterprise/${keys.noList.user_id}/subaccounts`, { body: { accounts: [C] } });

  // Real mail configured (nothing delivers here: no deliverer runs), so each account queues a test send.
  configureMail(s.db, { smtp: { host: '127.0.0.1', port: 9, secure: false, display: 'smtp://127.0.0.1:9' }, allow: [] });
  await seed(keys.attacker, B, 'b');
  await seed(localActor(s.db, A), A, 'a');
  await ok(s, 'POST', '/1/users', { body: { email: 'user@hq1.org', role: 'user' } });
  while (advanceJobs(s.db, s.clock, 50));
  victim = poolsOf(A);
}, 60_000);

afterAll(() => s.close());

/** One record of each kind in an account. */
async function seed(actor: Actor, account: number, tag: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await send(actor, method, `/${account}${path}`, body);
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as any;
  };
  // A webhook first, so the writes below leave events and deliveries in its outbox.
  await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', event: 'member_add' });
  await call('POST', '/fields', { shortcut_name: `${tag}_city`, field_type: 'text', display_name: `${tag} city` });
  // Two option fields and a relationship between them.
  const region = await call('POST', '/fields', {
    shortcut_name: `${tag}_region`,
    field_type: 'text',
    display_name: 'Region',
    widget_type: 'select one',
    options: ['EU', 'US'],
  });
  const office = await call('POST', '/fields', {
    shortcut_name: `${tag}_office`,
    field_type: 'text',
    display_name: 'Office',
    widget_type: 'radio',
    options: ['Oslo', 'Austin'],
  });
  await call('POST', '/fields/relationships', {
    relationship_name: `${tag} region`,
    parent_field_id: region,
    child_field_id: office,
    options: { EU: ['Oslo'] },
  });
  const [gold] = (await call('POST', '/groups', { groups: [{ group_name: `${tag} gold` }, { group_name: `${tag} silver` }] })).map(
    (g: any) => g.member_group_id,
  );
  const members: number[] = [];
  for (let i = 0; i < 3; i++)
    members.push((await call('POST', '/members/add', { email: `${tag}${i}@example.org`, group_ids: [gold] })).member_id);
  await call('PUT', '/members/status', { member_ids: [members[2]], status_to: 'o' });
  const sub = await call('POST', '/subscriptions', { name: `${tag} news` });
  await call('POST', `/subscriptions/${sub.subscription_id}/members/bulk`, { member_ids: members.slice(0, 2) });
  await call('POST', '/searches', { name: `${tag} search`, criteria: ['member_status_id', 'eq', 'a'] });
  const mailing = await call('POST', '/mailings', {
    name: `${tag} mailing`,
    subject: 'Hi',
    sender: `${tag}@example.org`,
    html_body: '<p><a href="https://example.org/x">x</a> [% optout_url %]</p>',
    recipient_groups: [gold],
  });
  while (advanceJobs(s.db, s.clock, 50));
  await call('POST', '/mailings', {
    name: `${tag} later`,
    subject: 'Later',
    sender: `${tag}@example.org`,
    html_body: '<p>[% optout_url %]</p>',
    recipient_groups: [gold],
    send_at: '2030-01-01T00:00:00Z',
  });
  await call('POST', '/triggers', { name: `${tag} trigger`, parent_mailing_id: mailing.mailing_id ?? mailing, event_type: 's' });
  const imp = await call('POST', '/members/imports', { source_name: `${tag} import` });
  await call('POST', `/members/imports/${imp.import_id}/rows`, { columns: ['email'], rows: [[`${tag}-i@example.org`]], offset: 0 });
  await call('POST', '/exports', { user_id: `${tag}@example.org` });
  await call('POST', `/exports/members/${members[0]}`, {});
  // SMS: a campaign sent to a member with a phone number, with a short link and a click.
  await call('PUT', `/members/${members[0]}`, { sms: { phone_number: `+47912345${tag === 'a' ? '01' : '02'}` } });
  const campaign = await call('POST', '/sms/campaigns', {
    sms_campaign_name: `${tag} sms`,
    message: 'Sale https://example.org/s',
    from_phone_number: '+15555550100',
    recipients: { members: [members[0]] },
    shorten_links: true,
  });
  await call('POST', `/sms/campaigns/${campaign}/send`, {});
  while (advanceJobs(s.db, s.clock, 50));
  await call('POST', `/sms/campaigns/${campaign}/sim/click`, { member_id: members[0] });
  // Member events and touchpoints with their types, a workflow, and an ingested event it ran for.
  const eventType = (await call('POST', '/events', { event_type: `${tag}_purchase`, display_name: 'Purchase' })).event_type_id;
  const touchpointType = (await call('POST', '/touchpoints', { type_name: `${tag}_web`, display_name: 'Web' })).touchpoint_type_id;
  await call('POST', '/events/members', { events: [{ member_id: members[0], event_type_id: eventType }] });
  await call('POST', '/touchpoints/members', { touchpoints: [{ member_id: members[0], touchpoint_type_id: touchpointType }] });
  await call('POST', '/workflows', {
    name: `${tag} buyers`,
    match: { type: 'purchase' },
    actions: [{ type: 'add_to_groups', group_ids: [gold] }],
  });
  // A test send over SMTP: one queued message in the mail log.
  await call('POST', `/mailings/${mailing.mailing_id ?? mailing}/test`, { recipient_emails: [`${tag}-test@example.org`] });
  const inbound = await send(actor, 'POST', `/v1/${account}/events`, { email: `${tag}0@example.org`, type: 'purchase' });
  if (inbound.status !== 200) throw new Error(`POST /v1/${account}/events: ${inbound.status} ${JSON.stringify(inbound.body)}`);
  while (advanceJobs(s.db, s.clock, 50));
  await call('POST', '/keys', {
    label: `${tag} key`,
    user_id: s.db.prepare('SELECT user_id FROM users WHERE account_id = ? ORDER BY user_id').pluck().get(account),
  });
}

/** The victim's ids by the names the route table gives them (placeholders and body keys). */
function poolsOf(account: number): Record<string, (number | string)[]> {
  const ids = (sql: string, arg: number = account) => s.db.prepare(sql).pluck().all(arg) as number[];
  const members = ids('SELECT member_id FROM members WHERE account_id = ? ORDER BY member_id');
  const groups = ids('SELECT member_group_id FROM member_groups WHERE account_id = ? ORDER BY 1');
  const searches = ids('SELECT search_id FROM searches WHERE account_id = ?');
  const mailings = ids('SELECT mailing_id FROM mailings WHERE account_id = ? ORDER BY 1');
  const subscriptions = ids('SELECT subscription_id FROM subscriptions WHERE account_id = ?');
  const users = ids('SELECT user_id FROM users WHERE account_id = ? ORDER BY 1', HQ1);
  // Every table with account_id and an integer key, by its key's name (a resource added
  // later is found here; the names below are the route table's other names for them).
  const byKey: Record<string, number[]> = {};
  for (const table of s.db
    .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'accounts'`)
    .pluck()
    .all() as string[]) {
    const cols = s.db.prepare('SELECT name, pk, type FROM pragma_table_info(?)').all(table) as { name: string; pk: number; type: string }[];
    const pk = cols.filter((c) => c.pk > 0);
    if (cols.some((c) => c.name === 'account_id') && pk.length === 1 && pk[0].type === 'INTEGER' && pk[0].name !== 'account_id')
      byKey[pk[0].name] = ids(`SELECT "${pk[0].name}" FROM "${table}" WHERE account_id = ? ORDER BY 1`);
  }
  return {
    ...byKey,
    member_id: members,
    group_id: groups,
    member_group_id: groups,
    to_group_id: groups,
    mailing_id: mailings,
    trigger_id: ids('SELECT trigger_id FROM triggers WHERE account_id = ?'),
    import_id: ids('SELECT import_id FROM member_imports WHERE account_id = ?'),
    export_id: ids('SELECT export_id FROM exports WHERE account_id = ?'),
    subscription_id: subscriptions,
    search_id: searches,
    segment_id: searches,
    field_id: ids('SELECT field_id FROM fields WHERE account_id = ?'),
    key_id: ids('SELECT k.key_id FROM api_keys k JOIN users u ON u.user_id = k.user_id WHERE u.account_id = ?'),
    // The HQ routes' records: the victim HQ's sub-account and a user of it below the owner.
    campaign_id: byKey.sms_campaign_id ?? [],
    subaccount_id: [account],
    user_id: users.slice(-1),
    email: s.db.prepare('SELECT email FROM members WHERE account_id = ? ORDER BY member_id').pluck().all(account) as string[],
    // Placeholders that are not records.
    status_from: ['a'],
    status_to: ['o'],
    kind: ['open'],
    winner_id: [1],
  };
}

/** Placeholders that name a record (not an account, not a status or a kind). */
const NOT_RECORDS = new Set(['account_id', 'parent_account_id', 'status_from', 'status_to', 'kind', 'winner_id']);
const recordPlaceholders = (route: Route) => [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((n) => !NOT_RECORDS.has(n));

/** The pool a placeholder or body key draws from: its name, or its name less a plural or a prefix. */
function poolFor(key: string): (number | string)[] | undefined {
  for (const name of [
    key,
    key.replace(/s$/, ''),
    key.replace(/_ids$/, '_id'),
    key.replace(/^(recipient|suppressed)_/, '').replace(/s$/, '_id'),
    key.replace(/^(recipient|suppressed)_/, '').replace(/_ids$/, '_id'),
  ]) {
    if (victim[name]) return victim[name];
    if (name === 'group_id' || name === 'groups_id' || name === 'group') return victim.member_group_id;
    if (name === 'segment' || name === 'search') return victim.search_id;
    if (name === 'subscription') return victim.subscription_id;
  }
  return undefined;
}

function pathOf(route: Route, account: number, parent: number): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'account_id') return String(account);
    if (name === 'parent_account_id') return String(parent);
    const pool = poolFor(name);
    if (!pool?.length)
      throw new Error(
        `the isolation suite has no victim record for {${name}} of ${route.op}: create one in seed() (and name it in poolsOf if its key is not ${name})`,
      );
    return encodeURIComponent(String(pool[0]));
  });
}

/**
 * Bodies the route may accept in shape, whose ids are the victim's: the required keys
 * and one optional key that names records, then every key. Each answers whether it
 * names a record; `ghost` puts an id that exists nowhere in place of every victim id.
 */
function bodiesOf(route: Route, ghost = false): { body: unknown; names: boolean }[] {
  if (!route.body) return [{ body: undefined, names: false }];
  const build = (full: boolean) => {
    let names = false;
    const value = (schema: JsonSchema | undefined, key: string, required: boolean): unknown => {
      if (!schema) return undefined;
      if (schema.anyOf) return value(schema.anyOf[0], key, required);
      const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
      if (schema.enum) return schema.enum[0];
      const pool = poolFor(key)?.filter((v) => typeof v === 'number');
      switch (type) {
        case 'object': {
          const out: Record<string, unknown> = {};
          let optionalRecords = 0;
          for (const [k, sub] of Object.entries(schema.properties ?? {})) {
            const need = schema.required?.includes(k) ?? false;
            const namesRecords = !!poolFor(k)?.some((v) => typeof v === 'number');
            if (!need && !full && !(namesRecords && optionalRecords++ === 0)) continue;
            const v = value(sub, k, need);
            if (v !== undefined) out[k] = v;
          }
          return out;
        }
        case 'array': {
          if (key === 'criteria') return ['member_status_id', 'eq', 'a'];
          const item = value(schema.items, key, true);
          return item === undefined ? [] : [item];
        }
        case 'integer':
          if (pool?.length) {
            names = true;
            return ghost ? 9_000_000_001 : pool[0];
          }
          return required || full ? 1 : undefined;
        case 'number':
          return 1;
        case 'boolean':
          return false;
        case 'string':
          if (schema.format === 'email') return 'probe@example.org';
          if (schema.format === 'date-time') return '2030-01-01T00:00:00Z';
          if (key === 'criteria') return '["member_status_id","eq","a"]';
          if (key === 'url') return 'https://example.org/probe';
          return `probe ${key}`.padEnd((schema as { minLength?: number }).minLength ?? 0, '.');
        default:
          return required ? 'probe' : undefined;
      }
    };
    const body = value(route.body!.json() as JsonSchema, '', true);
    return { body, names };
  };
  return [build(false), build(true)];
}

const DENIED = [401, 403, 404];

describe('isolation, generated from the route table', () => {
  it('no key reaches an account it has no access to, nor another account’s records by id, on any route', async () => {
    const before = digest(VICTIMS());
    const failures: string[] = [];
    let probed = 0;
    const unchanged = (what: string) => {
      if (digest(VICTIMS()) !== before) throw new Error(`${what} changed the victim's data`);
    };
    for (const route of ROUTES) {
      const bodies = bodiesOf(route);
      const onHq = route.path.startsWith('/{parent_account_id}');
      // 1. Keys without access to the path's account.
      const strangers = onHq ? [keys.otherHq, keys.sibling] : [keys.otherHq, keys.sibling, keys.noList];
      for (const actor of strangers)
        for (const { body } of bodies) {
          const res = await send(actor, route.method, pathOf(route, A, HQ1), body);
          if (!DENIED.includes(res.status))
            failures.push(`${route.op} as ${actor.email} on account ${A}: ${res.status} ${JSON.stringify(res.body)}`);
          unchanged(`${route.op} as ${actor.email}`);
        }
      // 2. A key of the other family, on its own account, naming the victim's records:
      // the first body that is not refused for its shape is the probe.
      const path = pathOf(route, B, HQ2);
      let res: { status: number; body: unknown } | undefined;
      let probe = bodies[0];
      for (const candidate of bodies) {
        probe = candidate;
        res = await send(keys.attacker, route.method, path, candidate.body);
        unchanged(`${route.op} naming the victim's records`);
        if (res.status !== 400) break;
      }
      const answer = `${res!.status} ${JSON.stringify(res!.body).slice(0, 200)}`;
      if (recordPlaceholders(route).length) {
        if (!DENIED.includes(res!.status)) failures.push(`${route.op} naming account ${A}'s records in its path from ${B}: ${answer}`);
      } else if (probe.names && res!.status < 300) {
        // Named only in the body, they may be passed over as ids that exist nowhere
        // are: the same answer as for such an id tells nothing and changed nothing.
        const ghost = await send(keys.attacker, route.method, path, bodiesOf(route, true)[bodies.indexOf(probe)].body);
        if (ghost.status !== res!.status || JSON.stringify(ghost.body) !== JSON.stringify(res!.body))
          failures.push(
            `${route.op} naming account ${A}'s records in its body from ${B}: ${answer}, but ${ghost.status} ${JSON.stringify(ghost.body)} for an id that exists nowhere`,
          );
      }
      probed++;
    }
    console.log(`isolation: probed ${probed} routes of ${ROUTES.length}`);
    expect(failures).toEqual([]);
    expect(probed).toBe(ROUTES.length);
  }, 120_000);

  it('the probes reach real records: the victim has one of each kind, and its owner reaches them', async () => {
    for (const [name, pool] of Object.entries(victim)) expect(pool.length, name).toBeGreaterThan(0);
    const owner = localActor(s.db, A);
    for (const route of ROUTES.filter((r) => r.method === 'GET' && recordPlaceholders(r).length && !r.path.startsWith('/{parent'))) {
      const res = await send(owner, 'GET', pathOf(route, A, HQ1));
      expect([200, 400], `${route.op}: ${JSON.stringify(res.body)}`).toContain(res.status);
    }
  });
});
