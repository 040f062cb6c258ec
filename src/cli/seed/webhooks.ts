/**
 * Webhooks in a fixture, matched on event and URL (an account may point several
 * events at one URL, and one event at several URLs). Written last, so the seed's own
 * writes fire none of them.
 */
import type { Api } from '../../client/api.js';
import { allPages } from '../paging.js';
import type { Kind, SeedRun } from './kind.js';
import { norm } from './kind.js';
import * as v from './shape.js';

const webhookRecord = v.obj(
  {
    event: v.str(),
    url: v.str({ max: 2000, pattern: /^https?:\/\/\S+$/i, hint: 'must be an http:// or https:// URL' }),
    method: v.oneOf(['POST', 'GET', 'post', 'get'] as const),
    public_key: v.str({ max: 200 }),
    secret: v.str({ min: 16, max: 200 }),
  },
  ['event', 'url'],
);
type WebhookRecord = NonNullable<ReturnType<typeof webhookRecord>>;
interface WebhookRow {
  webhook_id: number;
  url: string;
  method: string;
  event: string;
  public_key: string | null;
}

/** The service's event names, read with the account's webhooks (a fixture's event is checked against them before a write). */
const eventNames = new WeakMap<Api, Set<string>>();

const keyOf = (w: { event: string; url: string }) => `${w.event} ${w.url}`;

export const webhooks: Kind<WebhookRecord, WebhookRow> = {
  name: 'webhooks',
  record: webhookRecord,
  key: keyOf,
  async existing(api, names) {
    if (names.size) {
      const events = await api.get<{ event_name: string }[]>('/webhooks/events');
      eventNames.set(api, new Set(events.map((e) => e.event_name)));
    }
    const rows = await allPages<WebhookRow>(api, '/webhooks');
    return new Map(rows.map((w) => [norm(keyOf(w)), w]));
  },
  check(run, r, path) {
    const known = eventNames.get(run.api);
    return known && !known.has(r.event)
      ? [[`${path}.event`, `must be one of the service's webhook events (${[...known].join(', ')}), got "${r.event}"`]]
      : [];
  },
  idOf: (w) => w.webhook_id,
  differs: (_run, r, w) =>
    (r.method !== undefined && r.method.toUpperCase() !== w.method) || (r.public_key !== undefined && r.public_key !== w.public_key),
  create: (run, r) => run.api.post<number>('/webhooks', r),
  // The secret is not read back (it is shown once): a fixture's secret applies to a webhook it creates.
  update: async (run, r, w) => void (await run.api.put(`/webhooks/${w.webhook_id}`, { method: r.method, public_key: r.public_key })),
};

export async function resetWebhooks(run: Pick<SeedRun, 'api'>): Promise<void> {
  await run.api.delete('/webhooks');
}
