/**
 * Parsing policy data with zod (issue 15, "config parsed once"): the schemas are built on first use, refuse data
 * that could pollute prototypes before anything reads it, and their problems become one `PolicyError` naming every
 * bad field.
 */
import { z } from 'zod';
import { PolicyError } from '../errors.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';

const DANGEROUS_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Where the first key or object that could pollute a prototype is in `value`, and what it is. */
export interface UnsafeData {
  readonly path: (string | number)[];
  readonly message: string;
}

/**
 * The first `__proto__`, `constructor` or `prototype` key anywhere in `value`, or the first object that is not
 * plain, or `undefined`. Policies are data: such keys are refused, never interpreted (zod drops a `__proto__` key
 * of a record silently, and reads inherited fields of a non-plain object: either could drop or forge a
 * constraint, a security bug).
 */
export function findUnsafeData(value: unknown): UnsafeData | undefined {
  const seen = new Set<object>();
  const walk = (v: unknown, at: (string | number)[]): UnsafeData | undefined => {
    if (typeof v !== 'object' || v === null || seen.has(v)) return undefined;
    seen.add(v);
    // `{ __proto__: x }` in an object literal sets the prototype instead of a key: refuse non-plain data.
    const proto = Object.getPrototypeOf(v);
    if (proto !== null && proto !== Object.prototype && proto !== Array.prototype) {
      return {
        path: at,
        message:
          'refused: not a plain object (an object with a prototype of its own could hide or forge fields); give plain data, as JSON or YAML parsing makes',
      };
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = walk(v[i], [...at, i]);
        if (hit !== undefined) return hit;
      }
      return undefined;
    }
    for (const key of Object.keys(v)) {
      if (DANGEROUS_KEYS.has(key)) {
        return {
          path: [...at, key],
          message:
            "refused: '__proto__', 'constructor' and 'prototype' keys could pollute prototypes; remove or rename it",
        };
      }
      const hit = walk((v as Record<string, unknown>)[key], [...at, key]);
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
  return walk(value, []);
}

/**
 * `schema` behind a check that its input is plain data (see {@link findUnsafeData}); nothing else runs when it is
 * not. Its input and output types are those of `schema`, and JSON Schema generation sees `schema` itself.
 */
export function plainData<S extends z.ZodType>(schema: S) {
  return z.preprocess<unknown, S, z.input<S>>((value, ctx) => {
    const unsafe = findUnsafeData(value);
    if (unsafe !== undefined) ctx.addIssue({ code: 'custom', message: unsafe.message, path: unsafe.path });
    return value;
  }, schema);
}

/** Parses one value with a zod schema; throws `PolicyError` naming every bad field (`rules[2].when.args.path`). */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string, prefix = ''): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const list = describeIssues(toConfigIssues(result.error, prefix));
    throw new PolicyError(`Invalid ${what}: ${list}.`, { cause: result.error });
  }
  return result.data;
}
