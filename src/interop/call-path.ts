/**
 * The path every MCP tool call takes after name resolution, as the stages of the invocation pipeline
 * (pipeline.ts): a `tools/call` span, argument validation (after explicit denies, before argument conditions), the
 * capability gate (nothing is sent when it denies), the server's call slot, a live client (waiting out a reconnect
 * within the timeout), one automatic re-send only when the call provably never reached the server or the config
 * marks the tool idempotent, and the terminal: the request itself with progress and cancellation, and the result
 * checked against the tool's `outputSchema`.
 */

import type { LoggingLevel, Tool } from '@modelcontextprotocol/client';
import { toolMatchesAny } from '../config/servers.js';
import {
  type InterlockError,
  isInterlockError,
  NotConnectedError,
  PermissionDeniedError,
  ToolDefinitionChangedError,
  ToolInputError,
  type ToolInputIssue,
  ToolOutputError,
} from '../errors.js';
import {
  context as otelContext,
  propagation,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
} from '../otel.js';
import { callToolAnswering, HandedOff } from '../protocol/input-rounds.js';
import { taskCallParams, taskHandleOf } from '../protocol/task-handles.js';
import type { SecretRedactor } from '../redact.js';
import type { FlowState } from '../security/flow.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import { type ArgumentLimits, argumentLimitIssue } from '../tools/limits.js';
import { type ToolCallResult, toToolCallResult } from '../tools/normalize.js';
import type { OutputValidator } from '../tools/validate.js';
import type { CatalogEntry, ToolCatalog } from './catalog.js';
import type { ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import {
  type CallFlow,
  callFlow,
  type FlowLabelResolver,
  type McpCallOptions,
  recordFlow,
  recordServerError,
  toolResultText,
} from './flow-context.js';
import {
  type Authorized,
  authorizeStage,
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
import { isConnectionFailure, isHeaderMismatch, neverReachedServer } from './sdk-errors.js';
import { logLevelMeta } from './server-logs.js';
import type { InFlightCalls } from './server-request-trace.js';
import { answerNoRequest, type ServerRequestSupport } from './server-requests.js';
import { followTask } from './tasks.js';

/** What the call path needs from the manager. */
export interface CallPathDeps {
  tracer: Tracer;
  gate: CapabilityGate;
  catalog: ToolCatalog;
  events: TypedEvents<MCPManagerEvents>;
  maxResultChars: number;
  agent: string | undefined;
  principal?: string | undefined;
  /** The flow state of calls that name none (the manager's, or a view's). */
  flow: FlowState;
  /** Resolves each tool's labels; none: labels unknown, nothing recorded. */
  flowLabels?: FlowLabelResolver | undefined;
  /** Caps on argument size and depth, checked before validation. */
  argumentLimits?: ArgumentLimits | undefined;
  /** Masks secrets out of errors built from what a server sent. */
  redactor: SecretRedactor;
  /** Answers the input requests of a task through the server-request gate; none set: every one is refused. */
  answerServerRequest?: ServerRequestSupport['answer'] | undefined;
  /** The log level every call asks for, unless the call names one. */
  logLevel?: LoggingLevel | undefined;
  /** The spans of the calls in flight per server, for the spans of the requests servers make meanwhile. */
  inFlight?: InFlightCalls | undefined;
  /** Lists a server's tools again into the catalog (pins checked as on any refresh); none: never done by a call. */
  relistTools?: ((server: string) => Promise<void>) | undefined;
  nextCallId(): number;
}

/** One tool call as it passes the pipeline. */
interface ToolInvocation extends ConnectedInvocation {
  readonly deps: CallPathDeps;
  /** The tool's catalog entry; replaced only when a HEADER_MISMATCH answer made the catalog learn it again. */
  entry: CatalogEntry;
  readonly input: Record<string, unknown>;
  readonly options: McpCallOptions;
  /** The flow the call is decided in and its result recorded into (issue 42). */
  readonly flow: CallFlow;
  /** The call returned a task handle and is following it: such a call is never re-sent as "never sent". */
  followingTask: boolean;
}

/** Runs one call of `entry` with `input`. */
export function runToolCall(
  deps: CallPathDeps,
  entry: CatalogEntry,
  connection: ServerConnection | undefined,
  input: Record<string, unknown>,
  options: McpCallOptions,
): Promise<ToolCallResult> {
  const { server, tool, annotations } = entry.wrapper;
  const resource = toolResourceOf(entry);
  const flow = callFlow(options.flow ?? deps.flow, deps.flowLabels, resource, annotations);
  const ctx: ToolInvocation = {
    kind: 'tool',
    request: {
      resource,
      action: 'execute',
      context: {
        args: input,
        agent: options.agent ?? deps.agent,
        principal: options.principal ?? deps.principal,
        annotations,
        continuation: options.inputRounds?.resume?.round,
        flow: flow.flow,
        labels: flow.labels,
      },
      server,
      tool,
      definitionHash: entry.hash,
    },
    gate: deps.gate,
    signal: options.signal,
    span: undefined,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
    sent: false,
    server,
    connection,
    timeoutMs: 0,
    perCallSignal: undefined,
    deps,
    entry,
    input,
    options,
    flow,
    client: undefined,
    followingTask: false,
  };
  return toolPipeline(ctx);
}

/** `mcp:{server}:{tool}`, built once per catalog entry. */
const resources = new WeakMap<CatalogEntry, string>();
function toolResourceOf(entry: CatalogEntry): string {
  let resource = resources.get(entry);
  if (resource === undefined) {
    resource = resourceFor.tool(entry.wrapper.server, entry.wrapper.tool);
    resources.set(entry, resource);
  }
  return resource;
}

/** The name and start options of a tool's `tools/call` span: the same for every call, so built once. */
const spanStarts = new WeakMap<CatalogEntry, { name: string; transport: string; options: SpanOptions }>();
function spanStart(entry: CatalogEntry, connection: ServerConnection | undefined) {
  const transport = connection?.transport === 'stdio' ? 'pipe' : 'tcp';
  const cached = spanStarts.get(entry);
  if (cached !== undefined && cached.transport === transport) return cached;
  const { name, server, tool } = entry.wrapper;
  const start = {
    name: `tools/call ${tool}`,
    transport,
    options: {
      kind: SpanKind.CLIENT,
      attributes: Object.freeze({
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool,
        'interlock.server': server,
        'interlock.tool': tool,
        'interlock.tool.exposed_name': name,
        'network.transport': transport,
      }),
    },
  };
  spanStarts.set(entry, start);
  return start;
}

/** The server's connection, or NOT_CONNECTED (after the gate decided: a denied call learns nothing more). */
function requireConnection(ctx: ToolInvocation): ServerConnection {
  const { connection, entry } = ctx;
  const { name, server } = entry.wrapper;
  if (connection === undefined || (entry.wrapper.offline && connection.state !== 'ready')) {
    throw new NotConnectedError(
      entry.wrapper.offline
        ? `Tool '${name}' was registered offline and server '${server}' has no live connection; connect the server to call it.`
        : `Server '${server}' is not connected.`,
      { server },
    );
  }
  ctx.timeoutMs = ctx.options.timeoutMs ?? connection.config.timeoutMs;
  return connection;
}

/** A tool call holding its server's slot, and one ready to send. */
type HeldCall = ToolInvocation & Traced & Authorized & Held;
type ReadyCall = HeldCall & Sendable;

/**
 * How tool calls are counted and reported (the pipeline's refusal and send stages): a refusal as `tool_call_denied`
 * (such a call never started, so it has no `tool_call_started`), each attempt as `tool_call_started` and how it
 * ended, in the server's statistics; errors mapped to coded ones; one re-send only when the call was lost with its
 * connection and provably never reached the server, or the tool is marked idempotent, or the server answered that
 * the tool's definition changed (see relearnDefinition).
 */
const toolRecorder: Recorder<ToolInvocation & Traced, HeldCall, ReadyCall, ToolCallResult> = {
  stats: (ctx) => ctx.connection?.stats,
  denied(ctx, err, durationMs) {
    const { deps } = ctx;
    const { name, server, tool } = ctx.entry.wrapper;
    deps.events.emit('tool_call_denied', () => ({
      callId: deps.nextCallId(),
      name,
      server,
      tool,
      durationMs,
      code: err.code,
      reason: err instanceof PermissionDeniedError ? err.reason : err.message,
      ruleId: err instanceof PermissionDeniedError ? err.rule?.id : err.decision?.ruleId,
      error: err,
    }));
  },
  ready: readyToSend,
  started(ctx, attempt) {
    const { deps } = ctx;
    const { name, server, tool } = ctx.entry.wrapper;
    const callId = deps.nextCallId();
    ctx.followingTask = false;
    deps.events.emit('tool_call_started', () => ({ callId, name, server, tool, attempt }));
    return callId;
  },
  ok: (result) => !result.isError,
  handedOffRound: (result) => handedOffRounds.get(result),
  handedOff(ctx, callId, durationMs, round) {
    const { name, server, tool } = ctx.entry.wrapper;
    ctx.deps.events.emit('tool_call_handed_off', () => ({ callId, name, server, tool, durationMs, round }));
  },
  completed(ctx, callId, durationMs, result) {
    const { name, server, tool } = ctx.entry.wrapper;
    ctx.deps.events.emit('tool_call_completed', () => ({
      callId,
      name,
      server,
      tool,
      durationMs,
      isError: result.isError,
      resultChars: result.text.length,
    }));
  },
  map: (ctx, err) =>
    mapRequestError(err, {
      server: ctx.entry.wrapper.server,
      what: `tool '${ctx.entry.wrapper.name}'`,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.options.signal,
      redactor: ctx.deps.redactor,
    }),
  failed(ctx, callId, durationMs, error) {
    const { name, server, tool } = ctx.entry.wrapper;
    recordServerError(ctx.flow, ctx.request.resource, error);
    const coded = error as InterlockError;
    ctx.deps.events.emit('tool_call_failed', () => ({
      callId,
      name,
      server,
      tool,
      durationMs,
      code: coded.code,
      error: coded,
    }));
  },
  resend: resendIfSafe,
};

/**
 * After a failed attempt (its connection marked lost when it was): a promise to send once more, or undefined to give
 * the caller the error. Only a first attempt is ever sent again.
 */
function resendIfSafe(ctx: ReadyCall, n: number, error: unknown, thrown: unknown): Promise<void> | undefined {
  const { connection, options } = ctx;
  const coded = error as InterlockError;
  const lost = isConnectionFailure(thrown, coded);
  if (lost) connection.markLost(coded);
  if (n !== 1) return undefined;
  if (lost && !options.signal?.aborted) {
    // Only a lost connection can re-send; the idempotent list is looked at then, not on every call.
    const idempotent = toolMatchesAny(connection.config.tools?.idempotent, ctx.entry.wrapper.tool);
    if ((idempotent || (!ctx.followingTask && neverReachedServer(thrown))) && connection.recoverable) {
      ctx.span.addEvent('interlock.call.resend', { reason: idempotent ? 'idempotent' : 'never_sent' });
      return RESEND_NOW;
    }
  }
  if (isHeaderMismatch(thrown)) return relearnDefinition(ctx, coded);
  return undefined;
}

const RESEND_NOW: Promise<void> = Promise.resolve();

/**
 * The server answered HEADER_MISMATCH (SEP-2243, 2026-07-28 over HTTP): the headers the call mirrored from the
 * catalog's definition of the tool are not the ones the server's definition declares, so the server's definition
 * changed since it was listed. The server rejects such a request before running the tool. The catalog lists the
 * tools again, under the server's `onToolChange` (a changed definition is blocked until approved by default,
 * warned about or accepted), and the call is sent once more only when the tool is still there, not blocked, has a
 * new definition, and its arguments fit that definition. Otherwise the caller gets `error` (or why not).
 */
function relearnDefinition(ctx: ToolInvocation, error: InterlockError): Promise<void> {
  const { deps, entry } = ctx;
  const { name, server } = entry.wrapper;
  if (deps.relistTools === undefined) return Promise.reject(error);
  // The catalog updates entries in place: the hash the call was made with is kept before it lists again.
  const sentWith = entry.hash;
  return deps.relistTools(server).then(
    () => {
      const fresh = deps.catalog.get(name);
      if (fresh === undefined || fresh.hash === sentWith) throw error;
      if (fresh.blocked !== undefined) {
        throw new ToolDefinitionChangedError(name, fresh.blocked.pinned, fresh.blocked.current, { server });
      }
      const invalid = checkInput(deps, fresh, ctx.input);
      if (invalid !== undefined) throw invalid;
      ctx.entry = fresh;
      ctx.span?.addEvent('interlock.call.resend', {
        reason: 'definition_changed',
        'interlock.tool.definition_hash': fresh.hash,
      });
    },
    () => {
      throw error;
    },
  );
}

/**
 * The terminal of a tool call: `tools/call` (a task followed to its end), the output checked, normalized. Chained
 * with `then` rather than async, for the reason given at the resend stage.
 */
function callTool(ctx: ReadyCall): Promise<ToolCallResult> {
  const { deps, entry, options, input, connection, client, span } = ctx;
  const { server, tool } = entry.wrapper;
  const outputValidator = deps.catalog.outputValidatorOf(entry);
  const maxTotal = options.maxTotalTimeoutMs ?? connection.config.maxTotalTimeoutMs;
  const onProgress = options.onProgress;
  const requestOptions = {
    timeout: ctx.timeoutMs,
    // The definition in the catalog, the one pinned and approved, is the one the call is made with: the client
    // mirrors SEP-2243 headers from its inputSchema, and without an outputSchema leaves the output check to us
    // (once, with bounded $refs, with our error). Given a definition, the client never lists the tools behind the
    // catalog's back to retry a HEADER_MISMATCH answer; the resend stage does that through the catalog (see
    // relearnDefinition). It also spares the client a lookup in its response cache on every call.
    toolDefinition: toolDefinitionOf(entry),
    onprogress: onProgress ?? noop,
    resetTimeoutOnProgress: true,
    // Unset options are undefined rather than absent, as the SDK reads them: one shape for every call, no spread.
    maxTotalTimeout: maxTotal,
    signal: ctx.perCallSignal,
  };
  const params = callParams(ctx, tool, input);
  // Requests the server makes meanwhile (elicitation, sampling, roots, a task's input) find their parent span here.
  const inFlight = deps.inFlight;
  inFlight?.enter(server, span);
  // However the call ends, it leaves the in-flight set; its result (a task's, once followed) is then checked.
  const done = (raw: unknown) => {
    inFlight?.leave(server, span);
    return finishCall(ctx, outputValidator, raw);
  };
  const fail = (err: unknown) => {
    inFlight?.leave(server, span);
    throw err;
  };
  let pending: Promise<unknown>;
  try {
    const sent = taskCallParams(client, connection, params);
    // Input rounds (2026-07-28 `input_required`) are answered inside this call by one driver (input-rounds.ts),
    // with the app's handlers or, without any, refused as a server request no handler answers.
    pending = callToolAnswering(client, sent, requestOptions, {
      server,
      answer: deps.answerServerRequest ?? answerNoRequest,
      signal: ctx.perCallSignal,
      control: ctx.options.inputRounds,
    });
  } catch (err) {
    pending = Promise.reject(err);
  }
  return pending.then((raw) => {
    // Issue 41: the round went back to the caller; the call's continuation brings the result.
    if (raw instanceof HandedOff) {
      inFlight?.leave(server, span);
      return handedOffResult(raw.round);
    }
    // Issue 13: a task handle is followed to its end here; the call's promise stays the one the caller holds.
    const task = taskHandleOf(raw);
    if (task === undefined) return done(raw);
    ctx.followingTask = true;
    return followTask(client, task, {
      server,
      tool: entry.wrapper.name,
      era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
      timeoutMs: ctx.timeoutMs,
      maxTotalTimeoutMs: maxTotal,
      signal: ctx.perCallSignal,
      onProgress,
      answer: deps.answerServerRequest ?? answerNoRequest,
      onStatus: (t) =>
        span.addEvent('interlock.task.status', {
          'interlock.task.id': t.taskId,
          'interlock.task.status': t.status,
        }),
      redactor: deps.redactor,
    }).then(done, fail);
  }, fail);
}

/**
 * The final result (a task's included: the handle itself is no result) checked and normalized, and what the model
 * reads of it (an `isError` result too) recorded into the call's flow with the tool's content labels (issue 42).
 */
function finishCall(
  ctx: ToolInvocation,
  outputValidator: OutputValidator | undefined,
  raw: unknown,
): ToolCallResult {
  const { name, server } = ctx.entry.wrapper;
  if (outputValidator !== undefined) checkOutput(name, server, outputValidator, raw);
  const result = toToolCallResult(raw, { maxResultChars: ctx.deps.maxResultChars });
  recordFlow(ctx.flow, ctx.request.resource, result, toolResultText);
  return result;
}

/**
 * What a call whose input round was handed back ends with (issue 41): no result, an empty one in its place, known by
 * its round here. The recorder reports it as handed off, the span says so, and nobody else sees it (the gateway
 * answers the caller with the round's questions).
 */
const handedOffRounds = new WeakMap<ToolCallResult, number>();
function handedOffResult(round: number): ToolCallResult {
  const result: ToolCallResult = { text: '', isError: false, content: [] };
  handedOffRounds.set(result, round);
  return result;
}

/** The definition handed to the SDK: the same for every call, so built once. */
const toolDefinitions = new WeakMap<CatalogEntry, { name: string; inputSchema: Tool['inputSchema'] }>();
function toolDefinitionOf(entry: CatalogEntry) {
  let definition = toolDefinitions.get(entry);
  const inputSchema = entry.wrapper.inputSchema as Tool['inputSchema'];
  // A refresh updates the entry in place: a definition built before it is built again from the new schema.
  if (definition === undefined || definition.inputSchema !== inputSchema) {
    definition = { name: entry.wrapper.tool, inputSchema };
    toolDefinitions.set(entry, definition);
  }
  return definition;
}

/** `tools/call` params: the trace context and the log level ride in `_meta` when there are any. */
function callParams(ctx: ToolInvocation, tool: string, input: Record<string, unknown>) {
  const meta: Record<string, string> = {};
  propagation.inject(ctx.spanContext ?? otelContext.active(), meta);
  const logLevel = ctx.options.logLevel ?? ctx.deps.logLevel;
  if (logLevel !== undefined) Object.assign(meta, logLevelMeta(logLevel));
  for (const _ in meta) return { name: tool, arguments: input, _meta: meta };
  return { name: tool, arguments: input };
}

/** Every MCP tool call, through the one invocation pipeline, composed once. */
const toolPipeline = invocationPipeline({
  trace: traceStage<ToolInvocation, ToolCallResult>({
    tracer: (ctx) => ctx.deps.tracer,
    start: (ctx) => spanStart(ctx.entry, ctx.connection),
    parent: (ctx) => ctx.options.traceContext ?? otelContext.active(),
    onResult(span, result) {
      const handed = handedOffRounds.get(result);
      if (handed !== undefined) {
        span.setAttribute('interlock.input.handed_off_round', handed);
        return;
      }
      span.setAttribute('interlock.result.chars', result.text.length);
      if (result.isError) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool returned an error result' });
      }
    },
  }),
  // Issue 18 item 3: the arguments meet the tool's schema before the policy's argument conditions see them, so
  // a misspelt argument is a schema error the caller can fix, not a denial that hides it.
  validate: (ctx) => checkInput(ctx.deps, ctx.entry, ctx.input),
  record: toolRecorder,
  authorize: authorizeStage,
  hold: holdStage<ToolInvocation & Traced & Authorized, ToolCallResult>(requireConnection),
  terminal: callTool,
});

/**
 * What is wrong with `input` for this tool, before any argument condition is evaluated: over the argument limits,
 * not matching the input schema, or a schema (input or output) that cannot be used. Undefined when it is fine.
 */
function checkInput(
  deps: CallPathDeps,
  entry: CatalogEntry,
  input: Record<string, unknown>,
): InterlockError | undefined {
  const { name, server } = entry.wrapper;
  const tooBig = argumentLimitIssue(input, deps.argumentLimits);
  if (tooBig !== undefined) return new ToolInputError(name, [tooBig], { server });
  try {
    const issues = deps.catalog.validatorOf(entry)(input);
    if (issues.length > 0) return new ToolInputError(name, issues, { server });
    // Compiled before anything is sent: a tool whose results could never be checked is not called.
    deps.catalog.outputValidatorOf(entry);
  } catch (err) {
    if (isInterlockError(err)) return err;
    throw err;
  }
  return undefined;
}

/**
 * MCP tools, "Output Schema": a successful result of a tool with an `outputSchema` carries `structuredContent`
 * that matches it. `isError` results are exempt (they report the failure, not the output).
 */
function checkOutput(name: string, server: string, validate: OutputValidator, raw: unknown): void {
  const result = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (result.isError === true) return;
  const structured = result.structuredContent;
  let issues: ToolInputIssue[];
  if (structured === undefined) {
    issues = [{ field: '', message: 'is missing, though the tool declares an outputSchema' }];
  } else {
    try {
      issues = validate(structured);
    } catch (err) {
      // A value nested deep enough to exhaust the stack under a recursive schema.
      issues = [
        { field: '', message: `could not be checked (${err instanceof Error ? err.message : String(err)})` },
      ];
    }
  }
  if (issues.length > 0) throw new ToolOutputError(name, issues, { server });
}

function noop(): void {}
