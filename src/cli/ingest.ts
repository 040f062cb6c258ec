/**
 * `amsg events ingest`: reads events from a file or stdin as a stream (NDJSON, one
 * event a line, or one JSON array), and posts each to the ingestion endpoint with
 * several in flight. A line that is not JSON, or that the service refuses, is
 * reported with its line number; the good lines are still sent.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../errors.js';
import type { Transport } from '../client/transport.js';
import { loadInk } from './ink.js';
import { thousands } from './output.js';

export interface EventText {
  /** The line the event starts on (1-based). */
  line: number;
  text: string;
}

export interface Refusal {
  line: number;
  error: string;
  text: string;
}

/**
 * The events of a stream in order: each non-blank line of NDJSON, or each element of
 * a top-level JSON array (found by a scan that tracks strings and nesting, so the
 * array is never held whole). Which one is decided by the first character.
 */
export async function* readEvents(input: Readable): AsyncGenerator<EventText> {
  input.setEncoding('utf8');
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<string>;
  let first = await chunks.next();
  while (!first.done && first.value.trim() === '') first = await chunks.next();
  if (first.done) return;
  async function* rest(): AsyncGenerator<string> {
    yield first.value as string;
    for (let c = await chunks.next(); !c.done; c = await chunks.next()) yield c.value;
  }
  if (first.value.trimStart().startsWith('[')) yield* arrayElements(rest());
  else yield* ndjsonLines(rest());
}

async function* ndjsonLines(chunks: AsyncIterable<string>): AsyncGenerator<EventText> {
  let pending = '';
  let line = 0;
  for await (const chunk of chunks) {
    pending += chunk;
    let at: number;
    while ((at = pending.indexOf('\n')) >= 0) {
      line++;
      const text = pending.slice(0, at).replace(/\r$/, '');
      pending = pending.slice(at + 1);
      if (text.trim()) yield { line, text };
    }
  }
  if (pending.trim()) yield { line: line + 1, text: pending.replace(/\r$/, '') };
}

async function* arrayElements(chunks: AsyncIterable<string>): AsyncGenerator<EventText> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let collecting = false;
  let ended = false;
  let buf = '';
  let line = 1;
  let start = 1;
  for await (const chunk of chunks) {
    const out: EventText[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      if (ch === '\n') line++;
      if (ended) continue;
      if (depth === 0) {
        if (ch === '[') depth = 1;
        continue;
      }
      if (inString) {
        buf += ch;
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') inString = false;
        continue;
      }
      if (depth === 1 && !collecting) {
        if (ch === ']') ended = true;
        else if (ch !== ',' && !/\s/.test(ch)) {
          collecting = true;
          start = line;
          buf = ch;
          if (ch === '"') inString = true;
          else if (ch === '{' || ch === '[') depth++;
        }
        continue;
      }
      if (depth === 1 && (ch === ',' || ch === ']')) {
        out.push({ line: start, text: buf.trim() });
        collecting = false;
        if (ch === ']') ended = true;
        continue;
      }
      buf += ch;
      if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') depth--;
    }
    yield* out;
  }
  // An array that never closes: what was being read is reported as it is.
  if (collecting && buf.trim()) yield { line: start, text: buf.trim() };
}

export interface IngestState {
  read: number;
  sent: number;
  refused: number;
}

/**
 * Posts every event to `/v1/{account}/events` with `concurrency` requests in flight;
 * answers the refusals in line order. A connection failure ends the run (it throws).
 */
export async function ingestEvents(
  events: AsyncIterator<EventText>,
  transport: Transport,
  accountId: number,
  opts: { concurrency: number; onProgress?: (s: IngestState) => void },
): Promise<{ state: IngestState; refusals: Refusal[] }> {
  const state: IngestState = { read: 0, sent: 0, refused: 0 };
  const refusals: Refusal[] = [];
  const refuse = (e: EventText, error: string) => {
    state.refused++;
    refusals.push({ line: e.line, error, text: e.text });
  };
  const path = `/v1/${accountId}/events`;
  const worker = async () => {
    // An async generator queues concurrent next() calls, so the workers share it.
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      state.read++;
      let body: unknown;
      try {
        body = JSON.parse(event.text);
      } catch (err) {
        refuse(event, `not valid JSON (${(err as Error).message})`);
        continue;
      }
      try {
        await transport.request({ method: 'POST', path, body });
        state.sent++;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        refuse(event, `refused (HTTP ${err.status}): ${err.message}`);
      }
      opts.onProgress?.(state);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  refusals.sort((a, b) => a.line - b.line);
  return { state, refusals };
}

export interface IngestProgress {
  update(s: IngestState): void;
  stop(): Promise<void>;
}

const fmt = (n: number) => thousands(Math.round(n));
const line = (s: IngestState, startedAt: number) => {
  const seconds = Math.max((Date.now() - startedAt) / 1000, 0.001);
  return `${fmt(s.read)} events read, ${fmt(s.sent)} sent, ${fmt(s.sent / seconds)} events/s, ${fmt(s.refused)} refused`;
};

/** A live Ink view on a terminal; a plain line on stderr every few seconds otherwise. */
export async function createIngestProgress(out: NodeJS.WriteStream, opts: { quiet: boolean }): Promise<IngestProgress> {
  let state: IngestState = { read: 0, sent: 0, refused: 0 };
  const startedAt = Date.now();
  if (opts.quiet) return { update: () => undefined, stop: async () => undefined };
  if (!out.isTTY) {
    const timer = setInterval(() => out.write(`amsg: ${line(state, startedAt)}\n`), 3_000);
    timer.unref();
    return { update: (s) => void (state = s), stop: async () => clearInterval(timer) };
  }
  const { render, Box, Text, React } = await loadInk();
  const h = React.createElement;
  const View = ({ s }: { s: IngestState }) =>
    h(
      Box,
      { flexDirection: 'column' },
      h(Text, null, 'Sending events'),
      h(Text, { color: s.refused ? 'yellow' : undefined }, line(s, startedAt)),
    );
  const app = render(h(View, { s: { ...state } }), { stdout: out, patchConsole: false, exitOnCtrlC: false });
  const timer = setInterval(() => app.rerender(h(View, { s: { ...state } })), 100);
  return {
    update: (s) => void (state = s),
    stop: async () => {
      clearInterval(timer);
      app.rerender(h(View, { s: { ...state } }));
      app.unmount();
      await app.waitUntilExit().catch(() => undefined);
    },
  };
}
