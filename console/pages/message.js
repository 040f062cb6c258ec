// /ui/{account}/mailings/{mailing}/messages/{member}: what one member received, as sent.
import { html } from '../html.js';
import { api } from '../api.js';
import { ErrorBox, Facts, Loading, Page, useApi } from '../ui.js';
import { when } from '../format.js';
import { MessageView } from './message-view.js';

export function MessagePage({ account, params }) {
  const { mailing, member } = params;
  const data = useApi(
    (signal) =>
      Promise.all([
        api(`/${account}/mailings/${mailing}/preview`, { query: { member_id: member }, signal }),
        api(`/${account}/members/${member}`, { signal }),
        api(`/${account}/mailings/${mailing}`, { signal }),
      ]),
    [account, mailing, member],
  );
  const [message, who, m] = data.data ?? [];
  const title = who ? `Message to ${who.email}` : `Message to member ${member}`;
  return html`<${Page} name="message" title=${title} loaded=${data.data !== undefined}>
    <p class="crumbs">
      <a href=${`/ui/${account}/mailings`}>Mailings</a> ›
      <a href=${`/ui/${account}/mailings/${mailing}`}>${m?.name ?? `Mailing ${mailing}`}</a> ›
      <a href=${`/ui/${account}/members/${member}`}>${who?.email ?? `member ${member}`}</a>
    </p>
    <${ErrorBox} error=${data.error} />
    ${
      message
        ? html`<${Facts}
            items=${[
              ['Mailing', m.name],
              ['Member', who.email],
              ['Rendered', message.source === 'sent' ? 'as sent' : 'not sent to this member: with its current fields'],
              ['Send started', when(m.send_started)],
            ]}
          />
          <section class="card" aria-label="The message">
            <${MessageView}
              frameSrc=${`/ui/frame/${account}/mailings/${mailing}/messages/${member}`}
              message=${message}
              who=${who.email}
            />
          </section>`
        : data.error
          ? null
          : html`<${Loading} what="the message" />`
    }
  </${Page}>`;
}
