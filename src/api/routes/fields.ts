import * as s from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as fields from '../../service/audience/fields.js';
import { FIELD_TYPES } from '../../values.js';
import * as relationships from '../../service/audience/field-relationships.js';
import type { Schema } from '../schema.js';

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

const relationshipId = s.object({ relationship_id: s.idText() });
const childOptions = s.array(s.string({ min: 1 }));
/** The spec's `options` of a relationship: each parent option to the child options it allows. */
const optionsMap: Schema<Record<string, string[]>> = {
  json: () => ({ type: 'object', additionalProperties: childOptions.json() }),
  parse(v, path) {
    const map = s.record().parse(v, path);
    return Object.fromEntries(Object.entries(map).map(([key, list]) => [key, childOptions.parse(list, `${path}.${key}`)]));
  },
};
const relationshipName = s.string({ min: 1, max: 255 });

export const fieldRoutes = [
  route({
    op: 'fieldRelationships.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/fields/relationships',
    summary: 'List field relationships',
    returns: 'array of field relationship',
    handler: ({ ctx }) => relationships.listRelationships(ctx).map(enc.relationship),
  }),
  route({
    op: 'fieldRelationships.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/fields/relationships/{relationship_id}',
    summary: 'Get a field relationship',
    params: relationshipId,
    returns: 'field relationship',
    handler: ({ ctx, params }) => enc.relationship(relationships.getRelationship(ctx, params.relationship_id)),
  }),
  route({
    op: 'fieldRelationships.create',
    access: 'manager',
    method: 'POST',
    path: '/{account_id}/fields/relationships',
    summary: "Relate two option fields: each parent option allows some of the child's options",
    body: s.object({
      relationship_name: relationshipName,
      parent_field_id: s.id(),
      child_field_id: s.id(),
      options: optionsMap,
    }),
    returns: 'field relationship',
    handler: ({ ctx, body }) => enc.relationship(relationships.createRelationship(ctx, body)),
  }),
  route({
    op: 'fieldRelationships.update',
    access: 'manager',
    method: 'PUT',
    path: '/{account_id}/fields/relationships/{relationship_id}',
    summary: 'Change a field relationship (the whole configuration is checked again)',
    params: relationshipId,
    body: s.object({
      relationship_name: s.optional(relationshipName),
      parent_field_id: s.optional(s.id()),
      child_field_id: s.optional(s.id()),
      options: s.optional(optionsMap),
    }),
    returns: 'field relationship',
    handler: ({ ctx, params, body }) => enc.relationship(relationships.updateRelationship(ctx, params.relationship_id, body)),
  }),
  route({
    op: 'fieldRelationships.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/fields/relationships/{relationship_id}',
    summary: 'Delete a field relationship (member values stay)',
    params: relationshipId,
    returns: 'true',
    handler: ({ ctx, params }) => relationships.deleteRelationship(ctx, params.relationship_id),
  }),
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
