import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './harness.js';

describe('a reader that stops early', () => {
  it('`amsg … | head -1` ends quietly with exit 0 (EPIPE is the reader being done)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-pipe-'));
    try {
      const env = { ...process.env, AMSG_DB: join(dir, 'a.db'), AMSG_BASE_URL: '' };
      await execa(process.execPath, [BIN, 'init', '-q'], { env });
      // Enough output that the writer is still writing when head has gone.
      await execa(process.execPath, [BIN, 'fields', 'create', 'notes', '--type', 'text', '-q'], { env });
      const r = await execa('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" "${BIN}" api spec -q | head -1`], { env, reject: false });
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('{');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
