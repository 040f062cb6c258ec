/**
 * The background loops of the deliverers (webhook posts, real mail): both poll their outbox
 * and, in a local command's turn, wait for their sends in flight with a bound. Both run a
 * pass soon after each wake-up, once however often they are woken.
 */

/**
 * Calls work now and every pollMs after, on an unref'd timer (a process with nothing else
 * to do may end between two polls); answers the function that stops it.
 */
export function pollEvery(pollMs: number, work: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    work();
    timer = setTimeout(tick, pollMs);
    timer.unref();
  };
  tick();
  return () => clearTimeout(timer);
}

/** Resolves when the first of these settles, or after ms, whichever comes first. */
export async function firstOrAfter(promises: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([...promises, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/**
 * A function that runs work in an immediate: once however many times it is called before
 * that runs, and not at all once stopped() (a deliverer woken by every event it fires).
 */
export function soonOnce(work: () => void, stopped: () => boolean, onError: (err: unknown) => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled || stopped()) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      try {
        work();
      } catch (err) {
        onError(err);
      }
    });
  };
}

/** A failure of background work, named by what: the next pass tries again; AMSG_DEBUG=1 shows it. */
export const backgroundErrorOf =
  (what: string) =>
  (err: unknown): void => {
    if (process.env.AMSG_DEBUG) process.stderr.write(`amsg: ${what}: ${(err as Error)?.stack ?? String(err)}\n`);
  };
