/**
 * The service on real HTTP (`startServer`), driven with fetch: auth, body handling,
 * limits, routing errors, openapi.json, rate limiting and shutdown.
 */
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Router, type ApiResponse } from '../../src/api/router.js';
import { openDb, type Db } from '../../src/store/db.js';
import { fixedClock } from '../../src/service/clock.js';
import { createKey, initialize, localActor } from '../../src/service/accounts/accounts.js';
import { BODY_LIMIT, startServer, type RunningServer } from '../../src/server/server.js';
import { createField, FieldCatalog } from '../../src/service/audience/fields.js';

const T0 = '2026-03-04T05:06:07.000Z';
const T0D = '@D:2026-03-04T05:06:07';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

let dir: string;
let db: Db;
let clock: ReturnType<typeof fixedClock>;
let server: RunningServer;
let publicKey: string;
let privateKey: string;
/** Servers started by a test besides the shared one, closed after it. */
let extra: RunningServer[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-http-'));
  db = openDb(join(dir, 'amsg.db'));
  clock = fixedClock(T0);
  const init = initialize(db, clock);
  publicKey = init.public_key!;
  privateKey = init.private_key!;
  server = await startServer({ db, clock, host: '127.0.0.1', port: 0 });
});

afterEach(async () => {
  await Promise.all([server.close(), ...extra.map((s) => s.close())]);
  extra = [];
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A second key pair of account 1's owner, made without an HTTP request (which would count against a rate limit). */
function secondKey(label = 'second') {
  const key = createKey({ db, clock, actor: localActor(db, 1), accountId: 1 }, { label });
  return { publicKey: key.public_key, privateKey: key.private_key, keyId: key.key_id };
}

/**
 * One request. Every answer must be JSON; errors must be an object with a string
 * `error`, and no success may carry a top-level `error` key (the fidelity rules), so
 * every test checks that on every request it makes.
 */
async function call(
  method: string,
  path: string,
  opts: { body?: BodyInit; headers?: Record<string, string>; auth?: string | null; base?: RunningServer } = {},
): Promise<Answer> {
  const auth = opts.auth === undefined ? basic(publicKey, privateKey) : opts.auth;
  const res = await fetch(`${(opts.base ?? server).url}${path}`, {
    method,
    body: opts.body,
    headers: { ...(auth ? { authorization: auth } : {}), ...opts.headers },
    ...(opts.body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await res.text();
  if (method !== 'HEAD') {
    expect(res.headers.get('content-type'), `${method} ${path}`).toMatch(/^application\/json/);
  }
  const body = text === '' ? undefined : JSON.parse(text);
  if (res.status >= 400) {
    expect(body !== null && typeof body === 'object' && !Array.isArray(body), `${method} ${path}: ${text}`).toBe(true);
    expect(typeof body.error, `${method} ${path}: ${text}`).toBe('string');
  } else {
    expect(body, `${method} ${path} answered an empty body`).not.toBeUndefined();
    expect(body, `${method} ${path} answered a bare null`).not.toBeNull();
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) expect(body).not.toHaveProperty('error');
  }
  return { status: res.status, headers: res.headers, text, body };
}

const json = (v: unknown) => JSON.stringify(v);

/** Checks a create's answer: 200 with a bare positive integer id, and the field it made. */
async function expectFieldCreated(res: Answer, shortcut = 'city') {
  expect(res.status, res.text).toBe(200);
  expect(res.text).toMatch(/^[1-9]\d*$/);
  expect(res.body).toBe(Number(res.text));
  const got = await call('GET', `/1/fields/${res.body}`);
  expect(got.body).toMatchObject({ field_id: res.body, shortcut_name: shortcut });
}

async function addMember(email: string) {
  const res = await call('POST', '/1/members/add', { body: json({ email }) });
  expect(res.status).toBe(200);
  return res.body.member_id as number;
}

// ------------------------------------------------------------------ auth

describe('authentication', () => {
  const AUTH_REQUIRED = {
    error: 'authentication required: HTTP Basic with your public key as user name and private key as password',
  };

  it('answers 401 JSON with a WWW-Authenticate challenge when no credentials are sent', async () => {
    const res = await call('GET', '/1/members', { auth: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(AUTH_REQUIRED);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="amsg"');
  });

  it('answers 401 for a scheme other than Basic and for Basic without a colon', async () => {
    for (const auth of [`Bearer ${privateKey}`, `Basic ${Buffer.from(publicKey).toString('base64')}`]) {
      const res = await call('GET', '/1/members', { auth });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(AUTH_REQUIRED);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="amsg"');
    }
  });

  it('answers 401 "invalid API key pair" for a wrong private key, an unknown public key, or an empty password', async () => {
    for (const auth of [
      basic(publicKey, `${privateKey}x`),
      basic('0000000000', privateKey),
      basic(publicKey, ''),
      basic(privateKey, publicKey),
    ]) {
      const res = await call('GET', '/1/members', { auth });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid API key pair' });
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="amsg"');
    }
  });

  it('accepts Basic auth with the key pair, the scheme in any case', async () => {
    expect(await call('GET', '/1/members')).toMatchObject({ status: 200, body: [] });
    const lower = `basic ${Buffer.from(`${publicKey}:${privateKey}`).toString('base64')}`;
    expect(await call('GET', '/1/members', { auth: lower })).toMatchObject({ status: 200, body: [] });
  });

  it('refuses a key once it is revoked, and keeps accepting the others', async () => {
    const second = secondKey();
    const auth2 = basic(second.publicKey, second.privateKey);
    expect((await call('GET', '/1/fields', { auth: auth2 })).status).toBe(200);

    const revoke = await call('DELETE', `/1/keys/${second.keyId}`);
    expect(revoke).toMatchObject({ status: 200, body: true, text: 'true' });

    const res = await call('GET', '/1/fields', { auth: auth2 });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid API key pair' });
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="amsg"');
    expect((await call('GET', '/1/fields')).status).toBe(200);
  });

  // The key check and the field catalog are memoized on writes to the tables they
  // read (TableMemo), so member writes leave them cached: what changes a key, a
  // user or a field, here or on another connection, still reaches the next request.
  it('sees a key revoked, a field created or deleted, after member writes and from another connection', async () => {
    const second = secondKey();
    const auth2 = basic(second.publicKey, second.privateKey);
    expect((await call('POST', '/1/members/add', { auth: auth2, body: json({ email: 'a@x.org' }) })).status).toBe(200);
    expect((await call('DELETE', `/1/keys/${second.keyId}`)).status).toBe(200);
    expect((await call('POST', '/1/members/add', { auth: auth2, body: json({ email: 'b@x.org' }) })).status).toBe(401);

    const third = secondKey('third');
    const auth3 = basic(third.publicKey, third.privateKey);
    expect((await call('GET', '/1/members', { auth: auth3 })).status).toBe(200);
    await addMember('c@x.org');
    const other = openDb(join(dir, 'amsg.db'));
    try {
      other.prepare('UPDATE api_keys SET revoked_at = ? WHERE public_key = ?').run(T0, third.publicKey);
    } finally {
      other.close();
    }
    expect((await call('GET', '/1/members', { auth: auth3 })).status).toBe(401);

    const city = await call('POST', '/1/fields', { body: json({ shortcut_name: 'city', display_name: 'City', field_type: 'text' }) });
    expect(city.status, city.text).toBe(200);
    expect((await call('POST', '/1/members/add', { body: json({ email: 'd@x.org', fields: { city: 'Oslo' } }) })).status).toBe(200);
    expect((await call('DELETE', `/1/fields/${city.body}`)).status).toBe(200);
    const gone = await call('POST', '/1/members/add', { body: json({ email: 'e@x.org', fields: { city: 'Oslo' } }) });
    expect(gone.status, gone.text).toBe(400);
  });

  it('does not keep a field catalog read inside a rolled-back write', async () => {
    const ctx = { db, clock, actor: localActor(db, 1), accountId: 1 };
    expect(() =>
      db.transaction(() => {
        createField(ctx, { shortcut_name: 'zone', display_name: 'Zone', field_type: 'text' });
        expect(FieldCatalog.of(ctx).toStored({ zone: 'x' })).toBeTruthy();
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    // Another field write after the rollback: a version kept in a table would be back
    // where the rolled-back catalog was cached.
    expect(
      (await call('POST', '/1/fields', { body: json({ shortcut_name: 'city', display_name: 'City', field_type: 'text' }) })).status,
    ).toBe(200);
    const res = await call('POST', '/1/members/add', { body: json({ email: 'z@x.org', fields: { zone: 'x' } }) });
    expect(res.status, res.text).toBe(400);
  });

  it('does not touch the store for an unauthenticated write', async () => {
    const res = await call('POST', '/1/members/add', { auth: null, body: json({ email: 'a@x.org' }) });
    expect(res.status).toBe(401);
    expect((await call('GET', '/1/members?count=true')).body).toBe(0);
  });
});

// ------------------------------------------------------------------ bodies

describe('request bodies', () => {
  const field = { shortcut_name: 'city', field_type: 'text', display_name: 'City' };

  it('creates with 200 (not 201) and a bare integer id', async () => {
    const res = await call('POST', '/1/fields', { body: json(field), headers: { 'content-type': 'application/json' } });
    await expectFieldCreated(res);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('reads the body as JSON without a Content-Type', async () => {
    // A BufferSource body makes fetch send no Content-Type at all.
    await expectFieldCreated(await call('POST', '/1/fields', { body: new TextEncoder().encode(json(field)) }));
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'reads the body as JSON when the Content-Type says %s',
    async (type) => {
      await expectFieldCreated(await call('POST', '/1/fields', { body: json(field), headers: { 'content-type': type } }));
    },
  );

  it('takes an empty body as {}', async () => {
    await addMember('a@x.org');
    const res = await call('PUT', '/1/members/email/optout/a@x.org');
    expect(res).toMatchObject({ status: 200, body: true, text: 'true' });
    expect((await call('GET', '/1/members/email/a@x.org')).body).toMatchObject({ status: 'opt-out', member_status_id: 'o' });

    // …with a form Content-Type and a body of only white space too.
    await addMember('b@x.org');
    const blank = await call('PUT', '/1/members/email/optout/b@x.org', {
      body: ' \n',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(blank).toMatchObject({ status: 200, body: true });
  });

  it('an empty body is {} also where fields are required: the answer names the missing one', async () => {
    const res = await call('POST', '/1/fields');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'shortcut_name: is required', field: 'shortcut_name' });
  });

  it('answers 400 JSON naming the problem for a body that is not JSON', async () => {
    const before = (await call('GET', '/1/fields')).body;
    const res = await call('POST', '/1/fields', { body: '{"shortcut_name": "city",', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(/^request body is not valid JSON \(.+\)$/);

    // A form-encoded body is not read as a form: it is invalid JSON like any other text.
    const form = await call('POST', '/1/fields', {
      body: 'shortcut_name=city&field_type=text',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(400);
    expect(form.body.error).toMatch(/^request body is not valid JSON \(/);
    expect((await call('GET', '/1/fields')).body).toEqual(before);
  });

  it('answers 400 for JSON that is not an object', async () => {
    expect(await call('POST', '/1/fields', { body: '[1]' })).toMatchObject({
      status: 400,
      body: { error: 'must be a JSON object, got an array' },
    });
    // A JSON null is {}, as the real service's clients send it for "no parameters".
    expect(await call('POST', '/1/fields', { body: 'null' })).toMatchObject({
      status: 400,
      body: { error: 'shortcut_name: is required', field: 'shortcut_name' },
    });
  });

  it('answers 413 JSON for a body over 10 MB with a Content-Length', async () => {
    const res = await call('POST', '/1/fields', { body: Buffer.alloc(BODY_LIMIT + 1, 0x20) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: `request body exceeds the 10 MB limit (${BODY_LIMIT + 1} bytes)` });
    // The server is still there for the next request.
    expect((await call('GET', '/1/fields')).status).toBe(200);
  });

  it('answers 413 JSON (not a reset connection) for a chunked body that grows over 10 MB', async () => {
    // Sent without a length, so the server finds out only while reading; the client is
    // still sending when the answer comes.
    for (let round = 0; round < 3; round++) {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= BODY_LIMIT + 2 * 1024 * 1024) return c.close();
          sent += 64 * 1024;
          c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        },
      });
      const res = await call('POST', '/1/fields', { body });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'request body exceeds the 10 MB limit' });
    }
    expect((await call('GET', '/1/fields')).status).toBe(200);
  });

  it('accepts a body of exactly 10 MB (it is {} here, so the answer is about the missing field)', async () => {
    const res = await call('POST', '/1/fields', { body: Buffer.alloc(BODY_LIMIT, 0x20) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'shortcut_name: is required', field: 'shortcut_name' });
  });
});

// ------------------------------------------------------------------ e-mail in the path

describe('e-mail addresses in the path', () => {
  it('finds a member by a percent-encoded or a raw address, and a + stays a plus', async () => {
    const id = await addMember('a+b@x.org');
    for (const path of ['/1/members/email/a%2Bb%40x.org', '/1/members/email/a+b@x.org', '/1/members/email/a+b%40x.org']) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toMatchObject({ member_id: id, email: 'a+b@x.org', member_since: T0D });
    }
  });

  it('a raw + is not read as a space', async () => {
    await addMember('a+b@x.org');
    // Were + a space, "a c@x.org" would be refused as an invalid address (400).
    const res = await call('GET', '/1/members/email/a+c@x.org');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'member a+c@x.org not found' });
  });

  it('opts out by a raw address with a plus, with no body', async () => {
    const id = await addMember('first+tag@x.org');
    const res = await call('PUT', '/1/members/email/optout/first+tag@x.org');
    expect(res).toMatchObject({ status: 200, body: true });
    expect((await call('GET', `/1/members/${id}`)).body).toMatchObject({ member_status_id: 'o' });
  });

  it('decodes once: a doubly encoded @ is not an address', async () => {
    await addMember('a@x.org');
    const res = await call('GET', '/1/members/email/a%2540x.org');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'email: "a%40x.org" is not a valid e-mail address', field: 'email' });
  });
});

// ------------------------------------------------------------------ routing

describe('routing errors', () => {
  it('answers 404 {error} for an unknown route', async () => {
    const res = await call('GET', '/1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'no such operation: GET /1/nothing-here' });
  });

  it('answers 404 for the root path and a path with no account', async () => {
    expect(await call('GET', '/')).toMatchObject({ status: 404, body: { error: 'no such operation: GET /' } });
    expect((await call('POST', '/members/add', { body: json({ email: 'a@x.org' }) })).status).toBe(404);
  });

  it('answers 405 with the allowed methods, in the body and in an Allow header', async () => {
    const res = await call('PATCH', '/1/members');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: 'PATCH is not allowed on /1/members (allowed: GET, POST, DELETE)' });
    expect(res.headers.get('allow')).toBe('GET, POST, DELETE');

    const post = await call('POST', '/1/members/1', { body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, PUT, DELETE');
  });

  it('answers 400 naming account_id when it is not an id', async () => {
    const res = await call('GET', '/abc/members');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'account_id: must be a positive integer id, got "abc"', field: 'account_id' });
  });

  it("answers 404 for another account's id, exactly as for an account that does not exist", async () => {
    db.prepare(`INSERT INTO accounts (account_id, account_name, created_at) VALUES (2, 'Other', '2026-01-01T00:00:00.000000')`).run();
    db.prepare(
      `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at)
       VALUES (2, 'owner@other.org', 'owner', 1, 1, '2026-01-01T00:00:00.000000')`,
    ).run();
    const other = createKey({ db, clock, actor: localActor(db, 2), accountId: 2 }, {});
    const otherAuth = basic(other.public_key, other.private_key);
    expect(await call('POST', '/2/members/add', { auth: otherAuth, body: json({ email: 'theirs@x.org' }) })).toMatchObject({
      status: 200,
      body: { member_id: 1 },
    });

    expect(await call('GET', '/2/members')).toMatchObject({ status: 404, body: { error: 'account 2 not found' } });
    expect(await call('GET', '/2/members/1')).toMatchObject({ status: 404, body: { error: 'account 2 not found' } });
    expect(await call('GET', '/99/members')).toMatchObject({ status: 404, body: { error: 'account 99 not found' } });
    // …and the other way round.
    expect(await call('GET', '/1/members', { auth: otherAuth })).toMatchObject({
      status: 404,
      body: { error: 'account 1 not found' },
    });
    expect((await call('GET', '/2/members/1', { auth: otherAuth })).body).toMatchObject({ email: 'theirs@x.org' });
  });

  it('lets an HQ account reach its sub-account', async () => {
    db.prepare(
      `INSERT INTO accounts (account_id, account_name, parent_account_id, created_at) VALUES (3, 'Sub', 1, '2026-01-01T00:00:00.000000')`,
    ).run();
    expect(await call('GET', '/3/members')).toMatchObject({ status: 200, body: [] });
  });
});

// ------------------------------------------------------------------ error and success shapes

describe('answer shapes', () => {
  it('every error is a JSON object with a string error, whatever went wrong', async () => {
    await addMember('a@x.org');
    const cases: [string, string, BodyInit | undefined, number][] = [
      ['GET', '/1/members/999', undefined, 404],
      ['GET', '/1/members/0', undefined, 400],
      ['GET', '/1/members?start=x', undefined, 400],
      ['GET', '/1/members/email/not-an-address', undefined, 400],
      ['POST', '/1/members/add', json({ email: 7, surprise: 1 }), 400],
      ['POST', '/1/fields', json({ shortcut_name: '1x', field_type: 'text', display_name: 'X' }), 400],
      ['PUT', '/1/fields/77', json({ display_name: 'X' }), 404],
      ['DELETE', '/1/keys/999', undefined, 404],
      ['GET', '/1/groups/12', undefined, 404],
      ['PUT', '/1/members', '{}', 405],
      ['GET', '/1/no/such/thing', undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await call(method, path, { body });
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(status);
    }
  });

  it('successful answers are JSON values without a top-level error key, scalars included', async () => {
    const id = await addMember('a@x.org');
    const answers = [
      await call('GET', '/1/members'),
      await call('GET', `/1/members/${id}`),
      await call('GET', '/1/members?count=true'),
      await call('GET', `/1/members/${id}/groups`),
      await call('PUT', '/1/members/email/optout/a@x.org'),
      await call('GET', '/1/keys'),
      await call('GET', '/1/webhooks/events'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(answers[2].text).toBe('1');
    expect(answers[4].text).toBe('true');
  });
});

// ------------------------------------------------------------------ openapi.json

describe('GET /openapi.json', () => {
  it('is public, and describes the route table as OpenAPI 3.1 with the extensions marked', async () => {
    const res = await call('GET', '/openapi.json', { auth: null });
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.basic).toEqual({ type: 'http', scheme: 'basic' });
    const member = doc.paths['/{account_id}/members/{member_id}'];
    expect(Object.keys(member).sort()).toEqual(['delete', 'get', 'put']);
    expect(member.get.parameters.slice(0, 2)).toEqual([
      { name: 'account_id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
      { name: 'member_id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
    ]);
    expect(doc.paths['/{account_id}/groups'].get['x-amsg-extension']).toBe(true);
    expect(doc.paths['/{account_id}/keys'].post['x-amsg-extension']).toBe(true);
    expect(doc.paths['/{account_id}/members'].get).not.toHaveProperty('x-amsg-extension');
    expect(doc.paths['/{account_id}/fields'].post).not.toHaveProperty('x-amsg-extension');
    expect(doc.paths['/{account_id}/fields'].post.requestBody.content['application/json'].schema.required).toEqual([
      'shortcut_name',
      'field_type',
      'display_name',
    ]);
  });

  it('is the same with credentials, even wrong ones, and with a query string', async () => {
    const plain = await call('GET', '/openapi.json', { auth: null });
    const withKey = await call('GET', '/openapi.json');
    const wrongKey = await call('GET', '/openapi.json?x=1', { auth: basic('nope', 'nope') });
    expect(withKey.text).toBe(plain.text);
    expect(wrongKey).toMatchObject({ status: 200, text: plain.text });
  });

  it('is only a GET: another method needs credentials like any route', async () => {
    const res = await call('POST', '/openapi.json', { auth: null, body: '{}' });
    expect(res.status).toBe(401);
  });
});

// ------------------------------------------------------------------ rate limit

describe('--rate-limit', () => {
  it('answers the 4th request of a minute with 403 Rate Limit Exceeded and a Retry-After, per key', async () => {
    const limited = await startServer({ db, clock, host: '127.0.0.1', port: 0, rateLimit: 3 });
    extra.push(limited);
    const second = secondKey();
    const auth2 = basic(second.publicKey, second.privateKey);

    for (let i = 0; i < 3; i++) expect((await call('GET', '/1/members', { base: limited })).status).toBe(200);
    const fourth = await call('GET', '/1/members', { base: limited });
    expect(fourth.status).toBe(403);
    expect(fourth.text).toBe('{"error":"Rate Limit Exceeded"}');
    const retryAfter = Number(fourth.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // A refused write does nothing.
    const write = await call('POST', '/1/members/add', { base: limited, body: json({ email: 'a@x.org' }) });
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ error: 'Rate Limit Exceeded' });

    // Another key has its own allowance.
    for (let i = 0; i < 3; i++) expect((await call('GET', '/1/members', { base: limited, auth: auth2 })).body).toEqual([]);
    expect((await call('GET', '/1/members', { base: limited, auth: auth2 })).status).toBe(403);

    // The shared server has no limit.
    for (let i = 0; i < 5; i++) expect((await call('GET', '/1/members')).status).toBe(200);
  });

  it('does not count unauthenticated requests or openapi.json against a key', async () => {
    const limited = await startServer({ db, clock, host: '127.0.0.1', port: 0, rateLimit: 3 });
    extra.push(limited);
    for (let i = 0; i < 5; i++) {
      expect((await call('GET', '/1/members', { base: limited, auth: null })).status).toBe(401);
      expect((await call('GET', '/openapi.json', { base: limited, auth: null })).status).toBe(200);
    }
    for (let i = 0; i < 3; i++) expect((await call('GET', '/1/members', { base: limited })).status).toBe(200);
    expect((await call('GET', '/1/members', { base: limited })).status).toBe(403);
  });
});

// ------------------------------------------------------------------ keep-alive

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * One HTTP/1.1 connection driven by hand, so a test knows which connection each
 * request went on: requests are written raw and answers read one at a time.
 */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiter?: () => void;
  /** The server ended its side (a FIN), or the connection closed. */
  ended = false;
  error?: Error;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiter?.();
    });
    socket.on('end', () => {
      this.ended = true;
      this.waiter?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiter?.();
    });
    socket.on('error', (err) => {
      this.error = err;
      this.waiter?.();
    });
  }

  static open(base: RunningServer = server): Promise<RawConnection> {
    const { hostname, port } = new URL(base.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes a request: JSON text or bytes as its body, with a Content-Length unless headers say otherwise. */
  request(method: string, path: string, opts: { auth?: string | null; body?: string | Buffer; headers?: Record<string, string> } = {}) {
    const auth = opts.auth === undefined ? basic(publicKey, privateKey) : opts.auth;
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const headers: Record<string, string> = {
      host: 'localhost',
      ...(auth ? { authorization: auth } : {}),
      ...(body && !opts.headers?.['transfer-encoding'] ? { 'content-length': String(body.length) } : {}),
      ...opts.headers,
    };
    const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    this.socket.write(body ? Buffer.concat([Buffer.from(head), body]) : head);
  }

  private async until<T>(take: () => T | undefined, ms = 5_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = take();
      if (got !== undefined) return got;
      if (this.error) throw this.error;
      if (this.ended) throw new Error(`the server closed the connection (${this.buffer.length} bytes unread)`);
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
    }
  }

  /** The next answer (with a Content-Length, as every answer of this server has). */
  answer(): Promise<RawAnswer> {
    return this.until(() => {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      expect(headers['content-length'], statusLine).toMatch(/^\d+$/);
      const length = Number(headers['content-length']);
      if (this.buffer.length < end + 4 + length) return undefined;
      const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(text) };
    });
  }

  /** Resolves true once the server has ended the connection (false if it is still open after ms). */
  async closedByServer(ms = 3_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.ended;
  }

  close() {
    this.socket.destroy();
  }
}

/** Longer than the server reads a refused upload before it gives up on it (LINGER_MS, 2 s). */
const LINGER_BOUND_MS = 4_000;

describe('keep-alive across error answers', () => {
  /** A key of a user with role "user" (no bulk work: an import is a 403 for it). */
  function plainUserAuth() {
    const userId = Number(
      db
        .prepare(
          `INSERT INTO users (account_id, email, role, billing_access, manage_users, created_at)
           VALUES (1, 'clerk@x.org', 'user', 0, 0, '2026-01-01T00:00:00.000000')`,
        )
        .run().lastInsertRowid,
    );
    const key = createKey({ db, clock, actor: localActor(db, 1), accountId: 1 }, { user_id: userId });
    return basic(key.public_key, key.private_key);
  }

  it('every error answer on one reused connection says keep-alive, and the next request on it is answered', async () => {
    const clerk = plainUserAuth();
    const conn = await RawConnection.open();
    try {
      const cases: [string, () => void, number, unknown][] = [
        [
          'no credentials',
          () => conn.request('GET', '/1/fields', { auth: null }),
          401,
          { error: expect.stringMatching(/^authentication required/) },
        ],
        [
          'a wrong key, with a body',
          () => conn.request('POST', '/1/fields', { auth: basic(publicKey, 'nope'), body: '{"a": 1}' }),
          401,
          { error: 'invalid API key pair' },
        ],
        [
          'a wrong key, with a chunked body',
          () =>
            conn.request('POST', '/1/fields', {
              auth: basic(publicKey, 'nope'),
              headers: { 'transfer-encoding': 'chunked' },
              body: '8\r\n{"a": 1}\r\n0\r\n\r\n',
            }),
          401,
          { error: 'invalid API key pair' },
        ],
        [
          'a body that is not JSON',
          () => conn.request('POST', '/1/fields', { body: '{nope' }),
          400,
          { error: expect.stringMatching(/^request body is not valid JSON/) },
        ],
        [
          'an account that is not an id',
          () => conn.request('GET', '/abc/fields'),
          400,
          { error: 'account_id: must be a positive integer id, got "abc"', field: 'account_id' },
        ],
        ['an unknown route', () => conn.request('GET', '/1/nothing-here'), 404, { error: 'no such operation: GET /1/nothing-here' }],
        [
          'a record that is not there, with a body',
          () => conn.request('PUT', '/1/fields/77', { body: '{"display_name": "X"}' }),
          404,
          { error: 'field 77 not found' },
        ],
        [
          'a method the path does not take',
          () => conn.request('PATCH', '/1/members', { body: '{}' }),
          405,
          { error: 'PATCH is not allowed on /1/members (allowed: GET, POST, DELETE)' },
        ],
        [
          'an operation the key may not call',
          () => conn.request('POST', '/1/members/imports', { auth: clerk, body: '{}' }),
          403,
          { error: expect.stringMatching(/^forbidden: imports.open needs /), operation: 'imports.open', access: 'manager' },
        ],
      ];
      for (const [what, sendIt, status, body] of cases) {
        sendIt();
        const res = await conn.answer();
        expect({ what, status: res.status, body: res.body, connection: res.headers.connection }).toEqual({
          what,
          status,
          body,
          connection: 'keep-alive',
        });
        conn.request('GET', '/1/members');
        expect(await conn.answer(), what).toMatchObject({ status: 200, body: [], headers: { connection: 'keep-alive' } });
      }
      expect(conn.ended).toBe(false);
      expect(conn.error).toBeUndefined();
    } finally {
      conn.close();
    }
  });

  it('a rate-limited answer (403) keeps the connection, and so does one with a body', async () => {
    const limited = await startServer({ db, clock, host: '127.0.0.1', port: 0, rateLimit: 1 });
    extra.push(limited);
    const conn = await RawConnection.open(limited);
    try {
      conn.request('GET', '/1/fields');
      expect(await conn.answer()).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });
      for (const body of [undefined, json({ email: 'a@x.org' })]) {
        conn.request(body ? 'POST' : 'GET', body ? '/1/members/add' : '/1/fields', { body });
        expect(await conn.answer()).toMatchObject({
          status: 403,
          body: { error: 'Rate Limit Exceeded' },
          headers: { connection: 'keep-alive' },
        });
      }
      conn.request('GET', '/1/fields', { auth: null });
      expect(await conn.answer()).toMatchObject({ status: 401, headers: { connection: 'keep-alive' } });
      expect(conn.ended).toBe(false);
    } finally {
      conn.close();
    }
  });

  it('a 413 says connection: close, and the server then closes the connection without a reset', async () => {
    // Declared too long: answered before the body is read, while it is still being sent.
    const declared = await RawConnection.open();
    try {
      declared.request('POST', '/1/fields', { headers: { 'content-length': String(BODY_LIMIT + 1) } });
      declared.socket.write(Buffer.alloc(1024 * 1024, 0x20));
      const res = await declared.answer();
      expect(res).toMatchObject({
        status: 413,
        body: { error: `request body exceeds the 10 MB limit (${BODY_LIMIT + 1} bytes)` },
        headers: { connection: 'close' },
      });
      // The rest of the body is read and dropped; once it is all there, the connection closes.
      declared.socket.write(Buffer.alloc(BODY_LIMIT + 1 - 1024 * 1024, 0x20));
      expect(await declared.closedByServer()).toBe(true);
      expect(declared.error).toBeUndefined();
    } finally {
      declared.close();
    }

    // Chunked: found too long while reading.
    const chunked = await RawConnection.open();
    try {
      chunked.request('GET', '/1/fields');
      expect(await chunked.answer()).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });
      chunked.request('POST', '/1/fields', { headers: { 'transfer-encoding': 'chunked' } });
      const piece = Buffer.concat([Buffer.from(`${(64 * 1024).toString(16)}\r\n`), Buffer.alloc(64 * 1024, 0x20), Buffer.from('\r\n')]);
      for (let sent = 0; sent <= BODY_LIMIT; sent += 64 * 1024) chunked.socket.write(piece);
      const res = await chunked.answer();
      expect(res).toMatchObject({ status: 413, body: { error: 'request body exceeds the 10 MB limit' }, headers: { connection: 'close' } });
      chunked.socket.write(Buffer.concat([piece, Buffer.from('0\r\n\r\n')]));
      expect(await chunked.closedByServer()).toBe(true);
      expect(chunked.error).toBeUndefined();
    } finally {
      chunked.close();
    }

    // The server takes new connections as before.
    expect((await call('GET', '/1/fields')).status).toBe(200);
  });

  it("with the CLI's HTTP client (an undici pool of one connection), the request after each 413 is answered", async () => {
    // A server in another process (the built `amsg serve`): in this one, the client
    // would always read the server's close along with the answer, and never race it.
    const { spawn } = await import('node:child_process');
    const { Pool } = await import('undici');
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../../bin/amsg.js', import.meta.url)), 'serve', '--port', '0', '--db', join(dir, 'served.db')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    try {
      const deadline = Date.now() + 15_000;
      while (!/\n/.test(out) || !/shown only now\): \S+/.test(err)) {
        if (Date.now() > deadline) throw new Error(`serve did not start: ${out} ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const [pub, priv] = /shown only now\): (\S+)/.exec(err)![1].split(':');
      const pool = new Pool(out.trim(), { connections: 1 });
      const headers = { authorization: basic(pub, priv) };
      const overLimit = async function* () {
        for (let sent = 0; sent <= BODY_LIMIT; sent += 64 * 1024) yield Buffer.alloc(64 * 1024, 0x20);
      };
      const outcomes: string[] = [];
      try {
        for (let round = 0; round < 15; round++) {
          const refused = await pool.request({ method: 'POST', path: '/1/fields', headers, body: overLimit() });
          outcomes.push(`${refused.statusCode} ${await refused.body.text()}`);
          // Sent at once: before the fix, the pool reused the connection the server was closing.
          outcomes.push(
            await pool.request({ method: 'GET', path: '/1/members', headers }).then(
              async (r) => `${r.statusCode} ${await r.body.text()}`,
              (e: { code?: string }) => `failed: ${e.code}`,
            ),
          );
        }
      } finally {
        await pool.close();
      }
      expect(outcomes).toEqual(Array.from({ length: 15 }, () => ['413 {"error":"request body exceeds the 10 MB limit"}', '200 []']).flat());
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('an over-limit body is not read for a request without a valid key: 401 with connection: close', async () => {
    const conn = await RawConnection.open();
    try {
      conn.request('POST', '/1/fields', { auth: null, headers: { 'content-length': String(BODY_LIMIT + 1) } });
      expect(await conn.answer()).toMatchObject({ status: 401, headers: { connection: 'close' } });
      expect(await conn.closedByServer(LINGER_BOUND_MS)).toBe(true);
    } finally {
      conn.close();
    }
  });

  it('a request the HTTP parser refuses on a reused connection is answered 400 JSON with connection: close', async () => {
    const conn = await RawConnection.open();
    try {
      conn.request('GET', '/1/fields');
      expect(await conn.answer()).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });
      conn.socket.write('GET /1/fields HTTP/1.1\r\nhost: localhost\r\nbad header\r\n\r\n');
      expect(await conn.answer()).toEqual({
        status: 400,
        headers: expect.objectContaining({ connection: 'close', 'content-type': 'application/json; charset=utf-8' }),
        body: { error: expect.stringMatching(/^malformed HTTP request/) },
      });
      expect(await conn.closedByServer()).toBe(true);
    } finally {
      conn.close();
    }
    // An answer to HEAD has no body, even this one: a client would read one as the start of its next answer.
    const head = await RawConnection.open();
    try {
      const bytes: Buffer[] = [];
      head.socket.on('data', (c: Buffer) => bytes.push(c));
      head.socket.write('HEAD /1/fields?start=\xe9 HTTP/1.1\r\nhost: localhost\r\n\r\n', 'latin1');
      expect(await head.closedByServer()).toBe(true);
      const text = Buffer.concat(bytes).toString('latin1');
      expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(text).toMatch(/\r\nconnection: close\r\n/);
      expect(text.endsWith('\r\n\r\n')).toBe(true);
    } finally {
      head.close();
    }
  });
});

// ------------------------------------------------------------------ shutdown

describe('close()', () => {
  it('resolves promptly while a keep-alive connection is open', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const get = () =>
        new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
          const req = http.get(`${server.url}/1/members`, { agent, headers: { authorization: basic(publicKey, privateKey) } }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body, reused: req.reusedSocket }));
          });
          req.on('error', reject);
        });
      expect(await get()).toEqual({ status: 200, body: '[]', reused: false });
      expect(await get()).toEqual({ status: 200, body: '[]', reused: true });
      // The connection is idle and kept alive; the server's keep-alive timeout is 5 s.
      expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);

      const started = Date.now();
      const closed = await Promise.race([
        server.close().then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still open'), 2_000)),
      ]);
      expect(closed).toBe('closed');
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(fetch(`${server.url}/openapi.json`)).rejects.toThrow();
    } finally {
      agent.destroy();
    }
  });

  it('lets a request in flight finish before it resolves', async () => {
    // The upload is in progress (its body not yet complete) when close() is called.
    let finishUpload!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"shortcut_name": "city", '));
        finishUpload = () => {
          c.enqueue(new TextEncoder().encode('"field_type": "text", "display_name": "City"}'));
          c.close();
        };
      },
    });
    const pending = call('POST', '/1/fields', { body });
    await new Promise((r) => setTimeout(r, 100));
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(false);
    finishUpload();
    const created = await pending;
    expect(created.status).toBe(200);
    expect(created.text).toMatch(/^[1-9]\d*$/);
    // …and its connection is not left to the keep-alive timeout (5 s) afterwards.
    const answered = Date.now();
    await closing;
    expect(closed).toBe(true);
    expect(Date.now() - answered).toBeLessThan(1_000);
  });

  it('resolves at once after a refused over-limit upload that the client left hanging', async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        // Stops before the end, without closing: the server is left waiting for more.
        if (sent > BODY_LIMIT + 1024 * 1024) return new Promise(() => {});
        sent += 64 * 1024;
        c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    expect((await call('POST', '/1/fields', { body })).status).toBe(413);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('amsg serve: the background job runner', () => {
  // Jobs run in slices of a few milliseconds (JOB_SLICE_MS) one after the other while
  // work is left, so a long import goes on to the end between requests, and closing
  // the server stops the next slice.
  it('runs a staged import of several batches to the end, answering requests meanwhile, and closes mid-import', async () => {
    const { serve, JOB_SLICE_MS } = await import('../../src/server/index.js');
    expect(JOB_SLICE_MS).toBeLessThanOrEqual(10);
    const running = await serve({ db: join(dir, 'served.db'), host: '127.0.0.1', port: 0 });
    const auth = basic(running.created!.public_key, running.created!.private_key);
    const members = Array.from({ length: 4_500 }, (_, i) => ({ email: `m${i}@x.org` }));
    const staged = await call('POST', '/1/members', { auth, base: running, body: json({ members }) });
    expect(staged.status, staged.text).toBe(200);
    const importId = staged.body.import_id;
    expect((await call('GET', '/1/members?count=true', { auth, base: running })).status).toBe(200);
    let status = '';
    for (let i = 0; i < 200 && status !== 'o'; i++) {
      status = (await call('GET', `/1/members/imports/${importId}`, { auth, base: running })).body.status;
      if (status !== 'o') await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe('o');
    expect((await call('GET', '/1/members?count=true', { auth, base: running })).body).toBe(4_500);

    const again = await call('POST', '/1/members', {
      auth,
      base: running,
      body: json({ members: members.map((m) => ({ email: `n${m.email}` })) }),
    });
    expect(again.status).toBe(200);
    await running.close();
  });
});

describe('an answer that cannot be written', () => {
  it('is a 500 that says the write was kept, and a line in the log; the server goes on', async () => {
    const lines: string[] = [];
    const logged = await startServer({ db, clock, host: '127.0.0.1', port: 0, log: (line) => lines.push(line) });
    extra.push(logged);
    // A header node refuses, on the answer of a write (the router encodes what comes from the request,
    // so it is put here by hand): the server is the last guard.
    const handle = Router.prototype.handle;
    const spy = vi.spyOn(Router.prototype, 'handle').mockImplementation(function (this: Router, req) {
      const bad = (r: ApiResponse): ApiResponse => (req.path === '/1/members/add' ? { ...r, headers: { 'x-bad': '北京' } } : r);
      const res = handle.call(this, req);
      return res instanceof Promise ? res.then(bad) : bad(res);
    });
    try {
      const res = await call('POST', '/1/members/add', { body: json({ email: 'kept@example.com' }), base: logged });
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(
        /^internal error: the answer could not be written \(.*x-bad.*\); the request was carried out, and any changes it made were kept$/,
      );
      expect(lines).toEqual([
        expect.stringMatching(/^POST \/1\/members\/add: the answer could not be written \(.*\); any changes it made were kept$/),
      ]);
    } finally {
      spy.mockRestore();
    }
    expect((await call('GET', '/1/members/email/kept%40example.com', { base: logged })).status).toBe(200);
  });
});
