/**
 * Reading a member CSV as a stream of records with their line numbers: UTF-8 checked
 * as it is read, a BOM dropped, the delimiter detected from the header line, every
 * line end (CRLF, LF, a lone CR, in any mix) and quoted fields (commas, newlines)
 * handled by csv-parse. A quote inside an unquoted value is text (O"Brien), as
 * spreadsheets write it. Memory stays flat whatever the file's size.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { Parser } from 'csv-parse';
import { UsageError } from './context.js';
import { thousands } from './output.js';

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

/**
 * Line ends (CRLF, LF or a lone CR) in the first `end` bytes of a file: the line of a
 * byte, for an error message.
 */
function linesBefore(file: string, end: number): number {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let lines = 0;
    let lastCr = false;
    for (let pos = 0; pos < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (!n) break;
      for (let i = 0; i < n; i++) {
        const b = buf[i];
        if (b === 10) {
          if (!lastCr) lines++;
        } else if (b === 13) lines++;
        lastCr = b === 13;
      }
      pos += n;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the bytes of a buffer stop being whole UTF-8 characters: before a last
 * character whose bytes go on in the next chunk (read with it), else the end.
 */
function wholeCharacters(buf: Buffer): number {
  for (let i = buf.length - 1; i >= 0 && i >= buf.length - 4; i--) {
    const b = buf[i];
    if (b < 0x80) return buf.length;
    if (b >= 0xc0) {
      // A lead byte; F8-FF lead nothing, and the decoder says so.
      const size = b >= 0xf8 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return buf.length - i < size ? i : buf.length;
    }
  }
  return buf.length;
}

/** Line ends in text: CRLF, LF and a lone CR, one each. */
function lineEnds(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) if (text.charCodeAt(i + 1) !== 10) n++;
  return n;
}

/** Every line end, in any mix. */
const LINE_END = /\r\n|\r|\n/;

/**
 * A csv-parse parser whose records go to a queue as they are parsed, never through
 * its readable side (on_record would do the same, but makes an info object per record).
 */
class RecordQueue extends Parser {
  readonly queue: string[][] = [];
  /** Lines each queued record spans: one, plus the line ends inside its quoted values. */
  readonly spans: number[] = [];
  override push(record: unknown): boolean {
    if (record === null) return super.push(null);
    const values = record as string[];
    this.queue.push(values);
    let span = 1;
    for (const v of values) span += lineEnds(v);
    this.spans.push(span);
    return true;
  }

  /** The line ends inside the values of the record being parsed (an error names where its broken value opens). */
  linesInPartialRecord(): number {
    const partial = (this as unknown as { state?: { record?: unknown[] } }).state?.record ?? [];
    let n = 0;
    for (const v of partial) if (typeof v === 'string') n += lineEnds(v);
    return n;
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
      throw new CsvError(
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      );
    }
    input = createReadStream(file, { highWaterMark: 256 * 1024 });
  }
  const name = file === '-' ? 'stdin' : file;
  let bytes = 0;
  let stopped = false;
  // ignoreBOM: each chunk is decoded on its own, and only the file's first BOM is dropped (below).
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const iterator = input[Symbol.asyncIterator]();

  // Decoded text, checked as UTF-8 chunk by chunk; NUL bytes mean a binary file. A
  // character split between two chunks is decoded with the second, so an invalid
  // byte is found exactly where it is, and the text before it is delivered first:
  // every record before the broken line is read (and imported) before the error.
  async function* text(): AsyncGenerator<string> {
    let first = true;
    let bomChecked = false;
    /** The start of a character whose other bytes are in the next chunk. */
    let carried: Buffer | undefined;
    for (;;) {
      if (stopped) return;
      const { value, done } = await iterator.next();
      if (done) break;
      const chunk = value as Buffer;
      if (first && chunk.includes(0)) throw new CsvError(`${name} looks like a binary file, not a CSV file`);
      first = false;
      const buf = carried ? Buffer.concat([carried, chunk]) : chunk;
      /** The file offset of buf[0]. */
      const start = bytes - (carried?.length ?? 0);
      bytes += chunk.length;
      const whole = wholeCharacters(buf);
      carried = whole < buf.length ? buf.subarray(whole) : undefined;
      let decoded: string;
      let broken: CsvError | undefined;
      try {
        decoded = decoder.decode(buf.subarray(0, whole));
      } catch {
        const valid = firstInvalidByte(buf.subarray(0, whole));
        const at = start + valid;
        const line = file === '-' ? '' : `line ${linesBefore(file, at) + 1}, `;
        broken = new CsvError(
          `${name} is not valid UTF-8 (${line}byte ${at + 1}): save it as UTF-8 (in a spreadsheet, "CSV UTF-8") and try again`,
        );
        decoded = decoder.decode(buf.subarray(0, valid));
      }
      if (!bomChecked && decoded) {
        if (decoded.charCodeAt(0) === 0xfeff) decoded = decoded.slice(1);
        bomChecked = true;
      }
      if (decoded) yield decoded;
      if (broken) throw broken;
    }
    if (carried) throw new CsvError(`${name} ends in the middle of a UTF-8 character (truncated?)`);
  }

  // The header line decides the delimiter, so the first text is read before parsing.
  const chunks = text();
  let head = '';
  while (!/[\r\n]/.test(head)) {
    // A "header" longer than any record could be is not a CSV file (and must not fill memory).
    if (head.length > MAX_RECORD_CHARS)
      throw new CsvError(`${name}: the first line is longer than ${thousands(MAX_RECORD_CHARS)} characters; is it a CSV file?`);
    const next = await chunks.next();
    if (next.done) break;
    head += next.value;
  }
  if (!head.trim()) throw new CsvError(`${name} is empty: there is no header line`);
  // Blank lines before the header (some exports start with one) are skipped.
  const delimiter = opts.delimiter ?? detectDelimiter(head.split(LINE_END).find((l) => l.trim()) ?? '');

  // No `info`: csv-parse's per-record info object cost a fifth of a large import.
  // Line numbers are counted here instead (see records below).
  //
  // The parser is fed by hand, a chunk at a time, and its records are taken as it
  // pushes them rather than read from its readable side: a failing stream drops the
  // records it has buffered, so the rows before a broken one (an unclosed quote, bad
  // UTF-8) got to the import or not depending on timing, and local and remote imports
  // differed. This way every record before the error is delivered, then the error.
  const parser = new RecordQueue({
    delimiter,
    relax_column_count: true,
    // A quote inside an unquoted value is text (O"Brien), not an error that refuses the file.
    relax_quotes: true,
    max_record_size: MAX_RECORD_CHARS,
    // Every line end, in any mix: left to itself csv-parse takes the first one it
    // finds as the only one, and read the rest of a mixed file as longer rows.
    // CRLF comes first, so that it is one line end and not two.
    record_delimiter: ['\r\n', '\n', '\r'],
  });
  const { queue, spans } = parser;
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
  // quote, whole lines are split here (at any line end); at the first text that does
  // not qualify (a quote, an over-long line) everything from the start of that text's
  // first incomplete record on goes to csv-parse, which then reads the rest of the
  // file: the two never share a record, so csv-parse starts on a record boundary and
  // answers exactly what it would have for the whole file.
  let fast = true;
  /** The incomplete last line of the text split so far (fast path). */
  let carry = '';
  const handOver = (text: string) => {
    fast = false;
    return text;
  };
  /** Lines of the block as records, or undefined when the block must go to csv-parse. */
  const splitLines = (block: string, last: boolean): string[][] | undefined => {
    if (block.includes('"')) return undefined;
    let lines: string[];
    if (!block.includes('\r')) lines = block.split('\n');
    else if (!block.includes('\n')) lines = block.split('\r');
    else {
      lines = block.split('\r\n');
      // Not CRLF throughout: a mix of line ends.
      for (const l of lines)
        if (l.includes('\r') || l.includes('\n')) {
          lines = block.split(LINE_END);
          break;
        }
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
  const take = (records: string[][]) => {
    for (const r of records) {
      queue.push(r);
      spans.push(1);
    }
  };
  /** Splits the complete lines of the text (with what was carried) or hands it to csv-parse. */
  const feedFast = (text: string): string | undefined => {
    const all = carry + text;
    carry = '';
    // A CR at the very end may be the first half of a CRLF: its line waits for the next text.
    const end = all.endsWith('\r') ? all.length - 1 : all.length;
    const lf = end === 0 ? -1 : all.lastIndexOf('\n', end - 1);
    // A lone CR after the last LF ends a line too. It is looked for forward from that
    // LF: a backward search for a CR through a whole block that has none cost as much
    // as splitting the block into lines.
    let cr = -1;
    for (let i = all.indexOf('\r', lf + 1); i !== -1 && i < end; i = all.indexOf('\r', i + 1)) cr = i;
    const cut = Math.max(lf, cr) + 1;
    const records = splitLines(all.slice(0, cut), false);
    const rest = all.slice(cut);
    if (records && rest.length <= MAX_RECORD_CHARS) {
      take(records);
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
      take(records);
      return undefined;
    }
    return handOver(rest);
  };

  /** The line the next record taken starts on (1 = the first line of the file). */
  let line = 1;
  /** The next record, or undefined at the end; what broke the file is thrown after the records before it. */
  async function nextRecord(): Promise<string[] | undefined> {
    for (;;) {
      if (taken < queue.length) return takeQueued();
      queue.length = spans.length = taken = 0;
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
  /** Takes the next queued record; `line` moves past the lines it spans. */
  function takeQueued(): string[] {
    line += spans[taken];
    return queue[taken++];
  }
  /**
   * csv-parse's errors with the line they are about. Every record before the broken
   * one was taken when this is thrown, so that record starts on `line`, and its
   * broken value opens after the line ends in the values before it.
   */
  const describeParseError = (err: unknown): Error => {
    if (err instanceof CsvError) return err;
    const e = err as { code?: string; message: string };
    const where = `${name}, line ${line + parser.linesInPartialRecord()}: `;
    if (e.code === 'CSV_MAX_RECORD_SIZE')
      return new CsvError(`${where}a record is larger than ${thousands(MAX_RECORD_CHARS)} characters (an unclosed quote?)`);
    if (e.code === 'CSV_QUOTE_NOT_CLOSED')
      return new CsvError(
        `${where}the quoted field that opens on this line is not closed by the end of the file (a missing quote, or a truncated file?)`,
      );
    return new CsvError(`${where}${e.message}`);
  };

  const isBlank = (values: string[]) => values.length === 1 && values[0] === '';
  let first = await nextRecord();
  while (first && isBlank(first)) first = await nextRecord();
  if (!first) throw new CsvError(`${name} is empty: there is no header line`);
  const header = first.map((h) => h.trim());

  // Every record already parsed goes in one run: a promise per record cost about a
  // microsecond each, as much as splitting the record.
  const runs: AsyncIterable<CsvRecord[]> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        let start = line;
        let values = await nextRecord();
        if (!values) return;
        const run: CsvRecord[] = [];
        for (;;) {
          // An empty line is one empty value: skipped, but counted.
          if (!isBlank(values)) run.push({ line: start, values });
          if (taken >= queue.length) break;
          start = line;
          values = takeQueued();
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
