/**
 * Progress of an import: a live Ink view on a terminal, one plain line on stderr
 * every few seconds otherwise (CI logs). Ink and React are loaded only for the live
 * view.
 */
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
}

/** What is running: a dry run, or an import (its id once it has one). */
const label = (s: ProgressState) => (s.dryRun ? 'dry run' : s.importId !== undefined ? `import ${s.importId}` : 'import');

export interface ImportProgress {
  update(change: Partial<ProgressState>): void;
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

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtDuration = (s: number) => (s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`);

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
  ]
    .filter(Boolean)
    .join(', ');
}

export async function createImportProgress(out: NodeJS.WriteStream, opts: { quiet: boolean }): Promise<ImportProgress> {
  const state: ProgressState = { rowsRead: 0, rowsSent: 0, rejected: 0, bytesRead: 0 };
  const startedAt = Date.now();
  if (opts.quiet) return { update: (c) => void Object.assign(state, c), stop: async () => undefined };
  if (!out.isTTY) {
    const timer = setInterval(() => out.write(`amsg: ${progressLine(state, startedAt)}\n`), PLAIN_EVERY_MS);
    timer.unref();
    return {
      update: (c) => void Object.assign(state, c),
      stop: async () => clearInterval(timer),
    };
  }
  return liveView(out, state, startedAt);
}

async function liveView(out: NodeJS.WriteStream, state: ProgressState, startedAt: number): Promise<ImportProgress> {
  const [{ render, Box, Text }, reactModule] = await Promise.all([import('ink'), import('react')]);
  // React is CommonJS: bundled, its dynamic import answers the exports as `default`.
  const React = (reactModule.default ?? reactModule) as typeof reactModule.default;
  const h = React.createElement;
  const View = ({ s, now }: { s: ProgressState; now: number }) => {
    const r = rates(s, startedAt, now);
    const width = 30;
    const filled = r.fraction !== undefined ? Math.round(r.fraction * width) : 0;
    return h(
      Box,
      { flexDirection: 'column' },
      h(
        Text,
        null,
        s.dryRun ? 'Checking (dry run, nothing is written)' : s.importId !== undefined ? `Importing (import ${s.importId})` : 'Importing',
        s.serverStatus ? `  status ${s.serverStatus}` : '',
      ),
      r.fraction !== undefined
        ? h(Text, null, `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${(r.fraction * 100).toFixed(0)}%`, r.etaSeconds !== undefined ? `  ETA ${fmtDuration(r.etaSeconds)}` : '')
        : null,
      h(Text, null, `${fmtInt(s.rowsRead)} rows read, ${fmtInt(s.rowsSent)} sent, ${fmtInt(r.rowsPerSecond)} rows/s`),
      h(Text, { color: s.rejected ? 'yellow' : undefined }, `${fmtInt(s.rejected)} rejected`),
    );
  };
  const app = render(h(View, { s: { ...state }, now: Date.now() }), { stdout: out, patchConsole: false, exitOnCtrlC: false });
  const timer = setInterval(() => app.rerender(h(View, { s: { ...state }, now: Date.now() })), 100);
  return {
    update: (c) => void Object.assign(state, c),
    stop: async () => {
      clearInterval(timer);
      app.rerender(h(View, { s: { ...state }, now: Date.now() }));
      app.unmount();
      await app.waitUntilExit().catch(() => undefined);
    },
  };
}
