// /ui/{account}/members?q=TEXT: members by part of their e-mail address, searched as one types
// (debounced; one window of matches per search, through the service's trigram index).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { queryOf, setQuery } from '../router.js';
import { ErrorBox, Page, Table, useApi, useDebounced } from '../ui.js';
import { MEMBER_STATUS, when } from '../format.js';

const PAGE_SIZE = 50;

export function MembersPage({ account, search }) {
  const q = queryOf(search).q ?? '';
  const [text, setText] = useState(q);
  const settled = useDebounced(text.trim(), 250);
  useEffect(() => {
    if (settled !== q) setQuery({ q: settled });
  }, [settled, q]);
  const result = useApi(
    (signal) =>
      q
        ? api(`/${account}/members/search`, { query: { q, start: 0, end: PAGE_SIZE }, signal })
        : api(`/${account}/members`, { query: { start: 0, end: PAGE_SIZE }, signal }),
    [account, q],
  );
  const rows = result.data ?? [];
  return html`<${Page} name="members" title="Members" loaded=${result.data !== undefined && !result.loading}>
    <form class="filters" role="search" onSubmit=${(e) => e.preventDefault()}>
      <label>Search by e-mail
        <input type="search" value=${text} onInput=${(e) => setText(e.currentTarget.value)} placeholder="part of an address" autocomplete="off" spellcheck="false" data-member-search />
      </label>
      <span class="muted" role="status">
        ${result.loading ? 'Searching…' : q ? `${rows.length}${rows.length === PAGE_SIZE ? '+' : ''} matching “${q}”` : `The first ${rows.length} members`}
      </span>
    </form>
    <${ErrorBox} error=${result.error} />
    <${Table}
      label="Members"
      rows=${rows}
      rowKey=${(m) => m.member_id}
      empty=${q ? 'No member address contains that.' : 'No members yet.'}
      columns=${[
        { label: 'E-mail', render: (m) => html`<a href=${`/ui/${account}/members/${m.member_id}`}>${m.email}</a>` },
        { label: 'Name', render: (m) => [m.fields?.first_name, m.fields?.last_name].filter(Boolean).join(' ') },
        {
          label: 'Status',
          render: (m) =>
            html`<span class=${`badge s-${m.member_status_id}`}>${MEMBER_STATUS[m.member_status_id] ?? m.member_status_id}</span>`,
        },
        { label: 'Member since', render: (m) => when(m.member_since) },
        { label: 'Id', num: true, render: (m) => m.member_id },
      ]}
    />
  </${Page}>`;
}
