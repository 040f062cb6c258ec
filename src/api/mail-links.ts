/**
 * The links of an opt-in confirmation (src/service/mail/outbox.ts), as `amsg serve`
 * answers them: outside the route table and without a key, since a mail client follows
 * them. A GET shows a page with one button and changes nothing (a GET never writes, and
 * mail scanners fetch every link they see); the button POSTs, which confirms the signup
 * or opts the member out, and answers a page saying so.
 */
import type { Db } from '../store/db.js';
import type { Clock } from '../service/clock.js';
import { localActor } from '../service/accounts/accounts.js';
import { CONFIRM_PATH, escapeHtml, followConfirmation, OPTOUT_PATH } from '../service/mail/outbox.js';

export const isMailLink = (path: string) => path.startsWith(CONFIRM_PATH) || path.startsWith(OPTOUT_PATH);

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;

/** The answer to a confirmation link: an HTTP status and an HTML page. */
export function answerMailLink(db: Db, clock: Clock, method: string, path: string): { status: number; html: string; allow?: string } {
  const confirm = path.startsWith(CONFIRM_PATH);
  const token = path.slice((confirm ? CONFIRM_PATH : OPTOUT_PATH).length);
  if (!/^[0-9a-f]{32}$/.test(token)) return { status: 404, html: page('Link not found', '<p>This link is not one amsg sent.</p>') };
  if (method === 'GET' || method === 'HEAD')
    return {
      status: 200,
      html: page(
        confirm ? 'Confirm your subscription' : 'Opt out',
        `<form method="post"><button type="submit">${confirm ? 'Yes, subscribe me' : 'Opt me out'}</button></form>`,
      ),
    };
  if (method !== 'POST')
    return { status: 405, html: page('Method not allowed', '<p>This link takes GET or POST.</p>'), allow: 'GET, POST' };
  const result = followConfirmation(
    { db, clock, actorFor: (accountId) => localActor(db, accountId) },
    token,
    confirm ? 'confirm' : 'optout',
  );
  if (!result) return { status: 404, html: page('Link not found', '<p>This link is not one amsg sent, or its member is gone.</p>') };
  const who = `<strong>${escapeHtml(result.email)}</strong>`;
  return {
    status: 200,
    html: confirm
      ? page('Subscription confirmed', `<p>${who} is ${result.already ? 'already ' : ''}confirmed. Thank you.</p>`)
      : page('Opted out', `<p>${who} ${result.already ? 'was already opted out' : 'is opted out and will get no more mail'}.</p>`),
  };
}
