/**
 * One request as Cedar sees it (issue 40): the principal, action and resource entities of the published schema,
 * and a context with the call's arguments. Built here only, for the engine and for partial evaluation alike.
 */
import type { CheckContext, ToolHints } from '../types.js';
import { CEDAR_NAMESPACE as NS } from './schema.js';
import type { EntityJson } from './wasm.js';

type Uid = { type: string; id: string };
type Json = boolean | number | string | Json[] | { [key: string]: Json };

// MCP 2025-11-25 ToolAnnotations: defaults when a hint is absent (as the native conditions read them).
const HINT_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const satisfies Record<keyof ToolHints, boolean>;

/** The Cedar action of each native action; anything else has no Cedar form (and is denied). */
const RESOURCE_TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  mcp: { execute: 'Tool', request: 'ServerRequest' },
  'mcp-resource': { read: 'Resource' },
  'mcp-prompt': { get: 'Prompt' },
  tool: { execute: 'NativeTool' },
};

/** The Cedar entity type a request on `scheme` with `action` names, or undefined when the pair has no Cedar form. */
function resourceTypeFor(scheme: string, action: string): string | undefined {
  const types = Object.hasOwn(RESOURCE_TYPES, scheme) ? RESOURCE_TYPES[scheme] : undefined;
  return types !== undefined && Object.hasOwn(types, action) ? types[action] : undefined;
}

/** A Cedar request, its entities and context; `args` may be left unknown (for partial evaluation). */
export interface CedarRequest {
  readonly principal: Uid;
  readonly action: Uid;
  readonly resource: Uid;
  readonly context: Record<string, Json | { __entity: Uid } | { __extn: { fn: string; arg: string } }>;
  readonly entities: EntityJson[];
}

/** One argument value in the schema's `Value` shape. */
function argumentValue(value: unknown): Json {
  if (typeof value === 'string') return { kind: 'string', string: value, length: value.length };
  if (typeof value === 'boolean') return { kind: 'boolean', bool: value };
  // A Cedar Long is a 64-bit integer; only safe integers are carried (others are numbers without `long`).
  if (typeof value === 'number')
    return Number.isSafeInteger(value) ? { kind: 'number', long: value } : { kind: 'number' };
  if (value === null) return { kind: 'null' };
  if (Array.isArray(value)) return { kind: 'array', length: value.length };
  return { kind: typeof value === 'object' ? 'object' : 'undefined' };
}

function annotationsOf(hints: ToolHints | undefined): Json {
  const out: Record<string, boolean> = {};
  for (const key of Object.keys(HINT_DEFAULTS) as (keyof ToolHints)[]) {
    const given = hints !== undefined && hints !== null && Object.hasOwn(hints, key) ? hints[key] : undefined;
    out[key] = typeof given === 'boolean' ? given : HINT_DEFAULTS[key];
  }
  return out;
}

const ARGS: Uid = { type: `${NS}::Arguments`, id: '' };

/**
 * The Cedar request for `action` on the well-formed `resource`, or undefined when the pair has no Cedar form.
 * With `unknownArgs`, the arguments are an unknown for partial evaluation.
 */
export function cedarRequest(
  resource: string,
  action: string,
  context: CheckContext | undefined,
  now: number,
  unknownArgs = false,
): CedarRequest | undefined {
  const first = resource.indexOf(':');
  const scheme = resource.slice(0, first);
  const type = resourceTypeFor(scheme, action);
  if (type === undefined) return undefined;
  const entities: EntityJson[] = [];
  const groups = (context?.groups ?? []).filter((g) => typeof g === 'string');
  const scopes = (context?.scopes ?? []).filter((s) => typeof s === 'string');
  for (const g of new Set(groups))
    entities.push({ uid: { type: `${NS}::Group`, id: g }, attrs: {}, parents: [] });
  const parents = [...new Set(groups)].map((id) => ({ type: `${NS}::Group`, id }));
  const who = context?.principal;
  const principal: Uid =
    typeof who === 'string'
      ? { type: `${NS}::Caller`, id: who }
      : { type: `${NS}::Agent`, id: typeof context?.agent === 'string' ? context.agent : '' };
  entities.push({
    uid: principal,
    attrs: typeof who === 'string' ? { subject: who, scopes } : { name: principal.id, scopes },
    parents,
  });
  const depth = resource.split(':').length;
  const attrs: Record<string, Json> = {
    path: resource,
    depth,
    annotations: annotationsOf(context?.annotations),
  };
  const resParents: Uid[] = [];
  if (scheme === 'tool') {
    attrs.name = resource.slice(first + 1);
    attrs.labels = [];
  } else {
    const second = resource.indexOf(':', first + 1);
    const server = resource.slice(first + 1, second);
    const rest = resource.slice(second + 1);
    attrs.server = server;
    if (type === 'Tool') {
      attrs.name = rest;
      attrs.labels = [];
    } else if (type === 'ServerRequest') attrs.kind = rest;
    else if (type === 'Resource') attrs.uri = rest;
    else attrs.name = rest;
    // `resource in Interlock::Server::"notes"` reads the parents; the server entity itself need not be sent.
    resParents.push({ type: `${NS}::Server`, id: server });
  }
  const resourceUid: Uid = { type: `${NS}::${type}`, id: resource };
  entities.push({ uid: resourceUid, attrs, parents: resParents });
  const ctx: CedarRequest['context'] = { now: Math.trunc(now) };
  if (typeof context?.agent === 'string') ctx.agent = context.agent;
  if (typeof who === 'string') ctx.principal = who;
  if (unknownArgs) {
    ctx.args = { __extn: { fn: 'unknown', arg: 'args' } };
  } else {
    const tags: Record<string, Json> = {};
    const args = context?.args;
    if (args !== undefined && args !== null && typeof args === 'object') {
      // Own properties only: inherited (polluted) properties are never argument values.
      for (const key of Object.keys(args)) tags[key] = argumentValue(args[key]);
    }
    entities.push({ uid: ARGS, attrs: {}, parents: [], tags });
    ctx.args = { __entity: ARGS };
  }
  return {
    principal,
    action: { type: `${NS}::Action`, id: action },
    resource: resourceUid,
    context: ctx,
    entities,
  };
}
