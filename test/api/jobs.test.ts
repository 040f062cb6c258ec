import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { makeService, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { addMember, ok } from './util.js';

/**
 * The job runner runs after every local call, so between the batches of a streamed
 * import too, while the import's writer thread holds the write lock. With nothing due it
 * must not ask for that lock: each step that did waited (busy_timeout) for the writer's
 * commit, and the CLI fed the writer no rows meanwhile (bench/RESULTS.md, issue 9).
 */

let s: TestService;
let other: Database.Database;

beforeEach(() => {
  s = makeService();
  other = new Database(s.file);
});
afterEach(() => {
  other.close();
  s.close();
});

/** Runs the job runner while another connection holds the write lock; busy_timeout 0 makes a wait an error. */
function runWhileLocked(): boolean {
  s.db.pragma('busy_timeout = 0');
  other.exec('BEGIN IMMEDIATE');
  try {
    return advanceJobs(s.db, s.clock, 1_000);
  } finally {
    other.exec('ROLLBACK');
    s.db.pragma('busy_timeout = 10000');
  }
}

describe('the job runner with nothing due', () => {
  it('takes no write lock: it answers "nothing left" while another connection writes', async () => {
    expect(runWhileLocked()).toBe(false);
  });

  it('takes none either with retired accounts not yet due for their purge, and webhook events inside retention', async () => {
    await addMember(s, 'ann@example.com');
    await ok(s, 'POST', '/1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', event: 'member_add' } });
    await addMember(s, 'bob@example.com');
    s.db.prepare("UPDATE accounts SET retired_at = '2026-03-04T00:00:00', purge_after = '2026-04-03T00:00:00' WHERE account_id = 1").run();
    expect(runWhileLocked()).toBe(false);
  });
});
