/**
 * Resource reads and prompt gets through the invocation pipeline (issue 15): the same trace, authorize, limit and
 * send stages as a tool call, so they get a span, the gate's decision on it, the server's call slot, call
 * statistics and events (`request_completed`, `request_failed`), and end in their own terminal. They are never re-sent: nothing marks them safe to repeat.
 * Skill reads and listings (skills.ts) take the same path (issue 42).
 */
import type { Client, GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { type InterlockError, NotConnectedError } from '../errors.js';
import { context as otelContext, SpanKind, type SpanOptions, type Tracer } from '../otel.js';
import type { SecretRedactor } from '../redact.js';
import type { FlowState } from '../security/flow.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import type { ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import {
  type CallFlow,
  callFlow,
  type FlowLabelResolver,
  promptText,
  recordFlow,
  recordServerError,
  resourceText,
} from './flow-context.js';
import {
  type Authorized,
  authorizeStage,
  direct,
  invocationPipeline,
  type Recorder,
  type Traced,
  traceStage,
} from './pipeline.js';
import {
  type ConnectedInvocation,
  type Held,
  holdStage,
  readyToSend,
  type Sendable,
} from './remote-stages.js';
import { mapRequestError } from './request-errors.js';

/** What a resource read or a prompt get needs from the manager. */
export interface RequestPathDeps {
  tracer: Tracer;
  redactor: SecretRedactor;
  events: TypedEvents<MCPManagerEvents>;
  /** Resolves each resource's and prompt's labels; none: labels unknown, nothing recorded. */
  flowLabels?: FlowLabelResolver | undefined;
  connection(server: string): ServerConnection | undefined;
  nextCallId(): number;
}

/** The options such a request takes. */
export interface RequestPathOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** Who a request is made for, and the flow state it is decided in and its result recorded into (issue 42). */
export interface RequestFor {
  agent: string | undefined;
  principal: string | undefined;
  flow: FlowState;
}

/** The methods requests through this path send (a skill's file is read with `resources/read`). */
export type RequestMethod = 'resources/read' | 'prompts/get' | 'skills/list';

/** A request to a server through the pipeline: what a kind of request sets before it enters. */
export interface RequestInvocation<T> extends ConnectedInvocation {
  readonly kind: 'resource' | 'prompt' | 'skill';
  readonly deps: RequestPathDeps;
  /** `resource '{uri}'` or `prompt '{name}'`, for error messages. */
  readonly what: string;
  readonly method: RequestMethod;
  /** The URI or the prompt name. */
  readonly target: string;
  readonly span0: { readonly name: string; readonly options: SpanOptions };
  readonly requestTimeoutMs: number | undefined;
  /** The flow the result is recorded into, with the target's content labels. */
  readonly flow: CallFlow;
  readonly send: (client: Client, request: { timeout: number; signal?: AbortSignal }) => Promise<T>;
  /** What the model reads of the result, for the flow record. */
  textOf(result: T): string;
}

/** Reads `uri` from `server`, gated on `mcp-resource:{server}:{uri}` / `read`. */
export function readResourceThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  context: RequestFor,
  server: string,
  uri: string,
  options: RequestPathOptions,
): Promise<ReadResourceResult> {
  const resource = resourceFor.resource(server, uri);
  const flow = callFlow(context.flow, deps.flowLabels, resource);
  return resourcePipeline({
    ...base(deps, gate, server, options),
    kind: 'resource',
    request: { resource, action: 'read', context: { ...context, labels: flow.labels }, server },
    flow,
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
    textOf: resourceText,
  });
}

/** Gets prompt `name` from `server`, gated on `mcp-prompt:{server}:{name}` / `get`. */
export function getPromptThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  context: RequestFor,
  server: string,
  name: string,
  args: Record<string, string>,
  options: RequestPathOptions,
): Promise<GetPromptResult> {
  const resource = resourceFor.prompt(server, name);
  const flow = callFlow(context.flow, deps.flowLabels, resource);
  return promptPipeline({
    ...base(deps, gate, server, options),
    kind: 'prompt',
    request: { resource, action: 'get', context: { ...context, args, labels: flow.labels }, server },
    flow,
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
    textOf: promptText,
  });
}

/** What every request's invocation starts with. */
export function base(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  server: string,
  options: RequestPathOptions,
) {
  return {
    deps,
    gate,
    signal: options.signal,
    span: undefined,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
    sent: false,
    server,
    connection: undefined,
    timeoutMs: 0,
    perCallSignal: undefined,
    requestTimeoutMs: options.timeoutMs,
    client: undefined,
  };
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

type HeldRequest<T> = RequestInvocation<T> & Traced & Authorized & Held;

/**
 * How resource reads and prompt gets are counted and reported (the pipeline's refusal and send stages): in the
 * server's statistics once sent, as `request_completed` or `request_failed`, with what the SDK throws mapped to coded
 * errors. They are never re-sent.
 */
function requestRecorder<T>(
  decided: boolean,
): Recorder<RequestInvocation<T> & Traced, HeldRequest<T>, HeldRequest<T> & Sendable, T> {
  return {
    stats: (ctx) => ctx.connection?.stats,
    ready: decided ? readyToSend : readyUndecided,
    started: (ctx) => ctx.deps.nextCallId(),
    completed(ctx, callId, durationMs) {
      const { server, method, target } = ctx;
      ctx.deps.events.emit('request_completed', () => ({ callId, server, method, target, durationMs }));
    },
    map: (ctx, err) =>
      mapRequestError(err, {
        server: ctx.server,
        what: ctx.what,
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
        redactor: ctx.deps.redactor,
      }),
    failed(ctx, callId, durationMs, error) {
      const { server, method, target } = ctx;
      recordServerError(ctx.flow, ctx.request.resource, error);
      const coded = error as InterlockError;
      ctx.deps.events.emit('request_failed', () => ({
        callId,
        server,
        method,
        target,
        durationMs,
        code: coded.code,
        error: coded,
      }));
    },
  };
}

/**
 * A request's path through the one invocation pipeline: no validation, never re-sent. `authorize: false` for a request
 * the gate does not decide (a skill listing: each skill's files are decided when read).
 */
export function requestPipeline<T>(authorize = true) {
  return invocationPipeline({
    trace: traceStage<RequestInvocation<T>, T>({
      tracer: (ctx) => ctx.deps.tracer,
      start: (ctx) => ctx.span0,
      parent: () => otelContext.active(),
    }),
    record: requestRecorder<T>(authorize),
    authorize: authorize ? authorizeStage : undecided,
    hold: holdStage<RequestInvocation<T> & Traced & Authorized, T>(requireConnection),
    terminal: (ctx) =>
      ctx
        .send(ctx.client, {
          timeout: ctx.timeoutMs,
          ...(ctx.perCallSignal === undefined ? {} : { signal: ctx.perCallSignal }),
        })
        .then((result) => {
          // Issue 42: what the model is given of a resource or a prompt enters the session with its labels.
          recordFlow(ctx.flow, ctx.request.resource, result, ctx.textOf);
          return result;
        }),
  });
}

/** The authorize step of a request the gate does not decide (a listing): nothing after it reads a decision. */
const undecided = direct as typeof authorizeStage;

/** {@link readyToSend} for a request the gate did not decide: a policy change while it waited has nothing to re-decide. */
function readyUndecided<T>(ctx: HeldRequest<T>) {
  ctx.revision = ctx.gate.capabilities.revision;
  return readyToSend(ctx);
}

/** Resource reads and prompt gets, each composed once. */
const resourcePipeline = requestPipeline<ReadResourceResult>();
const promptPipeline = requestPipeline<GetPromptResult>();
