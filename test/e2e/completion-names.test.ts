import { execa } from 'execa';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, Sandbox } from './harness.js';

/**
 * Completion offers names where a command takes one (issue 35): groups, mailings,
 * fields, searches, segments and subscriptions, read at each Tab by the hidden
 * `amsg __complete KIND` from the database or service the command would act on
 * (its --db, --base-url … as typed), quickly, and silently when it cannot.
 */
describe.each(['local', 'remote'] as const)('names in completion (%s)', (mode) => {
  const box = new Sandbox(mode);
  let script: string;
  let bin: string;
  beforeAll(async () => {
    await box.start();
    for (const args of [
      ['members', 'add', 'ada@example.com', '--group', 'Gold', '--field', 'first_name=Ada'],
      ['groups', 'create', 'Silver Club'],
      ['searches', 'create', 'Oslo people', '--criteria', '["member_field:first_name", "eq", "Ada"]'],
    ])
      expect((await box.amsg(...args)).exitCode, args.join(' ')).toBe(0);
    const html = join(box.dir, 'b.html');
    writeFileSync(html, '<p>[% optout_url %]</p>');
    expect(
      (
        await box.amsg(
          'mailings',
          'create',
          '--name',
          'Spring sale',
          '--subject',
          'Hi',
          '--sender',
          's@example.com',
          '--html',
          html,
          '--group',
          'Gold',
        )
      ).exitCode,
    ).toBe(0);
    // `amsg` on the PATH, as an installed one would be, for the script to call.
    bin = join(box.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'amsg'), `#!/bin/sh\nexec node ${BIN} "$@"\n`);
    chmodSync(join(bin, 'amsg'), 0o755);
    script = join(box.dir, 'amsg.bash');
    writeFileSync(script, (await box.amsg('completion', 'bash')).stdout);
  }, 60_000);
  afterAll(() => box.stop());

  const env = () => ({ ...process.env, ...box.baseEnv, ...box.env, PATH: `${bin}:${process.env.PATH}` });
  const complete = async (...words: string[]) => {
    const r = await execa(
      'bash',
      [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _amsg_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: env() },
    );
    return r.stdout.split('\n').filter(Boolean);
  };

  test('amsg __complete lists the names of a kind, one a line', async () => {
    const names = async (kind: string) => (await box.amsg('__complete', kind)).stdout.split('\n');
    expect(await names('groups')).toEqual(['Gold', 'Silver Club']);
    expect(await names('mailings')).toEqual(['Spring sale']);
    expect(await names('fields')).toContain('first_name');
    expect(await names('searches')).toEqual(['Oslo people']);
    // Hidden: not in the help, not offered as a command.
    expect((await box.amsg('--help')).stdout).not.toContain('__complete');
    expect(await complete('amsg', '__')).toEqual([]);
  });

  test('bash offers names for arguments and flags that take one, quoted for the shell', async () => {
    expect(await complete('amsg', 'groups', 'get', 'G')).toEqual(['Gold']);
    expect(await complete('amsg', 'groups', 'get', 'S')).toEqual(['Silver\\ Club']);
    expect(await complete('amsg', 'members', 'add', 'x@example.com', '--group', '')).toEqual(['Gold', 'Silver\\ Club']);
    expect(await complete('amsg', 'members', 'add', 'x@example.com', '--field', 'fi')).toEqual(['first_name=']);
    expect(await complete('amsg', 'sim', 'mailing', 'Spr')).toEqual(['Spring\\ sale']);
    // The second argument of sim open is a member: no names there; a flag value is not an argument.
    const second = await complete('amsg', 'sim', 'open', 'Spring sale', '');
    expect(second).not.toContain('Spring\\ sale');
    expect(second).toContain('--json');
    expect(await complete('amsg', '--output', 'json', 'reports', 'mailing', '')).toEqual(['Spring\\ sale']);
    expect(await complete('amsg', 'reports', 'compare', '1', 'Sp')).toEqual(['Spring\\ sale']);
    expect(await complete('amsg', 'mailings', 'create', '--search', 'O')).toEqual(['Oslo\\ people']);
    // Flags still complete as flags.
    expect(await complete('amsg', 'groups', 'get', '--j')).toEqual(['--json']);
  });

  test('fish and zsh get the same: fish asks __amsg_names where bash does (zsh runs the bash script)', async () => {
    const fish = (await box.amsg('completion', 'fish')).stdout;
    expect(fish).toContain(`complete -c amsg -n '__amsg_at \\'groups get\\'; and __amsg_argn 0' -a '(__amsg_names groups)'`);
    expect(fish).toContain(`complete -c amsg -n '__amsg_at \\'reports compare\\'; and __amsg_argn 0 +' -a '(__amsg_names mailings)'`);
    expect(fish).toMatch(/complete -c amsg -n '__amsg_at \\'members add\\'' -l field -x -a '\(__amsg_names fields =\)'/);
    expect(fish).toContain('amsg (__amsg_conn) __complete $argv[1] 2>/dev/null | string replace -r -- \'$\' "$argv[2]"');
    expect((await box.amsg('completion', 'zsh')).stdout).toContain('_amsg_names groups');
  });
});

test('with nothing to read (no database, a service that is down) a Tab gets nothing, quickly and silently', async () => {
  const dir = new Sandbox('local').dir;
  const env = { ...process.env, AMSG_DB: '', AMSG_BASE_URL: '', AMSG_API_KEY: '', XDG_CONFIG_HOME: join(dir, 'config') };
  const started = Date.now();
  const none = await execa('node', [BIN, '--db', join(dir, 'none.db'), '__complete', 'groups'], { env, reject: false });
  expect([none.exitCode, none.stdout, none.stderr]).toEqual([0, '', '']);
  const down = await execa('node', [BIN, '--base-url', 'http://127.0.0.1:9', '--api-key', 'a:b', '__complete', 'groups'], {
    env,
    reject: false,
  });
  expect([down.exitCode, down.stdout, down.stderr]).toEqual([0, '', '']);
  const unknown = await execa('node', [BIN, '__complete', 'planets'], { env, reject: false });
  expect([unknown.exitCode, unknown.stdout, unknown.stderr]).toEqual([0, '', '']);
  expect(Date.now() - started).toBeLessThan(6_000);
});

test('a Tab only reads: a local __complete runs no due job (a scheduled send stays pending)', async () => {
  const box = new Sandbox('local');
  try {
    await box.start();
    const html = join(box.dir, 'b.html');
    writeFileSync(html, '<p>[% optout_url %]</p>');
    expect((await box.amsg('members', 'add', 'ada@example.com', '--group', 'Gold')).exitCode).toBe(0);
    const created = await box.json(
      ...['mailings', 'create', '--name', 'Later', '--subject', 'Hi', '--sender', 's@example.com', '--html', html, '--group', 'Gold'],
      ...['--send-at', '2026-05-06T08:00:00Z'],
    );
    // An hour later the send is due: any ordinary call would start it; the completion does not.
    const later = { ...box.env, AMSG_NOW: '2026-05-06T09:00:00Z' };
    expect((await box.raw(['__complete', 'mailings'], later)).stdout).toBe('Later');
    expect((await box.json('mailings', 'get', String(created.mailing_id))).mailing_status).toBe('p');
    await box.raw(['groups', 'list'], later);
    expect((await box.json('mailings', 'get', String(created.mailing_id))).mailing_status).not.toBe('p');
  } finally {
    await box.stop();
  }
});
