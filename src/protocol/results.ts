/**
 * The result checks of the SDK's era codecs, built once per era and method, and the copies of a request's params a
 * direct `tools/call` sends (client.ts). Split from the client so each file reads in one sitting.
 * @internal
 */
import { SERVER_INFO_META_KEY } from '@modelcontextprotocol/client';
import { isJsonObject } from '../json.js';
import type { InboundStage } from './inbound.js';
import type { WireCodec } from './sdk-internals.js';

/** A Standard Schema over an era codec's result check, as the SDK's `request()` takes it. */
export interface ResultSchema {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): { value: unknown } | { issues: { message: string }[] };
  };
}

/** Per era codec (the SDK keeps one per era), per method: the adapter, or `null` for a method not in the era. */
const schemas = new WeakMap<WireCodec, Map<string, ResultSchema | null>>();

export function resultSchemaFor(codec: WireCodec, method: string): ResultSchema | null {
  let byMethod = schemas.get(codec);
  if (byMethod === undefined) {
    byMethod = new Map();
    schemas.set(codec, byMethod);
  }
  let schema = byMethod.get(method);
  if (schema === undefined) {
    // Asked once per era and method, not per request: does this era define a result for the method?
    const probe = codec.validateResult(method, undefined);
    schema =
      !probe.ok && probe.reason === 'not-in-era'
        ? null
        : {
            '~standard': {
              version: 1,
              vendor: 'mcp-interlock',
              validate(value) {
                const outcome = codec.validateResult(method, value);
                if (outcome.ok) return { value: outcome.value };
                return {
                  issues: [
                    {
                      message:
                        outcome.reason === 'invalid' ? String(outcome.message) : `not-in-era: ${method}`,
                    },
                  ],
                };
              },
            },
          };
    byMethod.set(method, schema);
  }
  return schema;
}

export function isStandardSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/**
 * A `tools/call` result made of text blocks alone, read by its shape: `content` (text blocks with exactly `type`
 * and `text`) and an optional boolean `isError`; on 2026-07-28 also `resultType: "complete"` and an optional `_meta`
 * that names the server and nothing else (see {@link plainServerMeta}: the v2 SDK's server stamps every result
 * with it). For such a result the era's codec and its zod result schema return the same value (less `resultType`),
 * at a cost that profiled over stdio above the rest of the SDK's work on an answer; anything else, a task handle,
 * structured content, other `_meta`, a block of another type or one extra key, returns undefined and takes the
 * codec's path. A property test (test/protocol/client-direct.test.ts) checks the two agree on every value this
 * accepts.
 * @internal
 */
export function plainTextResult(codec: { era?: unknown }, raw: unknown): unknown {
  if (!isJsonObject(raw)) return undefined;
  const modern = codec.era === '2026-07-28';
  if (!modern && codec.era !== '2025-11-25') return undefined;
  const record = raw as { content?: unknown; isError?: unknown; resultType?: unknown; _meta?: unknown };
  for (const key in record) {
    if (key === 'content' || key === 'isError' || (modern && (key === 'resultType' || key === '_meta')))
      continue;
    return undefined;
  }
  if (modern && record.resultType !== 'complete') return undefined;
  if (record.isError !== undefined && typeof record.isError !== 'boolean') return undefined;
  const content = record.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    if (!isJsonObject(block)) return undefined;
    let keys = 0;
    for (const key in block) {
      if (key !== 'type' && key !== 'text') return undefined;
      keys++;
    }
    const text = block as { type?: unknown; text?: unknown };
    if (keys !== 2 || text.type !== 'text' || typeof text.text !== 'string') return undefined;
  }
  if (!modern) return record;
  if (record._meta === undefined) {
    return record.isError === undefined ? { content } : { content, isError: record.isError };
  }
  const meta = plainServerMeta(record._meta);
  if (meta === undefined) return undefined;
  return record.isError === undefined
    ? { _meta: meta, content }
    : { _meta: meta, content, isError: record.isError };
}

/** The fields of a server's `Implementation` that are plain strings, in the order the SDK's schema lists them. */
const SERVER_INFO_STRINGS = ['name', 'title', 'version', 'websiteUrl', 'description'] as const;

/**
 * A result's `_meta` as the 2026-07-28 result schema returns it, when it holds the server's name alone
 * (`io.modelcontextprotocol/serverInfo`: `name` and `version`, and optionally `title`, `websiteUrl` and
 * `description`, all strings); otherwise undefined. The schema makes a new object of the server info with its keys
 * in its own order and drops none of these, so this does too.
 */
function plainServerMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(meta)) return undefined;
  for (const key in meta) if (key !== SERVER_INFO_META_KEY) return undefined;
  const parsed = plainServerInfo(meta[SERVER_INFO_META_KEY]);
  return parsed === undefined ? undefined : { [SERVER_INFO_META_KEY]: parsed };
}

/**
 * A server's `Implementation` as the SDK's schema returns it, when it is made of the plain string fields alone
 * (`name` and `version`, and optionally `title`, `websiteUrl` and `description`); otherwise undefined (the schema
 * has more to check, or drops it: see isPlainResultResponse in stdio-transport.ts).
 */
export function plainServerInfo(fields: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(fields)) return undefined;
  const parsed: Record<string, unknown> = {};
  let known = 0;
  for (const key of SERVER_INFO_STRINGS) {
    if (!Object.hasOwn(fields, key)) continue;
    if (typeof fields[key] !== 'string') return undefined;
    parsed[key] = fields[key];
    known++;
  }
  let keys = 0;
  for (const _key in fields) keys++;
  if (keys !== known || parsed.name === undefined || parsed.version === undefined) return undefined;
  return parsed;
}

/**
 * Whether this V8 copies an object slowly when it is spread into a literal that also names one of its keys, as
 * `{ ...params, _meta }` does: about a microsecond a call in V8 11 (Node 20), ten times `Object.assign`. V8 12 (Node
 * 22) and later spread such objects faster than they assign them (docs/performance.md, thirteenth pass).
 */
const SLOW_SPREAD = Number.parseInt(process.versions.v8 ?? '', 10) < 12;

/**
 * A copy of a request's params whose `_meta` holds the outbound envelope's keys, then the caller's `_meta` keys (which
 * win, as in the SDK's `_envelopeOutbound`), then `progressToken` when there is one. The caller's objects and the
 * envelope are not written. Chosen once, by {@link SLOW_SPREAD}.
 * @internal
 */
export const withMeta: (
  params: Record<string, unknown>,
  envelope: Readonly<Record<string, unknown>> | undefined,
  token: number | undefined,
) => Record<string, unknown> = SLOW_SPREAD
  ? (params, envelope, token) => {
      const own = params._meta as object | undefined;
      let meta: Record<string, unknown>;
      if (envelope === undefined) meta = assigned(own);
      else if (own !== undefined && own !== null && Object.hasOwn(own, '__proto__'))
        meta = { ...envelope, ...own };
      else {
        meta = assigned(envelope);
        if (own !== undefined) Object.assign(meta, own);
      }
      if (token !== undefined) meta.progressToken = token;
      const sent = assigned(params);
      sent._meta = meta;
      return sent;
    }
  : (params, envelope, token) => ({
      ...params,
      _meta:
        token === undefined
          ? { ...envelope, ...(params._meta as object | undefined) }
          : { ...envelope, ...(params._meta as object | undefined), progressToken: token },
    });

/** Whether two envelopes have the same keys, each with the same value (`===`). */
export function sameEntries(
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
): boolean {
  let count = 0;
  for (const key in b) {
    if (a[key] !== b[key] || !Object.hasOwn(a, key)) return false;
    count++;
  }
  for (const _key in a) count--;
  return count === 0;
}

/**
 * An object's own enumerable properties in a new plain object, by `Object.assign`. One with an own `__proto__` key
 * (JSON.parse makes those) is spread instead: `Object.assign` would set the copy's prototype from it, and the key
 * would be lost.
 */
function assigned(value: object | undefined): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  return Object.hasOwn(value, '__proto__')
    ? { ...(value as Record<string, unknown>) }
    : Object.assign<Record<string, unknown>, object>({}, value);
}

/**
 * A stage of the inbound chain (inbound.ts), first: on a 2026-07-28 connection a result without `resultType` is read
 * as `complete`. MCP draft, basic/index ("Result types"): "For backward compatibility with servers implementing
 * earlier protocol versions, which do not include `resultType`, clients MUST treat an absent `resultType` as
 * `"complete"`." The SDK 2.4 client refuses such a result (INVALID_RESULT), so the field is filled in here, in a
 * copy, before any later stage or the SDK reads it (conformance `sep-2322-client-request-state`, issue 43).
 * `modern` is asked per message: the era is known only once the handshake is done.
 */
export function defaultResultType(modern: () => boolean): InboundStage {
  return {
    name: 'result-type',
    handle(message, extra, next) {
      const result = (message as { result?: { resultType?: unknown } }).result;
      if (result === undefined || result.resultType !== undefined || !isJsonObject(result) || !modern()) {
        next(message, extra);
        return;
      }
      next({ ...message, result: { ...result, resultType: 'complete' } } as typeof message, extra);
    },
  };
}
