#!/usr/bin/env node
// Builds dist/ from the TypeScript sources:
//   amsg.cjs        the CLI, its engine and server: one CommonJS bundle that bin/amsg.js
//                   compiles with V8's code cache (amsg.cjs.cache, written at the end);
//   undici.cjs      the parts of undici an HTTP call needs (remote commands, webhooks),
//                   with its code cache (undici.cjs.cache, from a warm-up remote call)
//                   and node:http2 loaded only if used (lazyHttp2ForUndici);
//   faker.cjs       the generator of seeded audiences (amsg seed), with its code cache
//                   (faker.cjs.cache, from a warm-up seed);
//   iconv.cjs       iconv-lite, for a CSV file that is not UTF-8 (members import);
//   nodemailer.cjs  nodemailer, for a process with real mail to send (src/service/mail/deliver.ts);
//   caniemail.cjs   the caniemail data and checker, for the HTML check (GET /mailings/{id}/html_check);
//   ink-react.js    Ink and React for the live views: an ES module, since Ink waits at
//                   its top level for Yoga's WebAssembly, which CommonJS cannot do;
//   import-writer-thread.js  the streamed import's writer thread (a worker starts from a file).
// The web console's browser bundle (dist/console/) is scripts/build-console.js's, run after this.
//
// Why one bundle with a code cache: on these machines every module file costs 1-3 ms
// to load, and compiling the engine's ES modules cost a local command ~25 ms on each
// start (bench/RESULTS.md). Node 20 caches no ES module's compiled code, but a
// vm.Script takes V8's cached data, so the CLI is CommonJS: compiled once, at build
// time, by a warm-up run, and deserialized from then on. The lazily used packages
// are files of their own, so a command that does not use them reads none of them.
// Type checking is `tsc --noEmit`, run before this by `npm run build`.
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      contents: "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:child_process'))[key] });",
      loader: 'js',
    }));
  },
};

/**
 * Packages the core bundle leaves to files of their own, loaded by require() when a
 * command first uses them. Each import specifier becomes a module of the core that
 * answers the vendor file's export of that name.
 */
const VENDOR = {
  'undici.cjs': [
    'undici/lib/dispatcher/pool.js',
    'undici/lib/dispatcher/agent.js',
    'undici/lib/api/api-request.js',
    'undici/lib/core/errors.js',
  ],
  'faker.cjs': ['@faker-js/faker/locale/en'],
  // Real mail over SMTP (src/service/mail/deliver.ts): only a process with mail to send loads it.
  'nodemailer.cjs': ['nodemailer'],
  // The HTML check's data and checker (GET /mailings/{id}/html_check): 640 KB of JSON.
  'caniemail.cjs': ['caniemail'],
  // Only for a CSV that is not UTF-8 (members import): its code tables are most of its size.
  'iconv.cjs': ['iconv-lite'],
};
const vendorOf = new Map(Object.entries(VENDOR).flatMap(([file, specifiers]) => specifiers.map((s) => [s, file])));
const vendorFiles = {
  name: 'vendor-files',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (vendorOf.has(args.path)) return { path: args.path, namespace: 'amsg-vendor' };
      // The vendor file itself, and the ES module of the live views, stay outside.
      if (args.namespace === 'amsg-vendor' || /[\\/]ink-react\.js$/.test(args.path)) return { path: args.path, external: true };
      return undefined;
    });
    // Through bin/amsg.js's loadCompiled when it is there (the file's code cache), else require().
    b.onLoad({ filter: /.*/, namespace: 'amsg-vendor' }, (args) => {
      const file = JSON.stringify(`./${vendorOf.get(args.path)}`);
      return {
        contents: `const load = globalThis[Symbol.for('amsg.loadCompiled')];
module.exports = (load ? load(require.resolve(${file})) : require(${file}))[${JSON.stringify(args.path)}];`,
        loader: 'js',
      };
    });
  },
};

const root = fileURLToPath(new URL('..', import.meta.url));
// `node scripts/build.js --outdir DIR` builds elsewhere (a second copy to try things with).
const outIndex = process.argv.indexOf('--outdir');
const outdir = outIndex > 0 ? process.argv[outIndex + 1] : `${root}/dist`;
rmSync(outdir, { recursive: true, force: true });
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // NOMIN=1 keeps names, for readable CPU profiles.
  minify: !process.env.NOMIN,
  // The native addon is loaded by path at run time (src/store/db.ts).
  // react-devtools-core is Ink's optional debugging hook (loaded only with DEV=true).
  external: ['*.node', 'react-devtools-core'],
  logLevel: 'warning',
};
/** A CommonJS bundle: import.meta.url is the bundle's own URL, as it was each module's in ESM. */
const commonjs = {
  ...common,
  format: 'cjs',
  define: { 'import.meta.url': '__amsgModuleUrl' },
  banner: { js: "const __amsgModuleUrl=require('node:url').pathToFileURL(__filename).href;" },
};
/** An ES module bundle: CommonJS dependencies inside it call require(). */
const esm = {
  ...common,
  format: 'esm',
  banner: { js: "import{createRequire as __amsgCreateRequire}from'node:module';const require=__amsgCreateRequire(import.meta.url);" },
};

const core = await build({
  ...commonjs,
  entryPoints: { amsg: 'src/cli/main.ts' },
  outdir,
  outExtension: { '.js': '.cjs' },
  plugins: [lazyChildProcessForCommander, vendorFiles],
  // A vm.Script has no ES module loader: import() of a builtin (node:http) becomes
  // require(). Ink, the one ES module, is imported by bin/amsg.js (src/cli/ink.ts).
  supported: { 'dynamic-import': false },
  // Which packages went into which file (bench/check-modules.js reads it).
  metafile: true,
});
/**
 * undici's HTTP/2 client reads node:http2's header constants when it loads, and loading
 * node:http2 was half of what a remote command spent loading undici (~25 ms); amsg
 * speaks HTTP/1.1. The vendor file gets those constants as the values the protocol
 * fixes (RFC 9113), and node:http2 itself on first use of anything else (a connect).
 */
const lazyHttp2ForUndici = {
  name: 'lazy-http2-for-undici',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http2$/ }, (args) =>
      // The stand-in's own require is the real module.
      args.namespace === 'amsg-lazy-http2' ? { path: 'node:http2', external: true } : { path: 'http2', namespace: 'amsg-lazy-http2' },
    );
    b.onLoad({ filter: /.*/, namespace: 'amsg-lazy-http2' }, () => ({
      contents: `const constants = {
  HTTP2_HEADER_AUTHORITY: ':authority', HTTP2_HEADER_METHOD: ':method', HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_SCHEME: ':scheme', HTTP2_HEADER_CONTENT_LENGTH: 'content-length', HTTP2_HEADER_EXPECT: 'expect',
  HTTP2_HEADER_STATUS: ':status', HTTP2_HEADER_PROTOCOL: ':protocol', NGHTTP2_REFUSED_STREAM: 7, NGHTTP2_CANCEL: 8,
};
let real;
module.exports = new Proxy({}, {
  get: (_, key) => (key === 'constants' ? new Proxy(constants, { get: (c, k) => (k in c ? c[k] : (real ??= require('node:http2')).constants[k]) }) : (real ??= require('node:http2'))[key]),
});`,
      loader: 'js',
    }));
  },
};

const vendors = await Promise.all(
  Object.entries(VENDOR).map(([file, specifiers]) =>
    build({
      ...commonjs,
      plugins: file === 'undici.cjs' ? [lazyHttp2ForUndici] : [],
      stdin: {
        contents: `module.exports = {${specifiers.map((s) => `${JSON.stringify(s)}: require(${JSON.stringify(s)})`).join(', ')}};`,
        resolveDir: root,
        loader: 'js',
      },
      outfile: join(outdir, file),
      metafile: true,
    }),
  ),
);
// Split: Ink loads its devtools hook (react-devtools-core, not installed) by a dynamic
// import only when DEV=true; unsplit, that import would sit at the bundle's top.
const views = await build({ ...esm, entryPoints: { 'ink-react': 'src/cli/ink-react.ts' }, outdir, splitting: true, metafile: true });
// The import writer's thread starts from a file of its own.
await build({ ...esm, entryPoints: { 'import-writer-thread': 'src/service/imports/import-writer-thread.ts' }, outdir });

/**
 * The CommonJS files as ASCII, so bin/amsg.js reads them as latin1: a copy of the
 * bytes, where reading UTF-8 decodes (~1.5 ms of every start for the core). esbuild
 * escapes non-ASCII text in strings but writes a regular expression's as it is (one
 * of rou3's); \uXXXX means the same character in a string, a regular expression or
 * an identifier alike.
 */
for (const file of ['amsg.cjs', ...Object.keys(VENDOR)]) {
  const path = join(outdir, file);
  const text = readFileSync(path, 'utf8');
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) writeFileSync(path, ascii);
}

const outputs = Object.assign({}, ...[core, ...vendors, views].map((r) => r.metafile.outputs));
writeFileSync(`${outdir}/metafile.json`, JSON.stringify({ inputs: {}, outputs }));

// The code cache: V8's compiled code for the functions a local command runs, written by
// one such command (bin/amsg.js writes it when AMSG_WRITE_CODE_CACHE names the file).
// Made on this machine's node; another V8 rejects it and compiles as if it were not there.
if (outdir === `${root}/dist`) {
  const dir = mkdtempSync(join(tmpdir(), 'amsg-build-'));
  try {
    // Local mode on a database of its own, whatever the builder's settings are.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AMSG_')));
    Object.assign(env, { AMSG_DB: join(dir, 'warm.db'), XDG_CONFIG_HOME: dir });
    const amsg = (args, extra = {}) =>
      execFileSync(process.execPath, [join(root, 'bin', 'amsg.js'), ...args], { env: { ...env, ...extra }, stdio: 'pipe' });
    const key = JSON.parse(amsg(['init', '--json']).toString());
    amsg(['members', 'add', 'warm@example.com', '--json']);
    amsg(['members', 'get', '1', '--json'], { AMSG_WRITE_CODE_CACHE: join(outdir, 'amsg.cjs.cache') });
    // faker's cache, from a seed that generates members.
    const warmFixture = join(dir, 'warm.yaml');
    writeFileSync(
      warmFixture,
      'fields:\n  - { shortcut_name: city, display_name: City, field_type: text }\nmembers:\n' +
        '  - generate: { count: 50, seed: 1, email: "warm{n}@example.test", fields: { first_name: first_name, last_name: last_name, city: city } }\n',
    );
    amsg(['seed', warmFixture], { AMSG_WRITE_VENDOR_CACHE: '1' });
    // undici's cache, from a remote call: `amsg serve` on the same database.
    const server = spawn(process.execPath, [join(root, 'bin', 'amsg.js'), 'serve', '--host', '127.0.0.1', '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const url = await new Promise((resolve, reject) => {
        createInterface({ input: server.stdout }).once('line', (line) => resolve(line.trim()));
        server.once('exit', (code) => reject(new Error(`amsg serve exited (${code}) during the build's warm-up`)));
      });
      amsg(['members', 'get', '1', '--json'], {
        AMSG_BASE_URL: url,
        AMSG_API_KEY: `${key.public_key}:${key.private_key}`,
        AMSG_WRITE_VENDOR_CACHE: '1',
      });
    } finally {
      server.kill();
      if (server.exitCode === null) await once(server, 'exit');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
