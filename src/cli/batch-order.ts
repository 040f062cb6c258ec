import { ApiError } from '../errors.js';

/**
 * The service's 409 for a streamed-import batch that arrived before the one it
 * follows, and gave up waiting for it there (`expected_offset` is earlier than its
 * own): that one was held up on its way (waiting out the rate limit), so this one is
 * sent again once that one is answered. Any other 409 is a real refusal.
 */
export function isAheadOf(err: unknown, offset: number | undefined): boolean {
  if (!(err instanceof ApiError) || err.status !== 409 || err.body.field !== 'offset' || offset === undefined) return false;
  const expected = err.body.expected_offset;
  return typeof expected === 'number' && expected < offset;
}

/**
 * Posts a batch of a streamed import (repeatable: the service knows a batch again by
 * its offset), and posts it again if it arrived ahead of the batch before it, once
 * `prior` (that batch's answer) has settled.
 */
export async function postBatch<T>(post: () => Promise<T>, offset: number | undefined, prior: Promise<unknown> | undefined): Promise<T> {
  try {
    return await post();
  } catch (err) {
    if (!prior || !isAheadOf(err, offset)) throw err;
    await prior.catch(() => {});
    return post();
  }
}
