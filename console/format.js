// How values of the wire format read on a page.

// The status words are the CLI's and the service's own (one table each).
export {
  MAILING_STATUS_WORDS as MAILING_STATUS,
  MEMBER_STATUS_WORDS as MEMBER_STATUS,
  SMS_SEND_STATUS_WORDS as SMS_STATUS,
} from '../src/status-words.ts';

/** `@D:2026-05-06T07:08:09` (or an ISO time) as `2026-05-06 07:08` UTC; '' for none. */
export function when(value) {
  if (!value) return '';
  const text = String(value).replace(/^@D:/, '');
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/.exec(text);
  return m ? `${m[1]} ${m[2]}` : text;
}

/** Milliseconds since the epoch of a `@D:` or ISO time (UTC), or NaN. */
export function epochMs(value) {
  if (!value) return Number.NaN;
  const text = String(value).replace(/^@D:/, '');
  return Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`);
}

/** `part` of `whole` as a percentage with one decimal, or an en dash when there is no whole. */
export function rate(part, whole) {
  if (!whole) return '–';
  return `${((100 * (part ?? 0)) / whole).toFixed(1)}%`;
}

export const count = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));

export const MAILING_TYPE = { m: 'standard', t: 'test', r: 'trigger', s: 'split (subject)', c: 'split (content)' };
export const DELIVERY_STATUS = { p: 'pending', o: 'delivered', e: 'failed' };
export const IMPORT_STATUS = { q: 'queued', p: 'in progress', o: 'finished', e: 'failed' };

/** Any JSON value as text for a table cell: objects as compact JSON. */
export function text(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
