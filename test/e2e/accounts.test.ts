import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NOW, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * `amsg accounts` and `amsg users access`, end to end, on a sandbox made an HQ by
 * `amsg init --hq`: run in local mode and against a spawned `amsg serve`; the two
 * transcripts (exit code and stdout of every run) must be identical.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const AT_NOW = `@D:${NOW.slice(0, 19)}`;

describe.each<Mode>(['local', 'remote'])('amsg accounts (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run, json } = recorder(box, transcripts[mode]);

  beforeAll(async () => {
    await box.start();
    // The sandbox is set up already (and served, remotely): --hq makes its account an HQ.
    const hq = await box.raw(['init', '--hq', '--json'], { AMSG_DB: box.db });
    expect(hq.exitCode).toBe(0);
    expect(JSON.parse(hq.stdout)).toEqual({ account_id: 1, db: box.db, created: false, hq: true });
    expect(hq.stderr).toContain('is already set up (account 1); account 1 is an HQ account');
  }, 60_000);
  afterAll(() => box.stop());

  test('create with its checks, list with filters, get', async () => {
    expect(
      await json(
        'accounts',
        'create',
        'Oslo branch',
        '--timezone',
        'Europe/Oslo',
        '--country',
        'Norway',
        '--city',
        'Oslo',
        '--province',
        'Oslo',
      ),
    ).toEqual({
      account_name: 'Oslo branch',
      account_id: 2,
      parent_account_id: 1,
    });
    expect(
      await json('accounts', 'create', 'Austin', '--status', 'active', '--country', 'US', '--city', 'Austin', '--state', 'TX'),
    ).toEqual({
      account_name: 'Austin',
      account_id: 3,
      parent_account_id: 1,
    });
    const table = await run('accounts', 'create', 'Bergen', '-o', 'table');
    expect(table.stdout).toBe('Created sub-account 4 "Bergen"; act on it with --account 4.');

    for (const [args, message] of [
      [['--timezone', 'Mars/Olympus'], 'account_timezone: "Mars/Olympus" is not a tz database time zone name'],
      [['--state', 'ca'], 'account_rsvp_state: "ca" is not a US state'],
      [['--country', 'US', '--state', 'CA'], 'account_rsvp_city: is required when account_rsvp_country is given'],
      [['--status', 'closed'], 'account_status: must be one of active, trial'],
    ] as const) {
      const r = await run('accounts', 'create', 'Bad', ...args);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`the service refused (HTTP 400): ${message}`);
    }

    expect(await json('accounts', 'list')).toEqual({
      subaccounts: [
        { account_id: 2, account_name: 'Oslo branch', account_status: 'trial' },
        { account_id: 3, account_name: 'Austin', account_status: 'active' },
        { account_id: 4, account_name: 'Bergen', account_status: 'trial' },
      ],
    });
    // Streamed a page at a time, the JSON is byte for byte the service's {subaccounts} object.
    const whole = await run('accounts', 'list', '--json');
    expect(whole.stdout).toBe(JSON.stringify(JSON.parse(whole.stdout), null, 2));
    const first = await run('accounts', 'list', '--limit', '1', '--json');
    expect(JSON.parse(first.stdout)).toEqual({ subaccounts: [{ account_id: 2, account_name: 'Oslo branch', account_status: 'trial' }] });
    expect(first.stderr).toContain('1 of 3 shown; --all for every row, --start 1 for the rows after these');
    expect(JSON.parse((await run('accounts', 'list', '--status', 'retired', '--json')).stdout)).toEqual({ subaccounts: [] });
    expect((await json('accounts', 'list', '--status', 'trial', '--search', 'osl')).subaccounts.map((a: any) => a.account_id)).toEqual([2]);
    expect(await json('accounts', 'list', '--status', 'trial,active', '--count')).toBe(3);
    const listed = await run('accounts', 'list', '-o', 'table');
    expect(listed.stdout).toMatch(/│ 3\s+│ Austin\s+│ active\s+│/);
    expect((await run('accounts', 'list', '--status', 'gone')).exitCode).toBe(1);

    expect(await json('accounts', 'get', '2')).toMatchObject({
      account_id: 2,
      account_status: 'trial',
      parent_account_id: 1,
      created_at: AT_NOW,
      account_rsvp_country: 'NO',
      account_rsvp_city: 'Oslo',
      account_timezone: 'Europe/Oslo',
      retired_at: null,
    });
    expect((await run('accounts', 'get', 'two')).exitCode).toBe(2);
  });

  test('--account acts on a sub-account through the HQ', async () => {
    expect(await json('--account', '2', 'members', 'add', 'ada@example.com')).toEqual({ member_id: 1, added: true, status: 'a' });
    expect((await json('--account', '2', 'members', 'list')).map((m: any) => [m.account_id, m.email])).toEqual([[2, 'ada@example.com']]);
    expect(await json('--account', '3', 'members', 'list')).toEqual([]);
    // A sub-account has what `amsg init` gives an account: the standard fields.
    expect((await json('--account', '2', 'fields', 'list')).map((f: any) => f.shortcut_name)).toEqual(['first_name', 'last_name']);
    // The user it acts as is the HQ's owner, in both modes.
    expect((await json('--account', '2', 'api', 'call', 'GET', '/2/users/me')).account_id).toBe(1);
    // A sub-account is not an HQ.
    const nested = await run('--account', '2', 'accounts', 'list');
    expect(nested.exitCode).toBe(1);
    expect(nested.stderr).toContain('account 2 is not an HQ parent account');
  });

  test('users access set replaces the list; list reads it', async () => {
    await json('users', 'create', 'ops@example.com', '--role', 'manager', '--manage-users');
    expect(await json('users', 'access', 'set', 'ops@example.com', '--accounts', '2,3')).toEqual({ message: true });
    expect((await json('users', 'access', 'list', 'ops@example.com')).subaccounts.map((a: any) => a.account_id)).toEqual([2, 3]);
    expect(await json('users', 'access', 'set', 'ops@example.com', '--accounts', '4')).toEqual({ message: true });
    expect(await json('users', 'access', 'list', 'ops@example.com')).toEqual({
      subaccounts: [{ account_id: 4, account_name: 'Bergen', account_status: 'trial' }],
    });
    const table = await run('users', 'access', 'set', 'ops@example.com', '--accounts', '2,4', '-o', 'table');
    expect(table.stdout).toBe('User 5 may now act on: 2, 4.');
    // Bad input: not an integer (refused before any call), an account that is not a sub-account, the owner.
    expect((await run('users', 'access', 'set', 'ops@example.com', '--accounts', '2,x')).exitCode).toBe(2);
    const other = await run('users', 'access', 'set', 'ops@example.com', '--accounts', '1');
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toContain('HTTP 400): accounts[0]: the requester has no access to account 1');
    const owner = await run('users', 'access', 'set', '1', '--accounts', '2');
    expect(owner.exitCode).toBe(1);
    expect(owner.stderr).toContain('HTTP 401): a owner cannot assign sub-accounts to a owner');
    expect((await json('users', 'access', 'list', 'ops@example.com')).subaccounts.map((a: any) => a.account_id)).toEqual([2, 4]);
  });

  test('a manager’s key reaches the sub-accounts its list holds and no other (over HTTP, not recorded)', async () => {
    if (mode === 'local') return; // a key is only used over HTTP
    const created = await box.raw(['keys', 'create', '--user', '5', '--json'], box.env);
    expect(created.exitCode, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { public_key: string; private_key: string };
    const env = { ...box.env, AMSG_API_KEY: `${key.public_key}:${key.private_key}` };
    const listed = await box.raw(['accounts', 'list'], env);
    expect(JSON.parse(listed.stdout).subaccounts.map((a: any) => a.account_id)).toEqual([2, 4]);
    const own = await box.raw(['--account', '4', 'members', 'add', 'bo@example.com'], env);
    expect(own.exitCode, own.stderr).toBe(0);
    const other = await box.raw(['--account', '3', 'members', 'list'], env);
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toContain('HTTP 404): account 3 not found');
    // Taken off the list, the account is out of reach at once.
    expect((await box.raw(['users', 'access', 'set', 'ops@example.com', '--accounts', '2'], box.env)).exitCode).toBe(0);
    expect((await box.raw(['--account', '4', 'members', 'list'], env)).exitCode).toBe(1);
    expect((await box.raw(['users', 'access', 'set', 'ops@example.com', '--accounts', '2,4'], box.env)).exitCode).toBe(0);
  });

  test('retire: confirmation, the answer, then unreachable; never the HQ itself', async () => {
    const unconfirmed = await run('accounts', 'retire', '2');
    expect(unconfirmed.exitCode).toBe(2);
    expect(unconfirmed.stderr).toContain(
      'refusing to retire sub-account "Oslo branch" (2) (its data is purged in 30 days and cannot be recovered) without --yes',
    );
    expect(await json('accounts', 'retire', '2', '--yes')).toEqual({ account_name: 'Oslo branch', status: 'retired' });
    expect((await json('accounts', 'list')).subaccounts.map((a: any) => a.account_id)).toEqual([3, 4]);
    const gone = await run('--account', '2', 'members', 'list');
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('HTTP 404): account 2 not found');
    expect(await json('accounts', 'get', '2')).toMatchObject({
      account_status: 'retired',
      retired_at: AT_NOW,
      purge_after: '@D:2026-06-05T07:08:09',
    });
    expect((await run('accounts', 'retire', '2', '--yes')).exitCode).toBe(1);
    const hq = await run('accounts', 'retire', '1', '--yes');
    expect(hq.exitCode).toBe(1);
    expect(hq.stderr).toContain('account 1 is the HQ account itself');
    if (mode === 'local') {
      // 30 days on: the CLI's run of due jobs after a call purges it (not recorded: serve's clock is pinned).
      const later = { ...box.env, AMSG_NOW: '2026-06-05T07:08:10Z' };
      expect((await box.raw(['accounts', 'list'], later)).exitCode).toBe(0);
      const purged = await box.raw(['accounts', 'get', '2'], later);
      expect(purged.exitCode).toBe(1);
      expect(purged.stderr).toContain('HTTP 404): subaccount 2 not found');
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(box.db, { readonly: true });
      expect(db.prepare('SELECT COUNT(*) FROM members WHERE account_id = 2').pluck().get()).toBe(0);
      expect(db.prepare('SELECT COUNT(*) FROM users WHERE account_id = 2').pluck().get()).toBe(0);
      db.close();
    }
    const help = await run('accounts', 'retire', '--help');
    expect(help.stdout).toContain('$ amsg accounts retire 2 --yes');
  });
});

describe('both modes', () => {
  test('local and remote transcripts are identical', () => {
    expect(transcripts.remote.length).toBeGreaterThan(30);
    expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
  });
});
