/**
 * A tool's JSON Schema as rows a person can read (issue 18, item 4): one row per argument with its type,
 * whether it is required, its description, default, allowed values and bounds; the fields of nested objects
 * (and of the objects in an array) follow their parent, indented. Schemas come from servers: nothing here
 * trusts their shape, depth or size.
 */

import { isJsonObject } from '../json.js';
import { visible } from './io.js';

/** One argument (or nested field) of a schema. */
export interface SchemaRow {
  /** 0 for a top-level argument, 1 for a field of it, ... */
  depth: number;
  name: string;
  /** `string`, `number | null`, `array of object`, `"name" | "size"` (an enum), `ref Point`, ... */
  type: string;
  required: boolean;
  /** The description, then `(default: ..., one of: ..., >= 1, ...)`. */
  about: string;
}

/** Nesting shown before `…` (a hostile schema can be thousands of levels deep). */
export const MAX_SCHEMA_DEPTH = 8;
/** Rows shown before the rest is summarized. */
export const MAX_SCHEMA_ROWS = 300;
/** Longest type column; an enum longer than this lists its values in the description instead. */
const MAX_TYPE_CHARS = 40;
/** Longest value (default, const) quoted in a row. */
const MAX_VALUE_CHARS = 60;

type Schema = Record<string, unknown>;

function quote(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  text = visible(text);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** Renders the rows of `schema` (an object schema; anything else yields no rows). */
export function schemaRows(schema: unknown): { rows: SchemaRow[]; truncated: number } {
  const rows: SchemaRow[] = [];
  let truncated = 0;
  const root = isJsonObject(schema) ? schema : {};

  /** A local `$ref` (`#/$defs/X`, `#/definitions/X`) resolved against the root, or undefined. */
  const resolve = (ref: unknown): Schema | undefined => {
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined;
    let node: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!isJsonObject(node) || !Object.hasOwn(node, key)) return undefined;
      node = node[key];
    }
    return isJsonObject(node) ? node : undefined;
  };

  const fields = (object: Schema, depth: number, refs: ReadonlySet<string>): void => {
    const properties = isJsonObject(object.properties) ? object.properties : {};
    const required = new Set(Array.isArray(object.required) ? object.required.map(String) : []);
    for (const [name, value] of Object.entries(properties)) {
      if (rows.length >= MAX_SCHEMA_ROWS) {
        truncated += 1;
        continue;
      }
      property(name, isJsonObject(value) ? value : {}, required.has(name), depth, refs);
    }
  };

  const property = (
    name: string,
    raw: Schema,
    required: boolean,
    depth: number,
    refs: ReadonlySet<string>,
  ): void => {
    // A `$ref` shows its target's fields, once per path (a recursive type stops at its second visit).
    const ref = typeof raw.$ref === 'string' ? raw.$ref : undefined;
    const target = ref === undefined || refs.has(ref) ? undefined : resolve(ref);
    const s: Schema = target === undefined ? raw : { ...target, ...raw, $ref: undefined };
    const seen = ref === undefined ? refs : new Set([...refs, ref]);
    const { type, enumNote } = typeOf(target === undefined ? raw : s);
    rows.push({ depth, name: visible(name), type, required, about: about(s, enumNote) });
    const inner = nested(s, seen);
    if (inner === undefined) return;
    if (depth + 1 >= MAX_SCHEMA_DEPTH) {
      rows.push({ depth: depth + 1, name: '…', type: '', required: false, about: '' });
      return;
    }
    fields(inner.object, depth + 1, inner.refs);
  };

  /**
   * The object whose fields go under a property: its own, or its array items' (through a local ref, unless that
   * ref is already being shown on this path).
   */
  const nested = (
    s: Schema,
    refs: ReadonlySet<string>,
  ): { object: Schema; refs: ReadonlySet<string> } | undefined => {
    if (isJsonObject(s.properties)) return { object: s, refs };
    const items = isJsonObject(s.items) ? s.items : undefined;
    if (items === undefined) return undefined;
    const ref = typeof items.$ref === 'string' ? items.$ref : undefined;
    if (ref !== undefined && refs.has(ref)) return undefined;
    const object = ref === undefined ? items : resolve(ref);
    if (object === undefined || !isJsonObject(object.properties)) return undefined;
    return { object, refs: ref === undefined ? refs : new Set([...refs, ref]) };
  };

  fields(root, 0, new Set());
  return { rows, truncated };

  /** The type column. `depth` bounds recursion through array items, unions and refs (schemas may recurse). */
  function typeOf(s: Schema, depth = 0): { type: string; enumNote?: string } {
    if (depth > 4) return { type: '…' };
    const ref = typeof s.$ref === 'string' ? s.$ref : undefined;
    if (ref !== undefined) {
      const target = resolve(ref);
      return target === undefined
        ? { type: `ref ${visible(ref.split('/').pop() ?? ref)}` }
        : typeOf({ ...target, ...s, $ref: undefined }, depth + 1);
    }
    if (Array.isArray(s.enum)) {
      const values = s.enum.map(quote).join(' | ');
      if (values.length <= MAX_TYPE_CHARS) return { type: values };
      return {
        type: `${baseType(s, depth) ?? 'value'} (${s.enum.length} values)`,
        enumNote: `one of: ${s.enum.map(quote).join(', ')}`,
      };
    }
    if (Object.hasOwn(s, 'const')) return { type: quote(s.const) };
    const branches = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
    const union = branches?.filter(isJsonObject);
    if (union !== undefined && union.length > 0 && baseType(s, depth) === undefined) {
      return { type: [...new Set(union.map((branch) => typeOf(branch, depth + 1).type))].join(' | ') };
    }
    return { type: baseType(s, depth) ?? 'any' };
  }

  function baseType(s: Schema, depth: number): string | undefined {
    const types = Array.isArray(s.type) ? s.type.map(String) : typeof s.type === 'string' ? [s.type] : [];
    if (types.length === 0) {
      if (isJsonObject(s.properties)) types.push('object');
      else if (s.items !== undefined) types.push('array');
      else return undefined;
    }
    return types
      .map((t) => {
        if (t === 'array') {
          if (!isJsonObject(s.items)) return 'array';
          const inner = typeOf(s.items, depth + 1).type;
          return `array of ${inner.includes(' ') ? `(${inner})` : inner}`;
        }
        if (t === 'object' && !isJsonObject(s.properties) && isJsonObject(s.additionalProperties)) {
          return `object of ${typeOf(s.additionalProperties, depth + 1).type}`;
        }
        if (t === 'string' && typeof s.format === 'string') return `string (${visible(s.format)})`;
        return visible(t);
      })
      .join(' | ');
  }
}

/** The description and the notes: `Sort entries (default: "name", >= 1)`. */
function about(s: Schema, enumNote: string | undefined): string {
  const notes: string[] = [];
  if (Object.hasOwn(s, 'default')) notes.push(`default: ${quote(s.default)}`);
  if (enumNote !== undefined) notes.push(enumNote);
  // zod writes the safe-integer range on every `.int()`: a bound that says nothing is left out.
  const trivial = (value: unknown) => value === Number.MAX_SAFE_INTEGER || value === Number.MIN_SAFE_INTEGER;
  const bound = (key: string, label: string) => {
    if (trivial(s[key])) return;
    if (typeof s[key] === 'number' || (typeof s[key] === 'string' && key === 'pattern'))
      notes.push(`${label} ${key === 'pattern' ? `/${visible(String(s[key]))}/` : String(s[key])}`);
  };
  bound('minimum', '>=');
  bound('exclusiveMinimum', '>');
  bound('maximum', '<=');
  bound('exclusiveMaximum', '<');
  bound('minLength', 'min length');
  bound('maxLength', 'max length');
  bound('minItems', 'min items');
  bound('maxItems', 'max items');
  bound('pattern', 'matches');
  if (s.deprecated === true) notes.push('deprecated');
  const description =
    typeof s.description === 'string' ? visible(s.description.replace(/\s+/g, ' ').trim()) : '';
  const tail = notes.length === 0 ? '' : `(${notes.join(', ')})`;
  return [description, tail].filter((p) => p !== '').join(' ');
}
