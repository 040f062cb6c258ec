/**
 * Where and as whom a command acts: flags > AMSG_* environment > profile > defaults,
 * and the config file that holds profiles. Every test uses its own XDG_CONFIG_HOME
 * through the env argument; the real home is never read or written.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsError, configPath, readConfig, resolveSettings, writeConfig, type ConfigFile } from '../../src/client/config.js';

let xdg: string;
/** The environment a test passes in: nothing but its own config home unless it adds more. */
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  xdg = mkdtempSync(join(tmpdir(), 'amsg-config-'));
  env = { XDG_CONFIG_HOME: xdg };
});
afterEach(() => rmSync(xdg, { recursive: true, force: true }));

const withConfig = (config: ConfigFile) => writeConfig(config, env);

const PROFILES: ConfigFile = {
  current_profile: 'staging',
  profiles: {
    default: { base_url: 'https://default.example/api', api_key: 'def:ault', account: '5' },
    staging: {
      base_url: 'https://staging.example/api',
      api_key: 'stage:key',
      account: '7',
      output: 'csv',
      db: 'staging.db',
      events_url: 'https://events.staging.example',
    },
    prod: { base_url: 'https://prod.example/api', api_key: 'prod:key', account: '9' },
    sandbox: { db: 'sandbox.db', account: '3' },
  },
};

function settingsError(fn: () => unknown): SettingsError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    return err as SettingsError;
  }
  throw new Error('expected a SettingsError');
}

describe('resolveSettings defaults', () => {
  it('is local mode on amsg.db as account 1 when nothing names a base URL', () => {
    expect(resolveSettings({}, env)).toEqual({
      mode: 'local',
      baseUrl: undefined,
      apiKey: undefined,
      eventsUrl: undefined,
      db: 'amsg.db',
      account: 1,
      profile: 'default',
      output: undefined,
    });
    expect(existsSync(configPath(env))).toBe(false);
  });

  it('stays local with a config file that names no base URL', () => {
    withConfig({ profiles: { default: { account: '4', output: 'json' } } });
    expect(resolveSettings({}, env)).toMatchObject({ mode: 'local', baseUrl: undefined, account: 4, output: 'json' });
  });

  it('reads the config under $XDG_CONFIG_HOME/amsg/config.json', () => {
    expect(configPath(env)).toBe(join(xdg, 'amsg', 'config.json'));
  });
});

describe('resolveSettings precedence', () => {
  it('uses the current profile of the config file', () => {
    withConfig(PROFILES);
    expect(resolveSettings({}, env)).toEqual({
      mode: 'remote',
      baseUrl: 'https://staging.example/api',
      apiKey: 'stage:key',
      eventsUrl: 'https://events.staging.example',
      db: 'staging.db',
      account: 7,
      profile: 'staging',
      output: 'csv',
    });
  });

  it('lets AMSG_* variables override the profile, key by key', () => {
    withConfig(PROFILES);
    Object.assign(env, {
      AMSG_BASE_URL: 'http://127.0.0.1:4010',
      AMSG_API_KEY: 'env:key',
      AMSG_ACCOUNT: '11',
      AMSG_OUTPUT: 'ndjson',
    });
    expect(resolveSettings({}, env)).toEqual({
      mode: 'remote',
      baseUrl: 'http://127.0.0.1:4010',
      apiKey: 'env:key',
      eventsUrl: 'https://events.staging.example', // not overridden, so still the profile's
      db: 'staging.db',
      account: 11,
      profile: 'staging',
      output: 'ndjson',
    });
  });

  it('lets flags override the environment and the profile', () => {
    withConfig(PROFILES);
    Object.assign(env, { AMSG_BASE_URL: 'http://127.0.0.1:4010', AMSG_API_KEY: 'env:key', AMSG_ACCOUNT: '11', AMSG_OUTPUT: 'ndjson' });
    const s = resolveSettings({ baseUrl: 'https://flag.example', apiKey: 'flag:key', account: '12', output: 'table' }, env);
    expect(s).toMatchObject({
      mode: 'remote',
      baseUrl: 'https://flag.example',
      apiKey: 'flag:key',
      account: 12,
      output: 'table',
      profile: 'staging',
    });
  });

  it('picks the profile by flag over AMSG_PROFILE over current_profile', () => {
    withConfig(PROFILES);
    expect(resolveSettings({}, { ...env, AMSG_PROFILE: 'prod' })).toMatchObject({
      profile: 'prod',
      baseUrl: 'https://prod.example/api',
      apiKey: 'prod:key',
      account: 9,
    });
    expect(resolveSettings({ profile: 'default' }, { ...env, AMSG_PROFILE: 'prod' })).toMatchObject({
      profile: 'default',
      baseUrl: 'https://default.example/api',
      account: 5,
    });
  });

  it('does not mix profiles: keys missing from the chosen one take defaults, not another profile', () => {
    withConfig(PROFILES);
    expect(resolveSettings({ profile: 'prod' }, env)).toMatchObject({ db: 'amsg.db', output: undefined });
    expect(resolveSettings({ profile: 'sandbox' }, env)).toMatchObject({ mode: 'local', baseUrl: undefined, db: 'sandbox.db', account: 3 });
  });

  it('takes events_url from AMSG_EVENTS_URL, then the profile, and defaults it to the base URL', () => {
    withConfig(PROFILES);
    expect(resolveSettings({ profile: 'prod' }, env).eventsUrl).toBe('https://prod.example/api');
    expect(resolveSettings({ profile: 'prod' }, { ...env, AMSG_EVENTS_URL: 'https://ev.example' }).eventsUrl).toBe('https://ev.example');
    expect(resolveSettings({ baseUrl: 'https://flag.example' }, env).eventsUrl).toBe('https://events.staging.example');
  });
});

describe('local mode wins when asked for', () => {
  it('--local forces local even when AMSG_BASE_URL is set', () => {
    const s = resolveSettings({ local: true }, { ...env, AMSG_BASE_URL: 'https://remote.example' });
    expect(s).toMatchObject({ mode: 'local', baseUrl: undefined, eventsUrl: undefined, db: 'amsg.db' });
  });

  it('--db forces local with that file, even when AMSG_BASE_URL and a remote profile are set', () => {
    withConfig(PROFILES);
    const s = resolveSettings({ db: '/tmp/other.db' }, { ...env, AMSG_BASE_URL: 'https://remote.example' });
    expect(s).toMatchObject({ mode: 'local', baseUrl: undefined, db: '/tmp/other.db', account: 7 });
  });

  it('AMSG_LOCAL=1 forces local over the environment and the profile, but not over --base-url', () => {
    withConfig(PROFILES);
    for (const v of ['1', 'true', 'YES']) {
      expect(resolveSettings({}, { ...env, AMSG_LOCAL: v, AMSG_BASE_URL: 'https://remote.example' }).mode).toBe('local');
    }
    expect(resolveSettings({}, { ...env, AMSG_LOCAL: '0' }).mode).toBe('remote');
    expect(resolveSettings({ baseUrl: 'https://flag.example' }, { ...env, AMSG_LOCAL: '1' })).toMatchObject({
      mode: 'remote',
      baseUrl: 'https://flag.example',
    });
  });

  it('AMSG_DB alone does not force local: it is only the file used when local', () => {
    expect(resolveSettings({}, { ...env, AMSG_DB: 'env.db', AMSG_BASE_URL: 'https://remote.example' })).toMatchObject({
      mode: 'remote',
      db: 'env.db',
    });
  });
});

describe('resolveSettings refuses bad settings', () => {
  it.each(['0', '-1', 'abc', '1.5', '1e3', ' 2', ''])('account %j is a SettingsError', (account) => {
    const err = settingsError(() => resolveSettings({ account }, env));
    expect(err.message).toBe(`account must be a positive integer id, got "${account}"`);
  });

  it('an account id beyond the safe integers is a SettingsError, not a rounded id', () => {
    const err = settingsError(() => resolveSettings({ account: '99999999999999999999' }, env));
    expect(err.message).toBe('account must be a positive integer id, got "99999999999999999999"');
    expect(resolveSettings({ account: String(Number.MAX_SAFE_INTEGER) }, env).account).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('a bad account from the environment or a profile is refused too', () => {
    expect(settingsError(() => resolveSettings({}, { ...env, AMSG_ACCOUNT: 'x1' })).message).toBe(
      'account must be a positive integer id, got "x1"',
    );
    withConfig({ profiles: { default: { account: 'one' } } });
    expect(settingsError(() => resolveSettings({}, env)).message).toBe('account must be a positive integer id, got "one"');
  });

  it.each(['not a url', 'ftp://example.org', 'example.org/api', 'file:///tmp/x'])('base URL %j is a SettingsError', (baseUrl) => {
    const err = settingsError(() => resolveSettings({ baseUrl }, env));
    expect(err.message).toBe(`base URL must be an http(s) URL, got "${baseUrl}"`);
  });

  it('a bad base URL from the environment is refused, but not when local mode ignores it', () => {
    expect(settingsError(() => resolveSettings({}, { ...env, AMSG_BASE_URL: 'nope' })).message).toBe(
      'base URL must be an http(s) URL, got "nope"',
    );
    expect(resolveSettings({ local: true }, { ...env, AMSG_BASE_URL: 'nope' }).mode).toBe('local');
  });

  it('an unknown profile named by flag or AMSG_PROFILE is an error naming it and the file', () => {
    withConfig(PROFILES);
    expect(settingsError(() => resolveSettings({ profile: 'qa' }, env)).message).toBe(
      `no profile named "qa" in ${join(xdg, 'amsg', 'config.json')}`,
    );
    expect(settingsError(() => resolveSettings({}, { ...env, AMSG_PROFILE: 'qa' })).message).toBe(
      `no profile named "qa" in ${join(xdg, 'amsg', 'config.json')}`,
    );
  });

  it('an explicit profile is an error also when there is no config file at all', () => {
    expect(settingsError(() => resolveSettings({ profile: 'default' }, env)).message).toMatch(/^no profile named "default" in /);
  });

  it('a config file that is not JSON is an error naming the file', () => {
    mkdirSync(join(xdg, 'amsg'), { recursive: true });
    writeFileSync(join(xdg, 'amsg', 'config.json'), '{ not json');
    expect(() => resolveSettings({}, env)).toThrow(`cannot read ${join(xdg, 'amsg', 'config.json')}: `);
  });
});

describe('writeConfig / readConfig', () => {
  it('writes the file private to the user (0600) in a 0700 directory, and reads it back', () => {
    const file = withConfig(PROFILES);
    expect(file).toBe(join(xdg, 'amsg', 'config.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(xdg, 'amsg')).mode & 0o777).toBe(0o700);
    expect(readConfig(env)).toEqual(PROFILES);
  });

  it('makes an existing readable file private when it rewrites it, and leaves no temp file', () => {
    mkdirSync(join(xdg, 'amsg'), { recursive: true });
    const file = join(xdg, 'amsg', 'config.json');
    writeFileSync(file, '{}');
    chmodSync(file, 0o644);
    withConfig({ profiles: { default: { api_key: 'pub:secret' } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(xdg, 'amsg'))).toEqual(['config.json']);
    expect(readConfig(env)).toEqual({ profiles: { default: { api_key: 'pub:secret' } } });
  });

  it('reads a missing file as an empty config', () => {
    expect(readConfig(env)).toEqual({});
  });
});
