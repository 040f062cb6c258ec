/** `amsg __complete KIND`: the names of KIND on stdout, one a line; nothing at all on any failure. */
import { RunContext, type GlobalOptions } from './context.js';
import { COMPLETE_TIMEOUT_MS, NAME_KINDS, namesOf, type NameKind } from './complete-names.js';

export async function completeNames(opts: GlobalOptions, kind: string): Promise<void> {
  if (!(NAME_KINDS as readonly string[]).includes(kind)) return;
  // A Tab must never hang: past the timeout the shell gets nothing.
  const timer = setTimeout(() => process.exit(0), COMPLETE_TIMEOUT_MS);
  timer.unref();
  const ctx = new RunContext({ ...opts, quiet: true });
  try {
    const api = await ctx.api();
    // A Tab reads names only: no queued job, webhook or mail goes out because of it.
    const transport = api.transport as { workAfterCalls?: boolean };
    if ('workAfterCalls' in transport) transport.workAfterCalls = false;
    const names = await namesOf(api, kind as NameKind);
    if (names.length) await ctx.write(`${names.join('\n')}\n`);
  } catch {
    // No database, no service, no key: nothing to offer.
  } finally {
    clearTimeout(timer);
    await ctx.close().catch(() => undefined);
  }
}
