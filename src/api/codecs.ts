/**
 * Wire encodings of the spec. Timestamps are stored as UTC
 * 'YYYY-MM-DDThh:mm:ss.ffffff' text (see src/store/migrations.ts); each encoder takes
 * that stored text (or null) and answers the spec's form.
 */

/** `@D:YYYY-MM-DDThh:mm:ss`, the spec's "datetime". */
export function atD(stored: string | null | undefined): string | null {
  return stored ? `@D:${stored.slice(0, 19)}` : null;
}

/** ISO 8601 with microseconds and +00:00 (SMS records, exports). */
export function isoOffset(stored: string | null | undefined): string | null {
  if (!stored) return null;
  const micros = (stored.slice(20) + '000000').slice(0, 6);
  return `${stored.slice(0, 19)}.${micros}+00:00`;
}

/** `YYYY-MM-DD hh:mm:ss.ffffff`, the real service's automation workflows (its Python client parses `%Y-%m-%d %H:%M:%S.%f`). */
export function spacedMicros(stored: string | null | undefined): string | null {
  if (!stored) return null;
  return `${stored.slice(0, 10)} ${stored.slice(11, 19)}.${(stored.slice(20) + '000000').slice(0, 6)}`;
}

/** RFC 1123 GMT text (subscriptions), e.g. `Tue, 03 Feb 2026 04:05:06 GMT`. */
export function rfc1123(stored: string | null | undefined): string | null {
  return stored ? new Date(`${stored.slice(0, 19)}Z`).toUTCString() : null;
}

/** `@I:<seconds>`, the spec's duration. */
export function atI(seconds: number | null | undefined): string | null {
  return seconds === null || seconds === undefined ? null : `@I:${seconds}`;
}

export const bool = (v: unknown): boolean => v === 1 || v === true;
