// /ui/{account}/mailings: every mailing with status, type, schedule, recipients and rates;
// filters by status and type (in the URL, so a filtered list can be bookmarked), archived on request.
// Newest first; a hundred rows at a time are put on the page (an account may have thousands).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { queryOf, setQuery } from '../router.js';
import { ErrorBox, Loading, Page, Table, useApi } from '../ui.js';
import { count, MAILING_STATUS, MAILING_TYPE, rate, when } from '../format.js';

export function StatusBadge({ letter, names = MAILING_STATUS }) {
  return html`<span class=${`badge s-${letter}`}>${names[letter] ?? letter}</span>`;
}

const PAGE = 100;

export function MailingsPage({ account, search }) {
  const q = queryOf(search);
  const list = useApi(
    (signal) =>
      api(`/${account}/mailings`, {
        query: {
          mailing_statuses: q.status,
          mailing_types: q.type ?? 'm,t,r,s,c',
          include_archived: q.archived ? 'true' : undefined,
          with_response: 'true',
        },
        signal,
      }),
    [account, q.status, q.type, q.archived],
  );
  const update = (key) => (event) => {
    const el = event.currentTarget;
    setQuery({ ...q, [key]: el.type === 'checkbox' ? (el.checked ? '1' : '') : el.value });
  };
  const all = list.data ?? [];
  const rows = [...all].sort((a, b) => b.mailing_id - a.mailing_id);
  const [shown, setShown] = useState(PAGE);
  return html`<${Page} name="mailings" title="Mailings" loaded=${list.data !== undefined}>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>Status
        <select value=${q.status ?? ''} onChange=${update('status')}>
          <option value="">any (not canceled)</option>
          ${Object.entries(MAILING_STATUS).map(([k, v]) => html`<option value=${k}>${v}</option>`)}
        </select>
      </label>
      <label>Type
        <select value=${q.type ?? ''} onChange=${update('type')}>
          <option value="">any</option>
          ${Object.entries(MAILING_TYPE).map(([k, v]) => html`<option value=${k}>${v}</option>`)}
        </select>
      </label>
      <label><input type="checkbox" checked=${!!q.archived} onChange=${update('archived')} /> Include archived</label>
      <span class="muted" role="status">${list.data ? `${rows.length} mailing${rows.length === 1 ? '' : 's'}` : ''}</span>
    </form>
    <${ErrorBox} error=${list.error} />
    ${
      list.data === undefined && !list.error
        ? html`<${Loading} what="mailings" />`
        : html`<${Table}
          label="Mailings"
          rows=${rows.slice(0, shown)}
          rowKey=${(m) => m.mailing_id}
          empty="No mailings match."
          columns=${[
            {
              label: 'Name',
              render: (m) => html`<a href=${`/ui/${account}/mailings/${m.mailing_id}`}>${m.name || `Mailing ${m.mailing_id}`}</a>`,
            },
            {
              label: 'Status',
              render: (m) =>
                html`<${StatusBadge} letter=${m.mailing_status} />${m.archived_ts ? html` <span class="badge">archived</span>` : null}`,
            },
            { label: 'Type', render: (m) => MAILING_TYPE[m.mailing_type] ?? m.mailing_type },
            {
              label: 'Scheduled / sent',
              render: (m) => when(m.send_started ?? m.send_at) || html`<span class="muted">not scheduled</span>`,
            },
            { label: 'Recipients', num: true, render: (m) => count(m.recipient_count) },
            { label: 'Opened', num: true, render: (m) => (m.response ? rate(m.response.opened, m.response.delivered) : '–') },
            { label: 'Clicked', num: true, render: (m) => (m.response ? rate(m.response.clicked_unique, m.response.delivered) : '–') },
          ]}
        />`
    }
    ${
      rows.length > shown
        ? html`<p><button type="button" onClick=${() => setShown(shown + PAGE)}>Show ${Math.min(PAGE, rows.length - shown)} more (${count(rows.length - shown)} not shown)</button></p>`
        : null
    }
  </${Page}>`;
}
