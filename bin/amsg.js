#!/usr/bin/env node
'use strict';
// The executable shim (CommonJS: bin/package.json). `--version` answers before
// anything else loads, so the cheapest call stays as cheap as starting node.
const { readFileSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

const root = join(__dirname, '..');
/** The bundles loaded so far, by file (loadCompiled). */
const compiled = new Map();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const version = pkg.version;
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${version}\n`);
} else {
  // The bundle's lazily used packages (undici for remote calls, faker for seeding) are
  // files of their own, loaded through this too, so they start from a code cache as well.
  globalThis[Symbol.for('amsg.loadCompiled')] = (file) =>
    loadCompiled(file, process.env.AMSG_WRITE_VENDOR_CACHE ? `${file}.cache` : undefined);
  const core = loadCompiled(join(root, 'dist', 'amsg.cjs'), process.env.AMSG_WRITE_CODE_CACHE);
  // The bundle runs in a vm.Script, which has no ES module loader: it imports the
  // live views' ES module (Ink) through this file's import().
  core.setEsmImport((url) => import(url));
  // The release date is for `amsg version` (`amsg 0.2.0 (2026-11-28)`); --version stays the bare version.
  core.main(process.argv, version, pkg.releaseDate).catch((err) => {
    process.exitCode = 1;
    throw err;
  });
}

/**
 * Loads a CommonJS bundle as require() would (once per file), but compiled from V8's
 * code cache (FILE.cache, written by the build): compiling the CLI's code was a large
 * part of every start. A cache that this node's V8 cannot use is ignored, and the code
 * is compiled as usual. `cacheOut` (the core: AMSG_WRITE_CODE_CACHE=FILE; a package file:
 * its FILE.cache when AMSG_WRITE_VENDOR_CACHE is set) gets the cache of this run's code
 * (what it compiled, lazily compiled functions too) at exit.
 */
function loadCompiled(file, cacheOut) {
  const loaded = compiled.get(file);
  if (loaded) return loaded.exports;
  const vm = require('node:vm');
  const Module = require('node:module');
  let cachedData;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // not built: compile
  }
  // ASCII (the build sees to it): latin1 copies the bytes, where UTF-8 would decode them.
  const script = new vm.Script(Module.wrap(readFileSync(file, 'latin1')), { filename: file, cachedData });
  const module = { exports: {}, filename: file, id: file, loaded: false };
  compiled.set(file, module);
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file));
  module.loaded = true;
  if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
  return module.exports;
}
