import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recorder, transcriptView, Sandbox, type Mode, type Run } from './harness.js';

/**
 * Errors a script can read: one JSON object on stderr with --json (or json/ndjson
 * output off a terminal), the same exit code for the same failure whichever way
 * it is reached, and usage errors found before any request. Both modes.
 */
const transcripts: Record<Mode, Run[]> = { local: [], remote: [] };
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;

describe.each<Mode>(['local', 'remote'])('errors (%s)', (mode) => {
  const box = new Sandbox(mode);
  const { run } = recorder(box, transcripts[mode]);
  let html = '';

  beforeAll(async () => {
    await box.start();
    expect((await box.amsg('groups', 'create', 'Gold')).exitCode).toBe(0);
    html = join(box.dir, 'body.html');
    writeFileSync(html, '<p>Hello</p>');
  }, 30_000);
  afterAll(() => box.stop());

  const create = ['mailings', 'create', '--name', 'Spring', '--subject', 'Hi', '--sender', 'a@example.com', '--group', 'Gold'];

  test('with --json a refusal is one JSON object on stderr', async () => {
    const r = await run(...create, '--html', html, '--json');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(JSON.parse(lastLine(r.stderr))).toEqual({
      error: 'mailing: html_body lacks [% optout_url %] (every mailing must carry its opt-out link)',
      status: 400,
      field: 'html_body',
      exit_code: 1,
      details: { missing_tags: ['html_body lacks [% optout_url %]'] },
    });
    // ndjson off a terminal is for machines too.
    const nd = await run(...create, '--html', html, '-o', 'ndjson');
    expect(JSON.parse(lastLine(nd.stderr)).status).toBe(400);
    // For people: the details as a line, not JSON pasted at the end.
    const text = await run(...create, '--html', html);
    expect(text.stderr).toContain(
      'amsg: the service refused (HTTP 400): mailing: html_body lacks [% optout_url %] (every mailing must carry its opt-out link)\n  missing_tags: html_body lacks [% optout_url %]',
    );
    expect(text.stderr).not.toContain('{');
  });

  test('not found is exit 1 by name and by id alike, with a suggestion for names', async () => {
    const byName = await run('groups', 'get', 'Glod');
    expect(byName.exitCode).toBe(1);
    expect(byName.stderr).toContain('amsg: no group named "Glod" (see amsg groups list); did you mean "Gold"?');
    const byId = await run('groups', 'get', '999');
    expect(byId.exitCode).toBe(1);
    const json = await run('groups', 'get', 'Glod', '--json');
    expect(JSON.parse(lastLine(json.stderr))).toEqual({
      error: 'no group named "Glod" (see amsg groups list); did you mean "Gold"?',
      status: 404,
      field: 'group',
      exit_code: 1,
    });
    const idJson = await run('groups', 'get', '999', '--json');
    expect(JSON.parse(lastLine(idJson.stderr))).toMatchObject({ status: 404, exit_code: 1 });
  });

  test('a bad flag value is a usage error (2) before any request, as JSON when asked', async () => {
    const r = await run('members', 'list', '--start', 'abc', '--json');
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stderr.trim())).toEqual({
      error: `option '--start <n>' argument 'abc' is invalid. expected a whole number, got "abc".`,
      status: null,
      field: null,
      exit_code: 2,
    });
    const unknown = await run('members', 'list', '--colour', '--json');
    expect(JSON.parse(unknown.stderr.trim())).toMatchObject({ error: "unknown option '--colour'", exit_code: 2 });
    const text = await run('members', 'list', '--start', 'abc');
    expect(text.stderr).toContain('(add --help for usage and examples)');
  });
});

test('the two modes fail the same way', () => {
  expect(transcriptView(transcripts.remote)).toEqual(transcriptView(transcripts.local));
});

describe('configuration errors', () => {
  const box = new Sandbox('remote');
  beforeAll(() => box.start(), 30_000);
  afterAll(() => box.stop());

  test('remote mode without a well-formed key pair is a usage error naming --api-key, before any request', async () => {
    for (const key of ['nocolon', ':private', 'public:', '']) {
      const r = await box.raw(['members', 'list'], { AMSG_BASE_URL: box.url!, AMSG_API_KEY: key });
      expect(r.exitCode, key).toBe(2);
      expect(r.stderr, key).toContain('--api-key');
      expect(r.stderr, key).toContain('AMSG_API_KEY');
      expect(r.stderr, key).not.toContain('acting on');
      // The key is a secret: never echoed back.
      if (key) expect(r.stderr).not.toContain(key);
    }
    const json = await box.raw(['members', 'list', '--json'], { AMSG_BASE_URL: box.url!, AMSG_API_KEY: 'nocolon' });
    expect(JSON.parse(json.stderr.trim())).toMatchObject({ field: 'api_key', exit_code: 2 });
  });

  test('local mode without a database speaks of amsg init and --db, not base URLs', async () => {
    const r = await box.raw(['members', 'list'], { AMSG_DB: join(box.dir, 'missing.db') });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(`amsg: no amsg database at ${join(box.dir, 'missing.db')}`);
    expect(r.stderr).toContain('amsg init');
    expect(r.stderr).toContain('--db FILE');
    expect(r.stderr).not.toContain('base-url');
  });

  test('init with a base URL configured says it set up a local database and ignored the URL', async () => {
    const db = join(box.dir, 'fresh.db');
    const r = await box.raw(['init', '--db', db, '--json'], { AMSG_BASE_URL: 'http://127.0.0.1:9' });
    expect(r.exitCode).toBe(0);
    // --db means local mode: nothing to say.
    expect(r.stderr).not.toContain('base URL');
    const other = join(box.dir, 'other.db');
    const viaEnv = await box.raw(['init', '--json'], { AMSG_BASE_URL: 'http://127.0.0.1:9', AMSG_DB: other });
    expect(viaEnv.exitCode).toBe(0);
    expect(viaEnv.stderr).toContain('a base URL is configured (http://127.0.0.1:9); init sets up a local database and ignored it');
    expect(JSON.parse(viaEnv.stdout).db).toBe(other);
  });
});
