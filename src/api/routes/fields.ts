import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as fields from '../../service/fields.js';
import { FIELD_TYPES } from '../../service/fields.js';

const fieldId = s.object({ field_id: s.idText() });
const deletedQuery = s.object({ deleted: s.optional(s.flag()) });
const definition = {
  display_name: s.string({ min: 1, max: 255 }),
  short_display_name: s.optional(s.string({ max: 255 })),
  widget_type: s.optional(s.string({ min: 1 })),
  options: s.optional(s.array(s.string({ min: 1 }))),
  column_order: s.optional(s.int({ min: 0 })),
  required: s.optional(s.boolean()),
};
const shortcutName = s.string({
  min: 1,
  max: 64,
  pattern: /^[A-Za-z][A-Za-z0-9_]*$/,
  hint: 'must start with a letter and hold only letters, digits and _',
});

export const fieldRoutes = [
  route({
    op: 'fields.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/fields',
    summary: 'List custom fields in column order',
    query: deletedQuery,
    returns: 'array of field',
    handler: ({ ctx, query }) => fields.listFields(ctx, query.deleted).map(enc.field),
  }),
  route({
    op: 'fields.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/fields/{field_id}',
    summary: 'Get a custom field',
    params: fieldId,
    query: deletedQuery,
    returns: 'field',
    handler: ({ ctx, params, query }) => enc.field(fields.getField(ctx, params.field_id, query.deleted)),
  }),
  route({
    op: 'fields.create',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/fields',
    summary: 'Create a custom field (the name must be free)',
    body: s.object({ shortcut_name: shortcutName, field_type: s.oneOf(FIELD_TYPES), ...definition }),
    returns: 'integer field id',
    handler: ({ ctx, body }) => fields.createField(ctx, body),
  }),
  route({
    op: 'fields.update',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/fields/{field_id}',
    summary: 'Change a custom field',
    params: fieldId,
    body: s.object({
      shortcut_name: s.optional(shortcutName),
      field_type: s.optional(s.oneOf(FIELD_TYPES)),
      ...definition,
      display_name: s.optional(s.string({ min: 1, max: 255 })),
    }),
    returns: 'integer field id',
    handler: ({ ctx, params, body }) => fields.updateField(ctx, params.field_id, body),
  }),
  route({
    op: 'fields.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/fields/{field_id}',
    summary: 'Delete a custom field and its values',
    params: fieldId,
    returns: 'true',
    handler: ({ ctx, params }) => fields.deleteField(ctx, params.field_id),
  }),
  route({
    op: 'fields.clear',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/fields/{field_id}/clear',
    summary: "Clear the field's value for every member",
    params: fieldId,
    body: s.object({}),
    returns: 'true',
    handler: ({ ctx, params }) => fields.clearField(ctx, params.field_id),
  }),
];
