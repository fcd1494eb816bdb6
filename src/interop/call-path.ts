/**
 * The one path every tool call takes after name resolution: a `tools/call` span, argument validation (after
 * explicit denies, before argument conditions), the capability gate (nothing is sent when it denies), the
 * server's call slot, a live client (waiting out a reconnect within the timeout), the request itself with progress
 * and cancellation, one automatic re-send only when the call provably never reached the server or the config
 * marks the tool idempotent, and the result checked against the tool's `outputSchema`.
 */

import type { LoggingLevel, Tool } from '@modelcontextprotocol/client';
import {
  type InteropError,
  isInteropError,
  NotConnectedError,
  ToolInputError,
  type ToolInputIssue,
  ToolOutputError,
} from '../errors.js';
import {
  type Attributes,
  context as otelContext,
  propagation,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from '../otel.js';
import type { SecretRedactor } from '../redact.js';
import { AUDIT_SPAN_EVENT } from '../security/audit.js';
import type { CapabilityGate } from '../security/gate.js';
import type { AccessRequest, Decision } from '../security/types.js';
import { type ArgumentLimits, argumentLimitIssue } from '../tools/limits.js';
import { type ToolCallResult, toToolCallResult } from '../tools/normalize.js';
import type { ToolCallOptions } from '../tools/tool-wrapper.js';
import type { OutputValidator } from '../tools/validate.js';
import type { CatalogEntry, ToolCatalog } from './catalog.js';
import { toolMatchesAny } from './config.js';
import type { ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import { callToolAnswering } from './input-rounds.js';
import { httpStatusOf, mapRequestError } from './request-errors.js';
import { logLevelMeta } from './server-logs.js';
import type { InFlightCalls } from './server-request-trace.js';
import { answerNoRequest, type ServerRequestSupport } from './server-requests.js';
import { requestSignal } from './signals.js';
import { taskCallParams, taskHandleOf } from './task-handles.js';
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
  nextCallId(): number;
}

/** The span event capability decisions are recorded as (the same as the security area's audit events). */
export const DECISION_EVENT = AUDIT_SPAN_EVENT;

/** Runs one call of `entry` with `input`. */
export async function runToolCall(
  deps: CallPathDeps,
  entry: CatalogEntry,
  connection: ServerConnection | undefined,
  input: Record<string, unknown>,
  options: ToolCallOptions,
): Promise<ToolCallResult> {
  const parent = options.traceContext ?? otelContext.active();
  const start = spanStart(entry, connection);
  const span = deps.tracer.startSpan(start.name, start.options, parent);
  try {
    const result = await callInSpan(
      deps,
      entry,
      connection,
      input,
      options,
      span,
      trace.setSpan(parent, span),
    );
    span.setAttribute('interlock.result.chars', result.text.length);
    if (result.isError) {
      span.setAttribute('error.type', 'tool_error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool returned an error result' });
    }
    return result;
  } catch (err) {
    const code = isInteropError(err) ? err.code : 'UNKNOWN';
    span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
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

/** Decision attributes, named as the security area's audit span events name them. */
function decisionAttributes(
  resource: string,
  decision: Pick<Decision, 'effect' | 'allowed' | 'ruleId' | 'reason'>,
): Attributes {
  const attrs: Attributes = {
    'interlock.resource': resource,
    'interlock.action': 'execute',
    'interlock.effect': decision.effect,
    'interlock.allowed': decision.allowed,
    'interlock.reason': decision.reason,
  };
  if (decision.ruleId !== undefined) attrs['interlock.rule_id'] = decision.ruleId;
  return attrs;
}

/** Records a refusal by the gate on the call's span. */
function recordDenial(span: Span, resource: string, err: unknown): void {
  const denied = err as { code?: string; reason?: string; rule?: { id?: string } };
  span.addEvent(
    DECISION_EVENT,
    decisionAttributes(resource, {
      effect: denied.code === 'CAPABILITY_DENIED' ? 'deny' : 'default-deny',
      allowed: false,
      ruleId: denied.rule?.id,
      reason: denied.reason ?? (err as Error).message,
    }),
  );
}

async function callInSpan(
  deps: CallPathDeps,
  entry: CatalogEntry,
  connection: ServerConnection | undefined,
  input: Record<string, unknown>,
  options: ToolCallOptions,
  span: Span,
  spanContext: ReturnType<typeof trace.setSpan>,
): Promise<ToolCallResult> {
  const { name, server, tool, annotations } = entry.wrapper;
  const resource = `mcp:${server}:${tool}`;
  const request = {
    resource,
    action: 'execute',
    context: {
      args: input,
      agent: options.agent ?? deps.agent,
      principal: options.principal ?? deps.principal,
      annotations,
    },
    server,
    tool,
    definitionHash: entry.hash,
  };
  // Issue 18 item 3: the arguments meet the tool's schema before the policy's argument conditions see them, so a
  // misspelt argument is a schema error the caller can fix, not a denial that hides it. Deny rules still come
  // first: a call an explicit deny matches (or that no rule could ever allow) is answered with the denial.
  const invalid = checkInput(deps, entry, input);
  if (invalid !== undefined && !deniedWhatever(deps, request)) throw invalid;
  // Read before deciding: any change from here on makes the call decide again right before it is sent.
  let revision = deps.gate.capabilities.revision;
  let decision: Decision;
  try {
    decision = await deps.gate.authorize(request);
  } catch (err) {
    recordDenial(span, resource, err);
    throw err;
  }
  // A span that records nothing (no OpenTelemetry SDK) gets no attributes built for it.
  if (span.isRecording()) span.addEvent(DECISION_EVENT, decisionAttributes(resource, decision));
  // The policy changed between the two looks and now allows it: the arguments are still wrong.
  if (invalid !== undefined) throw invalid;

  if (connection === undefined || (entry.wrapper.offline && connection.state !== 'ready')) {
    throw new NotConnectedError(
      entry.wrapper.offline
        ? `Tool '${name}' was registered offline and server '${server}' has no live connection; connect the server to call it.`
        : `Server '${server}' is not connected.`,
      { server },
    );
  }
  const { config } = connection;
  const timeoutMs = options.timeoutMs ?? config.timeoutMs;
  const maxTotal = options.maxTotalTimeoutMs ?? config.maxTotalTimeoutMs;
  const meta: Record<string, string> = {};
  propagation.inject(spanContext, meta);
  const logLevel = options.logLevel ?? deps.logLevel;
  if (logLevel !== undefined) Object.assign(meta, logLevelMeta(logLevel));
  const params =
    Object.keys(meta).length === 0
      ? { name: tool, arguments: input }
      : { name: tool, arguments: input, _meta: meta };
  const outputValidator = deps.catalog.outputValidatorOf(entry);
  const requestOptions = {
    timeout: timeoutMs,
    // The client checks structuredContent itself when its cached tool list has an outputSchema; we check it
    // here instead (once, with bounded $refs, with our error). A definition without outputSchema turns its check
    // off and keeps the inputSchema for SEP-2243 header mirroring; the client then does not refresh its list
    // and retry by itself on a HEADER_MISMATCH answer (only for tools with an outputSchema).
    ...(outputValidator === undefined
      ? {}
      : { toolDefinition: { name: tool, inputSchema: entry.wrapper.inputSchema as Tool['inputSchema'] } }),
    // The SDK only resets the timeout on progress when an onprogress handler is set.
    onprogress: options.onProgress ?? noop,
    resetTimeoutOnProgress: true,
    ...(maxTotal === undefined ? {} : { maxTotalTimeout: maxTotal }),
  };

  const release = await connection.limiter.acquire(options.signal);
  // The SDK leaves a listener on the signal it gets: give it one of this call's own (see signals.ts).
  const perCall = options.signal === undefined ? undefined : requestSignal(options.signal);
  if (perCall !== undefined) Object.assign(requestOptions, { signal: perCall.signal });
  try {
    for (let attempt = 1; ; attempt++) {
      const client = await connection.acquireClient(timeoutMs, options.signal);
      // A revoke or policy change while the call waited for its slot or a reconnect still stops it.
      if (deps.gate.capabilities.revision !== revision) {
        revision = deps.gate.capabilities.revision;
        try {
          await deps.gate.recheck(request);
        } catch (err) {
          recordDenial(span, resource, err);
          throw err;
        }
      }
      const callId = deps.nextCallId();
      const started = performance.now();
      let followingTask = false;
      connection.stats.started();
      deps.events.emit('tool_call_started', () => ({ callId, name, server, tool, attempt }));
      try {
        // Requests the server makes meanwhile (elicitation, sampling, roots, a task's input) find their parent
        // span here.
        deps.inFlight?.enter(server, span);
        let raw: unknown;
        try {
          const callParams = taskCallParams(client, connection, params);
          // With handlers for server requests, input rounds are answered inside this call (see input-rounds.ts).
          raw =
            deps.answerServerRequest === undefined
              ? await client.callTool(callParams, requestOptions)
              : await callToolAnswering(client, callParams, requestOptions, {
                  server,
                  answer: deps.answerServerRequest,
                  signal: perCall?.signal,
                });
          // Issue 13: a task handle is followed to its end here; the call's promise stays the one the caller holds.
          const task = taskHandleOf(raw);
          if (task !== undefined) {
            followingTask = true;
            raw = await followTask(client, task, {
              server,
              tool: name,
              era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
              timeoutMs,
              maxTotalTimeoutMs: maxTotal,
              signal: perCall?.signal,
              onProgress: options.onProgress,
              answer: deps.answerServerRequest ?? answerNoRequest,
              onStatus: (t) =>
                span.addEvent('interlock.task.status', {
                  'interlock.task.id': t.taskId,
                  'interlock.task.status': t.status,
                }),
              redactor: deps.redactor,
            });
          }
        } finally {
          deps.inFlight?.leave(server, span);
        }
        // The final result is checked, a task's included (the handle itself is no result).
        if (outputValidator !== undefined) checkOutput(name, server, outputValidator, raw);
        const result = toToolCallResult(raw, { maxResultChars: deps.maxResultChars });
        const durationMs = performance.now() - started;
        connection.stats.record(durationMs, !result.isError);
        deps.events.emit('tool_call_completed', () => ({
          callId,
          name,
          server,
          tool,
          durationMs,
          isError: result.isError,
          resultChars: result.text.length,
        }));
        return result;
      } catch (err) {
        const error = mapRequestError(err, {
          server,
          what: `tool '${name}'`,
          timeoutMs,
          signal: options.signal,
          redactor: deps.redactor,
        });
        const durationMs = performance.now() - started;
        connection.stats.record(durationMs, false);
        deps.events.emit('tool_call_failed', () => ({
          callId,
          name,
          server,
          tool,
          durationMs,
          code: error.code,
          error,
        }));
        const lost = isConnectionFailure(err, error);
        if (lost) connection.markLost(error);
        // Only a lost connection can re-send; the idempotent list is looked at then, not on every call.
        const idempotent = lost && toolMatchesAny(config.tools?.idempotent, tool);
        const resend =
          lost &&
          attempt === 1 &&
          !options.signal?.aborted &&
          (idempotent || (!followingTask && neverReachedServer(err)));
        if (resend && connection.recoverable) {
          span.addEvent('interlock.call.resend', { reason: idempotent ? 'idempotent' : 'never_sent' });
          continue;
        }
        throw error;
      } finally {
        connection.stats.settled();
      }
    }
  } finally {
    perCall?.dispose();
    release();
  }
}

/**
 * What is wrong with `input` for this tool, before any argument condition is evaluated: over the argument limits,
 * not matching the input schema, or a schema (input or output) that cannot be used. Undefined when it is fine.
 */
function checkInput(
  deps: CallPathDeps,
  entry: CatalogEntry,
  input: Record<string, unknown>,
): InteropError | undefined {
  const { name, server } = entry.wrapper;
  const tooBig = argumentLimitIssue(input, deps.argumentLimits);
  if (tooBig !== undefined) return new ToolInputError(name, [tooBig], { server });
  try {
    const issues = deps.catalog.validatorOf(entry)(input);
    if (issues.length > 0) return new ToolInputError(name, issues, { server });
    // Compiled before anything is sent: a tool whose results could never be checked is not called.
    deps.catalog.outputValidatorOf(entry);
  } catch (err) {
    if (isInteropError(err)) return err;
    throw err;
  }
  return undefined;
}

/**
 * Whether the policy denies this call whatever its arguments: an explicit deny applies, or no rule could ever
 * allow it. Side-effect free (no quota is used, nothing audited): the gate then decides and records it.
 */
function deniedWhatever(deps: CallPathDeps, request: AccessRequest): boolean {
  const caps = deps.gate.capabilities;
  const { resource, action, context } = request;
  if (caps.check(resource, action, context).effect === 'deny') return true;
  const withoutArgs = { ...context, args: undefined };
  return !caps.couldAllow(resource, action, withoutArgs);
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

/** The connection itself failed (as opposed to the server answering with an error). */
function isConnectionFailure(raw: unknown, error: InteropError): boolean {
  if (error.code === 'CONNECTION_LOST') return true;
  return sessionGone(raw);
}

/** Streamable HTTP / SSE answered 404 for our session: it expired; a new `initialize` is needed. */
export function sessionGone(err: unknown): boolean {
  const status = httpStatusOf(err);
  if (status !== undefined) return status === 404;
  return err instanceof Error && /\(HTTP 404\)/.test(err.message);
}

/**
 * True only when the request provably never reached the server: the transport refused to send it, the TCP
 * connection was refused, or the server rejected the session before reading the request.
 */
function neverReachedServer(err: unknown): boolean {
  if (sessionGone(err)) return true;
  if (!(err instanceof Error)) return false;
  if (/^Not connected/.test(err.message)) return true;
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

function noop(): void {}
