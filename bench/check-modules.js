// Which modules does an amsg command load? Runs it once under bench/module-log.js
// (an ESM resolve hook plus the CommonJS require cache at exit) and reports the
// third-party packages and our own dist files it loaded.
//
//   node bench/check-modules.js members get 1 --json     (uses AMSG_DB etc. from the env)
//
// bench/run.js imports loadedModules() to print "ink loaded: no/yes" for `members get`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'amsg.js');
const PRELOAD = pathToFileURL(join(ROOT, 'bench', 'module-log.js')).href;

/** The package a file belongs to ("@scope/name" or "name"), or undefined outside node_modules. */
export function packageOf(file) {
  const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
  return m ? m[1].replace(/\\/g, '/') : undefined;
}

/**
 * Runs `node bin/amsg.js ...args` with the module log and answers what it loaded:
 * packages (sorted names), builtins, dist files and the total number of files.
 */
export function loadedModules(args, env = process.env) {
  const dir = mkdtempSync(join(tmpdir(), 'amsg-bench-modules-'));
  const logFile = join(dir, 'modules.log');
  try {
    const r = spawnSync(process.execPath, ['--import', PRELOAD, BIN, ...args], {
      env: { ...env, AMSG_BENCH_MODULE_LOG: logFile },
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`amsg ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}`);
    const files = new Set();
    const builtins = new Set();
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      const [kind, where] = [line.slice(0, 3), line.slice(4)];
      if (!where) continue;
      if (kind === 'esm') {
        if (where.startsWith('node:')) builtins.add(where);
        else if (where.startsWith('file:')) files.add(fileURLToPath(where));
      } else if (kind === 'cjs') {
        files.add(where);
      }
    }
    // bin/amsg.js reads the core bundle itself (to compile it from V8's code cache),
    // so neither the ESM hook nor the require cache sees it: every command loads it.
    // The packages bundled into it are listed apart: esbuild initializes a bundled
    // module only when it is first imported, so they cost bytes of the one file, not loads.
    const core = join(ROOT, 'dist', 'amsg.cjs');
    if (!(args.length === 1 && /^(--version|-V)$/.test(args[0]))) files.add(core);
    const packages = new Set();
    const corePackages = new Set();
    const distFiles = [];
    // dist/ is an esbuild bundle: the packages inside each loaded chunk come from
    // the metafile the build writes next to it.
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'metafile.json'), 'utf8'));
    for (const f of files) {
      const p = packageOf(f);
      if (p) packages.add(p);
      else if (f.startsWith(join(ROOT, 'dist'))) {
        distFiles.push(f.slice(ROOT.length));
        for (const input of Object.keys(meta.outputs[relative(ROOT, f)]?.inputs ?? {})) {
          const bundled = packageOf(`/${input}`);
          if (bundled) (f === core ? corePackages : packages).add(bundled);
        }
      }
    }
    return {
      packages: [...packages].sort(),
      corePackages: [...corePackages].sort(),
      builtins: [...builtins].sort(),
      distFiles: distFiles.sort(),
      fileCount: files.size,
      packageFileCount: [...files].filter((f) => packageOf(f)).length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (!args.length) {
    process.stderr.write('usage: node bench/check-modules.js <amsg arguments…>\n');
    process.exit(2);
  }
  const m = loadedModules(args);
  const has = (name) => (m.packages.includes(name) ? 'yes' : 'no');
  console.log(`amsg ${args.join(' ')}`);
  console.log(`  files loaded: ${m.fileCount} (${m.distFiles.length} from dist/, ${m.packageFileCount} from node_modules)`);
  console.log(`  packages: ${m.packages.join(', ') || '(none)'}`);
  console.log(`  bundled into dist/amsg.cjs (initialized on first use): ${m.corePackages.join(', ')}`);
  console.log(`  builtins imported from ESM: ${m.builtins.join(', ')}`);
  for (const name of ['ink', 'react', 'undici', 'zod', 'cli-table3', 'csv-parse', 'csv-stringify'])
    console.log(`  ${name} loaded: ${has(name)}`);
}
