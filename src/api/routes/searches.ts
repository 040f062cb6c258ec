import * as s from '../schema.js';
import { invalid, type Schema } from '../schema.js';
import { route } from '../route.js';
import * as enc from '../encode.js';
import * as searches from '../../service/audience/searches.js';
import { OPERATORS, PREDICATES } from '../../service/audience/searches.js';

const searchId = s.object({ search_id: s.idText() });
const segmentId = s.object({ segment_id: s.idText() });
const name = s.string({ min: 1, max: 255 });
const listQuery = s.object({
  ...s.windowParams(),
  count: s.optional(s.flag()),
});

/**
 * The nested condition list, as a JSON list or as a string holding one. Its shape,
 * names and values are checked by the service, which needs the account's fields,
 * groups and searches to do it, and names the place inside the criteria that is wrong.
 */
const criteria: Schema<string | unknown[]> = {
  json: () => ({
    anyOf: [{ type: 'array' }, { type: 'string' }],
    description:
      `A nested condition list such as ["and", ["member_field:city", "eq", "Oslo"], ["group", "eq", "Gold"]], ` +
      `or a string holding its JSON. Predicates: ${PREDICATES.join(', ')}. Operators: ${OPERATORS.join(', ')}.`,
  }),
  parse(v, path) {
    if (typeof v !== 'string' && !Array.isArray(v))
      throw invalid(path, 'must be a condition list such as ["group", "eq", "Gold"], or a string holding its JSON');
    return v;
  },
};

// The spec lists no search or segment endpoints; these follow the real service's /searches.
export const searchRoutes = [
  route({
    op: 'searches.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/searches',
    summary: 'List saved searches with their stored counts (as of cached_at)',
    extension: true,
    query: listQuery,
    returns: 'array of search, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? searches.countSearches(ctx) : searches.listSearches(ctx, query).map(enc.search)),
  }),
  route({
    op: 'searches.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/searches',
    summary: 'Save a search and compute it (names are unique among live searches, in any case)',
    extension: true,
    body: s.object({ name, criteria }),
    returns: 'integer (search_id)',
    // The real service's answer, which its clients parse: the bare id (the record is GET's).
    handler: ({ ctx, body }) => searches.createSearch(ctx, body).search_id,
  }),
  route({
    op: 'searches.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/searches/{search_id}',
    summary: 'Get a saved search with its stored counts (as of cached_at)',
    extension: true,
    params: searchId,
    returns: 'search',
    handler: ({ ctx, params }) => enc.search(searches.getSearch(ctx, params.search_id)),
  }),
  route({
    op: 'searches.update',
    access: 'user',
    method: 'PUT',
    path: '/{account_id}/searches/{search_id}',
    summary: 'Rename a saved search or change its criteria',
    extension: true,
    params: searchId,
    body: s.object({ name: s.optional(name), criteria: s.optional(criteria) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => {
      searches.updateSearch(ctx, params.search_id, body);
      return true;
    },
  }),
  route({
    op: 'searches.delete',
    access: 'manager',
    method: 'DELETE',
    path: '/{account_id}/searches/{search_id}',
    summary: 'Delete a saved search (refused while another search uses it)',
    extension: true,
    params: searchId,
    returns: 'true',
    handler: ({ ctx, params }) => searches.deleteSearch(ctx, params.search_id),
  }),
  route({
    op: 'searches.members',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/searches/{search_id}/members',
    summary: 'The members of the stored result, any status, in id order (less those archived since)',
    extension: true,
    params: searchId,
    query: listQuery,
    returns: 'array of member, or an integer with count=true',
    handler: ({ ctx, params, query }) =>
      query.count
        ? searches.countSearchMembers(ctx, params.search_id)
        : searches.searchMembers(ctx, params.search_id, query).map(enc.member),
  }),
  route({
    op: 'segments.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/segments',
    summary: 'Segments: the saved searches as mailings and exports name them',
    extension: true,
    query: listQuery,
    returns: 'array of segment, or an integer with count=true',
    handler: ({ ctx, query }) => (query.count ? searches.countSearches(ctx) : searches.listSearches(ctx, query).map(enc.segment)),
  }),
  route({
    op: 'segments.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/segments/{segment_id}',
    summary: 'One segment (a saved search, by its id)',
    extension: true,
    params: segmentId,
    returns: 'segment',
    handler: ({ ctx, params }) => enc.segment(searches.getSearch(ctx, params.segment_id)),
  }),
];
