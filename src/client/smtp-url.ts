/**
 * The SMTP server real mail goes to, as a URL: `smtp://user:pass@host:port` (STARTTLS when
 * the server offers it; port 587 by default) or `smtps://…` (TLS from the start; port 465).
 * User and password are percent-decoded, so a password may hold any character.
 */

import type { SmtpTarget } from '../smtp-target.js';

export type { SmtpTarget };

export class SmtpUrlError extends Error {}

/** The URL with its password shown as •••• (as `amsg config get` shows a private key). */
export function maskSmtpUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1••••@');
}

export function parseSmtpUrl(url: string, opts: { tlsInsecure?: boolean } = {}): SmtpTarget {
  const shown = maskSmtpUrl(url);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SmtpUrlError(`SMTP URL must look like smtp://user:password@host:port or smtps://…, got "${shown}"`);
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:')
    throw new SmtpUrlError(`SMTP URL must start with smtp:// or smtps://, got "${shown}"`);
  if (!u.hostname) throw new SmtpUrlError(`SMTP URL names no host: "${shown}"`);
  if (u.pathname && u.pathname !== '/') throw new SmtpUrlError(`SMTP URL takes no path (${u.pathname}): "${shown}"`);
  const secure = u.protocol === 'smtps:';
  const port = u.port ? Number(u.port) : secure ? 465 : 587;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new SmtpUrlError(`SMTP URL has a malformed %-escape in its user or password: "${shown}"`);
    }
  };
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    secure,
    ...(u.username ? { user: decode(u.username), pass: decode(u.password) } : {}),
    ...(opts.tlsInsecure ? { tlsInsecure: true } : {}),
    display: shown,
  };
}

/** Allow patterns from a comma-separated list (AMSG_SMTP_ALLOW, the profile's smtp_allow). */
export const splitAllow = (list: string | undefined) =>
  (list ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

/** An allow pattern is an address pattern: `*@example.test`, `qa+*@example.com`, `ada@example.com`. */
export function checkAllowPattern(pattern: string): string {
  if (!/^[^\s@,]+@[^\s@,]+$/.test(pattern.trim()))
    throw new SmtpUrlError(`an allow pattern is an address with * or ? wildcards, as in *@example.test; got "${pattern}"`);
  return pattern.trim();
}
