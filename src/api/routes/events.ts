/**
 * Member events and touchpoints (the spec's two parts of 7 and 9 operations), event
 * ingestion on the events host (`POST /v1/{account_id}/events`), and the extension
 * routes that show what ingestion did: inbound events with their outcome.
 */
import * as s from '../schema.js';
import { invalid, type Schema } from '../schema.js';
import { route } from '../route.js';
import { listQuery, windowedList } from './lists.js';
import { atD } from '../codecs.js';
import * as events from '../../service/events/events.js';
import { EVENTS, TOUCHPOINTS, type Kind, type RecordInput, type RecordRow, type TypeRow } from '../../service/events/events.js';
import * as inbound from '../../service/events/workflows.js';
import { QUEUED, type InboundRecord, type Outcome, type RunRecord } from '../../service/events/workflows.js';

/** `attributes`: any JSON object, stored and answered as given (null for none). */
const attributes: Schema<Record<string, unknown> | null> = {
  optional: true,
  json: () => ({ anyOf: [{ type: 'object', additionalProperties: true }, { type: 'null' }] }),
  parse(v, path) {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v))
      throw invalid(path, `must be a JSON object, got ${Array.isArray(v) ? 'an array' : typeof v}`);
    return v as Record<string, unknown>;
  },
};

// ---------------------------------------------------------------- encodings

export const encodeType = (kind: Kind) => (t: TypeRow) => ({
  [kind.typeId]: t[kind.typeId],
  account_id: t.account_id,
  [kind.typeName]: t[kind.typeName],
  display_name: t.display_name,
  created_at: atD(t.created_at as string),
});

export const encodeRecord = (kind: Kind) => (r: RecordRow) => ({
  [kind.recordId]: r[kind.recordId],
  account_id: r.account_id,
  member_id: r.member_id,
  [kind.typeId]: r[kind.typeId],
  [`${kind.prefix}_monetary_value`]: r[`${kind.prefix}_monetary_value`],
  [`${kind.prefix}_timestamp`]: atD(r[`${kind.prefix}_timestamp`] as string),
  inserted_at: atD(r.inserted_at as string),
  mailing_id: r.mailing_id,
  attributes: r.attributes === null ? null : JSON.parse(r.attributes as string),
});

const encodeRun = (r: RunRecord) => ({ ...r, ran_at: atD(r.ran_at) });

const encodeInbound = (r: InboundRecord) => ({
  ...r,
  received_at: atD(r.received_at),
  processed_at: atD(r.processed_at),
});

// ---------------------------------------------------------------- both kinds

/** The spec's routes of one kind: its type catalogue, recording, and a member's records. */
function kindRoutes(kind: Kind, base: string, plural: string) {
  const typeId = s.object({ [kind.typeId]: s.idText() } as Record<string, Schema<number>>);
  const typeBody = s.object({ [kind.typeName]: s.string({ min: 1, max: 255 }), display_name: s.string({ min: 1, max: 255 }) } as Record<
    string,
    Schema<string>
  >);
  const idOf = (params: Record<string, number>) => params[kind.typeId];
  const typeInput = (body: Record<string, string>) => ({ name: body[kind.typeName], display_name: body.display_name });
  const item = s.object({
    member_id: s.optional(s.id()),
    email: s.optional(s.email()),
    [kind.typeId]: s.optional(s.id()),
    [kind.typeName]: s.optional(s.string({ min: 1, max: 255 })),
    [`${kind.prefix}_monetary_value`]: s.optional(s.number()),
    mailing_id: s.optional(s.id()),
    [`${kind.prefix}_timestamp`]: s.optional(s.dateTime()),
    attributes,
  } as Record<string, Schema<unknown>>);
  const toInput = (i: Record<string, unknown>): RecordInput => ({
    member_id: i.member_id as number | undefined,
    email: i.email as string | undefined,
    type_id: i[kind.typeId] as number | undefined,
    type_name: i[kind.typeName] as string | undefined,
    monetary_value: i[`${kind.prefix}_monetary_value`] as number | undefined,
    mailing_id: i.mailing_id as number | undefined,
    timestamp: i[`${kind.prefix}_timestamp`] as string | undefined,
    attributes: i.attributes as Record<string, unknown> | null,
  });
  const type = encodeType(kind);
  const record = encodeRecord(kind);
  return [
    route({
      op: `${plural}.types.create`,
      access: 'manager',
      method: 'POST',
      path: `/{account_id}/${base}`,
      summary: `Create a ${kind.noun} type (400 when ${kind.typeName} or display_name is missing, or the name is taken)`,
      body: typeBody,
      returns: `${kind.noun} type`,
      handler: ({ ctx, body }) => type(events.createType(ctx, kind, typeInput(body as Record<string, string>))),
    }),
    route({
      op: `${plural}.types.list`,
      access: 'user',
      method: 'GET',
      path: `/{account_id}/${base}`,
      summary: `List the ${kind.noun} types in id order`,
      query: listQuery,
      returns: `array of ${kind.noun} type, or an integer with count=true`,
      handler: ({ ctx, query }) => (query.count ? events.countTypes(ctx, kind) : events.listTypes(ctx, kind, query).map(type)),
    }),
    route({
      op: `${plural}.types.get`,
      access: 'user',
      method: 'GET',
      path: `/{account_id}/${base}/{${kind.typeId}}`,
      summary: `Get a ${kind.noun} type`,
      params: typeId,
      returns: `${kind.noun} type`,
      handler: ({ ctx, params }) => type(events.getType(ctx, kind, idOf(params as Record<string, number>))),
    }),
    route({
      op: `${plural}.types.update`,
      access: 'manager',
      method: 'PUT',
      path: `/{account_id}/${base}/{${kind.typeId}}`,
      summary: `Rename a ${kind.noun} type (400 when another type has the name)`,
      params: typeId,
      body: typeBody,
      returns: `${kind.noun} type`,
      handler: ({ ctx, params, body }) =>
        type(events.updateType(ctx, kind, idOf(params as Record<string, number>), typeInput(body as Record<string, string>))),
    }),
    route({
      op: `${plural}.types.delete`,
      access: 'manager',
      method: 'DELETE',
      path: `/{account_id}/${base}/{${kind.typeId}}`,
      summary: `Delete a ${kind.noun} type and every ${kind.noun} of it (irreversible); answers true`,
      params: typeId,
      returns: 'true',
      handler: ({ ctx, params }) => events.deleteType(ctx, kind, idOf(params as Record<string, number>)),
    }),
    route({
      op: `${plural}.record`,
      access: 'user',
      method: 'POST',
      path: `/{account_id}/${base}/members`,
      summary: `Record up to 10 ${plural} (all or none: a bad item is a 400 naming its index and field)`,
      body: s.object({ [kind.itemsKey]: s.array(item, { min: 1, max: events.MAX_ITEMS }) } as Record<
        string,
        Schema<Record<string, unknown>[]>
      >),
      returns: `array of ${kind.noun}`,
      handler: ({ ctx, body }) =>
        events.recordMany(ctx, kind, (body as Record<string, Record<string, unknown>[]>)[kind.itemsKey].map(toInput)).map(record),
    }),
    windowedList({
      op: `${plural}.member`,
      path: `/{account_id}/${base}/members/{member_id}`,
      id: 'member_id',
      summary: `A member's ${plural} in the order they were recorded (404 no member)`,
      item: kind.noun,
      list: (ctx, id, window) => events.memberRecords(ctx, kind, id, window),
      count: (ctx, id) => events.countMemberRecords(ctx, kind, id),
      encode: record,
    }),
  ];
}

const touchpointId = s.object({ touchpoint_id: s.idText() });

export const touchpointRoutes = [
  ...kindRoutes(TOUCHPOINTS, 'touchpoints', 'touchpoints'),
  route({
    op: 'touchpoints.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/touchpoints/members/touchpoints/{touchpoint_id}',
    summary: 'Get a touchpoint',
    params: touchpointId,
    returns: 'touchpoint',
    handler: ({ ctx, params }) => encodeRecord(TOUCHPOINTS)(events.getRecord(ctx, TOUCHPOINTS, params.touchpoint_id)),
  }),
  route({
    op: 'touchpoints.delete',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/touchpoints/members/touchpoints/{touchpoint_id}',
    summary: 'Delete a touchpoint (irreversible); answers true',
    params: touchpointId,
    returns: 'true',
    handler: ({ ctx, params }) => events.deleteRecord(ctx, TOUCHPOINTS, params.touchpoint_id),
  }),
];

// ---------------------------------------------------------------- ingestion

/** The body of an ingested event: any JSON value here; the service says what it must be. */
const anyBody: Schema<unknown> = {
  json: () => ({ type: 'object', required: ['email'], additionalProperties: true }),
  parse: (v) => v,
};

/** `--outcome` codes (the stored outcomes are sentences). */
export const OUTCOME_CODES: Record<string, Outcome | typeof QUEUED> = {
  ran: 'ran',
  'invalid-email': 'invalid email',
  'no-member': 'no member',
  'not-active': 'member not active',
  'no-match': 'no workflow matched',
  queued: QUEUED,
};

const inboundQuery = s.object({
  ...s.windowParams(),
  count: s.optional(s.flag()),
  outcome: s.optional(s.oneOf(Object.keys(OUTCOME_CODES) as (keyof typeof OUTCOME_CODES & string)[])),
});

export const eventRoutes = [
  route({
    op: 'events.ingest',
    access: 'user',
    method: 'POST',
    path: '/v1/{account_id}/events',
    summary:
      'Event ingestion (on events_url): any JSON object with an email key, at most 262,035 bytes (413 beyond); stored, then processed in the background; answers {success: true}',
    body: anyBody,
    returns: '{success: true}',
    // The text as it came (parsed above to check it): writing the value out again cost
    // as much as parsing it (bench/ingest.js).
    handler: ({ ctx, body, text }) => inbound.acceptInbound(ctx, body, text || JSON.stringify(body)),
  }),
  route({
    op: 'events.inbound.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/events/inbound',
    summary: 'Ingested events with their outcome (outcome=ran, invalid-email, no-member, not-active, no-match or queued)',
    extension: true,
    query: inboundQuery,
    returns: 'array of inbound event, or an integer with count=true',
    handler: ({ ctx, query }) => {
      const outcome = query.outcome === undefined ? undefined : OUTCOME_CODES[query.outcome];
      return query.count ? inbound.countInbound(ctx, outcome) : inbound.listInbound(ctx, { ...query, outcome }).map(encodeInbound);
    },
  }),
  route({
    op: 'events.inbound.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/events/inbound/{inbound_id}',
    summary: 'One ingested event with its outcome and the workflow runs it made',
    extension: true,
    params: s.object({ inbound_id: s.idText() }),
    returns: 'inbound event with runs',
    handler: ({ ctx, params }) => ({
      ...encodeInbound(inbound.getInbound(ctx, params.inbound_id)),
      runs: inbound.inboundRuns(ctx, params.inbound_id).map(encodeRun),
    }),
  }),
  ...kindRoutes(EVENTS, 'events', 'events'),
];

export { encodeRun };
