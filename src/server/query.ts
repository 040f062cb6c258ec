/** A query string as the router takes it: a repeated key (import_ids=1&import_ids=2, as Python's requests writes a list) is one comma list. */
export function parseQuery(text: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) query[k] = Object.hasOwn(query, k) ? `${query[k]},${v}` : v;
  return query;
}
