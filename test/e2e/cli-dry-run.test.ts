import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { fullProgram } from '../../src/cli/main.js';
import { examplesOf } from '../../src/cli/context.js';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';
import { fixture } from '../fixtures.js';

/**
 * --dry-run on the destructive commands: each says what it would change, naming the
 * record and how many, and changes nothing (the account read before and after is
 * the same). Runs in local mode and against `amsg serve`; the transcripts must match.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

/** Every command in the tree, as `amsg a b`, with the examples its --help prints. */
function everyCommand(cmd: Command, path: string[] = []): { name: string; cmd: Command; examples: string }[] {
  const out = [];
  for (const sub of cmd.commands) {
    const name = [...path, sub.name()];
    out.push({ name: name.join(' '), cmd: sub, examples: examplesOf(sub).join('\n') }, ...everyCommand(sub, name));
  }
  return out;
}

test('every command that confirms (its examples pass --yes) offers --dry-run', () => {
  const commands = everyCommand(fullProgram('0.0.0'));
  const confirming = commands.filter((c) => /--yes\b/.test(c.examples));
  // The walk sees the commands (a broken walk would pass vacuously).
  expect(confirming.map((c) => c.name)).toEqual(
    expect.arrayContaining(['groups delete', 'webhooks delete', 'seed', 'db restore', 'keys revoke']),
  );
  const without = confirming.filter((c) => !c.cmd.options.some((o) => o.long === '--dry-run')).map((c) => c.name);
  expect(without).toEqual([]);
});

describe.each<Mode>(['local', 'remote'])('--dry-run changes nothing (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run } = recorder(box, transcripts[mode]);
  const snapshot = () => join(box.dir, 'snap.db');

  /** What the dry runs could touch, read back in full. */
  const state = async () => ({
    webhooks: await box.json('webhooks', 'list', '--json'),
    eventTypes: await box.json('events', 'types', 'list', '--json'),
    touchpointTypes: await box.json('touchpoints', 'types', 'list', '--json'),
    touchpoint: await box.json('touchpoints', 'get', '1', '--json'),
    workflows: await box.json('workflows', 'list', '--json'),
    campaign: await box.json('sms', 'campaigns', 'get', '1', '--json'),
    accounts: await box.json('accounts', 'list', '--json'),
    relationships: await box.json('fields', 'relationships', 'list', '--json'),
    keys: await box.json('keys', 'list', '--json'),
    triggers: await box.json('triggers', 'list', '--json'),
    adaGroups: await box.json('members', 'groups', 'list', 'ada@example.com', '--json'),
    ada: await box.json('members', 'get', 'ada@example.com', '--json'),
    members: await box.json('members', 'list', '--deleted', '--count', '--json'),
    groups: await box.json('groups', 'list', '--json'),
    mailings: await box.json('mailings', 'list', '--json'),
    fields: await box.json('fields', 'list', '--json'),
  });

  beforeAll(async () => {
    await box.start();
    const setup = [
      ['init', '--hq'],
      ['seed', fileURLToPath(new URL('./fixtures/dry-run-base.yaml', import.meta.url))],
      ['webhooks', 'create', 'https://example.com/hooks', '--event', 'member_add'],
      ['events', 'types', 'create', 'purchase', '--display-name', 'Purchase'],
      ['touchpoints', 'types', 'create', 'web', '--display-name', 'Web visit'],
      ['touchpoints', 'record', 'ada@example.com', '--type', 'web', '--value', '2.5'],
      ['workflows', 'create', 'Buyers', '--match', 'type=purchase', '--action', '{"type": "add_to_groups", "group_ids": [1]}'],
      [
        'sms',
        'campaigns',
        'create',
        '--name',
        'Sale',
        '--from',
        '+1 555 555 0100',
        '--group',
        'Newsletter',
        '--promotional',
        '--message',
        'Sale today',
      ],
      ['accounts', 'create', 'Oslo branch'],
      ['fields', 'create', 'region', '--type', 'text', '--widget', 'select one', '--options', 'EU,US'],
      ['fields', 'relationships', 'create', 'Region → Plan', '--parent', 'region', '--child', 'plan'],
      ['keys', 'create', '--label', 'CI job'],
    ];
    for (const args of setup) {
      const r = args[0] === 'init' ? await box.raw([...args, '--json'], { AMSG_DB: box.db }) : await box.amsg(...args, '--json');
      if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    }
    const snap = await box.raw(['db', 'snapshot', snapshot()], { AMSG_DB: box.db });
    if (snap.exitCode !== 0) throw new Error(snap.stderr);
  }, 120_000);
  afterAll(() => box.stop());

  test('each destructive command says what it would change, with its count, off a terminal and without --yes', async () => {
    const before = await state();
    const cases: [string[], string, number][] = [
      [['webhooks', 'delete', '1'], 'delete webhook 1 (member_add → https://example.com/hooks)', 1],
      [['webhooks', 'delete-all'], 'delete every webhook of the account (1 webhook)', 1],
      [['webhooks', 'roll-secret', '1'], 'roll the signing secret of webhook 1 (member_add → https://example.com/hooks)', 1],
      [['events', 'types', 'delete', 'purchase'], 'delete event type "purchase" (1) and every event of it', 1],
      [['touchpoints', 'types', 'delete', 'web'], 'delete touchpoint type "web" (1) and every touchpoint of it', 1],
      [['touchpoints', 'delete', '1'], 'delete touchpoint 1 of member ada@example.com (1), at 2026-05-06 07:08', 1],
      [['workflows', 'delete', '1'], 'delete workflow 1 "Buyers" and its 0 runs', 1],
      [['sms', 'campaigns', 'cancel', '1'], 'cancel SMS campaign 1 "Sale"', 1],
      [['accounts', 'retire', '2'], 'retire sub-account "Oslo branch" (2) (its data is purged in 30 days and cannot be recovered)', 1],
      [['fields', 'relationships', 'delete', '1'], 'delete field relationship "Region → Plan" (1) of region → plan', 1],
      [['keys', 'revoke', '2'], 'revoke key 2 "CI job" of owner@localhost', 1],
      [['triggers', 'delete', '1'], 'delete trigger 1 "Birthday greeting"', 1],
      [['members', 'groups', 'remove', 'ada@example.com', '--all'], 'remove member ada@example.com (1) from every group (2 groups)', 2],
      [
        ['members', 'groups', 'remove', 'ada@example.com', '--group', 'Gold', '--group', 'Newsletter'],
        'remove member ada@example.com (1) from 2 groups',
        2,
      ],
      [
        ['members', 'update', 'ada@example.com', '--status', 'o', '--field', 'city=Bergen'],
        'update member ada@example.com (1): 1 field (city); status → opted out',
        1,
      ],
    ];
    for (const [args, would, count] of cases) {
      const dry = await run(...args, '--dry-run', '--json');
      expect([dry.exitCode, JSON.parse(dry.stdout || 'null'), dry.stderr.includes('refusing')], args.join(' ')).toEqual([
        0,
        { dry_run: true, would, count },
        false,
      ]);
      const table = await run(...args, '--dry-run', '-o', 'table');
      expect(table.stdout, args.join(' ')).toBe(`Dry run, nothing changed: would ${would}.`);
    }
    const restore = await box.raw(['db', 'restore', snapshot(), '--dry-run', '--json'], { AMSG_DB: box.db });
    expect([restore.exitCode, JSON.parse(restore.stdout)]).toEqual([
      0,
      { dry_run: true, would: `replace everything in ${box.db} with the snapshot ${snapshot()}`, count: 1 },
    ]);
    expect(await state()).toEqual(before);
  }, 120_000);

  test('a dry run of a record that is not there fails as the real command would (exit 1, one JSON error); names miss with a suggestion', async () => {
    for (const [args, error] of [
      [['webhooks', 'delete', '99'], 'webhook 99 not found'],
      [['keys', 'revoke', '99'], 'key 99 not found (see amsg keys list)'],
      [['workflows', 'delete', '99'], 'workflow 99 not found'],
      [['accounts', 'retire', '99'], ''],
      [
        ['events', 'types', 'delete', 'purchse'],
        'no event type is named "purchse" (amsg events types list shows them); did you mean "purchase"?',
      ],
      [
        ['fields', 'relationships', 'delete', 'Region → Plna'],
        'no field relationship named "Region → Plna" (see amsg fields relationships list); did you mean "Region → Plan"?',
      ],
    ] as const) {
      const r = await run(...args, '--dry-run', '--json');
      const failure = JSON.parse(r.stderr.trim().split('\n').pop()!);
      expect([r.exitCode, r.stdout, failure.exit_code], args.join(' ')).toEqual([1, '', 1]);
      if (error) expect(failure.error, args.join(' ')).toBe(error);
    }
  });

  test('seed --reset --dry-run says what the reset would delete, with counts, and deletes nothing', async () => {
    const before = await state();
    const dry = await run('seed', fixture('small.yaml'), '--reset', '--dry-run');
    expect(dry.exitCode).toBe(0);
    expect(dry.stderr).toContain(
      'amsg: --reset would delete 1 trigger, 2 mailings, 3 searches, 4 members, 1 subscription, 2 groups, 5 fields\n',
    );
    // The plan is made against the account as the reset would leave it: everything to create.
    expect(dry.stderr).toContain('groups: 2 to create');
    // The prompt of the real reset names the same counts.
    const refused = await run('seed', fixture('small.yaml'), '--reset');
    expect([refused.exitCode, refused.stderr.trim().split('\n').pop()]).toEqual([
      2,
      'amsg: refusing to empty the account before seeding it, deleting 1 trigger, 2 mailings, 3 searches, 4 members, 1 subscription, 2 groups, 5 fields without --yes (no terminal to confirm on)',
    ]);
    expect(await state()).toEqual(before);
  }, 120_000);
});

test('both modes print the same transcript', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
