// Waiting for a mailing to settle: `mailings wait`, and --wait on create, resend and forward.
import type { Api } from '../../src/client/api.js';
import { EXIT, UsageError, type RunContext } from '../../src/cli/context.js';
import { type MailingRecord, parseDuration, STATUS_NAMES } from './shared.js';

/** Where `wait` stops: the mailing will not move again by itself (w waits for a winner). */
const SETTLED = ['c', 'x', 'f', 'w'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why a mailing in this status may not move on by itself, or undefined when it will. */
function stalledBecause(m: MailingRecord, now: number): string | undefined {
  if (m.mailing_status === 'u') return `it is an unapproved draft: approve it with \`amsg mailings resume ${m.mailing_id}\``;
  if (m.mailing_status === 'a') return `it is paused: \`amsg mailings resume ${m.mailing_id}\` goes on`;
  if (m.mailing_status === 'p' && m.send_at) {
    const at = new Date(`${m.send_at.replace(/^@D:/, '')}Z`).getTime();
    if (at > now) return `it is scheduled for ${m.send_at.replace(/^@D:/, '')} UTC`;
  }
  return undefined;
}

/**
 * Polls a mailing until it settles (c, x, f, or w waiting for a split test's winner),
 * saying each new status on stderr. Answers the last record read; undefined when
 * timeoutMs passed first.
 */
export async function waitForMailing(ctx: RunContext, api: Api, id: number, timeoutMs?: number): Promise<MailingRecord | undefined> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let delay = 100;
  let said = '';
  for (;;) {
    const m = await api.get<MailingRecord>(`/mailings/${id}`);
    if (SETTLED.includes(m.mailing_status)) return m;
    const saying = `${m.mailing_status}:${m.recipient_count}`;
    if (saying !== said) {
      const count = m.recipient_count ? ` (${m.recipient_count} recipients)` : '';
      const stalled = stalledBecause(m, Date.now());
      ctx.note(`mailing ${id}: ${STATUS_NAMES[m.mailing_status] ?? m.mailing_status}${count}${stalled ? `; ${stalled}; waiting` : ''}…`);
      said = saying;
    }
    if (Date.now() >= deadline) return undefined;
    // Locally each call sends for a quarter second: pausing would only stop the send.
    if (api.transport.runsJobs && !stalledBecause(m, Date.now())) continue;
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
    delay = Math.min(delay * 1.5, 1_000);
  }
}

/** Prints a settled mailing; a failed one (or a wait that timed out) exits 1. */
export async function reportSettled(ctx: RunContext, api: Api, id: number, timeoutMs?: number) {
  const m = await waitForMailing(ctx, api, id, timeoutMs);
  if (!m) {
    const now = await api.get<MailingRecord>(`/mailings/${id}`);
    if (ctx.format !== 'table') await ctx.print(now);
    ctx.stderr.write(
      `amsg: mailing ${id} is still ${STATUS_NAMES[now.mailing_status] ?? now.mailing_status} (${now.mailing_status}) after --timeout; run \`amsg mailings wait ${id}\` to go on waiting\n`,
    );
    process.exitCode = EXIT.refused;
    return;
  }
  const word = STATUS_NAMES[m.mailing_status];
  const sentences: Record<string, string> = {
    c: `Mailing ${id} is complete: sent to ${m.recipient_count} recipient${m.recipient_count === 1 ? '' : 's'}.`,
    x: `Mailing ${id} was canceled.`,
    w: `Mailing ${id} sent its test share and waits for a winner: amsg mailings winner ${id} VARIANT_ID (variants ${m.split_test?.variants.map((v) => v.mailing_id).join(', ') ?? '?'}).`,
    f: `Mailing ${id} failed.`,
  };
  await ctx.done(m, sentences[m.mailing_status] ?? `Mailing ${id} is ${word}.`);
  if (m.mailing_status === 'f') {
    ctx.stderr.write(`amsg: mailing ${id} failed: ${m.failure_message ?? 'no reason given'}\n`);
    process.exitCode = EXIT.refused;
  }
}

/** `--timeout` in milliseconds. */
export const timeoutMs = (value: string | undefined) => (value === undefined ? undefined : parseDuration(value, '--timeout') * 1000);

/** Prints the {mailing_id} of a new mailing, or waits for it to settle with --wait. */
export async function createdMailing(
  ctx: RunContext,
  api: Api,
  created: { mailing_id: number },
  sentence: string,
  wait: boolean,
  timeout?: number,
) {
  if (!wait) return ctx.done(created, sentence);
  ctx.note(sentence);
  await reportSettled(ctx, api, created.mailing_id, timeout);
}

/** --wait and --timeout, checked before anything is created. */
export function waitFlags(o: { wait?: boolean; timeout?: string }): number | undefined {
  if (o.timeout !== undefined && !o.wait) throw new UsageError('--timeout goes with --wait');
  return timeoutMs(o.timeout);
}
