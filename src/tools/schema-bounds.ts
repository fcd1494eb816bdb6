/**
 * Bounds on the JSON Schemas servers send (input and output schemas), checked before Ajv compiles them (issue 13,
 * "bounded $ref resolution"; issue 14 hardening). A schema is data from an untrusted server:
 * - its size and nesting are capped (Ajv compiles recursively; a schema 20 000 levels deep overflows the stack);
 * - every `$ref` must resolve inside the schema itself (a JSON Pointer, an `$anchor`, or an embedded `$id`);
 *   remote references (`https:`, `file:`, another document) are never fetched: the schema is refused with the
 *   reference named, so the server can inline the definition under `$defs`. References to the JSON Schema meta
 *   schemas are left to the validator, which knows them without fetching;
 * - the schema with every `$ref` inlined is capped: a chain of `$defs` that each use the next one twice
 *   ("billion laughs") would otherwise cost 2^n checks per validation;
 * - a `$ref` cycle must go through a keyword that descends into the value (`properties`, `items`...): a cycle
 *   that stays on the same value (`{ "$ref": "#" }`) would recurse forever. Recursion that descends is bounded
 *   by the value's own depth, which argument limits (and the result size) cap.
 */
import { isJsonObject } from '../json.js';

/** Limits on one schema. */
export interface SchemaLimits {
  /** JSON values in the schema. @default DEFAULT_MAX_SCHEMA_NODES */
  maxNodes?: number | undefined;
  /** Nesting of objects and arrays. @default DEFAULT_MAX_SCHEMA_DEPTH */
  maxDepth?: number | undefined;
  /** Subschemas applied when every `$ref` is inlined (cycles counted once). @default DEFAULT_MAX_SCHEMA_EXPANSION */
  maxExpandedNodes?: number | undefined;
}

/** 20 000 JSON values. */
export const DEFAULT_MAX_SCHEMA_NODES = 20_000;
/** 128 levels of nesting (about 60 levels of nested properties). */
export const DEFAULT_MAX_SCHEMA_DEPTH = 128;
/** 100 000 subschemas once every `$ref` is inlined. */
export const DEFAULT_MAX_SCHEMA_EXPANSION = 100_000;
/**
 * The deepest value a recursive schema is checked against: 64, the default argument depth limit
 * (`DEFAULT_MAX_ARGUMENT_DEPTH`); `structuredContent` deeper than this is refused before it is validated.
 */
export const DEFAULT_MAX_VALUE_DEPTH = 64;

/** The base URI of a schema without `$id`: relative references against it name no document we have. */
const ROOT_BASE = 'interlock:/schema';

/** Keywords whose value is one subschema. */
const ONE_SCHEMA = new Set([
  'additionalProperties',
  'additionalItems',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);
/** Definitions: not applied to anything unless a `$ref` uses them. */
const NOT_APPLIED = new Set(['$defs', 'definitions']);
/** Keywords that apply their subschemas to values inside the value (not to the value itself). */
const DESCENDING = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;

interface Edge {
  to: number;
  descending: boolean;
  /** For `properties` edges: the property the subschema applies to (other descending edges apply to any). */
  key?: string | undefined;
}

interface SchemaNode {
  pointer: string;
  /** Absolute base URI, without fragment. */
  base: string;
  edges: Edge[];
  refs: { keyword: string; ref: string }[];
}

/** Escapes one JSON Pointer token (RFC 6901). */
function token(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function withoutFragment(uri: string): string {
  const hash = uri.indexOf('#');
  return hash === -1 ? uri : uri.slice(0, hash);
}

function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

function isMetaSchema(uri: string): boolean {
  return /^https?:\/\/json-schema\.org\//.test(uri);
}

/** Options of {@link schemaBoundsProblem}. */
export interface SchemaBoundsOptions extends SchemaLimits {
  /** The deepest value the schema will be checked against. @default DEFAULT_MAX_VALUE_DEPTH */
  maxValueDepth?: number | undefined;
  /** Read `id` as draft-04 did (the base URI); later drafts use `$id`. */
  draft04?: boolean | undefined;
}

/**
 * What makes `schema` unusable under the limits (a sentence naming the limit or the `$ref` and where it is), or
 * undefined when it is within them. Never changes `schema`; cost: two passes over it, stopped at the first limit.
 */
export function schemaBoundsProblem(schema: unknown, options: SchemaBoundsOptions = {}): string | undefined {
  const maxNodes = options.maxNodes ?? DEFAULT_MAX_SCHEMA_NODES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_SCHEMA_DEPTH;
  const maxExpanded = options.maxExpandedNodes ?? DEFAULT_MAX_SCHEMA_EXPANSION;
  const idKey = options.draft04 === true ? 'id' : '$id';

  const nodes: SchemaNode[] = [];
  const byPointer = new Map<string, number>();
  /** Absolute URI (no fragment) of each resource: the root and every embedded `$id`. */
  const resources = new Map<string, number>();
  /** `uri#name` of every anchor. */
  const anchors = new Map<string, number>();

  type Item = {
    value: unknown;
    pointer: string;
    depth: number;
    /** 'schema': a subschema; 'data': anything else (counted, never read as a schema). */
    kind: 'schema' | 'data';
    base: string;
    parent: number;
    descending: boolean;
    applied: boolean;
    /** Already counted with its map. */
    counted: boolean;
    /** Under `properties`: the property name. */
    key: string | undefined;
  };
  // Every item has the same shape (one hidden class): the walk allocates one per JSON value.
  const item = (
    value: unknown,
    pointer: string,
    depth: number,
    kind: Item['kind'],
    base: string,
    parent: number,
    descending: boolean,
    applied: boolean,
    counted: boolean,
    key: string | undefined,
  ): Item => ({ value, pointer, depth, kind, base, parent, descending, applied, counted, key });
  const stack: Item[] = [item(schema, '', 0, 'schema', ROOT_BASE, -1, false, true, false, undefined)];
  let count = 0;
  while (stack.length > 0) {
    const current = stack.pop() as Item;
    if (!current.counted && ++count > maxNodes) return `it has more than ${maxNodes} JSON values`;
    const { value, pointer, depth } = current;
    if (typeof value === 'boolean' && current.kind === 'schema') {
      // `true` / `false` are subschemas too: a `$ref` may point at one.
      byPointer.set(pointer, nodes.length);
      nodes.push({ pointer, base: current.base, edges: [], refs: [] });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxDepth) return `it is nested deeper than ${maxDepth} levels (at ${shown(pointer)})`;
    if (current.kind === 'data' || !isJsonObject(value)) {
      // Data, or an array in data position: count what is inside, read nothing as a schema.
      const entries = Array.isArray(value)
        ? value.map((v, i) => [String(i), v] as const)
        : Object.entries(value);
      for (const [key, v] of entries) {
        stack.push(
          item(
            v,
            `${pointer}/${token(key)}`,
            depth + 1,
            'data',
            current.base,
            -1,
            false,
            false,
            false,
            undefined,
          ),
        );
      }
      continue;
    }
    let base = current.base;
    const id = value[idKey];
    let anchorFromId: string | undefined;
    if (typeof id === 'string') {
      if (id.startsWith('#')) anchorFromId = id.slice(1);
      else {
        const resolved = resolveUri(id, base);
        if (resolved === undefined)
          return `its ${idKey} ${JSON.stringify(id)} at ${pointer || '/'} is not a URI`;
        base = withoutFragment(resolved);
      }
    }
    const index = nodes.length;
    nodes.push({ pointer, base, edges: [], refs: [] });
    byPointer.set(pointer, index);
    if (current.parent === -1 || base !== current.base) resources.set(base, index);
    for (const name of [anchorFromId, value.$anchor, value.$dynamicAnchor]) {
      if (typeof name === 'string' && name.length > 0) anchors.set(`${base}#${name}`, index);
    }
    if (current.parent !== -1 && current.applied) {
      nodes[current.parent]?.edges.push({ to: index, descending: current.descending, key: current.key });
    }
    for (const [key, v] of Object.entries(value)) {
      const at = `${pointer}/${token(key)}`;
      if ((REF_KEYWORDS as readonly string[]).includes(key) && typeof v === 'string') {
        nodes[index]?.refs.push({ keyword: key, ref: v });
        count++;
        continue;
      }
      const descending = DESCENDING.has(key);
      if (SCHEMA_MAP.has(key) && isJsonObject(v)) {
        count += 1 + Object.keys(v).length;
        if (count > maxNodes) return `it has more than ${maxNodes} JSON values`;
        for (const [name, sub] of Object.entries(v)) {
          const kind = isJsonObject(sub) || typeof sub === 'boolean' ? 'schema' : 'data';
          const property = key === 'properties' ? name : undefined;
          stack.push(
            item(
              sub,
              `${at}/${token(name)}`,
              depth + 2,
              kind,
              base,
              index,
              descending,
              !NOT_APPLIED.has(key),
              true,
              property,
            ),
          );
        }
      } else if (SCHEMA_ARRAY.has(key) && Array.isArray(v)) {
        if (++count > maxNodes) return `it has more than ${maxNodes} JSON values`;
        v.forEach((sub, i) => {
          const kind = isJsonObject(sub) || typeof sub === 'boolean' ? 'schema' : 'data';
          stack.push(
            item(sub, `${at}/${i}`, depth + 2, kind, base, index, descending, true, false, undefined),
          );
        });
      } else {
        const kind = ONE_SCHEMA.has(key) && (isJsonObject(v) || typeof v === 'boolean') ? 'schema' : 'data';
        stack.push(item(v, at, depth + 1, kind, base, index, descending, true, false, undefined));
      }
    }
  }

  // Every reference resolves inside the schema, to a subschema.
  for (const node of nodes) {
    for (const { keyword, ref } of node.refs) {
      const where = `its ${keyword} ${JSON.stringify(ref.length > 200 ? `${ref.slice(0, 200)}...` : ref)} at ${shown(node.pointer)}`;
      const uri = resolveUri(ref, node.base);
      if (uri !== undefined && isMetaSchema(uri)) continue;
      const document = uri === undefined ? undefined : withoutFragment(uri);
      const resource = document === undefined ? undefined : resources.get(document);
      if (uri === undefined || resource === undefined) {
        return `${where} names another document; Interlock never fetches schemas (no http:, https: or file: references), so the server should put that definition under $defs and refer to it as "#/$defs/..."`;
      }
      const hash = uri.indexOf('#');
      let fragment: string;
      try {
        fragment = hash === -1 ? '' : decodeURIComponent(uri.slice(hash + 1));
      } catch {
        return `${where} has a fragment that is not valid percent-encoding`;
      }
      const target =
        fragment === '' || fragment.startsWith('/')
          ? byPointer.get(`${nodes[resource]?.pointer ?? ''}${fragment}`)
          : anchors.get(`${document}#${fragment}`);
      if (target === undefined) {
        return `${where} points at nothing in the schema, or at something that is not a subschema (definitions belong under $defs)`;
      }
      node.edges.push({ to: target, descending: false });
    }
  }
  return (
    expansionProblem(nodes, maxExpanded, maxDepth) ??
    recursionProblem(nodes, options.maxValueDepth ?? DEFAULT_MAX_VALUE_DEPTH, maxExpanded)
  );
}

/** A JSON Pointer for a message: `/` for the root, long ones cut in the middle. */
function shown(pointer: string): string {
  if (pointer === '') return '/';
  return pointer.length <= 120 ? pointer : `${pointer.slice(0, 50)}...${pointer.slice(-60)}`;
}

// State 0: not visited yet (a fresh Uint8Array).
const ON_STACK = 1;
const DONE = 2;

/**
 * Counts subschemas applied with every `$ref` inlined (a reference back into the current path counts once, as
 * the validator compiles it to a call), and refuses cycles that never descend into the value. Iterative: a long
 * chain of references cannot overflow the stack.
 */
function expansionProblem(nodes: readonly SchemaNode[], max: number, maxDepth: number): string | undefined {
  if (nodes.length === 0) return undefined;
  const state = new Uint8Array(nodes.length);
  const size = new Float64Array(nodes.length);
  const position = new Int32Array(nodes.length);
  type Frame = { node: number; next: number; total: number; descending: boolean };
  const frames: Frame[] = [{ node: 0, next: 0, total: 1, descending: false }];
  state[0] = ON_STACK;
  const tooBig = `with every $ref inlined it applies more than ${max} subschemas (a $ref used many times, over and over)`;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const edges = (nodes[frame.node] as SchemaNode).edges;
    if (frame.next < edges.length) {
      const edge = edges[frame.next++] as Edge;
      const seen = state[edge.to];
      if (seen === DONE) frame.total += size[edge.to] as number;
      else if (seen === ON_STACK) {
        let descends = edge.descending;
        for (let i = (position[edge.to] as number) + 1; i < frames.length && !descends; i++) {
          descends = (frames[i] as Frame).descending;
        }
        if (!descends) {
          return `its $ref at ${shown((nodes[frame.node] as SchemaNode).pointer)} loops back to ${shown((nodes[edge.to] as SchemaNode).pointer)} without descending into the value, which would recurse forever`;
        }
        frame.total += 1;
      } else {
        // Subschemas within subschemas and $refs to $refs: the validator compiles them recursively.
        if (frames.length >= maxDepth) {
          return `its subschemas and $refs nest deeper than ${maxDepth} levels (at ${shown((nodes[edge.to] as SchemaNode).pointer)})`;
        }
        state[edge.to] = ON_STACK;
        position[edge.to] = frames.length;
        frames.push({ node: edge.to, next: 0, total: 1, descending: edge.descending });
      }
      if (frame.total > max) return tooBig;
      continue;
    }
    frames.pop();
    state[frame.node] = DONE;
    size[frame.node] = frame.total;
    const parent = frames[frames.length - 1];
    if (parent !== undefined) {
      parent.total += frame.total;
      if (parent.total > max) return tooBig;
    }
  }
  return undefined;
}

/**
 * Recursion that branches on one value: `{ "allOf": [{ "properties": { "a": { "$ref": "#" } } }, <the same>] }` applies
 * the root twice to `/a`, four times to `/a/a`, 2^64 times at the depth arguments may reach. For each depth j up to
 * `maxValueDepth` this computes (an upper bound of) how many subschemas apply to one value at depth j: subschemas
 * on the same value add up, and `properties` of different names are alternatives (a value is under one name), so a
 * tree with `left` and `right` recursing stays linear. Refused when the bound passes `max`. Cost: depth x edges.
 */
function recursionProblem(
  nodes: readonly SchemaNode[],
  maxValueDepth: number,
  max: number,
): string | undefined {
  if (nodes.length === 0) return undefined;
  const order = sameValueOrder(nodes);
  let previous = new Float64Array(nodes.length);
  let current = new Float64Array(nodes.length);
  for (let depth = 0; depth <= maxValueDepth; depth++) {
    for (const index of order) {
      const node = nodes[index] as SchemaNode;
      let same = depth === 0 ? 1 : 0;
      let any = 0;
      let byKey: Map<string, number> | undefined;
      for (const edge of node.edges) {
        if (!edge.descending) {
          same += current[edge.to] as number;
        } else if (depth > 0) {
          const below = previous[edge.to] as number;
          if (edge.key === undefined) any += below;
          else {
            byKey ??= new Map();
            byKey.set(edge.key, (byKey.get(edge.key) ?? 0) + below);
          }
        }
      }
      let widest = 0;
      for (const value of byKey?.values() ?? []) widest = Math.max(widest, value);
      current[index] = same + any + widest;
    }
    // Only what the root applies counts: a $defs entry nothing refers to is never applied.
    const atRoot = current[0] as number;
    // Nothing applies this deep, so nothing deeper either.
    if (atRoot === 0) return undefined;
    if (atRoot > max) {
      return `a recursive $ref applies more than ${max} subschemas to one value ${depth} levels down: the recursion branches on the same value`;
    }
    [previous, current] = [current, previous];
    current.fill(0);
  }
  return undefined;
}

/**
 * The nodes in an order where every target of a same-value edge (a `$ref`, `allOf`...) comes before its source.
 * Same-value cycles reachable from the root are refused before this runs; an unreachable one is cut (never applied).
 */
function sameValueOrder(nodes: readonly SchemaNode[]): number[] {
  const order: number[] = [];
  const state = new Uint8Array(nodes.length);
  for (let start = 0; start < nodes.length; start++) {
    if (state[start] !== 0) continue;
    const frames: { node: number; next: number }[] = [{ node: start, next: 0 }];
    state[start] = ON_STACK;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: number; next: number };
      const edges = (nodes[frame.node] as SchemaNode).edges;
      if (frame.next < edges.length) {
        const edge = edges[frame.next++] as Edge;
        if (edge.descending || state[edge.to] !== 0) continue;
        state[edge.to] = ON_STACK;
        frames.push({ node: edge.to, next: 0 });
        continue;
      }
      frames.pop();
      state[frame.node] = DONE;
      order.push(frame.node);
    }
  }
  return order;
}
