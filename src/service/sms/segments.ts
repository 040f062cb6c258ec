/**
 * SMS segments, counted as carriers count them. Pure: no I/O.
 *
 * - A message made only of the GSM 03.38 default alphabet goes as GSM-7: 160 septets in
 *   one segment; split, each segment carries 153 (the rest is the concatenation header).
 *   The extension characters (`^ { } \ [ ~ ] | €` and form feed) take two septets (an
 *   escape and the character).
 * - Any other character makes the whole message UCS-2: 70 UTF-16 code units in one
 *   segment, 67 a segment when split; a character outside the Basic Multilingual Plane
 *   (most emoji) is a surrogate pair, two code units.
 * - When split, a two-unit character is never cut between segments (an escape pair or a
 *   surrogate pair goes whole into the next segment), as handsets reassemble them.
 */

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM_BASIC);
const EXTENSION = new Set(GSM_EXTENSION);

/**
 * Septets per UTF-16 code unit (0: not GSM), so a send's per-recipient count is one array
 * read a character: Set lookups of one-character strings cost ten times as much.
 */
const SEPTETS = new Uint8Array(0x10000);
for (const ch of GSM_BASIC) SEPTETS[ch.charCodeAt(0)] = 1;
for (const ch of GSM_EXTENSION) SEPTETS[ch.charCodeAt(0)] = 2;

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SegmentCount {
  encoding: SmsEncoding;
  /** Characters (Unicode code points). */
  characters: number;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  units: number;
  segments: number;
  /** How many units a segment holds: 160 or 153 (GSM-7), 70 or 67 (UCS-2). */
  per_segment: number;
  /** The characters that made the message UCS-2, each once, in order of appearance. */
  non_gsm_characters: string[];
}

export const LIMITS = {
  'GSM-7': { single: 160, split: 153 },
  'UCS-2': { single: 70, split: 67 },
} as const;

/** Segments of units laid end to end, a two-unit character never cut in two. */
function pack(sizes: number[], total: number, encoding: SmsEncoding): { segments: number; per: number } {
  const { single, split } = LIMITS[encoding];
  if (total === 0) return { segments: 0, per: single };
  if (total <= single) return { segments: 1, per: single };
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > split) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return { segments, per: split };
}

/** Whether every character of text is in the GSM 03.38 alphabet (basic or extension). */
export function isGsm(text: string): boolean {
  for (const ch of text) if (!BASIC.has(ch) && !EXTENSION.has(ch)) return false;
  return true;
}

export function countSegments(text: string): SegmentCount {
  const nonGsm: string[] = [];
  const seen = new Set<string>();
  const septets: number[] = [];
  let characters = 0;
  let septetTotal = 0;
  for (const ch of text) {
    characters++;
    const size = BASIC.has(ch) ? 1 : EXTENSION.has(ch) ? 2 : 0;
    if (size === 0) {
      if (!seen.has(ch)) {
        seen.add(ch);
        nonGsm.push(ch);
      }
    } else {
      septets.push(size);
      septetTotal += size;
    }
  }
  if (nonGsm.length === 0) {
    const { segments, per } = pack(septets, septetTotal, 'GSM-7');
    return { encoding: 'GSM-7', characters, units: septetTotal, segments, per_segment: per, non_gsm_characters: [] };
  }
  const units: number[] = [];
  for (const ch of text) units.push(ch.length);
  const { segments, per } = pack(units, text.length, 'UCS-2');
  return { encoding: 'UCS-2', characters, units: text.length, segments, per_segment: per, non_gsm_characters: nonGsm };
}

/**
 * Only the number of segments, without the details: what a send computes per recipient
 * (no arrays unless the message is long enough to be split).
 */
export function segmentsOf(text: string): number {
  let septets = 0;
  let gsm = true;
  for (let i = 0; i < text.length; i++) {
    const size = SEPTETS[text.charCodeAt(i)];
    if (size === 0) {
      gsm = false;
      break;
    }
    septets += size;
  }
  if (gsm) {
    if (septets <= LIMITS['GSM-7'].single) return septets === 0 ? 0 : 1;
  } else if (text.length <= LIMITS['UCS-2'].single) return 1;
  return countSegments(text).segments;
}
