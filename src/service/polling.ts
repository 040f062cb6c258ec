/**
 * The background loops of the deliverers (webhook posts, real mail): both poll their outbox
 * and, in a local command's turn, wait for their sends in flight with a bound.
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
