// The console's shell: the session, the header with its navigation and account switcher,
// and the page the URL names.
import { useEffect } from 'preact/hooks';
import { html } from './html.js';
import { api, ApiError, csrfToken, loginUrl, setCsrfToken } from './api.js';
import { matchRoute, navigate, useLocation } from './router.js';
import { ErrorBox, Loading, useApi } from './ui.js';
import { MailingsPage } from './pages/mailings.js';
import { MailingPage } from './pages/mailing.js';
import { MessagePage } from './pages/message.js';
import { MembersPage } from './pages/members.js';
import { MemberPage } from './pages/member.js';
import { WebhooksPage } from './pages/webhooks.js';
import { SmsListPage, SmsPage } from './pages/sms.js';
import { ImportsPage } from './pages/imports.js';
import { MailPage } from './pages/mail.js';

const PAGES = {
  mailings: MailingsPage,
  mailing: MailingPage,
  message: MessagePage,
  members: MembersPage,
  member: MemberPage,
  webhooks: WebhooksPage,
  smsList: SmsListPage,
  sms: SmsPage,
  imports: ImportsPage,
  mail: MailPage,
};

const NAV = [
  ['mailings', 'Mailings', ['mailings', 'mailing', 'message']],
  ['members', 'Members', ['members', 'member']],
  ['webhooks', 'Webhooks', ['webhooks']],
  ['sms', 'SMS', ['smsList', 'sms']],
  ['imports', 'Imports & exports', ['imports']],
  ['mail', 'Mail log', ['mail']],
];

export function App() {
  const loc = useLocation();
  const route = matchRoute(loc.path);
  // The sign-in page is the server's (a form with no script); a stale history entry lands there.
  if (route.name === 'login') {
    location.replace(loc.path + loc.search);
    return null;
  }
  return html`<${SignedIn} route=${route} search=${loc.search} />`;
}

function SignedIn({ route, search }) {
  const session = useApi(() => api('/session'), []);
  const data = session.data;
  // Set before any page renders, so no write can go out without it.
  if (data) setCsrfToken(data.csrf_token);
  useEffect(() => {
    if (session.error instanceof ApiError && session.error.status === 401) location.assign(loginUrl());
  }, [session.error]);
  useEffect(() => {
    if (data && route.name === 'home') navigate(`/ui/${route.params.account ?? data.account_id}/mailings`, { replace: true });
  }, [data, route.name, route.params.account]);

  if (session.error) return html`<main id="main" class="signed-out"><${ErrorBox} error=${session.error} /></main>`;
  if (!data) return html`<main id="main"><${Loading} what="the session" /></main>`;
  const account = route.params.account ?? String(data.account_id);
  const Page = PAGES[route.name];
  return html`<a class="skip-link" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href=${`/ui/${account}/mailings`}>amsg <span>console</span></a>
      <nav aria-label="Sections">
        <ul>
          ${NAV.map(
            ([path, label, names]) =>
              html`<li><a href=${`/ui/${account}/${path}`} aria-current=${names.includes(route.name) ? 'page' : undefined}>${label}</a></li>`,
          )}
        </ul>
      </nav>
      <div class="who">
        <${AccountSwitcher} session=${data} account=${account} />
        <span class="muted" title="Signed in as">${data.user?.email ?? ''}</span>
        <${SignOut} />
      </div>
    </header>
    <main id="main" tabindex="-1">
      ${Page ? html`<${Page} key=${route.name} account=${account} params=${route.params} search=${search} session=${data} />` : html`<${NotFound} />`}
    </main>`;
}

/** An HQ user's accounts (the ones the API lets it act on); the same page kind in the other account. */
function AccountSwitcher({ session, account }) {
  const accounts = session.accounts ?? [];
  if (accounts.length < 2) return html`<span class="muted">Account ${account}</span>`;
  const change = (event) => {
    const section = location.pathname.split('/')[3] ?? 'mailings';
    const kind = ['mailings', 'members', 'webhooks', 'sms', 'imports', 'mail'].includes(section) ? section : 'mailings';
    navigate(`/ui/${event.currentTarget.value}/${kind}`);
  };
  return html`<label class="account-switcher">
    <span>Account</span>
    <select value=${account} onChange=${change}>
      ${accounts.map((a) => html`<option value=${String(a.account_id)}>${a.name ?? `Account ${a.account_id}`} (${a.account_id})${a.is_hq ? ' · HQ' : ''}</option>`)}
    </select>
  </label>`;
}

function SignOut() {
  const signOut = async () => {
    try {
      await fetch('/ui/logout', {
        method: 'POST',
        headers: { 'x-csrf-token': csrfToken() },
        credentials: 'same-origin',
        redirect: 'manual',
      });
    } finally {
      location.assign('/ui/login');
    }
  };
  return html`<button type="button" class="link" onClick=${signOut}>Sign out</button>`;
}

function NotFound() {
  return html`<section class="page" data-page="notFound" data-loaded="true">
    <h1 tabindex="-1">Page not found</h1>
    <p>The console has no page at this address.</p>
  </section>`;
}
