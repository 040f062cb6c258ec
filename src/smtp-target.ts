/**
 * The SMTP server real mail goes to, as every layer names it: the client reads it from a
 * URL (src/client/smtp-url.ts), the service holds it per database (src/service/mail/settings.ts).
 */
export interface SmtpTarget {
  host: string;
  port: number;
  /** smtps:// (TLS from the first byte); smtp:// upgrades with STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  pass?: string;
  /** Accept a self-signed or otherwise unverifiable certificate (a dev server's). */
  tlsInsecure?: boolean;
  /** The URL with its password masked, for every message that names the server. */
  display: string;
}
