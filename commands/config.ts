import type { Command } from 'commander';
import { action, examples, UsageError } from '../src/cli/context.js';
import { configPath, PROFILE_KEYS, readConfig, writeConfig, type ProfileKey } from '../src/client/config.js';
import { checkAllowPattern, maskSmtpUrl, parseSmtpUrl, SmtpUrlError, splitAllow } from '../src/client/smtp-url.js';

/** Shows a key pair's public half only, and an SMTP URL without its password. */
const mask = (key: string, value: string | undefined) =>
  key === 'api_key' && value ? value.replace(/:.*/, ':••••') : key === 'smtp' && value ? maskSmtpUrl(value) : value;

export function register(config: Command) {
  config.description(`configuration profiles, in ${configPath()}`);

  examples(
    config
      .command('set <key> <value>')
      .description(`set a profile value (${PROFILE_KEYS.join(', ')})`)
      .action(
        action(async (ctx, key: string, value: string) => {
          if (!(PROFILE_KEYS as readonly string[]).includes(key))
            throw new UsageError(`unknown setting "${key}"; settings are ${PROFILE_KEYS.join(', ')}`);
          try {
            if (key === 'smtp') parseSmtpUrl(value);
            if (key === 'smtp_allow') splitAllow(value).forEach(checkAllowPattern);
          } catch (err) {
            throw err instanceof SmtpUrlError ? new UsageError(err.message) : err;
          }
          const file = readConfig();
          const name = ctx.opts.profile ?? file.current_profile ?? 'default';
          file.profiles ??= {};
          file.profiles[name] = { ...file.profiles[name], [key]: value };
          file.current_profile ??= name;
          const path = writeConfig(file);
          ctx.note(`set ${key} in profile "${name}" (${path})`);
          await ctx.done({ profile: name, [key]: mask(key, value) }, `${key} = ${mask(key, value)}`);
        }),
      ),
    ['amsg config set base_url https://api.example.com', 'amsg --profile staging config set api_key pub:priv'],
  );

  examples(
    config
      .command('get [key]')
      .description('show the current profile, or one value of it')
      .action(
        action(async (ctx, key?: string) => {
          const file = readConfig();
          const name = ctx.opts.profile ?? file.current_profile ?? 'default';
          const profile = file.profiles?.[name] ?? {};
          if (key) {
            if (!(PROFILE_KEYS as readonly string[]).includes(key)) throw new UsageError(`unknown setting "${key}"`);
            const value = profile[key as ProfileKey];
            if (value === undefined) throw new UsageError(`${key} is not set in profile "${name}"`);
            return ctx.print(mask(key, value));
          }
          await ctx.print({
            profile: name,
            ...Object.fromEntries(Object.entries(profile).map(([k, v]) => [k, mask(k, v)])),
          });
        }),
      ),
    ['amsg config get', 'amsg config get base_url'],
  );

  examples(
    config
      .command('use-profile <name>')
      .description('make a profile the current one')
      .action(
        action(async (ctx, name: string) => {
          const file = readConfig();
          if (!file.profiles?.[name])
            throw new UsageError(`no profile named "${name}" (profiles: ${Object.keys(file.profiles ?? {}).join(', ') || 'none'})`);
          file.current_profile = name;
          writeConfig(file);
          await ctx.done({ current_profile: name }, `Now using profile "${name}".`);
        }),
      ),
    ['amsg config use-profile staging'],
  );

  examples(
    config
      .command('list')
      .description('list profiles')
      .action(
        action(async (ctx) => {
          const file = readConfig();
          await ctx.print(
            Object.entries(file.profiles ?? {}).map(([name, p]) => ({
              profile: name,
              current: name === (file.current_profile ?? 'default'),
              ...Object.fromEntries(Object.entries(p).map(([k, v]) => [k, mask(k, v)])),
            })),
          );
        }),
      ),
    ['amsg config list'],
  );
}
