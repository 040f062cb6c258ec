// A message as the recipient sees it: the HTML in a sandboxed frame at desktop, tablet and
// phone widths, the plain text, the HTML source and the headers. The HTML is never put into the
// console's own document: the frame's URL answers it with a sandbox CSP, and the <iframe> has
// no allow-scripts and no allow-same-origin, so nothing in a message can run.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { Choice } from '../ui.js';

const WIDTHS = [
  ['desktop', 'Desktop'],
  ['768', 'Tablet · 768 px'],
  ['375', 'Phone · 375 px'],
];
const VIEWS = [
  ['html', 'HTML'],
  ['text', 'Plain text'],
  ['source', 'Source'],
  ['headers', 'Headers'],
];

/** `frameSrc`: the /ui/frame/… URL of the HTML; `message`: {subject, html_body, plaintext, headers?}. */
export function MessageView({ frameSrc, message, who }) {
  const [width, setWidth] = useState('desktop');
  const [view, setView] = useState(message.html_body ? 'html' : 'text');
  return html`<div class="message-view">
    <p><span class="muted">Subject:</span> <strong data-subject>${message.subject}</strong></p>
    <div class="filters">
      <${Choice} label="Show" options=${VIEWS} value=${view} onChange=${setView} />
      ${view === 'html' ? html`<${Choice} label="Width" options=${WIDTHS} value=${width} onChange=${setWidth} />` : null}
    </div>
    ${
      view === 'html'
        ? message.html_body
          ? html`<iframe
            class="preview-frame"
            sandbox="allow-popups allow-popups-to-escape-sandbox"
            referrerpolicy="no-referrer"
            src=${frameSrc}
            title=${`The message's HTML${who ? ` for ${who}` : ''}`}
            data-width=${width}
            width=${width === 'desktop' ? '100%' : width}
          ></iframe>`
          : html`<p class="muted">This message has no HTML part.</p>`
        : null
    }
    ${view === 'text' ? html`<pre data-plaintext>${message.plaintext || '(no plain text part)'}</pre>` : null}
    ${view === 'source' ? html`<pre data-source>${message.html_body || '(no HTML part)'}</pre>` : null}
    ${
      view === 'headers'
        ? message.headers
          ? html`<pre data-headers>${message.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}</pre>`
          : html`<p class="muted">Loading headers…</p>`
        : null
    }
  </div>`;
}
