// Client-side routing over the history API: the server answers the console's shell for every
// /ui/ path, and this picks the page. Eight fixed patterns do not need a routing library.
import { useEffect, useState } from 'preact/hooks';

/** `/ui/:account/mailings/:mailing` → a matcher answering {account, mailing} or null. */
function compile(pattern) {
  const names = [];
  const source = pattern.replace(/:(\w+)/g, (_, name) => {
    names.push(name);
    return '([^/]+)';
  });
  const re = new RegExp(`^${source}/?$`);
  return (path) => {
    const m = re.exec(path);
    if (!m) return null;
    return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
  };
}

/** [pattern, page name] pairs, most specific first; App maps names to components. */
export const ROUTES = [
  ['/ui/login', 'login'],
  ['/ui/:account/mailings', 'mailings'],
  ['/ui/:account/mailings/:mailing', 'mailing'],
  ['/ui/:account/mailings/:mailing/messages/:member', 'message'],
  ['/ui/:account/members', 'members'],
  ['/ui/:account/members/:member', 'member'],
  ['/ui/:account/webhooks', 'webhooks'],
  ['/ui/:account/sms', 'smsList'],
  ['/ui/:account/sms/:campaign', 'sms'],
  ['/ui/:account/imports', 'imports'],
  ['/ui/:account/mail', 'mail'],
  ['/ui/:account', 'home'],
  ['/ui', 'home'],
].map(([pattern, name]) => ({ name, match: compile(pattern) }));

export function matchRoute(path) {
  for (const route of ROUTES) {
    const params = route.match(path);
    if (params) return { name: route.name, params };
  }
  return { name: 'notFound', params: {} };
}

const listeners = new Set();
/** Goes to a console URL without a reload (replace: no new history entry). */
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The current location, re-rendering on navigation (links, back and forward). */
const readLocation = () => ({ path: location.pathname, search: location.search });

export function useLocation() {
  const [loc, setLoc] = useState(readLocation);
  useEffect(() => {
    const update = () => setLoc(readLocation());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/**
 * Plain <a href="/ui/..."> links navigate in place: one listener on the document, so pages
 * write ordinary links (keyboard, middle click and "open in new tab" keep working).
 */
export function interceptLinks() {
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname === '/ui/login') return;
    if (url.pathname.startsWith('/ui/api/') || url.pathname.startsWith('/ui/assets/')) return;
    // Same page, another fragment (the skip link): the browser's own jump and focus.
    if (url.pathname + url.search === location.pathname + location.search) return;
    event.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}

/** The query string as an object, and a setter that replaces it (for filters and searches). */
export function queryOf(search) {
  return Object.fromEntries(new URLSearchParams(search));
}
export function setQuery(values, { replace = true } = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '' && v !== false) params.set(k, String(v));
  const qs = params.toString();
  navigate(location.pathname + (qs ? `?${qs}` : ''), { replace });
}
