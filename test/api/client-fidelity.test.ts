/**
 * What the real service's own clients (the official Python and Ruby libraries) send,
 * and the answer shapes they parse: each as those clients send it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { IGNORED_HEADER } from '../../src/api/router.js';
import { openDb } from '../../src/store/db.js';
import { fixedClock } from '../../src/service/clock.js';
import { initialize } from '../../src/service/accounts/accounts.js';
import { startServer } from '../../src/server/server.js';
import { addMember, countRows, createField, createGroups, expectFieldError, getMember, ok, setStatus } from './util.js';

let s: TestService;
beforeEach(() => {
  s = makeService();
});
afterEach(() => s.close());

const HTML = '<p>Sale</p><a href="[% optout_url %]">opt out</a>';
const TEXT = 'Sale. Opt out: [% optout_url %]';
const mailing = (over: Record<string, unknown>) => ({
  name: 'N',
  subject: 'S',
  sender: 's@x.org',
  html_body: HTML,
  plaintext: TEXT,
  ...over,
});

const runJobs = () => {
  for (let i = 0; i < 1000 && advanceJobs(s.db, s.clock, 1_000); i++);
};

/** One request through the route table, headers included (TestService.call answers status and body only). */
async function raw(method: string, path: string, opts: { query?: Record<string, string>; body?: unknown; rawBody?: string } = {}) {
  const res = await s.router.handle({
    method,
    path,
    query: opts.query ?? {},
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    actor: s.actor,
  });
  return { status: res.status, body: res.body, headers: res.headers ?? {} };
}

describe('query booleans: True and False as Python writes them', () => {
  it('count=True, deleted=True, include_archived=True; False and false too; anything else is still a 400', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('GET', '/1/members', { query: { count: 'True' } })).toEqual({ status: 200, body: 1 });
    expect((await s.call('GET', '/1/members', { query: { count: 'False' } })).body).toHaveLength(1);
    const field = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await ok(s, 'DELETE', `/1/fields/${field}`);
    expect((await s.call('GET', `/1/fields/${field}`, { query: { deleted: 'True' } })).body.field_id).toBe(field);
    expect((await s.call('GET', `/1/fields/${field}`, { query: { deleted: 'FALSE' } })).status).toBe(404);
    expect(await s.call('GET', '/1/mailings', { query: { include_archived: 'True' } })).toEqual({ status: 200, body: [] });
    expectFieldError(await s.call('GET', '/1/members', { query: { count: 'yes' } }), 'count');
  });
});

describe('a JSON null body, or an empty one, is {}', () => {
  it('PUT /members/email/optout/{email} and POST /fields/{id}/clear', async () => {
    const id = await addMember(s, 'a@x.org');
    expect(await s.call('PUT', '/1/members/email/optout/a@x.org', { rawBody: 'null' })).toEqual({ status: 200, body: true });
    expect((await getMember(s, id)).member_status_id).toBe('o');
    const field = await createField(s, { shortcut_name: 'city', field_type: 'text' });
    await ok(s, 'PUT', `/1/members/${id}`, { body: { fields: { city: 'Oslo' } } });
    expect(await s.call('POST', `/1/fields/${field}/clear`, { rawBody: 'null' })).toEqual({ status: 200, body: true });
    expect((await getMember(s, id)).fields).toEqual({});
    expect(await s.call('POST', `/1/fields/${field}/clear`, { rawBody: '' })).toEqual({ status: 200, body: true });
    // The local transport hands the value over as it is: null is {} there too.
    expect(
      (await s.router.handle({ method: 'POST', path: `/1/fields/${field}/clear`, query: {}, json: null, actor: s.actor })).status,
    ).toBe(200);
  });
});

describe('explicit null for optional parameters', () => {
  it('is "not given" where the spec does not say "or null"; where it does, null is the value', async () => {
    expect(await s.call('POST', '/1/members/add', { body: { email: 'a@x.org', fields: null, group_ids: null, sms: null } })).toEqual({
      status: 200,
      body: { member_id: 1, added: true, status: 'a' },
    });
    const [g] = await createGroups(s, 'G');
    const created = await ok(s, 'POST', '/1/mailings', {
      body: mailing({ recipient_groups: [g], reply_to: null, send_at: null }),
    });
    expect((await ok(s, 'GET', `/1/mailings/${created.mailing_id}`)).reply_to).toBe(null);
    // subscription_order is "integer or null": null clears it, leaving it out keeps it.
    const sub = await ok(s, 'POST', '/1/subscriptions', { body: { name: 'News', subscription_order: 5 } });
    await ok(s, 'PUT', `/1/subscriptions/${sub.subscription_id}`, { body: { description: 'd' } });
    expect((await ok(s, 'GET', `/1/subscriptions/${sub.subscription_id}`)).subscription_order).toBe(5);
    await ok(s, 'PUT', `/1/subscriptions/${sub.subscription_id}`, { body: { subscription_order: null } });
    expect((await ok(s, 'GET', `/1/subscriptions/${sub.subscription_id}`)).subscription_order).toBe(null);
    // A required parameter is still required.
    expectFieldError(await s.call('POST', '/1/members/add', { body: { email: null } }), 'email');
  });
});

describe('parameters an operation does not know', () => {
  it('are ignored and named in a response header: member_id on PUT /members/{id}, filename on POST /members, event_type on PUT /triggers/{id}', async () => {
    const id = await addMember(s, 'a@x.org');
    expect(await raw('PUT', `/1/members/${id}`, { body: { member_id: id, email: 'b@x.org' } })).toEqual({
      status: 200,
      body: true,
      headers: { [IGNORED_HEADER]: 'member_id' },
    });
    expect((await getMember(s, id)).email).toBe('b@x.org');
    const bulk = await raw('POST', '/1/members', { body: { members: [{ email: 'c@x.org' }], filename: 'list.csv' } });
    expect([bulk.status, bulk.headers[IGNORED_HEADER]]).toEqual([200, 'filename']);
    const parent = await ok(s, 'POST', '/1/mailings', {
      body: { name: 'T', subject: 'S', sender: 's@x.org', html_body: '<p>x</p>', status: 'u' },
    });
    const trigger = await ok(s, 'POST', '/1/triggers', { body: { name: 'Signup', parent_mailing_id: parent.mailing_id, event_type: 's' } });
    expect(await raw('PUT', `/1/triggers/${trigger}`, { body: { name: 'Renamed', event_type: 's' } })).toEqual({
      status: 200,
      body: trigger,
      headers: { [IGNORED_HEADER]: 'event_type' },
    });
    // Nested and query keys are named by their path; an answer with nothing ignored has no header.
    const nested = await raw('POST', '/1/members/add', {
      query: { verbose: '1' },
      body: { email: 'd@x.org', sms: { phone_number: '+4722334455', carrier: 'x' } },
    });
    expect([nested.status, nested.headers[IGNORED_HEADER]]).toEqual([200, 'verbose, sms.carrier']);
    expect((await raw('GET', '/1/members')).headers).toEqual({});
    // An error answer names them too (a typo may be why it failed).
    const failed = await raw('PUT', '/1/members/99', { body: { member_id: 99 } });
    expect([failed.status, failed.headers[IGNORED_HEADER]]).toEqual([404, 'member_id']);
  });

  it('a known key with a bad value is still a 400, and so is an unknown member field inside fields', async () => {
    const id = await addMember(s, 'a@x.org');
    expectFieldError(await s.call('PUT', `/1/members/${id}`, { body: { member_id: id, status_to: 'x' } }), 'status_to');
    expect(await s.call('PUT', `/1/members/${id}`, { body: { fields: { colour: 'red' } } })).toEqual({
      status: 400,
      body: { error: 'fields.colour: unknown field "colour" (define it with amsg fields create)', field: 'fields.colour' },
    });
  });

  it('amsg serve --strict brings back the 400 naming the parameter', async () => {
    const strict = makeService(T0, { strict: true });
    try {
      const id = await addMember(strict, 'a@x.org');
      expect(await strict.call('PUT', `/1/members/${id}`, { body: { member_id: id } })).toEqual({
        status: 400,
        body: {
          error:
            'member_id: unknown parameter (expected one of: email, phone_number, status_to, fields, sms, field_triggers, subscriber_consent_tracking)',
          field: 'member_id',
        },
      });
    } finally {
      strict.close();
    }
  });

  it('on HTTP: the header, a line in the serve log, repeated query keys as one list; --strict answers 400', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amsg-fidelity-'));
    const db = openDb(join(dir, 'amsg.db'));
    const clock = fixedClock(T0);
    const init = initialize(db, clock);
    const auth = `Basic ${Buffer.from(`${init.public_key}:${init.private_key}`).toString('base64')}`;
    const log: string[] = [];
    const lenient = await startServer({ db, clock, port: 0, log: (line) => log.push(line) });
    const strict = await startServer({ db, clock, port: 0, strict: true, log: (line) => log.push(line) });
    try {
      const put = (base: string) =>
        fetch(`${base}/1/members/add`, {
          method: 'POST',
          headers: { authorization: auth },
          body: JSON.stringify({ email: 'a@x.org', member_id: 7 }),
        });
      const res = await put(lenient.url);
      expect([res.status, res.headers.get(IGNORED_HEADER), await res.json()]).toEqual([
        200,
        'member_id',
        { member_id: 1, added: true, status: 'a' },
      ]);
      expect(log).toEqual(['POST /1/members/add: ignored unknown parameters member_id (amsg serve --strict refuses them)']);
      const refused = await put(strict.url);
      expect([refused.status, refused.headers.get(IGNORED_HEADER), (await refused.json()).field]).toEqual([400, null, 'member_id']);
      expect(log).toHaveLength(1);
      // import_ids=1&import_ids=2, as Python's requests writes a list, is one list.
      for (let i = 0; i < 2; i++)
        await fetch(`${lenient.url}/1/members/imports`, { method: 'POST', headers: { authorization: auth }, body: '{}' }).then((r) =>
          r.json(),
        );
      for (const id of [1, 2])
        await fetch(`${lenient.url}/1/members/imports/${id}/finish`, { method: 'POST', headers: { authorization: auth }, body: '{}' });
      const deleted = await fetch(`${lenient.url}/1/members/imports/delete?import_ids=1&import_ids=2`, {
        method: 'DELETE',
        headers: { authorization: auth },
      });
      expect([deleted.status, await deleted.json()]).toEqual([200, true]);
      const list = await fetch(`${lenient.url}/1/members/imports`, { headers: { authorization: auth } });
      expect(await list.json()).toEqual([]);
    } finally {
      await lenient.close();
      await strict.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('member values nested under fields in the bulk POST /members', () => {
  it('are taken as the flat form of the spec is', async () => {
    await createField(s, { shortcut_name: 'first_name', field_type: 'text' });
    const { import_id } = await ok(s, 'POST', '/1/members', {
      body: {
        members: [
          { email: 'a@x.org', fields: { first_name: 'Ann' } },
          { email: 'b@x.org', first_name: 'Bob' },
        ],
      },
    });
    runJobs();
    expect(await ok(s, 'GET', `/1/members/imports/${import_id}`)).toMatchObject({ status: 'o', num_members_added: 2, num_errors: 0 });
    expect((await ok(s, 'GET', '/1/members/email/a@x.org')).fields).toEqual({ first_name: 'Ann' });
    expect((await ok(s, 'GET', '/1/members/email/b@x.org')).fields).toEqual({ first_name: 'Bob' });
  });
});

describe('note on POST /forwards/{mailing_id}/{member_id}', () => {
  it('is kept and shown above the forwarded content', async () => {
    const [g] = await createGroups(s, 'G');
    const ann = await addMember(s, 'ann@x.org', { group_ids: [g] });
    const { mailing_id } = await ok(s, 'POST', '/1/mailings', {
      body: mailing({ recipient_groups: [g] }),
    });
    runJobs();
    const fwd = await ok(s, 'POST', `/1/forwards/${mailing_id}/${ann}`, {
      body: { recipient_emails: ['pal@x.org'], note: 'Look <here> & [% tag %]' },
    });
    runJobs();
    const pal = (await ok(s, 'GET', '/1/members/email/pal@x.org')).member_id;
    const message = await ok(s, 'GET', `/1/mailings/${fwd.mailing_id}/messages/${pal}`);
    expect(message.plaintext).toMatch(/^Look <here> & \[ % tag %\]\n\nSale\. Opt out: https:\/\//);
    expect(message.html_body).toMatch(/^<p class="forward-note">Look &lt;here&gt; &amp; \[ % tag %\]<\/p>\n<p>Sale<\/p><a href="https:/);
  });
});

describe('DELETE /members/imports/delete?import_ids=…', () => {
  it('answers true; the records are gone from the list and by id, their members stay; unknown or running imports are refused', async () => {
    const stage = async (email: string) => (await ok(s, 'POST', '/1/members', { body: { members: [{ email }] } })).import_id;
    const [one, two, three] = [await stage('a@x.org'), await stage('b@x.org'), await stage('c@x.org')];
    expect(await s.call('DELETE', '/1/members/imports/delete', { query: { import_ids: `${one},${two}` } })).toEqual({
      status: 400,
      body: { error: `import_ids: import ${one}, ${two} is still running; delete it once it has finished`, field: 'import_ids' },
    });
    runJobs();
    expect(await s.call('DELETE', '/1/members/imports/delete', { query: { import_ids: `${one},${two}` } })).toEqual({
      status: 200,
      body: true,
    });
    expect((await ok(s, 'GET', '/1/members/imports')).map((i: { import_id: number }) => i.import_id)).toEqual([three]);
    expect((await s.call('GET', `/1/members/imports/${one}`)).status).toBe(404);
    expect(countRows(s, 'members')).toBe(3);
    expect((await s.call('DELETE', '/1/members/imports/delete', { query: { import_ids: '99' } })).status).toBe(404);
    expectFieldError(await s.call('DELETE', '/1/members/imports/delete', { query: { import_ids: 'x' } }), 'import_ids');
    expectFieldError(await s.call('DELETE', '/1/members/imports/delete', {}), 'import_ids');
  });
});

describe('answer shapes that clients parse', () => {
  it('POST /searches answers the bare search_id; PUT and DELETE answer true', async () => {
    await createField(s, { shortcut_name: 'city', field_type: 'text' });
    const criteria = ['and', ['member_field:city', 'eq', 'Oslo']];
    expect(await s.call('POST', '/1/searches', { body: { name: 'Oslo', criteria } })).toEqual({ status: 200, body: 1 });
    expect(await s.call('PUT', '/1/searches/1', { body: { name: 'Osloites' } })).toEqual({ status: 200, body: true });
    expect(await s.call('DELETE', '/1/searches/1')).toEqual({ status: 200, body: true });
  });

  it('DELETE /groups/{id}/members answers the number of members removed', async () => {
    const [g] = await createGroups(s, 'G');
    for (const email of ['a@x.org', 'b@x.org']) await addMember(s, email, { group_ids: [g] });
    expect(await s.call('DELETE', `/1/groups/${g}/members`)).toEqual({ status: 200, body: 2 });
  });

  it('add and signup of a member whom a forward created: an active member, status a (one of the three letters)', async () => {
    const [g] = await createGroups(s, 'G');
    const ann = await addMember(s, 'ann@x.org', { group_ids: [g] });
    const { mailing_id } = await ok(s, 'POST', '/1/mailings', {
      body: mailing({ recipient_groups: [g] }),
    });
    runJobs();
    await ok(s, 'POST', `/1/forwards/${mailing_id}/${ann}`, { body: { recipient_emails: ['pal@x.org', 'bud@x.org'] } });
    const pal = await ok(s, 'GET', '/1/members/email/pal@x.org');
    expect(pal.member_status_id).toBe('f');
    expect(await s.call('POST', '/1/members/add', { body: { email: 'pal@x.org' } })).toEqual({
      status: 200,
      body: { member_id: pal.member_id, added: false, status: 'a' },
    });
    expect((await getMember(s, pal.member_id)).member_status_id).toBe('a');
    const bud = await ok(s, 'GET', '/1/members/email/bud@x.org');
    expect(await s.call('POST', '/1/members/signup', { body: { email: 'bud@x.org', group_ids: [] } })).toEqual({
      status: 200,
      body: { member_id: bud.member_id, status: 'a' },
    });
  });

  it('GET /members/{id}/optout lists an opt-out made without a mailing with mailing_id null', async () => {
    const id = await addMember(s, 'a@x.org');
    await setStatus(s, [id], 'o');
    expect(await s.call('GET', `/1/members/${id}/optout`)).toEqual({
      status: 200,
      body: [{ timestamp: '@D:2026-03-04T05:06:07', mailing_id: null }],
    });
  });

  it('POST /members/purge: an unknown id is a 400 (the spec lists only 400), erasing nothing', async () => {
    await addMember(s, 'a@x.org');
    expect(await s.call('POST', '/1/members/purge', { body: { member_ids: [1, 7, 8] } })).toEqual({
      status: 400,
      body: { error: 'member_ids: no member 7, 8', field: 'member_ids' },
    });
    expect(countRows(s, 'members')).toBe(1);
  });
});

describe("GET /{account_id}/automation/workflows: the real service's path for its workflows", () => {
  it("answers the list the Python client's Workflow parses (workflow_id, name, status, created_at and updated_at as %Y-%m-%d %H:%M:%S.%f); amsg's /workflows stays", async () => {
    await createGroups(s, 'Buyers');
    const workflow = { name: 'Web buyers', match: { type: 'purchase' }, actions: [{ type: 'add_to_groups', group_ids: [1] }] };
    expect(await ok(s, 'POST', '/1/workflows', { body: workflow })).toBe(1);
    s.clock.set('2026-03-05T06:07:08.250Z');
    expect(await ok(s, 'POST', '/1/workflows', { body: { ...workflow, name: 'Shop buyers' } })).toBe(2);
    s.clock.set('2026-03-06T00:00:00.000Z');
    await ok(s, 'PUT', '/1/workflows/1', { body: { name: 'Web and app buyers' } });

    const first = {
      workflow_id: '1',
      name: 'Web and app buyers',
      status: 'active',
      created_at: '2026-03-04 05:06:07.000000',
      updated_at: '2026-03-06 00:00:00.000000',
    };
    const second = {
      workflow_id: '2',
      name: 'Shop buyers',
      status: 'active',
      created_at: '2026-03-05 06:07:08.250000',
      updated_at: '2026-03-05 06:07:08.250000',
    };
    expect(await ok(s, 'GET', '/1/automation/workflows')).toEqual([first, second]);
    // Paged and counted as every list of the real service (its client's paginated_get).
    expect(await ok(s, 'GET', '/1/automation/workflows', { query: { start: '1', end: '2' } })).toEqual([second]);
    expect(await ok(s, 'GET', '/1/automation/workflows', { query: { count: 'true' } })).toBe(2);
    // One by id, and the counts by state (the .NET and Node clients call both).
    expect(await ok(s, 'GET', '/1/automation/workflows/2')).toEqual(second);
    expect(await s.call('GET', '/1/automation/workflows/9')).toEqual({ status: 404, body: { error: 'workflow 9 not found' } });
    expect(await ok(s, 'GET', '/1/automation/counts')).toEqual({ account_id: 1, active: 2, inactive: 0, draft: 0 });
    // amsg's own path keeps its own shape: the match, the actions, the run count.
    expect(await ok(s, 'GET', '/1/workflows/1')).toMatchObject({
      workflow_id: 1,
      name: 'Web and app buyers',
      match: { type: 'purchase' },
      run_count: 0,
    });
  });
});
