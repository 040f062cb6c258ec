// This module is itself loaded lazily (client/api.ts), so the engine it imports
// costs nothing to remote commands.
import { initializeLocal, openLocal, type LocalService, type MailRun } from '../api/local.js';
import { ApiError, parseWindowCut, WINDOW_CUT_HEADER, type WindowCut } from '../errors.js';
import { existsSync } from 'node:fs';
import { ConnectionError, queryString, type ApiCall, type Download, type Transport } from './transport.js';
import { jsonText } from '../api/json-text.js';

/** How long one call may spend on queued jobs afterwards. */
const JOB_SLICE_MS = 250;
/** How long one call may spend posting due webhook deliveries afterwards (an open post is given back). */
const WEBHOOK_BUDGET_MS = 1_000;
/** How long one call may spend sending due mail over SMTP afterwards (what is left stays queued for the next process). */
const MAIL_BUDGET_MS = 10_000;

/** Local mode's SMTP server (settings.mail), and where to say what became of the mail. */
export interface LocalMail {
  smtp: import('./smtp-url.js').SmtpTarget;
  allow: string[];
  note: (message: string) => void;
}

/**
 * The route table in-process over the SQLite file. Answers go through JSON text
 * exactly as they would over HTTP, so both transports answer alike.
 */
export class LocalTransport implements Transport {
  private service?: LocalService;

  constructor(
    readonly file: string,
    private readonly accountId: number,
    private readonly mail?: LocalMail,
  ) {}

  get target() {
    return this.file;
  }

  readonly runsJobs = true;

  /**
   * Whether a call is followed by the due work (jobs, webhook posts, mail). Off for
   * `amsg __complete`, which reads names at a Tab and must neither send nor wait.
   */
  workAfterCalls = true;

  private async open(): Promise<LocalService> {
    if (!this.service) {
      // Checked here, not in openLocal, because a missing file means the service
      // cannot be reached (exit 3), not that it refused.
      if (this.file !== ':memory:' && !existsSync(this.file))
        throw new ConnectionError(
          `no amsg database at ${this.file}`,
          undefined,
          `\n  create one here with \`amsg init\`, or name an existing one with --db FILE (AMSG_DB)`,
        );
      this.service = openLocal(this.file, this.accountId, undefined, this.mail && { smtp: this.mail.smtp, allow: this.mail.allow });
    }
    return this.service;
  }

  expectImport(): void {
    // A database that cannot be opened is said by the command's next call.
    this.open().then(
      ({ router }) => router.importWriter?.warm(),
      () => {},
    );
  }

  async request(call: ApiCall): Promise<unknown> {
    const { router, actor, advanceJobs, deliverWebhooks, deliverMail } = await this.open();
    const res = await router.handle({
      method: call.method,
      path: call.path,
      query: queryString(call.query),
      // Commands send plain JSON values, so handing the value over is the same as
      // sending its text (and a 2,000-row import batch skips a JSON round trip).
      json: call.body,
      actor,
    });
    // Whichever process holds the database advances due jobs; in local mode that is
    // this CLI, a little after each call (a waiting command polls, so it keeps going).
    if (this.workAfterCalls) {
      advanceJobs(JOB_SLICE_MS);
      await deliverWebhooks(WEBHOOK_BUDGET_MS);
      this.noteMail(await deliverMail(MAIL_BUDGET_MS));
    }
    const body = res.body === undefined ? undefined : JSON.parse(jsonText(res.body));
    if (res.status >= 400) throw ApiError.fromResponse(res.status, body);
    const cut = parseWindowCut(res.headers?.[WINDOW_CUT_HEADER]);
    if (cut) this.onWindowCut?.(cut);
    return body;
  }

  onWindowCut?: (cut: WindowCut) => void;

  async advance(budgetMs: number): Promise<void> {
    const { advanceJobs, deliverWebhooks, deliverMail } = await this.open();
    advanceJobs(Math.min(budgetMs, JOB_SLICE_MS));
    await deliverWebhooks(budgetMs);
    this.noteMail(await deliverMail(Math.max(budgetMs, MAIL_BUDGET_MS)));
  }

  /** Says on stderr what became of the mail a call sent, and where what is left goes. */
  private noteMail(run: MailRun | undefined) {
    if (!run || !this.mail) return;
    const server = this.mail.smtp.display;
    const parts = [];
    if (run.sent) parts.push(`${run.sent} sent`);
    if (run.failed) parts.push(`${run.failed} refused for good (amsg mail log)`);
    if (parts.length) this.mail.note(`mail through ${server}: ${parts.join(', ')}`);
    if (run.queued)
      this.mail.note(
        `${run.queued} message${run.queued === 1 ? '' : 's'} still queued${run.problem ? ` (${run.problem})` : ''}: the next amsg command on ${this.file} (or amsg serve on it) delivers ${run.queued === 1 ? 'it' : 'them'}`,
      );
  }

  async download(call: ApiCall): Promise<Download> {
    const { router, actor } = await this.open();
    const res = await router.handle({ method: call.method, path: call.path, query: queryString(call.query), actor });
    const body = res.body === undefined ? undefined : JSON.parse(jsonText(res.body));
    if (res.status >= 400) throw ApiError.fromResponse(res.status, body);
    // A JSON answer arrives as its text, as it would over HTTP.
    if (!res.raw) return { contentType: 'application/json; charset=utf-8', body: buffers(JSON.stringify(body)) };
    return { contentType: res.raw.contentType, filename: res.raw.filename, body: buffers(res.raw.data) };
  }

  async close() {
    const service = this.service;
    this.service = undefined;
    await service?.close();
  }
}

/** `amsg init`: creates the database file and its first account, or finds it already set up. */
export function initLocalDatabase(file: string, opts: { accountName?: string; ownerEmail?: string; hq?: boolean }) {
  return initializeLocal(file, opts);
}

/** The bytes of a raw answer (a buffer, a text, or a stream of either) as a stream of buffers. */
async function* buffers(data: Buffer | string | Iterable<Buffer | string> | AsyncIterable<Buffer | string>): AsyncIterable<Buffer> {
  if (typeof data === 'string' || Buffer.isBuffer(data)) {
    yield Buffer.from(data);
    return;
  }
  for await (const chunk of data) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}
