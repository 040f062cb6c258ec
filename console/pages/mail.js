// /ui/{account}/mail: what went out (or is going out) over SMTP, newest first: test sends,
// heads-up copies, opt-in confirmations and allowed sends, each with its state, attempts and
// the server's last reply (GET /{account}/mail/log); filtered to failures on request.
import { html } from '../html.js';
import { api } from '../api.js';
import { queryOf, setQuery } from '../router.js';
import { ErrorBox, Loading, MoreButton, Page, Table, useApi, useMore } from '../ui.js';
import { when } from '../format.js';

export const MAIL_KIND = { test: 'test send', headsup: 'heads-up', confirm: 'opt-in confirmation', send: "mailing's send" };
// Badge colours: sent as complete, failed as an error, the rest as pending.
const STATE_CLASS = { sent: 's-c', failed: 's-e', queued: 's-p', sending: 's-p' };

export function MailPage({ account, search }) {
  const q = queryOf(search);
  const more = useMore(50);
  const log = useApi(
    (signal) => api(`/${account}/mail/log`, { query: { start: 0, end: more.end, failed: q.failed ? 'true' : undefined }, signal }),
    [account, q.failed, more.end],
  );
  return html`<${Page} name="mail" title="Mail log" loaded=${log.data !== undefined}>
    <p class="muted">
      Messages sent for real over SMTP: test sends, heads-up copies, opt-in confirmations, and a mailing's messages to
      allowed addresses. Newest first.
    </p>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label
        ><input
          type="checkbox"
          checked=${!!q.failed}
          onChange=${(e) => setQuery({ ...q, failed: e.currentTarget.checked ? '1' : '' })}
          data-failed-filter
        />
        Failures only</label
      >
      <button type="button" onClick=${log.reload}>Refresh</button>
    </form>
    <${ErrorBox} error=${log.error} />
    ${
      log.data
        ? html`<${Table}
            label="Mail log"
            rows=${log.data}
            rowKey=${(m) => m.mail_id}
            empty=${q.failed ? 'No failed messages.' : 'No mail has gone out over SMTP. It does once the server has an SMTP server: amsg serve --smtp URL (see the mail guide).'}
            columns=${[
              { label: 'To', render: (m) => html`<span class="mono" data-mail-to>${m.to}</span>` },
              {
                label: 'Subject',
                render: (m) =>
                  html`<span data-mail-subject>${m.subject ?? ''}</span>${
                    m.mailing_id
                      ? html`<div class="muted"><a href=${`/ui/${account}/mailings/${m.mailing_id}`}>mailing ${m.mailing_id}</a></div>`
                      : null
                  }`,
              },
              { label: 'Kind', render: (m) => MAIL_KIND[m.kind] ?? m.kind },
              {
                label: 'State',
                render: (m) =>
                  html`<span class=${`badge ${STATE_CLASS[m.state] ?? ''}`} data-mail-state=${m.state}>${m.state}</span>${m.bounced ? html` <span class="badge s-e">bounce</span>` : null}`,
              },
              { label: 'Attempts', num: true, render: (m) => m.attempts },
              { label: 'Last reply', render: (m) => html`<span class="mono" data-mail-reply>${m.last_reply ?? ''}</span>` },
              { label: 'Queued', render: (m) => when(m.created_at) },
              {
                label: 'Sent / next attempt',
                render: (m) => (m.sent_at ? when(m.sent_at) : m.next_attempt_at ? `next ${when(m.next_attempt_at)}` : ''),
              },
            ]}
          />`
        : log.error
          ? null
          : html`<${Loading} what="the mail log" />`
    }
    <${MoreButton} window=${more} shown=${log.data?.length ?? 0} label="Older messages" />
  </${Page}>`;
}
