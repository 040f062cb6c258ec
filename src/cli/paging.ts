import type { Api } from '../client/api.js';
import type { QueryValue } from '../client/transport.js';

/** The longest window a list answers (the spec's default end of 500). */
export const PAGE_SIZE = 500;

/**
 * Every record of a list that the service answers a window at a time: asks for
 * start/end windows of `pageSize` in turn until a page comes back short. A service
 * that ignores the window answers the whole list every time, so a page longer than
 * asked for, or one that starts with the record the last page started with, ends it.
 */
export async function allPages<T>(api: Api, path: string, query: Record<string, QueryValue> = {}, pageSize = PAGE_SIZE): Promise<T[]> {
  const all: T[] = [];
  let first: string | undefined;
  for (let start = 0; ; start += pageSize) {
    const page = await api.get<T[]>(path, { ...query, start, end: start + pageSize });
    if (!Array.isArray(page) || page.length > pageSize) return page;
    const head = page.length ? JSON.stringify(page[0]) : undefined;
    if (start > 0 && head !== undefined && head === first) return all;
    first = head;
    all.push(...page);
    if (page.length < pageSize) return all;
  }
}
