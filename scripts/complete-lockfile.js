#!/usr/bin/env node
// Run after `npm install` changes package-lock.json.
//
// The package registry these machines reach serves only the linux-x64 builds of some
// packages' per-platform optional dependencies (rollup's, under vitest). `npm install`
// then leaves those optional packages out of the lock file, and `npm ci` refuses a
// lock file that is missing a declared dependency. This adds the missing entries as
// what they are: optional, for another os/cpu, so `npm ci` skips them on this one.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

/** os, cpu and libc from a platform package name such as @rollup/rollup-linux-arm64-musl. */
function platformOf(name) {
  const base = name.split('/').pop();
  const os = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'win32', 'sunos', 'aix', 'netbsd'].find((o) =>
    base.includes(o),
  );
  const cpu = ['arm64', 'loong64', 'ppc64', 'riscv64', 's390x', 'ia32', 'x64', 'arm'].find((c) => base.includes(`-${c}`));
  const libc = base.includes('musl') ? 'musl' : os === 'linux' && base.includes('gnu') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[`${path}/node_modules/${dep}`] || packages[key]) continue;
    const { os, cpu, libc } = platformOf(dep);
    packages[key] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(os ? { os: [os] } : {}),
      ...(libc ? { libc: [libc] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`complete-lockfile: added ${added} optional platform entries`);
