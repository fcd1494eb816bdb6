/**
 * The MCP client every connection uses: the SDK's `Client` with one cost taken off its request path.
 *
 * For a spec method called without a result schema (`client.callTool`, `readResource`, `getPrompt`, …), the SDK's
 * `request()` builds a Standard Schema adapter over the negotiated era's result check on every call, and to learn
 * whether the method exists in the era it first validates `undefined` against the result schema and formats the
 * failure as text. At concurrency 16 over stdio that probe was most of the zod time in a call's profile, more than
 * all of Interlock's own code (see docs/performance.md). The adapter depends on nothing but the era and the
 * method, so this client builds it once per (era, method) and hands it to `request()`'s explicit-schema overload:
 * same era gate, same result decoding, same validation, same errors.
 *
 * It leans on one protected member of the SDK, `_wireCodec()` (documented for role subclasses). If a future SDK
 * drops it, `request()` falls through to the SDK's own path unchanged and `resultChecksReused` stays false, which
 * a test watches.
 * @internal
 */
import { Client } from '@modelcontextprotocol/client';

/** What a result check needs from the SDK's era codec (its `WireCodec` type is not exported). */
interface ResultCodec {
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

interface ResultSchema {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): { value: unknown } | { issues: { message: string }[] };
  };
}

/** Per era codec (the SDK keeps one per era), per method: the adapter, or `null` for a method not in the era. */
const schemas = new WeakMap<ResultCodec, Map<string, ResultSchema | null>>();

function resultSchemaFor(codec: ResultCodec, method: string): ResultSchema | null {
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

function isStandardSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/** @internal */
export class InterlockClient extends Client {
  #reused = false;

  /** True once a request has gone out with a result check built earlier (false if the SDK changed under us). */
  get resultChecksReused(): boolean {
    return this.#reused;
  }

  // biome-ignore lint/suspicious/noExplicitAny: the SDK's overloads are re-dispatched unchanged
  override request(request: any, schemaOrOptions?: any, maybeOptions?: any): any {
    // Before a version is negotiated the SDK pins lifecycle methods to a bootstrap era: its own path decides.
    if (!isStandardSchema(schemaOrOptions) && this.getNegotiatedProtocolVersion() !== undefined) {
      const codec = this.#codec();
      const schema = codec === undefined ? null : resultSchemaFor(codec, request.method);
      if (schema !== null) {
        this.#reused = true;
        return super.request(request, schema, schemaOrOptions);
      }
    }
    return super.request(request, schemaOrOptions, maybeOptions);
  }

  #codec(): ResultCodec | undefined {
    const accessor = (this as unknown as { _wireCodec?: () => unknown })._wireCodec;
    if (typeof accessor !== 'function') return undefined;
    const codec = accessor.call(this) as Partial<ResultCodec> | undefined;
    return typeof codec?.validateResult === 'function' ? (codec as ResultCodec) : undefined;
  }
}
