// /ui/{account}/mailings/{mailing}: the message as recipients see it (any recipient's
// personalization), its HTML check, its links and clicks, and the response as charts; counts
// move while it sends. Writes: cancel (when pending or paused), simulate an open or a click,
// send a test over SMTP.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { api } from '../api.js';
import { queryOf, setQuery } from '../router.js';
import { ConfirmButton, ErrorBox, Facts, Loading, Page, Section, Table, useApi } from '../ui.js';
import { BarChart, TimeChart } from '../chart.js';
import { count, epochMs, MAILING_TYPE, rate, when } from '../format.js';
import { useLiveResponse } from '../live.js';
import { MessageView } from './message-view.js';
import { StatusBadge } from './mailings.js';

export function MailingPage({ account, params, search }) {
  const id = params.mailing;
  const detail = useApi((signal) => api(`/${account}/mailings/${id}`, { signal }), [account, id]);
  const first = useApi((signal) => api(`/${account}/response/${id}`, { signal }), [account, id]);
  const m = detail.data;
  const title = m ? m.name || `Mailing ${id}` : `Mailing ${id}`;
  return html`<${Page}
    name="mailing"
    title=${title}
    loaded=${m !== undefined && first.data !== undefined}
    actions=${m ? html`<${CancelButton} account=${account} mailing=${m} onDone=${detail.reload} />` : null}
  >
    <p class="crumbs"><a href=${`/ui/${account}/mailings`}>Mailings</a> › ${title}</p>
    <${ErrorBox} error=${detail.error ?? first.error} />
    ${
      m && first.data
        ? html`<${MailingBody} account=${account} mailing=${m} firstResponse=${first.data} member=${queryOf(search).member} />`
        : detail.error || first.error
          ? null
          : html`<${Loading} what="the mailing" />`
    }
  </${Page}>`;
}

function CancelButton({ account, mailing, onDone }) {
  return html`<${ConfirmButton}
    hidden=${!['p', 'a'].includes(mailing.mailing_status)}
    label="Cancel mailing"
    danger=${true}
    title=${`Cancel “${mailing.name}”?`}
    message=${`Mailing ${mailing.mailing_id} “${mailing.name}”${mailing.send_at ? `, scheduled for ${when(mailing.send_at)} UTC,` : ''} will not be sent to its ${count(mailing.recipient_count)} recipients. This cannot be undone.`}
    confirmLabel="Cancel the mailing"
    action=${() => api(`/${account}/mailings/cancel/${mailing.mailing_id}`, { method: 'DELETE' }).then(() => 'Mailing canceled.')}
    onDone=${onDone}
  />`;
}

function MailingBody({ account, mailing: m, firstResponse, member }) {
  const live = useLiveResponse(account, m.mailing_id, m.mailing_status, firstResponse);
  const r = live.response ?? firstResponse;
  // The links with their clicks: one window (the table and the chart), again when clicks move.
  const links = useApi(
    (signal) => api(`/${account}/response/${m.mailing_id}/links`, { query: { start: 0, end: 100 }, signal }),
    [account, m.mailing_id, r.clicked],
  );
  const recipients = [
    ...(m.recipient_groups ?? []).map((g) => `group ${g.name}`),
    ...(m.recipient_subscriptions ?? []).map((s) => `subscription ${s.name ?? s.subscription_id}`),
    ...(m.recipient_searches ?? []).map((s) => `search ${s.name ?? s.search_id}`),
    ...(m.recipient_segments ?? []).map((s) => `segment ${s.name ?? s.segment_id}`),
    ...(m.recipient_members?.length ? [`${m.recipient_members.length} members by address`] : []),
  ];
  return html`
    <${Facts}
      items=${[
        ['Status', html`<${StatusBadge} letter=${live.status} />`],
        ['Type', MAILING_TYPE[m.mailing_type] ?? m.mailing_type],
        ['Subject', m.subject],
        ['Sender', m.sender],
        ['Reply-To', m.reply_to],
        ['Scheduled', when(m.send_at)],
        ['Send started', when(m.send_started)],
        ['Send finished', when(m.send_finished)],
        ['Audience', recipients.join(', ')],
        ['Archived', when(m.archived_ts)],
        ['Failure', m.failure_message],
      ]}
    />
    <section class="card" aria-labelledby="counts-h">
      <h2 id="counts-h">Response ${live.live ? html`<span class="badge" data-live="true">live</span>` : null}</h2>
      <dl class="stats" data-counts aria-live=${live.live ? 'polite' : 'off'}>
        ${[
          ['Recipients', r.recipient_count],
          ['Sent', r.sent],
          ['Delivered', r.delivered],
          ['Bounced', r.bounced],
          ['Opened', r.opened, rate(r.opened, r.delivered)],
          ['Clicked', r.clicked_unique, rate(r.clicked_unique, r.delivered)],
          ['Opted out', r.opted_out],
          ['In progress', r.in_progress],
        ].map(
          ([label, value, share]) =>
            html`<div data-count=${label.toLowerCase().replace(' ', '_')}>
              <dt>${label}</dt>
              <dd><span class="stat">${count(value)}</span>${share ? html` <span class="muted">${share}</span>` : null}</dd>
            </div>`,
        )}
      </dl>
    </section>
    <${Charts} account=${account} mailing=${m} response=${r} links=${links} />
    <${Preview} account=${account} mailing=${m} member=${member} />
    <${TestSend} account=${account} mailing=${m} />
    <div class="grid">
      <${HtmlCheck} account=${account} mailing=${m} member=${member} />
      <${Links} links=${links} />
    </div>
    ${m.split_test ? html`<${SplitTest} account=${account} mailing=${m} />` : null}
  `;
}

/** The recipient picker and the message for the picked member (sample values without one). */
function Preview({ account, mailing: m, member }) {
  const id = m.mailing_id;
  const sends = useApi((signal) => api(`/${account}/response/${id}/sends`, { query: { start: 0, end: 50 }, signal }), [account, id]);
  const preview = useApi(
    (signal) => api(`/${account}/mailings/${id}/preview`, { query: { member_id: member }, signal }),
    [account, id, member],
  );
  const pick = (event) => setQuery({ ...queryOf(location.search), member: event.currentTarget.value });
  const options = sends.data ?? [];
  const p = preview.data;
  const who = options.find((o) => String(o.member_id) === member)?.email ?? (member ? `member ${member}` : undefined);
  return html`<${Section} title="Message" id="message-h">
    <div class="filters">
      <label>Recipient
        <select value=${member ?? ''} onChange=${pick} data-recipient-picker>
          <option value="">Sample values (no member)</option>
          ${member && !options.some((o) => String(o.member_id) === member) ? html`<option value=${member}>member ${member}</option>` : null}
          ${options.map((o) => html`<option value=${String(o.member_id)}>${o.email}</option>`)}
        </select>
      </label>
      <${PickByEmail} account=${account} />
      ${p ? html`<span class="muted" data-preview-source=${p.source}>${SOURCE_TEXT[p.source] ?? p.source}</span>` : null}
      ${member ? html`<a href=${`/ui/${account}/mailings/${id}/messages/${member}`}>Open this member's message</a>` : null}
      ${member && ['c', 'w'].includes(m.mailing_status) ? html`<${Simulate} account=${account} mailing=${m} member=${member} who=${who} />` : null}
    </div>
    <${ErrorBox} error=${preview.error} />
    ${
      p
        ? html`<${MessageView}
          key=${`${id}:${member ?? ''}`}
          frameSrc=${`/ui/frame/${account}/mailings/${id}/preview${member ? `?member_id=${encodeURIComponent(member)}` : ''}`}
          message=${p}
          who=${who}
        />`
        : preview.error
          ? null
          : html`<${Loading} what="the message" />`
    }
  </${Section}>`;
}

/** The addresses of a text field: separated by commas, semicolons or white space; each once. */
const addressesOf = (text) => [...new Set(text.split(/[\s,;]+/).filter(Boolean))];

/**
 * "Send a test": the mailing's content, subject prefixed [Test], to the addresses typed, over
 * the server's SMTP server (POST …/test). Personalized with a member's values, or each field's
 * sample value. Without an SMTP server the service's 409 says how to give it one.
 */
function TestSend({ account, mailing: m }) {
  const [to, setTo] = useState('');
  const [as, setAs] = useState('');
  const addresses = addressesOf(to);
  const asEmail = as.trim();
  const send = () =>
    api(`/${account}/mailings/${m.mailing_id}/test`, {
      method: 'POST',
      body: { recipient_emails: addresses, ...(asEmail ? { member_email: asEmail } : {}) },
    }).then(
      (queued) =>
        `Queued ${queued.length === 1 ? 'a test message' : `${queued.length} test messages`} for ${queued.map((q) => q.to).join(', ')}.`,
    );
  return html`<${Section} title="Send a test" id="test-h">
    <p class="muted">
      The message with its subject prefixed “[Test] ”, mailed for real through the server's SMTP server to the addresses you
      give (up to 50). <a href=${`/ui/${account}/mail`}>The mail log</a> shows when they go and what the server answered.
    </p>
    <div class="filters" data-test-send>
      <label>To
        <input type="text" value=${to} onInput=${(e) => setTo(e.currentTarget.value)} autocomplete="off" spellcheck="false" size="40" placeholder="me@example.com, qa@example.com" data-test-to />
      </label>
      <label>Personalized as (a member's e-mail; empty: sample values)
        <input type="email" value=${as} onInput=${(e) => setAs(e.currentTarget.value)} autocomplete="off" spellcheck="false" data-test-as />
      </label>
      <${ConfirmButton}
        label="Send a test…"
        disabled=${addresses.length === 0}
        title=${`Send a test of “${m.name}”?`}
        message=${`A test of “${m.name}” goes out for real to ${addresses.join(', ')}, ${asEmail ? `personalized with the values of ${asEmail}` : "with each field's sample value"}.`}
        confirmLabel=${addresses.length === 1 ? 'Send the test' : `Send ${addresses.length} tests`}
        action=${send}
      />
    </div>
  </${Section}>`;
}

/** Any member by address (the menu lists the first recipients only): the message for that member. */
function PickByEmail({ account }) {
  const [email, setEmail] = useState('');
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      const found = await api(`/${account}/members/email/${encodeURIComponent(email.trim())}`);
      setQuery({ ...queryOf(location.search), member: String(found.member_id) });
    } catch (err) {
      setError(err);
    }
  };
  return html`<form class="inline-form" onSubmit=${submit}>
    <label>or a member's e-mail
      <input type="email" value=${email} onInput=${(e) => setEmail(e.currentTarget.value)} required autocomplete="off" spellcheck="false" />
    </label>
    <button type="submit">Show</button>
    ${error ? html`<span class="error" role="alert">${error.status === 404 ? 'No member has that address.' : error.message}</span>` : null}
  </form>`;
}

const SOURCE_TEXT = {
  sent: 'As sent to this member',
  member: "Not sent to this member: rendered with the member's current fields",
  sample: 'Every member tag filled with a sample value',
};

function Simulate({ account, mailing: m, member, who }) {
  const link = m.links?.find((l) => !l.plaintext) ?? m.links?.[0];
  const body = { mailing_id: m.mailing_id, member_id: Number(member) };
  return html`<${ConfirmButton}
      label="Simulate open"
      message=${`Record an open of “${m.name}” by ${who}. Reports count it and webhooks for it fire.`}
      action=${() => api(`/${account}/sim/open`, { method: 'POST', body }).then(() => 'Open recorded.')}
    />
    ${
      link
        ? html`<${ConfirmButton}
          label="Simulate click"
          message=${`Record a click by ${who} on “${link.link_name || link.link_target}” (${link.link_target}) in “${m.name}”. Reports count it and webhooks for it fire.`}
          action=${() => api(`/${account}/sim/click`, { method: 'POST', body: { ...body, link_id: link.link_id } }).then(() => 'Click recorded.')}
        />`
        : null
    }`;
}

/** What the message uses that e-mail clients lack, from caniemail's data. */
function HtmlCheck({ account, mailing: m, member }) {
  const check = useApi(
    (signal) => api(`/${account}/mailings/${m.mailing_id}/html_check`, { query: { member_id: member }, signal }),
    [account, m.mailing_id, member],
  );
  const c = check.data;
  return html`<${Section} title="HTML check" id="check-h">
    <${ErrorBox} error=${check.error} />
    ${
      !c
        ? check.error
          ? null
          : html`<${Loading} what="the check" />`
        : html`<p><span class="score" data-score=${c.score}>${c.score}%</span> <span class="muted">supported across ${c.clients_checked} e-mail clients (caniemail data of ${c.data_date})</span></p>
          ${c.clients?.length ? html`<${ClientList} clients=${c.clients} />` : null}
          ${
            c.features.length === 0
              ? html`<p class="ok">Nothing in this message is known to fail in an e-mail client.</p>`
              : html`<ul class="check-list" data-check-features>
                ${c.features.map(
                  (f) => html`<li data-feature=${f.feature}>
                    ${/^https:\/\//.test(f.url ?? '') ? html`<a href=${f.url} target="_blank" rel="noopener noreferrer">${f.title ?? f.feature}</a>` : html`<strong>${f.title ?? f.feature ?? '(unnamed check)'}</strong>`}
                    ${' '}<span class=${`badge s-${f.support === 'n' ? 'e' : 'p'}`}>${f.support === 'n' ? 'unsupported' : 'partial'}</span>
                    ${f.unsupported_in.length ? html`<div class="muted">Fails in ${f.unsupported_in.map((x) => x.name).join(', ')}</div>` : null}
                    ${f.partial_in.length ? html`<div class="muted">Partly in ${f.partial_in.map((x) => x.name).join(', ')}</div>` : null}
                  </li>`,
                )}
              </ul>`
          }`
    }
  </${Section}>`;
}

/** The e-mail clients checked, those where something fails first, in a disclosure. */
function ClientList({ clients }) {
  const order = { fail: 0, partial: 1, ok: 2 };
  const sorted = [...clients].sort((a, b) => order[a.status] - order[b.status] || a.name.localeCompare(b.name));
  const failing = clients.filter((c) => c.status === 'fail').length;
  return html`<details class="clients">
    <summary>${failing} of ${clients.length} clients fail something; by client</summary>
    <ul data-check-clients>
      ${sorted.map(
        (c) =>
          html`<li key=${c.client}>
            <span class=${`badge s-${c.status === 'fail' ? 'e' : c.status === 'ok' ? 'c' : 'p'}`}>${c.status}</span> ${c.name}
            ${c.unsupported || c.partial ? html`<span class="muted"> · ${c.unsupported} unsupported, ${c.partial} partial</span>` : null}
          </li>`,
      )}
    </ul>
  </details>`;
}

function Links({ links }) {
  return html`<${Section} title="Links" id="links-h">
    <${ErrorBox} error=${links.error} />
    ${
      links.data
        ? html`<${Table}
          label="Links and their clicks"
          rows=${links.data}
          rowKey=${(l) => l.link_id}
          empty="This message has no tracked links."
          columns=${[
            { label: 'Link', render: (l) => html`<div>${l.link_name || '(no text)'}</div><div class="muted mono">${l.link_target}</div>` },
            { label: 'Part', render: (l) => (l.plaintext ? 'text' : 'HTML') },
            { label: 'Unique clicks', num: true, render: (l) => count(l.unique_clicks) },
            { label: 'Clicks', num: true, render: (l) => count(l.total_clicks) },
          ]}
        />`
        : links.error
          ? null
          : html`<${Loading} what="links" />`
    }
  </${Section}>`;
}

function Charts({ account, mailing: m, response: r, links }) {
  const timeline = useApi(
    (signal) => api(`/${account}/response/${m.mailing_id}/timeline`, { signal }),
    [account, m.mailing_id, r.opened, r.clicked],
  );
  const t = timeline.data;
  return html`<${Section} title="Response over time" id="charts-h">
    <${ErrorBox} error=${timeline.error} />
    <div class="grid charts">
      ${
        t?.buckets.length
          ? html`<${TimeChart}
            id="timeline"
            title=${`Opens and clicks per ${t.bucket} since the send`}
            times=${t.buckets.map((b) => epochMs(b.at) / 1000)}
            step=${t.bucket_seconds}
            series=${[
              { label: 'Opens', values: t.buckets.map((b) => b.opens) },
              { label: 'Clicks', values: t.buckets.map((b) => b.clicks) },
            ]}
            deps=${[JSON.stringify(t.buckets)]}
          />`
          : html`<p class="muted">${t ? 'Not sent yet: no opens or clicks to chart.' : 'Loading the timeline…'}</p>`
      }
      <${BarChart}
        id="outcomes"
        title="Delivered, bounced and opted out"
        unit="members"
        bars=${[
          { label: 'Delivered', value: r.delivered ?? 0 },
          { label: 'Bounced', value: r.bounced ?? 0 },
          { label: 'Opted out', value: r.opted_out ?? 0 },
        ]}
      />
      ${
        links.data?.length
          ? html`<${BarChart}
            id="link-clicks"
            title="Clicks per link"
            unit="clicks"
            bars=${links.data.slice(0, 20).map((l) => ({ label: (l.link_name || l.link_target).replace(/^https?:\/\//, ''), value: l.total_clicks }))}
          />`
          : null
      }
    </div>
  </${Section}>`;
}

/** A split test: each variant's subject and response side by side. */
function SplitTest({ account, mailing: m }) {
  const variants = m.split_test.variants ?? [];
  const responses = useApi(
    (signal) => Promise.all(variants.map((v) => api(`/${account}/response/${v.mailing_id}`, { signal }))),
    [account, m.mailing_id],
  );
  const rows = variants.map((v, i) => ({ ...v, response: responses.data?.[i] }));
  return html`<${Section} title="Split test" id="split-h">
    <${ErrorBox} error=${responses.error} />
    <p class="muted">
      ${m.split_test.test_percent ?? '?'}% of the audience in the test;
      ${m.split_test.winner_mailing_id ? ` winner: mailing ${m.split_test.winner_mailing_id}` : ' no winner declared yet'}.
    </p>
    <${Table}
      label="Split test variants"
      rows=${rows}
      rowKey=${(v) => v.mailing_id}
      columns=${[
        {
          label: 'Variant',
          render: (v) =>
            html`<a href=${`/ui/${account}/mailings/${v.mailing_id}`}>${v.name ?? `Mailing ${v.mailing_id}`}</a>${v.mailing_id === m.split_test.winner_mailing_id ? html` <span class="badge s-c">winner</span>` : null}`,
        },
        { label: 'Subject', render: (v) => v.subject ?? v.response?.subject },
        { label: 'Delivered', num: true, render: (v) => count(v.response?.delivered) },
        { label: 'Opened', num: true, render: (v) => rate(v.response?.opened, v.response?.delivered) },
        { label: 'Clicked', num: true, render: (v) => rate(v.response?.clicked_unique, v.response?.delivered) },
      ]}
    />
    ${
      responses.data
        ? html`<${BarChart}
          id="variants"
          title="Opens per variant"
          unit="opens"
          bars=${rows.map((v) => ({ label: `#${v.mailing_id}`, value: v.response?.opened ?? 0 }))}
        />`
        : null
    }
  </${Section}>`;
}
