import { fstatSync, statSync, writeSync } from 'node:fs';

/**
 * stdout or stderr as the CLI writes to them, without making `process.stdout` or
 * `process.stderr` until something needs a stream.
 *
 * Making one loads node's stream modules (and `net` for a pipe): ~3 ms of every
 * command's start, more than the request of `amsg members get` (bench/RESULTS.md).
 * When the descriptor is a file, a pipe, a socket or /dev/null (never a terminal),
 * text goes to it with a synchronous write, as node's own stream does there on Linux.
 * A terminal, a pipe that would block (non-blocking: EAGAIN), or a use that needs the
 * stream itself (a live view, a pipeline, waiting on 'drain') switches to the real
 * stream for good, so what is written stays in order.
 */
export class StdStream {
  /** undefined until the first use decides. */
  private direct: boolean | undefined;
  /** Whether stdout's stream has its EPIPE handler. */
  private guarded = false;

  constructor(readonly fd: 1 | 2) {}

  /** The real stream; from now on every write goes through it. */
  get stream(): NodeJS.WriteStream {
    this.direct = false;
    if (this.fd === 2) return process.stderr;
    if (!this.guarded) {
      this.guarded = true;
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EPIPE') readerGone();
        throw err;
      });
    }
    return process.stdout;
  }

  private get writesDirectly(): boolean {
    return (this.direct ??= !mayBeTerminal(this.fd));
  }

  get isTTY(): boolean {
    return this.writesDirectly ? false : !!this.stream.isTTY;
  }

  /** The terminal's width; undefined when not a terminal. */
  get columns(): number | undefined {
    return this.isTTY ? this.stream.columns : undefined;
  }

  /** As a stream's write: false when the caller should wait for 'drain' (see once). */
  write(text: string | Uint8Array): boolean {
    if (!this.writesDirectly) return this.stream.write(text);
    const bytes = typeof text === 'string' ? Buffer.from(text) : text;
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(this.fd, bytes, done);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') return this.stream.write(bytes.subarray(done));
      if (code === 'EPIPE') {
        if (this.fd === 1) readerGone();
        return true; // a note nobody reads is dropped
      }
      throw err;
    }
  }

  /** Waits for 'drain' after a write answered false (only a stream's write does). */
  once(event: 'drain', listener: () => void): this {
    this.stream.once(event, listener);
    return this;
  }
}

/**
 * False when the descriptor is certainly not a terminal: a regular file, a pipe, a
 * socket, or /dev/null (the one character device that is common as output). Any other
 * character device may be a terminal, and only the stream can tell (node's tty module
 * loads the same stream modules).
 */
function mayBeTerminal(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return false;
    return st.rdev !== statSync('/dev/null').rdev;
  } catch {
    return true; // closed or odd: let the stream decide
  }
}

/** `amsg … | head` closes the pipe early: that is the reader being done, not an error. */
function readerGone(): never {
  process.exit(process.exitCode ?? 0);
}

export const STDOUT = new StdStream(1);
export const STDERR = new StdStream(2);
