import type { Api } from '../../client/api.js';
import { allPages } from '../paging.js';
import type { Shape } from './shape.js';

/** A reference from one record to another by natural key (a member's group by its name). */
export interface Ref {
  kind: string;
  name: string;
  /** Where in the record the name is written (`members[3].groups[0]`). */
  path: string;
}

/** One record of a fixture, where it was written, and its natural key. */
export interface Entry<R> {
  record: R;
  key: string;
  file: string;
  path: string;
}

export type Action = 'create' | 'update' | 'unchanged';

export interface Step<R, E> {
  entry: Entry<R>;
  action: Action;
  existing?: E;
  /** What a bulk kind found to do for this record (its own business). */
  detail?: unknown;
}

/** The service refused part of a fixture it had accepted the shape of (a member row, a send): exit 1, not a stack trace. */
export class SeedError extends Error {}

/** Names are matched as the service matches them: in any case. */
/** The references a list of names makes, each at its index under `path` (anything but a list makes none). */
export const namesAt = (kind: string, names: unknown, path: string): Ref[] =>
  Array.isArray(names) ? names.map((name: string, i) => ({ kind, name, path: `${path}[${i}]` })) : [];

export const norm = (name: string) => name.toLowerCase();

/**
 * What a kind's operations work with: the Api, the ids of every record resolved so
 * far (those a dry run would create are known by name with no id), and notes.
 */
export interface SeedRun {
  api: Api;
  dryRun: boolean;
  /** The id of a record by kind and natural key (in the file or the account); undefined only in a dry run, for a record it would create. */
  id(kind: string, name: string): number | undefined;
  setId(kind: string, name: string, id: number): void;
  /** The account's record of a kind by natural key, as `existing` loaded it. */
  existing<E>(kind: string, name: string): E | undefined;
  /** The file's record of a kind by natural key. */
  defined<R>(kind: string, name: string): R | undefined;
  note(message: string): void;
}

/**
 * One kind of resource a fixture can describe. Adding a kind is one entry of this
 * shape in KINDS (src/cli/seed/kinds.ts): the resolver does the rest (loading and
 * checking the file, references, order, cycles, the dry-run plan, idempotence and
 * the id map it prints).
 */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds kinds of every record type
export interface Kind<R = any, E = any> {
  /** The fixture's top-level key, and the key of the output's id map. */
  name: string;
  /** Other top-level keys that hold records of this kind (`segments` are searches). */
  aliases?: string[];
  /** One record in the file; a bare name is often allowed (see nameOr). */
  record: Shape<R>;
  /** The natural key records are matched on (a group's name, a member's e-mail). */
  key(r: R): string;
  /** The records of other kinds (or of this one) it names; each must be in the file or the account. */
  refs?(r: R, path: string): Ref[];
  /** The account's records of this kind by normalized natural key. `names`: the keys the file defines or refers to. */
  existing(api: Api, names: Set<string>): Promise<Map<string, E>>;
  idOf(e: E): number;
  /** Whether the file's record differs from the account's (false: left unchanged). Default: never. */
  differs?(run: SeedRun, r: R, e: E): boolean;
  create(run: SeedRun, r: R): Promise<number>;
  update?(run: SeedRun, r: R, e: E): Promise<void>;
  /**
   * Plan and write many records at once instead of one call each (members go
   * through the bulk import path). With it, differs/create/update are not used.
   */
  bulk?: {
    plan(run: SeedRun, entries: Entry<R>[]): Promise<Step<R, E>[]>;
    write(run: SeedRun, steps: Step<R, E>[]): Promise<void>;
    /**
     * Called once the account's records of this kind are loaded, before anything is
     * planned or written: the write will surely be a bulk one when a record is new,
     * and the service can get ready for it meanwhile (members: Api.expectImport).
     */
    loaded?(run: SeedRun, entries: Entry<R>[]): void;
  };
  /** Records one file line stands for (a `generate` block: thousands of members). */
  expand?(
    r: R,
    entry: Omit<Entry<R>, 'record' | 'key'>,
    run: { existing: SeedRun['existing']; defined: SeedRun['defined'] },
  ): Promise<R[]> | R[];
  /** Extra checks once every name is known (field values against their field's type); answers problems as [path, reason]. */
  check?(run: SeedRun, r: R, path: string): [string, string][];
  /** Whether the id map printed at the end lists this record (generated members are counted instead). */
  listed?(r: R): boolean;
}

/** `existing` for a kind whose list is small: every record, keyed by one property. */
export const listedBy =
  <E>(path: string, keyOf: (e: E) => string, paged = true) =>
  async (api: Api): Promise<Map<string, E>> => {
    const rows = paged ? await allPages<E>(api, path) : await api.get<E[]>(path);
    return new Map(rows.map((e) => [norm(keyOf(e)), e]));
  };

/** Whether two JSON values are equal whatever the order of their objects' keys (a stored `match` against the file's). */
export function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(canonical)
      : x && typeof x === 'object'
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, canonical((x as Record<string, unknown>)[k])]),
          )
        : x;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
