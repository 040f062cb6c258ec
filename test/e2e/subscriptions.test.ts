import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg subscriptions`, end to end: run in local mode and against a spawned `amsg
 * serve`; the two transcripts (exit code and stdout of every run) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

/** NOW of the harness (2026-05-06T07:08:09Z) as subscriptions answer it. */
const NOW_TEXT = 'Wed, 06 May 2026 07:08:09 GMT';

describe.each<Mode>(['local', 'remote'])('amsg subscriptions (%s)', (mode) => {
  const box = new Sandbox(mode);
  const log = transcripts[mode];
  const { run, json } = recorder(box, log);
  const counts = async (ref: string) => {
    const s = await json('subscriptions', 'get', ref);
    return [s.member_count, s.optout_count];
  };
  const ids = (rows: { member_id: number }[]) => rows.map((r) => r.member_id);

  beforeAll(async () => {
    await box.start();
    for (const email of ['ada@example.com', 'bob@example.com', 'cy@example.com', 'di@example.com'])
      expect((await box.amsg('members', 'add', email)).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('create, get by id and name, list with import_status', async () => {
    const digest = await json('subscriptions', 'create', 'Weekly digest', '--description', 'The week in one e-mail');
    expect(digest).toEqual({
      subscription_id: 1,
      account_id: 1,
      subscription_name: 'Weekly digest',
      description: 'The week in one e-mail',
      member_count: 0,
      optout_count: 0,
      created_at: NOW_TEXT,
      modified_at: NOW_TEXT,
      deleted_at: null,
      purged_at: null,
      settings: null,
      subscription_order: null,
    });
    const offers = await json('subscriptions', 'create', 'Offers', '--order', '2', '--show-on-preference-form');
    expect([offers.subscription_id, offers.settings, offers.subscription_order]).toEqual([2, { show_on_default_preference_form: true }, 2]);
    expect(await json('subscriptions', 'get', 'weekly DIGEST')).toEqual(digest);
    expect(await json('subscriptions', 'get', '1')).toEqual(digest);
    const list = await json('subscriptions', 'list');
    expect(list).toHaveLength(2);
    expect(list[0]).toEqual({ ...digest, import_status: null });

    const dup = await run('subscriptions', 'create', 'offers');
    expect(dup.exitCode).toBe(1);
    expect(dup.stderr).toContain('HTTP 400');
    expect(dup.stderr).toContain('name: a subscription named "offers" already exists (subscription 2)');
    const missing = await run('subscriptions', 'get', 'Nope');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('no subscription named "Nope" (see amsg subscriptions list)');
    const unknown = await run('subscriptions', 'get', '99');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('HTTP 404');
    expect(unknown.stderr).toContain('subscription 99 not found');
  });

  test('add members by id and e-mail, opt one out, list members and opt-outs', async () => {
    expect(await json('subscriptions', 'add-members', 'Weekly digest', '--member', '1,bob@example.com', '--member', '3')).toBe(true);
    expect(await counts('Weekly digest')).toEqual([3, 0]);
    expect(await json('subscriptions', 'optout', 'Weekly digest', 'bob@example.com')).toBe(true);
    expect(await counts('Weekly digest')).toEqual([2, 1]);
    expect(await json('subscriptions', 'members', 'Weekly digest')).toEqual([{ member_id: 1 }, { member_id: 3 }]);
    expect(ids(await json('subscriptions', 'members', '1', '--start', '1', '--end', '2'))).toEqual([3]);
    expect(ids(await json('subscriptions', 'optouts', 'Weekly digest'))).toEqual([2]);
    // The member's account status is untouched; an account-wide opt-out counts as an opt-out here.
    expect((await json('members', 'get', '2')).member_status_id).toBe('a');
    expect(await json('members', 'optout', 'cy@example.com')).toBe(true);
    expect(await counts('Weekly digest')).toEqual([1, 2]);
    expect(ids(await json('subscriptions', 'optouts', 'Weekly digest'))).toEqual([2, 3]);
    // A bulk add leaves an opt-out out; removing the member forgets it.
    expect(await json('subscriptions', 'add-members', 'Weekly digest', '--member', '2')).toBe(true);
    expect(await counts('Weekly digest')).toEqual([1, 2]);
    expect(await json('subscriptions', 'remove-member', 'Weekly digest', '2')).toBe(true);
    expect(await json('subscriptions', 'add-members', 'Weekly digest', '--member', '2')).toBe(true);
    expect(await counts('Weekly digest')).toEqual([2, 1]);

    const unknownMember = await run('subscriptions', 'add-members', 'Offers', '--member', '1', '--member', '42');
    expect(unknownMember.exitCode).toBe(1);
    expect(unknownMember.stderr).toContain('member 42 not found');
    expect(await counts('Offers')).toEqual([0, 0]);
  });

  test('add members from an import: added and updated members, not skipped ones', async () => {
    // Simulates a finished import by writing its record straight into the database file.
    const db = new Database(box.db);
    try {
      db.pragma('busy_timeout = 10000');
      const importId = Number(
        db.prepare("INSERT INTO member_imports (account_id, status, created_at) VALUES (1, 'o', '2026-05-06T07:08:09.000000')").run()
          .lastInsertRowid,
      );
      const row = db.prepare('INSERT INTO import_members (import_id, member_id, change_type) VALUES (?, ?, ?)');
      row.run(importId, 1, 'a');
      row.run(importId, 4, 'u');
      row.run(importId, 2, 's');
      expect(importId).toBe(1);
    } finally {
      db.close();
    }
    expect(await json('subscriptions', 'add-members', 'Offers', '--import', '1')).toBe(true);
    expect(ids(await json('subscriptions', 'members', 'Offers'))).toEqual([1, 4]);
    const missing = await run('subscriptions', 'add-members', 'Offers', '--import', '9');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('import 9 not found');
    const both = await run('subscriptions', 'add-members', 'Offers', '--import', '1', '--member', '1');
    expect(both.exitCode).toBe(2);
    const neither = await run('subscriptions', 'add-members', 'Offers');
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain('give --member (one or more) or --import');
    // The service refuses both at once too.
    const raw = await run('api', 'call', 'POST', '/1/subscriptions/2/members/bulk', '--data', '{"member_ids":[1],"import_id":1}');
    expect(raw.exitCode).toBe(1);
    expect(raw.stderr).toContain('give member_ids or import_id, not both');
  });

  test('update: rename, description, rename conflicts', async () => {
    const renamed = await json('subscriptions', 'update', 'Weekly digest', '--name', 'Monthly digest', '--description', '');
    expect([renamed.subscription_name, renamed.description, renamed.member_count]).toEqual(['Monthly digest', '', 2]);
    const clash = await run('subscriptions', 'update', 'Monthly digest', '--name', 'OFFERS');
    expect(clash.exitCode).toBe(1);
    expect(clash.stderr).toContain('name: a subscription named "OFFERS" already exists (subscription 2)');
    expect((await json('subscriptions', 'get', '1')).subscription_name).toBe('Monthly digest');
    const off = await json('subscriptions', 'update', 'Offers', '--no-show-on-preference-form', '--order', 'none');
    expect([off.settings, off.subscription_order]).toEqual([{ show_on_default_preference_form: false }, null]);
  });

  test('purging a member takes it out of every subscription', async () => {
    expect(await json('members', 'purge', '1', '--yes')).toBe(true);
    expect(ids(await json('subscriptions', 'members', 'Monthly digest'))).toEqual([2]);
    expect(ids(await json('subscriptions', 'members', 'Offers'))).toEqual([4]);
    const list = await json('subscriptions', 'list');
    expect(list.map((s: any) => [s.subscription_name, s.member_count, s.optout_count])).toEqual([
      ['Monthly digest', 1, 1],
      ['Offers', 1, 0],
    ]);
  });

  test('delete needs --yes; deleted ones show with --deleted-only and --include-deleted', async () => {
    const refused = await run('subscriptions', 'delete', 'Offers');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to delete subscription "Offers" (2) without --yes');
    expect((await json('subscriptions', 'get', '2')).deleted_at).toBeNull();
    const deleted = await json('subscriptions', 'delete', 'Offers', '--yes');
    expect([deleted.subscription_id, deleted.deleted_at, deleted.member_count]).toEqual([2, NOW_TEXT, 1]);
    expect((await json('subscriptions', 'list')).map((s: any) => s.subscription_id)).toEqual([1]);
    expect((await json('subscriptions', 'list', '--deleted-only')).map((s: any) => s.subscription_id)).toEqual([2]);
    expect((await json('subscriptions', 'list', '--include-deleted')).map((s: any) => s.subscription_id)).toEqual([1, 2]);
    expect((await run('subscriptions', 'list', '--deleted-only', '--include-deleted')).exitCode).toBe(2);
    // The name is free again; the deleted one is still there by id, and takes no more members.
    expect((await json('subscriptions', 'create', 'Offers')).subscription_id).toBe(3);
    expect((await json('subscriptions', 'get', '2')).deleted_at).toBe(NOW_TEXT);
    const closed = await run('subscriptions', 'add-members', '2', '--member', '2');
    expect(closed.exitCode).toBe(1);
    expect(closed.stderr).toContain('subscription 2 not found (it was deleted)');
  });

  test('tables for people, help with examples', async () => {
    const table = await run('subscriptions', 'list', '-o', 'table');
    expect(table.stdout).toMatch(/│ ID │ Subscription\s+│ Description │ Members │ Opted out │/);
    expect(table.stdout).toMatch(/│ 1\s+│ Monthly digest\s+│\s+│ 1\s+│ 1\s+│/);
    const done = await run('subscriptions', 'optout', 'Offers', '2', '-o', 'table');
    expect(done.stdout).toBe('Opted member 2 out of subscription 3.');
    const help = await run('subscriptions', 'add-members', '--help');
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Examples:\n  $ amsg subscriptions add-members "Weekly digest" --member 1 --member ada@example.com');
    const top = await run('--help');
    expect(top.stdout).toContain('subscriptions (topics members subscribe to)');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(40);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
