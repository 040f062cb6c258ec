// Module customization hooks (registered by module-log.js): every module the ESM
// loader resolves is appended, as a URL, to the log file given at registration.
// Runs on the loader thread, so it writes synchronously and keeps no state.
import { appendFileSync } from 'node:fs';

let logFile;

export function initialize(data) {
  logFile = data?.logFile;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (logFile) appendFileSync(logFile, `esm ${result.url}\n`);
  return result;
}
