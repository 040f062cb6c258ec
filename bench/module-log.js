// Preload for `node --import ./bench/module-log.js …` with AMSG_BENCH_MODULE_LOG=FILE:
// records every module the process loads. ESM imports are seen by a resolve hook
// (module.register); CommonJS modules (including ones pulled in by require() inside
// CJS packages, which ESM hooks do not see on Node 20) are listed from the shared
// require cache when the process exits.
import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';

const logFile = process.env.AMSG_BENCH_MODULE_LOG;
if (logFile) {
  register('./module-log-hooks.js', import.meta.url, { data: { logFile } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const lines = Object.keys(require.cache).map((f) => `cjs ${f}\n`);
    appendFileSync(logFile, lines.join(''));
  });
}
