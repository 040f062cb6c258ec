#!/usr/bin/env node
// Builds dist/ from the TypeScript sources: one ESM bundle with a chunk per lazily
// loaded part (each command, the local engine, the HTTP client, the server).
//
// Why a bundle: on these machines every module file costs 1-3 ms to load whatever
// its size, and a local `amsg members get` touched ~96 files (bench/RESULTS.md).
// Type checking is `tsc --noEmit`, run before this by `npm run build`.
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * commander requires node:child_process at load for executable subcommands, which
 * amsg does not use; that pulls in net, dgram and streams on every start. Its
 * import becomes a proxy that loads the real module only if it is ever touched.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'amsg-lazy' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'amsg-lazy' }, () => ({
      contents:
        "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:child_process'))[key] });",
      loader: 'js',
    }));
  },
};

const root = fileURLToPath(new URL('..', import.meta.url));
// `node scripts/build.js --outdir DIR` builds elsewhere (a second copy to try things with).
const outIndex = process.argv.indexOf('--outdir');
const outdir = outIndex > 0 ? process.argv[outIndex + 1] : `${root}/dist`;
rmSync(outdir, { recursive: true, force: true });
const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // NOMIN=1 keeps names, for readable CPU profiles.
  minify: !process.env.NOMIN,
  // The native addon is loaded by path at run time (src/store/db.ts).
  // react-devtools-core is Ink's optional debugging hook (loaded only with DEV=true).
  external: ['*.node', 'react-devtools-core'],
  // CommonJS dependencies (commander, find-my-way, better-sqlite3) call require().
  banner: { js: "import{createRequire as __amsgCreateRequire}from'node:module';const require=__amsgCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};
const result = await build({
  ...common,
  entryPoints: { main: 'src/cli/main.ts' },
  splitting: true,
  plugins: [lazyChildProcessForCommander],
  // Which packages went into which chunk (bench/check-modules.js reads it).
  metafile: true,
});
writeFileSync(`${outdir}/metafile.json`, JSON.stringify(result.metafile));
// The import writer's thread (a worker starts from a file) is one file of its own:
// built with main, it would share chunks with the engine, and every local command
// would load one file more.
await build({ ...common, entryPoints: { 'import-writer-thread': 'src/service/import-writer-thread.ts' } });
