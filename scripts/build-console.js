#!/usr/bin/env node
// Builds the web console's client (console/) into dist/console/: console.js (Preact + htm +
// uPlot, one minified ES module) and console.css (our styles and uPlot's). `amsg serve`
// serves both under /ui/; nothing is fetched at run time (no CDN, no web fonts).
// Runs after scripts/build.js, which empties dist/. Prints what the console ships, gzipped,
// and fails the build above the budget (150 KB for all of its JavaScript and CSS).
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const BUDGET_GZIP_BYTES = 150 * 1024;

const root = fileURLToPath(new URL('..', import.meta.url));
const outIndex = process.argv.indexOf('--outdir');
const outdir = join(outIndex > 0 ? process.argv[outIndex + 1] : join(root, 'dist'), 'console');
mkdirSync(outdir, { recursive: true });

await build({
  absWorkingDir: root,
  entryPoints: { console: 'console/main.js' },
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: !process.env.NOMIN,
  // The CSS imported by main.js becomes console.css beside console.js.
  loader: { '.css': 'css' },
  legalComments: 'none',
  logLevel: 'warning',
});

let total = 0;
const sizes = ['console.js', 'console.css'].map((file) => {
  const bytes = readFileSync(join(outdir, file));
  const gz = gzipSync(bytes, { level: 9 }).length;
  total += gz;
  return `${file} ${(bytes.length / 1024).toFixed(1)} KB (${(gz / 1024).toFixed(1)} KB gzipped)`;
});
console.error(`console: ${sizes.join(', ')}; ${(total / 1024).toFixed(1)} KB gzipped of the ${BUDGET_GZIP_BYTES / 1024} KB budget`);
if (total > BUDGET_GZIP_BYTES) {
  console.error(`console: over budget by ${((total - BUDGET_GZIP_BYTES) / 1024).toFixed(1)} KB gzipped`);
  process.exit(1);
}
