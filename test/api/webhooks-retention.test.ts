import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, T0, type TestService } from '../helpers.js';
import { Deliverer, MAX_ATTEMPTS, backoffMs } from '../../src/service/webhooks/deliver.js';
import { advanceWebhookPrune, PRUNE_BATCH } from '../../src/service/webhooks/retention.js';
import { emitEvent, WEBHOOK_RETENTION_DAYS } from '../../src/service/webhooks/webhooks.js';
import { advanceJobs } from '../../src/service/jobs.js';
import { addMember, countRows, ok } from './util.js';
import { startReceiver } from './receiver.js';

/**
 * Retention of the outbox: settled deliveries go WEBHOOK_RETENTION_DAYS after they were
 * made (on the injected clock), their attempts and then their events with them; pending
 * ones never; a pruned delivery is said to be past retention.
 */

const DAY = 86_400_000;
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

let s: TestService;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let base: string;

beforeEach(async () => {
  s = makeService();
  // /ok answers 200, anything else 500.
  receiver = await startReceiver((req, res) => {
    req.resume();
    req.on('end', () => {
      res.statusCode = req.url === '/ok' ? 200 : 500;
      res.end();
    });
  });
  base = receiver.base;
});
afterEach(async () => {
  await receiver.close();
  s.close();
});

const register = async (event: string, path: string): Promise<number> =>
  ok(s, 'POST', '/1/webhooks', { body: { url: `${base}${path}`, event } });
const deliver = () => new Deliverer(s.db, s.clock).runFor(5_000);
const ids = (table: string, key: string) => s.db.prepare(`SELECT ${key} FROM ${table} ORDER BY ${key}`).pluck().all() as number[];
const prune = () => {
  for (let i = 0; i < 100 && advanceWebhookPrune(s.db, s.clock, 1_000); i++);
};

describe('webhook outbox retention', () => {
  it('is 30 days', () => {
    expect(WEBHOOK_RETENTION_DAYS).toBe(30);
  });

  it('deletes delivered and failed deliveries 30 days after they were made, their attempts and events with them; never a pending one', async () => {
    await register('member_add', '/ok');
    await register('group_create', '/fail');
    const member = await addMember(s, 'ada@example.com');
    await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'Gold' }] } });
    await deliver();
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      s.clock.advance(backoffMs(attempt));
      await deliver();
    }
    expect((await ok(s, 'GET', '/1/webhooks/deliveries/1')).status).toBe('o');
    expect((await ok(s, 'GET', '/1/webhooks/deliveries/2')).status).toBe('e');
    // A third, made later, stays pending: its receiver fails and it is not tried again here.
    await register('member_update', '/fail');
    s.clock.set(at(2 * DAY));
    await ok(s, 'PUT', `/1/members/${member}`, { body: { email: 'ada@example.org' } });
    await deliver();
    expect((await ok(s, 'GET', '/1/webhooks/deliveries/3')).status).toBe('p');
    expect(countRows(s, 'webhook_attempts')).toBe(1 + MAX_ATTEMPTS + 1);

    // A moment before the first two are 30 days old, the job runner keeps everything.
    s.clock.set(at(30 * DAY - 1_000));
    for (let i = 0; i < 100 && advanceJobs(s.db, s.clock, 1_000); i++);
    expect(ids('webhook_deliveries', 'delivery_id')).toEqual([1, 2, 3]);
    expect(ids('webhook_events', 'event_id')).toEqual([1, 2, 3]);

    s.clock.set(at(30 * DAY + 1_000));
    expect(advanceJobs(s.db, s.clock, 1_000)).toBe(false);
    expect(ids('webhook_deliveries', 'delivery_id')).toEqual([3]);
    expect(ids('webhook_events', 'event_id')).toEqual([3]);
    expect(countRows(s, 'webhook_attempts')).toBe(1);

    // Pending is kept however old it gets, its event with it.
    s.clock.set(at(400 * DAY));
    prune();
    expect(ids('webhook_deliveries', 'delivery_id')).toEqual([3]);
    expect(ids('webhook_events', 'event_id')).toEqual([3]);
    expect((await ok(s, 'GET', '/1/webhooks/deliveries')).map((d: { delivery_id: number }) => d.delivery_id)).toEqual([3]);

    // A pruned delivery is said to be past retention, by the look-up and by a replay;
    // an id never made is just not found.
    const pastRetention = (id: number) =>
      `delivery ${id} is past retention: delivered and failed deliveries are deleted 30 days after they were made, their events with them`;
    expect(await s.call('GET', '/1/webhooks/deliveries/1')).toEqual({ status: 404, body: { error: pastRetention(1) } });
    expect(await s.call('POST', '/1/webhooks/deliveries/2/replay')).toEqual({ status: 404, body: { error: pastRetention(2) } });
    expect(await s.call('POST', '/1/webhooks/deliveries/4/replay')).toEqual({ status: 404, body: { error: 'delivery 4 not found' } });
    expect(countRows(s, 'webhook_deliveries')).toBe(1);
  });

  it('keeps an event while a replay names it, and deletes an event whose webhook was deleted once it is past retention', async () => {
    await register('member_add', '/ok');
    await addMember(s, 'ada@example.com');
    await deliver();
    s.clock.set(at(20 * DAY));
    expect(await ok(s, 'POST', '/1/webhooks/deliveries/1/replay')).toBe(2);
    await deliver();
    expect((await ok(s, 'GET', '/1/webhooks/deliveries/2')).status).toBe('o');

    s.clock.set(at(30 * DAY + 1_000));
    prune();
    expect(ids('webhook_deliveries', 'delivery_id')).toEqual([2]);
    expect(ids('webhook_events', 'event_id')).toEqual([1]);

    // An event whose webhook is deleted before it is posted: no delivery names it any more.
    const hook = await register('group_create', '/ok');
    await ok(s, 'POST', '/1/groups', { body: { groups: [{ group_name: 'Gold' }] } });
    await ok(s, 'DELETE', `/1/webhooks/${hook}`);
    expect(ids('webhook_events', 'event_id')).toEqual([1, 2]);

    s.clock.set(at(50 * DAY + 2_000));
    prune();
    expect(ids('webhook_deliveries', 'delivery_id')).toEqual([]);
    expect(ids('webhook_events', 'event_id')).toEqual([2]);
    s.clock.set(at(60 * DAY + 2_000));
    prune();
    expect(ids('webhook_events', 'event_id')).toEqual([]);
  });

  it('prunes in bounded steps that resume where the last one stopped, each account marked with its own highest pruned delivery', async () => {
    await register('member_add', '/ok');
    const total = 2 * PRUNE_BATCH + 10;
    const ctx = { db: s.db, clock: s.clock, accountId: 1 };
    for (let i = 0; i < total; i++) {
      emitEvent(ctx, 'member_add', { members: [], member_count: 0, n: i });
      s.clock.advance(1_000);
    }
    // Settled as the deliverer leaves a delivered one (posting 410 would only be slower).
    s.db.prepare("UPDATE webhook_deliveries SET status = 'o', next_attempt_at = NULL").run();
    s.clock.set(at((WEBHOOK_RETENTION_DAYS + 1) * DAY));

    expect(advanceWebhookPrune(s.db, s.clock, 0)).toBe(true);
    expect(countRows(s, 'webhook_deliveries')).toBe(total - PRUNE_BATCH);
    expect(countRows(s, 'webhook_events')).toBe(total - PRUNE_BATCH);
    // Oldest first: what is left is the newest.
    expect(ids('webhook_deliveries', 'delivery_id')[0]).toBe(PRUNE_BATCH + 1);
    expect(s.db.prepare('SELECT account_id, pruned_through FROM webhook_retention').all()).toEqual([
      { account_id: 1, pruned_through: PRUNE_BATCH },
    ]);

    expect(advanceWebhookPrune(s.db, s.clock, 0)).toBe(true);
    expect(countRows(s, 'webhook_deliveries')).toBe(total - 2 * PRUNE_BATCH);
    expect(advanceWebhookPrune(s.db, s.clock, 0)).toBe(false);
    expect(countRows(s, 'webhook_deliveries')).toBe(0);
    expect(countRows(s, 'webhook_events')).toBe(0);
    expect(s.db.prepare('SELECT pruned_through FROM webhook_retention WHERE account_id = 1').pluck().get()).toBe(total);
    // Nothing left: a further call finds nothing and says so.
    expect(advanceWebhookPrune(s.db, s.clock, 1_000)).toBe(false);
  });
});
