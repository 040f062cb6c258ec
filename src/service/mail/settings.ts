/**
 * Where real mail goes, per open database: set by the process that holds it (`amsg serve
 * --smtp`, a local command with AMSG_SMTP_URL or a profile's `smtp`), read by the services
 * that queue mail. A database without settings queues nothing: every send stays simulated,
 * as it always was. Kept by database, not in a global, so a test can hold two.
 */
import type { Db } from '../../store/db.js';
import type { SmtpTarget } from '../../smtp-target.js';

export type { SmtpTarget };

export interface MailSettings {
  smtp: SmtpTarget;
  /** Patterns (`*@example.test`) of the audience addresses a mailing's own sends may go to; none: no member is mailed. */
  allow: readonly string[];
  /** Where this process answers the links of opt-in confirmations (`amsg serve`'s URL); absent: the sandbox's view host. */
  publicUrl?: string;
}

const byDb = new WeakMap<Db, MailSettings>();

export function configureMail(db: Db, settings: MailSettings | undefined) {
  if (settings) byDb.set(db, settings);
  else byDb.delete(db);
}

export function mailSettings(db: Db): MailSettings | undefined {
  return byDb.get(db);
}

/**
 * An allow pattern as a SQLite GLOB over the lower-cased address: `*` and `?` keep their
 * meaning, and `[` (a GLOB class) is matched as itself.
 */
export const allowGlob = (pattern: string) => pattern.trim().toLowerCase().replaceAll('[', '[[]');
