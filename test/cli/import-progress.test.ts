import { describe, expect, it } from 'vitest';
import { progressLine, waitLeft, type ProgressState } from '../../src/cli/import-progress.js';

describe('the import progress line', () => {
  const state: ProgressState = { rowsRead: 2000, rowsSent: 1000, rejected: 0, bytesRead: 50, totalBytes: 100, importId: 7 };
  const t0 = 1_000_000;

  it('shows a rate-limit wait while it lasts, with the seconds left', () => {
    const waiting = { ...state, waitingUntil: t0 + 10_000 + 48_200 };
    expect(waitLeft(waiting, t0 + 10_000)).toBe(49);
    expect(progressLine(waiting, t0, t0 + 10_000)).toBe(
      'import 7, 2,000 rows read, 1,000 sent, 100 rows/s, 50%, ETA 10s, 0 rejected, rate limited: waiting 49 s',
    );
    // Over: the line is as before.
    expect(progressLine(waiting, t0, t0 + 60_000)).toBe('import 7, 2,000 rows read, 1,000 sent, 17 rows/s, 50%, ETA 1m00s, 0 rejected');
  });
});
