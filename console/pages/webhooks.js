// /ui/{account}/webhooks: each webhook, and the delivery log (event, attempts, response status
// and time, payload), filtered to failures on request; a delivery can be replayed.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { queryOf, setQuery } from '../router.js';
import { ConfirmButton, ErrorBox, Facts, Loading, Page, Section, Table, useApi } from '../ui.js';
import { DELIVERY_STATUS, when } from '../format.js';

export function WebhooksPage({ account, search }) {
  const q = queryOf(search);
  const hooks = useApi((signal) => api(`/${account}/webhooks`, { signal }), [account]);
  const deliveries = useApi(
    (signal) =>
      api(`/${account}/webhooks/deliveries`, {
        query: { start: 0, end: 50, failed: q.failed ? 'true' : undefined, webhook_id: q.webhook },
        signal,
      }),
    [account, q.failed, q.webhook],
  );
  const [open, setOpen] = useState(null);
  const hookById = new Map((hooks.data ?? []).map((h) => [h.webhook_id, h]));
  return html`<${Page} name="webhooks" title="Webhooks" loaded=${hooks.data !== undefined && deliveries.data !== undefined}>
    <${ErrorBox} error=${hooks.error} />
    <${Table}
      label="Webhooks"
      rows=${hooks.data ?? []}
      rowKey=${(h) => h.webhook_id}
      empty=${hooks.data ? 'No webhooks.' : 'Loading…'}
      columns=${[
        { label: 'Id', num: true, render: (h) => h.webhook_id },
        { label: 'Event', render: (h) => h.event },
        { label: 'URL', render: (h) => html`<span class="mono">${h.method} ${h.url}</span>` },
        { label: 'Deliveries', render: (h) => html`<a href=${`/ui/${account}/webhooks?webhook=${h.webhook_id}`}>show only these</a>` },
      ]}
    />
    <${Section} title="Recent deliveries" id="deliveries-h">
      <form class="filters" onSubmit=${(e) => e.preventDefault()}>
        <label><input type="checkbox" checked=${!!q.failed} onChange=${(e) => setQuery({ ...q, failed: e.currentTarget.checked ? '1' : '' })} data-failed-filter /> Failures only</label>
        ${q.webhook ? html`<span>Webhook ${q.webhook} · <a href=${`/ui/${account}/webhooks${q.failed ? '?failed=1' : ''}`}>all webhooks</a></span>` : null}
      </form>
      <${ErrorBox} error=${deliveries.error} />
      ${
        deliveries.data
          ? html`<${Table}
            label="Webhook deliveries"
            rows=${deliveries.data}
            rowKey=${(d) => d.delivery_id}
            empty=${q.failed ? 'No failed deliveries.' : 'No deliveries yet.'}
            columns=${[
              {
                label: 'Delivery',
                num: true,
                render: (d) =>
                  html`<button type="button" class="link" aria-expanded=${open === d.delivery_id ? 'true' : 'false'} onClick=${() => setOpen(open === d.delivery_id ? null : d.delivery_id)}>#${d.delivery_id}</button>`,
              },
              { label: 'Event', render: (d) => d.event },
              {
                label: 'To',
                render: (d) => html`<span class="mono">${hookById.get(d.webhook_id)?.url ?? `webhook ${d.webhook_id}`}</span>`,
              },
              {
                label: 'Status',
                render: (d) =>
                  html`<span class=${`badge s-${d.status}`} data-delivery-status=${d.status}>${DELIVERY_STATUS[d.status] ?? d.status}</span>`,
              },
              { label: 'Attempts', num: true, render: (d) => d.attempts },
              { label: 'Response', render: (d) => (d.last_status_code ? `HTTP ${d.last_status_code}` : (d.last_error ?? '')) },
              { label: 'Created', render: (d) => when(d.created_at) },
              {
                label: '',
                render: (d) =>
                  html`<${Replay} account=${account} delivery=${d} url=${hookById.get(d.webhook_id)?.url} onDone=${deliveries.reload} />`,
              },
            ]}
          />`
          : deliveries.error
            ? null
            : html`<${Loading} what="deliveries" />`
      }
      ${open ? html`<${DeliveryDetail} key=${open} account=${account} id=${open} />` : null}
    </${Section}>
  </${Page}>`;
}

function Replay({ account, delivery: d, url, onDone }) {
  return html`<${ConfirmButton}
    label="Replay"
    title=${`Replay delivery #${d.delivery_id}?`}
    message=${`Send event ${d.event_id} (${d.event}) again to ${url ?? `webhook ${d.webhook_id}`}: the same event id, as a new delivery.`}
    confirmLabel="Replay the delivery"
    action=${() => api(`/${account}/webhooks/deliveries/${d.delivery_id}/replay`, { method: 'POST' }).then((id) => `Replayed as delivery #${id}.`)}
    onDone=${onDone}
  />`;
}

function DeliveryDetail({ account, id }) {
  const detail = useApi((signal) => api(`/${account}/webhooks/deliveries/${id}`, { signal }), [account, id]);
  const d = detail.data;
  return html`<section class="card" aria-label=${`Delivery ${id}`} data-delivery-detail=${id}>
    <h3>Delivery #${id}</h3>
    <${ErrorBox} error=${detail.error} />
    ${
      d
        ? html`<${Facts}
            items=${[
              ['Event', `${d.event} (event ${d.event_id})`],
              ['Status', DELIVERY_STATUS[d.status] ?? d.status],
              ['Delivered', when(d.delivered_at)],
              ['Next attempt', when(d.next_attempt_at)],
              ['Replay of', d.replay_of ? `#${d.replay_of}` : ''],
            ]}
          />
          <h4>Payload</h4>
          <pre data-payload>${JSON.stringify(d.payload, null, 2)}</pre>
          <h4>Attempts</h4>
          <${Table}
            label="Attempts"
            rows=${d.attempt_log ?? []}
            empty="Not attempted yet."
            columns=${[
              { label: 'At', render: (a) => when(a.attempted_at) },
              { label: 'Status', render: (a) => a.status_code ?? '' },
              {
                label: 'Time',
                num: true,
                render: (a) => (a.duration_ms === null || a.duration_ms === undefined ? '' : `${a.duration_ms} ms`),
              },
              { label: 'Error', render: (a) => a.error ?? '' },
              { label: 'Response', render: (a) => (a.response_body ? html`<span class="mono">${a.response_body}</span>` : '') },
            ]}
          />`
        : detail.error
          ? null
          : html`<${Loading} what="the delivery" />`
    }
  </section>`;
}
