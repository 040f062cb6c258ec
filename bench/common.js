// What the bulk benches share: the benchmark audience and how a command is timed.
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';

export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
export const measuresRss = GNU_TIME !== undefined;

/** Runs a command; answers wall ms, stdout and (with GNU time) peak RSS in MB. */
export function timed(cmd, args, env = {}) {
  const full = GNU_TIME ? [GNU_TIME, ['-f', 'maxrss=%M', cmd, ...args]] : [cmd, args];
  const t = process.hrtime.bigint();
  const r = spawnSync(full[0], full[1], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /maxrss=(\d+)/.exec(r.stderr);
  return { ms, rssMb: m ? Number(m[1]) / 1024 : undefined, stdout: r.stdout };
}

/**
 * The benchmark audience, one generator for every bench: email, first_name, last_name,
 * city, birthday (date), score (numeric) and group_name (four groups, or the first
 * `groups` of them: row i is in group i % groups).
 */
export async function writeMembersCsv(file, rows, { groups: groupCount = 4 } = {}) {
  const out = createWriteStream(file);
  const cities = ['Oslo', 'Bergen', 'London', 'Paris', 'Berlin', 'New York', 'Tokyo', 'Lisbon'];
  if (!Number.isInteger(groupCount) || groupCount < 1 || groupCount > 4) throw new Error(`writeMembersCsv: 1 to 4 groups, not ${groupCount}`);
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
