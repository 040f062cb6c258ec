/**
 * Member events and touchpoints themselves: a member by e-mail, a type by name, at
 * a timestamp. A record has no name, so its natural key is the three together
 * (`ada@example.com purchase 2026-04-01T10:00:00`): the timestamp is required, or a
 * second run could not tell the record it wrote from a new one. The service does
 * not change a record once written, so one that exists is left as it is.
 */
import { ApiError } from '../../errors.js';
import { seg } from '../../client/api.js';
import { allPages } from '../paging.js';
import { norm, type Kind, type Ref } from './kind.js';
import * as v from './shape.js';

const timestamp = v.str({
  pattern: /^(@D:)?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z?$/,
  hint: 'must be a UTC date-time such as 2026-04-01T10:00:00Z',
});
/** The timestamp as the service answers it, less its `@D:`. */
const plain = (t: string) => t.replace(/^@D:/, '').replace(/Z$/, '');

interface RecordEntry {
  member: string;
  type: string;
  timestamp: string;
  value?: number;
  mailing?: string;
  attributes?: Record<string, unknown>;
}
type RecordRow = Record<string, unknown>;

/**
 * One kind of record. `prefix`: the service's column prefix (event, touchpoint);
 * `typeKind`/`typeName`/`typeId`: the catalogue it names, as the fixture and the
 * service call it; `base`: the routes' path; `itemsKey`: the body's list.
 */
function recordKind(
  name: string,
  o: { base: string; prefix: string; typeKind: string; typeName: string; typeId: string; recordId: string; itemsKey: string },
): Kind<RecordEntry, RecordRow> {
  const shape = v.obj(
    {
      member: v.email,
      [o.typeName]: v.str({ max: 255 }),
      timestamp,
      value: v.num(),
      mailing: v.str(),
      attributes: v.record(v.any),
    } as Record<string, v.Shape<unknown>>,
    ['member', o.typeName, 'timestamp'],
  );
  const record: v.Shape<RecordEntry> = (x, path, c) => {
    // biome-ignore lint/suspicious/noExplicitAny: the shape checked each value; the record type's name is a key of its own
    const r = shape(x, path, c) as Record<string, any> | undefined;
    return (
      r && { member: r.member, type: r[o.typeName], timestamp: r.timestamp, value: r.value, mailing: r.mailing, attributes: r.attributes }
    );
  };
  const keyOf = (member: string, type: string, at: string) => `${member} ${type} ${plain(at)}`;
  return {
    name,
    record,
    key: (r) => keyOf(r.member, r.type, r.timestamp),
    refs: (r, path): Ref[] => [
      { kind: 'members', name: r.member, path: `${path}.member` },
      { kind: o.typeKind, name: r.type, path: `${path}.${o.typeName}` },
      ...(r.mailing ? [{ kind: 'mailings', name: r.mailing, path: `${path}.mailing` }] : []),
    ],
    /** The records of the members the file names (one list each), keyed as the file keys them. */
    async existing(api, names) {
      const found = new Map<string, RecordRow>();
      const emails = new Set([...names].map((k) => k.split(' ')[0]));
      if (!emails.size) return found;
      const types = new Map((await allPages<RecordRow>(api, `/${o.base}`)).map((t) => [t[o.typeId], String(t[o.typeName])]));
      for (const email of emails) {
        const member = await api.get<{ member_id: number }>(`/members/email/${seg(email)}`).catch((err) => {
          if (err instanceof ApiError && err.status === 404) return undefined;
          throw err;
        });
        if (!member) continue;
        for (const r of await allPages<RecordRow>(api, `/${o.base}/members/${member.member_id}`))
          found.set(norm(keyOf(email, types.get(r[o.typeId]) ?? '', String(r[`${o.prefix}_timestamp`]))), r);
      }
      return found;
    },
    idOf: (r) => Number(r[o.recordId]),
    async create(run, r) {
      const [written] = await run.api.post<RecordRow[]>(`/${o.base}/members`, {
        [o.itemsKey]: [
          {
            email: r.member,
            [o.typeName]: r.type,
            [`${o.prefix}_timestamp`]: r.timestamp,
            [`${o.prefix}_monetary_value`]: r.value,
            mailing_id: r.mailing ? run.id('mailings', r.mailing) : undefined,
            attributes: r.attributes,
          },
        ],
      });
      return Number(written[o.recordId]);
    },
  };
}

export const memberEvents = recordKind('member_events', {
  base: 'events',
  prefix: 'event',
  typeKind: 'event_types',
  typeName: 'event_type',
  typeId: 'event_type_id',
  recordId: 'event_id',
  itemsKey: 'events',
});

export const touchpoints = recordKind('touchpoints', {
  base: 'touchpoints',
  prefix: 'touchpoint',
  typeKind: 'touchpoint_types',
  typeName: 'type_name',
  typeId: 'touchpoint_type_id',
  recordId: 'touchpoint_id',
  itemsKey: 'touchpoints',
});
