import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg sim mailing`: engagement with a whole send in one operation, reproducible
 * with a seed; and the same shares in a seed fixture's `engagement`, for a mailing
 * sent to a search (not only to groups). Both modes must answer the same.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

const FIXTURE = `
fields:
  - { shortcut_name: city, field_type: text }
groups: [Gold]
searches:
  - { name: Oslo, criteria: ["member_field:city", "eq", "Oslo"] }
members:
  - generate: { count: 100, seed: 3, email: "m{n}@example.test", fields: { city: "pick:Oslo|Bergen" }, groups: { Gold: 1 } }
mailings:
  - name: Spring
    subject: Hi
    sender: shop@example.com
    html_body: '<a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a> [% optout_url %]'
    recipients: { groups: [Gold] }
  - name: Oslo news
    subject: Hi Oslo
    sender: shop@example.com
    html_body: '<a href="https://shop.example.com/oslo">Oslo</a> [% optout_url %]'
    recipients: { searches: [Oslo] }
    engagement: { seed: 5, opens: "50%", clicks: 0.1 }
`;

describe.each<Mode>(['local', 'remote'])('amsg sim mailing (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);
  beforeAll(async () => {
    await box.start();
    const file = join(box.dir, 'sim.yaml');
    writeFileSync(file, FIXTURE);
    const seeded = await box.amsg('seed', file);
    if (seeded.exitCode !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
  }, 60_000);
  afterAll(() => box.stop());

  test('a fixture engages a mailing sent to a search, by shares ("50%" or 0.1), with its seed', async () => {
    const oslo = await json('reports', 'mailing', '2');
    expect(oslo.sent).toBeGreaterThan(20);
    expect(oslo.opened).toBe(Math.round(oslo.sent * 0.5));
    expect(oslo.clicked_unique).toBe(Math.round(oslo.sent * 0.1));
  });

  test('one operation: shares as percentages, by mailing name, recorded in reports and history; a seed draws the same', async () => {
    const answer = await json(
      'sim',
      'mailing',
      'Spring',
      '--opens',
      '40%',
      '--clicks',
      '8%',
      '--bounces',
      '1%',
      '--optouts',
      '2%',
      '--seed',
      '7',
    );
    expect(answer).toEqual({ mailing_id: 1, seed: 7, messages: 100, opens: 40, clicks: 8, bounces: 1, optouts: 2, shares: 0 });
    const summary = await json('reports', 'mailing', '1');
    expect([summary.opened, summary.clicked_unique, summary.bounced, summary.opted_out]).toEqual([40, 8, 1, 2]);
    const links = await json('reports', 'links', '1');
    expect(links.map((l: any) => l.unique_clicks)).toEqual([4, 4]);
    const openers = (await json('reports', 'opens', '1', '--all')).map((m: any) => m.member_id);
    expect(openers).toHaveLength(40);
    // The same shares and seed draw the same members again (they keep their first opens); the sentence names the seed.
    const table = await run(
      'sim',
      'mailing',
      '1',
      '--opens',
      '0.4',
      '--clicks',
      '0.08',
      '--bounces',
      '0.01',
      '--optouts',
      '0.02',
      '--seed',
      '7',
      '-o',
      'table',
    );
    expect(table.stdout).toBe(
      'Recorded 40 opens, 8 clicks, 1 bounces, 2 opt-outs of the 100 messages of mailing 1 (seed 7: --seed 7 draws the same members).',
    );
    expect((await json('reports', 'opens', '1', '--all')).map((m: any) => m.member_id)).toEqual(openers);
    expect((await json('reports', 'mailing', '1')).opened).toBe(40);
  });

  test('bad shares are usage errors before any call; a draft has nothing to engage', async () => {
    const bare = await box.amsg('sim', 'mailing', '1', '--opens', '40');
    expect([bare.exitCode, bare.stderr.trim()]).toEqual([2, 'amsg: --opens 40: a share is 0 to 1, or a percentage with its sign (40%)']);
    const none = await box.amsg('sim', 'mailing', '1');
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('say what the members do: --opens, --clicks, --bounces, --optouts or --shares');
    const over = await box.amsg('sim', 'mailing', '1', '--opens', '90%', '--bounces', '20%');
    expect(over.exitCode).toBe(1);
    expect(over.stderr).toContain('bounces (0.2) and opens, clicks, shares or opt-outs (0.9) together are more than the whole send');
  });
});

test('the two modes answer the same', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
