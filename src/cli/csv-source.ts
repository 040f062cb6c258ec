/**
 * Reading a member CSV as a stream of records with their line numbers: UTF-8 checked
 * as it is read, a BOM dropped, the delimiter detected from the header line, every
 * line end (CRLF, LF, a lone CR, in any mix) and quoted fields (commas, newlines)
 * handled by csv-parse. Memory stays flat whatever the file's size.
 *
 * The encoding is settled on the first chunk: a UTF-16 byte order mark (what
 * spreadsheets write as "Unicode text") is decoded as UTF-16, a first chunk that is
 * not UTF-8 is read as Windows-1252 (Latin-1), and `--encoding` names any other.
 *
 * A record that cannot be read as the file meant it is a bad row, and the reading goes
 * on after it (RecordScanner): one longer than MAX_RECORD_CHARS (kept only by its
 * first characters), and one with a quote where none belongs (O"Brien unquoted, or
 * text after a closing quote), which csv-parse would take as text.
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
  /** Why the record cannot be imported as it was read (a bad row), if so. */
  problem?: string;
}

export interface CsvSource {
  header: string[];
  delimiter: string;
  /** The encoding the file is read in, and why when it is not UTF-8 (`its byte order mark`, `it is not UTF-8`, `--encoding`). */
  encoding: { name: string; why?: string };
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
 * The encoding a file is read in: --encoding when given; else a UTF-16 byte order mark
 * says which; else UTF-8, unless the first chunk is not UTF-8 (a spreadsheet's "CSV"
 * on Windows is Windows-1252, Latin-1's superset), which is read as Windows-1252.
 */
/** How an encoding is named in a message. */
export const encodingName = (name: string) =>
  ({ 'utf-8': 'UTF-8', 'utf-16le': 'UTF-16LE', 'utf-16be': 'UTF-16BE', 'windows-1252': 'Windows-1252 (Latin-1)' })[name] ?? name;

async function encodingOf(first: Buffer | undefined, asked: string | undefined): Promise<{ name: string; why?: string }> {
  if (asked !== undefined) {
    if (/^utf-?8$/i.test(asked.trim())) return { name: 'utf-8' };
    const { encodingExists } = (await import('iconv-lite')).default;
    if (!encodingExists(asked))
      throw new UsageError(
        `--encoding ${asked}: not an encoding amsg knows (e.g. utf-8, utf-16le, utf-16be, windows-1252, latin1, iso-8859-15)`,
      );
    return { name: asked.trim().toLowerCase(), why: '--encoding' };
  }
  if (!first) return { name: 'utf-8' };
  if (first[0] === 0xff && first[1] === 0xfe) return { name: 'utf-16le', why: 'its byte order mark' };
  if (first[0] === 0xfe && first[1] === 0xff) return { name: 'utf-16be', why: 'its byte order mark' };
  // A binary file is refused by the reader, whatever its bytes would decode as.
  if (first.includes(0)) return { name: 'utf-8' };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(first.subarray(0, wholeCharacters(first)));
    return { name: 'utf-8' };
  } catch {
    return { name: 'windows-1252', why: 'it is not UTF-8' };
  }
}

/**
 * A csv-parse parser whose records go to a queue as they are parsed, never through
 * its readable side (on_record would do the same, but makes an info object per record).
 */
class RecordQueue extends Parser {
  readonly queue: string[][] = [];
  /** Lines each queued record spans: one, plus the line ends inside its quoted values. */
  readonly spans: number[] = [];
  /** Bad rows among the queued records, by their index in the queue, with why. */
  readonly problems = new Map<number, string>();
  /** The records csv-parse parsed so far, to find the ones the scanner flagged. */
  private parsed = 0;
  /** Set once the text goes through a RecordScanner (csv-parse's part of the file). */
  scanner?: RecordScanner;
  override push(record: unknown): boolean {
    if (record === null) return super.push(null);
    const values = record as string[];
    this.queue.push(values);
    let span = 1;
    for (const v of values) span += lineEnds(v);
    this.spans.push(span);
    const flagged = this.scanner?.flagged;
    if (flagged?.size) {
      const problem = flagged.get(this.parsed);
      if (problem) {
        flagged.delete(this.parsed);
        this.problems.set(this.queue.length - 1, problem(values));
      }
    }
    this.parsed++;
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

/** A value for a message, as it was read (its first characters when it is long). */
const shown = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}…` : v);

/** A value of a flagged record that holds a quote: the one the problem is about (a quoted value's own quotes are doubled in it). */
const quoted = (values: string[]) => values.find((v) => v.includes('"')) ?? '';

const STRAY_QUOTE = (values: string[]) =>
  `has a quote inside the unquoted value ${shown(quoted(values))}: a value with a quote in it is written in quotes, the quote doubled ("O""Brien")`;
const TEXT_AFTER_QUOTE = (values: string[]) =>
  `has text after the closing quote of the quoted value ${shown(quoted(values))}: a value with a quote in it is written in quotes, the quote doubled ("O""Brien")`;

/** A record the scanner cut out: longer than MAX_RECORD_CHARS, kept only by its first characters. */
interface OverLong {
  prefix: string;
  chars: number;
  /** Line ends inside it (its span is one more). */
  lineEnds: number;
  /** It ran to the end of the file. */
  toEnd?: boolean;
}

/**
 * Finds where the records of csv-parse's part of the file end, a quote or line end at
 * a time, as csv-parse reads them (relax_quotes): a quote opens a quoted value only at
 * the value's start, `""` inside one is a quote, and a quote there closes it whatever
 * follows. It hands csv-parse whole records only, so that a record longer than
 * MAX_RECORD_CHARS is cut out and told as a bad row (csv-parse would stop the whole
 * file there, and its memory would grow with it), and reading goes on after it; and it
 * flags a record with a quote where none belongs (csv-parse reads it as text, a value
 * the file did not mean). At most one record's text is held at a time.
 */
export class RecordScanner {
  private quoted = false;
  /** The start of the record under way, when it began in an earlier text. */
  private held = '';
  /** A last character whose meaning the next text decides (a quote: `""`? a CR: CRLF?). */
  private carry = '';
  /** The last characters before the text being scanned (a quote opens a value after a delimiter or a line end). */
  private tail = '\n';
  /** Line ends inside the quoted values of the record under way. */
  private lineEnds = 0;
  /** The record under way is too long: dropped as it comes. */
  private over?: OverLong;
  /** Records handed to csv-parse so far. */
  private handed = 0;
  /** Problems of records handed on, by their ordinal among them (RecordQueue takes them). */
  readonly flagged = new Map<number, (values: string[]) => string>();

  constructor(private readonly delimiter: string) {}

  /** The text to hand csv-parse (whole records) and the records cut out, in file order. */
  feed(input: string, last = false): (string | OverLong)[] {
    let t = this.carry + input;
    this.carry = '';
    if (!last && (t.endsWith('"') || t.endsWith('\r'))) {
      this.carry = t.slice(-1);
      t = t.slice(0, -1);
    }
    const out: (string | OverLong)[] = [];
    const d = this.delimiter;
    // Complete records go on in one piece: `before` (the start of the first, held from an
    // earlier text), then t from handStart to handEnd.
    let before = '';
    let handStart = 0;
    let handEnd = 0;
    /** Where the record under way starts in t. */
    let start = 0;
    const flush = () => {
      if (handEnd > handStart || before) out.push(before + t.slice(handStart, handEnd));
      before = '';
      handStart = handEnd;
    };
    /** The record under way is too long, seen at `upTo`: the records before it go on, it is dropped from here. */
    const goesOver = (upTo: number) => {
      flush();
      const text = this.held + t.slice(start, Math.min(upTo, start + 100));
      this.over = { prefix: text.slice(0, 100), chars: this.held.length + upTo - start, lineEnds: 0 };
      this.held = '';
      this.flagged.delete(this.handed);
    };
    const flag = (problem: (values: string[]) => string) => {
      if (!this.over && !this.flagged.has(this.handed)) this.flagged.set(this.handed, problem);
    };
    const re = /["\r\n]/g;
    for (let m = re.exec(t); m; m = re.exec(t)) {
      const i = m.index;
      const ch = m[0];
      if (ch === '"') {
        if (!this.quoted) {
          const prev = i >= 4 ? t.slice(i - 4, i) : (this.tail + t.slice(0, i)).slice(-4);
          if (prev.endsWith(d) || prev.endsWith('\n') || prev.endsWith('\r')) this.quoted = true;
          else flag(STRAY_QUOTE);
        } else if (t[i + 1] === '"') re.lastIndex = i + 2;
        else {
          this.quoted = false;
          const next = t[i + 1];
          if (next !== undefined && next !== '\r' && next !== '\n' && !t.startsWith(d, i + 1)) flag(TEXT_AFTER_QUOTE);
        }
        continue;
      }
      const crlf = ch === '\r' && t[i + 1] === '\n';
      if (crlf) re.lastIndex = i + 2;
      if (this.quoted) {
        this.lineEnds++;
        continue;
      }
      // A record ends here.
      const end = i + (crlf ? 2 : 1);
      if (this.over) this.over.chars += i - start;
      else if (this.held.length + i - start > MAX_RECORD_CHARS) goesOver(i);
      if (this.over) {
        out.push({ ...this.over, lineEnds: this.lineEnds });
        this.over = undefined;
        handStart = handEnd = end;
      } else {
        if (this.held) {
          before = this.held;
          this.held = '';
        }
        handEnd = end;
        this.handed++;
      }
      this.lineEnds = 0;
      start = end;
    }
    // The record under way: held until it ends, or dropped as it comes once it is too long.
    if (this.over) this.over.chars += t.length - start;
    else if (this.held.length + t.length - start > MAX_RECORD_CHARS) goesOver(t.length);
    else this.held += t.slice(start);
    flush();
    this.tail = (this.tail + t).slice(-4);
    if (last) {
      if (this.over) out.push({ ...this.over, lineEnds: this.lineEnds, toEnd: true });
      else if (this.held) out.push(this.held);
      this.over = undefined;
      this.held = '';
    }
    return out;
  }
}

/** Opens FILE (or `-` for stdin) and reads its header. */
export async function openCsv(file: string, opts: { delimiter?: string; encoding?: string } = {}): Promise<CsvSource> {
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
  const firstRead = await iterator.next();
  const firstChunk = firstRead.done ? undefined : (firstRead.value as Buffer);
  const encoding = await encodingOf(firstChunk, opts.encoding);

  // Decoded text, checked as UTF-8 chunk by chunk; NUL bytes mean a binary file. A
  // character split between two chunks is decoded with the second, so an invalid
  // byte is found exactly where it is, and the text before it is delivered first:
  // every record before the broken line is read (and imported) before the error.
  /** The file's chunks, the first one (read to settle the encoding) first. */
  async function* chunksOf(): AsyncGenerator<Buffer> {
    if (!firstChunk) return;
    yield firstChunk;
    for (;;) {
      if (stopped) return;
      const { value, done } = await iterator.next();
      if (done) return;
      yield value as Buffer;
    }
  }
  const binary = () => new CsvError(`${name} looks like a binary file, not a CSV file`);

  /** Another encoding than UTF-8, with iconv-lite (a file of its own: loaded only for such a file), BOM dropped. */
  async function* otherText(): AsyncGenerator<string> {
    const { getDecoder } = (await import('iconv-lite')).default;
    const decode = getDecoder(encoding.name);
    let first = true;
    for await (const chunk of chunksOf()) {
      bytes += chunk.length;
      const decoded = decode.write(chunk);
      // NUL characters, not bytes: a UTF-16 file's ASCII has a NUL byte in every character.
      if (first && decoded.includes('\0')) throw binary();
      first = false;
      if (decoded) yield decoded;
    }
    const rest = decode.end();
    if (rest) yield rest;
  }

  async function* text(): AsyncGenerator<string> {
    if (encoding.name !== 'utf-8') return yield* otherText();
    let first = true;
    let bomChecked = false;
    /** The start of a character whose other bytes are in the next chunk. */
    let carried: Buffer | undefined;
    for await (const chunk of chunksOf()) {
      if (first && chunk.includes(0)) throw binary();
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
          `${name} is not valid UTF-8 (${line}byte ${at + 1}): save it as UTF-8 (in a spreadsheet, "CSV UTF-8") and try again, or name its encoding with --encoding (e.g. --encoding windows-1252)`,
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
  const { queue, spans, problems } = parser;
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
      problems.clear();
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
        await toParser(scanner.feed('', true));
        await new Promise<void>((resolve) => parser.end(settled(resolve)));
      } else if (text === undefined) {
        // The fast path took the whole text, or the file ended with nothing left over.
        if (carry === '' && queue.length === 0) {
          ended = true;
          await new Promise<void>((resolve) => parser.end(settled(resolve)));
        }
      } else await toParser(scanner.feed(text));
    }
  }
  /** csv-parse's part of the file, through the scanner: whole records to csv-parse, a record cut out as a bad row in its place. */
  const scanner = new RecordScanner(delimiter);
  parser.scanner = scanner;
  const toParser = async (pieces: (string | OverLong)[]) => {
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        if (parseError === undefined) await new Promise<void>((resolve) => parser.write(piece, settled(resolve)));
        continue;
      }
      queue.push([`${piece.prefix}…`]);
      spans.push(piece.lineEnds + 1);
      problems.set(
        queue.length - 1,
        `is longer than ${thousands(MAX_RECORD_CHARS)} characters (${thousands(piece.chars)}${piece.toEnd ? ', to the end of the file' : ''}): not imported (a quote opened in it and not closed where it should be?)`,
      );
    }
  };
  /** Takes the next queued record; `line` moves past the lines it spans. */
  function takeQueued(): string[] {
    line += spans[taken];
    return queue[taken++];
  }
  /** Why the record just taken is a bad row, if it is (a look at an empty map on a clean file). */
  const problemOfTaken = () => (problems.size ? problems.get(taken - 1) : undefined);
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
          const problem = problemOfTaken();
          if (problem) run.push({ line: start, values, problem });
          else if (!isBlank(values)) run.push({ line: start, values });
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
    encoding,
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
