/**
 * The field names a schema allows at a path, for "did you mean" hints. Walks the zod schema itself, so a
 * field added to a server or policy schema is suggested without a change here.
 */
import type { z } from 'zod';
import type { PathSegment } from './document.js';

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  valueType?: z.ZodType;
  options?: readonly z.ZodType[];
  element?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Unwraps optional, default, nullable, readonly and pipe layers, and spreads unions. */
function expand(schema: z.ZodType, out: z.ZodType[], depth = 0): void {
  if (depth > 20) return;
  const def = defOf(schema);
  if (def.innerType !== undefined) expand(def.innerType, out, depth + 1);
  else if (def.type === 'pipe' && def.in !== undefined)
    // A preprocessing step (a transform in front) checks its input; the fields are those of what follows it.
    expand(defOf(def.in).type === 'transform' && def.out !== undefined ? def.out : def.in, out, depth + 1);
  else if (def.type === 'union' && def.options !== undefined)
    for (const option of def.options) expand(option, out, depth + 1);
  else out.push(schema);
}

/** The object keys `schema` allows at `path` (sorted), or `undefined` when no object is there. */
export function keysAt(schema: z.ZodType, path: readonly PathSegment[]): string[] | undefined {
  let current: z.ZodType[] = [];
  expand(schema, current);
  for (const segment of path) {
    const next: z.ZodType[] = [];
    for (const s of current) {
      const def = defOf(s);
      let child: z.ZodType | undefined;
      if (def.type === 'object' && typeof segment === 'string') child = def.shape?.[segment];
      else if (def.type === 'record' && typeof segment === 'string') child = def.valueType;
      else if (def.type === 'array' && typeof segment === 'number') child = def.element;
      if (child !== undefined) expand(child, next);
    }
    current = next;
  }
  const keys = new Set<string>();
  for (const s of current) {
    const def = defOf(s);
    if (def.type === 'object') for (const key of Object.keys(def.shape ?? {})) keys.add(key);
  }
  return keys.size === 0 ? undefined : [...keys].sort();
}
