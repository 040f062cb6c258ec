import * as s from '../schema.js';
import { route } from '../route.js';
import { windowedList } from './lists.js';
import * as enc from '../encode.js';
import * as imports from '../../service/imports/index.js';
import type { ImportOptions, RowsInput } from '../../service/imports/index.js';
import { badRequest } from '../../errors.js';

const importId = s.object({ import_id: s.idText() });
const smsStatus = s.optional(s.oneOf(['a', 'o'] as const));
const options = {
  add_only: s.optional(s.boolean()),
  group_ids: s.optional(s.array(s.id())),
  source_filename: s.optional(s.string({ max: 1024 })),
  source_name: s.optional(s.string({ max: 1024 })),
  automate_field_changes: s.optional(s.boolean()),
  automate_contact_imports: s.optional(s.boolean()),
  criteria: s.optional(s.object({ sms: s.optional(s.object({ transactional_status: smsStatus, promotional_status: smsStatus })) })),
};
/** Each member is an object with an email; its other keys are field names (checked per row). */
const memberRows = (min: number) => s.array(s.record(), { min, max: 100_000 });
/**
 * A batch's rows, as member objects or (an extension: what `amsg members import`
 * sends) as CSV rows, the columns once and each row's text values in their order.
 */
const batchRows = {
  members: s.optional(memberRows(0)),
  columns: s.optional(s.array(s.string({ min: 1, max: 200 }), { min: 1, max: 1000 })),
  rows: s.optional(s.textRows({ max: 100_000 })),
};
const rowsInput = (b: { members?: Record<string, unknown>[]; columns?: string[]; rows?: string[][] }): RowsInput => {
  if (b.members !== undefined) {
    if (b.columns !== undefined || b.rows !== undefined) throw badRequest('members: give either members or columns and rows, not both');
    return b.members;
  }
  if (b.columns === undefined || b.rows === undefined)
    throw badRequest(`${b.columns === undefined ? 'columns' : 'rows'}: is required (or give members)`);
  return { columns: b.columns, rows: b.rows };
};

/**
 * A member row with its values nested under `fields`, as the real service's Python
 * client sends them ({email, fields: {first_name: …}}), as the spec's flat row.
 */
const flatMember = (row: Record<string, unknown>): Record<string, unknown> => {
  const nested = row.fields;
  if (!nested || typeof nested !== 'object' || Array.isArray(nested)) return row;
  const { fields: _nested, ...rest } = row;
  return { ...rest, ...(nested as Record<string, unknown>) };
};

const toOptions = (b: { criteria?: { sms?: ImportOptions['sms'] } } & Omit<ImportOptions, 'sms'>): ImportOptions => {
  const { criteria, ...rest } = b;
  return { ...rest, sms: criteria?.sms };
};

export const importRoutes = [
  route({
    op: 'members.import',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/members',
    summary: 'Add or update members in bulk; answers the import id at once, the import runs as a job',
    body: s.object({ members: memberRows(1), ...options }),
    returns: '{import_id}',
    handler: ({ ctx, body }) => {
      const { members, ...rest } = body;
      return imports.stageImport(ctx, members.map(flatMember), toOptions(rest));
    },
  }),
  route({
    op: 'imports.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/members/imports/delete',
    summary: "Delete import records (the real service's call): they leave the list, their members stay",
    extension: true,
    // Comma-separated; a repeated import_ids=1&import_ids=2 arrives joined the same way.
    query: s.object({ import_ids: s.idList() }),
    returns: 'true',
    handler: ({ ctx, query }) => imports.deleteImports(ctx, query.import_ids),
  }),
  route({
    op: 'imports.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/imports',
    summary: 'The member imports',
    returns: 'array of import',
    handler: ({ ctx }) => imports.listImports(ctx).map(enc.memberImport),
  }),
  route({
    op: 'imports.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/imports/{import_id}',
    summary: 'One member import with its counts',
    params: importId,
    returns: 'import',
    handler: ({ ctx, params }) => enc.memberImport(imports.getImport(ctx, params.import_id)),
  }),
  route({
    op: 'imports.members',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/members/imports/{import_id}/members',
    summary:
      'The members an import touched, in member id order, with their change type (a added, u updated, s skipped) (start and end, a window of at most 500: local extension)',
    params: importId,
    query: s.object({
      all: s.optional(s.flag()),
      added_only: s.optional(s.flag()),
      added_to_groups: s.optional(s.flag()),
      ...s.windowParams(),
    }),
    returns: 'array of {member_id, change_type, member_status_id, email}',
    handler: ({ ctx, params, query }) => imports.importMembers(ctx, params.import_id, query),
  }),
  windowedList({
    op: 'imports.errors',
    path: '/{account_id}/members/imports/{import_id}/errors',
    id: 'import_id',
    summary:
      'The rows an import refused, with why, in row order (the first 1,000; rows a client refused before sending them are only counted)',
    extension: true,
    item: '{row, email, error}',
    list: imports.importRowErrors,
    count: imports.countImportRowErrors,
  }),
  route({
    op: 'imports.open',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/members/imports',
    summary: 'Open a streamed import; send its rows in batches, then finish it (one file, one import)',
    extension: true,
    // client_options: the client's own options, kept and answered as given (a resume compares them).
    body: s.object({ ...options, client_options: s.optional(s.record()) }),
    returns: 'import',
    handler: ({ ctx, body }) => enc.memberImport(imports.openImport(ctx, toOptions(body))),
  }),
  route({
    op: 'imports.rows',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/members/imports/{import_id}/rows',
    summary: 'Apply one batch of rows to a streamed import, in one transaction',
    extension: true,
    params: importId,
    // rejected: rows of this batch the client refused itself (counted as skipped errors).
    // offset: the rows the import must already have (409 otherwise), so batches sent
    // ahead of their answers are applied in order or not at all; a batch sent again
    // at an offset it was applied at is answered as it was then, and not written again.
    body: s.object({
      ...batchRows,
      rejected: s.optional(s.int({ min: 0, max: 100_000 })),
      offset: s.optional(s.int({ min: 0 })),
    }),
    returns:
      '{import_id, received, num_members, added, updated, duplicates, skipped, errors, duplicate_rows: [{index, email, duplicate_of}]}',
    handler: ({ ctx, params, body }) => imports.appendRows(ctx, params.import_id, rowsInput(body), body.rejected, body.offset),
  }),
  route({
    op: 'imports.validate',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/members/imports/validate',
    summary: 'What importing these rows would do (counts and row errors), with nothing written',
    extension: true,
    body: s.object({ ...batchRows, ...options }),
    returns: '{received, added, updated, duplicates, skipped, errors, duplicate_rows}',
    handler: ({ ctx, body }) => {
      const { members, columns, rows, ...rest } = body;
      return imports.validateRows(ctx, rowsInput({ members, columns, rows }), toOptions(rest));
    },
  }),
  route({
    op: 'imports.finish',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/members/imports/{import_id}/finish',
    summary: 'Finish a streamed import (status o), or end it in error (status e) so it can be resumed',
    extension: true,
    params: importId,
    body: s.object({ error: s.optional(s.string({ min: 1, max: 2000 })) }),
    returns: 'import',
    handler: ({ ctx, params, body }) => enc.memberImport(imports.finishImport(ctx, params.import_id, body.error)),
  }),
];
