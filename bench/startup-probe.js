// Replays what `amsg members get ID --json` loads and does, in the same order, with
// a timestamp after each step, and prints the step durations (ms) as one JSON line.
// Run in a fresh process per sample: node bench/startup-probe.js DB MEMBER_ID
//
// performance.now() counts from process start, so the first mark is node's own
// bootstrap plus loading this (tiny) script.
const boot = performance.now();

const [dbFile, memberId] = process.argv.slice(2);
if (!dbFile || !memberId) {
  process.stderr.write('usage: node bench/startup-probe.js DB MEMBER_ID\n');
  process.exit(2);
}

const steps = {};
let last = boot;
const mark = (name) => {
  const now = performance.now();
  steps[name] = now - last;
  last = now;
};

const dist = new URL('../dist/', import.meta.url);
const distModule = (path) => import(new URL(path, dist).href);

// 1. The CLI: commander, then our command modules (commander already cached).
await import('commander');
mark('import commander');
const { buildProgram } = await distModule('src/cli/main.js');
mark('import dist CLI modules (main, commands/*, cli/*, client/*)');
buildProgram('0.0.0');
mark('buildProgram (define all commands)');

// 2. The local engine: its third-party dependencies first, then our modules.
await import('better-sqlite3');
mark('import better-sqlite3 (JS only)');
await import('find-my-way');
mark('import find-my-way (+ ret, safe-regex2, fast-querystring, …)');
await distModule('src/client/local-transport.js');
const { openLocal } = await distModule('src/api/local.js');
const { openDb } = await distModule('src/store/db.js');
const { Router } = await distModule('src/api/router.js');
const { localActor } = await distModule('src/service/accounts.js');
const { clockFromEnv } = await distModule('src/service/clock.js');
mark('import dist engine modules (api/*, routes/*, service/*, store/*)');
void openLocal;

// 3. Opening the database and answering.
const { default: Database } = await import('better-sqlite3');
new Database(':memory:').close();
mark('load better-sqlite3 native addon (bindings lookup + dlopen)');
const db = openDb(dbFile);
mark('openDb (open file, pragmas, migration check)');
const router = new Router(db, clockFromEnv());
mark('new Router (register routes in find-my-way)');
const actor = localActor(db, 1);
const res = await router.handle({ method: 'GET', path: `/1/members/${memberId}`, query: {}, actor });
if (res.status !== 200) throw new Error(`probe: GET /1/members/${memberId} answered ${res.status}`);
const text = JSON.stringify(JSON.parse(JSON.stringify(res.body)), null, 2) + '\n';
mark('request (actor, route, SQL, JSON)');
db.close();
mark('db.close');

process.stdout.write(JSON.stringify({ boot, steps, total: performance.now(), bytes: text.length }) + '\n');
