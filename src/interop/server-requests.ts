/**
 * Requests a server sends to us (issue 13): elicitation (form mode), sampling and roots. Each is declared as a
 * client capability only when the app gave a handler, and each passes the manager's `CapabilitySet` first, on
 * `mcp:{server}:elicitation`, `mcp:{server}:sampling` and `mcp:{server}:roots` with action `request`, audited
 * like a tool call. A denied request gets the protocol's refusal (an elicitation is declined, sampling and
 * roots answer with an error); the app's handler is never asked and no answer is made up.
 *
 * The same handlers serve both eras: 2025-era servers send the requests over the connection; 2026-07-28
 * servers embed them in an `input_required` result, which the SDK client answers and retries (capped rounds,
 * `requestState` echoed untouched, a new request id per round).
 */
import {
  type Client,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  ProtocolError,
  type Root,
} from '@modelcontextprotocol/client';
import { PermissionDeniedError } from '../errors.js';

/** Which server is asking, and a signal that aborts when the server cancels or the connection ends. */
export interface ServerRequestContext {
  server: string;
  signal: AbortSignal;
}

/**
 * Answers a form-mode elicitation: ask the user `request.message` for the fields of `request.requestedSchema`.
 * Defaults declared in the schema are filled in for fields an accepted answer leaves out (SEP-1034).
 */
export type ElicitationHandler = (
  request: ElicitRequestFormParams,
  context: ServerRequestContext,
) => Promise<ElicitResult> | ElicitResult;

/** Answers `sampling/createMessage`: run the messages through a model of your choice. */
export type SamplingHandler = (
  request: CreateMessageRequestParams,
  context: ServerRequestContext,
) => Promise<CreateMessageResult> | CreateMessageResult;

/** The roots a server may see: a fixed list, or one computed per server. */
export type RootsOption =
  | readonly Root[]
  | ((context: ServerRequestContext) => Promise<readonly Root[]> | readonly Root[]);

/** The manager options that answer server requests. None set: no client capability is declared. */
export interface ServerRequestOptions {
  onElicitation?: ElicitationHandler | undefined;
  onSampling?: SamplingHandler | undefined;
  roots?: RootsOption | undefined;
}

/**
 * Decides `mcp:{server}:{kind}` / `request`, with what the server asked as `args` for conditions; throws
 * `PermissionDeniedError` when denied (after auditing).
 */
export type ServerRequestAuthorizer = (
  server: string,
  kind: 'elicitation' | 'sampling' | 'roots',
  args: Record<string, unknown>,
) => Promise<void>;

/** What the transport needs to answer server requests: the capabilities to declare and the handlers. */
export interface ServerRequestSupport {
  capabilities: ClientCapabilities;
  install(client: Client, server: string): void;
}

/** Everything a manager needs for `options`; undefined when the app answers no server request. */
export function serverRequestSupport(
  options: ServerRequestOptions,
  authorize: ServerRequestAuthorizer,
): ServerRequestSupport | undefined {
  const capabilities = clientCapabilitiesFor(options);
  if (Object.keys(capabilities).length === 0) return undefined;
  return {
    capabilities,
    install: (client, server) => installServerRequestHandlers(client, server, options, authorize),
  };
}

/** The JSON-RPC error code a denied sampling or roots request gets (the spec's "user rejected"). */
export const REQUEST_REJECTED_CODE = -1;

/** The client capabilities to declare for `options`: only what the app can answer. */
export function clientCapabilitiesFor(options: ServerRequestOptions): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (options.onElicitation !== undefined) capabilities.elicitation = { form: {} };
  if (options.onSampling !== undefined) capabilities.sampling = {};
  if (options.roots !== undefined) capabilities.roots = {};
  return capabilities;
}

/** Registers the handlers for `options` on `client`, each behind `authorize`. */
export function installServerRequestHandlers(
  client: Client,
  server: string,
  options: ServerRequestOptions,
  authorize: ServerRequestAuthorizer,
): void {
  const { onElicitation, onSampling, roots } = options;
  if (onElicitation !== undefined) {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const params = request.params;
      // URL mode is not declared, so a server that asks for it anyway is declined without asking anyone.
      if (params.mode === 'url') return { action: 'decline' };
      try {
        await authorize(server, 'elicitation', { message: params.message });
      } catch (err) {
        if (err instanceof PermissionDeniedError) return { action: 'decline' };
        throw err;
      }
      const answer = await onElicitation(params, { server, signal: ctx.mcpReq.signal });
      return withSchemaDefaults(answer, params.requestedSchema);
    });
  }
  if (onSampling !== undefined) {
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
      const params = request.params;
      await refuseWhenDenied(() =>
        authorize(server, 'sampling', {
          maxTokens: params.maxTokens,
          models: params.modelPreferences?.hints?.map((h) => h.name) ?? [],
        }),
      );
      return onSampling(params, { server, signal: ctx.mcpReq.signal });
    });
  }
  if (roots !== undefined) {
    client.setRequestHandler('roots/list', async (_request, ctx) => {
      await refuseWhenDenied(() => authorize(server, 'roots', {}));
      const list = typeof roots === 'function' ? await roots({ server, signal: ctx.mcpReq.signal }) : roots;
      return { roots: [...list] };
    });
  }
}

/** A denial becomes the protocol's refusal, with the policy's reason; other failures stay what they are. */
async function refuseWhenDenied(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof PermissionDeniedError) {
      throw new ProtocolError(
        REQUEST_REJECTED_CODE,
        `Request rejected by the client's policy: ${err.message}`,
      );
    }
    throw err;
  }
}

/**
 * SEP-1034: an accepted answer gets the schema's `default` for each field it leaves out. Only top-level
 * primitive properties carry defaults in an elicitation schema; nothing the user gave is overwritten.
 */
export function withSchemaDefaults(
  answer: ElicitResult,
  schema: ElicitRequestFormParams['requestedSchema'],
): ElicitResult {
  if (answer.action !== 'accept') return answer;
  const content: Record<string, unknown> = { ...(answer.content ?? {}) };
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const fallback = (property as { default?: unknown }).default;
    if (fallback !== undefined && content[name] === undefined) content[name] = fallback;
  }
  return { ...answer, content: content as ElicitResult['content'] };
}
