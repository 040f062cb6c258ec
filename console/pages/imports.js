// /ui/{account}/imports: recent imports with their counts and row errors; exports to download.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorBox, Loading, Page, Section, Table, useApi } from '../ui.js';
import { count, IMPORT_STATUS, when } from '../format.js';

export function ImportsPage({ account }) {
  const imports = useApi((signal) => api(`/${account}/members/imports`, { signal }), [account]);
  // Exports need the manager role: a user without it sees the API's 403 here, not a broken page.
  const exports = useApi((signal) => api(`/${account}/exports`, { signal }), [account]);
  const [open, setOpen] = useState(null);
  return html`<${Page} name="imports" title="Imports and exports" loaded=${imports.data !== undefined && (exports.data !== undefined || exports.error)}>
    <${Section} title="Imports" id="imports-h">
      <${ErrorBox} error=${imports.error} />
      ${
        imports.data
          ? html`<${Table}
            label="Recent imports"
            rows=${imports.data}
            rowKey=${(i) => i.import_id}
            empty="No imports."
            columns=${[
              { label: 'Import', num: true, render: (i) => i.import_id },
              { label: 'Source', render: (i) => i.source_filename ?? i.source_name ?? '' },
              { label: 'Status', render: (i) => html`<span class=${`badge s-${i.status}`}>${IMPORT_STATUS[i.status] ?? i.status}</span>` },
              { label: 'Started', render: (i) => when(i.import_started) },
              { label: 'Added', num: true, render: (i) => count(i.num_members_added) },
              { label: 'Updated', num: true, render: (i) => count(i.num_members_updated) },
              { label: 'Skipped', num: true, render: (i) => count(i.num_skipped) },
              {
                label: 'Errors',
                num: true,
                render: (i) =>
                  i.num_errors
                    ? html`<button type="button" class="link" aria-expanded=${open === i.import_id ? 'true' : 'false'} onClick=${() => setOpen(open === i.import_id ? null : i.import_id)}>${count(i.num_errors)}</button>`
                    : '0',
              },
            ]}
          />`
          : imports.error
            ? null
            : html`<${Loading} what="imports" />`
      }
      ${open ? html`<${RowErrors} key=${open} account=${account} id=${open} />` : null}
    </${Section}>
    <${Section} title="Exports" id="exports-h">
      <${ErrorBox} error=${exports.error} />
      ${
        exports.data
          ? html`<${Table}
            label="Recent exports"
            rows=${exports.data}
            rowKey=${(x) => x.export_id}
            empty="No exports in the past seven days."
            columns=${[
              { label: 'Export', num: true, render: (x) => x.export_id },
              { label: 'Status', render: (x) => IMPORT_STATUS[x.status] ?? x.status },
              { label: 'Created', render: (x) => when(x.created_at ?? x.export_started) },
              { label: 'Members', num: true, render: (x) => count(x.num_members ?? x.member_count) },
              {
                label: '',
                render: (x) =>
                  x.status === 'o' ? html`<a href=${`/ui/api/${account}/exports/${x.export_id}/download`} download>Download</a>` : '',
              },
            ]}
          />`
          : null
      }
    </${Section}>
  </${Page}>`;
}

function RowErrors({ account, id }) {
  const errors = useApi(
    (signal) => api(`/${account}/members/imports/${id}/errors`, { query: { start: 0, end: 100 }, signal }),
    [account, id],
  );
  return html`<div data-import-errors=${id}>
    <h3>Row errors of import ${id}</h3>
    <${ErrorBox} error=${errors.error} />
    ${
      errors.data
        ? html`<${Table}
          label=${`Row errors of import ${id}`}
          rows=${errors.data}
          empty="The import reported only a count of its errors."
          columns=${[
            { label: 'Row', num: true, render: (e) => e.row },
            { label: 'E-mail', render: (e) => e.email ?? '' },
            { label: 'Error', render: (e) => e.error },
          ]}
        />`
        : html`<${Loading} what="row errors" />`
    }
  </div>`;
}
