/**
 * A seeded, bounded fuzz of every route of the route table over real HTTP (`startServer`).
 *
 * It sends what clients get wrong and what attackers try: wrong types, huge numbers,
 * deep nesting, unknown keys (with names outside Latin-1), invalid percent-encoding and invalid UTF-8 in paths,
 * queries and bodies, bodies over the 10 MB limit, and a second account's key. It
 * fails on
 *   - a 5xx the spec does not document (it documents one: a 500 for an invalid `type` of
 *     GET …/mailings/{mailing_id}/messages/{member_id});
 *   - an error answer that is not a JSON object with a string `error`, or a success with one;
 *   - a cross-account leak: the second account's key must get a 404 for every path of
 *     account 1, see none of account 1's data through its own paths (every name, address
 *     and value of account 1 carries the marker "acct1"), and change none of it.
 *
 * The seed is printed with every failure; AMSG_FUZZ_SEED=N replays one run and
 * AMSG_FUZZ_REQUESTS=N sets its length (default 3,000 requests, well under a minute).
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { fixedClock } from '../../src/service/clock.js';
import { createKey, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { BODY_LIMIT, startServer, type RunningServer } from '../../src/server/server.js';
import { ROUTES } from '../../src/api/routes/index.js';
import type { Route } from '../../src/api/route.js';
import { IGNORED_HEADER } from '../../src/api/router.js';
import { serve } from '../../src/server/index.js';

const SEED = Number(process.env.AMSG_FUZZ_SEED ?? 20_260_304);
const REQUESTS = Number(process.env.AMSG_FUZZ_REQUESTS ?? 3_000);

// ------------------------------------------------------------------ randomness

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    chance: (p: number) => next() < p,
    pick: <T>(list: readonly T[]): T => list[int(list.length)],
  };
}
type Rng = ReturnType<typeof prng>;

// ------------------------------------------------------------------ hostile values

/** JSON text put into a body as it is (numbers JSON.stringify cannot write, nesting, raw bytes). */
class Raw {
  constructor(readonly bytes: Buffer) {}
}
const raw = (text: string | Buffer) => new Raw(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);

/** Deep nesting, as text: a value built as nested arrays would overflow JSON.stringify itself. */
const DEEP_LEVELS = [65, 1_000, 20_000] as const;
const deep = (rng: Rng) => {
  const n = rng.pick(DEEP_LEVELS);
  return rng.chance(0.5) ? raw('['.repeat(n) + '"x"' + ']'.repeat(n)) : raw('{"a":'.repeat(n) + '1' + '}'.repeat(n));
};

const HUGE_NUMBERS = [
  raw('1e400'),
  raw('-1e400'),
  raw('123456789012345678901234567890'),
  raw('9007199254740993'),
  raw('-9007199254740993'),
  raw('1e-400'),
  raw('-0'),
  1e308,
  -1e308,
  2 ** 53,
  2 ** 31,
  -1,
  0,
  0.5,
];

/** Strings whose bytes are not valid UTF-8, or whose code points are unusual. */
const BAD_TEXT = [
  raw(Buffer.from([0x22, 0xff, 0xfe, 0x22])), // "\xff\xfe"
  raw(Buffer.from([0x22, 0xc3, 0x28, 0x22])), // an invalid two-byte sequence
  raw(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), // a surrogate encoded as UTF-8
  raw(Buffer.from([0x22, 0xc0, 0xaf, 0x22])), // an overlong "/"
  raw('"\\ud800"'), // a lone surrogate, escaped
  raw('"\\udfff\\ud800"'),
  'a\u0000b',
  '\u202eacct2@example.org',
  '😀'.repeat(300),
  'x'.repeat(70_000),
  '',
  ' ',
  '%',
  '__proto__',
  'constructor',
  "'; DROP TABLE members; --",
  '[% member:email %]',
];

function anyJson(rng: Rng, depth = 0): unknown {
  switch (rng.int(depth > 2 ? 6 : 8)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(HUGE_NUMBERS);
    case 3:
      return rng.pick(BAD_TEXT);
    case 4:
      return rng.int(10);
    case 5:
      return `s${rng.int(1000)}`;
    case 6:
      return Array.from({ length: rng.int(4) }, () => anyJson(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: rng.int(4) }, () => [rng.pick(['a', 'email', '__proto__', 'constructor', 'x y']), anyJson(rng, depth + 1)]),
      );
  }
}

// ------------------------------------------------------------------ values from the route table's schemas

type JsonSchema = {
  type?: string | string[];
  enum?: string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
};

/** Record ids that exist, per placeholder or body key (refreshed as the run goes). */
type Pools = Record<string, (number | string)[]>;

/** A value for a schema: mostly what it asks for (so routes are reached), sometimes hostile. */
function fromSchema(rng: Rng, schema: JsonSchema | undefined, key: string, pools: Pools, depth = 0): unknown {
  if (rng.chance(depth === 0 ? 0.04 : 0.08)) return hostile(rng);
  if (!schema) return anyJson(rng);
  if (schema.anyOf) return fromSchema(rng, rng.pick(schema.anyOf), key, pools, depth);
  const type = Array.isArray(schema.type) ? rng.pick(schema.type) : schema.type;
  if (schema.enum) return rng.chance(0.9) ? rng.pick(schema.enum) : `${rng.pick(schema.enum)}x`;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(schema.properties ?? {}))
        if (schema.required?.includes(k) ? rng.chance(0.95) : rng.chance(0.45)) out[k] = fromSchema(rng, s, k, pools, depth + 1);
      // Free-form objects (member fields, import rows): the account's field names, with any value.
      if (!schema.properties)
        for (let i = rng.int(4); i > 0; i--)
          out[rng.pick(pools.field_name ?? ['email'])] = rng.chance(0.8) ? anyJson(rng, depth) : hostile(rng);
      // Unknown keys too, named in a response header: some with names no header can carry as they are.
      if (rng.chance(0.05)) out[rng.pick(['surprise', 'email', 'first_name', '__proto__', '北京', '\ud800', 'a\nb'])] = anyJson(rng);
      return out;
    }
    case 'array': {
      // Search criteria: a condition list, nested a little or very deep.
      if (key === 'criteria' && rng.chance(0.7)) return raw(String(stringFor(rng, { type: 'string' }, key, pools)));
      const min = schema.minItems ?? 0;
      const n = rng.chance(0.05) ? 0 : min + rng.int(4);
      return Array.from({ length: n }, () => fromSchema(rng, schema.items, key.replace(/s$/, ''), pools, depth + 1));
    }
    case 'integer':
      return integerFor(rng, key, pools);
    case 'number':
      return rng.chance(0.7) ? rng.int(100) / 4 : rng.pick(HUGE_NUMBERS);
    case 'boolean':
      return rng.chance(0.9) ? rng.chance(0.5) : rng.pick(['true', 1, 'yes', null]);
    case 'string':
      return stringFor(rng, schema, key, pools);
    default:
      return anyJson(rng, depth);
  }
}

function integerFor(rng: Rng, key: string, pools: Pools): unknown {
  const pool = pools[key] ?? pools[`${key}s`] ?? pools[key.replace(/_ids?$/, '_id')];
  const r = rng.next();
  if (pool?.length && r < 0.6) return Number(rng.pick(pool));
  if (key === 'offset' && r < 0.8) return rng.int(3);
  if (r < 0.85) return 1 + rng.int(20);
  return rng.pick(HUGE_NUMBERS);
}

function stringFor(rng: Rng, schema: JsonSchema, key: string, pools: Pools): unknown {
  const r = rng.next();
  if (schema.format === 'email' || /email|user_id/.test(key))
    return r < 0.7
      ? pools.email?.length && rng.chance(0.5)
        ? rng.pick(pools.email)
        : `fuzz${rng.int(50)}@example.org`
      : rng.pick(['not-an-address', '@', 'a@b', ...BAD_TEXT]);
  if (schema.format === 'date-time')
    return r < 0.7
      ? rng.pick(['2026-05-01T09:00:00Z', '@D:2026-05-01T09:00:00', '2026-05-01T09:00:00+02:00'])
      : rng.pick(['2026-13-45T99:99:99Z', '@D:', 'yesterday', ...BAD_TEXT]);
  if (key === 'criteria') {
    const n = rng.pick([1, 40, ...DEEP_LEVELS]);
    return rng.pick([
      '["member_status_id","eq","a"]',
      '["and",["group","eq",1],["member_field:acct1_city","eq","acct1town"]]',
      '[',
      'null',
      '"x"',
      '['.repeat(n) + '["member_status_id","eq","a"]' + ']'.repeat(n),
      '["not",'.repeat(n) + '["member_status_id","eq","a"]' + ']'.repeat(n),
    ]);
  }
  if (r < 0.75) return `fuzz ${key} ${rng.int(1000)}`;
  return rng.pick(BAD_TEXT);
}

function hostile(rng: Rng): unknown {
  switch (rng.int(5)) {
    case 0:
      return deep(rng);
    case 1:
      return rng.pick(HUGE_NUMBERS);
    case 2:
      return rng.pick(BAD_TEXT);
    default:
      return anyJson(rng);
  }
}

/** JSON bytes of a value that may hold Raw pieces. */
function serialize(v: unknown): Buffer {
  const parts: Buffer[] = [];
  const walk = (x: unknown) => {
    if (x instanceof Raw) parts.push(x.bytes);
    else if (Array.isArray(x)) {
      parts.push(Buffer.from('['));
      x.forEach((item, i) => {
        if (i) parts.push(Buffer.from(','));
        walk(item === undefined ? null : item);
      });
      parts.push(Buffer.from(']'));
    } else if (x && typeof x === 'object') {
      parts.push(Buffer.from('{'));
      Object.entries(x).forEach(([k, item], i) => {
        if (i) parts.push(Buffer.from(','));
        parts.push(Buffer.from(`${JSON.stringify(k)}:`));
        walk(item);
      });
      parts.push(Buffer.from('}'));
    } else parts.push(Buffer.from(JSON.stringify(x) ?? 'null'));
  };
  walk(v);
  return Buffer.concat(parts);
}

/** A body whose bytes are not a JSON object at all, or are one in a hostile shape. */
function hostileBody(rng: Rng): Buffer {
  return rng.pick<() => Buffer>([
    () => Buffer.from('{"a":'),
    () => Buffer.from('null'),
    () => Buffer.from('[]'),
    () => Buffer.from('"text"'),
    () => Buffer.from('12'),
    () => Buffer.from('\ufeff{}'),
    () => Buffer.from('{}', 'utf16le'),
    () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    () => Buffer.from('{"a":1,"a":2}'),
    () => Buffer.from('{"__proto__":{"admin":true}}'),
    () => Buffer.from('a=1&b=2'),
    () => serialize(deep(rng)),
    () => Buffer.alloc(2_000_000, 0x20),
  ])();
}

// ------------------------------------------------------------------ paths and queries

/** The text of one path segment: an existing record's id mostly, else a hostile one (percent-encoding invalid, UTF-8 invalid, huge). */
function segment(rng: Rng, name: string, pools: Pools, clean = false): string {
  const pool = pools[name];
  const r = rng.next();
  if (pool?.length && r < 0.65) return encodeURIComponent(String(rng.pick(pool)));
  if (r < 0.8)
    return encodeURIComponent(
      String(
        rng.pick([1, 2, 3, 999, 0, -1, '9007199254740993', '99999999999999999999', 'abc', '1e3', ' 1', 'a@b.org', 'acct1-m1@example.org']),
      ),
    );
  if (clean) return encodeURIComponent(rng.pick(['é', '😀', '%', 'x'.repeat(3000)]));
  // Node sends a path's characters 0x21-0xff as single bytes: é as 0xe9 is not UTF-8.
  return rng.pick(['%', '%zz', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF', '%00', 'é', 'a%2Fb', '..', 'x'.repeat(3000), '%25%']);
}

function pathFor(rng: Rng, route: Route, account: string, pools: Pools, clean = false): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'account_id' || name === 'parent_account_id') return account;
    const text = segment(rng, name, pools, clean);
    // The fuzz's own keys stay: revoked, every later request would be a 401.
    return name === 'key_id' && protectedKeys.includes(Number(text)) ? '999999' : text;
  });
}

function queryFor(rng: Rng, route: Route, pools: Pools): string {
  const props = ((route.query?.json() as JsonSchema | undefined)?.properties ?? {}) as Record<string, JsonSchema>;
  const pairs: string[] = [];
  for (const [k, s] of Object.entries(props)) {
    if (!rng.chance(0.35)) continue;
    let v: string;
    const r = rng.next();
    if (r < 0.6) {
      const value = fromSchema(rng, s, k, pools, 1);
      v = encodeURIComponent(
        typeof value === 'string' ? value : value instanceof Raw ? value.bytes.toString('latin1') : (JSON.stringify(value) ?? ''),
      );
    } else if (r < 0.8) v = rng.pick(['true', '1', '0', 'false', '', 'True', 'x', '-1', '99999999999999999999', '600', 'a,o,e', 'z']);
    else v = rng.pick(['%', '%zz', '%E0%A4%A', '%FF', 'é', '%00', 'x'.repeat(5000)]);
    pairs.push(`${k}=${v}`);
    if (rng.chance(0.05)) pairs.push(`${k}=${v}`);
  }
  if (rng.chance(0.05)) pairs.push(rng.pick(['bogus=1', 'start', '=1', '&&', '%zz=1', '%E5%8C%97=1', '%ED%A0%80=1', 'a%0Ab=1']));
  return pairs.length ? `?${pairs.join('&')}` : '';
}

// ------------------------------------------------------------------ the run

interface Sent {
  method: string;
  path: string;
  body?: Buffer;
  key: 'one' | 'two';
  route: Route;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const basic = (pub: string, priv: string) => `Basic ${Buffer.from(`${pub}:${priv}`).toString('base64')}`;

let dir: string;
let db: Db;
let server: RunningServer;
let agent: http.Agent;
const auth = { one: '', two: '' };
/** Keys the fuzz must not revoke (it would answer 401 from then on). */
const protectedKeys: number[] = [];

function send(req: Sent): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: hostname,
        port,
        method: req.method,
        path: req.path,
        agent,
        headers: {
          authorization: auth[req.key],
          ...(req.body ? { 'content-length': String(req.body.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            contentType: String(res.headers['content-type']),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Account 1's records, by the names the route table's placeholders and body keys give their ids. */
function poolsOf(account: number): Pools {
  const ids = (sql: string) => db.prepare(sql).pluck().all(account) as number[];
  const members = ids('SELECT member_id FROM members WHERE account_id = ? ORDER BY member_id LIMIT 50');
  const groups = ids('SELECT member_group_id FROM member_groups WHERE account_id = ? LIMIT 20');
  const searches = ids('SELECT search_id FROM searches WHERE account_id = ? LIMIT 20');
  const mailings = ids('SELECT mailing_id FROM mailings WHERE account_id = ? LIMIT 20');
  return {
    member_id: members,
    member_ids: members,
    recipient_member_ids: members,
    suppressed_member_ids: members,
    email: db.prepare('SELECT email FROM members WHERE account_id = ? LIMIT 20').pluck().all(account) as string[],
    group_id: groups,
    group_ids: groups,
    member_group_id: groups,
    to_group_id: groups,
    recipient_groups: groups,
    mailing_id: mailings,
    parent_mailing_id: mailings,
    winner_id: [1, 2, 3],
    kind: ['open', 'click', 'bounce', 'share', 'optout', 'forward', 'explode'],
    status_from: ['a', 'o', 'e', 'f', 'x'],
    status_to: ['a', 'o', 'e', 'f', 'x'],
    trigger_id: ids('SELECT trigger_id FROM triggers WHERE account_id = ? LIMIT 20'),
    import_id: ids('SELECT import_id FROM member_imports WHERE account_id = ? LIMIT 20'),
    export_id: ids('SELECT export_id FROM exports WHERE account_id = ? LIMIT 20'),
    subscription_id: ids('SELECT subscription_id FROM subscriptions WHERE account_id = ? LIMIT 20'),
    recipient_subscriptions: ids('SELECT subscription_id FROM subscriptions WHERE account_id = ? LIMIT 20'),
    search_id: searches,
    segment_id: searches,
    recipient_searches: searches,
    recipient_segments: searches,
    suppressed_searches: searches,
    suppressed_segments: searches,
    field_id: ids('SELECT field_id FROM fields WHERE account_id = ? LIMIT 20'),
    key_id: (ids('SELECT k.key_id FROM api_keys k JOIN users u ON u.user_id = k.user_id WHERE u.account_id = ?') as number[]).filter(
      (k) => !protectedKeys.includes(k),
    ),
    user_id: ids('SELECT user_id FROM users WHERE account_id = ?'),
    campaign_id: ids('SELECT sms_campaign_id FROM sms_campaigns WHERE account_id = ? LIMIT 20'),
    field_name: [
      ...(db.prepare('SELECT shortcut_name FROM fields WHERE account_id = ?').pluck().all(account) as string[]),
      'email',
      'phone_number',
      'groups',
    ],
  };
}

/** Everything of account 1 a key of account 2 could change, as text. */
function accountOneState(): string {
  const tables = [
    'members',
    'member_groups',
    'group_members',
    'fields',
    'subscriptions',
    'subscription_members',
    'searches',
    'mailings',
    'member_imports',
    'exports',
    'triggers',
    'users',
    'api_keys',
    'member_optouts',
    'sms_campaigns',
    'sms_settings',
  ];
  return JSON.stringify(
    tables.map((t) => {
      const cols = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(t) as string[]).filter(
        (c) => !/cached|stale|refresh/.test(c),
      );
      const where = cols.includes('account_id')
        ? 'account_id = 1'
        : t === 'group_members'
          ? 'member_id IN (SELECT member_id FROM members WHERE account_id = 1)'
          : t === 'subscription_members'
            ? 'subscription_id IN (SELECT subscription_id FROM subscriptions WHERE account_id = 1)'
            : t === 'api_keys'
              ? 'user_id IN (SELECT user_id FROM users WHERE account_id = 1)'
              : 'member_id IN (SELECT member_id FROM members WHERE account_id = 1)';
      return db.prepare(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM ${t} WHERE ${where} ORDER BY 1`).all();
    }),
  );
}

async function setUp() {
  dir = mkdtempSync(join(tmpdir(), 'amsg-fuzz-'));
  db = openDb(join(dir, 'amsg.db'));
  const clock = fixedClock('2026-03-04T05:06:07.000Z');
  const one = initialize(db, clock);
  auth.one = basic(one.public_key!, one.private_key!);
  protectedKeys.push(...(db.prepare('SELECT key_id FROM api_keys').pluck().all() as number[]));
  db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', '2026-01-01T00:00:00.000000')`).run();
  db.prepare(
    `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at)
     VALUES (2, 'owner@acct2.org', 'owner', 1, 1, '2026-01-01T00:00:00.000000')`,
  ).run();
  const two = createKey({ db, clock, actor: localActor(db, 2), accountId: 2 }, { label: 'acct2' });
  auth.two = basic(two.public_key, two.private_key);
  protectedKeys.push(two.key_id);
  server = await startServer({ db, clock, host: '127.0.0.1', port: 0 });
  agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

  // Account 1 has one record of each kind; every name, address and value says "acct1".
  const call = async (key: 'one' | 'two', method: string, path: string, body?: unknown) => {
    const res = await send({
      method,
      path,
      key,
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      route: ROUTES[0],
    });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(200);
    return JSON.parse(res.text);
  };
  for (const [account, key] of [
    [1, 'one'],
    [2, 'two'],
  ] as const) {
    const tag = `acct${account}`;
    for (const [name, type] of [
      ['city', 'text'],
      ['score', 'numeric'],
      ['day', 'date'],
      ['tags', 'text[]'],
    ])
      await call(key, 'POST', `/${account}/fields`, {
        shortcut_name: `${tag}_${name}`,
        field_type: type,
        display_name: `${tag} ${name}`,
        ...(type === 'text[]' ? { options: [`${tag}tag`, `${tag}other`] } : {}),
      });
    const groups = await call(key, 'POST', `/${account}/groups`, {
      groups: [{ group_name: `${tag} gold` }, { group_name: `${tag} silver` }],
    });
    const gold = groups[0].member_group_id;
    const members: number[] = [];
    for (let i = 0; i < 6; i++)
      members.push(
        (
          await call(key, 'POST', `/${account}/members/add`, {
            email: `${tag}-m${i}@example.org`,
            fields: { [`${tag}_city`]: `${tag}town`, [`${tag}_score`]: i, [`${tag}_tags`]: [`${tag}tag`] },
            group_ids: [gold],
          })
        ).member_id,
      );
    const sub = await call(key, 'POST', `/${account}/subscriptions`, { name: `${tag} news` });
    await call(key, 'POST', `/${account}/subscriptions/${sub.subscription_id}/members/bulk`, { member_ids: members.slice(0, 3) });
    await call(key, 'POST', `/${account}/searches`, { name: `${tag} search`, criteria: ['member_status_id', 'eq', 'a'] });
    const mailing = await call(key, 'POST', `/${account}/mailings`, {
      name: `${tag} mailing`,
      subject: `Hi ${tag}`,
      sender: `${tag}@example.org`,
      html_body: `<p>${tag} [% optout_url %]</p>`,
      recipient_groups: [gold],
      send_at: '2030-01-01T00:00:00Z',
    });
    await call(key, 'POST', `/${account}/triggers`, {
      name: `${tag} trigger`,
      parent_mailing_id: mailing.mailing_id ?? mailing,
      event_type: 's',
    });
    const imp = await call(key, 'POST', `/${account}/members/imports`, { source_name: `${tag} import` });
    await call(key, 'POST', `/${account}/members/imports/${imp.import_id}/rows`, {
      columns: ['email', `${tag}_city`],
      rows: [[`${tag}-i@example.org`, `${tag}town`]],
      offset: 0,
    });
    await call(key, 'POST', `/${account}/exports`, { user_id: `${tag}@example.org` });
    await call(key, 'POST', `/${account}/exports/members/${members[0]}`, {});
    await call(key, 'PUT', `/${account}/members/${members[0]}`, { sms: { phone_number: `+4790000${account}01`, promotional_status: 'a' } });
    const sms = await call(key, 'POST', `/${account}/sms/campaigns`, {
      sms_campaign_name: `${tag} sms`,
      message: `Hi ${tag} https://${tag}.example.org/`,
      from_phone_number: '+15555550100',
      recipients: { groups: [gold] },
      shorten_links: true,
    });
    await call(key, 'POST', `/${account}/sms/campaigns/${sms}/send`, {});
  }
}

/** Everything account 2's key sends in a run, as lower-case text. */
let sentByTwo = '';

/** What is wrong with one answer, or undefined. */
function problem(req: Sent, res: Answer): string | undefined {
  if (res.status === 0) return 'no answer (the connection failed)';
  // An answer to HEAD has no body.
  if (req.method === 'HEAD') return res.status >= 500 ? `an undocumented ${res.status}` : undefined;
  const documented500 =
    req.route.op === 'mailings.message' && res.status === 500 && /^\{"error":"type: .* is not an allowed type/.test(res.text);
  if (res.status >= 500 && !documented500) return `an undocumented ${res.status}`;
  if (!res.contentType.startsWith('application/json'))
    return res.status === 200 ? undefined : `a ${res.status} that is not JSON (${res.contentType})`;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'an answer that is not valid JSON';
  }
  const isObject = !!body && typeof body === 'object' && !Array.isArray(body);
  if (res.status >= 400 && !(isObject && typeof (body as { error?: unknown }).error === 'string'))
    return 'an error answer without a string error';
  if (res.status < 400 && isObject && 'error' in (body as object)) return 'a success with a top-level error key';
  if (req.key === 'two') {
    // What account 2 itself sent may come back ("member acct1-m1@example.org not found", or
    // a user it made with that address); nothing else of account 1 may.
    const leaked = (res.text.match(/acct1[\w.@-]*/gi) ?? []).filter((m) => !sentByTwo.includes(m.toLowerCase()));
    if (leaked.length) return `account 1's data (${leaked.join(', ')}) in an answer to account 2's key`;
  }
  return undefined;
}

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

const describeRequest = (req: Sent) =>
  `${req.key === 'two' ? "[account 2's key] " : ''}${req.method} ${req.path.length > 300 ? `${req.path.slice(0, 300)}…` : req.path}` +
  (req.body
    ? ` body ${req.body.length > 300 ? `${req.body.subarray(0, 300).toString('latin1')}… (${req.body.length} bytes)` : req.body.toString('latin1')}`
    : '');

describe(`fuzz of every route over HTTP (seed ${SEED}, ${REQUESTS} requests)`, () => {
  beforeAll(setUp, 60_000);
  afterAll(async () => {
    agent?.destroy();
    await server?.close();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a second account's key: a 404 for every path of account 1, and nothing of account 1 through its own", async () => {
    const rng = prng(SEED ^ 0x2222);
    const before = accountOneState();
    const pools = poolsOf(1);
    const failures: string[] = [];
    const sent = Math.max(ROUTES.length * 3, Math.floor(REQUESTS / 4));
    const jobs: Sent[] = [];
    for (let i = 0; i < sent; i++) {
      const route = ROUTES[i % ROUTES.length];
      // Account 1's paths with account 1's ids, or account 2's own paths with account 1's ids:
      // by round, not by parity of i, so every route gets both whether the table's length is even or odd.
      const account = Math.floor(i / ROUTES.length) % 2 === 0 ? '1' : '2';
      const body = route.body ? serialize(fromSchema(rng, route.body.json() as JsonSchema, '', pools)) : undefined;
      // The first round carries no query, so every route's account-1 path reaches the Router at
      // least once (a random query can hold bytes the HTTP parser refuses first).
      const query = i < ROUTES.length ? '' : queryFor(rng, route, pools);
      jobs.push({ method: route.method, path: pathFor(rng, route, account, pools, true) + query, body, key: 'two', route });
    }
    sentByTwo = jobs
      .map((j) => `${safeDecode(j.path)} ${j.body?.toString('utf8') ?? ''}`)
      .join('\n')
      .toLowerCase();
    /** Routes whose account-1 path some request of account 2 got "account 1 not found" for. */
    const refused = new Set<string>();
    await runAll(jobs, (req, res) => {
      if (res.status === 404 && res.text === '{"error":"account 1 not found"}') refused.add(req.route.op);
      const wrong = problem(req, res);
      if (wrong) return failures.push(`${wrong}: ${describeRequest(req)} → ${res.status} ${res.text.slice(0, 300)}`);
      if (req.path.startsWith('/1/') || req.path === '/1') {
        const notFound =
          res.status === 404 && (res.text === '{"error":"account 1 not found"}' || res.text.startsWith('{"error":"no such operation'));
        // Refused by the HTTP parser (a raw byte in the query, a request line over 16 KB) before any route or account is looked at.
        const unparsed =
          (res.status === 400 && res.text.startsWith('{"error":"malformed HTTP request')) ||
          (res.status === 431 && res.text === '{"error":"request headers are too large"}');
        if (!notFound && !unparsed && res.status !== 405)
          failures.push(`not a 404 for account 1's path: ${describeRequest(req)} → ${res.status} ${res.text.slice(0, 300)}`);
      }
    });
    expect(failures, `seed ${SEED} (AMSG_FUZZ_SEED=${SEED} replays it)`).toEqual([]);
    expect(accountOneState(), `seed ${SEED}: account 2's key changed account 1's records`).toBe(before);
    expect(
      ROUTES.map((r) => r.op).filter((op) => !refused.has(op)),
      `seed ${SEED}: routes whose account-1 path no request tried`,
    ).toEqual([]);
  }, 120_000);

  it('every route, with wrong types, huge numbers, deep nesting and bad encodings: no undocumented 5xx, every error a JSON {error}', async () => {
    const rng = prng(SEED);
    const failures: string[] = [];
    /** Per route: answers that got past routing (a route that no request reached is a gap in the fuzz). */
    const reached = new Map<string, number>();
    const statuses = new Map<number, number>();
    let pools = poolsOf(1);
    for (let done = 0; done < REQUESTS; ) {
      const jobs: Sent[] = [];
      for (let i = 0; i < 200 && done < REQUESTS; i++, done++) {
        const route = ROUTES[done % ROUTES.length];
        const method = rng.chance(0.03) ? rng.pick(['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']) : route.method;
        const account = rng.chance(0.9) ? '1' : rng.pick(['2', '3', '0', 'x', '99999999999999999999', '%31']);
        let body: Buffer | undefined;
        if (route.body || rng.chance(0.1))
          body = rng.chance(0.08) ? hostileBody(rng) : serialize(fromSchema(rng, (route.body?.json() ?? {}) as JsonSchema, '', pools));
        jobs.push({ method, path: pathFor(rng, route, account, pools) + queryFor(rng, route, pools), body, key: 'one', route });
      }
      await runAll(jobs, (req, res) => {
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const routed = !(res.status === 404 && res.text.startsWith('{"error":"no such operation')) && res.status !== 405;
        if (routed && req.method === req.route.method) reached.set(req.route.op, (reached.get(req.route.op) ?? 0) + 1);
        const wrong = problem(req, res);
        if (!wrong) return;
        failures.push(`${wrong}: ${describeRequest(req)} → ${res.status} ${res.text.slice(0, 300)}`);
      });
      pools = poolsOf(1);
    }
    console.info(`fuzz (seed ${SEED}): statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    expect(failures, `seed ${SEED} (AMSG_FUZZ_SEED=${SEED} replays it)`).toEqual([]);
    expect(
      ROUTES.map((r) => r.op).filter((op) => !reached.get(op)),
      `seed ${SEED}: routes no request reached`,
    ).toEqual([]);
  }, 120_000);

  it('bodies over the 10 MB limit, declared or chunked, on every kind of route: a 413 that closes the connection, and the server goes on', async () => {
    const rng = prng(SEED ^ 0x413);
    const pools = poolsOf(1);
    const withBody = ROUTES.filter((r) => r.body);
    for (let i = 0; i < 4; i++) {
      const route = rng.pick(withBody);
      const req: Sent = { method: route.method, path: pathFor(rng, route, '1', pools, true), key: 'one', route };
      const huge = Buffer.alloc(BODY_LIMIT + 1 + rng.int(1024), 0x20);
      const declared = await send({ ...req, body: huge });
      expect({ status: declared.status, text: declared.text }, `seed ${SEED}: ${describeRequest(req)}`).toEqual({
        status: 413,
        text: JSON.stringify({ error: `request body exceeds the 10 MB limit (${huge.length} bytes)` }),
      });
    }
    // Chunked, with a body that grows past the limit while it is sent.
    const route = rng.pick(withBody);
    const res = await new Promise<Answer>((resolve, reject) => {
      const { hostname, port } = new URL(server.url);
      const r = http.request(
        {
          host: hostname,
          port,
          method: route.method,
          path: pathFor(rng, route, '1', pools, true),
          agent,
          headers: { authorization: auth.one },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode!, contentType: String(res.headers['content-type']), text: Buffer.concat(chunks).toString() }),
          );
        },
      );
      r.on('error', reject);
      let sent = 0;
      const more = () => {
        while (sent <= BODY_LIMIT + 1024 * 1024) {
          sent += 64 * 1024;
          if (!r.write(Buffer.alloc(64 * 1024, 0x20))) return void r.once('drain', more);
        }
        r.end();
      };
      more();
    });
    expect({ status: res.status, text: res.text }).toEqual({ status: 413, text: '{"error":"request body exceeds the 10 MB limit"}' });
    const after = await send({ method: 'GET', path: '/1/members?count=true', key: 'one', route: ROUTES[0] });
    expect(after.status).toBe(200);
  }, 120_000);
});

/** Sends the requests, eight at a time, and hands each answer to check. */
async function runAll(jobs: Sent[], check: (req: Sent, res: Answer) => void) {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const req = jobs[next++];
      check(req, await send(req).catch((err: Error) => ({ status: 0, contentType: '', text: `${err.message}` })));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/**
 * Names no header may carry as they are (a character outside Latin-1, a lone surrogate,
 * a control character), as unknown body keys and query names, to every route of a server
 * run as `amsg serve` runs it (the turn's writes committed after the turn: an answer is
 * written in a later callback, where a throw used to end the process).
 */
describe('parameter names no header can carry, to every route of amsg serve', () => {
  const NAMES = ['北京', '\ud800', 'a\nb'];
  /** As a query name: percent-encoded UTF-8 (a lone surrogate as the bytes of one, which decode to U+FFFD). */
  const QUERY_NAMES = ['%E5%8C%97%E4%BA%AC', '%ED%A0%80', 'a%0Ab'];
  let sweepDir: string;
  let running: Awaited<ReturnType<typeof serve>>;
  let authHeader: string;

  beforeAll(async () => {
    sweepDir = mkdtempSync(join(tmpdir(), 'amsg-fuzz-names-'));
    running = await serve({ db: join(sweepDir, 'amsg.db'), port: 0 });
    authHeader = basic(running.created!.public_key, running.created!.private_key);
  });
  afterAll(async () => {
    await running?.close();
    rmSync(sweepDir, { recursive: true, force: true });
  });

  const request = (method: string, path: string, body?: unknown) =>
    fetch(`${running.url}${path}`, {
      method,
      headers: { authorization: authHeader },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('a user-role key adding a member with such a key: the member is added and the answer says so, with the names encoded', async () => {
    const user = await (await request('POST', '/1/users', { email: 'u@example.org', role: 'user' })).json();
    const key = await (await request('POST', '/1/keys', { user_id: user.user_id })).json();
    const res = await fetch(`${running.url}/1/members/add`, {
      method: 'POST',
      headers: { authorization: basic(key.public_key, key.private_key) },
      body: JSON.stringify({ 北京: 1, '\ud800': 2, 'a\nb': 3, 'pct%,x': 4, email: 'a@example.org' }),
    });
    expect([res.status, res.headers.get(IGNORED_HEADER)]).toEqual([200, '%E5%8C%97%E4%BA%AC, %EF%BF%BD, a%0Ab, pct%25%2Cx']);
    expect(await res.json()).toMatchObject({ member_id: expect.any(Number), status: 'a', added: true });
    expect((await request('GET', '/1/members/email/a%40example.org')).status).toBe(200);
  });

  it('POST /1/keys with such a key creates the key and shows its private key', async () => {
    const res = await request('POST', '/1/keys', { 北京: 1, label: 'ci' });
    expect([res.status, res.headers.get(IGNORED_HEADER)]).toEqual([200, '%E5%8C%97%E4%BA%AC']);
    const key = await res.json();
    expect(key).toMatchObject({ public_key: expect.any(String), private_key: expect.any(String) });
    expect(
      (await fetch(`${running.url}/1/members?count=true`, { headers: { authorization: basic(key.public_key, key.private_key) } })).status,
    ).toBe(200);
  });

  it('every route: no 5xx, the server goes on', async () => {
    const rng = prng(SEED ^ 0x5a5a);
    // Ids that exist, so most requests reach their handler.
    const reader = openDb(join(sweepDir, 'amsg.db'));
    const pools = (() => {
      const saved = db;
      db = reader;
      try {
        return poolsOf(1);
      } finally {
        db = saved;
      }
    })();
    reader.close();
    const failures: string[] = [];
    for (const route of ROUTES) {
      if (route.op === 'keys.revoke') continue; // could revoke the sweep's own key
      for (let i = 0; i < NAMES.length; i++) {
        const path = pathFor(rng, route, '1', pools, true).replace(/\/999999$/, '/1');
        const made = route.body ? fromSchema(rng, route.body.json() as JsonSchema, '', pools) : {};
        const base = made && typeof made === 'object' && !Array.isArray(made) && !(made instanceof Raw) ? made : {};
        const sent = [
          { path, body: route.body ? serialize({ ...base, [NAMES[i]]: 1 }) : undefined },
          { path: `${path}?${QUERY_NAMES[i]}=1`, body: route.body ? serialize(base) : undefined },
        ];
        for (const { path: p, body } of sent) {
          const res = await fetch(`${running.url}${p}`, { method: route.method, headers: { authorization: authHeader }, body }).then(
            async (r) => ({ status: r.status, text: await r.text(), ignored: r.headers.get(IGNORED_HEADER) }),
            (err: Error) => ({ status: 0, text: err.message, ignored: null }),
          );
          const documented500 = route.op === 'mailings.message' && /^\{"error":"type: .* is not an allowed type/.test(res.text);
          if (res.status === 0 || (res.status >= 500 && !documented500))
            failures.push(`${route.method} ${p} body ${body?.toString('utf8') ?? ''} → ${res.status} ${res.text.slice(0, 200)}`);
          else if (res.ignored !== null && !/^[\x20-\x7e]*$/.test(res.ignored))
            failures.push(`${route.method} ${p}: header ${res.ignored}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect((await request('GET', '/1/members?count=true')).status).toBe(200);
  }, 120_000);
});
