/**
 * The few HTML documents the server writes itself: the shell every console page
 * answers (the bundle draws the page), the sign-in page (a plain form: it must work
 * before any script of ours runs) and the page a sign-in link lands on. None has an
 * inline script or style: the CSP forbids both.
 */

/** The 401 of every data call without a session. */
export const NOT_SIGNED_IN = 'not signed in to the console (or the session expired): sign in at /ui/login';

/** Every page's Content-Security-Policy: scripts and styles only from our own files. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * A message's HTML, in the console's iframe or opened alone: no script runs (the CSP
 * sandbox without allow-scripts, whatever the iframe says); the message's own remote
 * images and styles load as in a mail client.
 */
export const FRAME_CSP =
  "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; img-src * data: cid:; style-src * 'unsafe-inline'; " +
  "font-src * data:; frame-ancestors 'self'";

export const PAGE_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own form
  // posts and fetch writes, and the origin check could not tell them from another site's.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export const FRAME_HEADERS = {
  'content-security-policy': FRAME_CSP,
  'x-frame-options': 'SAMEORIGIN',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const head = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/console.css">`;

/** The document of every console page (docs/console-contract.md, "The shell"). */
export const SHELL = `${head('amsg console')}
<script type="module" src="/ui/assets/console.js"></script>
</head>
<body>
<div id="app"></div>
<noscript>The amsg console needs JavaScript.</noscript>
</body>
</html>
`;

/** The sign-in form (key pair), with a message when the last try failed. */
export function loginPage(opts: { message?: string; next?: string } = {}): string {
  return `${head('Sign in · amsg console')}
</head>
<body>
<main class="login">
<h1>amsg console</h1>
${opts.message ? `<p class="login-error" role="alert">${escapeHtml(opts.message)}</p>\n` : ''}<form method="post" action="/ui/login">
<input type="hidden" name="next" value="${escapeHtml(opts.next ?? '')}">
<label for="public_key">Public key</label>
<input id="public_key" name="public_key" autocomplete="username" required>
<label for="private_key">Private key</label>
<input id="private_key" name="private_key" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p class="login-hint">Or open the sign-in link that <code>amsg serve</code> or <code>amsg console</code> printed.</p>
</main>
</body>
</html>
`;
}

/**
 * Where a sign-in link lands: a refresh to the first page, not a redirect. A
 * SameSite=Strict cookie set on a navigation that began on another site (a link in a
 * chat) is not sent on that navigation's redirect; a refresh from our own page is same-site.
 */
export function landingPage(to: string): string {
  const url = escapeHtml(to);
  return `${head('Signed in · amsg console')}
<meta http-equiv="refresh" content="0;url=${url}">
</head>
<body>
<main class="login"><p>Signed in. <a href="${url}">Open the console</a>.</p></main>
</body>
</html>
`;
}
