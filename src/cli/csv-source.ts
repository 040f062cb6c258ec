/**
 * Reading a member CSV as a stream of records with their line numbers: UTF-8 checked
 * as it is read, a BOM dropped, the delimiter detected from the header line, CRLF
 * and quoted fields (commas, newlines) handled by csv-parse. Memory stays flat
 * whatever the file's size.
 */
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { UsageError } from './context.js';

/** The largest record accepted: a bigger one is almost always a broken quote. */
export const MAX_RECORD_CHARS = 1_000_000;

export interface CsvRecord {
  /** Line of the file where the record starts (1 = the header). */
  line: number;
  values: string[];
}

export interface CsvSource {
  header: string[];
  delimiter: string;
  /** File size in bytes, when known (not for stdin). */
  totalBytes?: number;
  /** Bytes read so far. */
  bytesRead(): number;
  records: AsyncIterable<CsvRecord>;
  /** Stops reading (Ctrl-C): the record iterator ends after what is buffered. */
  stop(): void;
}

export class CsvError extends UsageError {}

function detectDelimiter(firstLine: string): string {
  let best = ',';
  let bestCount = 0;
  for (const d of [',', ';', '\t', '|']) {
    // Counted outside quotes: a quoted "Smith, John" says nothing about the delimiter.
    let count = 0;
    let quoted = false;
    for (const ch of firstLine) {
      if (ch === '"') quoted = !quoted;
      else if (ch === d && !quoted) count++;
    }
    if (count > bestCount) [best, bestCount] = [d, count];
  }
  return best;
}

/** Opens FILE (or `-` for stdin) and reads its header. */
export async function openCsv(file: string, opts: { delimiter?: string } = {}): Promise<CsvSource> {
  let totalBytes: number | undefined;
  let input: AsyncIterable<Buffer>;
  if (file === '-') {
    input = process.stdin;
  } else {
    try {
      const st = statSync(file);
      if (st.isDirectory()) throw new CsvError(`${file} is a directory, not a CSV file`);
      totalBytes = st.size;
    } catch (err) {
      if (err instanceof CsvError) throw err;
      throw new CsvError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    }
    input = createReadStream(file, { highWaterMark: 256 * 1024 });
  }
  const name = file === '-' ? 'stdin' : file;
  let bytes = 0;
  let stopped = false;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const iterator = input[Symbol.asyncIterator]();

  // Decoded text, checked as UTF-8 chunk by chunk; NUL bytes mean a binary file.
  async function* text(): AsyncGenerator<string> {
    let first = true;
    for (;;) {
      if (stopped) return;
      const { value, done } = await iterator.next();
      if (done) break;
      const chunk = value as Buffer;
      if (first && chunk.includes(0)) throw new CsvError(`${name} looks like a binary file, not a CSV file`);
      let decoded: string;
      try {
        decoded = decoder.decode(chunk, { stream: true });
      } catch {
        throw new CsvError(`${name} is not valid UTF-8 (near byte ${bytes}); save it as UTF-8 and try again`);
      }
      bytes += chunk.length;
      if (first && decoded.charCodeAt(0) === 0xfeff) decoded = decoded.slice(1);
      first = false;
      if (decoded) yield decoded;
    }
    try {
      const rest = decoder.decode();
      if (rest) yield rest;
    } catch {
      throw new CsvError(`${name} ends in the middle of a UTF-8 character (truncated?)`);
    }
  }

  // The header line decides the delimiter, so the first text is read before parsing.
  const chunks = text();
  let head = '';
  while (!/[\r\n]/.test(head)) {
    const next = await chunks.next();
    if (next.done) break;
    head += next.value;
  }
  if (!head.trim()) throw new CsvError(`${name} is empty: there is no header line`);
  const delimiter = opts.delimiter ?? detectDelimiter(head.split(/\r?\n/, 1)[0]);

  // No `info`: csv-parse's per-record info object cost a fifth of a large import.
  // Line numbers are counted here instead (see records below).
  const parser = parse({
    delimiter,
    relax_column_count: true,
    max_record_size: MAX_RECORD_CHARS,
  });
  Readable.from(
    (async function* () {
      yield head;
      yield* chunks;
    })(),
  )
    .on('error', (err) => parser.destroy(err))
    .pipe(parser);

  const parsed = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;
  const describeParseError = (err: unknown): Error => {
    if (err instanceof CsvError) return err;
    const e = err as { code?: string; message: string; lines?: number };
    const where = e.lines ? `line ${e.lines}: ` : '';
    if (e.code === 'CSV_MAX_RECORD_SIZE')
      return new CsvError(`${name}, ${where}a record is larger than ${MAX_RECORD_CHARS.toLocaleString('en-US')} characters (an unclosed quote?)`);
    if (e.code === 'CSV_QUOTE_NOT_CLOSED') return new CsvError(`${name}: the file ends inside a quoted field (truncated?)`);
    return new CsvError(`${name}, ${where}${e.message}`);
  };

  let first: IteratorResult<string[]>;
  try {
    first = await parsed.next();
  } catch (err) {
    throw describeParseError(err);
  }
  if (first.done) throw new CsvError(`${name} is empty: there is no header line`);
  const header = first.value.map((h) => h.trim());
  /** Lines a record spans: one, plus each newline inside its quoted values. */
  const linesOf = (values: string[]) => {
    let n = 1;
    for (const v of values) for (let i = v.indexOf('\n'); i !== -1; i = v.indexOf('\n', i + 1)) n++;
    return n;
  };

  return {
    header,
    delimiter,
    totalBytes,
    bytesRead: () => bytes,
    stop: () => {
      stopped = true;
    },
    records: {
      async *[Symbol.asyncIterator]() {
        let line = linesOf(first.value) + 1;
        for (;;) {
          let next: IteratorResult<string[]>;
          try {
            next = await parsed.next();
          } catch (err) {
            throw describeParseError(err);
          }
          if (next.done) return;
          const values = next.value;
          const start = line;
          line += linesOf(values);
          // An empty line is one empty value: skipped, but counted.
          if (values.length === 1 && values[0] === '') continue;
          yield { line: start, values };
        }
      },
    },
  };
}
