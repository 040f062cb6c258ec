import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { isAheadOf, postBatch } from '../../src/cli/batch-order.js';

const ahead = (expected: number) =>
  new ApiError(409, `offset: import 3 expects the batch at row ${expected} next`, {
    field: 'offset',
    expected_offset: expected,
    num_members: expected,
  });

describe('streamed-import batches that arrived ahead of the one before', () => {
  it('tells such a 409 from the others', () => {
    expect(isAheadOf(ahead(100), 200)).toBe(true);
    // Behind (the batch is already there) or no offset: not this case.
    expect(isAheadOf(ahead(300), 200)).toBe(false);
    expect(isAheadOf(ahead(100), undefined)).toBe(false);
    expect(isAheadOf(new ApiError(409, 'other', { field: 'email' }), 200)).toBe(false);
    expect(isAheadOf(new ApiError(400, 'bad'), 200)).toBe(false);
  });

  it('is sent again once the batch before it has been answered, and only then', async () => {
    const events: string[] = [];
    let release!: () => void;
    const prior = new Promise<void>((resolve) => (release = resolve)).then(() => void events.push('prior answered'));
    let tries = 0;
    const post = async () => {
      events.push(`try ${++tries}`);
      if (tries === 1) throw ahead(100);
      return { ok: true };
    };
    const sent = postBatch(post, 200, prior);
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['try 1']);
    release();
    expect(await sent).toEqual({ ok: true });
    expect(events).toEqual(['try 1', 'prior answered', 'try 2']);
  });

  it('passes any other failure on, and a second refusal too', async () => {
    await expect(postBatch(() => Promise.reject(new ApiError(400, 'bad')), 200, Promise.resolve())).rejects.toThrow('bad');
    let tries = 0;
    const always = () => {
      tries++;
      return Promise.reject(ahead(100));
    };
    await expect(postBatch(always, 200, Promise.resolve())).rejects.toThrow('expects the batch at row 100');
    expect(tries).toBe(2);
  });
});
