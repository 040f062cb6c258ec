/**
 * Progress of an import: a live Ink view on a terminal, one plain line on stderr
 * every few seconds otherwise (CI logs). Ink and React are loaded only for the live
 * view.
 */
import { loadInk } from './ink.js';
import { thousands } from './output.js';

export interface ProgressState {
  rowsRead: number;
  rowsSent: number;
  rejected: number;
  bytesRead: number;
  totalBytes?: number;
  /** Set once the import is opened, with its first batch. */
  importId?: number;
  dryRun?: boolean;
  serverStatus?: string;
  /** While the service's rate limit is waited out: until when (ms since the epoch). */
  waitingUntil?: number;
}

/** Seconds of a rate-limit wait still to go, or 0 when none is under way. */
export const waitLeft = (s: ProgressState, now: number) =>
  s.waitingUntil && s.waitingUntil > now ? Math.ceil((s.waitingUntil - now) / 1000) : 0;

/** What is running: a dry run, or an import (its id once it has one). */
const label = (s: ProgressState) => (s.dryRun ? 'dry run' : s.importId !== undefined ? `import ${s.importId}` : 'import');

export interface ImportProgress {
  update(change: Partial<ProgressState>): void;
  /** A note for people: above the live view (which would draw over a plain write), else a line on stderr. */
  note(message: string): void;
  /** Ends the view (the summary follows on its own). */
  stop(): Promise<void>;
}

const PLAIN_EVERY_MS = 3_000;

export function rates(s: ProgressState, startedAt: number, now = Date.now()) {
  const seconds = Math.max((now - startedAt) / 1000, 0.001);
  const rowsPerSecond = s.rowsSent / seconds;
  const fraction = s.totalBytes ? Math.min(s.bytesRead / s.totalBytes, 1) : undefined;
  const etaSeconds = fraction && fraction > 0.001 ? (seconds / fraction) * (1 - fraction) : undefined;
  return { seconds, rowsPerSecond, fraction, etaSeconds };
}

const fmtInt = (n: number) => thousands(Math.round(n));
const fmtDuration = (s: number) =>
  s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`;

export function progressLine(s: ProgressState, startedAt: number, now = Date.now()): string {
  const r = rates(s, startedAt, now);
  return [
    label(s),
    `${fmtInt(s.rowsRead)} rows read`,
    `${fmtInt(s.rowsSent)} sent`,
    `${fmtInt(r.rowsPerSecond)} rows/s`,
    r.fraction !== undefined ? `${(r.fraction * 100).toFixed(0)}%` : undefined,
    r.etaSeconds !== undefined ? `ETA ${fmtDuration(r.etaSeconds)}` : undefined,
    `${fmtInt(s.rejected)} rejected`,
    s.serverStatus ? `status ${s.serverStatus}` : undefined,
    waitLeft(s, now) ? `rate limited: waiting ${waitLeft(s, now)} s` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
}

export async function createImportProgress(
  out: NodeJS.WriteStream,
  opts: { quiet: boolean; color?: boolean; note: (message: string) => void },
): Promise<ImportProgress> {
  const state: ProgressState = { rowsRead: 0, rowsSent: 0, rejected: 0, bytesRead: 0 };
  const startedAt = Date.now();
  if (opts.quiet) return { update: (c) => void Object.assign(state, c), note: opts.note, stop: async () => undefined };
  if (!out.isTTY) {
    const timer = setInterval(() => out.write(`amsg: ${progressLine(state, startedAt)}\n`), PLAIN_EVERY_MS);
    timer.unref();
    return {
      update: (c) => void Object.assign(state, c),
      note: opts.note,
      stop: async () => clearInterval(timer),
    };
  }
  return lazyLiveView(out, state, startedAt, opts.color !== false, opts.note);
}

/**
 * The live view, drawn from the first row on: a command refused before that (a 404
 * for --resume, a bad header) draws no empty frame. Notes said before it starts go
 * straight to stderr; after, they are drawn above it, where a redraw leaves them.
 */
function lazyLiveView(
  out: NodeJS.WriteStream,
  state: ProgressState,
  startedAt: number,
  color: boolean,
  note: (message: string) => void,
): ImportProgress {
  let view: Promise<ImportProgress> | undefined;
  let stopped = false;
  return {
    update(change) {
      Object.assign(state, change);
      if (!view && !stopped && (state.rowsRead > 0 || state.importId !== undefined)) view = liveView(out, state, startedAt, color);
    },
    note(message) {
      if (view) void view.then((v) => v.note(message));
      else note(message);
    },
    async stop() {
      stopped = true;
      if (view) await (await view).stop();
    },
  };
}

async function liveView(out: NodeJS.WriteStream, state: ProgressState, startedAt: number, color: boolean): Promise<ImportProgress> {
  const { render, Box, Static, Text, React } = await loadInk();
  const h = React.createElement;
  const notes: string[] = [];
  const View = ({ s, now, said }: { s: ProgressState; now: number; said: string[] }) => {
    const r = rates(s, startedAt, now);
    const width = 30;
    const filled = r.fraction !== undefined ? Math.round(r.fraction * width) : 0;
    return h(
      Box,
      { flexDirection: 'column' },
      // Notes (Ctrl-C, --resume, skipped columns) stay printed above the redrawn part.
      h(Static, { items: said, children: (n: string, i: number) => h(Text, { key: i }, `amsg: ${n}`) } as never),
      h(
        Text,
        null,
        s.dryRun ? 'Checking (dry run, nothing is written)' : s.importId !== undefined ? `Importing (import ${s.importId})` : 'Importing',
        s.serverStatus ? `  status ${s.serverStatus}` : '',
      ),
      r.fraction !== undefined
        ? h(
            Text,
            null,
            `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${(r.fraction * 100).toFixed(0)}%`,
            r.etaSeconds !== undefined ? `  ETA ${fmtDuration(r.etaSeconds)}` : '',
          )
        : null,
      h(Text, null, `${fmtInt(s.rowsRead)} rows read, ${fmtInt(s.rowsSent)} sent, ${fmtInt(r.rowsPerSecond)} rows/s`),
      h(Text, { color: s.rejected && color ? 'yellow' : undefined }, `${fmtInt(s.rejected)} rejected`),
      waitLeft(s, now)
        ? h(Text, { color: color ? 'yellow' : undefined }, `Rate limited by the service: waiting ${waitLeft(s, now)} s, then going on`)
        : null,
    );
  };
  const frame = () => h(View, { s: { ...state }, now: Date.now(), said: [...notes] });
  const app = render(frame(), { stdout: out, patchConsole: false, exitOnCtrlC: false });
  const timer = setInterval(() => app.rerender(frame()), 100);
  return {
    update: (c) => void Object.assign(state, c),
    note: (message) => {
      notes.push(message);
      app.rerender(frame());
    },
    stop: async () => {
      clearInterval(timer);
      app.rerender(frame());
      app.unmount();
      await app.waitUntilExit().catch(() => undefined);
    },
  };
}
