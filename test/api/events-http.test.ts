/**
 * Event ingestion on real HTTP: the path with its `/v1/` segment, the 262,035-byte
 * limit refused before the body is read (declared, or counted as it arrives) with a
 * JSON 413, refusals as JSON 400s, and the event processed by `amsg serve`'s
 * background job runner.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serve } from '../../src/server/index.js';
import { INBOUND_LIMIT } from '../../src/service/events/workflows.js';

let dir: string;
let server: Awaited<ReturnType<typeof serve>>;
let auth: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'amsg-events-http-'));
  server = await serve({ db: join(dir, 'amsg.db'), port: 0 });
  auth = `Basic ${Buffer.from(`${server.created!.public_key}:${server.created!.private_key}`).toString('base64')}`;
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One request; `chunked` sends the body without a declared length. */
function send(method: string, path: string, body?: string, chunked = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const headers: http.OutgoingHttpHeaders = { authorization: auth, 'content-type': 'application/json' };
    if (body !== undefined && !chunked) headers['content-length'] = Buffer.byteLength(body);
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) {
      if (chunked) {
        // In pieces, so the server counts the size as it arrives.
        for (let i = 0; i < body.length; i += 65_536) req.write(body.slice(i, i + 65_536));
      } else req.write(body);
    }
    req.end();
  });
}

const padded = (size: number) => {
  const base = JSON.stringify({ email: 'ada@example.com', pad: '' });
  return JSON.stringify({ email: 'ada@example.com', pad: 'x'.repeat(size - base.length) });
};

describe('POST /v1/{account_id}/events over HTTP', () => {
  it('answers {"success": true}; amsg serve processes the event in the background', async () => {
    expect((await send('POST', '/1/members/add', JSON.stringify({ email: 'ada@example.com' }))).status).toBe(200);
    expect(await send('POST', '/1/groups', JSON.stringify({ groups: [{ group_name: 'Buyers' }] }))).toMatchObject({ status: 200 });
    const workflow = { name: 'W', match: { type: 'purchase' }, actions: [{ type: 'add_to_groups', group_ids: [1] }] };
    expect(await send('POST', '/1/workflows', JSON.stringify(workflow))).toMatchObject({ status: 200, body: 1 });
    const res = await send('POST', '/v1/1/events', JSON.stringify({ email: 'ada@example.com', type: 'purchase' }));
    expect([res.status, res.body, res.headers['content-type']]).toEqual([200, { success: true }, 'application/json; charset=utf-8']);
    let outcome: string | null = null;
    for (let i = 0; i < 100 && outcome === null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      outcome = (await send('GET', '/1/events/inbound/1')).body.outcome;
    }
    expect(outcome).toBe('ran');
    expect((await send('GET', '/1/groups/1/members')).body.map((m: any) => m.email)).toEqual(['ada@example.com']);
  });

  it('262,035 bytes are taken; one more is a JSON 413 that closes the connection, declared or chunked', async () => {
    expect(await send('POST', '/v1/1/events', padded(INBOUND_LIMIT))).toMatchObject({ status: 200, body: { success: true } });
    const declared = await send('POST', '/v1/1/events', padded(INBOUND_LIMIT + 1));
    expect([declared.status, declared.body, declared.headers.connection]).toEqual([
      413,
      { error: 'an event payload may be at most 262035 bytes (this one is 262036)', limit: 262_035 },
      'close',
    ]);
    const chunked = await send('POST', '/v1/1/events', padded(INBOUND_LIMIT + 70_000), true);
    expect([chunked.status, chunked.body]).toEqual([413, { error: 'an event payload may be at most 262035 bytes', limit: 262_035 }]);
    // Other routes keep the 10 MB limit (the padding is an unknown key, which they ignore).
    const other = await send('POST', '/1/members/add', JSON.stringify({ email: 'ada@example.com', pad: 'x'.repeat(INBOUND_LIMIT) }));
    expect(other.status).toBe(200);
    expect((await send('GET', '/1/events/inbound', undefined)).body).toHaveLength(1);
  });

  it('refusals are JSON 400s', async () => {
    expect(await send('POST', '/v1/1/events', '{"email": ')).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^request body is not valid JSON/) },
    });
    expect(await send('POST', '/v1/1/events', '[]')).toMatchObject({ status: 400, body: { field: 'body' } });
    expect(await send('POST', '/v1/1/events', '{"type": "x"}')).toMatchObject({
      status: 400,
      body: { error: 'email: an event must have an email key', field: 'email' },
    });
    expect(await send('GET', '/v1/1/events')).toMatchObject({ status: 405 });
  });
});
