import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execa } from 'execa';
import { BIN, recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Prompts name what the user typed and what it touches; "no" or Ctrl-C at a prompt
 * is a cancel (exit 130); CI=true and --no-input never prompt; every status change
 * confirms; --dry-run says what would change and how many. Prompts are drawn on a
 * real pseudo-terminal (util-linux `script`), as the import view is.
 */
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** Runs amsg on a pseudo-terminal; `answer` is typed once the prompt shows. */
async function onTerminal(box: Sandbox, args: string[], answer: string, env: Record<string, string> = {}) {
  const quoted = args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const child = execa('script', ['-qec', `stty cols 200; node ${BIN} ${quoted}`, '/dev/null'], {
    env: { ...process.env, ...box.baseEnv, ...box.env, ...env },
    reject: false,
    stdin: 'pipe',
  });
  let seen = '';
  let typed = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
    if (!typed && seen.includes('[y/N]')) {
      typed = true;
      child.stdin!.write(answer);
    }
  });
  const r = await child;
  child.stdin!.end();
  return { exitCode: r.exitCode, screen: plain(String(r.stdout)) };
}

describe('prompts on a terminal', () => {
  const box = new Sandbox('local');
  beforeAll(async () => {
    await box.start();
    for (const email of ['hans.weber.2@example.com', 'tina@example.com', 'ola@example.com'])
      expect((await box.amsg('members', 'add', email, '--group', 'Trial')).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('the prompt names the group and how many memberships go; "no" cancels with exit 130', async () => {
    const r = await onTerminal(box, ['groups', 'delete', 'trial'], 'n\r');
    expect(r.screen).toContain('Delete group "Trial" (1) and its 3 memberships? [y/N]');
    expect(r.screen).toContain('amsg: cancelled; nothing was changed');
    expect(r.exitCode).toBe(130);
    expect((await box.json('groups', 'get', 'Trial')).active_count).toBe(3);
  });

  test('Ctrl-C at a prompt is a cancel: exit 130, "cancelled", nothing changed', async () => {
    const r = await onTerminal(box, ['members', 'delete', '1'], '\x03');
    expect(r.screen).toContain('Archive member hans.weber.2@example.com (1)? [y/N]');
    expect(r.screen).toContain('amsg: cancelled; nothing was changed');
    expect(r.screen).not.toContain('unexpected error');
    expect(r.exitCode).toBe(130);
    expect((await box.json('members', 'get', '1')).deleted_at).toBeNull();
  });

  test('members update --status confirms, as members status does; "y" goes ahead', async () => {
    const r = await onTerminal(box, ['members', 'update', 'tina@example.com', '--status', 'o', '-o', 'table'], 'y\r');
    expect(r.screen).toContain('Set the status of member tina@example.com (2) to opted out? [y/N]');
    expect(r.screen).toContain('Updated member 2.');
    expect(r.exitCode).toBe(0);
    expect((await box.json('members', 'get', '2')).member_status_id).toBe('o');
    // Off a terminal, it needs --yes like every status change.
    const refused = await box.amsg('members', 'update', '3', '--status', 'e');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      'refusing to set the status of member ola@example.com (3) to error without --yes (no terminal to confirm on)',
    );
  });

  test('CI=true or --no-input never prompts, even on a terminal', async () => {
    const ci = await onTerminal(box, ['groups', 'delete', 'Trial'], 'y\r', { CI: 'true' });
    expect(ci.screen).not.toContain('[y/N]');
    expect(ci.screen).toContain('refusing to delete group "Trial" (1) and its 3 memberships without --yes (CI is set: prompts are off)');
    expect(ci.exitCode).toBe(2);
    const flag = await onTerminal(box, ['--no-input', 'groups', 'delete', 'Trial'], 'y\r');
    expect(flag.screen).toContain('(--no-input: prompts are off)');
    expect(flag.exitCode).toBe(2);
    const env = await onTerminal(box, ['groups', 'delete', 'Trial'], 'y\r', { AMSG_NO_INPUT: '1' });
    expect(env.exitCode).toBe(2);
    expect((await box.json('groups', 'get', 'Trial')).active_count).toBe(2);
  });

  test('the commands that go through ctx.change prompt the same way; --dry-run never prompts', async () => {
    expect((await box.amsg('webhooks', 'create', 'https://example.com/hooks', '--event', 'member_add')).exitCode).toBe(0);
    const no = await onTerminal(box, ['webhooks', 'delete', '1'], 'n\r');
    expect(no.screen).toContain('Delete webhook 1 (member_add → https://example.com/hooks)? [y/N]');
    expect(no.exitCode).toBe(130);
    const ci = await onTerminal(box, ['webhooks', 'delete', '1'], 'y\r', { CI: 'true' });
    expect(ci.screen).toContain(
      'refusing to delete webhook 1 (member_add → https://example.com/hooks) without --yes (CI is set: prompts are off)',
    );
    expect(ci.exitCode).toBe(2);
    const dry = await onTerminal(box, ['webhooks', 'delete', '1', '--dry-run', '-o', 'table'], 'y\r');
    expect(dry.screen).not.toContain('[y/N]');
    expect(dry.screen).toContain('Dry run, nothing changed: would delete webhook 1 (member_add → https://example.com/hooks).');
    expect(dry.exitCode).toBe(0);
    expect((await box.json('webhooks', 'list')).length).toBe(1);
  });
});

const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };

describe.each<Mode>(['local', 'remote'])('--dry-run (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { json } = recorder(box, transcripts[mode]);
  beforeAll(async () => {
    await box.start();
    for (const [email, city] of [
      ['a@example.com', 'Oslo'],
      ['b@example.com', ''],
      ['c@example.com', 'Bergen'],
      ['d@example.com', 'Oslo'],
    ]) {
      const r = await box.amsg('members', 'add', email, '--group', 'Trial', ...(city ? ['--field', `last_name=${city}`] : []));
      expect(r.exitCode, r.stderr).toBe(0);
    }
    expect((await box.amsg('members', 'status', '3', '4', '--to', 'o', '--yes')).exitCode).toBe(0);
    expect((await box.amsg('members', 'delete', '4', '--yes')).exitCode).toBe(0);
  }, 30_000);
  afterAll(() => box.stop());

  test('bulk and destructive commands say what would change, and how many, and change nothing', async () => {
    const before = await json('members', 'list', '--deleted');
    expect(await json('groups', 'delete', 'Trial', '--dry-run')).toEqual({
      dry_run: true,
      would: 'delete group "Trial" (1) and its 3 memberships',
      count: 3,
    });
    expect(await json('groups', 'clear', 'Trial', '--status', 'o', '--dry-run')).toEqual({
      dry_run: true,
      would: 'remove 1 opted out member from group "Trial" (1)',
      count: 1,
    });
    expect(await json('members', 'delete', '--status', 'a', '--dry-run')).toEqual({
      dry_run: true,
      would: 'archive 2 active members',
      count: 2,
    });
    expect(await json('members', 'delete', '1', '2', '--dry-run')).toEqual({ dry_run: true, would: 'archive 2 members', count: 2 });
    expect(await json('members', 'move-status', '--from', 'a', '--to', 'e', '--group', 'Trial', '--dry-run')).toEqual({
      dry_run: true,
      would: 'move 2 active members in group "Trial" (1) to error',
      count: 2,
    });
    expect(await json('members', 'status', '1', '--to', 'o', '--dry-run')).toEqual({
      dry_run: true,
      would: 'set the status of member a@example.com (1) to opted out',
      count: 1,
    });
    expect(await json('members', 'purge-archived', '--dry-run')).toEqual({
      dry_run: true,
      would: 'erase 1 archived member permanently',
      count: 1,
    });
    expect(await json('members', 'purge-archived', '--status', 'a', '--dry-run')).toMatchObject({ count: 0 });
    // Counted from the service's kept counts: by status, in a group, archived or live.
    expect(await json('members', 'purge-archived', '--status', 'o', '--group', 'Trial', '--dry-run')).toEqual({
      dry_run: true,
      would: 'erase 1 archived opted out member of group "Trial" (1) permanently',
      count: 1,
    });
    expect(await json('members', 'delete', '--status', 'o', '--dry-run')).toEqual({
      dry_run: true,
      would: 'archive 1 opted out member',
      count: 1,
    });
    expect(await json('members', 'move-status', '--from', 'o', '--to', 'a', '--dry-run')).toEqual({
      dry_run: true,
      would: 'move 1 opted out member to active',
      count: 1,
    });
    expect(await json('members', 'move-status', '--from', 'f', '--to', 'a', '--group', 'Trial', '--dry-run')).toMatchObject({ count: 0 });
    expect(await json('members', 'purge', 'a@example.com', '--dry-run')).toMatchObject({
      would: 'erase member a@example.com (1) permanently',
    });
    expect(await json('fields', 'clear', 'last_name', '--dry-run')).toEqual({
      dry_run: true,
      would: 'clear field "last_name" (2) for 3 members',
      count: 3,
    });
    expect(await json('fields', 'delete', 'last_name', '--dry-run')).toMatchObject({ count: 3 });
    // For people, a sentence.
    const table = await box.amsg('groups', 'delete', 'Trial', '--dry-run', '-o', 'table');
    expect(table.stdout).toBe('Dry run, nothing changed: would delete group "Trial" (1) and its 3 memberships.');
    // Nothing changed, and no --yes was needed.
    expect(await json('members', 'list', '--deleted')).toEqual(before);
    expect((await json('groups', 'get', 'Trial')).active_count).toBe(2);
  });
});

test('the dry runs answer the same in both modes', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
