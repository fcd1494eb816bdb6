/**
 * One pipeline for every invocation (issue 15): a tool call, a native tool, a resource read, a prompt get and the
 * answer to a request a server makes of us all pass the same chain of small stages, composed once when the path is
 * built, and end in one terminal per kind.
 *
 * A stage is `(ctx, next) => Promise<R>`: it may work before `next`, after it, or instead of it (a denial). The
 * chain is built from the stages once (the way undici wraps a dispatch in interceptors), so a call allocates no
 * closures for it. The stages and their order:
 *
 * 1. **trace**: the invocation's span; the result or error code is recorded on it, and it always ends.
 * 2. **validate**: arguments checked before the policy's argument conditions see them (issue 18 item 3); a call an
 *    explicit deny matches still gets the denial, so validation never hides a deny.
 * 3. **authorize**: the gate decides; its {@link Decision} (returned, or carried by the error) is recorded on the
 *    span once, with the same attribute builder as audit records.
 * 4. **limit**: the server's call slot (`maxConcurrentCalls`, the bounded queue) and a per-call abort signal.
 * 5. **resend**: a live client (waiting out a reconnect), a re-check when the policy changed meanwhile, call
 *    statistics, and, for tool calls, one re-send of a call that provably never reached the server.
 * 6. the **terminal** of the kind sends the request.
 */

import { AuditError, isInterlockError, PermissionDeniedError } from '../errors.js';
import { requestSignal } from '../net/signals.js';
import { type Context, type Span, type SpanOptions, SpanStatusCode, type Tracer, trace } from '../otel.js';
import { AUDIT_SPAN_EVENT, decisionAttributes } from '../security/audit.js';
import { type CapabilityGate, isPromise } from '../security/gate.js';
import type { AccessRequest, Decision } from '../security/types.js';
import type { ServerConnection } from './connection.js';

/** What passes the pipeline. */
export type InvocationKind = 'tool' | 'native' | 'resource' | 'prompt' | 'server-request';

/** The span event capability decisions are recorded as (the same as the security area's audit events). */
export const DECISION_EVENT = AUDIT_SPAN_EVENT;

/** What every stage may read, and the fields the stages fill in for the ones after them. */
export interface Invocation {
  readonly kind: InvocationKind;
  /** What the gate decides, built once per invocation. */
  readonly request: AccessRequest;
  /** The gate of the manager, or of the view (a sub-agent's narrower set) the call came through. */
  readonly gate: CapabilityGate;
  /** The caller's signal. */
  readonly signal?: AbortSignal | undefined;
  /** The invocation's span: set by the trace stage, or by whoever made the span (the agent's `execute_tool`). */
  span: Span | undefined;
  /**
   * The context the request propagates (W3C `traceparent`, baggage): the span's, or the parent's when the span
   * adds nothing to it (see `addsNothing`).
   */
  spanContext: Context | undefined;
  /** The gate's decision, once authorize ran. */
  decision: Decision | undefined;
  /** The capability set's revision read before deciding: a change after it makes the call decide again. */
  revision: number;
  /** A problem validation found that a deny could still outrank: authorize throws it after an allow. */
  invalid: Error | undefined;
}

/** An invocation that goes to a server connection. */
export interface ConnectedInvocation extends Invocation {
  readonly server: string;
  connection: ServerConnection | undefined;
  /** The request timeout in ms. */
  timeoutMs: number;
  /** This call's own signal following the caller's (see signals.ts), set by the limit stage. */
  perCallSignal: AbortSignal | undefined;
}

/** The last step of a pipeline: sends the request of its kind. */
export type Terminal<C, R> = (ctx: C) => Promise<R>;

/** One stage: works around `next`, or answers instead of calling it. */
export type Stage<C, R> = (ctx: C, next: Terminal<C, R>) => Promise<R>;

/**
 * Composes `stages` around `terminal`, once: the result runs stage 0, whose `next` is stage 1, and so on. An
 * `undefined` stage is left out, so a kind can skip one (native tools have no call slot).
 */
export function compose<C, R>(
  stages: readonly (Stage<C, R> | undefined)[],
  terminal: Terminal<C, R>,
): Terminal<C, R> {
  let run = terminal;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i];
    if (stage === undefined) continue;
    const next = run;
    run = (ctx) => stage(ctx, next);
  }
  return run;
}

/** How a kind's span starts and what its result records. */
export interface TraceSpec<C extends Invocation, R> {
  /** The tracer of the manager the call goes through. */
  tracer(ctx: C): Tracer;
  /** The span's name and start options (build them once per target: they are the same for every call). */
  start(ctx: C): { readonly name: string; readonly options: SpanOptions };
  /** The parent context. */
  parent(ctx: C): Context;
  /** Records the result on the span. */
  onResult?(span: Span, result: R): void;
}

/** The trace stage: one span per invocation, with the error code of a failure, always ended. */
export function traceStage<C extends Invocation, R>(spec: TraceSpec<C, R>): Stage<C, R> {
  // Not an async function: what suspends is the rest of the chain, and a suspended async frame per call (its
  // registers kept on the heap) allocates more than the two small handlers below.
  return (ctx, next) => {
    const parent = spec.parent(ctx);
    const start = spec.start(ctx);
    const span = spec.tracer(ctx).startSpan(start.name, start.options, parent);
    ctx.span = span;
    ctx.spanContext = addsNothing(span, parent) ? parent : trace.setSpan(parent, span);
    return proceed(next, ctx).then(
      (result) => {
        try {
          spec.onResult?.(span, result);
        } finally {
          span.end();
        }
        return result;
      },
      (err: unknown) => {
        try {
          failSpan(span, err);
        } finally {
          span.end();
        }
        throw err;
      },
    );
  };
}

/**
 * Whether a context holding `span` would propagate exactly what `parent` does: the span records nothing and
 * carries the parent span's own span context (what the API's no-op tracer returns when no SDK is registered), or
 * neither holds a valid trace. The invocation then runs in `parent` itself, and no context is built per call for a
 * span nobody sees. A span an SDK sampled out has a span id of its own, so it still gets its context.
 */
function addsNothing(span: Span, parent: Context): boolean {
  if (span.isRecording()) return false;
  const own = span.spanContext();
  const parentSpan = trace.getSpan(parent);
  return parentSpan === undefined ? !trace.isSpanContextValid(own) : parentSpan.spanContext() === own;
}

/** Marks `span` failed with the error's code. */
export function failSpan(span: Span, err: unknown): void {
  span.setAttribute('error.type', isInterlockError(err) ? err.code : 'UNKNOWN');
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
}

/**
 * The validate stage: `check` returns what is wrong with the arguments, or undefined. A call the policy denies
 * whatever its arguments goes on to authorize, which records and throws the denial (deny wins); otherwise the
 * problem is thrown here and nothing is decided or audited.
 */
export function validateStage<C extends Invocation, R>(check: (ctx: C) => Error | undefined): Stage<C, R> {
  return (ctx, next) => {
    const invalid = check(ctx);
    if (invalid === undefined) return next(ctx);
    if (!deniedWhatever(ctx.gate, ctx.request)) return Promise.reject(invalid);
    ctx.invalid = invalid;
    return next(ctx);
  };
}

/**
 * Whether the policy denies this call whatever its arguments: an explicit deny applies, or no rule could ever
 * allow it. Side-effect free (no quota is used, nothing audited): the gate then decides and records it.
 */
function deniedWhatever(gate: CapabilityGate, request: AccessRequest): boolean {
  const caps = gate.capabilities;
  const { resource, action, context } = request;
  if (caps.check(resource, action, context).effect === 'deny') return true;
  const withoutArgs = { ...context, args: undefined };
  return !caps.couldAllow(resource, action, withoutArgs);
}

/** The authorize stage: the gate decides, the decision goes on the span once, a denial stops the call. */
export function authorizeStage<C extends Invocation, R>(ctx: C, next: Terminal<C, R>): Promise<R> {
  // Read before deciding: any change from here on makes the call decide again right before it is sent.
  ctx.revision = ctx.gate.capabilities.revision;
  let decided: Decision | Promise<Decision>;
  try {
    decided = ctx.gate.decide(ctx.request);
  } catch (err) {
    recordRefusal(ctx, err);
    return Promise.reject(err);
  }
  // Nearly every call is decided at once: no promise, no turn, until the request itself.
  if (!isPromise(decided)) return proceedDecided(ctx, decided, next);
  return decided.then(
    (decision) => proceedDecided(ctx, decision, next),
    (err: unknown) => {
      recordRefusal(ctx, err);
      throw err;
    },
  );
}

function proceedDecided<C extends Invocation, R>(
  ctx: C,
  decision: Decision,
  next: Terminal<C, R>,
): Promise<R> {
  ctx.decision = decision;
  recordDecision(ctx.span, ctx.request, decision);
  // The policy changed between the two looks and now allows it: the arguments are still wrong.
  if (ctx.invalid !== undefined) return Promise.reject(ctx.invalid);
  return proceed(next, ctx);
}

/** `next(ctx)`, with a synchronous throw turned into a rejection: a stage that is not async still only rejects. */
export function proceed<C, R>(next: Terminal<C, R>, ctx: C): Promise<R> {
  try {
    return next(ctx);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Authorize alone, composed once: for invocations whose answer is made elsewhere (a server's request). */
const authorizeOnly = compose<Invocation, Decision>([authorizeStage], (ctx) =>
  Promise.resolve(ctx.decision as Decision),
);

/**
 * Runs the authorize stage for `request` and resolves to the gate's decision, recorded on `span`; a refusal
 * rejects with the gate's error, its decision recorded too.
 */
export function authorizeInvocation(invocation: {
  kind: InvocationKind;
  request: AccessRequest;
  gate: CapabilityGate;
  span?: Span | undefined;
}): Promise<Decision> {
  return authorizeOnly({
    ...invocation,
    span: invocation.span,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
  });
}

/**
 * Decides again, right before sending, when the set changed since the call was authorized. Nothing to wait for
 * (`undefined`, no promise) when it did not change, the case of nearly every call.
 */
export function recheckIfChanged(ctx: Invocation): Promise<void> | undefined {
  const revision = ctx.gate.capabilities.revision;
  if (revision === ctx.revision) return undefined;
  ctx.revision = revision;
  return recheck(ctx);
}

async function recheck(ctx: Invocation): Promise<void> {
  try {
    ctx.decision = await ctx.gate.recheck(ctx.request);
  } catch (err) {
    recordRefusal(ctx, err);
    throw err;
  }
}

/** The gate's decision carried by what it threw, if it threw one. */
export function decisionOf(err: unknown): Decision | undefined {
  if (err instanceof PermissionDeniedError || err instanceof AuditError) return err.decision;
  return undefined;
}

function recordRefusal(ctx: Invocation, err: unknown): void {
  const decision = decisionOf(err);
  if (decision === undefined) return;
  // The policy allowed it and the audit sink failed: the decision stays `allow`, and the span says why it stopped.
  recordDecision(ctx.span, ctx.request, decision, err instanceof AuditError);
}

const NO_KEYS: readonly string[] = Object.freeze([]);

/**
 * Records `decision` on `span` as a decision event, named as audit records name it. A span that records nothing
 * (no OpenTelemetry SDK) gets no attributes built for it.
 */
export function recordDecision(
  span: Span | undefined,
  request: AccessRequest,
  decision: Decision,
  auditFailed = false,
): void {
  if (span === undefined || !span.isRecording()) return;
  const { context } = request;
  const args = context?.args;
  const attributes = decisionAttributes({
    resource: request.resource,
    action: request.action,
    effect: decision.effect,
    allowed: decision.allowed,
    reason: decision.reason,
    ruleId: decision.ruleId,
    agent: context?.agent,
    principal: context?.principal,
    server: request.server,
    tool: request.tool,
    definitionHash: request.definitionHash,
    argumentKeys: args === undefined || args === null ? NO_KEYS : Object.keys(args).sort(),
  });
  if (auditFailed) attributes['interlock.audit.failed'] = true;
  span.addEvent(DECISION_EVENT, attributes);
}

/**
 * The limit stage: the server must have a connection, the call takes one of its slots (or fails at once with
 * `OVERLOADED`), and gets a signal of its own that follows the caller's. Both are released however it ends.
 */
export function limitStage<C extends ConnectedInvocation, R>(
  requireConnection: (ctx: C) => ServerConnection,
): Stage<C, R> {
  return (ctx, next) => {
    let acquired: ReturnType<ServerConnection['limiter']['acquire']>;
    try {
      const connection = requireConnection(ctx);
      ctx.connection = connection;
      acquired = connection.limiter.acquire(ctx.signal);
    } catch (err) {
      return Promise.reject(err);
    }
    // Without a limit the slot is taken at once: no promise, no extra turn.
    if (typeof acquired === 'function') return holdingSlot(ctx, next, acquired);
    return acquired.then((release) => holdingSlot(ctx, next, release));
  };
}

/** Runs the rest of the chain holding a call slot, with a signal of the call's own; both let go however it ends. */
function holdingSlot<C extends ConnectedInvocation, R>(
  ctx: C,
  next: Terminal<C, R>,
  release: () => void,
): Promise<R> {
  // The SDK leaves a listener on the signal it gets: give it one of this call's own (see signals.ts).
  const perCall = ctx.signal === undefined ? undefined : requestSignal(ctx.signal);
  ctx.perCallSignal = perCall?.signal;
  const done = () => {
    perCall?.dispose();
    release();
  };
  return proceed(next, ctx).then(
    (result) => {
      done();
      return result;
    },
    (err: unknown) => {
      done();
      throw err;
    },
  );
}
