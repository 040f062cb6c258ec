/**
 * Generated audiences: `{"generate": {"count": 10000, "seed": 7, ...}}` stands for
 * `count` members with realistic values from a seeded generator, so the same block
 * gives the same members on every run and every machine. faker is loaded only here,
 * and only for a fixture that generates.
 */
import * as v from './shape.js';
import { prng } from '../../random.js';

/**
 * What a field's value is made of: a faker-backed name (`first_name`, `city`,
 * `birthdate` …) or a parameterized one (`int:0:100`, `float:0:5`, `bool:0.3`,
 * `pick:free|pro|team`, `pick_many:news|offers|events`, `date:2020-01-01:2026-01-01`).
 */
export const VALUE_KINDS = [
  'first_name',
  'last_name',
  'full_name',
  'city',
  'country',
  'country_code',
  'street',
  'zip',
  'company',
  'job_title',
  'word',
  'sentence',
  'birthdate',
  'date',
  'timestamp',
  'int',
  'float',
  'bool',
  'pick',
  'pick_many',
] as const;

const valueSpec: v.Shape<string> = (x, path, c) => {
  const s = v.str()(x, path, c);
  if (s === undefined) return undefined;
  const [kind, ...args] = s.split(':');
  if (!(VALUE_KINDS as readonly string[]).includes(kind))
    return c.fail(path, `unknown value kind "${kind}" (${VALUE_KINDS.join(', ')}; e.g. int:0:100, pick:a|b|c)`);
  if ((kind === 'int' || kind === 'float') && (args.length !== 2 || args.some((a) => !Number.isFinite(Number(a)))))
    return c.fail(path, `${kind} takes a range: ${kind}:MIN:MAX`);
  if ((kind === 'pick' || kind === 'pick_many') && !args.join(':')) return c.fail(path, `${kind} takes choices: ${kind}:a|b|c`);
  return s;
};
const share = v.num({ min: 0, max: 1 });

export const generateShape = v.obj(
  {
    count: v.num({ int: true, min: 1, max: 10_000_000 }),
    seed: v.num({ int: true }),
    email: v.str({ pattern: /\{n\}/, hint: 'must hold {n}, the member number (user{n}@example.test)' }),
    start: v.num({ int: true, min: 0 }),
    fields: v.record(valueSpec),
    groups: v.record(share),
    subscriptions: v.record(share),
    statuses: v.obj({ o: share, e: share }),
    sms: share,
  },
  ['count', 'seed'],
);
export type GenerateSpec = NonNullable<ReturnType<typeof generateShape>>;

export interface GeneratedMember {
  email: string;
  fields: Record<string, unknown>;
  groups: string[];
  subscriptions: string[];
  status?: 'o' | 'e';
  sms?: { phone_number: string };
}

/** The members a generate block stands for, in member-number order. `defaultFields`: used when the block names none. */
export async function generateMembers(spec: GenerateSpec, defaultFields: Record<string, string>): Promise<GeneratedMember[]> {
  const { faker } = await import('@faker-js/faker/locale/en');
  faker.seed(spec.seed);
  // Dates relative to a fixed day, not to today: the same seed gives the same dates next year.
  const refDate = new Date('2026-01-01T00:00:00Z');
  faker.setDefaultRefDate(refDate);
  const draw = prng(spec.seed ^ 0x5eed);
  const values = prng(spec.seed);
  const fieldSpecs = Object.entries(spec.fields ?? defaultFields).map(
    ([name, s]) => [name, valueMaker(faker, values, s, refDate)] as const,
  );
  const groups = Object.entries(spec.groups ?? {});
  const subscriptions = Object.entries(spec.subscriptions ?? {});
  const template = spec.email ?? 'member{n}@example.test';
  const start = spec.start ?? 1;
  const out: GeneratedMember[] = new Array(spec.count);
  for (let i = 0; i < spec.count; i++) {
    const n = start + i;
    const fields: Record<string, unknown> = {};
    for (const [name, make] of fieldSpecs) fields[name] = make();
    const m: GeneratedMember = {
      email: template.replaceAll('{n}', String(n)),
      fields,
      groups: groups.filter(([, p]) => draw() < p).map(([g]) => g),
      subscriptions: subscriptions.filter(([, p]) => draw() < p).map(([s]) => s),
    };
    const r = draw();
    if (spec.statuses?.o && r < spec.statuses.o) m.status = 'o';
    else if (spec.statuses?.e && r < (spec.statuses.o ?? 0) + spec.statuses.e) m.status = 'e';
    if (spec.sms && draw() < spec.sms) m.sms = { phone_number: `+1555${String(1_000_000 + (n % 9_000_000)).padStart(7, '0')}` };
    out[i] = m;
  }
  return out;
}

type Faker = typeof import('@faker-js/faker/locale/en')['faker'];

/**
 * A field's value maker. The common kinds draw from faker's English data with the
 * seeded PRNG directly (faker's own calls go through its pattern machinery, about
 * ten times slower, which was most of a 10,000-member fixture's generation); the
 * rest call faker, seeded with the same seed.
 */
function valueMaker(faker: Faker, random: () => number, spec: string, refDate: Date): () => unknown {
  const [kind, ...rest] = spec.split(':');
  const arg = rest.join(':');
  const pick =
    <T>(list: readonly T[]) =>
    () =>
      list[Math.floor(random() * list.length)];
  const between = (from: number, to: number) => () => from + random() * (to - from);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const YEAR = 365.25 * 86_400_000;
  const ref = refDate.getTime();
  const data = faker.definitions;
  switch (kind) {
    case 'first_name':
      return pick(data.person.first_name!.generic!);
    case 'last_name':
      return pick(data.person.last_name!.generic!);
    case 'full_name': {
      const first = pick(data.person.first_name!.generic!);
      const last = pick(data.person.last_name!.generic!);
      return () => `${first()} ${last()}`;
    }
    case 'city':
      return pick(data.location.city_name!);
    case 'country':
      return pick(data.location.country!);
    case 'country_code':
      return () => faker.location.countryCode();
    case 'street':
      return () => faker.location.streetAddress();
    case 'zip':
      return () => faker.location.zipCode();
    case 'company':
      return () => faker.company.name();
    case 'job_title':
      return () => faker.person.jobTitle();
    case 'word':
      return () => faker.word.noun();
    case 'sentence':
      return () => faker.lorem.sentence();
    case 'birthdate': {
      const age = between(ref - 80 * YEAR, ref - 18 * YEAR);
      return () => day(age());
    }
    case 'date': {
      const [from, to] = rest;
      const at = from && to ? between(Date.parse(from), Date.parse(to)) : between(ref - 3 * YEAR, ref);
      return () => day(at());
    }
    case 'timestamp': {
      const at = between(ref - YEAR, ref);
      return () => new Date(Math.floor(at() / 1000) * 1000).toISOString().slice(0, 19);
    }
    case 'int': {
      const [min, max] = rest.map(Number);
      return () => min + Math.floor(random() * (max - min + 1));
    }
    case 'float': {
      const [min, max] = rest.map(Number);
      return () => Math.round((min + random() * (max - min)) * 100) / 100;
    }
    case 'bool': {
      const p = arg ? Number(arg) : 0.5;
      return () => random() < p;
    }
    case 'pick':
      return pick(arg.split('|'));
    case 'pick_many': {
      const choices = arg.split('|');
      return () => {
        const some = choices.filter(() => random() < 0.5);
        return some.length ? some : [choices[Math.floor(random() * choices.length)]];
      };
    }
  }
  throw new Error(`unknown value kind ${kind}`); // the shape refused it before
}
