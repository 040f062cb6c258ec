/**
 * Reading a member CSV as a stream of records with their line numbers: UTF-8 checked
 * as it is read, a BOM dropped, the delimiter detected from the header line, CRLF
 * and quoted fields (commas, newlines) handled by csv-parse. Memory stays flat
 * whatever the file's size.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { Parser } from 'csv-parse';
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
  /** The same records, in runs of those parsed together (a run is never empty). */
  runs: AsyncIterable<CsvRecord[]>;
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

/**
 * Where in a chunk that failed to decode the first invalid UTF-8 sequence starts: the
 * longest prefix that still decodes (a binary search; this runs once, on failure).
 */
function firstInvalidByte(chunk: Buffer): number {
  let ok = 0;
  let bad = chunk.length;
  while (bad - ok > 1) {
    const mid = (ok + bad) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(chunk.subarray(0, mid), { stream: true });
      ok = mid;
    } catch {
      bad = mid;
    }
  }
  return ok;
}

/** Newlines in the first `end` bytes of a file: the line of a byte, for an error message. */
function linesBefore(file: string, end: number): number {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let lines = 0;
    for (let pos = 0; pos < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (!n) break;
      for (let i = buf.indexOf(10); i !== -1 && i < n; i = buf.indexOf(10, i + 1)) lines++;
      pos += n;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/**
 * A csv-parse parser whose records go to a queue as they are parsed, never through
 * its readable side (on_record would do the same, but makes an info object per record).
 */
class RecordQueue extends Parser {
  readonly queue: string[][] = [];
  override push(record: unknown): boolean {
    if (record === null) return super.push(null);
    this.queue.push(record as string[]);
    return true;
  }
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
        const at = bytes + firstInvalidByte(chunk);
        const line = file === '-' ? '' : `line ${linesBefore(file, at) + 1}, `;
        throw new CsvError(
          `${name} is not valid UTF-8 (${line}byte ${at + 1}): save it as UTF-8 (in a spreadsheet, "CSV UTF-8") and try again`,
        );
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
    // A "header" longer than any record could be is not a CSV file (and must not fill memory).
    if (head.length > MAX_RECORD_CHARS)
      throw new CsvError(`${name}: the first line is longer than ${MAX_RECORD_CHARS.toLocaleString('en-US')} characters; is it a CSV file?`);
    const next = await chunks.next();
    if (next.done) break;
    head += next.value;
  }
  if (!head.trim()) throw new CsvError(`${name} is empty: there is no header line`);
  // Blank lines before the header (some exports start with one) are skipped.
  const delimiter = opts.delimiter ?? detectDelimiter(head.split(/\r?\n/).find((l) => l.trim()) ?? '');

  // No `info`: csv-parse's per-record info object cost a fifth of a large import.
  // Line numbers are counted here instead (see records below).
  //
  // The parser is fed by hand, a chunk at a time, and its records are taken as it
  // pushes them rather than read from its readable side: a failing stream drops the
  // records it has buffered, so the rows before a broken one (an unclosed quote, bad
  // UTF-8) got to the import or not depending on timing, and local and remote imports
  // differed. This way every record before the error is delivered, then the error.
  // The fast path (below) needs csv-parse to take the line end it found: csv-parse
  // takes the first CR, LF or CRLF outside quotes of the text it is given, and it may
  // first be given text from the middle of the file.
  const firstBreak = head.search(/[\r\n]/);
  const lineEnd =
    firstBreak === -1 || head.slice(0, firstBreak).includes('"')
      ? undefined
      : head[firstBreak] === '\n'
        ? '\n'
        : head[firstBreak + 1] === '\n'
          ? '\r\n'
          : undefined;
  const parser = new RecordQueue({
    delimiter,
    relax_column_count: true,
    max_record_size: MAX_RECORD_CHARS,
    ...(lineEnd ? { record_delimiter: lineEnd } : {}),
  });
  const queue = parser.queue;
  let taken = 0;
  let parseError: unknown;
  parser.on('error', (err) => {
    parseError ??= err;
  });
  /** A write's or the end's callback: the error, if any, is kept for after the records before it. */
  const settled = (resolve: () => void) => (err?: Error | null) => {
    if (err) parseError ??= err;
    resolve();
  };
  let pending: string | undefined = head;
  let ended = false;

  // The fast path. csv-parse reads a character at a time (~5 µs a row of a typical
  // member file, a sixth of a large import); most files have no quote at all, and for
  // those a record is a line split on the delimiter. While the text read so far has no
  // quote and consistent line ends, whole lines are split here; at the first text that
  // does not qualify (a quote, a stray CR, an over-long line) everything from the
  // start of that text's first incomplete record on goes to csv-parse, which then
  // reads the rest of the file: the two never share a record, so csv-parse starts on
  // a record boundary and answers exactly what it would have for the whole file.
  // A file whose first line ends in a lone CR, or has a quote before it, is left to
  // csv-parse from the start.
  let fast = lineEnd !== undefined;
  /** The incomplete last line of the text split so far (fast path). */
  let carry = '';
  /** Lines split by the fast path; csv-parse's line count (in its error messages) starts after them. */
  let fastLines = 0;
  const handOver = (text: string) => {
    fast = false;
    (parser as unknown as { info: { lines: number } }).info.lines += fastLines;
    return text;
  };
  /** Lines of the block as records, or undefined when the block must go to csv-parse. */
  const splitLines = (block: string, last: boolean): string[][] | undefined => {
    if (block.includes('"')) return undefined;
    let lines: string[];
    if (lineEnd === '\n') {
      if (block.includes('\r')) return undefined;
      lines = block.split('\n');
    } else {
      lines = block.split('\r\n');
      for (const l of lines) if (l.includes('\r') || l.includes('\n')) return undefined;
    }
    // A complete block ends with a line end, which leaves an empty last element.
    if (!last) lines.pop();
    const records: string[][] = [];
    for (const l of lines) {
      if (l.length > MAX_RECORD_CHARS) return undefined;
      records.push(l.split(delimiter));
    }
    return records;
  };
  /** Splits the complete lines of the text (with what was carried) or hands it to csv-parse. */
  const feedFast = (text: string): string | undefined => {
    const all = carry + text;
    carry = '';
    const cut = all.lastIndexOf('\n') + 1;
    const records = splitLines(all.slice(0, cut), false);
    const rest = all.slice(cut);
    if (records && rest.length <= MAX_RECORD_CHARS) {
      for (const r of records) queue.push(r);
      fastLines += records.length;
      carry = rest;
      return undefined;
    }
    return handOver(all);
  };
  /** The end of the file on the fast path: the last line (without a line end), or it goes to csv-parse. */
  const endFast = (): string | undefined => {
    const rest = carry;
    carry = '';
    if (!rest) return undefined;
    const records = splitLines(rest, true);
    if (records && !rest.includes('\r') && !rest.includes('\n')) {
      for (const r of records) queue.push(r);
      fastLines += records.length;
      return undefined;
    }
    return handOver(rest);
  };

  /** The next record, or undefined at the end; what broke the file is thrown after the records before it. */
  async function nextRecord(): Promise<string[] | undefined> {
    for (;;) {
      if (taken < queue.length) return queue[taken++];
      queue.length = taken = 0;
      if (parseError !== undefined) throw describeParseError(parseError);
      if (ended) return undefined;
      let text = pending;
      pending = undefined;
      if (text === undefined) {
        const next = await chunks.next();
        if (!next.done) text = next.value;
      }
      if (fast) text = text === undefined ? endFast() : feedFast(text);
      if (text === undefined && !fast) {
        ended = true;
        await new Promise<void>((resolve) => parser.end(settled(resolve)));
      } else if (text === undefined) {
        // The fast path took the whole text, or the file ended with nothing left over.
        if (carry === '' && queue.length === 0) {
          ended = true;
          await new Promise<void>((resolve) => parser.end(settled(resolve)));
        }
      } else {
        const chunk = text;
        await new Promise<void>((resolve) => parser.write(chunk, settled(resolve)));
      }
    }
  }
  const describeParseError = (err: unknown): Error => {
    if (err instanceof CsvError) return err;
    const e = err as { code?: string; message: string; lines?: number };
    const where = e.lines ? `line ${e.lines}: ` : '';
    if (e.code === 'CSV_MAX_RECORD_SIZE')
      return new CsvError(`${name}, ${where}a record is larger than ${MAX_RECORD_CHARS.toLocaleString('en-US')} characters (an unclosed quote?)`);
    if (e.code === 'CSV_QUOTE_NOT_CLOSED') return new CsvError(`${name}: the file ends inside a quoted field (truncated?)`);
    return new CsvError(`${name}, ${where}${e.message}`);
  };

  const isBlank = (values: string[]) => values.length === 1 && values[0] === '';
  let first = await nextRecord();
  let headerLine = 1;
  for (; first && isBlank(first); headerLine++) first = await nextRecord();
  if (!first) throw new CsvError(`${name} is empty: there is no header line`);
  const headerValues = first;
  const header = headerValues.map((h) => h.trim());
  /** Lines a record spans: one, plus each newline inside its quoted values. */
  const linesOf = (values: string[]) => {
    let n = 1;
    for (const v of values) for (let i = v.indexOf('\n'); i !== -1; i = v.indexOf('\n', i + 1)) n++;
    return n;
  };

  // Every record already parsed goes in one run: a promise per record cost about a
  // microsecond each, as much as splitting the record.
  const runs: AsyncIterable<CsvRecord[]> = {
    async *[Symbol.asyncIterator]() {
      let line = headerLine + linesOf(headerValues);
      for (;;) {
        let values = await nextRecord();
        if (!values) return;
        const run: CsvRecord[] = [];
        for (;;) {
          const start = line;
          line += linesOf(values);
          // An empty line is one empty value: skipped, but counted.
          if (!isBlank(values)) run.push({ line: start, values });
          if (taken >= queue.length) break;
          values = queue[taken++];
        }
        if (run.length) yield run;
      }
    },
  };

  return {
    header,
    delimiter,
    totalBytes,
    bytesRead: () => bytes,
    stop: () => {
      stopped = true;
    },
    runs,
    records: {
      async *[Symbol.asyncIterator]() {
        for await (const run of runs) yield* run;
      },
    },
  };
}
