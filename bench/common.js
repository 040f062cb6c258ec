// What the bulk benches share: the benchmark audience and how a command is timed.
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The median: the middle value, or the mean of the two middle values of an even count. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** A positive whole number from the environment variable `name`, or `dflt`; anything else goes to `bad`. */
export function envInt(name, dflt, bad) {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  if (!/^[1-9]\d*$/.test(v)) bad(`${name} must be a positive whole number, got "${v}"`);
  return Number(v);
}

/** Stops a child process (SIGTERM, SIGKILL after 5 s) and takes it out of `children`; resolves once it has exited. */
export function stopChild(child, children) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(children.delete(child));
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      children.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
export const measuresRss = GNU_TIME !== undefined;

/** Runs a command; answers wall ms, stdout and (with GNU time) peak RSS in MB and CPU time (user + system) in ms. */
export function timed(cmd, args, env = {}) {
  const full = GNU_TIME ? [GNU_TIME, ['-f', 'maxrss=%M cpu=%U+%S', cmd, ...args]] : [cmd, args];
  const t = process.hrtime.bigint();
  const r = spawnSync(full[0], full[1], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /maxrss=(\d+)/.exec(r.stderr);
  const c = /cpu=([\d.]+)\+([\d.]+)/.exec(r.stderr);
  return { ms, rssMb: m ? Number(m[1]) / 1024 : undefined, cpuMs: c ? (Number(c[1]) + Number(c[2])) * 1000 : undefined, stdout: r.stdout };
}

/**
 * The benchmark audience, one generator for every bench: email, first_name, last_name,
 * city, birthday (date), score (numeric) and group_name (four groups, or the first
 * `groups` of them: row i is in group i % groups).
 */
export async function writeMembersCsv(file, rows, { groups: groupCount = 4 } = {}) {
  const out = createWriteStream(file);
  const cities = ['Oslo', 'Bergen', 'London', 'Paris', 'Berlin', 'New York', 'Tokyo', 'Lisbon'];
  if (!Number.isInteger(groupCount) || groupCount < 1 || groupCount > 4)
    throw new Error(`writeMembersCsv: 1 to 4 groups, not ${groupCount}`);
  const groups = ['Newsletter', 'Customers', 'VIP', 'Leads'].slice(0, groupCount);
  out.write('email,first_name,last_name,city,birthday,score,group_name\n');
  let buf = '';
  for (let i = 0; i < rows; i++) {
    const day = `${1950 + (i % 50)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
    buf += `user${i}@example.com,First${i},Last${i % 997},${cities[i % 8]},${day},${((i * 7) % 1000) / 10},${groups[i % groupCount]}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

/**
 * A scratch folder for one bench script, removed on exit with every child still running:
 * its database, a config home, the environment amsg runs with there (and `baseEnv`, the
 * caller's without AMSG_* settings, for other servers), and `amsg(...args)`
 * that runs the CLI to completion and answers its stdout (or fails the bench).
 */
export async function benchWorkspace({ name, bin, node = process.execPath, fail, timeoutMs = 300_000 }) {
  const { spawnSync } = await import('node:child_process');
  const { mkdirSync, mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), `amsg-bench-${name}-`));
  const children = new Set();
  process.on('exit', () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  process.once('SIGINT', () => process.exit(130));
  const configHome = join(dir, 'config');
  mkdirSync(configHome);
  const db = join(dir, `${name}.db`);
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AMSG_') && k !== 'NODE_OPTIONS'));
  const env = { ...baseEnv, XDG_CONFIG_HOME: configHome, AMSG_DB: db, AMSG_QUIET: '1', AMSG_YES: '1' };
  const amsg = (...args) => {
    const r = spawnSync(node, [bin, ...args], { env, encoding: 'utf8', cwd: dir, timeout: timeoutMs });
    if (r.status !== 0) fail(`amsg ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
    return r.stdout;
  };
  return { dir, db, env, baseEnv, children, amsg };
}

/**
 * What a bench of `amsg serve` starts with: the repository root, the CLI to run
 * (AMSG_BENCH_BIN, a private build, or bin/amsg.js), node, `fail` (prints
 * `bench/NAME: message` and exits 1), `int` (a positive whole number from the
 * environment, or the default), autocannon (a devDependency), and `serveNodeArgs`:
 * node options for the served process from BENCH_SERVE_NODE_ARGS, split on spaces
 * (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the server under the load).
 */
export async function serveBench(name) {
  const ROOT = fileURLToPath(new URL('..', import.meta.url));
  const BIN = process.env.AMSG_BENCH_BIN ?? join(ROOT, 'bin', 'amsg.js');
  const NODE = process.execPath;
  const fail = (message) => {
    process.stderr.write(`bench/${name}: ${message}\n`);
    process.exit(1);
  };
  const int = (variable, dflt) => envInt(variable, dflt, fail);
  let autocannon;
  try {
    ({ default: autocannon } = await import('autocannon'));
  } catch (err) {
    fail(`cannot load autocannon (a devDependency): run \`npm install\` (${err.message})`);
  }
  const serveNodeArgs = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return { ROOT, BIN, NODE, fail, int, autocannon, serveNodeArgs };
}

const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout) > 0 ? Number(r.stdout) : 100;
})();

/**
 * CPU time (user + system) a process has used so far, in ms; undefined off Linux.
 * A server's CPU per request does not depend on how much CPU the load generator or a
 * neighbour took, so it says what a throughput ratio on a busy machine cannot.
 */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime, stime (fields 14 and 15)
  } catch {
    return undefined;
  }
}
