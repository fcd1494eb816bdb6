/**
 * Tool definitions in each API's format, from the MCP JSON Schema (issue 4, "Tool definitions are converted
 * to each provider's format ... check which schema features each API rejects").
 *
 * What the APIs refuse, at the top level of a tool's schema only (nested keywords pass through):
 * - OpenAI Chat Completions: "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not'
 *   at the top level" (`invalid_function_parameters`), and a missing `type` ("got 'type: null'").
 * - Anthropic Messages: "input_schema does not support oneOf, allOf, or anyOf at the top level"; `type`
 *   must be `object`.
 * - Both: tool names must match `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * So the conversion: resolve a top-level local `$ref`, merge top-level `allOf` / `anyOf` / `oneOf` of object
 * schemas into one object schema, drop a top-level `enum` / `not`, and set `type: 'object'`. A merged property
 * takes its schema from the alternatives that declare it, and only keys every alternative requires stay
 * required; for alternatives that list their properties (`additionalProperties: false`) the result accepts
 * every argument object the original accepts. The converted schema is guidance for the model (no strict
 * mode is requested): the manager validates each call against the server's exact schema and tells the model
 * what to fix. Anything that cannot be converted fails with a `ToolSchemaError` saying why.
 */
import { ToolSchemaError } from '../errors.js';
import { isJsonObject } from '../json.js';
import type { ModelToolDefinition } from './types.js';

/** Tool names both APIs accept. */
export const PROVIDER_TOOL_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** A converted schema and what was changed, in words (empty when nothing was). */
export interface ConvertedToolSchema {
  readonly schema: Readonly<Record<string, unknown>>;
  readonly changes: readonly string[];
}

type Json = Record<string, unknown>;

const COMBINATORS = ['allOf', 'anyOf', 'oneOf'] as const;
const MAX_REF_DEPTH = 8;

const cache = new WeakMap<object, ConvertedToolSchema>();

/**
 * The provider-ready form of a tool's input schema. Results are cached per schema object, so a tool list
 * sent every turn is converted once. Throws `ToolSchemaError` when the schema cannot be made acceptable.
 */
export function toProviderSchema(
  inputSchema: Readonly<Record<string, unknown>>,
  tool = 'tool',
): ConvertedToolSchema {
  const hit = cache.get(inputSchema);
  if (hit !== undefined) return hit;
  const changes: string[] = [];
  const schema = convert(structuredClone(inputSchema) as Json, tool, changes);
  const result = Object.freeze({ schema: deepFreeze(schema), changes: Object.freeze(changes) });
  cache.set(inputSchema, result);
  return result;
}

/** Checks a tool's name against the APIs' rule; throws `ToolSchemaError` naming the fix. */
export function assertProviderToolName(name: string, provider: string): void {
  if (PROVIDER_TOOL_NAME_RE.test(name)) return;
  throw new ToolSchemaError(
    `Tool name '${name}' cannot be sent to ${provider}: names must be 1-64 characters of A-Z, a-z, 0-9, _ and -. ` +
      'Keep the manager at maxToolNameLength 64 (the default), or rename the native tool.',
  );
}

/** Converts every tool, reporting changes once per schema through `onWarning`. */
export function convertTools<T>(
  tools: readonly ModelToolDefinition[],
  provider: string,
  onWarning: ((message: string) => void) | undefined,
  reported: WeakSet<object>,
  build: (tool: ModelToolDefinition, schema: Readonly<Record<string, unknown>>) => T,
): T[] {
  return tools.map((tool) => {
    assertProviderToolName(tool.name, provider);
    const converted = toProviderSchema(tool.inputSchema, tool.name);
    if (converted.changes.length > 0 && onWarning !== undefined && !reported.has(tool.inputSchema)) {
      reported.add(tool.inputSchema);
      onWarning(`Tool '${tool.name}': ${converted.changes.join('; ')}.`);
    }
    return build(tool, converted.schema);
  });
}

function convert(input: Json, tool: string, changes: string[]): Json {
  let schema = input;
  delete schema.$schema;
  schema = resolveTopRef(schema, schema, tool, changes);
  for (const keyword of COMBINATORS) {
    if (schema[keyword] !== undefined) schema = mergeCombinator(schema, keyword, input, tool, changes);
  }
  for (const keyword of ['enum', 'not'] as const) {
    if (schema[keyword] !== undefined) {
      delete schema[keyword];
      changes.push(`dropped the top-level '${keyword}' (the APIs refuse it; the server still checks it)`);
    }
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    if (!type.includes('object')) throw notAnObject(tool, JSON.stringify(type));
    schema.type = 'object';
    changes.push(`narrowed the top-level type ${JSON.stringify(type)} to 'object'`);
  } else if (type === undefined) {
    schema.type = 'object';
  } else if (type !== 'object') {
    throw notAnObject(tool, JSON.stringify(type));
  }
  if (schema.properties === undefined) schema.properties = {};
  return schema;
}

function notAnObject(tool: string, type: string): ToolSchemaError {
  return new ToolSchemaError(
    `The input schema of '${tool}' has top-level type ${type}; tool arguments are a JSON object, so no model API accepts it.`,
  );
}

/** Replaces a top-level `$ref` to a local definition by the definition, keeping `$defs` for nested refs. */
function resolveTopRef(schema: Json, root: Json, tool: string, changes: string[]): Json {
  let current = schema;
  for (let depth = 0; typeof current.$ref === 'string'; depth++) {
    if (depth >= MAX_REF_DEPTH) {
      throw new ToolSchemaError(`The input schema of '${tool}' has a cycle of top-level $refs.`);
    }
    const ref = current.$ref;
    const target = lookup(root, ref, tool);
    const { $ref: _ref, ...rest } = current;
    current = { ...structuredClone(target), ...rest };
    changes.push(`inlined the top-level $ref '${ref}'`);
  }
  return current;
}

function lookup(root: Json, ref: string, tool: string): Json {
  if (!ref.startsWith('#/')) {
    throw new ToolSchemaError(
      `The input schema of '${tool}' starts with $ref '${ref}', which is not a local definition (#/...); model APIs fetch nothing, so it cannot be sent.`,
    );
  }
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isJsonObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
  }
  if (!isJsonObject(node)) {
    throw new ToolSchemaError(`The input schema of '${tool}' has $ref '${ref}', which points at nothing.`);
  }
  return node;
}

/** Merges a top-level `allOf` / `anyOf` / `oneOf` of object schemas into the schema itself. */
function mergeCombinator(
  schema: Json,
  keyword: (typeof COMBINATORS)[number],
  root: Json,
  tool: string,
  changes: string[],
): Json {
  const raw = schema[keyword];
  delete schema[keyword];
  if (!Array.isArray(raw) || raw.length === 0) {
    changes.push(`dropped an empty or malformed top-level '${keyword}'`);
    return schema;
  }
  const members = raw
    .filter(isJsonObject)
    .map((m) => resolveTopRef(structuredClone(m), root, tool, []))
    .map((m) =>
      m.allOf !== undefined || m.anyOf !== undefined || m.oneOf !== undefined ? convert(m, tool, []) : m,
    );
  const all = keyword === 'allOf';
  // Tool arguments are objects: an alternative that cannot be an object never matches, so it is left out.
  const objects = members.filter(isObjectLike);
  if (objects.length === 0) {
    throw new ToolSchemaError(
      `The input schema of '${tool}' has a top-level '${keyword}' without any object schema; tool arguments are a JSON object.`,
    );
  }
  const props = new Map<string, unknown[]>();
  const own = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [key, value] of Object.entries(own)) props.set(key, [value]);
  let required: Set<string> | undefined;
  // A `true` alternative accepts any object: nothing is required and any key may appear.
  const anything = !all && raw.some((m) => m === true);
  let closed = !anything;
  for (const member of objects) {
    const memberProps = isJsonObject(member.properties) ? member.properties : {};
    for (const [key, value] of Object.entries(memberProps)) {
      const list = props.get(key) ?? [];
      if (!list.some((v) => JSON.stringify(v) === JSON.stringify(value))) list.push(value);
      props.set(key, list);
    }
    const req = new Set(
      Array.isArray(member.required) ? member.required.filter((r) => typeof r === 'string') : [],
    );
    if (all) required = new Set([...(required ?? []), ...req]);
    else required = required === undefined ? req : new Set([...required].filter((r) => req.has(r)));
    if (member.additionalProperties !== false || member.patternProperties !== undefined) closed = false;
  }
  if (anything) required = new Set();
  const properties: Json = {};
  for (const [key, list] of props) {
    properties[key] = list.length === 1 ? list[0] : all ? { allOf: list } : { anyOf: list };
  }
  schema.properties = properties;
  const top = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
  const merged = [...new Set([...top, ...(required ?? [])])];
  if (merged.length > 0) schema.required = merged;
  else delete schema.required;
  if (closed && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
  if (!all && objects.length > 1) {
    const shapes = objects.map(
      (m) => `{${Object.keys(isJsonObject(m.properties) ? m.properties : {}).join(', ')}}`,
    );
    const note = `Arguments take one of these shapes: ${shapes.join(' | ')}.`;
    schema.description = typeof schema.description === 'string' ? `${schema.description} ${note}` : note;
  }
  changes.push(
    `merged the top-level '${keyword}' (${raw.length} schemas) into one object schema (the APIs refuse it at the top level; the server still checks the exact shape)`,
  );
  return schema;
}

function isObjectLike(schema: Json): boolean {
  const type = schema.type;
  if (type === undefined) return true;
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
