/**
 * `amsg seed`: loads fixture files, checks them whole (shapes, names, references,
 * cycles, values) before anything is written, plans what to create, update or leave
 * alone by natural key, and writes through the Api, so it seeds a local file, `amsg
 * serve` or a real service alike. The kinds themselves are declared in ./kinds.ts.
 */
import { readFile } from 'node:fs/promises';
import type { Api } from '../../client/api.js';
import { norm, SeedError, type Action, type Entry, type Kind, type Ref, type SeedRun, type Step } from './kind.js';
import { KINDS, resetAccount, STANDARD_FIELDS } from './kinds.js';

export { resetCounts } from './kinds.js';
import { Checker, FixtureError, type Problem } from './shape.js';
import { EXIT, UsageError, type RunContext } from '../context.js';

/** Top-level keys that describe the file, not the account. */
const META_KEYS = ['description', 'version'];

export interface SeedOptions {
  dryRun?: boolean;
  /** Empty the account's audience and content first (the caller has confirmed it). */
  reset?: boolean;
  note?: (message: string) => void;
}

export interface KindSummary {
  created: number;
  updated: number;
  unchanged: number;
}

export interface SeedResult {
  /** Per kind, each named record's id (a dry run: what it would do to it). */
  ids: Record<string, Record<string, number | Action>>;
  summary: Record<string, KindSummary & { generated?: number }>;
}

interface RawRecord {
  kind: Kind;
  record: unknown;
  file: string;
  path: string;
}

/** Reads and checks the shape of every file; answers the records of each kind in file order. */
export async function loadFixtures(files: string[]): Promise<RawRecord[]> {
  const problems: Problem[] = [];
  const records: RawRecord[] = [];
  const byKey = new Map<string, Kind>();
  for (const kind of KINDS) for (const key of [kind.name, ...(kind.aliases ?? [])]) byKey.set(key, kind);
  for (const file of files) {
    const c = new Checker(file);
    let doc: unknown;
    try {
      doc = await parseFile(file);
    } catch (err) {
      problems.push({ file, path: '', reason: (err as Error).message });
      continue;
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
      c.fail('', `must be an object with keys such as ${KINDS.map((k) => k.name).join(', ')}`);
      problems.push(...c.problems);
      continue;
    }
    for (const [key, value] of Object.entries(doc)) {
      if (META_KEYS.includes(key)) continue;
      const kind = byKey.get(key);
      if (!kind) {
        c.fail(key, `unknown key (expected ${[...byKey.keys(), ...META_KEYS].join(', ')})`);
        continue;
      }
      if (value === null || value === undefined) continue;
      if (!Array.isArray(value)) {
        c.fail(key, 'must be a list');
        continue;
      }
      value.forEach((x, i) => {
        const path = `${key}[${i}]`;
        const record = kind.record(x, path, c);
        if (record !== undefined) records.push({ kind, record, file, path });
      });
    }
    problems.push(...c.problems);
  }
  if (problems.length) throw new FixtureError(problems);
  return records;
}

async function parseFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (/\.ya?ml$/i.test(file)) {
    // yaml is CommonJS: bundled into a lazy chunk, its exports arrive as the default export.
    const yaml = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
    const { parse } = yaml.default ?? yaml;
    try {
      return parse(text);
    } catch (err) {
      // The parser's first line names the place: "… at line 2, column 5:".
      throw new Error(`not valid YAML: ${(err as Error).message.split('\n')[0].replace(/:$/, '')}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON: ${(err as Error).message}`);
  }
}

/** What one run knows: the account's records, the file's records, the ids so far. */
class Run implements SeedRun {
  readonly ids = new Map<string, Map<string, number | undefined>>();
  readonly accounts = new Map<string, Map<string, unknown>>();
  readonly files = new Map<string, Map<string, Entry<unknown>>>();

  constructor(
    readonly api: Api,
    readonly dryRun: boolean,
    readonly note: (message: string) => void,
  ) {
    for (const kind of KINDS) {
      this.ids.set(kind.name, new Map());
      this.accounts.set(kind.name, new Map());
      this.files.set(kind.name, new Map());
    }
  }

  id(kind: string, name: string) {
    return this.ids.get(kind)!.get(norm(name));
  }
  setId(kind: string, name: string, id: number) {
    this.ids.get(kind)!.set(norm(name), id);
  }
  existing<E>(kind: string, name: string) {
    return this.accounts.get(kind)!.get(norm(name)) as E | undefined;
  }
  defined<R>(kind: string, name: string) {
    return this.files.get(kind)!.get(norm(name))?.record as R | undefined;
  }

  /** Loads the account's records of a kind (after a reset: none, but the fields a reset keeps). */
  async load(kind: Kind, names: Set<string>, resetFirst: boolean) {
    let found = await kind.existing(this.api, names);
    if (resetFirst) found = kind.name === 'fields' ? new Map([...found].filter(([k]) => STANDARD_FIELDS.has(k))) : new Map();
    this.accounts.set(kind.name, found);
    const ids = this.ids.get(kind.name)!;
    for (const [k, e] of found) ids.set(k, kind.idOf(e));
  }
}

/**
 * Seeds the account behind `api` from fixture files. Refuses the fixture as a whole
 * (FixtureError, every problem with its file and path) before writing anything.
 */
export async function seed(api: Api, files: string[], opts: SeedOptions = {}): Promise<SeedResult> {
  const note = opts.note ?? (() => {});
  const raws = await loadFixtures(files);
  let run = new Run(api, !!opts.dryRun, note);
  const entries = await resolve(run, raws, !!opts.reset);
  if (opts.reset && !opts.dryRun) {
    note('emptying the account (--reset)');
    await resetAccount(run);
    // The ids and records of the account from here on are the ones after the reset.
    const fresh = new Run(api, false, note);
    for (const [kind, map] of run.files) fresh.files.set(kind, map);
    for (const kind of KINDS) await fresh.load(kind, namesOf(kind, entries.get(kind)!, raws), false);
    run = fresh;
  }
  const result: SeedResult = { ids: {}, summary: {} };
  for (const kind of KINDS) {
    const list = entries.get(kind)!;
    if (!list.length) continue;
    const steps = await plan(run, kind, list);
    if (!opts.dryRun) await write(run, kind, steps);
    const ids: Record<string, number | Action> = {};
    const summary: KindSummary & { generated?: number } = { created: 0, updated: 0, unchanged: 0 };
    for (const s of steps) {
      summary[s.action === 'create' ? 'created' : s.action === 'update' ? 'updated' : 'unchanged']++;
      if (kind.listed && !kind.listed(s.entry.record)) summary.generated = (summary.generated ?? 0) + 1;
      else ids[s.entry.key] = opts.dryRun ? s.action : run.id(kind.name, s.entry.key)!;
    }
    result.ids[kind.name] = ids;
    result.summary[kind.name] = summary;
  }
  return result;
}

/** The natural keys a kind's `existing` must look for: the file's, and those other records name. */
function namesOf(kind: Kind, list: Entry<unknown>[], raws: RawRecord[]): Set<string> {
  const names = new Set(list.map((e) => norm(e.key)));
  for (const raw of raws)
    for (const ref of raw.kind.refs?.(raw.record, raw.path) ?? []) if (ref.kind === kind.name) names.add(norm(ref.name));
  return names;
}

/**
 * Expands generated records, loads what the account has, and checks everything
 * that can be checked before a write: duplicates, references (to the file or the
 * account), values, and cycles among records of one kind. Answers each kind's
 * entries in the order they must be written.
 */
async function resolve(run: Run, raws: RawRecord[], resetFirst: boolean): Promise<Map<Kind, Entry<unknown>[]>> {
  const problems: Problem[] = [];
  const entries = new Map<Kind, Entry<unknown>[]>();
  const refs = new Map<RawRecord, Ref[]>(raws.map((r) => [r, r.kind.refs?.(r.record, r.path) ?? []]));
  for (const kind of KINDS) {
    const list: Entry<unknown>[] = [];
    const defined = run.files.get(kind.name)!;
    for (const raw of raws.filter((r) => r.kind === kind)) {
      const records = kind.expand ? await kind.expand(raw.record, raw, run) : [raw.record];
      records.forEach((record, i) => {
        const key = kind.key(record);
        const path = records.length > 1 || records[0] !== raw.record ? `${raw.path}.generate#${i + 1}` : raw.path;
        const entry = { record, key, file: raw.file, path };
        const twice = defined.get(norm(key));
        if (twice)
          problems.push({ file: raw.file, path, reason: `${kind.name} "${key}" is defined twice (also at ${twice.file}: ${twice.path})` });
        else defined.set(norm(key), entry);
        list.push(entry);
      });
    }
    entries.set(kind, list);
    await run.load(kind, namesOf(kind, list, raws), resetFirst);
    if (!run.dryRun) kind.bulk?.loaded?.(run, list);
  }
  for (const raw of raws) {
    for (const ref of refs.get(raw)!)
      if (!run.defined(ref.kind, ref.name) && !run.existing(ref.kind, ref.name))
        problems.push({
          file: raw.file,
          path: ref.path,
          reason: `names ${singular(ref.kind)} "${ref.name}", which is neither in the fixture nor in the account${resetFirst ? ' (after --reset)' : ''}`,
        });
    for (const [path, reason] of raw.kind.check?.(run, raw.record, raw.path) ?? []) problems.push({ file: raw.file, path, reason });
  }
  for (const kind of KINDS) entries.set(kind, ordered(kind, entries.get(kind)!, refs, raws, problems));
  if (problems.length) throw new FixtureError(problems);
  return entries;
}

/** searches → search, groups → group, event_types → event type. */
const singular = (kind: string) => kind.replace(/(ch)es$|s$/, '$1').replaceAll('_', ' ');

/** Records of one kind ordered so that each comes after those it names (searches that use searches); a cycle is a problem. */
function ordered(
  kind: Kind,
  list: Entry<unknown>[],
  refs: Map<RawRecord, Ref[]>,
  raws: RawRecord[],
  problems: Problem[],
): Entry<unknown>[] {
  const own = new Map<Entry<unknown>, Ref[]>();
  for (const raw of raws)
    if (raw.kind === kind) {
      const entry = list.find((e) => e.path === raw.path);
      if (entry)
        own.set(
          entry,
          refs.get(raw)!.filter((r) => r.kind === kind.name),
        );
    }
  if (![...own.values()].some((r) => r.length)) return list;
  const byKey = new Map(list.map((e) => [norm(e.key), e]));
  const out: Entry<unknown>[] = [];
  const state = new Map<Entry<unknown>, 'visiting' | 'done'>();
  const visit = (e: Entry<unknown>, trail: Entry<unknown>[]) => {
    if (state.get(e) === 'done') return;
    if (state.get(e) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(e)), e].map((x) => `"${x.key}"`).join(' → ');
      problems.push({ file: e.file, path: e.path, reason: `${kind.name} refer to each other in a cycle: ${cycle}` });
      return;
    }
    state.set(e, 'visiting');
    for (const ref of own.get(e) ?? []) {
      const target = byKey.get(norm(ref.name));
      if (target) visit(target, [...trail, e]);
    }
    state.set(e, 'done');
    out.push(e);
  };
  for (const e of list) visit(e, []);
  return out;
}

async function plan(run: Run, kind: Kind, list: Entry<unknown>[]): Promise<Step<unknown, unknown>[]> {
  if (kind.bulk) return kind.bulk.plan(run, list);
  return list.map((entry) => {
    const existing = run.existing(kind.name, entry.key);
    if (existing === undefined) return { entry, action: 'create' };
    return { entry, existing, action: kind.differs?.(run, entry.record, existing) ? 'update' : 'unchanged' };
  });
}

async function write(run: Run, kind: Kind, steps: Step<unknown, unknown>[]) {
  if (kind.bulk) return kind.bulk.write(run, steps);
  for (const s of steps) {
    if (s.action === 'create') run.setId(kind.name, s.entry.key, await kind.create(run, s.entry.record));
    else if (s.action === 'update') await kind.update!(run, s.entry.record, s.existing);
  }
}

/** One line per kind for people: what the run did (or, dry, would do). */
export function describeSummary(result: SeedResult, dryRun: boolean): string[] {
  const verb = dryRun
    ? { created: 'to create', updated: 'to update', unchanged: 'unchanged' }
    : { created: 'created', updated: 'updated', unchanged: 'unchanged' };
  return Object.entries(result.summary).map(([kind, s]) => {
    const parts = (['created', 'updated', 'unchanged'] as const).filter((k) => s[k]).map((k) => `${s[k]} ${verb[k]}`);
    return `${kind}: ${parts.join(', ')}${s.generated ? ` (${s.generated} generated)` : ''}`;
  });
}

/**
 * How a command reports a failed seed: a refused fixture is bad usage (exit 2), every
 * problem on its own line with file, path and reason; what the service refused once
 * writing began (a member row, a send) exits 1 with the same kind of lines.
 */
export function reportSeedFailure(ctx: RunContext, err: unknown, prefix = ''): void {
  if (err instanceof SeedError) {
    ctx.stderr.write(`amsg: ${prefix}${err.message}\n`);
    process.exitCode = EXIT.refused;
    return;
  }
  throw fixtureRefusal(err, prefix);
}

function fixtureRefusal(err: unknown, prefix: string): unknown {
  if (!(err instanceof FixtureError)) return err;
  const lines = err.problems.map((p) => `amsg: ${p.file}: ${p.path || '(top level)'}: ${p.reason}`);
  const count = err.problems.length;
  // For scripts, each problem as an object: a tool can point at the place in the file.
  return new UsageError(`${prefix}the fixture was refused, nothing was written:\n${lines.join('\n')}`, undefined, {
    error: `${prefix}the fixture was refused, nothing was written (${count} problem${count === 1 ? '' : 's'})`,
    details: { problems: err.problems.map((p) => ({ file: p.file, path: p.path, message: p.reason })) },
  });
}
