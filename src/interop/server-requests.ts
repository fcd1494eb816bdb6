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
  type ElicitRequestURLParams,
  type ElicitResult,
  isSpecType,
  ProtocolError,
  type Root,
} from '@modelcontextprotocol/client';
import { PermissionDeniedError, ServerRequestError } from '../errors.js';

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
  /**
   * Answers one request `server` made outside the connection's own request channel (an `inputRequests` entry of
   * a task, issue 13) through the same gate and handlers as {@link install}: a denied elicitation is declined, a
   * denied sampling or roots request throws `PermissionDeniedError`, a method without handler or with malformed
   * params throws `ServerRequestError`.
   */
  answer(server: string, method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
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
    answer: (server, method, params, signal) =>
      answerServerRequest(gatedAnswerers(server, options, authorize), server, method, params, signal),
  };
}

/** `answer` for a manager with no handler at all: every request is refused as undeclared. */
export const answerNoRequest: ServerRequestSupport['answer'] = (server, method, params, signal) =>
  answerServerRequest({}, server, method, params, signal);

/** The app's handlers, each behind the gate: the one place the three kinds are decided. */
interface GatedAnswerers {
  elicitation?: (
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    signal: AbortSignal,
  ) => Promise<ElicitResult>;
  sampling?: (params: CreateMessageRequestParams, signal: AbortSignal) => Promise<CreateMessageResult>;
  roots?: (signal: AbortSignal) => Promise<{ roots: Root[] }>;
}

function gatedAnswerers(
  server: string,
  options: ServerRequestOptions,
  authorize: ServerRequestAuthorizer,
): GatedAnswerers {
  const { onElicitation, onSampling, roots } = options;
  const answerers: GatedAnswerers = {};
  if (onElicitation !== undefined) {
    answerers.elicitation = async (params, signal) => {
      // URL mode is not declared, so a server that asks for it anyway is declined without asking anyone.
      if (params.mode === 'url') return { action: 'decline' };
      try {
        await authorize(server, 'elicitation', { message: params.message });
      } catch (err) {
        if (err instanceof PermissionDeniedError) return { action: 'decline' };
        throw err;
      }
      const answer = await onElicitation(params, { server, signal });
      return withSchemaDefaults(answer, params.requestedSchema);
    };
  }
  if (onSampling !== undefined) {
    answerers.sampling = async (params, signal) => {
      await authorize(server, 'sampling', {
        maxTokens: params.maxTokens,
        models: params.modelPreferences?.hints?.map((h) => h.name) ?? [],
      });
      return onSampling(params, { server, signal });
    };
  }
  if (roots !== undefined) {
    answerers.roots = async (signal) => {
      await authorize(server, 'roots', {});
      const list = typeof roots === 'function' ? await roots({ server, signal }) : roots;
      return { roots: [...list] };
    };
  }
  return answerers;
}

/** Dispatches one request that came as data (not over the connection): its params are checked first. */
async function answerServerRequest(
  answerers: GatedAnswerers,
  server: string,
  method: string,
  params: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  // The server broke the protocol (it asked for what we did not declare, or sent malformed params): a JSON-RPC
  // fault of the server's, with the code a server would answer it with.
  const unanswered = (why: string, code = -32601) =>
    new ServerRequestError(`Server '${server}' asked for '${method}', ${why}.`, code, { method }, { server });
  if (method === 'elicitation/create') {
    if (answerers.elicitation === undefined) throw unanswered('but no onElicitation handler is set');
    const request = { ...(params as object) } as { mode?: string };
    if (request.mode === 'url') return { action: 'decline' };
    request.mode = 'form';
    if (!isSpecType.ElicitRequestFormParams(request)) throw unanswered('with malformed params', -32602);
    return answerers.elicitation(request as ElicitRequestFormParams, signal);
  }
  if (method === 'sampling/createMessage') {
    if (answerers.sampling === undefined) throw unanswered('but no onSampling handler is set');
    if (!isSpecType.CreateMessageRequestParams(params)) throw unanswered('with malformed params', -32602);
    return answerers.sampling(params as CreateMessageRequestParams, signal);
  }
  if (method === 'roots/list') {
    if (answerers.roots === undefined) throw unanswered('but no roots option is set');
    return answerers.roots(signal);
  }
  throw unanswered('which this client does not answer');
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
  const { elicitation, sampling, roots } = gatedAnswerers(server, options, authorize);
  if (elicitation !== undefined) {
    client.setRequestHandler('elicitation/create', (request, ctx) =>
      elicitation(request.params, ctx.mcpReq.signal),
    );
  }
  if (sampling !== undefined) {
    client.setRequestHandler('sampling/createMessage', (request, ctx) =>
      refuseWhenDenied(() => sampling(request.params, ctx.mcpReq.signal)),
    );
  }
  if (roots !== undefined) {
    client.setRequestHandler('roots/list', (_request, ctx) =>
      refuseWhenDenied(() => roots(ctx.mcpReq.signal)),
    );
  }
}

/** A denial becomes the protocol's refusal, with the policy's reason; other failures stay what they are. */
async function refuseWhenDenied<T>(answer: () => Promise<T>): Promise<T> {
  try {
    return await answer();
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
