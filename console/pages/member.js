// /ui/{account}/members/{member}: a member's fields, groups, subscriptions, status history,
// the mailings it received (each linking to the message as sent), its SMS status, and events,
// touchpoints and engagement on one timeline.
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorBox, Facts, Loading, Page, Section, Table, useApi } from '../ui.js';
import { MEMBER_STATUS, text, when } from '../format.js';

/** An SMS subscriber's status letters. */
const SMS_MEMBER_STATUS = { a: 'active', o: 'opted out', e: 'error' };

export function MemberPage({ account, params }) {
  const id = params.member;
  const member = useApi((signal) => api(`/${account}/members/${id}`, { signal }), [account, id]);
  const m = member.data;
  return html`<${Page} name="member" title=${m ? m.email : `Member ${id}`} loaded=${m !== undefined}>
    <p class="crumbs"><a href=${`/ui/${account}/members`}>Members</a> › ${m?.email ?? id}</p>
    <${ErrorBox} error=${member.error} />
    ${m ? html`<${MemberBody} account=${account} member=${m} />` : member.error ? null : html`<${Loading} what="the member" />`}
  </${Page}>`;
}

function MemberBody({ account, member: m }) {
  const id = m.member_id;
  const base = `/${account}/members/${id}`;
  const groups = useApi((signal) => api(`${base}/groups`, { signal }), [base]);
  const subscriptions = useApi((signal) => api(`/${account}/subscriptions`, { query: { member_id: id }, signal }), [account, id]);
  const optouts = useApi((signal) => api(`${base}/optout`, { signal }), [base]);
  const mailings = useApi((signal) => api(`${base}/mailings`, { query: { start: 0, end: 50 }, signal }), [base]);
  const timeline = useApi((signal) => api(`${base}/timeline`, { query: { start: 0, end: 100 }, signal }), [base]);
  const fields = Object.entries(m.fields ?? {});
  return html`
    <${Facts}
      items=${[
        ['Status', html`<span class=${`badge s-${m.member_status_id}`}>${MEMBER_STATUS[m.member_status_id] ?? m.status}</span>`],
        ['Member since', when(m.member_since)],
        ['Last modified', when(m.last_modified_at)],
        ['Archived', when(m.deleted_at)],
        ['Bounces', m.bounce_count],
        ['E-mail error', m.email_error],
        ['Prefers plain text', m.plaintext_preferred ? 'yes' : ''],
        ['Member id', m.member_id],
      ]}
    />
    <div class="grid">
      <${Section} title="Fields" id="fields-h">
        ${fields.length ? html`<${Facts} items=${fields.map(([k, v]) => [k, text(v)])} />` : html`<p class="muted">No field values.</p>`}
      </${Section}>
      <${Section} title="SMS" id="sms-h">
        ${
          m.sms
            ? html`<${Facts}
                items=${[
                  ['Phone number', m.sms.phone_number],
                  ['Region', m.sms.region_code],
                  ['Promotional', SMS_MEMBER_STATUS[m.sms.promotional_status] ?? text(m.sms.promotional_status)],
                  ['Promotional since', when(m.sms.promotional_status_updated_at)],
                  ['Transactional', SMS_MEMBER_STATUS[m.sms.transactional_status] ?? text(m.sms.transactional_status)],
                  ['Transactional since', when(m.sms.transactional_status_updated_at)],
                ]}
              />`
            : html`<p class="muted">No phone number.</p>`
        }
      </${Section}>
      <${Section} title="Groups" id="groups-h">
        <${ErrorBox} error=${groups.error} />
        ${
          groups.data
            ? groups.data.length
              ? html`<ul>${groups.data.map((g) => html`<li key=${g.member_group_id}>${g.group_name}</li>`)}</ul>`
              : html`<p class="muted">In no group.</p>`
            : !groups.error && html`<${Loading} what="groups" />`
        }
      </${Section}>
      <${Section} title="Subscriptions" id="subs-h">
        <${ErrorBox} error=${subscriptions.error} />
        ${
          subscriptions.data
            ? subscriptions.data.length
              ? html`<ul>${subscriptions.data.map((s) => html`<li key=${s.subscription_id}>${s.subscription_name}</li>`)}</ul>`
              : html`<p class="muted">No subscriptions.</p>`
            : !subscriptions.error && html`<${Loading} what="subscriptions" />`
        }
      </${Section}>
    </div>
    <${Section} title="Status history" id="status-h">
      <${ErrorBox} error=${optouts.error} />
      <${Table}
        label="Opt-outs and status changes"
        rows=${optouts.data ?? []}
        empty="No opt-outs or status changes recorded."
        columns=${Object.keys(optouts.data?.[0] ?? {}).map((key) => ({ label: key.replaceAll('_', ' '), render: (row) => (key.endsWith('_ts') || key.endsWith('_at') || key === 'timestamp' ? when(row[key]) : text(row[key])) }))}
      />
    </${Section}>
    <${Section} title="Mailings received" id="received-h">
      <${ErrorBox} error=${mailings.error} />
      <${Table}
        label="Mailings sent to this member"
        rows=${mailings.data ?? []}
        rowKey=${(r) => r.mailing_id}
        empty=${mailings.data ? 'No mailings sent to this member.' : 'Loading…'}
        columns=${[
          {
            label: 'Mailing',
            render: (r) => html`<a href=${`/ui/${account}/mailings/${r.mailing_id}/messages/${id}`}>${r.subject || r.name}</a>`,
          },
          { label: 'Name', render: (r) => r.name },
          { label: 'Sent', render: (r) => when(r.sent ?? r.delivery_ts) },
          { label: 'Opened', render: (r) => when(r.opened) },
          { label: 'Clicked', render: (r) => when(r.clicked) },
        ]}
      />
    </${Section}>
    <${Section} title="Timeline" id="timeline-h">
      <${ErrorBox} error=${timeline.error} />
      ${
        timeline.data
          ? timeline.data.length
            ? html`<ol class="timeline" data-timeline>${timeline.data.map((item) => html`<li key=${item.id}><${TimelineItem} account=${account} member=${id} item=${item} /></li>`)}</ol>`
            : html`<p class="muted">Nothing has happened to this member yet.</p>`
          : !timeline.error && html`<${Loading} what="the timeline" />`
      }
    </${Section}>
  `;
}

function TimelineItem({ account, member, item }) {
  const mailing = item.mailing_id
    ? html`<a href=${`/ui/${account}/mailings/${item.mailing_id}/messages/${member}`}>${item.name ?? `mailing ${item.mailing_id}`}</a>`
    : null;
  const what = {
    joined: () => 'Joined the audience',
    mailing: () => html`Received ${mailing}${item.subject ? html` <span class="muted">“${item.subject}”</span>` : null}`,
    opened: () => html`Opened ${mailing}`,
    clicked: () => html`Clicked <span class="mono">${item.url}</span> in ${mailing}`,
    bounced: () => html`${item.bounce_type === 'hard' ? 'Hard' : 'Soft'} bounce of ${mailing}`,
    optout: () => html`Status ${text(item.status)}${mailing ? html` through ${mailing}` : null}`,
    event: () =>
      html`Event <strong>${item.event_type}</strong> ${item.properties ? html`<span class="muted mono">${text(item.properties)}</span>` : null}`,
    touchpoint: () =>
      html`Touchpoint <strong>${item.touchpoint_type}</strong> ${item.properties ? html`<span class="muted mono">${text(item.properties)}</span>` : null}`,
    sms: () => html`SMS <a href=${`/ui/${account}/sms/${item.sms_campaign_id}`}>${item.sms_campaign_name}</a> (${text(item.status)})`,
  }[item.kind];
  return html`<time datetime=${String(item.at ?? '').replace('@D:', '')}>${when(item.at)}</time>${what ? what() : html`${item.kind}`}`;
}
