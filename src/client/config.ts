import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkAllowPattern, parseSmtpUrl, SmtpUrlError, splitAllow, type SmtpTarget } from './smtp-url.js';

/** Settings a profile can hold (`amsg config set KEY VALUE`). */
export const PROFILE_KEYS = [
  'base_url',
  'api_key',
  'events_url',
  'db',
  'account',
  'output',
  'smtp',
  'smtp_allow',
  'smtp_tls_insecure',
] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
export type Profile = Partial<Record<ProfileKey, string>>;

export interface ConfigFile {
  current_profile?: string;
  profiles?: Record<string, Profile>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'amsg', 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): ConfigFile {
  try {
    return JSON.parse(readFileSync(configPath(env), 'utf8')) as ConfigFile;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return {};
    throw new Error(`cannot read ${configPath(env)}: ${(err as Error).message}`);
  }
}

/** Writes atomically (temp file + rename) and private to the user: it may hold a private key. */
export function writeConfig(config: ConfigFile, env: NodeJS.ProcessEnv = process.env): string {
  const file = configPath(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

export interface Settings {
  mode: 'local' | 'remote';
  baseUrl?: string;
  apiKey?: string;
  eventsUrl?: string;
  db: string;
  account: number;
  profile: string;
  output?: string;
  /** Local mode: the SMTP server real mail goes to (AMSG_SMTP_URL, the profile's smtp), and the audience addresses it may go to. */
  mail?: { smtp: SmtpTarget; allow: string[] };
}

/** The global flags that bear on where and as whom a command acts. */
export interface ConnectionFlags {
  local?: boolean;
  db?: string;
  baseUrl?: string;
  apiKey?: string;
  account?: string;
  profile?: string;
  output?: string;
}

export class SettingsError extends Error {}

/** Resolves flags > AMSG_* environment > profile > defaults. Local mode unless something names a base URL. */
export function resolveSettings(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Settings {
  const config = readConfig(env);
  const profileName = flags.profile ?? env.AMSG_PROFILE ?? config.current_profile ?? 'default';
  const profile = config.profiles?.[profileName];
  if (!profile && (flags.profile || env.AMSG_PROFILE)) throw new SettingsError(`no profile named "${profileName}" in ${configPath(env)}`);
  const pick = (flag: string | undefined, envName: string, key: ProfileKey) => flag ?? env[envName] ?? profile?.[key];

  const wantsLocal = flags.local || flags.db !== undefined || (!flags.baseUrl && isTrue(env.AMSG_LOCAL));
  const baseUrl = wantsLocal ? undefined : pick(flags.baseUrl, 'AMSG_BASE_URL', 'base_url');
  const accountText = pick(flags.account, 'AMSG_ACCOUNT', 'account') ?? '1';
  // Ids are 64-bit, but one that does not fit a safe integer would be silently rounded.
  if (!/^\d+$/.test(accountText) || !Number.isSafeInteger(Number(accountText)) || Number(accountText) < 1)
    throw new SettingsError(`account must be a positive integer id, got "${accountText}"`);
  if (baseUrl) {
    try {
      const u = new URL(baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new SettingsError(`base URL must be an http(s) URL, got "${baseUrl}"`);
    }
  }
  // Only a local command delivers mail: a remote one leaves it to the server (amsg serve --smtp).
  const smtpUrl = baseUrl ? undefined : pick(undefined, 'AMSG_SMTP_URL', 'smtp');
  let mail: Settings['mail'];
  if (smtpUrl) {
    try {
      mail = {
        smtp: parseSmtpUrl(smtpUrl, { tlsInsecure: isTrue(pick(undefined, 'AMSG_SMTP_TLS_INSECURE', 'smtp_tls_insecure')) }),
        allow: splitAllow(pick(undefined, 'AMSG_SMTP_ALLOW', 'smtp_allow')).map(checkAllowPattern),
      };
    } catch (err) {
      if (err instanceof SmtpUrlError) throw new SettingsError(err.message);
      throw err;
    }
  }
  return {
    mode: baseUrl ? 'remote' : 'local',
    baseUrl,
    apiKey: pick(flags.apiKey, 'AMSG_API_KEY', 'api_key'),
    eventsUrl: pick(undefined, 'AMSG_EVENTS_URL', 'events_url') ?? baseUrl,
    db: pick(flags.db, 'AMSG_DB', 'db') ?? 'amsg.db',
    account: Number(accountText),
    profile: profileName,
    output: pick(flags.output, 'AMSG_OUTPUT', 'output'),
    mail,
  };
}

export const isTrue = (v: string | undefined) => v !== undefined && /^(1|true|yes)$/i.test(v);
