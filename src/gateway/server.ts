/**
 * One downstream MCP server instance for one principal (issue 17), built on the SDK's low-level `Server` so
 * that upstream JSON Schemas pass through untouched. It lists only the tools the principal's capability set
 * could allow, and every call goes through the manager's call path with that set: checked, audited, traced,
 * limited and normalized exactly as an in-process call, and never sent upstream when denied. The caller's
 * credentials stay here: upstream servers see the gateway's own connection and credentials, or, for a server whose
 * `auth` is `token_exchange`, a token minted for that server and this caller (issue 41, upstream-identity.ts).
 */
import { createHash } from 'node:crypto';
import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/server';
import { InterlockError } from '../errors.js';
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import { tupleKey } from '../json.js';
import type { InputRoundControl } from '../protocol/input-rounds.js';
import type { FlowState } from '../security/flow.js';
import { resourceFor } from '../security/pattern.js';
import { canonicalJson } from '../security/pinning.js';
import type { ToolCallOptions, ToolWrapper } from '../tools/tool-wrapper.js';
import type { FlowScope } from './flow-states.js';
import type { Principal } from './principals.js';
import type { DownstreamNeed, ServerRequestRelay } from './relay.js';
import {
  ambiguousResource,
  promptRoutes,
  recordHiddenPrompt,
  recordHiddenResource,
  recordHiddenTool,
  resourceRoute,
  toolRoutes,
  unknownName,
  upstream,
} from './routing.js';

/** What the gateway records about each call (metrics, logs). */
export interface GatewayCallObserver {
  onCall(record: {
    principal: Principal;
    server: string;
    tool: string;
    outcome: 'ok' | 'tool_error' | 'denied' | 'error';
    durationMs: number;
    code?: string | undefined;
  }): void;
}

/** Options of {@link createGatewayServer}. */
export interface GatewayServerOptions {
  manager: MCPClientManager;
  view: CapabilityView;
  principal: Principal;
  naming: 'exposed' | 'tool';
  serverInfo: { name: string; version: string };
  observer?: GatewayCallObserver | undefined;
  /** Relays upstream servers' elicitation and sampling requests to this client; none: they are refused. */
  relay?: ServerRequestRelay | undefined;
  /** Hears of a tool listed under its exposed name because its own name has that shape (`naming: tool`). */
  onRenamed?: ((tool: ToolWrapper) => void) | undefined;
  /** Counts calls in flight, for a graceful drain. */
  track?: (<T>(work: Promise<T>) => Promise<T>) | undefined;
  /**
   * The caller's flow state (issue 42): every call, read and prompt of this instance is decided in it (and what
   * comes back is recorded into it), so a flow rule sees what the caller's earlier requests brought in.
   */
  flow: FlowScope;
}

/** Error codes that mean the gate said no: the downstream client gets a tool error it can show the model. */
const DENIAL_CODES = new Set(['CAPABILITY_DENIED', 'TOOL_DEFINITION_CHANGED']);

/** A fresh `Server` answering tools/list and tools/call for one principal. */
export function createGatewayServer(options: GatewayServerOptions): Server {
  const { manager, view, principal, naming } = options;
  const server = new Server(options.serverInfo, {
    capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
    instructions:
      'Tools of several MCP servers behind the Interlock gate. Every call is checked against a capability policy; a denied call returns an error explaining why.',
  });
  const context = { principal: principal.subject };

  server.setRequestHandler('tools/list', () => {
    const routes = toolRoutes(view.visibleTools(context), naming, options.onRenamed);
    return { tools: [...routes].map(([name, wrapper]) => toTool(wrapper, name)) };
  });

  const callTool = toolCaller(options);
  server.setRequestHandler('tools/call', (request, ctx) => callTool(request.params, requestOf(server, ctx)));
  // A URI several servers offer this caller is left out (issue 38): a read of it is refused.
  server.setRequestHandler('resources/list', () => ({
    resources: upstream(manager).flatMap(({ name, connection }) =>
      connection.resources.filter((r) => {
        const route = resourceRoute(manager, view, r.uri, context);
        return route.kind === 'one' && route.server === name;
      }),
    ),
  }));

  // A template is listed when a rule of the caller's could cover it (its pattern matches the template's text,
  // e.g. `mcp-resource:notes:notes://*` covers `notes://{id}`); every read is still decided on its own URI.
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: upstream(manager).flatMap(({ name, connection }) =>
      connection.resourceTemplates.filter((t) =>
        view.capabilities.couldAllow(resourceFor.resource(name, t.uriTemplate), 'read', context),
      ),
    ),
  }));

  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri } = request.params;
    // The one server this caller may read the URI from: decided on and read from that same server.
    const route = resourceRoute(manager, view, uri, context);
    if (route.kind === 'ambiguous') throw ambiguousResource(uri, route.servers);
    if (route.kind === 'none') {
      await recordHiddenResource(view, route.hidden, uri, principal.subject);
      throw unknownName('resource', uri);
    }
    return guarded(() =>
      options.flow((flow) =>
        view.readResource(route.server, uri, {
          signal: ctx.mcpReq.signal,
          principal: principal.subject,
          flow,
        }),
      ),
    );
  });

  server.setRequestHandler('prompts/list', () => ({
    prompts: upstream(manager).flatMap(({ name, connection }) =>
      connection.prompts
        .filter((p) => view.capabilities.couldAllow(resourceFor.prompt(name, p.name), 'get', context))
        .map((p) => ({ ...p, name: `mcp__${name}__${p.name}` })),
    ),
  }));

  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const target = promptRoutes(manager, view, context).get(request.params.name);
    if (target === undefined) {
      await recordHiddenPrompt(manager, view, request.params.name, principal.subject);
      throw unknownName('prompt', request.params.name);
    }
    return guarded(() =>
      options.flow((flow) =>
        view.getPrompt(target.server, target.prompt, request.params.arguments ?? {}, {
          signal: ctx.mcpReq.signal,
          principal: principal.subject,
          flow,
        }),
      ),
    );
  });
  return server;
}

/**
 * What a downstream `tools/call` needs of the request it serves: the SDK's context when an SDK server serves it,
 * or what the endpoint has when it serves a plain 2025-era call itself (http-bridge.ts).
 */
export interface ToolCallRequest {
  signal: AbortSignal;
  /** The caller's progress token; none: no progress is sent. */
  progressToken?: string | number | undefined;
  notify?: ((notification: ServerNotification) => Promise<void>) | undefined;
  /** The state a later round echoes, and its answers (2026-07-28). */
  state?: unknown;
  responses?: Record<string, unknown> | undefined;
  /** Whether the client declared what a relayed request needs. */
  supports(need: DownstreamNeed): boolean;
}

/** The gateway's `tools/call` for one principal, whoever serves the request. */
export type GatewayToolCall = (
  params: CallToolRequest['params'],
  request: ToolCallRequest,
) => Promise<CallToolResult>;

/**
 * Calls a tool for one principal: resolved through the caller's own list, decided, audited, limited and counted
 * exactly as the SDK server's `tools/call` handler does (it is that handler).
 */
export function toolCaller(options: Omit<GatewayServerOptions, 'serverInfo'>): GatewayToolCall {
  const { manager, view, principal, naming } = options;
  const context = { principal: principal.subject };
  return async (params, request) => {
    // Issue 38: resolved through the map the caller's list was built from, never the manager's names.
    const visible = view.visibleTools(context);
    const wrapper = toolRoutes(visible, naming).get(params.name);
    if (wrapper === undefined) {
      // A tool hidden from the caller answers as one that does not exist; the operator still sees the denial.
      const hidden = await recordHiddenTool(manager, view, visible, naming, params.name, principal.subject);
      for (const { tool, code } of hidden) {
        const outcome = DENIAL_CODES.has(code) ? 'denied' : 'error';
        options.observer?.onCall({
          principal,
          server: tool.server,
          tool: tool.tool,
          outcome,
          durationMs: 0,
          code,
        });
      }
      throw unknownName('tool', params.name);
    }
    const name = wrapper.name;
    const started = performance.now();
    const args = params.arguments;
    const relay = options.relay;
    const work = inFlow(options.flow, (flow) =>
      relay === undefined
        ? callThrough(view, name, args, request, principal, request.signal, flow)
        : relayedCall(relay, view, name, wrapper.server, args, request, principal, flow),
    );
    const result = await (options.track === undefined ? work : options.track(work));
    // A round that stops for the client's input is not a call yet: the round that ends it is counted.
    if (result.outcome === 'input') return result.result;
    options.observer?.onCall({
      principal,
      server: wrapper.server,
      tool: wrapper.tool,
      outcome: result.outcome,
      durationMs: performance.now() - started,
      code: result.code,
    });
    return result.result;
  };
}

/** The call's view of an SDK request context. */
function requestOf(server: Server, ctx: ServerContext): ToolCallRequest {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  return {
    signal: ctx.mcpReq.signal,
    progressToken,
    notify: (notification) => ctx.mcpReq.notify(notification),
    state: ctx.mcpReq.requestState(),
    responses: ctx.mcpReq.inputResponses,
    supports: (need) => declares(server, ctx, need),
  };
}

/** A local refusal or failure becomes a JSON-RPC error with our code and message, nothing more. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof InterlockError) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${err.code}: ${err.message}`);
    }
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'The gateway failed to serve the request.');
  }
}

type CallOutcome = {
  result: CallToolResult;
  outcome: 'ok' | 'tool_error' | 'denied' | 'error';
  code?: string;
};

type RoundOutcome = CallOutcome | { result: CallToolResult; outcome: 'input' };

/** Runs a call in the caller's flow state; a state the gateway cannot hold now (OVERLOADED) is the call's failure. */
function inFlow(scope: FlowScope, work: (flow: FlowState) => Promise<RoundOutcome>): Promise<RoundOutcome> {
  try {
    return scope(work);
  } catch (err) {
    return Promise.resolve(failure(err));
  }
}

/**
 * One round of a call whose upstream server may ask for input: the first round starts the call, a later one
 * brings the client's answers to what the call asked; either ends with the result or with more questions.
 */
async function relayedCall(
  relay: ServerRequestRelay,
  view: CapabilityView,
  name: string,
  upstream: string,
  args: Record<string, unknown> | undefined,
  request: ToolCallRequest,
  principal: Principal,
  flow: FlowState,
): Promise<RoundOutcome> {
  const step = await relay.round(
    { principal, view, server: upstream, supports: request.supports },
    {
      state: request.state,
      responses: request.responses,
      signal: request.signal,
      // A later round must name the same caller, tool and arguments as the call it answers (issue 41).
      binding: tupleKey(
        principal.via,
        principal.subject,
        name,
        createHash('sha256')
          .update(canonicalJson(args ?? {}))
          .digest('base64url'),
      ),
    },
    (signal, rounds) => callThrough(view, name, args, request, principal, signal, flow, rounds),
  );
  if (step.kind === 'done') return step.value;
  if (step.kind === 'failed') return failure(step.error);
  const asking = inputRequired({ inputRequests: step.inputRequests, requestState: step.requestState });
  return { result: asking as unknown as CallToolResult, outcome: 'input' };
}

/** Whether the downstream client declared what a relayed request needs (per request on 2026-07-28). */
function declares(server: Server, ctx: ServerContext, need: DownstreamNeed): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities()) as
    | ClientCapabilities
    | undefined;
  switch (need) {
    case 'elicitation.form':
      // An empty `elicitation: {}` means form mode (the spec's backwards-compatible reading).
      return (
        caps?.elicitation !== undefined &&
        (caps.elicitation.form !== undefined || caps.elicitation.url === undefined)
      );
    case 'elicitation.url':
      return caps?.elicitation?.url !== undefined;
    case 'sampling':
      return caps?.sampling !== undefined;
    case 'sampling.tools':
      return caps?.sampling?.tools !== undefined;
  }
}

async function callThrough(
  view: CapabilityView,
  name: string,
  args: Record<string, unknown> | undefined,
  request: ToolCallRequest,
  principal: Principal,
  signal: AbortSignal,
  flow: FlowState,
  rounds?: InputRoundControl,
): Promise<CallOutcome> {
  const { progressToken, notify } = request;
  try {
    // `flow` rides as a variable, not a literal: ToolCallOptions (the tools area) cannot name a FlowState.
    const options: ToolCallOptions & { flow: FlowState; inputRounds?: InputRoundControl | undefined } = {
      signal,
      principal: principal.subject,
      flow,
      inputRounds: rounds,
      ...(progressToken === undefined || notify === undefined
        ? {}
        : {
            onProgress: (p) => {
              void notify({ method: 'notifications/progress', params: { progressToken, ...p } }).catch(
                () => {},
              );
            },
          }),
    };
    const result = await view.callTool(name, args ?? {}, options);
    return {
      result: {
        content: result.content,
        ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
        ...(result.isError ? { isError: true } : {}),
      },
      outcome: result.isError ? 'tool_error' : 'ok',
    };
  } catch (err) {
    return failure(err);
  }
}

/**
 * Local failures (denied, invalid arguments, timeouts, the upstream server down) are tool errors with our
 * message, so the downstream model reads why, as it would in process. Nothing else of the error leaves.
 */
function failure(err: unknown): CallOutcome {
  const code = err instanceof InterlockError ? err.code : 'INTERNAL';
  const message = err instanceof InterlockError ? err.message : 'The gateway failed to run the call.';
  return {
    result: { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true },
    outcome: DENIAL_CODES.has(code) ? 'denied' : 'error',
    code,
  };
}

function toTool(wrapper: ToolWrapper, name: string): Tool {
  const definition = wrapper.definition;
  return {
    name,
    ...(definition.title === undefined ? {} : { title: definition.title }),
    description: definition.description,
    inputSchema: definition.inputSchema as Tool['inputSchema'],
    ...(definition.outputSchema === undefined
      ? {}
      : { outputSchema: definition.outputSchema as Tool['outputSchema'] }),
    ...(definition.annotations === undefined ? {} : { annotations: definition.annotations }),
  };
}
