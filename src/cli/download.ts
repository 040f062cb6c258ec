/**
 * Saving a streamed answer (an export's CSV or zip) to a file or to stdout, with
 * progress on stderr: a live byte count on a terminal, one line at the end otherwise.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Download } from '../client/transport.js';
import type { RunContext } from './context.js';

const PROGRESS_EVERY_MS = 200;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** True when the target means stdout (no file, or `-`). */
export const isStdout = (target: string | undefined) => target === undefined || target === '-';

/**
 * Writes the download to `target` (a file, or stdout for `-` / undefined). A file is
 * written as FILE.partial and renamed when complete, so FILE is never half a download.
 * Answers the number of bytes written.
 */
export async function saveDownload(ctx: RunContext, download: Download, target: string | undefined): Promise<number> {
  // Loaded here: this module is bundled with every command, and only downloads stream.
  const { pipeline } = await import('node:stream/promises');
  const where = isStdout(target) ? 'stdout' : target!;
  const live = !ctx.quiet && !!ctx.stderr.isTTY;
  let bytes = 0;
  let shown = 0;
  const show = () => ctx.stderr.write(`\ramsg: downloading to ${where}: ${formatBytes(bytes)}\x1b[K`);
  async function* counted(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (live && Date.now() - shown >= PROGRESS_EVERY_MS) {
        shown = Date.now();
        show();
      }
      yield chunk;
    }
  }

  try {
    if (isStdout(target)) {
      await pipeline(download.body, counted, ctx.stdout.stream, { end: false });
    } else {
      const partial = `${target}.partial`;
      try {
        await pipeline(download.body, counted, createWriteStream(partial));
        renameSync(partial, target!);
      } catch (err) {
        rmSync(partial, { force: true });
        throw err;
      }
    }
  } catch (err) {
    // A reader that stops early (`| head`) is not a failure of the download.
    if ((err as { code?: string }).code !== 'EPIPE') throw err;
  } finally {
    if (live && shown) ctx.stderr.write('\r\x1b[K');
  }
  ctx.note(`wrote ${bytes} bytes (${formatBytes(bytes)}) to ${where}`);
  return bytes;
}
