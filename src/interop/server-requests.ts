/**
 * Requests a server sends to us (issue 13): elicitation (form and URL mode), sampling (with tools) and roots.
 * Each is declared as a client capability only when the app gave a handler, and each passes the manager's
 * `CapabilitySet` first, on `mcp:{server}:elicitation`, `mcp:{server}:sampling` and `mcp:{server}:roots` with
 * action `request`, audited like a tool call and traced with a span of its own. What the server asked is the
 * condition's `args`, so a policy can bound it: the URL's host (an allowlist of domains), the token budget, the
 * model hints, the tools offered to the sampled model, the roots a server may see.
 *
 * A denied request gets the protocol's refusal: an elicitation is declined; sampling and roots answer with an
 * error that says the refusal is the client's. The app's handler is never asked and no answer is made up.
 *
 * The same handlers serve both eras: 2025-era servers send the requests over the connection; 2026-07-28
 * servers embed them in an `input_required` result, which the SDK client answers and retries (capped rounds,
 * `requestState` echoed untouched, a new request id per round). On 2026 servers a refusal fails the tool call
 * with a `ServerRequestRefusedError` (there is no server-side request to answer with an error).
 */
import {
  type Client,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  type ElicitRequestFormParams,
  type ElicitRequestURLParams,
  type ElicitResult,
  isSpecType,
  ProtocolError,
  ProtocolErrorCode,
  type Root,
} from '@modelcontextprotocol/client';
import type { Span } from '@opentelemetry/api';
import { PermissionDeniedError, ServerRequestError, ServerRequestRefusedError } from '../errors.js';
import { MAX_INPUT_REQUESTS_PER_ROUND } from '../protocol/bounds.js';
import { resourceFor } from '../security/pattern.js';
import type { Decision } from '../security/types.js';
import { checkElicitationUrl, type UrlElicitationRequest, withSchemaDefaults } from './elicitation.js';
import type { Refusal } from './pipeline.js';
import { answerThroughPipeline, type ServerRequestDeps } from './server-request-trace.js';

export { withSchemaDefaults } from './elicitation.js';

/** The three kinds of request a server can make of us. */
export type ServerRequestKind = 'elicitation' | 'sampling' | 'roots';

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

/** The user's answer to a URL-mode elicitation: consent to open the URL (`accept`), `decline` or `cancel`. */
export interface UrlElicitationResult {
  action: 'accept' | 'decline' | 'cancel';
}

/**
 * Answers a URL-mode elicitation: show the user `request.url` in full (and warn when `request.punycode`), and
 * open it in the user's browser only after they consent. Interlock never fetches it.
 */
export type UrlElicitationHandler = (
  request: UrlElicitationRequest,
  context: ServerRequestContext,
) => Promise<UrlElicitationResult> | UrlElicitationResult;

/** Answers `sampling/createMessage`: run the messages through a model of your choice. */
export type SamplingHandler = (
  request: CreateMessageRequestParams,
  context: ServerRequestContext,
) =>
  | Promise<CreateMessageResult | CreateMessageResultWithTools>
  | CreateMessageResult
  | CreateMessageResultWithTools;

/** The roots a server may see: a fixed list, or one computed per server. */
export type RootsOption =
  | readonly Root[]
  | ((context: ServerRequestContext) => Promise<readonly Root[]> | readonly Root[]);

/** The manager options that answer server requests. None set: no client capability is declared. */
export interface ServerRequestOptions {
  onElicitation?: ElicitationHandler | undefined;
  onUrlElicitation?: UrlElicitationHandler | undefined;
  onSampling?: SamplingHandler | undefined;
  /** Declares `sampling.tools`: servers may offer tools to the sampled model. @default false */
  samplingWithTools?: boolean | undefined;
  roots?: RootsOption | undefined;
  /** The most input requests one `input_required` round may carry. @default MAX_INPUT_REQUESTS_PER_ROUND */
  maxRequestsPerRound?: number | undefined;
}

/** What the transport needs to answer server requests: the capabilities to declare and the handlers. */
export interface ServerRequestSupport {
  capabilities: ClientCapabilities;
  /** The most input requests one `input_required` round may carry; a round with more fails the call. */
  maxRequestsPerRound: number;
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
  deps: HandlerDeps,
): ServerRequestSupport | undefined {
  const capabilities = clientCapabilitiesFor(options);
  if (Object.keys(capabilities).length === 0) return undefined;
  return {
    capabilities,
    maxRequestsPerRound: options.maxRequestsPerRound ?? MAX_INPUT_REQUESTS_PER_ROUND,
    install: (client, server) => installServerRequestHandlers(client, server, options, deps),
    answer: (server, method, params, signal) =>
      answerServerRequest(gatedAnswerers(undefined, server, options, deps), server, method, params, signal),
  };
}

/** `answer` for a manager with no handler at all: every request is refused as undeclared. */
export const answerNoRequest: ServerRequestSupport['answer'] = (server, method, params, signal) =>
  answerServerRequest({}, server, method, params, signal);

/** The app's handlers, each traced and behind the gate: the one place the three kinds are decided. */
interface GatedAnswerers {
  elicitation?: (
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    signal: AbortSignal,
  ) => Promise<ElicitResult>;
  sampling?: (
    params: CreateMessageRequestParams,
    signal: AbortSignal,
  ) => Promise<CreateMessageResult | CreateMessageResultWithTools>;
  roots?: (signal: AbortSignal) => Promise<{ roots: Root[] }>;
}

/**
 * Dispatches one request that came as data (a task's `inputRequests`, not over the connection): its params are
 * checked first.
 */
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
    if (answerers.elicitation === undefined) throw unanswered('but no elicitation handler is set');
    const request = { ...(params as object) } as { mode?: string };
    if (request.mode === 'url') {
      // The 2026-07-28 in-band shape has no `elicitationId` (the 2025 one requires it): check the rest.
      const shape = { elicitationId: 'in-band', ...request };
      if (!isSpecType.ElicitRequestURLParams(shape)) throw unanswered('with malformed params', -32602);
      return answerers.elicitation(request as ElicitRequestURLParams, signal);
    }
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

/**
 * What a sampling request's policy conditions see as `args`: the token budget, the model hints, the names of the
 * tools offered, `includeContext`, and `toolChoice` when set. The same for a request answered here or relayed.
 */
export function samplingConditionArgs(params: CreateMessageRequestParams): Record<string, unknown> {
  const args: Record<string, unknown> = {
    maxTokens: params.maxTokens,
    models: params.modelPreferences?.hints?.flatMap((h) => (h.name === undefined ? [] : [h.name])) ?? [],
    tools: (params.tools ?? []).map((t) => t.name),
    includeContext: params.includeContext ?? 'none',
  };
  if (params.toolChoice?.mode !== undefined) args.toolChoice = params.toolChoice.mode;
  return args;
}

/** The JSON-RPC error code a denied sampling or roots request gets on 2025-era servers ("user rejected"). */
export const REQUEST_REJECTED_CODE = -1;

/** The client capabilities to declare for `options`: only what the app can answer. */
export function clientCapabilitiesFor(options: ServerRequestOptions): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (options.onElicitation !== undefined || options.onUrlElicitation !== undefined) {
    capabilities.elicitation = {
      ...(options.onElicitation !== undefined && { form: {} }),
      ...(options.onUrlElicitation !== undefined && { url: {} }),
    };
  }
  if (options.onSampling !== undefined) {
    capabilities.sampling = options.samplingWithTools === true ? { tools: {} } : {};
  }
  if (options.roots !== undefined) capabilities.roots = {};
  return capabilities;
}

/** What the handlers need from the manager: the gate every answer passes, the tracer and the calls in flight. */
export type HandlerDeps = ServerRequestDeps;

/** Registers the handlers for `options` on `client`, each traced and behind `authorize`. */
export function installServerRequestHandlers(
  client: Client,
  server: string,
  options: ServerRequestOptions,
  deps: HandlerDeps,
): void {
  const { elicitation, sampling, roots } = gatedAnswerers(client, server, options, deps);
  if (elicitation !== undefined) {
    client.setRequestHandler('elicitation/create', (request, ctx) =>
      elicitation(request.params, ctx.mcpReq.signal),
    );
  }
  if (sampling !== undefined) {
    client.setRequestHandler('sampling/createMessage', (request, ctx) =>
      sampling(request.params, ctx.mcpReq.signal),
    );
  }
  if (roots !== undefined) {
    client.setRequestHandler('roots/list', (_request, ctx) => roots(ctx.mcpReq.signal));
  }
}

/**
 * The app's handlers behind the gate, each answered through the invocation pipeline. `client` is the connection the
 * request came on; undefined for a task's input request (answered as data), which is refused the 2026-07-28 way.
 */
function gatedAnswerers(
  client: Client | undefined,
  server: string,
  options: ServerRequestOptions,
  deps: HandlerDeps,
): GatedAnswerers {
  const { onElicitation, onUrlElicitation, onSampling, roots } = options;
  const refuse = (kind: ServerRequestKind, reason: string, denial?: PermissionDeniedError) =>
    refusal(client, server, kind, reason, denial);
  // A policy denial gets the kind's refusal; an audit sink that blocked is thrown as it is.
  const byPolicy = (kind: ServerRequestKind, denial: Refusal) => {
    if (!(denial instanceof PermissionDeniedError)) throw denial;
    throw refuse(kind, denial.reason, denial);
  };
  const declineDenied = (span: Span, denial: Refusal): ElicitResult => {
    if (!(denial instanceof PermissionDeniedError)) throw denial;
    return declined(span);
  };
  const answerers: GatedAnswerers = {};

  if (onElicitation !== undefined || onUrlElicitation !== undefined) {
    const method = 'elicitation/create';
    answerers.elicitation = (params, signal) => {
      const context = { server, signal };
      if (params.mode === 'url') {
        // The SDK refuses a mode that was not declared before this runs; this guards the types.
        if (onUrlElicitation === undefined) {
          return answerThroughPipeline(deps, { method, server, kind: 'elicitation', answer: decline });
        }
        const check = checkElicitationUrl(params);
        if (!check.ok) {
          const unsafe = refuse('elicitation', `it asked the user to open an unsafe URL: ${check.reason}.`);
          return answerThroughPipeline(deps, {
            method,
            server,
            kind: 'elicitation',
            args: {},
            check: () => unsafe,
            answer: decline,
          });
        }
        const { url, host, punycode, message } = check.request;
        return answerThroughPipeline(deps, {
          method,
          server,
          kind: 'elicitation',
          args: { mode: 'url', message, url, host, punycode },
          refused: declineDenied,
          answer: async (span) => {
            const answer = await onUrlElicitation(check.request, context);
            span.setAttribute('interlock.server_request.outcome', answer.action);
            // URL mode carries no content: whatever happens at the URL stays between the user and the server.
            return { action: answer.action };
          },
        });
      }
      if (onElicitation === undefined) {
        return answerThroughPipeline(deps, { method, server, kind: 'elicitation', answer: decline });
      }
      return answerThroughPipeline(deps, {
        method,
        server,
        kind: 'elicitation',
        args: { mode: 'form', message: params.message },
        refused: declineDenied,
        answer: async (span) => {
          const answer = withSchemaDefaults(await onElicitation(params, context), params.requestedSchema);
          span.setAttribute('interlock.server_request.outcome', answer.action);
          return answer;
        },
      });
    };
  }

  if (onSampling !== undefined) {
    answerers.sampling = (params, signal) => {
      const offersTools = (params.tools ?? []).length > 0 && options.samplingWithTools !== true;
      return answerThroughPipeline(deps, {
        method: 'sampling/createMessage',
        server,
        kind: 'sampling',
        args: samplingConditionArgs(params),
        check: () =>
          offersTools
            ? refuse(
                'sampling',
                'it offered tools to the sampled model, but this client does not take them (set samplingWithTools to declare sampling with tools).',
              )
            : undefined,
        refused: (_span, denial) => byPolicy('sampling', denial),
        answer: async (span) => {
          const answer = await onSampling(params, { server, signal });
          span.setAttribute('interlock.server_request.outcome', 'answered');
          return answer;
        },
      });
    };
  }

  if (roots !== undefined) {
    answerers.roots = (signal) =>
      answerThroughPipeline(deps, {
        method: 'roots/list',
        server,
        kind: 'roots',
        answer: async (span, decide) => {
          const list = typeof roots === 'function' ? await roots({ server, signal }) : roots;
          const { allowed, denial } = await filterRoots(decide, server, list);
          if (denial !== undefined) throw refuse('roots', denial.reason, denial);
          span.setAttribute('interlock.roots.sent', allowed.length);
          return { roots: allowed };
        },
      });
  }
  return answerers;
}

/**
 * Each root is decided on its own, with `uri`, `path` (the decoded file path) and `name` as `args`, and only
 * the allowed ones are sent. A root that is not a `file://` URI is never sent. When roots exist but none is
 * allowed, or there are none and the request itself is denied, the request is refused.
 */
async function filterRoots(
  decide: (args: Record<string, unknown>) => Promise<Decision>,
  server: string,
  list: readonly Root[],
): Promise<{ allowed: Root[]; denial: PermissionDeniedError | undefined }> {
  if (list.length === 0) {
    const denial = await denialOf(decide({}));
    return { allowed: [], denial };
  }
  const allowed: Root[] = [];
  let denial: PermissionDeniedError | undefined;
  for (const root of list) {
    const path = filePathOf(root.uri);
    if (path === undefined) continue;
    const args: Record<string, unknown> = { uri: root.uri, path };
    if (root.name !== undefined) args.name = root.name;
    const refused = await denialOf(decide(args));
    if (refused === undefined) allowed.push({ ...root });
    else denial ??= refused;
  }
  if (allowed.length === 0) {
    return {
      allowed,
      denial:
        denial ??
        new PermissionDeniedError({
          resource: resourceFor.serverRequest(server, 'roots'),
          action: 'request',
          reason: 'None of the roots is a file:// URI.',
        }),
    };
  }
  return { allowed, denial: undefined };
}

/** Undefined when `decided` allows, the denial when the policy denies; other failures (a blocking audit sink) throw. */
function denialOf(decided: Promise<Decision>): Promise<PermissionDeniedError | undefined> {
  return decided.then(
    () => undefined,
    (err: unknown) => {
      if (err instanceof PermissionDeniedError) return err;
      throw err;
    },
  );
}

/** The decoded path of a `file://` URI on the local host, or undefined (such a root is never sent). */
function filePathOf(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    if (url.protocol !== 'file:' || (url.host !== '' && url.host !== 'localhost')) return undefined;
    const path = decodeURIComponent(url.pathname);
    return path.includes('\0') ? undefined : path;
  } catch {
    return undefined;
  }
}

function declined(span: Span): ElicitResult {
  span.setAttribute('interlock.server_request.outcome', 'decline');
  return { action: 'decline' };
}

/** The answer to an elicitation in a mode no handler takes. */
function decline(span: Span): Promise<ElicitResult> {
  return Promise.resolve(declined(span));
}

/**
 * The refusal for this era: on a 2026-07-28 server the tool call fails with `ServerRequestRefusedError`; a
 * 2025-era server gets a JSON-RPC error whose message says the client refused (`-1` for a policy denial,
 * invalid params for a request that broke a fixed rule).
 */
function refusal(
  client: Client | undefined,
  server: string,
  kind: ServerRequestKind,
  reason: string,
  denial: PermissionDeniedError | undefined,
): Error {
  const byPolicy = denial !== undefined;
  const refused = new ServerRequestRefusedError(
    { server, kind, resource: resourceFor.serverRequest(server, kind), reason, byPolicy, rule: denial?.rule },
    { cause: denial },
  );
  if (client === undefined || client.getProtocolEra() === 'modern') return refused;
  return new ProtocolError(
    byPolicy ? REQUEST_REJECTED_CODE : ProtocolErrorCode.InvalidParams,
    byPolicy
      ? `The client (Interlock) refused this ${kind} request by its policy: ${reason}`
      : `The client (Interlock) refused this ${kind} request: ${reason}`,
  );
}
