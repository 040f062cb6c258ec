/**
 * The one clock of the service. Everything that stamps or compares "now" reads it,
 * so tests and fixtures can pin time (AMSG_NOW=2026-01-02T03:04:05Z pins it for a
 * whole CLI or server process).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(at: Date | string): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(at);
  if (Number.isNaN(current.getTime())) throw new Error(`not a date: ${String(at)}`);
  return {
    now: () => new Date(current),
    set(next) {
      current = new Date(next);
    },
    advance(ms) {
      current = new Date(current.getTime() + ms);
    },
  };
}

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  return env.AMSG_NOW ? fixedClock(env.AMSG_NOW) : systemClock;
}

/** The stored form of a timestamp: UTC 'YYYY-MM-DDThh:mm:ss.ffffff' (sorts as text). */
export function stamp(date: Date): string {
  return date.toISOString().slice(0, 23) + '000';
}
