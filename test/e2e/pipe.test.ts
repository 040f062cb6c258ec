import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './harness.js';

describe('stdout on a pipe', () => {
  it('a reader that stops early: `amsg … | head -1` ends quietly with exit 0 (EPIPE is the reader being done)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-pipe-'));
    try {
      const env = { ...process.env, AMSG_DB: join(dir, 'a.db'), AMSG_BASE_URL: '' };
      await execa(process.execPath, [BIN, 'init', '-q'], { env });
      // Enough output that the writer is still writing when head has gone.
      await execa(process.execPath, [BIN, 'fields', 'create', 'notes', '--type', 'text', '-q'], { env });
      const r = await execa('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" "${BIN}" api spec -q | head -1`], {
        env,
        reject: false,
      });
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('{');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a non-blocking pipe that fills up (EAGAIN) still gets every byte, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-pipe-'));
    try {
      const env = { ...process.env, AMSG_DB: join(dir, 'a.db'), AMSG_BASE_URL: '' };
      await execa(process.execPath, [BIN, 'init', '-q'], { env });
      await execa('bash', ['-c', `"${process.execPath}" "${BIN}" api spec -q > "${join(dir, 'spec.json')}"`], { env });
      const expected = readFileSync(join(dir, 'spec.json'), 'utf8');
      // Far more than a pipe holds (64 KB), so writes to it would block.
      expect(expected.length).toBeGreaterThan(200_000);
      // The reader's end is non-blocking and slow to read: amsg's writes find it full
      // (EAGAIN) and must go on through node's stream (src/cli/stdio.ts).
      const reader = `
import os, subprocess, sys, time
r, w = os.pipe()
os.set_blocking(w, False)
p = subprocess.Popen(sys.argv[1:], stdout=w)
os.close(w)
time.sleep(0.3)
chunks = []
while True:
    b = os.read(r, 4096)
    if not b: break
    chunks.append(b)
    time.sleep(0.0002)
p.wait()
sys.stdout.buffer.write(b''.join(chunks))
sys.exit(p.returncode)
`;
      const r = await execa('python3', ['-c', reader, process.execPath, BIN, 'api', 'spec', '-q'], {
        env,
        reject: false,
        stripFinalNewline: false,
      });
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
