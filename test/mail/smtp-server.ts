/**
 * A real SMTP server for the mail tests (the smtp-server package), on 127.0.0.1 and an
 * ephemeral port, offering STARTTLS with a self-signed certificate (the fixture pair
 * beside this file, made for these tests only) and requiring AUTH. What arrives is parsed
 * with mailparser. Hooks let a test refuse a recipient or a message, or stall DATA.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
// @ts-expect-error: no types installed for smtp-server (tests are not type-checked)
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export const USER = 'amsg';
export const PASS = 'p@ss:w/rd';
const here = (name: string) => new URL(name, import.meta.url);

export interface Received {
  parsed: ParsedMail;
  raw: string;
  envelopeTo: string[];
  secure: boolean;
  user: string | undefined;
}

export interface TestSmtp {
  port: number;
  /** smtp://amsg:…@127.0.0.1:port (password percent-encoded). */
  url: string;
  received: Received[];
  /** Each RCPT TO seen, in order (refused ones too). */
  rcpts: string[];
  /** Each DATA begun, in order (with its Message-ID once read). */
  dataStarts: number;
  waitFor(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

type SmtpError = Error & { responseCode?: number };
export const smtpError = (code: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode: code });

export interface Hooks {
  /** An error refuses the recipient (its responseCode is the reply). */
  onRcpt?: (address: string) => SmtpError | undefined;
  /** An error refuses the message after DATA; a promise stalls it until it settles. */
  onData?: (raw: string) => SmtpError | undefined | Promise<SmtpError | undefined>;
  /** Discard what arrives (benchmarks): nothing is parsed or kept, only counted. */
  discard?: boolean;
  port?: number;
}

export async function startSmtp(hooks: Hooks = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const rcpts: string[] = [];
  let dataStarts = 0;
  const server = new SMTPServer({
    key: readFileSync(here('localhost-key.pem')),
    cert: readFileSync(here('localhost-cert.pem')),
    logger: false,
    disabledCommands: [],
    // AUTH only after STARTTLS (smtp-server's default: allowInsecureAuth false).
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth: { username: string; password: string }, _session: unknown, cb: (err: Error | null, res?: { user: string }) => void) {
      if (auth.username === USER && auth.password === PASS) cb(null, { user: USER });
      else cb(smtpError(535, 'Authentication credentials invalid'));
    },
    onRcptTo(address: { address: string }, _session: unknown, cb: (err?: Error | null) => void) {
      rcpts.push(address.address);
      cb(hooks.onRcpt?.(address.address) ?? null);
    },
    onData(stream: NodeJS.ReadableStream, session: any, cb: (err?: Error | null) => void) {
      dataStarts++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => {
        if (!hooks.discard) chunks.push(c);
      });
      stream.on('end', async () => {
        if (hooks.discard) {
          received.length++;
          return cb(null);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const refusal = await hooks.onData?.(raw);
        if (refusal) return cb(refusal);
        received.push({
          parsed: await simpleParser(raw),
          raw,
          envelopeTo: session.envelope.rcptTo.map((r: { address: string }) => r.address),
          secure: session.secure,
          user: session.user,
        });
        cb(null);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(hooks.port ?? 0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${port}`,
    received,
    rcpts,
    get dataStarts() {
      return dataStarts;
    },
    async waitFor(n, ms = 15_000) {
      const until = Date.now() + ms;
      while (received.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A header of a raw message as written (folded lines joined), or undefined. */
export function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** Every header of a raw message as written, in order: [name, value] (folded lines joined). */
export function headerLines(raw: string): [string, string][] {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  return head.split(/\r?\n/).map((l) => {
    const colon = l.indexOf(':');
    return [l.slice(0, colon), l.slice(colon + 1).trim()];
  });
}
