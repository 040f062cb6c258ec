/**
 * The spec's status letters and the words people read for them, one table each: for the
 * CLI's tables, flags and notes, the service's messages and the console's badges. The wire
 * keeps the letters (and the names the API itself answers, such as a member's `opt-out`,
 * stay with the encoders that write them).
 */

/** mailing_status. */
export const MAILING_STATUS_WORDS: Record<string, string> = {
  p: 'pending',
  a: 'paused',
  i: 'injecting',
  s: 'sending',
  x: 'canceled',
  c: 'complete',
  w: 'waiting',
  u: 'unapproved',
  f: 'failed',
};

/** An SMS campaign's send_status. */
export const SMS_SEND_STATUS_WORDS = {
  d: 'draft',
  s: 'scheduled',
  p: 'pending',
  i: 'sending',
  c: 'complete',
  x: 'canceled',
  f: 'failed',
} as const;

/** member_status_id. */
export const MEMBER_STATUS_WORDS: Record<string, string> = { a: 'active', e: 'error', o: 'opted out', f: 'forwarded' };
