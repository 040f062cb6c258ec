import { describe, expect, it } from 'vitest';
import { countSegments, segmentsOf } from '../../src/service/sms/segments.js';

const a = (n: number) => 'a'.repeat(n);
const zhe = (n: number) => 'ж'.repeat(n);

/** [case, text, encoding, units, segments, per_segment] */
const CASES: [string, string, 'GSM-7' | 'UCS-2', number, number, number][] = [
  ['empty', '', 'GSM-7', 0, 0, 160],
  ['one character', 'a', 'GSM-7', 1, 1, 160],
  ['GSM-7 at 160', a(160), 'GSM-7', 160, 1, 160],
  ['GSM-7 at 161', a(161), 'GSM-7', 161, 2, 153],
  ['GSM-7 at 306', a(306), 'GSM-7', 306, 2, 153],
  ['GSM-7 at 307', a(307), 'GSM-7', 307, 3, 153],
  ['GSM accents of the basic table (é, Ñ, ß, Ç)', 'éÑßÇ@£', 'GSM-7', 6, 1, 160],
  ['extension characters count two', '^{}\\[~]|€', 'GSM-7', 18, 1, 160],
  ['80 euro signs are 160 septets', '€'.repeat(80), 'GSM-7', 160, 1, 160],
  ['81 euro signs are 162 septets', '€'.repeat(81), 'GSM-7', 162, 2, 153],
  ['159 + one extension character is 161', a(159) + '^', 'GSM-7', 161, 2, 153],
  ['an escape pair is not cut between segments', a(152) + '[' + a(152), 'GSM-7', 306, 3, 153],
  ['a single emoji', '😀', 'UCS-2', 2, 1, 70],
  ['lower-case ç is not GSM', 'ça', 'UCS-2', 2, 1, 70],
  ['mixed scripts', 'Hello мир', 'UCS-2', 9, 1, 70],
  ['UCS-2 at 70', 'ж' + a(69), 'UCS-2', 70, 1, 70],
  ['UCS-2 at 71', 'ж' + a(70), 'UCS-2', 71, 2, 67],
  ['UCS-2 at 134', zhe(134), 'UCS-2', 134, 2, 67],
  ['UCS-2 at 135', zhe(135), 'UCS-2', 135, 3, 67],
  ['69 + an emoji is 71 code units', zhe(69) + '😀', 'UCS-2', 71, 2, 67],
  ['a surrogate pair is not cut between segments', zhe(66) + '😀' + zhe(66), 'UCS-2', 134, 3, 67],
];

describe('segments, as carriers count them', () => {
  it.each(CASES)('%s', (_, text, encoding, units, segments, per) => {
    const n = countSegments(text);
    expect({ encoding: n.encoding, units: n.units, segments: n.segments, per_segment: n.per_segment }).toEqual({
      encoding,
      units,
      segments,
      per_segment: per,
    });
    expect(segmentsOf(text)).toBe(segments);
  });

  it('names the characters that made a message UCS-2, each once', () => {
    expect(countSegments('Hi 😀 ça va 😀').non_gsm_characters).toEqual(['😀', 'ç']);
    expect(countSegments('Hi 😀').characters).toBe(4);
    expect(countSegments('plain').non_gsm_characters).toEqual([]);
  });
});
