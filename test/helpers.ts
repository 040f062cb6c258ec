import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../src/store/db.js';
import { fixedClock } from '../src/service/clock.js';
import { initialize, localActor } from '../src/service/accounts/accounts.js';
import { Router } from '../src/api/router.js';
import { jsonText } from '../src/api/json-text.js';
import type { Actor } from '../src/service/context.js';
import { ImportWriter } from '../src/service/imports/import-writer.js';
import { fileURLToPath } from 'node:url';

export const T0 = '2026-03-04T05:06:07.000Z';

export interface TestService {
  db: Db;
  router: Router;
  clock: ReturnType<typeof fixedClock>;
  actor: Actor;
  dir: string;
  file: string;
  /** One request through the route table, as the server would see it. */
  call(
    method: string,
    path: string,
    opts?: { query?: Record<string, string>; body?: unknown; rawBody?: string },
  ): Promise<{ status: number; body: any }>;
  /**
   * Runs fn and answers what it returned and the statements it ran on `db`, in order,
   * as SQLite expands them (values in place of parameters). Needs `trace: true`.
   */
  capture<T>(fn: () => T | Promise<T>): Promise<{ result: T; statements: string[] }>;
  close(): void;
}

/** The built import writer thread (tests run after `npm run build`). */
export const WRITER_SCRIPT = fileURLToPath(new URL('../dist/import-writer-thread.js', import.meta.url));

/**
 * A fresh initialized database in a temp dir, with a pinned clock, acting as account
 * 1's owner. With `importWriter`, streamed-import batches are written on the import
 * writer's thread, as in the built CLI and `amsg serve`. With `trace`, `capture` can
 * collect the statements a call runs (off by default: expanding every statement costs).
 */
export function makeService(now = T0, opts: { importWriter?: boolean; trace?: boolean; strict?: boolean } = {}): TestService {
  const dir = mkdtempSync(join(tmpdir(), 'amsg-test-'));
  const file = join(dir, 'amsg.db');
  // Statements are collected only while a capture runs.
  let captured: string[] | undefined;
  const db = openDb(file, opts.trace ? { trace: (sql) => captured?.push(sql) } : {});
  const clock = fixedClock(now);
  // Without the standard fields, so each test defines exactly the fields it uses.
  initialize(db, clock, { standardFields: false });
  const writer = opts.importWriter ? new ImportWriter(file, WRITER_SCRIPT) : undefined;
  const router = new Router(db, clock, undefined, writer, { strict: opts.strict });
  const actor = localActor(db, 1);
  return {
    db,
    router,
    clock,
    actor,
    dir,
    file,
    async call(method, path, opts = {}) {
      const res = await router.handle({
        method,
        path,
        query: opts.query ?? {},
        body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
        actor,
      });
      return { status: res.status, body: JSON.parse(jsonText(res.body ?? null)) };
    },
    async capture(fn) {
      if (!opts.trace) throw new Error('capture needs makeService(now, { trace: true })');
      const statements: string[] = [];
      captured = statements;
      try {
        return { result: await fn(), statements };
      } finally {
        captured = undefined;
      }
    },
    close() {
      void writer?.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
