/**
 * The one test for "a JSON object" that every area uses on parsed input, server answers and schemas: an object
 * that is neither `null` nor an array. `typeof` alone lets both through, and a filter written three ways is a
 * filter that disagrees with itself somewhere.
 */

/** Whether `value` is an object other than `null` or an array (its prototype is not checked). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
