// Where the startup time of `amsg members get` goes: runs bench/startup-probe.js in
// a fresh process several times and answers the median of each step.
//
//   node bench/startup.js DB MEMBER_ID [RUNS]
//
// Each step's time is incremental: what it costs on top of the steps before it, in
// the order the real command loads things (so "find-my-way" does not include the
// module-loader warm-up that "commander" already paid).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('./startup-probe.js', import.meta.url));

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Median per step over `runs` fresh processes: { boot, steps: [{name, ms}], total, wall }. */
export function startupBreakdown(dbFile, memberId, runs = 7, env = process.env) {
  const samples = [];
  const walls = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [PROBE, dbFile, String(memberId)], { env, encoding: 'utf8', timeout: 30_000 });
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`startup probe exited ${r.status}: ${r.stderr.trim()}`);
    samples.push(JSON.parse(r.stdout.trim().split('\n').pop()));
  }
  const names = Object.keys(samples[0].steps);
  return {
    runs,
    boot: median(samples.map((s) => s.boot)),
    steps: names.map((name) => ({ name, ms: median(samples.map((s) => s.steps[name])) })),
    total: median(samples.map((s) => s.total)),
    wall: median(walls),
  };
}

/** Text lines for a breakdown, largest steps marked with their share of the total. */
export function formatBreakdown(b) {
  const rows = [['node bootstrap (until first line of user code)', b.boot], ...b.steps.map((s) => [s.name, s.ms])];
  const width = Math.max(...rows.map(([n]) => n.length));
  const lines = rows.map(
    ([n, ms]) => `  ${n.padEnd(width)}  ${ms.toFixed(1).padStart(7)} ms  ${((100 * ms) / b.total).toFixed(0).padStart(3)}%`,
  );
  lines.push(`  ${'in-process total (median)'.padEnd(width)}  ${b.total.toFixed(1).padStart(7)} ms`);
  lines.push(`  ${'wall time incl. spawn and exit (median)'.padEnd(width)}  ${b.wall.toFixed(1).padStart(7)} ms`);
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [db, id, runs] = process.argv.slice(2);
  if (!db || !id) {
    process.stderr.write('usage: node bench/startup.js DB MEMBER_ID [RUNS]\n');
    process.exit(2);
  }
  const b = startupBreakdown(db, id, Number(runs ?? 7));
  console.log(`startup of members get, median of ${b.runs} fresh processes (ms, incremental):`);
  for (const line of formatBreakdown(b)) console.log(line);
}
