import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Errors a script can read, and refusals said before anything is asked: JSON errors
 * whenever the data is JSON (stdout not a terminal, no format for people chosen),
 * a refused fixture's problems as objects, an unknown command under --help, init
 * with a base URL, a busy port, and a cancel the service would refuse. Both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;

/** A sandbox whose runs have the default error format (the harness asks for sentences). */
class DefaultErrors extends Sandbox {
  override get baseEnv() {
    return { ...super.baseEnv, AMSG_ERRORS: undefined };
  }
}

describe.each<Mode>(['local', 'remote'])('errors for scripts (%s)', (mode) => {
  const box = new DefaultErrors(mode);
  const { run } = recorder(box, transcripts[mode]);
  beforeAll(async () => {
    await box.start();
  }, 30_000);
  afterAll(() => box.stop());

  test('off a terminal the data is JSON, and so is the error, without --json', async () => {
    const r = await run('members', 'get', 'nobody@example.com');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(JSON.parse(lastLine(r.stderr))).toEqual({
      error: 'member nobody@example.com not found',
      status: 404,
      field: null,
      exit_code: 1,
    });
    // A usage error too (before any request), and ndjson is for machines as well.
    const usage = await run('members', 'list', '--start', 'abc');
    expect(usage.exitCode).toBe(2);
    expect(JSON.parse(usage.stderr.trim())).toMatchObject({ exit_code: 2, status: null });
    expect(JSON.parse(lastLine((await run('members', 'get', 'nobody@example.com', '-o', 'ndjson')).stderr))).toMatchObject({ status: 404 });
    // A format for people chosen (a table, or CSV for a spreadsheet): a sentence for people.
    for (const format of ['table', 'csv']) {
      const text = await run('members', 'get', 'nobody@example.com', '-o', format);
      expect(lastLine(text.stderr)).toBe('amsg: the service refused (HTTP 404): member nobody@example.com not found');
    }
    const env = await box.raw(['members', 'get', 'nobody@example.com'], { ...box.env, AMSG_OUTPUT: 'table' });
    expect(lastLine(env.stderr)).toBe('amsg: the service refused (HTTP 404): member nobody@example.com not found');
    // AMSG_ERRORS=text: sentences for a person reading a pipeline's errors; the data stays JSON.
    const people = await box.raw(['members', 'get', 'nobody@example.com'], { ...box.env, AMSG_ERRORS: 'text' });
    expect(lastLine(people.stderr)).toBe('amsg: the service refused (HTTP 404): member nobody@example.com not found');
  });

  test('a refused fixture under --json lists each problem as an object', async () => {
    const file = join(box.dir, 'bad.yaml');
    writeFileSync(file, 'members:\n  - {email: two@example.com, feilds: {city: Oslo}, status: x}\n');
    const r = await run('seed', file, '--json');
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(lastLine(r.stderr))).toEqual({
      error: 'the fixture was refused, nothing was written (2 problems)',
      status: null,
      field: null,
      exit_code: 2,
      details: {
        problems: [
          {
            file,
            path: 'members[0].feilds',
            message: 'unknown key (expected email, fields, groups, subscriptions, sms, status, archived)',
          },
          { file, path: 'members[0].status', message: 'must be one of a, o, e, got "x"' },
        ],
      },
    });
  });

  test('canceling a mailing the service would refuse to cancel is refused before asking', async () => {
    const file = join(box.dir, 'sent.yaml');
    writeFileSync(
      file,
      [
        'groups: [Gold]',
        'members:',
        '  - {email: ada@example.com, groups: [Gold]}',
        'mailings:',
        '  - name: Spring',
        '    subject: Hi',
        '    sender: news@example.com',
        "    plaintext: 'Hi [% optout_url %]'",
        '    status: sent',
        '    recipients: {groups: [Gold]}',
        '',
      ].join('\n'),
    );
    expect((await run('seed', file)).exitCode).toBe(0);
    // No --yes and no terminal: the answer is the refusal, not "refusing ... without --yes".
    for (const args of [[], ['--yes'], ['--dry-run']]) {
      const r = await run('mailings', 'cancel', 'Spring', '-o', 'table', ...args);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(
        /\namsg: the service refused \(HTTP 403\): mailing \d+ "Spring" is complete \(c\): only a pending \(p\) or paused \(a\) mailing can be canceled; nothing was changed\n/,
      );
      expect(r.stderr).not.toContain('refusing');
    }
    const json = await run('mailings', 'cancel', 'Spring');
    expect(JSON.parse(lastLine(json.stderr))).toMatchObject({ status: 403, exit_code: 1, details: { mailing_status: 'c' } });
  });
});

describe('usage refused before anything is done', () => {
  const box = new DefaultErrors('local');
  afterAll(() => box.stop());

  test('amsg nosuchcommand --help: the command does not exist (exit 2), not the help', async () => {
    for (const args of [
      ['nosuchcommand', '--help'],
      ['membres', '-h'],
      ['members', 'nosuch', '--help'],
    ]) {
      const r = await box.raw([...args, '-o', 'table']);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`error: unknown command '${args[0] === 'members' ? 'nosuch' : args[0]}'`);
    }
    expect(JSON.parse((await box.raw(['nosuchcommand', '--help'])).stderr.trim())).toEqual({
      error: "unknown command 'nosuchcommand'",
      status: null,
      field: null,
      exit_code: 2,
    });
    // Help of commands that exist is still help.
    for (const args of [['--help'], ['members', '--help'], ['members', 'list', '--help'], ['help', 'members']]) {
      const r = await box.raw(args);
      expect(r.exitCode, args.join(' ')).toBe(0);
      expect(r.stdout).toContain('Usage: amsg');
    }
  });

  test('amsg --base-url URL init refuses (exit 2): init sets up a local database', async () => {
    const r = await box.raw(['--base-url', 'http://127.0.0.1:9', 'init', '-o', 'table'], { AMSG_DB: box.db });
    expect(r.exitCode).toBe(2);
    expect(lastLine(r.stderr)).toBe(
      'amsg: init sets up a local database; --base-url http://127.0.0.1:9 names a remote service, which has its own accounts and keys. ' +
        'Leave out --base-url to set up a local one (amsg init), or use the remote service with --base-url and --api-key',
    );
    expect(r.stdout).toBe('');
  });

  test('a busy port in amsg serve says the port is taken (exit 2)', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await box.raw(['serve', '--port', String(port), '-o', 'table'], { AMSG_DB: box.db });
      expect(r.exitCode).toBe(2);
      expect(lastLine(r.stderr)).toBe(
        `amsg: port ${port} on 127.0.0.1 is taken (another amsg serve?): choose another with --port, or --port 0 for a free one`,
      );
    } finally {
      taken.close();
    }
  }, 30_000);
});

test('errors for scripts: local and remote transcripts match', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});
