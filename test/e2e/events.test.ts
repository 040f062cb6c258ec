import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { BIN, NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg events`, `amsg touchpoints`, `amsg events ingest` and `amsg workflows`, end to
 * end: run in local mode and against a spawned `amsg serve`; the two transcripts (exit
 * code and stdout of every run) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

const AT_NOW = `@D:${NOW.slice(0, 19)}`;

describe.each<Mode>(['local', 'remote'])('amsg events, touchpoints, workflows (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { record, run, json } = recorder(box, transcripts[mode]);
  const withInput = async (input: string, ...args: string[]) => {
    const r = await box.raw(args, box.env, input);
    record(r);
    return r;
  };
  /** Waits (unrecorded) until the service has processed every ingested event: serve does it in the background. */
  const processed = async () => {
    for (let i = 0; i < 200; i++) {
      if ((await box.json('events', 'inbound', '--outcome', 'queued', '--count')) === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('ingested events were not processed');
  };

  beforeAll(async () => {
    await box.start();
    for (const args of [
      ['fields', 'create', 'city', '--type', 'text'],
      ['members', 'add', 'ada@example.com'],
      ['members', 'add', 'bob@example.com'],
      ['members', 'add', 'cy@example.com'],
      ['members', 'optout', 'cy@example.com'],
      ['groups', 'create', 'Buyers'],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
  }, 60_000);
  afterAll(() => box.stop());

  test('event types: create, list, get by name, rename, delete with --yes', async () => {
    expect(await json('events', 'types', 'create', 'purchase', '--display-name', 'Purchase')).toEqual({
      event_type_id: 1,
      account_id: 1,
      event_type: 'purchase',
      display_name: 'Purchase',
      created_at: AT_NOW,
    });
    expect((await json('events', 'types', 'create', 'visit')).display_name).toBe('visit');
    expect((await json('events', 'types', 'create', 'refund')).event_type_id).toBe(3);
    expect((await json('events', 'types', 'list')).map((t: any) => t.event_type)).toEqual(['purchase', 'visit', 'refund']);
    expect(await json('events', 'types', 'list', '--count')).toBe(3);
    const first = await run('events', 'types', 'list', '--limit', '1', '--json');
    expect(JSON.parse(first.stdout).map((t: any) => t.event_type)).toEqual(['purchase']);
    expect(first.stderr).toContain('1 of 3 shown; --all for every row, --start 1 for the rows after these');
    expect((await json('events', 'types', 'get', 'VISIT')).event_type_id).toBe(2);
    expect(await json('events', 'types', 'rename', 'visit', 'store-visit')).toMatchObject({
      event_type_id: 2,
      event_type: 'store-visit',
      display_name: 'visit',
    });
    const taken = await run('events', 'types', 'rename', 'store-visit', 'Purchase');
    expect([taken.exitCode, taken.stdout]).toEqual([1, '']);
    expect(taken.stderr).toContain('event_type: the event type "Purchase" already exists (id 1)');
    const noYes = await run('events', 'types', 'delete', 'refund');
    expect(noYes.exitCode).toBe(2);
    expect(noYes.stderr).toContain('refusing to delete event type "refund" (3) and every event of it without --yes');
    expect(await json('events', 'types', 'delete', 'refund', '--yes')).toBe(true);
    const missing = await run('events', 'types', 'get', '3');
    expect([missing.exitCode, missing.stderr.includes('event type 3 not found')]).toEqual([1, true]);
  });

  test('record and list member events; bad input names the field and writes nothing', async () => {
    const [created] = await json(
      'events',
      'record',
      'ada@example.com',
      '--type',
      'purchase',
      '--value',
      '19.99',
      '--attr',
      'sku=A1',
      '--at',
      '2026-05-01T09:00:00Z',
    );
    expect(created).toEqual({
      event_id: 1,
      account_id: 1,
      member_id: 1,
      event_type_id: 1,
      event_monetary_value: 19.99,
      event_timestamp: '@D:2026-05-01T09:00:00',
      inserted_at: AT_NOW,
      mailing_id: null,
      attributes: { sku: 'A1' },
    });
    await json('events', 'record', '1', '--type', '2', '--attributes', '{"aisle": 4}');
    expect((await json('events', 'list', 'ada@example.com')).map((e: any) => [e.event_id, e.event_type_id, e.attributes])).toEqual([
      [1, 1, { sku: 'A1' }],
      [2, 2, { aisle: 4 }],
    ]);
    expect(await json('events', 'list', '1', '--count')).toBe(2);
    expect((await json('events', 'list', '1', '--start', '1', '--end', '2')).map((e: any) => e.event_id)).toEqual([2]);
    const unknownType = await run('events', 'record', 'ada@example.com', '--type', 'gift');
    expect([unknownType.exitCode, unknownType.stderr.includes('events[0].event_type: no event type is named "gift"')]).toEqual([1, true]);
    const unknownMember = await run('events', 'record', 'zed@example.com', '--type', 'purchase');
    expect(unknownMember.stderr).toContain('events[0].email: no member has the address zed@example.com');
    const badMailing = await run('events', 'record', '1', '--type', 'purchase', '--mailing', '99');
    expect(badMailing.stderr).toContain('events[0].mailing_id: mailing 99 not found in account 1');
    const badValue = await run('events', 'record', '1', '--type', 'purchase', '--value', 'lots');
    expect(badValue.exitCode).toBe(2);
    expect(await json('events', 'list', '1', '--count')).toBe(2);
    const table = await run('events', 'list', '1', '-o', 'table');
    // Tables show readable times (the harness runs in UTC); JSON keeps the @D: wire form.
    expect(table.stdout).toMatch(/│ 1\s+│ 1\s+│ 1\s+│ 19\.99\s+│ 2026-05-01 09:00\s+│\s+│ sku=A1\s+│/);
    expect((await json('events', 'list', '1'))[0].event_timestamp).toBe('@D:2026-05-01T09:00:00');
  });

  test('touchpoints: types, record, list, get, delete', async () => {
    expect((await json('touchpoints', 'types', 'create', 'web', '--display-name', 'Web visit')).touchpoint_type_id).toBe(1);
    const [tp] = await json('touchpoints', 'record', 'bob@example.com', '--type', 'web', '--value', '2.5', '--attr', 'page=/shoes');
    expect(tp).toEqual({
      touchpoint_id: 1,
      account_id: 1,
      member_id: 2,
      touchpoint_type_id: 1,
      touchpoint_monetary_value: 2.5,
      touchpoint_timestamp: AT_NOW,
      inserted_at: AT_NOW,
      mailing_id: null,
      attributes: { page: '/shoes' },
    });
    expect(await json('touchpoints', 'list', 'bob@example.com')).toEqual([tp]);
    expect(await json('touchpoints', 'get', '1')).toEqual(tp);
    const unsure = await run('touchpoints', 'delete', '1');
    expect([unsure.exitCode, unsure.stderr.includes('refusing to delete touchpoint 1 of member bob@example.com (2), at ')]).toEqual([
      2,
      true,
    ]);
    expect(await json('touchpoints', 'delete', '1', '--yes')).toBe(true);
    expect((await run('touchpoints', 'get', '1')).exitCode).toBe(1);
    expect(await json('touchpoints', 'types', 'delete', 'web', '--yes')).toBe(true);
  });

  test('workflows and ingestion: NDJSON and a JSON array, refused lines with their numbers, outcomes, runs', async () => {
    const refused = await run(
      'workflows',
      'create',
      'Nothing',
      '--match',
      'type=purchase',
      '--action',
      '{"type": "add_to_groups", "group_ids": [9]}',
    );
    expect([refused.exitCode, refused.stderr.includes('actions[0].group_ids[0]: group 9 not found')]).toEqual([1, true]);
    expect(
      await json(
        'workflows',
        'create',
        'Web buyers',
        '--match',
        'type=purchase',
        '--match',
        'order.channel=web',
        '--action',
        '{"type": "add_to_groups", "group_ids": [1]}',
        '--action',
        '{"type": "record_event", "event_type_id": 1, "value_from": "order.total"}',
        '--action',
        '{"type": "set_fields", "from": {"city": "address.city"}}',
      ),
    ).toBe(1);
    expect(await json('workflows', 'get', '1')).toEqual({
      workflow_id: 1,
      account_id: 1,
      name: 'Web buyers',
      match: { type: 'purchase', 'order.channel': 'web' },
      actions: [
        { type: 'add_to_groups', group_ids: [1] },
        { type: 'record_event', event_type_id: 1, value_from: 'order.total' },
        { type: 'set_fields', from: { city: 'address.city' } },
      ],
      run_count: 0,
      created_at: AT_NOW,
      modified_at: AT_NOW,
    });
    const file = join(box.dir, 'march.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify({ email: 'ada@example.com', type: 'purchase', order: { channel: 'web', total: 30 }, address: { city: 'Oslo' } }),
        '{"email": "bob@example.com", "type": "purchase", ',
        JSON.stringify({ email: 'bob@example.com', type: 'purchase', order: { channel: 'store' } }),
        '',
        JSON.stringify({ type: 'purchase' }),
        JSON.stringify({ email: 'cy@example.com', type: 'purchase', order: { channel: 'web' } }),
        JSON.stringify({ email: 'nobody@example.com', type: 'purchase', order: { channel: 'web' } }),
        JSON.stringify({ email: 'not-an-address', type: 'purchase' }),
      ].join('\n') + '\n',
    );
    const errors = join(box.dir, 'refused.ndjson');
    const ingest = await run('events', 'ingest', file, '--concurrency', '1', '--errors-out', errors);
    expect(ingest.exitCode).toBe(4);
    expect(JSON.parse(ingest.stdout)).toEqual({ read: 7, sent: 5, refused: 2 });
    expect(ingest.stderr).toMatch(/amsg: line 2: not valid JSON/);
    expect(ingest.stderr).toContain('amsg: line 5: refused (HTTP 400): email: an event must have an email key');
    expect(
      readFileSync(errors, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).line),
    ).toEqual([2, 5]);
    await processed();
    expect((await json('events', 'inbound')).map((e: any) => [e.email, e.outcome])).toEqual([
      ['ada@example.com', 'ran'],
      ['bob@example.com', 'no workflow matched'],
      ['cy@example.com', 'member not active'],
      ['nobody@example.com', 'no member'],
      ['not-an-address', 'invalid email'],
    ]);
    expect((await json('events', 'inbound', '--outcome', 'no-match')).map((e: any) => e.inbound_id)).toEqual([2]);
    expect(await json('events', 'inbound', '--outcome', 'ran', '--count')).toBe(1);
    const one = await json('events', 'inbound', '1');
    expect(one.runs).toEqual([
      {
        run_id: 1,
        workflow_id: 1,
        inbound_id: 1,
        member_id: 1,
        ran_at: AT_NOW,
        actions: [
          { type: 'add_to_groups', ok: true, added_to: [1] },
          { type: 'record_event', ok: true, event_id: 3 },
          { type: 'set_fields', ok: true, fields: ['city'] },
        ],
      },
    ]);
    expect(await json('workflows', 'runs', '1')).toEqual(one.runs);
    expect(await json('workflows', 'runs', '1', '--count')).toBe(1);
    // What the actions left: the group, the event with its value, the field.
    expect((await json('groups', 'members', 'Buyers')).map((m: any) => m.email)).toEqual(['ada@example.com']);
    expect((await json('events', 'list', 'ada@example.com')).at(-1)).toMatchObject({
      event_id: 3,
      event_monetary_value: 30,
      attributes: { inbound_id: 1 },
    });
    expect((await json('members', 'get', 'ada@example.com')).fields).toEqual({ city: 'Oslo' });

    // A JSON array on stdin, one element spread over lines; the bad element is named by the line it starts on.
    const array = `[\n  {"email": "bob@example.com", "type": "purchase",\n   "order": {"channel": "web", "total": "12.5"}},\n  [1, 2],\n  {"email": "ada@example.com", "note": "a ] and a , in a string"}\n]\n`;
    const piped = await withInput(array, 'events', 'ingest', '-', '--concurrency', '1');
    expect(piped.exitCode).toBe(4);
    expect(JSON.parse(piped.stdout)).toEqual({ read: 3, sent: 2, refused: 1 });
    expect(piped.stderr).toContain('amsg: line 4: refused (HTTP 400): body: an event is a JSON object with an email key');
    await processed();
    expect((await json('events', 'inbound', '--start', '5')).map((e: any) => [e.inbound_id, e.email, e.outcome])).toEqual([
      [6, 'bob@example.com', 'ran'],
      [7, 'ada@example.com', 'no workflow matched'],
    ]);
    expect((await json('groups', 'members', 'Buyers')).map((m: any) => m.email)).toEqual(['ada@example.com', 'bob@example.com']);

    expect(await json('workflows', 'update', '1', '--name', 'Buyers online')).toBe(true);
    expect((await json('workflows', 'list')).map((w: any) => [w.workflow_id, w.name, w.run_count])).toEqual([[1, 'Buyers online', 2]]);
    const table = await run('workflows', 'list', '-o', 'table');
    expect(table.stdout).toContain('Buyers online');
    const oneRun = await run('workflows', 'runs', '1', '--limit', '1', '--json');
    expect(JSON.parse(oneRun.stdout)).toHaveLength(1);
    expect(oneRun.stderr).toContain('1 of 2 shown; --all for every row, --start 1 for the rows after these');
    const unsure = await run('workflows', 'delete', '1');
    expect([unsure.exitCode, unsure.stderr.includes('refusing to delete workflow 1 "Buyers online" and its 2 runs without --yes')]).toEqual(
      [2, true],
    );
    expect(await json('workflows', 'delete', '1', '--yes')).toBe(true);
    expect(await json('workflows', 'list', '--count')).toBe(0);
    const missingFile = await run('events', 'ingest', join(box.dir, 'nope.ndjson'));
    expect(missingFile.exitCode).toBe(2);
  });

  test('ingest with many in flight: every line arrives once', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => JSON.stringify({ email: `bulk${i}@example.com`, n: i }));
    const r = await box.raw(['events', 'ingest', '-', '--concurrency', '8'], box.env, lines.join('\n'));
    expect([r.exitCode, JSON.parse(r.stdout)]).toEqual([0, { read: 60, sent: 60, refused: 0 }]);
    await processed();
    const inbound = await box.json('events', 'inbound', '--outcome', 'no-member');
    const bulk = inbound.filter((e: any) => e.email.startsWith('bulk')).map((e: any) => e.payload.n);
    expect(bulk.sort((a: number, b: number) => a - b)).toEqual(lines.map((_, i) => i));
  });

  test.skipIf(mode === 'local')('remote: events go to events_url (AMSG_EVENTS_URL) when it differs from the base URL', async () => {
    const line = JSON.stringify({ email: 'ada@example.com', type: 'visit' });
    // A different host that is not listening: the events went there, not to the base URL.
    const away = await box.raw(['events', 'ingest', '-'], { ...box.env, AMSG_EVENTS_URL: 'http://127.0.0.1:9' }, line);
    expect(away.exitCode).toBe(3);
    expect(away.stderr).toContain('cannot reach http://127.0.0.1:9');
    const before = await box.json('events', 'inbound', '--count');
    const there = await box.raw(['events', 'ingest', '-'], { ...box.env, AMSG_EVENTS_URL: `${box.url}/` }, line);
    expect([there.exitCode, JSON.parse(there.stdout)]).toEqual([0, { read: 1, sent: 1, refused: 0 }]);
    expect(await box.json('events', 'inbound', '--count')).toBe(before + 1);
  });

  test('help', async () => {
    const help = await run('events', 'ingest', '--help');
    expect(help.stdout).toContain('$ amsg events ingest march.ndjson --errors-out refused.ndjson');
    expect((await run('workflows', '--help')).stdout).toContain('{"type": "send_mailing", "mailing_id": 7}');
    expect((await run('--help')).stdout).toContain('touchpoints');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});

describe('a kill during processing', () => {
  const box = new Sandbox('local');
  beforeAll(() => box.start(), 60_000);
  afterAll(() => box.stop());

  test('amsg serve killed (SIGKILL) while it processes: no event processed twice, none lost', async () => {
    const MEMBERS = 300;
    const EVENTS = 6000;
    const csv = join(box.dir, 'members.csv');
    writeFileSync(csv, 'email\n' + Array.from({ length: MEMBERS }, (_, i) => `m${i}@example.com`).join('\n') + '\n');
    for (const args of [
      ['members', 'import', csv],
      ['groups', 'create', 'Buyers'],
      ['events', 'types', 'create', 'purchase'],
      [
        'workflows',
        'create',
        'W',
        '--match',
        'type=purchase',
        '--action',
        '{"type": "record_event", "event_type_id": 1, "value_from": "n"}',
        '--action',
        '{"type": "add_to_groups", "group_ids": [1]}',
      ],
    ]) {
      const r = await box.amsg(...args);
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
    // Queued as the ingestion endpoint stores them, all at once, so the server starts with a backlog.
    const db = openDb(box.db);
    const insert = db.prepare(
      "INSERT INTO inbound_events (account_id, email, payload, received_at) VALUES (1, ?, ?, '2026-05-06T07:08:09.000000')",
    );
    db.transaction(() => {
      for (let i = 0; i < EVENTS; i++)
        insert.run(`m${i % MEMBERS}@example.com`, JSON.stringify({ email: `m${i % MEMBERS}@example.com`, type: 'purchase', n: i }));
    })();
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const consistent = () => {
      const processed = count("SELECT COUNT(*) FROM inbound_events WHERE status = 'o'");
      // Every processed event has exactly its run and its event; no queued one has either.
      expect(count('SELECT COUNT(*) FROM workflow_runs')).toBe(processed);
      expect(count('SELECT COUNT(*) FROM member_events')).toBe(processed);
      expect(count('SELECT COUNT(*) FROM (SELECT inbound_id FROM workflow_runs GROUP BY inbound_id HAVING COUNT(*) > 1)')).toBe(0);
      expect(count("SELECT COUNT(*) FROM workflow_runs r JOIN inbound_events i USING (inbound_id) WHERE i.status = 'q'")).toBe(0);
      expect(count("SELECT n FROM inbound_counts WHERE outcome = 'ran'") ?? 0).toBe(processed);
      expect(count('SELECT run_count FROM workflows')).toBe(processed);
      return processed;
    };
    const serve = () => {
      const child = execa('node', [BIN, 'serve', '--port', '0', '--db', box.db], {
        env: { ...process.env, ...box.baseEnv },
        reject: false,
      });
      return child;
    };
    try {
      const first = serve();
      let processed = 0;
      for (let i = 0; i < 3000 && processed === 0; i++) {
        await new Promise((r) => setTimeout(r, 5));
        processed = count("SELECT COUNT(*) FROM inbound_events WHERE status = 'o'");
      }
      first.kill('SIGKILL');
      await first;
      const atKill = consistent();
      expect(atKill).toBeGreaterThan(0);
      // Killed half way (else this run proved nothing about a kill).
      expect(atKill).toBeLessThan(EVENTS);

      const second = serve();
      for (let i = 0; i < 6000 && count("SELECT COUNT(*) FROM inbound_events WHERE status = 'q'") > 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      second.kill('SIGTERM');
      await second;
      expect(consistent()).toBe(EVENTS);
      // Each event recorded its own n once.
      expect(count('SELECT COUNT(DISTINCT event_monetary_value) FROM member_events')).toBe(EVENTS);
    } finally {
      db.close();
    }
  }, 120_000);
});

describe('amsg events ingest on a terminal', () => {
  const box = new Sandbox('local');
  beforeAll(() => box.start(), 60_000);
  afterAll(() => box.stop());

  test('draws its Ink view and ends with the summary sentence and the refused line', async () => {
    const file = join(box.dir, 'events.ndjson');
    writeFileSync(file, `${JSON.stringify({ email: 'a@example.com' })}\n{oops\n${JSON.stringify({ email: 'b@example.com' })}\n`);
    // util-linux `script` gives the command a pseudo-terminal, the only place the view is drawn.
    const command = `stty cols 120 rows 30; node ${BIN} events ingest ${file}`;
    const r = await execa('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...box.baseEnv, ...box.env },
      reject: false,
      stdin: 'ignore',
    });
    // eslint-disable-next-line no-control-regex
    const screen = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(r.exitCode).toBe(4);
    expect(screen).toContain('Sending events');
    expect(screen).toMatch(/3 events read, 2 sent, [\d,]+ events\/s, 1 refused/);
    expect(screen).toContain('amsg: line 2: not valid JSON');
    expect(screen).toContain('Sent 2 of 3 events; 1 refused.');
  });
});
