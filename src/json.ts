/**
 * The one test for "a JSON object" that every area uses on parsed input, server answers and schemas: an object
 * that is neither `null` nor an array. `typeof` alone lets both through, and a filter written three ways is a
 * filter that disagrees with itself somewhere.
 */

/** Whether `value` is an object other than `null` or an array (its prototype is not checked). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One key for a tuple of names, unambiguous whatever the names hold (issue 38): a JSON array, so `('a', 'b␟c')` and
 * `('a␟b', 'c')` stay two keys, where joining with a separator made them one. Use it wherever a key (a quota
 * counter, a map entry) is built from more than one name.
 */
export function tupleKey(...parts: readonly string[]): string {
  return JSON.stringify(parts);
}
