import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Api } from '../../src/client/api.js';
import { LocalTransport } from '../../src/client/local-transport.js';
import { initializeLocal } from '../../src/api/local.js';
import { seed, type SeedResult } from '../../src/cli/seed/seed.js';
import { FixtureError } from '../../src/cli/seed/shape.js';
import { KINDS } from '../../src/cli/seed/kinds.js';
import { SeedError } from '../../src/cli/seed/kind.js';
import { generateMembers } from '../../src/cli/seed/generate.js';
import { fixture, SMALL_YAML_IDS } from '../fixtures.js';

const NOW = '2026-05-06T07:08:09Z';

beforeAll(() => {
  process.env.AMSG_NOW = NOW;
});

interface Box {
  dir: string;
  file: string;
  api: Api;
  write(name: string, text: string): string;
}
const boxes: Box[] = [];

/** A new database (with the standard fields, as `amsg init` makes it; an HQ with `hq`) and an Api over it, as local mode has. */
function box(opts: { hq?: boolean } = {}): Box {
  const dir = mkdtempSync(join(tmpdir(), 'amsg-seed-'));
  const file = join(dir, 'amsg.db');
  initializeLocal(file, { hq: opts.hq });
  const b = {
    dir,
    file,
    api: new Api(new LocalTransport(file, 1), 1),
    write: (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
  boxes.push(b);
  return b;
}
afterEach(async () => {
  for (const b of boxes.splice(0)) {
    await b.api.close();
    rmSync(b.dir, { recursive: true, force: true });
  }
});

/** Every row of every table, hashed: two databases with the same digest hold the same data. */
function digest(file: string, only?: string[]): string {
  const db = new Database(file, { readonly: true });
  try {
    const hash = createHash('sha256');
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    for (const t of tables) {
      if (only && !only.includes(t)) continue;
      hash.update(`${t}\n`);
      for (const row of db.prepare(`SELECT * FROM "${t}"`).raw().iterate()) hash.update(JSON.stringify(row));
    }
    return hash.digest('hex');
  } finally {
    db.close();
  }
}

/** The problems of a refused fixture, as lines. */
async function refusal(b: Box, files: string[]): Promise<string[]> {
  try {
    await seed(b.api, files);
  } catch (err) {
    if (err instanceof FixtureError) return err.message.split('\n').map((l) => l.replaceAll(b.dir, 'DIR'));
    throw err;
  }
  throw new Error('the fixture was not refused');
}

describe('a fixture with one of everything (fixtures/small.yaml)', () => {
  test('every kind is written, references resolved, ids mapped by name', async () => {
    const b = box({ hq: true });
    const result = await seed(b.api, [fixture('small.yaml')]);
    expect(result.ids).toEqual(SMALL_YAML_IDS);
    expect(result.summary.members).toEqual({ created: 4, updated: 0, unchanged: 0 });
    const { api } = b;
    // A search names another search by name: saved with its id.
    expect(((await api.get('/searches/2')) as any).criteria).toBe('["and",["search","eq",1],["group","eq","Gold"]]');
    expect(((await api.get('/segments')) as any[]).map((s) => s.name)).toEqual(['Oslo', 'Gold in Oslo', 'High scorers']);
    const groups = (await api.get('/groups')) as any[];
    expect(groups.map((g) => [g.group_name, g.active_count, g.optout_count])).toEqual([
      ['Gold', 1, 0],
      ['Newsletter', 2, 1],
    ]);
    const ada = (await api.get('/members/email/ada%40example.com')) as any;
    expect(ada.fields).toEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      city: 'Oslo',
      birthday: '1815-12-10',
      score: 98.5,
      plan: 'team',
      support: 'dedicated',
    });
    expect((await api.get('/subscriptions/1/members')) as any[]).toMatchObject([{ member_id: 1 }]);
    const kari = (await api.get('/members/email/kari%40example.no')) as any;
    expect(kari.sms).toMatchObject({ phone_number: '+4791234567', promotional_status: 'a' });
    expect(((await api.get('/members/email/ola%40example.no')) as any).member_status_id).toBe('o');
    expect(((await api.get('/members/email/gone%40example.org', { deleted: true })) as any).deleted_at).toBe('@D:2026-05-06T07:08:09');
    // Sent through the simulated sender, with engagement; the scheduled one waits.
    const mailings = (await api.get('/mailings')) as any[];
    expect(mailings.map((m) => [m.name, m.mailing_status, m.recipient_count, m.send_at])).toEqual([
      ['Welcome', 'c', 2, null],
      ['Summer sale', 'p', 0, '@D:2030-06-01T09:00:00'],
    ]);
    const history = (await api.get('/members/1/mailings')) as any[];
    expect(history.map((h) => [h.name, !!h.opened, !!h.clicked])).toEqual([['Welcome', true, true]]);
    expect(((await api.get('/members/2/mailings')) as any[]).map((h) => [!!h.opened, !!h.clicked])).toEqual([[true, false]]);
    const trigger = (await api.get('/triggers/1')) as any;
    expect([trigger.name, trigger.parent_mailing_id, trigger.event_type, trigger.field_id, trigger.push_offset]).toEqual([
      'Birthday greeting',
      1,
      'r',
      4,
      '@I:3600',
    ]);
    // The kinds of the second round, each as the service answers it.
    const relationship = (await api.get('/fields/relationships/1')) as any;
    expect([
      relationship.relationship_name,
      relationship.parent_field.shortcut_name,
      relationship.child_field.shortcut_name,
      relationship.options,
    ]).toEqual(['Support by plan', 'plan', 'support', { free: ['email'], pro: ['email', 'phone'], team: ['email', 'phone', 'dedicated'] }]);
    expect(((await api.get('/events')) as any[]).map((t) => [t.event_type_id, t.event_type, t.display_name])).toEqual([
      [1, 'purchase', 'Purchase'],
    ]);
    expect(((await api.get('/touchpoints')) as any[]).map((t) => [t.touchpoint_type_id, t.type_name, t.display_name])).toEqual([
      [1, 'web_visit', 'web_visit'],
    ]);
    const sms = (await api.get('/sms/campaigns/1')) as any;
    expect([sms.sms_campaign_name, sms.send_status, sms.from_phone_number, sms.recipients, sms.deliveries, sms.is_promotional]).toEqual([
      'Flash sale',
      'c',
      '+15555550100',
      { groups: [], members: [2], segments: [], suppression_segments: [] },
      1,
      true,
    ]);
    const workflow = (await api.get('/workflows/1')) as any;
    expect([workflow.name, workflow.match, workflow.actions]).toEqual([
      'Web buyers',
      { type: 'purchase', 'order.channel': 'web' },
      [
        { type: 'add_to_groups', group_ids: [1] },
        { type: 'record_event', event_type_id: 1, value_from: 'order.total' },
        { type: 'record_touchpoint', touchpoint_type_id: 1 },
        { type: 'set_fields', values: { plan: 'pro' }, from: { city: 'address.city' } },
        { type: 'send_mailing', mailing_id: 1 },
      ],
    ]);
    expect(await api.get('/events/members/1')).toEqual([
      {
        event_id: 1,
        account_id: 1,
        member_id: 1,
        event_type_id: 1,
        event_monetary_value: 49.5,
        event_timestamp: '@D:2026-04-01T10:00:00',
        inserted_at: '@D:2026-05-06T07:08:09',
        mailing_id: 1,
        attributes: { order: 'A-1' },
      },
    ]);
    expect(
      ((await api.get('/touchpoints/members/2')) as any[]).map((t) => [t.touchpoint_id, t.touchpoint_type_id, t.touchpoint_timestamp]),
    ).toEqual([[1, 1, '@D:2026-04-02T08:30:00']]);
    expect((await api.get('/enterprise/subaccounts')) as any).toEqual({
      subaccounts: [{ account_id: 2, account_name: 'Oslo branch', account_status: 'trial' }],
    });
    expect(((await api.get('/enterprise/subaccount/2')) as any).account_timezone).toBe('Europe/Oslo');
    expect(await api.get('/webhooks')).toEqual([
      { webhook_id: 1, url: 'https://hooks.example.com/amsg', method: 'POST', event: 'group_delete', public_key: null },
    ]);
    // Written last: the seed's own writes fired none.
    expect(await api.get('/webhooks/deliveries', { count: true })).toBe(0);
  });

  test('idempotent: a second run writes nothing (same database digest) and reports everything unchanged', async () => {
    const b = box({ hq: true });
    await seed(b.api, [fixture('small.yaml')]);
    const before = digest(b.file);
    const again = await seed(b.api, [fixture('small.yaml')]);
    expect(digest(b.file)).toBe(before);
    expect(Object.keys(again.summary)).toEqual(KINDS.map((k) => k.name));
    for (const [kind, s] of Object.entries(again.summary)) expect([kind, s.created, s.updated]).toEqual([kind, 0, 0]);
    expect(again.ids.groups).toEqual({ Gold: 1, Newsletter: 2 });
  });

  test('a changed record is updated, the rest left alone; --dry-run plans it and writes nothing', async () => {
    const b = box();
    const v1 = b.write(
      'v1.yaml',
      'fields: [{shortcut_name: city, field_type: text}]\ngroups: [A]\nsubscriptions: [{name: S, description: one}]\nmembers:\n  - {email: a@example.com, fields: {city: Oslo}, groups: [A]}\n  - {email: b@example.com}\n',
    );
    const v2 = b.write(
      'v2.yaml',
      'fields: [{shortcut_name: city, field_type: text}]\ngroups: [A, B]\nsubscriptions: [{name: S, description: two}]\nmembers:\n  - {email: a@example.com, fields: {city: Bergen}, groups: [A]}\n  - {email: b@example.com, groups: [B], status: o}\n',
    );
    await seed(b.api, [v1]);
    const before = digest(b.file);
    const plan = await seed(b.api, [v2], { dryRun: true });
    expect(digest(b.file)).toBe(before);
    expect(plan.ids).toEqual({
      fields: { city: 'unchanged' },
      groups: { A: 'unchanged', B: 'create' },
      subscriptions: { S: 'update' },
      members: { 'a@example.com': 'update', 'b@example.com': 'update' },
    });
    const done = await seed(b.api, [v2]);
    expect(done.ids.members).toEqual({ 'a@example.com': 1, 'b@example.com': 2 });
    expect(((await b.api.get('/members/1')) as any).fields.city).toBe('Bergen');
    expect(((await b.api.get('/members/2')) as any).member_status_id).toBe('o');
    expect(((await b.api.get('/members/2/groups')) as any[]).map((g) => g.group_name)).toEqual(['B']);
    expect(((await b.api.get('/subscriptions/1')) as any).description).toBe('two');
  });

  test('--reset empties the account first; the ids are those of the new records', async () => {
    const b = box({ hq: true });
    await seed(b.api, [fixture('small.yaml')]);
    const result = await seed(b.api, [fixture('ci.yaml')], { reset: true });
    expect(result.ids.groups).toEqual({ Gold: 3, Silver: 4 });
    expect(((await b.api.get('/groups')) as any[]).map((g) => g.group_name)).toEqual(['Gold', 'Silver']);
    expect(((await b.api.get('/fields')) as any[]).map((f) => f.shortcut_name)).toEqual(['first_name', 'last_name', 'city']);
    expect(await b.api.get('/members', { count: true, deleted: true })).toBe(202);
    expect(await b.api.get('/searches', { count: true })).toBe(1);
    expect(((await b.api.get('/mailings')) as any[]).map((m) => m.name)).toEqual(['Welcome']);
    expect(await b.api.get('/triggers')).toEqual([]);
    expect(await b.api.get('/subscriptions')).toEqual([]);
    expect(await b.api.get('/fields/relationships')).toEqual([]);
    expect(await b.api.get('/events')).toEqual([]);
    expect(await b.api.get('/touchpoints')).toEqual([]);
    expect(await b.api.get('/workflows')).toEqual([]);
    expect(await b.api.get('/webhooks')).toEqual([]);
    expect(await b.api.get('/sms/campaigns')).toEqual([]);
    expect(((await b.api.get('/sms/campaigns', { include_archived: true })) as any[]).map((c) => c.archived_at)).toEqual([
      '@D:2026-05-06T07:08:09',
    ]);
    expect(await b.api.get('/enterprise/subaccounts')).toEqual({ subaccounts: [] });
    expect(((await b.api.get('/enterprise/subaccount/2')) as any).account_status).toBe('retired');
  });
});

test('fixtures/audience.json loads as it is, with the audience fixture.test.ts describes', async () => {
  const b = box();
  const result = await seed(b.api, [fixture('audience.json')]);
  expect(Object.keys(result.ids)).toEqual(['fields', 'groups', 'members']);
  const groups = (await b.api.get('/groups')) as any[];
  expect(groups.map((g) => [g.group_name, g.active_count, g.error_count, g.optout_count])).toEqual([
    ['Newsletter', 2, 1, 0],
    ['Customers', 2, 0, 0],
    ['Oslo office', 1, 0, 1],
  ]);
  expect(await b.api.get('/members', { count: true, deleted: true })).toBe(6);
  expect(await b.api.get('/members', { count: true })).toBe(5);
});

describe('generated members', () => {
  const spec = (seed: number) =>
    `fields: [{shortcut_name: city, field_type: text}, {shortcut_name: score, field_type: numeric}, {shortcut_name: born, field_type: date}]\n` +
    `groups: [Gold]\nsubscriptions: [Digest]\nmembers:\n  - generate: {count: 300, seed: ${seed}, email: "u{n}@example.test", ` +
    `fields: {first_name: first_name, city: city, score: "int:0:100", born: birthdate}, groups: {Gold: 0.2}, subscriptions: {Digest: 0.5}, statuses: {o: 0.1}, sms: 0.1}\n`;

  test('the same seed gives the same rows in two databases; another seed does not', async () => {
    const [a, b, c] = [box(), box(), box()];
    const tables = ['members', 'group_members', 'subscription_members', 'sms_numbers', 'member_counts', 'group_counts'];
    await seed(a.api, [a.write('f.yaml', spec(7))]);
    await seed(b.api, [b.write('f.yaml', spec(7))]);
    await seed(c.api, [c.write('f.yaml', spec(8))]);
    expect(digest(a.file, tables)).toBe(digest(b.file, tables));
    expect(digest(a.file, tables)).not.toBe(digest(c.file, tables));
    const gold = (await a.api.get('/groups/1')) as any;
    expect(gold.active_count + gold.optout_count).toBeGreaterThan(30);
    expect(gold.active_count + gold.optout_count).toBeLessThan(90);
    const first = (await a.api.get('/members/1')) as any;
    expect(first.email).toBe('u1@example.test');
    expect(Object.keys(first.fields)).toEqual(['first_name', 'city', 'score', 'born']);
    expect(first.fields.born).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test('generation is a pure function of the block', async () => {
    const block = { count: 5, seed: 3, email: 'x{n}@e.test', fields: { n: 'int:1:9', c: 'pick:a|b' }, groups: { G: 0.5 } };
    expect(await generateMembers(block, {})).toEqual(await generateMembers(block, {}));
    expect((await generateMembers(block, {})).map((m) => m.email)).toEqual([
      'x1@e.test',
      'x2@e.test',
      'x3@e.test',
      'x4@e.test',
      'x5@e.test',
    ]);
  });

  test('written through the bulk import path: one import record for the whole fixture; a second run is unchanged', async () => {
    const b = box();
    const file = b.write('f.yaml', spec(7));
    const first = await seed(b.api, [file]);
    expect(first.summary.members).toEqual({ created: 300, updated: 0, unchanged: 0, generated: 300 });
    expect(first.ids.members).toEqual({});
    expect(((await b.api.get('/members/imports')) as any[]).map((i) => [i.source_name, i.num_members, i.num_members_added])).toEqual([
      ['amsg seed', 300, 300],
    ]);
    const before = digest(b.file);
    const second = await seed(b.api, [file]);
    expect(second.summary.members).toEqual({ created: 0, updated: 0, unchanged: 300, generated: 300 });
    expect(digest(b.file)).toBe(before);
  });

  test('a sent mailing with engagement drawn by share is the same on every run', async () => {
    const run = async () => {
      const b = box();
      await seed(b.api, [
        b.write(
          'm.yaml',
          spec(7) +
            'mailings:\n  - {name: M, subject: Hi, sender: s@example.com, html_body: \'<a href="https://e.com/x">x</a> [% optout_url %]\', recipients: {groups: [Gold]}, engagement: {seed: 2, opens: 0.5, clicks: 0.2}}\n',
        ),
      ]);
      return digest(b.file, ['mailing_messages']);
    };
    expect(await run()).toBe(await run());
  });
});

describe('a fixture is refused as a whole, naming file, path and reason', () => {
  test('unknown keys, wrong types and bad addresses: every problem, nothing written', async () => {
    const b = box();
    const before = digest(b.file);
    const file = b.write(
      'bad.json',
      JSON.stringify({
        groups: ['Gold'],
        memebrs: [],
        members: [
          { email: 'a@example.com' },
          { email: 'b@example.com', groups: 'Gold' },
          { email: 'not-an-address' },
          { email: 'd@example.com', feilds: { city: 'Oslo' } },
        ],
        fields: [{ shortcut_name: 'score', field_type: 'number' }],
      }),
    );
    expect(await refusal(b, [file])).toEqual([
      'DIR/bad.json: memebrs: unknown key (expected fields, field_relationships, groups, subscriptions, searches, segments, event_types, touchpoint_types, members, mailings, sms_campaigns, triggers, workflows, member_events, touchpoints, subaccounts, webhooks, description, version)',
      'DIR/bad.json: members[1].groups: must be a list, got string "Gold"',
      'DIR/bad.json: members[2].email: must be an e-mail address, got "not-an-address"',
      'DIR/bad.json: members[3].feilds: unknown key (expected email, fields, groups, subscriptions, sms, status, archived)',
      'DIR/bad.json: fields[0].field_type: must be one of text, text[], numeric, boolean, date, timestamp, got "number"',
    ]);
    expect(digest(b.file)).toBe(before);
  });

  test('a reference to something in neither the file nor the account, and a value its field cannot hold', async () => {
    const b = box();
    await b.api.post('/groups', { groups: [{ group_name: 'InAccount' }] });
    const before = digest(b.file);
    const file = b.write(
      'refs.yaml',
      [
        'fields: [{shortcut_name: score, field_type: numeric}]',
        'groups: [Gold]',
        'members:',
        '  - {email: a@example.com, groups: [Gold, InAccount, Platinum], fields: {score: high}}',
        '  - generate: {count: 10, seed: 1, email: "g{n}@example.test", groups: {Silver: 0.5}}',
        'mailings:',
        '  - {name: M, subject: S, sender: s@example.com, html_body: "[% optout_url %]", recipients: {searches: [Nope]}, engagement: {opens: [z@example.com]}}',
        'triggers:',
        '  - {name: T, mailing: Missing, event_type: s}',
      ].join('\n'),
    );
    expect(await refusal(b, [file])).toEqual([
      'DIR/refs.yaml: members[0].groups[2]: names group "Platinum", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: members[0].fields.score: must be a number for a numeric field, got "high"',
      'DIR/refs.yaml: members[1].generate.groups.Silver: names group "Silver", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: mailings[0].recipients.searches[0]: names search "Nope", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: mailings[0].engagement.opens[0]: names member "z@example.com", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: triggers[0].mailing: names mailing "Missing", which is neither in the fixture nor in the account',
    ]);
    expect(digest(b.file)).toBe(before);
  });

  test("a member's field values are checked by the service's own rules before anything is written", async () => {
    const b = box();
    const fields = [
      'fields:',
      '  - {shortcut_name: birthday, field_type: date}',
      '  - {shortcut_name: score, field_type: numeric}',
      '  - {shortcut_name: vip, field_type: boolean}',
      '  - {shortcut_name: seen, field_type: timestamp}',
    ];
    const before = digest(b.file);
    // A day that does not exist, hexadecimal, a word for a boolean and text for a date-time: refused
    // early, each with the reason the service gives.
    const bad = b.write(
      'bad.yaml',
      [
        ...fields,
        'members:',
        '  - {email: a@example.com, fields: {birthday: "2024-02-30", score: "0x10", vip: "maybe", seen: "soon"}}',
      ].join('\n'),
    );
    expect(await refusal(b, [bad])).toEqual([
      'DIR/bad.yaml: members[0].fields.birthday: must be a date YYYY-MM-DD for a date field, got "2024-02-30"',
      'DIR/bad.yaml: members[0].fields.score: must be a number for a numeric field, got "0x10"',
      'DIR/bad.yaml: members[0].fields.vip: must be true or false for a boolean field, got "maybe"',
      'DIR/bad.yaml: members[0].fields.seen: must be a date-time YYYY-MM-DDThh:mm:ss for a timestamp field, got "soon"',
    ]);
    expect(digest(b.file)).toBe(before);
    // What the service takes, the seed takes: a signed or bare-point decimal, yes, a leap day, a date-time with an offset.
    const good = b.write(
      'good.yaml',
      [
        ...fields,
        'members:',
        '  - {email: a@example.com, fields: {birthday: "2024-02-29", score: "+.5", vip: "yes", seen: "2026-01-02T03:04:05+01:00"}}',
      ].join('\n'),
    );
    await seed(b.api, [good]);
    expect(((await b.api.get('/members/email/a%40example.com')) as any).fields).toEqual({
      birthday: '2024-02-29',
      score: 0.5,
      vip: true,
      seen: '2026-01-02T02:04:05',
    });
  });

  test('searches that refer to each other in a cycle', async () => {
    const b = box();
    const file = b.write(
      'cycle.yaml',
      'searches:\n  - {name: A, criteria: ["search", "eq", "B"]}\n  - {name: B, criteria: ["or", ["search", "eq", "C"]]}\n  - {name: C, criteria: ["search", "in", ["A"]]}\n',
    );
    expect(await refusal(b, [file])).toEqual([
      'DIR/cycle.yaml: searches[0]: searches refer to each other in a cycle: "A" → "B" → "C" → "A"',
    ]);
  });

  test('a record defined twice (across files), unreadable files and bad YAML', async () => {
    const b = box();
    const one = b.write('one.yaml', 'groups: [Gold]\n');
    const two = b.write('two.json', '{"groups": [{"group_name": "gold"}]}');
    expect(await refusal(b, [one, two])).toEqual([
      'DIR/two.json: groups[0]: groups "gold" is defined twice (also at DIR/one.yaml: groups[0])',
    ]);
    const bad = b.write('bad.yaml', 'groups: [Gold\nmembers: x: y\n');
    const lines = await refusal(b, [bad, join(b.dir, 'missing.json')]);
    expect(lines[0]).toMatch(/^DIR\/bad\.yaml: \(top level\): not valid YAML: .* at line \d+, column \d+$/);
    expect(lines[1]).toBe('DIR/missing.json: (top level): cannot read the file (ENOENT)');
  });
});

describe('the kinds of the second round: relationships, event and touchpoint types, SMS campaigns, workflows, sub-accounts, webhooks', () => {
  const v1 = [
    'fields:',
    '  - {shortcut_name: plan, field_type: text, widget_type: select one, options: [free, pro]}',
    '  - {shortcut_name: support, field_type: text, widget_type: radio, options: [email, phone]}',
    'field_relationships:',
    '  - {relationship_name: Support, parent_field: plan, child_field: support, options: {free: [email]}}',
    'groups: [Gold, Silver]',
    'event_types: [{event_type: purchase, display_name: Purchase}]',
    'touchpoint_types: [visit]',
    'members:',
    '  - {email: a@example.com, sms: {phone_number: "+4791234567"}}',
    'mailings:',
    '  - {name: M, subject: S, sender: s@example.com, html_body: "[% optout_url %]", status: draft}',
    'sms_campaigns:',
    '  - {name: Draft, message: Hello, from_phone_number: "+1 555 555 0100", recipients: {groups: [Gold]}, status: draft}',
    'workflows:',
    '  - {name: W, match: {type: purchase}, actions: [{type: add_to_groups, groups: [Gold]}, {type: record_event, event_type: purchase}]}',
    'member_events:',
    '  - {member: a@example.com, event_type: purchase, timestamp: "2026-04-01T10:00:00Z", value: 5}',
    'touchpoints:',
    '  - {member: a@example.com, type_name: visit, timestamp: "@D:2026-04-01T11:00:00"}',
    'subaccounts: [Branch]',
    'webhooks:',
    '  - {event: member_add, url: "https://hooks.example.com/a"}',
  ].join('\n');
  const v2 = v1
    .replace('options: {free: [email]}', 'options: {free: [email], pro: [email, phone]}')
    .replace('display_name: Purchase', 'display_name: A purchase')
    .replace('touchpoint_types: [visit]', 'touchpoint_types: [{type_name: visit, display_name: Visit}]')
    .replace('message: Hello,', 'message: Hello again,')
    .replace('recipients: {groups: [Gold]}, status: draft', 'recipients: {groups: [Silver], members: [a@example.com]}')
    .replace(
      '{name: W, match: {type: purchase}, actions: [{type: add_to_groups, groups: [Gold]}, {type: record_event, event_type: purchase}]}',
      '{name: W, match: {type: purchase, channel: web}, actions: [{type: add_to_groups, groups: [Silver]}, {type: record_touchpoint, touchpoint_type: visit, value_from: page}, {type: send_mailing, mailing: M}]}',
    )
    .replace('subaccounts: [Branch]', 'subaccounts: [{account_name: Branch, account_timezone: UTC}]')
    .replace(
      '{event: member_add, url: "https://hooks.example.com/a"}',
      '{event: member_add, url: "https://hooks.example.com/a", method: get}',
    );
  const hook = 'member_add https://hooks.example.com/a';
  const event = 'a@example.com purchase 2026-04-01T10:00:00';
  const touchpoint = 'a@example.com visit 2026-04-01T11:00:00';

  test('each is created, unchanged on a second run, updated where the file differs (planned by --dry-run), then unchanged again', async () => {
    const b = box({ hq: true });
    const first = await seed(b.api, [b.write('v1.yaml', v1)]);
    expect(first.ids).toMatchObject({
      field_relationships: { Support: 1 },
      event_types: { purchase: 1 },
      touchpoint_types: { visit: 1 },
      sms_campaigns: { Draft: 1 },
      workflows: { W: 1 },
      member_events: { [event]: 1 },
      touchpoints: { [touchpoint]: 1 },
      subaccounts: { Branch: 2 },
      webhooks: { [hook]: 1 },
    });
    const before = digest(b.file);
    const again = await seed(b.api, [b.write('v1.yaml', v1)]);
    expect(digest(b.file)).toBe(before);
    for (const [kind, s] of Object.entries(again.summary)) expect([kind, s.created, s.updated]).toEqual([kind, 0, 0]);

    const plan = await seed(b.api, [b.write('v2.yaml', v2)], { dryRun: true });
    expect(digest(b.file)).toBe(before);
    expect(plan.ids).toEqual({
      fields: { plan: 'unchanged', support: 'unchanged' },
      field_relationships: { Support: 'update' },
      groups: { Gold: 'unchanged', Silver: 'unchanged' },
      event_types: { purchase: 'update' },
      touchpoint_types: { visit: 'update' },
      members: { 'a@example.com': 'unchanged' },
      mailings: { M: 'unchanged' },
      sms_campaigns: { Draft: 'update' },
      workflows: { W: 'update' },
      member_events: { [event]: 'unchanged' },
      touchpoints: { [touchpoint]: 'unchanged' },
      // The service cannot change a sub-account: one that exists by name is left as it is.
      subaccounts: { Branch: 'unchanged' },
      webhooks: { [hook]: 'update' },
    });

    const done = await seed(b.api, [b.write('v2.yaml', v2)]);
    expect(done.ids).toEqual({ ...first.ids, members: { 'a@example.com': 1 }, mailings: { M: 1 } });
    const { api } = b;
    expect(((await api.get('/fields/relationships/1')) as any).options).toEqual({ free: ['email'], pro: ['email', 'phone'] });
    expect(((await api.get('/events/1')) as any).display_name).toBe('A purchase');
    expect(((await api.get('/touchpoints/1')) as any).display_name).toBe('Visit');
    // The draft took the new content and was sent through the simulated sender.
    const sms = (await api.get('/sms/campaigns/1')) as any;
    expect([sms.message, sms.recipients, sms.send_status, sms.deliveries]).toEqual([
      'Hello again',
      { groups: [2], members: [1], segments: [], suppression_segments: [] },
      'c',
      1,
    ]);
    expect((await api.get('/workflows/1')) as any).toMatchObject({
      match: { type: 'purchase', channel: 'web' },
      actions: [
        { type: 'add_to_groups', group_ids: [2] },
        { type: 'record_touchpoint', touchpoint_type_id: 1, value_from: 'page' },
        { type: 'send_mailing', mailing_id: 1 },
      ],
    });
    expect(((await api.get('/enterprise/subaccount/2')) as any).account_timezone).toBeNull();
    expect(((await api.get('/webhooks/1')) as any).method).toBe('GET');

    const settled = digest(b.file);
    const third = await seed(b.api, [b.write('v2.yaml', v2)]);
    expect(digest(b.file)).toBe(settled);
    for (const [kind, s] of Object.entries(third.summary)) expect([kind, s.created, s.updated]).toEqual([kind, 0, 0]);
    // A campaign that has gone out is left as it is, whatever the file now says.
    const sent = await seed(b.api, [b.write('v3.yaml', v2.replace('Hello again', 'Hello once more'))], { dryRun: true });
    expect(sent.ids.sms_campaigns).toEqual({ Draft: 'unchanged' });
  });

  test('names that are in neither the file nor the account, with their paths; nothing written', async () => {
    const b = box();
    const before = digest(b.file);
    const file = b.write(
      'refs.yaml',
      [
        'fields: [{shortcut_name: plan, field_type: text, widget_type: select one, options: [a]}]',
        'field_relationships:',
        '  - {relationship_name: R, parent_field: plan, child_field: nope, options: {a: []}}',
        'sms_campaigns:',
        '  - {name: S, message: Hi, from_phone_number: "+15555550100", recipients: {groups: [Ghost], members: [nobody@example.com], segments: [Nope]}}',
        'workflows:',
        '  - name: W',
        '    match: {type: x}',
        '    actions:',
        '      - {type: add_to_groups, groups: [Ghost]}',
        '      - {type: record_event, event_type: refund}',
        '      - {type: record_touchpoint, touchpoint_type: visit}',
        '      - {type: set_fields, values: {colour: red}, from: {plan: p}}',
        '      - {type: send_mailing, mailing: Nope}',
        'member_events:',
        '  - {member: ghost@example.com, event_type: refund, timestamp: "2026-04-01T10:00:00Z", mailing: Nope}',
        'subaccounts: [Branch]',
        'webhooks:',
        '  - {event: member_explode, url: "https://hooks.example.com/a"}',
      ].join('\n'),
    );
    const lines = await refusal(b, [file]);
    expect(lines.slice(0, -1)).toEqual([
      'DIR/refs.yaml: field_relationships[0].child_field: names field "nope", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: sms_campaigns[0].recipients.groups[0]: names group "Ghost", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: sms_campaigns[0].recipients.members[0]: names member "nobody@example.com", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: sms_campaigns[0].recipients.segments[0]: names search "Nope", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: workflows[0].actions[0].groups[0]: names group "Ghost", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: workflows[0].actions[1].event_type: names event type "refund", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: workflows[0].actions[2].touchpoint_type: names touchpoint type "visit", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: workflows[0].actions[3].values.colour: names field "colour", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: workflows[0].actions[4].mailing: names mailing "Nope", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: member_events[0].member: names member "ghost@example.com", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: member_events[0].event_type: names event type "refund", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: member_events[0].mailing: names mailing "Nope", which is neither in the fixture nor in the account',
      'DIR/refs.yaml: subaccounts[0]: account 1 is not an HQ account, and only an HQ account has sub-accounts (`amsg init --hq` makes a local one an HQ)',
    ]);
    expect(lines.at(-1)).toMatch(
      /^DIR\/refs\.yaml: webhooks\[0\]\.event: must be one of the service's webhook events \(mailing_finish, .*member_add, .*\), got "member_explode"$/,
    );
    expect(digest(b.file)).toBe(before);
  });

  test('shapes: an action of an unknown type, a misspelled key in an action, a campaign sent without recipients', async () => {
    const b = box();
    const file = b.write(
      'shape.yaml',
      [
        'groups: [Gold]',
        'workflows:',
        '  - {name: W, match: {type: x}, actions: [{type: explode}, {type: add_to_groups, group: [Gold]}]}',
        'sms_campaigns:',
        '  - {name: S, message: Hi, from_phone_number: "+15555550100", status: sent}',
        'event_types: [{event_type: purchase, dispaly_name: P}]',
        'touchpoints: [{member: a@example.com, type_name: v, timestamp: yesterday}]',
      ].join('\n'),
    );
    expect(await refusal(b, [file])).toEqual([
      'DIR/shape.yaml: workflows[0].actions[0].type: must be one of add_to_groups, record_event, record_touchpoint, set_fields, send_mailing, got "explode"',
      'DIR/shape.yaml: workflows[0].actions[1].group: unknown key (expected type, groups)',
      'DIR/shape.yaml: workflows[0].actions[1].groups: is required',
      'DIR/shape.yaml: event_types[0].dispaly_name: unknown key (expected event_type, display_name)',
      'DIR/shape.yaml: touchpoints[0].timestamp: must be a UTC date-time such as 2026-04-01T10:00:00Z, got "yesterday"',
    ]);
    writeFileSync(file, 'groups: [Gold]\nsms_campaigns:\n  - {name: S, message: Hi, from_phone_number: "+15555550100", status: sent}\n');
    expect(await refusal(b, [file])).toEqual([
      'DIR/shape.yaml: sms_campaigns[0].recipients: a campaign that is sent needs recipients (groups, members or segments)',
    ]);
  });
});

test('a member row the service refuses once writing began fails the seed naming the record (the others are written)', async () => {
  const b = box();
  // A phone number is the service's to judge: the seed does not check it first.
  const file = b.write('t.yaml', 'members:\n  - {email: ok@example.com}\n  - {email: bad@example.com, sms: {phone_number: "12"}}\n');
  const err = await seed(b.api, [file]).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).toBeInstanceOf(SeedError);
  const lines = err!.message.replaceAll(b.dir, 'DIR').split('\n');
  expect(lines[0]).toBe(
    'the service refused 1 member(s) of the fixture (the others were written; run the seed again once they are fixed):',
  );
  expect(lines[1]).toMatch(/^amsg: DIR\/t\.yaml: members\[1\]: .*phone/);
  expect(await b.api.get('/members', { count: true })).toBe(1);
});

test('a field relationship of the account holds for seeded members too: a pair it does not allow is refused, naming the record and the rule', async () => {
  const b = box();
  const fieldOf = async (shortcut_name: string, widget_type: string, options: string[]) =>
    b.api.post<number>('/fields', { shortcut_name, display_name: shortcut_name, field_type: 'text', widget_type, options });
  const region = await fieldOf('region', 'select one', ['EU', 'US']);
  const office = await fieldOf('office', 'radio', ['Oslo', 'Austin']);
  await b.api.post('/fields/relationships', {
    relationship_name: 'Region',
    parent_field_id: region,
    child_field_id: office,
    options: { EU: ['Oslo'], US: ['Austin'] },
  });
  const file = b.write(
    'r.yaml',
    'members:\n  - {email: eu@example.com, fields: {region: EU, office: Oslo}}\n  - {email: mix@example.com, fields: {region: EU, office: Austin}}\n',
  );
  const err = await seed(b.api, [file]).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).toBeInstanceOf(SeedError);
  const lines = err!.message.replaceAll(b.dir, 'DIR').split('\n');
  expect(lines[1]).toMatch(/^amsg: DIR\/r\.yaml: members\[1\]: .*office.*Austin/);
  expect(lines[1]).toContain('Oslo');
  const members = await b.api.get<{ email: string }[]>('/members');
  expect(members.map((m) => m.email)).toEqual(['eu@example.com']);
});

test('every kind is one declarative entry, and names only kinds written before it (or itself)', () => {
  const order = KINDS.map((k) => k.name);
  expect(order).toEqual([
    'fields',
    'field_relationships',
    'groups',
    'subscriptions',
    'searches',
    'event_types',
    'touchpoint_types',
    'members',
    'mailings',
    'sms_campaigns',
    'triggers',
    'workflows',
    'member_events',
    'touchpoints',
    'subaccounts',
    'webhooks',
  ]);
  const dependsOn: Record<string, string[]> = {
    field_relationships: ['fields'],
    searches: ['groups', 'subscriptions', 'searches'],
    members: ['groups', 'subscriptions', 'fields', 'field_relationships'],
    mailings: ['groups', 'subscriptions', 'searches', 'members'],
    sms_campaigns: ['groups', 'searches', 'members'],
    triggers: ['mailings', 'fields'],
    workflows: ['groups', 'fields', 'mailings', 'event_types', 'touchpoint_types'],
    member_events: ['members', 'event_types', 'mailings'],
    touchpoints: ['members', 'touchpoint_types'],
  };
  for (const [kind, deps] of Object.entries(dependsOn))
    for (const dep of deps) expect(order.indexOf(dep)).toBeLessThanOrEqual(order.indexOf(kind));
});

export type { SeedResult };
