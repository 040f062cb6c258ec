import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';
import { fixture, SMALL_YAML_IDS } from '../fixtures.js';

/**
 * `amsg seed`, `amsg db` and `amsg serve --seed`, end to end. The seed runs in local
 * mode and against a spawned `amsg serve`; the transcripts, which include a dump of
 * the state the fixture left (every list), must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('amsg seed (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);

  // small.yaml has a sub-account: the account is made an HQ (in remote mode, under the running server).
  beforeAll(
    () =>
      box.start().then(async () => {
        const hq = await box.raw(['init', '--hq'], { AMSG_DB: box.db });
        if (hq.exitCode !== 0) throw new Error(`init --hq failed: ${hq.stderr}`);
      }),
    60_000,
  );
  afterAll(() => box.stop());

  test('seeds every kind and prints the ids by name; a second run leaves everything unchanged', async () => {
    const ids = await json('seed', fixture('small.yaml'));
    expect(ids).toEqual(SMALL_YAML_IDS);
    const again = await box.amsg('seed', fixture('small.yaml'));
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(ids);
    // Every kind, one line each, nothing created or updated.
    const lines = again.stderr.split('\n').filter((l) => /^amsg: [a-z_]+: /.test(l));
    expect(lines).toEqual([
      'amsg: fields: 5 unchanged',
      'amsg: field_relationships: 1 unchanged',
      'amsg: groups: 2 unchanged',
      'amsg: subscriptions: 1 unchanged',
      'amsg: searches: 3 unchanged',
      'amsg: event_types: 1 unchanged',
      'amsg: touchpoint_types: 1 unchanged',
      'amsg: members: 4 unchanged',
      'amsg: mailings: 2 unchanged',
      'amsg: sms_campaigns: 1 unchanged',
      'amsg: triggers: 1 unchanged',
      'amsg: workflows: 1 unchanged',
      'amsg: member_events: 1 unchanged',
      'amsg: touchpoints: 1 unchanged',
      'amsg: subaccounts: 1 unchanged',
      'amsg: webhooks: 1 unchanged',
    ]);
    expect(await json('seed', fixture('small.yaml'), '--dry-run')).toMatchObject({
      groups: { Gold: 'unchanged', Newsletter: 'unchanged' },
      field_relationships: { 'Support by plan': 'unchanged' },
      sms_campaigns: { 'Flash sale': 'unchanged' },
      workflows: { 'Web buyers': 'unchanged' },
      subaccounts: { 'Oslo branch': 'unchanged' },
      webhooks: { 'group_delete https://hooks.example.com/amsg': 'unchanged' },
    });
  });

  test('the state it leaves (compared between the modes)', async () => {
    for (const args of [
      ['fields', 'list'],
      ['groups', 'list'],
      ['subscriptions', 'list'],
      ['searches', 'list'],
      ['members', 'list', '--deleted'],
      ['mailings', 'list'],
      ['members', 'mailings', 'ada@example.com'],
      ['triggers', 'list'],
      ['fields', 'relationships', 'list'],
      ['events', 'types', 'list'],
      ['touchpoints', 'types', 'list'],
      ['sms', 'campaigns', 'list'],
      ['workflows', 'list'],
      ['events', 'list', 'ada@example.com'],
      ['touchpoints', 'list', 'kari@example.no'],
      ['accounts', 'list'],
      ['webhooks', 'list'],
    ])
      expect((await run(...args)).exitCode).toBe(0);
  });

  test('a generated audience with a sent mailing, on top', async () => {
    const ids = await json('seed', fixture('ci.yaml'));
    expect(ids.members).toEqual({ 'ada@example.com': 1, 'bob@example.com': 5 });
    expect(await json('members', 'list', '--count')).toBe(204);
    expect((await run('groups', 'list')).exitCode).toBe(0);
    expect((await run('members', 'list', '--start', '4', '--end', '12')).exitCode).toBe(0);
  });

  test('a bad fixture: exit 2, one line per problem with file and path, nothing written', async () => {
    const file = join(box.dir, 'bad.yaml');
    writeFileSync(
      file,
      'groups: [Fresh]\nmembers:\n  - {email: new@example.com, groups: [Nope]}\n  - {email: two@example.com, feilds: {city: Oslo}, status: x}\n',
    );
    const r = await run('seed', file);
    expect(r.exitCode).toBe(2);
    // Shapes first: names are checked once every record has its shape.
    expect(r.stderr.split('\n').filter((l) => !l.startsWith('amsg: acting on'))).toEqual([
      'amsg: the fixture was refused, nothing was written:',
      `amsg: ${file}: members[1].feilds: unknown key (expected email, fields, groups, subscriptions, sms, status, archived)`,
      `amsg: ${file}: members[1].status: must be one of a, o, e, got "x"`,
    ]);
    writeFileSync(file, 'groups: [Fresh]\nmembers:\n  - {email: new@example.com, groups: [Nope]}\n');
    const refs = await run('seed', file);
    expect([refs.exitCode, refs.stderr.split('\n').pop()]).toEqual([
      2,
      `amsg: ${file}: members[0].groups[0]: names group "Nope", which is neither in the fixture nor in the account`,
    ]);
    expect((await json('groups', 'list')).map((g: any) => g.group_name)).toEqual(['Gold', 'Newsletter', 'Silver']);
  });

  test('--reset asks for --yes off a terminal, then empties the account before seeding', async () => {
    const refused = await run('seed', fixture('ci.yaml'), '--reset');
    expect([refused.exitCode, refused.stderr.trim().split('\n').pop()]).toEqual([
      2,
      'amsg: refusing to empty the account before seeding it, deleting 1 trigger, 2 mailings, 3 searches, 205 members, 1 subscription, 3 groups, 5 fields without --yes (no terminal to confirm on)',
    ]);
    const ids = await json('seed', fixture('ci.yaml'), '--reset', '--yes');
    expect(ids.groups).toEqual({ Gold: 4, Silver: 5 });
    expect(await json('members', 'list', '--count')).toBe(202);
    expect((await run('mailings', 'list')).exitCode).toBe(0);
    // What small.yaml added of the second round's kinds is gone (the sub-account retired).
    expect(await json('workflows', 'list')).toEqual([]);
    expect(await json('webhooks', 'list')).toEqual([]);
    expect(await json('sms', 'campaigns', 'list')).toEqual([]);
    expect(await json('events', 'types', 'list')).toEqual([]);
    expect(await json('fields', 'relationships', 'list')).toEqual([]);
    expect(await json('accounts', 'list')).toEqual({ subaccounts: [] });
  });

  if (mode === 'remote')
    test('db snapshot and db restore of the file amsg serve has open', async () => {
      const snap = join(box.dir, 'snap.db');
      const local = { AMSG_DB: box.db };
      const taken = await box.raw(['db', 'snapshot', snap], local);
      expect(taken.exitCode).toBe(0);
      expect(JSON.parse(taken.stdout)).toMatchObject({ snapshot: snap, db: box.db });
      expect((await box.amsg('members', 'add', 'later@example.com')).exitCode).toBe(0);
      expect(await box.json('members', 'list', '--count')).toBe(203);
      expect((await box.raw(['db', 'restore', snap], local)).exitCode).toBe(2); // no --yes
      const restored = await box.raw(['db', 'restore', snap, '--yes'], local);
      expect([restored.exitCode, JSON.parse(restored.stdout)]).toEqual([0, { restored: snap, db: box.db }]);
      // The running server answers from the restored file.
      expect(await box.json('members', 'list', '--count')).toBe(202);
      expect((await box.amsg('members', 'get', 'later@example.com')).exitCode).toBe(1);
      const remote = await box.amsg('db', 'snapshot', snap);
      expect([remote.exitCode, remote.stderr.trim()]).toEqual([
        2,
        'amsg: amsg db works on a local database file: pass --db FILE or --local (a remote service has its own backups)',
      ]);
    });
});

test('both modes print the same ids and leave the same state', () => {
  expect(transcripts.remote.length).toBeGreaterThan(10);
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});

test('amsg serve --seed starts seeded, and POST /_sandbox/reset goes back to it', async () => {
  const box = new Sandbox('local');
  const db = join(box.dir, 'ci.db');
  const server = execa('node', [BIN, 'serve', '--port', '0', '--db', db, '--seed', fixture('ci.yaml')], {
    env: { ...process.env, ...box.baseEnv, AMSG_NOW: NOW },
    reject: false,
  });
  try {
    let err = '';
    server.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no URL: ${err}`)), 30_000);
      server.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.split('\n')[0].trim());
        }
      });
    });
    expect(err).toContain('amsg: --seed: members: 202 created (200 generated)\n');
    const key = /shown only now\): (\S+)/.exec(err)![1];
    const env = { AMSG_BASE_URL: url, AMSG_API_KEY: key };
    expect((await box.raw(['members', 'add', 'x@example.com'], env)).exitCode).toBe(0);
    expect((await box.raw(['members', 'list', '--count'], env)).stdout).toBe('203');
    const reset = await fetch(`${url}/_sandbox/reset`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(key).toString('base64')}` },
    });
    expect([reset.status, await reset.json()]).toEqual([200, true]);
    expect((await box.raw(['members', 'list', '--count'], env)).stdout).toBe('202');
    // The seeded ids are there to find by name.
    expect(JSON.parse((await box.raw(['seed', fixture('ci.yaml'), '--dry-run'], env)).stdout).groups).toEqual({
      Gold: 'unchanged',
      Silver: 'unchanged',
    });
  } finally {
    server.kill('SIGTERM');
    await server;
    await box.stop();
  }
});
