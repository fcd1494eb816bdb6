/** Following a list request's `nextCursor` (split from connection.ts). */

/** Upper bound on pages followed in one list request (a server that paginates forever is cut off). */
export const MAX_LIST_PAGES = 1000;

/** Every item of a paginated list, page after page, stopping at a cursor seen before or after MAX_LIST_PAGES. */
export async function paginate<R extends { nextCursor?: string | undefined }, T>(
  fetchPage: (cursor: string | undefined) => Promise<R>,
  items: (page: R) => T[],
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await fetchPage(cursor);
    out.push(...items(result));
    cursor = result.nextCursor;
    // A cursor seen before would loop forever: stop there.
    if (cursor === undefined || cursor === '' || seen.has(cursor)) return out;
    seen.add(cursor);
  }
  return out;
}
