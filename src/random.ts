/**
 * Seeded randomness, the same in every layer: the seeder's generated members and the
 * simulated engagement of a send (`amsg sim mailing`, a fixture's `engagement`) draw
 * from it, so the same seed over the same data draws the same members. Pure.
 */

/** A seeded generator of numbers in [0, 1) (mulberry32: small, fast, and good enough to draw a sample). */
export function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A copy of `items` in a seeded random order (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
