/**
 * The database file on disk: what a purge leaves in its bytes (secure_delete), and who
 * may read it (the file, its WAL and its shared-memory file are private to the user).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { makeService, type TestService } from '../helpers.js';
import { countRows, createField, ok } from './util.js';

/** How often each text occurs in the bytes of the database file and of its WAL (a file not there holds none). */
function occurrences(file: string, texts: string[]): Record<string, { db: number; wal: number }> {
  const count = (path: string, text: string) => {
    if (!existsSync(path)) return 0;
    const bytes = readFileSync(path);
    let n = 0;
    for (let at = bytes.indexOf(text); at >= 0; at = bytes.indexOf(text, at + 1)) n++;
    return n;
  };
  return Object.fromEntries(texts.map((t) => [t, { db: count(file, t), wal: count(`${file}-wal`, t) }]));
}

describe('a purge erases the bytes (secure_delete)', () => {
  let s: TestService;
  beforeEach(async () => {
    s = makeService(undefined, { importWriter: true });
    await s.router.importWriter!.whenReady();
  });
  afterEach(() => s.close());

  it('after a purge, neither the database file nor its WAL holds the addresses or field values, one member or many (whole pages freed)', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const one = (
      await ok(s, 'POST', '/1/members/add', { body: { email: 'erase-me-0451@example.org', fields: { city: 'Erasetown-0451' } } })
    ).member_id as number;
    // 1,500 members to purge and 1,500 to keep, interleaved, through the import writer's connection.
    const importId = (await ok(s, 'POST', '/1/members/imports', { body: {} })).import_id as number;
    const rows = Array.from({ length: 3000 }, (_, i) =>
      i % 2 ? [`kept-${i}@example.org`, `Keepville-${i}`] : [`gone-${i}@example.org`, `Gonecity-${i}`],
    );
    expect(await ok(s, 'POST', `/1/members/imports/${importId}/rows`, { body: { columns: ['email', 'city'], rows } })).toMatchObject({
      added: 3000,
    });
    // Everything so far is in the database file; the WAL starts empty.
    s.db.pragma('wal_checkpoint(TRUNCATE)');
    const ids = (email: string) => s.db.prepare('SELECT member_id FROM members WHERE email LIKE ?').pluck().all(email) as number[];
    const gone = ids('gone-%');
    expect(gone).toHaveLength(1500);
    // Each address is in its row and in the email index; a few are also the dividers of the index's interior pages.
    const extraDividers = occurrences(s.file, ['gone-'])['gone-'].db - 3000;
    expect(extraDividers).toBeGreaterThanOrEqual(0);
    expect(extraDividers).toBeLessThan(20);
    expect(occurrences(s.file, ['erase-me-0451@', 'Erasetown-0451', 'gone-2998@', 'Gonecity-2998'])).toEqual({
      'erase-me-0451@': { db: 2, wal: 0 }, // the row and the email index
      'Erasetown-0451': { db: 1, wal: 0 },
      'gone-2998@': { db: 2, wal: 0 },
      'Gonecity-2998': { db: 1, wal: 0 },
    });

    // One member: once the purge has answered, neither the file nor the WAL holds it
    // (secure_delete cleans the pages the purge writes; the purge then checkpoints and
    // truncates the WAL, whose older frames still held the member).
    const single = ['erase-me-0451', 'Erasetown-0451'];
    // Changes to the member before the purge put its row in WAL frames.
    await ok(s, 'PUT', `/1/members/${one}`, { body: { fields: { city: 'Erasetown-0451b' } } });
    expect(occurrences(s.file, single)['Erasetown-0451'].wal).toBeGreaterThan(0);
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [one] } })).toBe(true);
    expect(occurrences(s.file, single)).toEqual({ 'erase-me-0451': { db: 0, wal: 0 }, 'Erasetown-0451': { db: 0, wal: 0 } });

    // Half the members, which frees whole pages: the same.
    expect(await ok(s, 'POST', '/1/members/purge', { body: { member_ids: gone } })).toBe(true);
    expect(countRows(s, 'members')).toBe(1500);
    const many = ['gone-', 'Gonecity-'];
    expect(occurrences(s.file, [...single, ...many])).toEqual(Object.fromEntries([...single, ...many].map((x) => [x, { db: 0, wal: 0 }])));

    // The search does find what is still there.
    expect(occurrences(s.file, ['kept-2999@', 'Keepville-2999'])).toEqual({
      'kept-2999@': { db: 2, wal: 0 },
      'Keepville-2999': { db: 1, wal: 0 },
    });
  });

  it('every connection openDb makes has secure_delete on (the import writer thread opens its own the same way)', () => {
    expect(s.db.pragma('secure_delete', { simple: true })).toBe(1);
    const other = openDb(s.file, { countTriggers: false });
    try {
      expect(other.pragma('secure_delete', { simple: true })).toBe(1);
    } finally {
      other.close();
    }
  });
});

describe('file modes: the database, its WAL and its shared-memory file are 0600', () => {
  let dir: string;
  let umask: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'amsg-modes-'));
    // A common umask, under which a file is created 0644 unless asked otherwise.
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });
  const mode = (path: string) => statSync(path).mode & 0o777;
  const modes = (file: string) =>
    ['', '-wal', '-shm'].map((suffix) => [suffix || 'db', existsSync(file + suffix) ? mode(file + suffix).toString(8) : 'missing']);

  it('openDb creates a new file 0600, and SQLite creates the WAL and shared-memory files with its mode', () => {
    const file = join(dir, 'new.db');
    const db = openDb(file);
    try {
      db.prepare("INSERT INTO accounts (account_id, account_name, created_at) VALUES (9, 'x', 'x')").run();
      expect(modes(file)).toEqual([
        ['db', '600'],
        ['-wal', '600'],
        ['-shm', '600'],
      ]);
    } finally {
      db.close();
    }
  });

  it('openDb leaves the mode of a file that is already there as it is (its owner chose it)', () => {
    const file = join(dir, 'existing.db');
    writeFileSync(file, '', { mode: 0o640 });
    const db = openDb(file);
    try {
      expect(modes(file)).toEqual([
        ['db', '640'],
        ['-wal', '640'],
        ['-shm', '640'],
      ]);
    } finally {
      db.close();
    }
  });

  it('`amsg init` and `amsg serve --db` on a new file (the built CLI): 0600, WAL and shared memory included', async () => {
    const bin = fileURLToPath(new URL('../../bin/amsg.js', import.meta.url));
    const env = { ...process.env, AMSG_BASE_URL: '', AMSG_QUIET: '1', XDG_CONFIG_HOME: dir };
    const initDb = join(dir, 'init.db');
    const init = spawn(process.execPath, [bin, 'init', '--json', '--db', initDb], { env, stdio: 'ignore' });
    expect(await new Promise((r) => init.once('exit', r))).toBe(0);
    // The WAL and shared-memory files are removed when the last connection closes.
    expect(modes(initDb)).toEqual([
      ['db', '600'],
      ['-wal', 'missing'],
      ['-shm', 'missing'],
    ]);

    const servedDb = join(dir, 'served.db');
    const serve = spawn(process.execPath, [bin, 'serve', '--port', '0', '--db', servedDb], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('serve did not start')), 15_000);
        serve.stdout!.once('data', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      expect(modes(servedDb)).toEqual([
        ['db', '600'],
        ['-wal', '600'],
        ['-shm', '600'],
      ]);
    } finally {
      serve.kill('SIGTERM');
      await new Promise((r) => serve.once('exit', r));
    }
  });
});
