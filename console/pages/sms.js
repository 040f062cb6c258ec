// /ui/{account}/sms and /ui/{account}/sms/{campaign}: campaigns, and one campaign's message
// as a phone shows it, with its encoding and segments, deliveries and clicks.
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorBox, Facts, Loading, Page, Section, Table, useApi } from '../ui.js';
import { count, SMS_STATUS, when } from '../format.js';

export function SmsListPage({ account }) {
  const list = useApi((signal) => api(`/${account}/sms/campaigns`, { signal }), [account]);
  return html`<${Page} name="smsList" title="SMS campaigns" loaded=${list.data !== undefined}>
    <${ErrorBox} error=${list.error} />
    ${
      list.data
        ? html`<${Table}
          label="SMS campaigns"
          rows=${list.data}
          rowKey=${(c) => c.sms_campaign_id}
          empty="No SMS campaigns."
          columns=${[
            { label: 'Name', render: (c) => html`<a href=${`/ui/${account}/sms/${c.sms_campaign_id}`}>${c.sms_campaign_name}</a>` },
            {
              label: 'Status',
              render: (c) => html`<span class=${`badge s-${c.send_status}`}>${SMS_STATUS[c.send_status] ?? c.send_status}</span>`,
            },
            { label: 'Sent', render: (c) => when(c.send_started ?? c.scheduled_at) },
            { label: 'Delivered', num: true, render: (c) => count(c.deliveries) },
            { label: 'Clicks', num: true, render: (c) => count(c.total_clicks) },
          ]}
        />`
        : list.error
          ? null
          : html`<${Loading} what="campaigns" />`
    }
  </${Page}>`;
}

export function SmsPage({ account, params }) {
  const id = params.campaign;
  const base = `/${account}/sms/campaigns/${id}`;
  const campaign = useApi((signal) => Promise.all([api(base, { signal }), api(`${base}/preview`, { signal })]), [base]);
  const deliveries = useApi((signal) => api(`${base}/deliveries`, { query: { start: 0, end: 50 }, signal }), [base]);
  const clicks = useApi((signal) => api(`${base}/clicks`, { query: { start: 0, end: 50 }, signal }), [base]);
  const [c, preview] = campaign.data ?? [];
  return html`<${Page} name="sms" title=${c ? c.sms_campaign_name : `SMS campaign ${id}`} loaded=${campaign.data !== undefined}>
    <p class="crumbs"><a href=${`/ui/${account}/sms`}>SMS</a> › ${c?.sms_campaign_name ?? id}</p>
    <${ErrorBox} error=${campaign.error} />
    ${
      c
        ? html`<div class="grid">
            <section class="card" aria-labelledby="phone-h">
              <h2 id="phone-h">On a phone</h2>
              <div class="phone">
                <div class="from">${c.from_phone_number}</div>
                <div class="bubble" data-sms-message>${preview.message}</div>
              </div>
            </section>
            <${Section} title="Message" id="sms-facts-h">
              <${Facts}
                items=${[
                  ['Status', SMS_STATUS[c.send_status] ?? c.send_status],
                  ['Encoding', html`<span data-encoding>${preview.encoding}</span>`],
                  ['Segments', html`<span data-segments>${preview.segments}</span>`],
                  ['Characters', preview.characters],
                  ['Per segment', preview.per_segment],
                  ['Not in GSM-7', (preview.non_gsm_characters ?? []).join(' ')],
                  ['Promotional', c.is_promotional ? 'yes' : 'no'],
                  ['Sent', when(c.send_started)],
                  ['Delivered', count(c.deliveries)],
                  ['Bounced', count(c.bounces)],
                  ['Opted out', count(c.opt_outs)],
                  ['Clicks', `${count(c.total_clicks)} (${count(c.unique_clicks)} unique)`],
                  ['Result', c.results_message],
                ]}
              />
            </${Section}>
          </div>
          <${Section} title="Deliveries" id="sms-deliveries-h">
            <${ErrorBox} error=${deliveries.error} />
            <${Table}
              label="SMS deliveries"
              rows=${deliveries.data ?? []}
              rowKey=${(d) => d.member_id}
              empty=${deliveries.data ? 'No deliveries.' : 'Loading…'}
              columns=${[
                { label: 'Member', render: (d) => html`<a href=${`/ui/${account}/members/${d.member_id}`}>member ${d.member_id}</a>` },
                { label: 'To', render: (d) => d.to_phone_number },
                { label: 'Result', render: (d) => ({ d: 'delivered', b: 'bounced' })[d.delivery_type] ?? d.delivery_type },
                { label: 'Bounce', render: (d) => d.bounce_type ?? '' },
                { label: 'Opted out', render: (d) => when(d.opted_out_at) },
              ]}
            />
          </${Section}>
          <${Section} title="Clicks" id="sms-clicks-h">
            <${ErrorBox} error=${clicks.error} />
            <${Table}
              label="SMS clicks"
              rows=${clicks.data ?? []}
              empty=${clicks.data ? 'No clicks.' : 'Loading…'}
              columns=${[
                { label: 'Member', render: (k) => html`<a href=${`/ui/${account}/members/${k.member_id}`}>member ${k.member_id}</a>` },
                { label: 'URL', render: (k) => html`<span class="mono">${k.url ?? k.link_url ?? ''}</span>` },
                { label: 'At', render: (k) => when(k.clicked_at ?? k.created_at ?? k.timestamp) },
              ]}
            />
          </${Section}>`
        : campaign.error
          ? null
          : html`<${Loading} what="the campaign" />`
    }
  </${Page}>`;
}
