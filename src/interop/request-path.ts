/**
 * Resource reads and prompt gets through the invocation pipeline (issue 15): the same trace, authorize, limit and
 * send stages as a tool call, so they get a span, the gate's decision on it, the server's call slot, call
 * statistics and events (`request_completed`, `request_failed`), and end in their own terminal. They are never re-sent: nothing marks them safe to repeat.
 */
import type { Client, GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { NotConnectedError } from '../errors.js';
import { context as otelContext, SpanKind, type SpanOptions, type Tracer } from '../otel.js';
import type { SecretRedactor } from '../redact.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import type { ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import {
  authorizeStage,
  type ConnectedInvocation,
  compose,
  limitStage,
  recheckIfChanged,
  type Terminal,
  traceStage,
} from './pipeline.js';
import { mapRequestError } from './request-errors.js';

/** What a resource read or a prompt get needs from the manager. */
export interface RequestPathDeps {
  tracer: Tracer;
  redactor: SecretRedactor;
  events: TypedEvents<MCPManagerEvents>;
  connection(server: string): ServerConnection | undefined;
  nextCallId(): number;
}

/** The options such a request takes. */
export interface RequestPathOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

interface RequestInvocation<T> extends ConnectedInvocation {
  readonly kind: 'resource' | 'prompt';
  readonly deps: RequestPathDeps;
  /** `resource '{uri}'` or `prompt '{name}'`, for error messages. */
  readonly what: string;
  readonly method: 'resources/read' | 'prompts/get';
  /** The URI or the prompt name. */
  readonly target: string;
  readonly span0: { readonly name: string; readonly options: SpanOptions };
  readonly requestTimeoutMs: number | undefined;
  readonly send: (client: Client, request: { timeout: number; signal?: AbortSignal }) => Promise<T>;
  client: Client | undefined;
}

/** Reads `uri` from `server`, gated on `mcp-resource:{server}:{uri}` / `read`. */
export function readResourceThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  context: { agent: string | undefined; principal: string | undefined },
  server: string,
  uri: string,
  options: RequestPathOptions,
): Promise<ReadResourceResult> {
  return run(requestPipeline as Terminal<RequestInvocation<ReadResourceResult>, ReadResourceResult>, {
    ...base(deps, gate, server, options),
    kind: 'resource',
    request: { resource: resourceFor.resource(server, uri), action: 'read', context, server },
    what: `resource '${uri}'`,
    method: 'resources/read',
    target: uri,
    span0: {
      name: 'resources/read',
      options: {
        kind: SpanKind.CLIENT,
        attributes: {
          'mcp.method.name': 'resources/read',
          'mcp.resource.uri': uri,
          'interlock.server': server,
        },
      },
    },
    send: (client, request) => client.readResource({ uri }, request),
  });
}

/** Gets prompt `name` from `server`, gated on `mcp-prompt:{server}:{name}` / `get`. */
export function getPromptThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  context: { agent: string | undefined; principal: string | undefined },
  server: string,
  name: string,
  args: Record<string, string>,
  options: RequestPathOptions,
): Promise<GetPromptResult> {
  return run(requestPipeline as Terminal<RequestInvocation<GetPromptResult>, GetPromptResult>, {
    ...base(deps, gate, server, options),
    kind: 'prompt',
    request: {
      resource: resourceFor.prompt(server, name),
      action: 'get',
      context: { ...context, args },
      server,
    },
    what: `prompt '${name}'`,
    method: 'prompts/get',
    target: name,
    span0: {
      name: `prompts/get ${name}`,
      options: {
        kind: SpanKind.CLIENT,
        attributes: {
          'mcp.method.name': 'prompts/get',
          'gen_ai.prompt.name': name,
          'interlock.server': server,
        },
      },
    },
    send: (client, request) => client.getPrompt({ name, arguments: args }, request),
  });
}

function base(deps: RequestPathDeps, gate: CapabilityGate, server: string, options: RequestPathOptions) {
  return {
    deps,
    gate,
    signal: options.signal,
    span: undefined,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
    server,
    connection: undefined,
    timeoutMs: 0,
    perCallSignal: undefined,
    requestTimeoutMs: options.timeoutMs,
    client: undefined,
  };
}

function run<T>(pipeline: Terminal<RequestInvocation<T>, T>, ctx: RequestInvocation<T>): Promise<T> {
  return pipeline(ctx);
}

function requireConnection(ctx: RequestInvocation<unknown>): ServerConnection {
  const connection = ctx.deps.connection(ctx.server);
  if (connection === undefined) {
    throw new NotConnectedError(`No server named '${ctx.server}' is connected; connect it first.`, {
      server: ctx.server,
    });
  }
  ctx.timeoutMs = ctx.requestTimeoutMs ?? connection.config.timeoutMs;
  return connection;
}

/**
 * The send stage of a non-tool request: a live client (waiting out a reconnect within the timeout), a re-check
 * when the policy changed while it waited, call statistics, and what the SDK throws mapped to coded errors.
 */
async function sendStage(
  ctx: RequestInvocation<unknown>,
  next: Terminal<RequestInvocation<unknown>, unknown>,
): Promise<unknown> {
  const connection = ctx.connection as ServerConnection;
  ctx.client = connection.client ?? (await connection.acquireClient(ctx.timeoutMs, ctx.signal));
  const rechecking = recheckIfChanged(ctx);
  if (rechecking !== undefined) await rechecking;
  const { deps, server, method, target } = ctx;
  const callId = deps.nextCallId();
  const started = performance.now();
  connection.stats.started();
  try {
    const result = await next(ctx);
    const durationMs = performance.now() - started;
    connection.stats.record(durationMs, true);
    deps.events.emit('request_completed', () => ({ callId, server, method, target, durationMs }));
    return result;
  } catch (err) {
    const error = mapRequestError(err, {
      server,
      what: ctx.what,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      redactor: deps.redactor,
    });
    const durationMs = performance.now() - started;
    connection.stats.record(durationMs, false);
    deps.events.emit('request_failed', () => ({
      callId,
      server,
      method,
      target,
      durationMs,
      code: error.code,
      error,
    }));
    throw error;
  } finally {
    connection.stats.settled();
  }
}

/** Resource reads and prompt gets, composed once: trace, authorize, limit, send, then the request. */
const requestPipeline = compose<RequestInvocation<unknown>, unknown>(
  [
    traceStage({
      tracer: (ctx) => ctx.deps.tracer,
      start: (ctx) => ctx.span0,
      parent: () => otelContext.active(),
    }),
    authorizeStage,
    limitStage(requireConnection),
    sendStage,
  ],
  (ctx) =>
    ctx.send(ctx.client as Client, {
      timeout: ctx.timeoutMs,
      ...(ctx.perCallSignal === undefined ? {} : { signal: ctx.perCallSignal }),
    }),
);
