import * as s from '../schema.js';
import { invalid, type Schema } from '../schema.js';
import { route } from '../route.js';
import { isoOffset } from '../codecs.js';
import * as service from '../../service/exports.js';
import { EXPORT_STATUSES, EXPORT_TYPES, SMS_EXPORT_FIELDS, type ExportRecord } from '../../service/exports.js';

const exportId = s.object({ export_id: s.idText() });
/** Id lists of the criteria: null is what the service answers for "not given", so it is taken back as that. */
const idList = () => s.optional(s.nullable(s.array(s.id())));

/** include_fields: true (every field) or a list of field names ([] for no field columns). */
const includeFields: Schema<true | string[]> = {
  json: () => ({ anyOf: [{ const: true }, { type: 'array', items: { type: 'string', minLength: 1 } }] }),
  parse(v, path) {
    if (v === true) return true;
    if (!Array.isArray(v)) throw invalid(path, 'must be true (every field) or an array of field names ([] for no field columns)');
    return v.map((name, i) => s.string({ min: 1 }).parse(name, `${path}[${i}]`));
  },
};

const criteria = s.object({
  groups: idList(),
  segments: idList(),
  subscriptions: idList(),
  member_ids: idList(),
  member_status_ids: s.optional(s.array(s.oneOf(EXPORT_STATUSES), { min: 1 })),
  include_fields: s.optional(includeFields),
  mfv_delimiter: s.optional(s.string({ min: 1, max: 10 })),
  sms: s.optional(s.object({ fields: s.array(s.oneOf(SMS_EXPORT_FIELDS)) })),
});

/** The spec's export record: ISO 8601 timestamps with offset. */
const exportRecord = (r: ExportRecord) => ({
  export_id: r.export_id,
  account_id: r.account_id,
  export_name: r.export_name,
  export_type: r.export_type,
  status: r.status,
  user_id: r.user_id,
  created_at: isoOffset(r.created_at),
  completed_at: isoOffset(r.completed_at),
  criteria: r.criteria,
});

export const exportRoutes = [
  route({
    op: 'exports.list',
    access: 'manager',
    method: 'GET',
    path: '/{account_id}/exports',
    summary: 'Exports of one type created over the past seven days',
    query: s.object({ export_type: s.withDefault(s.oneOf(EXPORT_TYPES), 'a') }),
    returns: 'array of export',
    handler: ({ ctx, query }) => service.listExports(ctx, query.export_type).map(exportRecord),
  }),
  route({
    op: 'exports.get',
    access: 'manager',
    method: 'GET',
    path: '/{account_id}/exports/{export_id}',
    summary: 'One export (also one older than seven days)',
    params: exportId,
    returns: 'export',
    handler: ({ ctx, params }) => exportRecord(service.getExport(ctx, params.export_id)),
  }),
  route({
    op: 'exports.download',
    access: 'manager',
    method: 'GET',
    path: '/{account_id}/exports/{export_id}/download',
    summary: 'The export: CSV for an audience export (type a), a zip file for an individual member export (type m)',
    params: exportId,
    returns: 'text/csv or application/zip',
    handler: ({ ctx, params }) => service.downloadExport(ctx, params.export_id),
  }),
  route({
    op: 'exports.create',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/exports',
    summary: 'Export the union of the members of groups, subscriptions, segments and member_ids (the whole audience when none is given)',
    // The requesting user's e-mail address, kept as given: the spec types it as a string,
    // and a local owner's address (owner@localhost) has no dot in its domain.
    body: s.object({ user_id: s.string({ min: 1, max: 254 }), criteria: s.optional(criteria) }),
    returns: '{export_id}',
    handler: ({ ctx, body }) => service.createAudienceExport(ctx, body),
  }),
  route({
    op: 'exports.member',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/exports/members/{member_id}',
    summary: 'Export all data of one member (a zip of JSON files)',
    params: s.object({ member_id: s.idText() }),
    body: s.object({}),
    returns: '{export_id}',
    handler: ({ ctx, params }) => service.createMemberExport(ctx, params.member_id, ctx.actor.email),
  }),
];
