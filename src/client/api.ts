import type { Settings } from './config.js';
import type { ApiCall, Download, QueryValue, Transport } from './transport.js';

type Query = Record<string, QueryValue>;

/**
 * The service as commands see it: calls by method and account-relative path.
 * Answers parsed JSON, or throws ApiError (the service refused) or ConnectionError.
 */
export class Api {
  constructor(
    readonly transport: Transport,
    readonly accountId: number,
  ) {}

  request(method: ApiCall['method'], path: string, opts: { query?: Query; body?: unknown } = {}): Promise<unknown> {
    return this.transport.request({ method, path: `/${this.accountId}${path}`, ...opts });
  }

  get<T = unknown>(path: string, query?: Query) {
    return this.request('GET', path, { query }) as Promise<T>;
  }
  post<T = unknown>(path: string, body: unknown = {}) {
    return this.request('POST', path, { body }) as Promise<T>;
  }
  put<T = unknown>(path: string, body: unknown = {}) {
    return this.request('PUT', path, { body }) as Promise<T>;
  }
  patch<T = unknown>(path: string, body: unknown = {}) {
    return this.request('PATCH', path, { body }) as Promise<T>;
  }
  delete<T = unknown>(path: string, query?: Query) {
    return this.request('DELETE', path, { query }) as Promise<T>;
  }

  /** A GET answered with a file (an export's CSV or zip), streamed; errors are ApiError as usual. */
  download(path: string, query?: Query): Promise<Download> {
    return this.transport.download({ method: 'GET', path: `/${this.accountId}${path}`, query });
  }

  /** Says a streamed import is coming, so the service can get ready for it (Transport.expectImport). */
  expectImport(): void {
    this.transport.expectImport?.();
  }

  /** Runs due background work for up to budgetMs when this process holds the database (local mode). */
  async advance(budgetMs: number): Promise<void> {
    await this.transport.advance?.(budgetMs);
  }

  close() {
    return this.transport.close();
  }
}

/** Encodes one path segment (an e-mail address keeps its + as %2B, so it arrives as a plus). */
export const seg = (v: string | number) => encodeURIComponent(String(v));

/** Builds the Api for resolved settings; undici is loaded only for remote calls. */
export async function connect(settings: Settings, opts: { note?: (message: string) => void } = {}): Promise<Api> {
  let transport: Transport;
  if (settings.mode === 'remote') {
    const { HttpTransport } = await import('./http-transport.js');
    transport = new HttpTransport({ baseUrl: settings.baseUrl!, apiKey: settings.apiKey });
  } else {
    const { LocalTransport } = await import('./local-transport.js');
    const note = opts.note ?? ((m: string) => process.stderr.write(`amsg: ${m}\n`));
    transport = new LocalTransport(settings.db, settings.account, settings.mail && { ...settings.mail, note });
  }
  return new Api(transport, settings.account);
}
