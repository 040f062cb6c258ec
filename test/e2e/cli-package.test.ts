import { afterAll, expect, test } from 'vitest';
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './harness.js';

/**
 * Shell and packaging: `amsg version`, `amsg completion`, and the package as npm
 * publishes it: `npm pack`, installed the way `npm install -g` lays it out, runs
 * from the PATH outside the clone. (With AMSG_TEST_NPM_INSTALL=1 the install is
 * npm's own, fetching the dependencies.)
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'amsg-pack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** Where the packed package is installed, as `npm install -g --prefix` lays it out. */
const prefix = join(dir, 'global');
const env = { AMSG_BASE_URL: '', AMSG_API_KEY: '', AMSG_DB: undefined, AMSG_QUIET: '', XDG_CONFIG_HOME: join(dir, 'config') };

test('amsg version names the release; --version prints the bare version', async () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; releaseDate: string };
  expect(pkg.releaseDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  const version = await execa('node', [BIN, 'version'], { env, reject: false });
  const flag = await execa('node', [BIN, '--version'], { env, reject: false });
  expect(version.exitCode).toBe(0);
  expect(version.stdout).toBe(`amsg ${pkg.version} (${pkg.releaseDate})`);
  expect(flag.stdout).toMatch(/^\d+\.\d+\.\d+$/);
  expect(flag.stdout).toBe(pkg.version);
  expect(JSON.parse((await execa('node', [BIN, 'version', '--json'], { env })).stdout)).toEqual({
    version: pkg.version,
    released: pkg.releaseDate,
  });
  // The changelog has an entry for the release `amsg version` names.
  expect(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).toContain(`## [${pkg.version}] - ${pkg.releaseDate}`);
});

test('amsg completion bash completes commands, flags and enumerated values', async () => {
  const script = join(dir, 'amsg.bash');
  writeFileSync(script, (await execa('node', [BIN, 'completion', 'bash'], { env })).stdout);
  const complete = async (...words: string[]) => {
    const r = await execa('bash', [
      '-c',
      `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _amsg_complete; echo "\${COMPREPLY[@]}"`,
    ]);
    return r.stdout.split(' ');
  };
  expect(await complete('amsg', 'mem')).toEqual(['members']);
  expect(await complete('amsg', 'members', 'pur')).toEqual(['purge', 'purge-archived']);
  expect(await complete('amsg', 'members', 'groups', '')).toEqual(expect.arrayContaining(['list', 'add', 'remove', '--output']));
  expect(await complete('amsg', 'groups', 'members', 'Gold', '--l')).toEqual(['--limit', '--local']);
  expect(await complete('amsg', 'members', 'list', '--output', '')).toEqual(['table', 'json', 'ndjson', 'csv']);
  expect(await complete('amsg', 'webhooks', 'delete', '3', '--d')).toEqual(['--dry-run', '--db']);
  expect(await complete('amsg', 'groups', 'clear', 'Gold', '--status', '')).toEqual(['a', 'e', 'o', 'f', 'active', 'error', 'optout']);
  expect(await complete('amsg', 'mailings', 'message', '1', '2', '--type', '')).toEqual([
    'all',
    'html',
    'plaintext',
    'subject',
    'webview_url',
  ]);
  // zsh reuses it through bashcompinit; fish gets its own.
  const zsh = (await execa('node', [BIN, 'completion', 'zsh'], { env })).stdout;
  expect(zsh).toContain('#compdef amsg');
  expect(zsh).toContain('complete -o default -F _amsg_complete amsg');
  const fish = (await execa('node', [BIN, 'completion', 'fish'], { env })).stdout;
  expect(fish).toContain(`complete -c amsg -n '__amsg_at \\'members\\'' -a 'purge-archived'`);
  expect(fish).toContain(`complete -c amsg -n '__amsg_at \\'members list\\'' -l output -x -a 'table json ndjson csv'`);
  const bad = await execa('node', [BIN, 'completion', 'powershell'], { env, reject: false });
  expect(bad.exitCode).toBe(2);
});

/** Whether a shell is installed: the zsh and fish tests run the scripts in it when it is, and are skipped (saying why) when not. */
const installed = (shell: string) => execa('sh', ['-c', `command -v ${shell}`], { reject: false }).then((r) => r.exitCode === 0);
const [hasZsh, hasFish] = await Promise.all([installed('zsh'), installed('fish')]);
const skipped = (has: boolean, shell: string) =>
  has ? '' : ` (skipped: ${shell} is not installed here; apt-get install ${shell} runs it)`;

(hasZsh ? test : test.skip)(`amsg completion zsh loads in zsh, registers with compsys and completes${skipped(hasZsh, 'zsh')}`, async () => {
  const script = join(dir, 'amsg.zsh');
  writeFileSync(script, (await execa('node', [BIN, 'completion', 'zsh'], { env })).stdout);
  // zsh runs the function through bashcompinit (sh emulation: arrays from 0), and its
  // compgen leaves matching the typed prefix to compsys, which the test does here.
  const complete = async (...words: string[]) => {
    const r = await execa('zsh', [
      '-fc',
      `source ${script} || exit 9; [[ $_comps[amsg] == '_bash_complete -o default -F _amsg_complete' ]] || exit 8; setopt ksharrays; ` +
        `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _amsg_complete; print -rl -- "\${COMPREPLY[@]}"`,
    ]);
    const typed = words[words.length - 1];
    return r.stdout.split('\n').filter((w) => w?.startsWith(typed));
  };
  expect(await complete('amsg', 'mem')).toEqual(['members']);
  expect(await complete('amsg', 'members', 'pur')).toEqual(['purge', 'purge-archived']);
  expect(await complete('amsg', 'groups', 'delete', 'Gold', '--d')).toEqual(['--dry-run', '--db']);
  expect(await complete('amsg', 'members', 'list', '--output', '')).toEqual(['table', 'json', 'ndjson', 'csv']);
  expect(await complete('amsg', 'groups', 'clear', 'Gold', '--status', '')).toEqual(['a', 'e', 'o', 'f', 'active', 'error', 'optout']);
});

(hasFish ? test : test.skip)(`amsg completion fish completes in fish (complete -C)${skipped(hasFish, 'fish')}`, async () => {
  const script = join(dir, 'amsg.fish');
  writeFileSync(script, (await execa('node', [BIN, 'completion', 'fish'], { env })).stdout);
  // What fish offers for the command line as typed: candidate, tab, description.
  const complete = async (line: string) => {
    const r = await execa('fish', ['--no-config', '-c', `source ${script}; complete -C '${line}'`], { cwd: dir });
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]);
  };
  expect(await complete('amsg mem')).toEqual(['members']);
  expect(await complete('amsg members pur')).toEqual(['purge', 'purge-archived']);
  expect(await complete('amsg groups delete Gold --d')).toEqual(['--db', '--dry-run']);
  // Known values only, no file names of the working directory.
  expect(await complete('amsg members list --output ')).toEqual(['csv', 'json', 'ndjson', 'table']);
  expect(await complete('amsg members status 4 --to ')).toEqual(['a', 'active', 'e', 'error', 'o', 'optout']);
});

test('npm pack gives a package that runs from the PATH outside the clone', async () => {
  const packed = await execa('npm', ['pack', '--pack-destination', dir, '--ignore-scripts', '--json'], { cwd: root });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  const files = info.files.map((f) => f.path);
  expect(files).toEqual(
    expect.arrayContaining([
      'package.json',
      'bin/amsg.js',
      'bin/package.json',
      'dist/amsg.cjs',
      'dist/amsg.cjs.cache',
      'dist/undici.cjs',
      'dist/undici.cjs.cache',
      'dist/faker.cjs',
      'dist/faker.cjs.cache',
      'dist/nodemailer.cjs',
      'dist/ink-react.js',
      'dist/import-writer-thread.js',
      'man/amsg.1',
      'README.md',
    ]),
  );
  expect(files.filter((f) => /^(src|test|commands|bench)\//.test(f))).toEqual([]);

  const tarball = join(dir, info.filename);
  const pkg = join(prefix, 'lib', 'node_modules', 'amsg');
  if (process.env.AMSG_TEST_NPM_INSTALL === '1') {
    await execa('npm', ['install', '-g', '--prefix', prefix, tarball, '--no-audit', '--no-fund'], { timeout: 600_000 });
  } else {
    // What `npm install -g` lays out: the package under lib/node_modules, its
    // dependencies beside it (here the clone's, instead of fetching them), then the bin
    // and man links, made by npm's own linker (bin-links) as a global install makes them.
    mkdirSync(pkg, { recursive: true });
    await execa('tar', ['xzf', tarball, '-C', pkg, '--strip-components', '1']);
    symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
    const binLinks = await npmBinLinks();
    if (binLinks) {
      await binLinks({ path: pkg, pkg: JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')), global: true, top: true, force: true });
    } else {
      // No npm installation to borrow the linker from: the same links by hand.
      mkdirSync(join(prefix, 'bin'));
      symlinkSync('../lib/node_modules/amsg/bin/amsg.js', join(prefix, 'bin', 'amsg'));
      mkdirSync(join(prefix, 'share', 'man', 'man1'), { recursive: true });
      symlinkSync('../../../lib/node_modules/amsg/man/amsg.1', join(prefix, 'share', 'man', 'man1', 'amsg.1'));
    }
  }
  // `man amsg` finds the page where a global install links it: <prefix>/share/man/man1.
  expect(realpathSync(join(prefix, 'share', 'man', 'man1', 'amsg.1'))).toBe(realpathSync(join(pkg, 'man', 'amsg.1')));
  const elsewhere = join(dir, 'elsewhere');
  mkdirSync(elsewhere);
  const run = (...args: string[]) =>
    execa('amsg', args, { cwd: elsewhere, env: { ...env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}` }, reject: false });
  const version = await run('version');
  expect(version.exitCode, version.stderr).toBe(0);
  const released = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; releaseDate: string };
  expect(version.stdout).toBe(`amsg ${released.version} (${released.releaseDate})`);
  const init = await run('init', '--json');
  expect(init.exitCode, init.stderr).toBe(0);
  const added = await run('members', 'add', 'ada@example.com', '--group', 'Newsletter', '--json');
  expect(added.exitCode, added.stderr).toBe(0);
  expect(JSON.parse(added.stdout)).toEqual({ member_id: 1, added: true, status: 'a' });
  expect(readdirSync(elsewhere)).toContain('amsg.db');
  const imported = await execa('amsg', ['members', 'import', '-', '--json'], {
    cwd: elsewhere,
    env: { ...env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}` },
    input: 'email\nbo@example.com\n',
    reject: false,
  });
  expect(imported.exitCode, imported.stderr).toBe(0);
}, 600_000);

/** npm's own linker of bins and man pages (bin-links, inside the npm that runs the tests), or undefined. */
async function npmBinLinks(): Promise<((opts: object) => Promise<unknown>) | undefined> {
  const npmRoot = await execa('npm', ['root', '-g'], { reject: false });
  try {
    return createRequire(join(npmRoot.stdout.trim(), 'npm', 'package.json'))('bin-links');
  } catch {
    return undefined;
  }
}

const [hasMan, hasGroff] = await Promise.all([installed('man'), installed('groff')]);

(hasMan || hasGroff ? test : test.skip)(
  `man amsg reads the page a global install linked${hasMan ? '' : hasGroff ? ' (man is not installed here: groff checks the page instead)' : ' (skipped: neither man nor groff is installed here; apt-get install man-db runs it)'}`,
  async () => {
    const page = join(prefix, 'share', 'man', 'man1', 'amsg.1');
    // The pack test above installs the package; run alone, this installs nothing and says so.
    expect(readdirSync(dir), 'run with the npm pack test: it makes the global install').toContain('global');
    const shown = hasMan
      ? await execa('man', ['-M', join(prefix, 'share', 'man'), 'amsg'], {
          env: { MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '100', LANG: 'C.UTF-8' },
        })
      : await execa('groff', ['-man', '-Tutf8', '-ww', page]);
    // groff says what it could not read on stderr (-ww: every warning).
    if (!hasMan) expect(shown.stderr).toBe('');
    expect(shown.stdout).toMatch(/^AMSG\(1\)/);
    expect(shown.stdout).toContain('amsg members groups add [options] <member>');
    expect(shown.stdout).toContain('EXIT STATUS');
    const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
    expect(shown.stdout).toContain(`amsg ${version}`);
    if (hasGroff) {
      const warnings = await execa('groff', ['-man', '-Tutf8', '-ww', '-z', page]);
      expect(warnings.stderr).toBe('');
    }
  },
);
