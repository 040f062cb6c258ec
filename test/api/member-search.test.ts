/**
 * GET /{account_id}/members/search (extension, the console's search box): members by
 * part of their e-mail address, from the trigram index the job runner fills, with the
 * members it has not reached yet scanned (a bounded number) and counted in a header.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { addMember, ok } from './util.js';
import { advanceEmailSearch, UNINDEXED_SCAN } from '../../src/service/audience/member-search.js';
import { UNINDEXED_HEADER } from '../../src/api/routes/members.js';
import { initialize } from '../../src/service/accounts/accounts.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const emails = async (q: string, query: Record<string, string> = {}, account = 1) =>
  ((await ok(s, 'GET', `/${account}/members/search`, { query: { q, ...query } })) as { email: string }[]).map((m) => m.email);
const indexAll = () => {
  while (advanceEmailSearch(s.db, 1_000));
};
const state = () => s.db.prepare('SELECT indexed_through, ever_indexed FROM member_email_search_state').get();

describe('members/search', () => {
  it('finds any part of the address, in member id order, as the member GET answers them', async () => {
    for (const e of ['ann.smith@example.com', 'bob@smithery.org', 'cy@example.com', 'dee.smi@other.net']) await addMember(s, e);
    indexAll();
    expect(await emails('smith')).toEqual(['ann.smith@example.com', 'bob@smithery.org']);
    expect(await emails('SMITH')).toEqual(['ann.smith@example.com', 'bob@smithery.org']);
    expect(await emails('@example.')).toEqual(['ann.smith@example.com', 'cy@example.com']);
    expect(await emails('th@ex')).toEqual(['ann.smith@example.com']);
    expect(await emails('nobody')).toEqual([]);
    const [first] = await ok(s, 'GET', '/1/members/search', { query: { q: 'cy@' } });
    expect(first).toEqual(await ok(s, 'GET', `/1/members/${first.member_id}`));
  });

  it('one or two characters are a prefix, in e-mail order', async () => {
    for (const e of ['zed@example.com', 'ann@example.com', 'anna@example.com', 'bob@an.org']) await addMember(s, e);
    indexAll();
    expect(await emails('an')).toEqual(['ann@example.com', 'anna@example.com']);
    expect(await emails('A')).toEqual(['ann@example.com', 'anna@example.com']);
    expect(await emails('z')).toEqual(['zed@example.com']);
  });

  it('takes a window of start and end', async () => {
    for (let i = 0; i < 7; i++) await addMember(s, `user${i}@example.com`);
    indexAll();
    expect(await emails('user', { start: '2', end: '5' })).toEqual(['user2@example.com', 'user3@example.com', 'user4@example.com']);
    expect(await emails('us', { start: '5', end: '9' })).toEqual(['user5@example.com', 'user6@example.com']);
    // A window longer than 500 is cut to its first 500, and a header says so (never a 400).
    const tooLong = await s.call('GET', '/1/members/search', { query: { q: 'user', end: '501' } });
    expect(tooLong.status).toBe(200);
    expect(tooLong.body.map((m: { email: string }) => m.email)).toHaveLength(7);
  });

  it('leaves out archived members and other accounts’ members', async () => {
    const gone = await addMember(s, 'gone@example.com');
    await addMember(s, 'here@example.com');
    await ok(s, 'DELETE', `/1/members/${gone}`);
    initialize(s.db, s.clock, { hq: true });
    const branch = (await ok(s, 'POST', '/1/enterprise/subaccount', { body: { account_name: 'Branch' } })).account_id;
    await ok(s, 'POST', `/${branch}/members/add`, { body: { email: 'there@example.com' } });
    indexAll();
    expect(await emails('@example')).toEqual(['here@example.com']);
    expect(await emails('@example', {}, branch)).toEqual(['there@example.com']);
    expect(await emails('ge')).toEqual([]);
  });

  it('reads query syntax as text', async () => {
    await addMember(s, 'o"neil+or@example.com');
    await addMember(s, 'x@example.com');
    indexAll();
    for (const q of ['o"neil', '"neil+or', 'neil+or@', '+or']) expect(await emails(q), q).toEqual(['o"neil+or@example.com']);
    for (const q of ['* OR *', 'NEAR(x y)', '"', 'x OR y'])
      expect((await s.call('GET', '/1/members/search', { query: { q } })).status).toBe(200);
  });

  it('refuses a q with a control character, which no address holds (a NUL once ended the FTS5 phrase: a 500)', async () => {
    for (const q of ['a\u0000b', 'ab\nc', 'x\u0007yz']) {
      const res = await s.call('GET', '/1/members/search', { query: { q } });
      expect(res.status, JSON.stringify(q)).toBe(400);
      expect(res.body).toEqual({ error: 'q: an e-mail address holds no control characters', field: 'q' });
    }
  });

  it('refuses an empty q', async () => {
    for (const query of [{}, { q: '' }, { q: '   ' }]) {
      const res = await s.call('GET', '/1/members/search', { query });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^q: /);
    }
  });

  it('finds members the index has not reached by scanning them, and the index catches up in the background', async () => {
    await addMember(s, 'early@example.com');
    expect(state()).toEqual({ indexed_through: 0, ever_indexed: 0 });
    expect(await emails('early')).toEqual(['early@example.com']);
    expect(advanceEmailSearch(s.db, 1_000)).toBe(false);
    expect(state()).toEqual({ indexed_through: 1, ever_indexed: 1 });
    expect(advanceEmailSearch(s.db, 1_000)).toBe(false);
    await addMember(s, 'late@example.com');
    expect(await emails('@example.com')).toEqual(['early@example.com', 'late@example.com']);
  });

  it('says in a header how many members it could not look at while the index catches up', async () => {
    // More unindexed members than one search scans: written straight to the table.
    const insert = s.db.prepare(
      "INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')",
    );
    s.db.transaction(() => {
      for (let i = 0; i < UNINDEXED_SCAN + 40; i++) insert.run(`bulk${i}@example.com`);
    })();
    const ask = () =>
      s.router.handle({ method: 'GET', path: '/1/members/search', query: { q: 'bulk5039@' }, actor: s.actor }) as {
        body: unknown;
        headers?: Record<string, string>;
      };
    const before = ask();
    expect(before.headers?.[UNINDEXED_HEADER]).toBe('40');
    expect(JSON.parse(JSON.stringify(before.body))).toEqual([]);
    indexAll();
    const after = ask();
    expect(after.headers?.[UNINDEXED_HEADER]).toBeUndefined();
    expect((JSON.parse(JSON.stringify(after.body)) as { email: string }[]).map((m) => m.email)).toEqual(['bulk5039@example.com']);
  });

  it('a changed e-mail is found by its new address only', async () => {
    const id = await addMember(s, 'old.name@example.com');
    indexAll();
    await ok(s, 'PUT', `/1/members/${id}`, { body: { email: 'new.name@example.com' } });
    expect(await emails('old.name')).toEqual([]);
    expect(await emails('new.name')).toEqual(['new.name@example.com']);
  });

  it('a purged member leaves the index, and a new member that gets its id again is indexed', async () => {
    await addMember(s, 'keep@example.com');
    const last = await addMember(s, 'erase.me@example.com');
    indexAll();
    expect(state()).toEqual({ indexed_through: last, ever_indexed: last });
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [last] } });
    expect(s.db.prepare(`SELECT count(*) FROM member_email_search WHERE member_email_search MATCH '"erase"'`).pluck().get()).toBe(0);
    expect(state()).toEqual({ indexed_through: last - 1, ever_indexed: last });
    const again = await addMember(s, 'newcomer@example.com');
    expect(again).toBe(last);
    indexAll();
    expect(await emails('newcomer')).toEqual(['newcomer@example.com']);
    expect(await emails('erase')).toEqual([]);
  });
});

describe('amsg serve fills the index in the background', () => {
  it('indexes the members a local import added, and then searches find them in the index', async () => {
    // Members written as a local import writes them (no index), then the file served.
    const insert = s.db.prepare(
      "INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')",
    );
    s.db.transaction(() => {
      for (let i = 0; i < 1200; i++) insert.run(`served${i}@example.com`);
    })();
    expect(state()).toEqual({ indexed_through: 0, ever_indexed: 0 });
    const { serve } = await import('../../src/server/index.js');
    const { ImportWriter } = await import('../../src/service/imports/import-writer.js');
    const { WRITER_SCRIPT } = await import('../helpers.js');
    const server = await serve({ db: s.file, port: 0, importWriter: new ImportWriter(s.file, WRITER_SCRIPT), console: false });
    try {
      const deadline = Date.now() + 20_000;
      while ((state() as { indexed_through: number }).indexed_through < 1200 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(state()).toEqual({ indexed_through: 1200, ever_indexed: 1200 });
    } finally {
      await server.close();
    }
    expect(s.db.prepare(`SELECT count(*) FROM member_email_search WHERE member_email_search MATCH '"served11"'`).pluck().get()).toBe(111);
  });

  it('waits while requests keep arriving (indexing between them slowed every read of a freshly served 1M file)', async () => {
    const insert = s.db.prepare(
      "INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')",
    );
    s.db.transaction(() => {
      for (let i = 0; i < 300; i++) insert.run(`idle${i}@example.com`);
    })();
    const { serve } = await import('../../src/server/index.js');
    const server = await serve({ db: s.file, port: 0, console: false });
    try {
      // A request every 100 ms for 1.5 s: never 500 ms without one.
      const until = Date.now() + 1_500;
      while (Date.now() < until) {
        await (await fetch(`${server.url}/openapi.json`)).arrayBuffer();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(state()).toEqual({ indexed_through: 0, ever_indexed: 0 });
      const deadline = Date.now() + 20_000;
      while ((state() as { indexed_through: number }).indexed_through < 300 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(state()).toEqual({ indexed_through: 300, ever_indexed: 300 });
    } finally {
      await server.close();
    }
  });

  it('waits while a streamed import writes (indexing beside the writer thread halved the import through serve)', async () => {
    const insert = s.db.prepare(
      "INSERT INTO members (account_id, email, member_since, last_modified_at) VALUES (1, ?, '2026-01-01T00:00:00.000000', '2026-01-01T00:00:00.000000')",
    );
    s.db.transaction(() => {
      for (let i = 0; i < 300; i++) insert.run(`busy${i}@example.com`);
    })();
    const { serve } = await import('../../src/server/index.js');
    const { ImportWriter } = await import('../../src/service/imports/import-writer.js');
    const { WRITER_SCRIPT } = await import('../helpers.js');
    class ImportingWriter extends ImportWriter {
      importing = true;
      override busy() {
        return this.importing;
      }
    }
    const writer = new ImportingWriter(s.file, WRITER_SCRIPT);
    const server = await serve({ db: s.file, port: 0, importWriter: writer, console: false });
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      expect(state()).toEqual({ indexed_through: 0, ever_indexed: 0 });
      writer.importing = false;
      const deadline = Date.now() + 20_000;
      while ((state() as { indexed_through: number }).indexed_through < 300 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(state()).toEqual({ indexed_through: 300, ever_indexed: 300 });
    } finally {
      await server.close();
    }
  });
});
