/**
 * One pipeline for every invocation (issues 15 and 43): a tool call, a native tool, a resource read, a prompt get and
 * the answer to a request a server makes of us all pass ONE composition, {@link invocationPipeline}, built once per
 * kind when its path is built, so a call allocates no closures for it. The order lives here only:
 *
 * 1. **trace**: the invocation's span ({@link traceStage}), or the one its caller made ({@link givenSpan}: an
 *    agent's `execute_tool`); the result or the error code is recorded on it, and a span of its own always ends.
 * 2. **validate**: arguments checked before the policy's argument conditions see them (issue 18 item 3); a call an
 *    explicit deny matches still gets the denial, so validation never hides a deny (unless the kind says `strict`).
 * 3. **refusal**: the one place a refusal is recognized (the gate's error, which carries its {@link Decision}),
 *    counted, reported, and mapped to what the caller gets (shared with 6 through the kind's {@link Recorder}).
 * 4. **authorize**: the gate decides; the record of its decision (the very record audit sinks get) goes on the span
 *    once ({@link spanDecisions}). A denial stops the invocation.
 * 5. **hold**: what the kind holds while it runs: for a server, its call slot and a per-call signal (remote-stages.ts).
 * 6. **send**: per attempt, what the kind needs to send (a live client, a re-check after a policy change), the counts
 *    and events of the attempt, the error mapped; the kind may send again (a tool call that never reached its server).
 * 7. the **terminal** of the kind sends the request.
 *
 * Stages pass a typed context: each stage's type says what it reads and what it adds ({@link Traced},
 * {@link Authorized}, ...), and a stage narrows the context it passes on with {@link provide}, so no stage casts back
 * what an earlier one set.
 */

import { AuditError, isInterlockError, PermissionDeniedError } from '../errors.js';
import { type Context, type Span, type SpanOptions, SpanStatusCode, type Tracer, trace } from '../otel.js';
import { AUDIT_SPAN_EVENT, decisionAttributes } from '../security/audit.js';
import { type CapabilityGate, type DecisionObserver, isPromise } from '../security/gate.js';
import type { AccessRequest, AuditRecord, Decision } from '../security/types.js';
import type { CallStats } from './stats.js';

/** What passes the pipeline. */
export type InvocationKind = 'tool' | 'native' | 'resource' | 'prompt' | 'skill' | 'server-request';

/** The span event capability decisions are recorded as (the same as the security area's audit events). */
export const DECISION_EVENT = AUDIT_SPAN_EVENT;

/**
 * What every invocation starts with. The fields below `signal` are filled in by the stages; each is declared here
 * (undefined until then) so every context has one shape, and a stage's output type says when it is set.
 */
export interface Invocation {
  readonly kind: InvocationKind;
  /** What the gate decides, built once per invocation. */
  readonly request: AccessRequest;
  /** The gate of the manager, or of the view (a sub-agent's narrower set) the call came through. */
  readonly gate: CapabilityGate;
  /** The caller's signal. */
  readonly signal?: AbortSignal | undefined;
  /** The invocation's span: set by the trace stage, or given by whoever made it. */
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
  /**
   * Set by the send stage while an attempt is out: what fails it then is the attempt's failure (a server request
   * the policy refused inside a tool call included), never the gate refusing this invocation.
   */
  sent: boolean;
}

/** What {@link traceStage} adds: a span of the invocation's own, and the context it propagates. */
export interface Traced {
  span: Span;
  spanContext: Context;
}

/** What {@link authorizeStage} adds: the gate's decision. */
export interface Authorized {
  decision: Decision;
}

/** The rest of a pipeline, from one stage on. */
export type Next<C, R> = (ctx: C) => Promise<R>;

/** The last step of a pipeline: sends the request of its kind. */
export type Terminal<C, R> = Next<C, R>;

/**
 * One stage: works around `next`, or answers instead of calling it. It reads `In`, and hands `next` the same context
 * with what it added (`Out`).
 */
export type Stage<In, R, Out extends In = In> = (ctx: In, next: Next<Out, R>) => Promise<R>;

/**
 * Sets `ctx[key]` and narrows `ctx` to say so: how a stage adds its output to the context it passes on (the object
 * keeps its shape; only its type learns the field is set).
 */
export function provide<C extends object, K extends keyof C, V extends C[K]>(
  ctx: C,
  key: K,
  value: V,
): asserts ctx is C & { [P in K]: V } {
  ctx[key] = value;
}

/** A stage that does nothing: a kind without that step (native tools hold no call slot). Left out by compose. */
export function direct<C, R>(ctx: C, next: Next<C, R>): Promise<R> {
  return next(ctx);
}

/**
 * Composes `stages` around `terminal`, once: the result runs stage 0, whose `next` is stage 1, and so on. An
 * `undefined` stage, or {@link direct}, is left out.
 */
export function compose<C, R>(
  stages: readonly (Stage<C, R> | undefined)[],
  terminal: Terminal<C, R>,
): Terminal<C, R> {
  let run = terminal;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i];
    if (stage === undefined || stage === direct) continue;
    const next = run;
    run = (ctx) => stage(ctx, next);
  }
  return run;
}

/** What a kind plugs into {@link invocationPipeline}: each stage's input is the one before's output. */
export interface InvocationSpec<C extends Invocation, T extends C, A extends T, H extends A, S extends H, R> {
  /** Step 1: {@link traceStage}, or {@link givenSpan}. */
  trace: Stage<C, R, T>;
  /** Step 2: what is wrong with the arguments, if anything. */
  validate?: ((ctx: T) => Error | undefined) | undefined;
  /** Step 2: a problem found is thrown before deciding, even when a deny would match (nothing audited). */
  strict?: boolean | undefined;
  /** Steps 3 and 6: how the invocation is counted, reported and its errors mapped. */
  record: Recorder<T, H, S, R>;
  /**
   * Step 4. @default {@link authorizeStage}; {@link direct} for a kind that decides inside its terminal (roots: one
   * decision per root, through {@link authorizeOne}).
   */
  authorize?: Stage<T, R, A> | undefined;
  /** Step 5. @default {@link direct} */
  hold?: Stage<A, R, H> | undefined;
  /** Step 7. */
  terminal: Terminal<S, R>;
}

/**
 * The one composition every invocation runs (issue 43): trace, validate, refusal, authorize, hold, send, terminal.
 * Call it once per kind, when the kind's path is built.
 */
export function invocationPipeline<
  C extends Invocation,
  T extends C,
  A extends T,
  H extends A,
  S extends H,
  R,
>(spec: InvocationSpec<C, T, A, H, S, R>): Terminal<C, R> {
  const validate = spec.validate;
  // The stages are typed pairwise through the spec; composed, each one's `next` is the following one.
  const stages = [
    spec.trace,
    validate === undefined ? undefined : validateStage(validate, spec.strict === true),
    refusalStage(spec.record),
    spec.authorize ?? authorizeStage,
    spec.hold,
    sendStage(spec.record),
  ] as readonly (Stage<C, R> | undefined)[];
  return compose(stages, spec.terminal as Terminal<C, R>);
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
  /** The error type a failure records. @default the error's code, or `UNKNOWN` */
  errorType?(err: unknown): string;
}

/** The trace stage: one span per invocation, with the error code of a failure, always ended. */
export function traceStage<C extends Invocation, R>(spec: TraceSpec<C, R>): Stage<C, R, C & Traced> {
  // Not an async function: what suspends is the rest of the chain, and a suspended async frame per call (its
  // registers kept on the heap) allocates more than the two small handlers below.
  return (ctx, next) => {
    const parent = spec.parent(ctx);
    const start = spec.start(ctx);
    const span = spec.tracer(ctx).startSpan(start.name, start.options, parent);
    provide(ctx, 'span', span);
    provide(ctx, 'spanContext', addsNothing(span, parent) ? parent : trace.setSpan(parent, span));
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
          failSpan(span, err, spec.errorType?.(err));
        } finally {
          span.end();
        }
        throw err;
      },
    );
  };
}

/** The trace step of an invocation whose caller made its span (and records how it ended): nothing to do. */
export const givenSpan = direct;

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

/** Marks `span` failed with `type`, by default the error's code. */
export function failSpan(span: Span, err: unknown, type?: string): void {
  span.setAttribute('error.type', type ?? (isInterlockError(err) ? err.code : 'UNKNOWN'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
}

/**
 * The validate stage: `check` returns what is wrong with the arguments, or undefined. A call the policy denies
 * whatever its arguments goes on to authorize, which records and throws the denial (deny wins), unless `strict`;
 * otherwise the problem is thrown here and nothing is decided or audited.
 */
export function validateStage<C extends Invocation, R>(
  check: (ctx: C) => Error | undefined,
  strict = false,
): Stage<C, R> {
  return (ctx, next) => {
    const invalid = check(ctx);
    if (invalid === undefined) return next(ctx);
    if (strict || !deniedWhatever(ctx.gate, ctx.request)) return Promise.reject(invalid);
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

/** The authorize stage: the gate decides, its record goes on the span once, a denial stops the call. */
export function authorizeStage<C extends Invocation, R>(ctx: C, next: Next<C & Authorized, R>): Promise<R> {
  // Read before deciding: any change from here on makes the call decide again right before it is sent.
  ctx.revision = ctx.gate.capabilities.revision;
  let decided: Decision | Promise<Decision>;
  try {
    decided = ctx.gate.decide(ctx.request, spanDecisions(ctx.span));
  } catch (err) {
    return Promise.reject(err);
  }
  // Nearly every call is decided at once: no promise, no turn, until the request itself.
  if (!isPromise(decided)) return proceedDecided(ctx, decided, next);
  return decided.then((decision) => proceedDecided(ctx, decision, next));
}

function proceedDecided<C extends Invocation, R>(
  ctx: C,
  decision: Decision,
  next: Next<C & Authorized, R>,
): Promise<R> {
  provide(ctx, 'decision', decision);
  // The policy changed between the two looks and now allows it: the arguments are still wrong.
  if (ctx.invalid !== undefined) return Promise.reject(ctx.invalid);
  return proceed(next, ctx);
}

/**
 * Decides one more request within an invocation (a server's roots request decides each root), recorded on the
 * invocation's span as the authorize stage records: resolves to the decision, or rejects with the gate's refusal.
 */
export function authorizeOne(ctx: Invocation, request: AccessRequest): Promise<Decision> {
  try {
    return Promise.resolve(ctx.gate.decide(request, spanDecisions(ctx.span)));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** `next(ctx)`, with a synchronous throw turned into a rejection: a stage that is not async still only rejects. */
export function proceed<C, R>(next: Next<C, R>, ctx: C): Promise<R> {
  try {
    return next(ctx);
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Decides again, right before sending, when the set changed since the call was authorized. Nothing to wait for
 * (`undefined`, no promise) when it did not change, the case of nearly every call.
 */
export function recheckIfChanged(ctx: Invocation): Promise<void> | undefined {
  const revision = ctx.gate.capabilities.revision;
  if (revision === ctx.revision) return undefined;
  ctx.revision = revision;
  return ctx.gate.recheck(ctx.request, spanDecisions(ctx.span)).then((decision) => {
    ctx.decision = decision;
  });
}

/** The error the gate refused with, which carries its decision. */
export type Refusal = PermissionDeniedError | AuditError;

/**
 * Whether `err` is the gate's refusal: the one test for it (issue 43), by type and the decision it carries, never by
 * message. A refusal a fixed rule made (an unsafe URL a server asked to open) carries no decision: it is no refusal of
 * the gate's.
 */
export function isRefusal(err: unknown): err is Refusal {
  return (err instanceof PermissionDeniedError || err instanceof AuditError) && err.decision !== undefined;
}

/** The gate's decision carried by what it threw, if it threw one. */
export function decisionOf(err: unknown): Decision | undefined {
  return isRefusal(err) ? err.decision : undefined;
}

/**
 * The span event of a decision: the audit record's own facts, named by the one attribute builder audit sinks use
 * (so a span and an audit trail can never disagree), plus `interlock.audit.failed` when a failing sink blocked it.
 */
export function decisionEventAttributes(record: AuditRecord, auditFailed: boolean) {
  const attributes = decisionAttributes(record);
  if (auditFailed) attributes['interlock.audit.failed'] = true;
  return attributes;
}

/**
 * The observer that records the gate's decisions on `span`: none for a span that records nothing (no OpenTelemetry
 * SDK), so no record is built for it.
 */
export function spanDecisions(span: Span | undefined): DecisionObserver | undefined {
  if (span === undefined || !span.isRecording()) return undefined;
  return {
    decided: (record, auditFailed) =>
      span.addEvent(DECISION_EVENT, decisionEventAttributes(record, auditFailed)),
  };
}

/**
 * How one kind counts, reports and maps what happens to its invocations: the hooks of the refusal and send stages,
 * which hold what every kind does the same way (the counters, the timing, the order). `T` is the context at the
 * refusal stage, `H` at the send stage, `S` what the send stage hands the terminal.
 */
export interface Recorder<T, H extends T, S extends H, R> {
  /** The counters the invocation counts in, when it has any (a server's, a native tool's). */
  stats(ctx: T): CallStats | undefined;
  /** Called as the invocation enters the refusal stage, before it is decided. */
  begin?(ctx: T): void;
  /** Reports a refusal (after it is counted). */
  denied?(ctx: T, refusal: Refusal, durationMs: number): void;
  /** What the caller gets for a refusal: an answer (a declined elicitation), or a throw. @default the refusal */
  answerRefusal?(ctx: T, refusal: Refusal): R;
  /** Gets the attempt ready to send (a live client, a re-check): the context the terminal needs. */
  ready?(ctx: H): S | Promise<S>;
  /** Reports that attempt `attempt` starts; returns its call id. */
  started?(ctx: S, attempt: number): number;
  /** Whether a result counts as a success in the statistics. @default true */
  ok?(result: R): boolean;
  /** Reports a result. */
  completed?(ctx: S, callId: number, durationMs: number, result: R): void;
  /**
   * The round an attempt handed on, when its "result" stands for none (issue 41: an input round handed back to a
   * caller, whose continuation is a later call); undefined for a real result. Such an attempt is reported with
   * {@link handedOff}, not counted as a call: the call that ends it is.
   */
  handedOffRound?(result: R): number | undefined;
  /** Reports an attempt that handed its round on (see {@link handedOffRound}). */
  handedOff?(ctx: S, callId: number, durationMs: number, round: number): void;
  /** Maps what the terminal threw to the error the caller gets (coded, secrets masked). @default as thrown */
  map?(ctx: S, err: unknown): unknown;
  /** Reports a failed attempt, with the mapped `error` and what was `thrown`. */
  failed?(ctx: S, callId: number, durationMs: number, error: unknown, thrown: unknown): void;
  /**
   * Whether to send once more after a failed attempt: a promise that resolves when the next attempt may start, or
   * undefined to give the caller `error`.
   */
  resend?(ctx: S, attempt: number, error: unknown, thrown: unknown): Promise<void> | undefined;
}

/**
 * The refusal stage: a refusal from any later stage (authorize, or the re-check before sending) is counted and
 * reported once, and answered the kind's way. Such an invocation never started.
 */
function refusalStage<T extends Invocation, H extends T, S extends H, R>(
  record: Recorder<T, H, S, R>,
): Stage<T, R> {
  const { begin, denied, answerRefusal } = record;
  // Not an async function: only a refusal needs handling, so the one handler is all this stage allocates.
  return (ctx, next) => {
    begin?.(ctx);
    const started = performance.now();
    return proceed(next, ctx).then(undefined, (err: unknown) => {
      if (!isRefusal(err) || ctx.sent) throw err;
      record.stats(ctx)?.refused();
      denied?.(ctx, err, performance.now() - started);
      if (answerRefusal === undefined) throw err;
      return answerRefusal(ctx, err);
    });
  };
}

/**
 * The send stage: per attempt, the kind gets ready to send, the attempt is counted in flight and reported, then
 * counted with its duration (an error when it failed or its result is not ok) and reported as it ended, its error
 * mapped; the kind may send once more. Chained with `then`, not an async loop: an async function keeps its suspended
 * frame on the heap for the whole call, which profiled as the largest allocation per call (docs/performance.md).
 */
function sendStage<T extends Invocation, H extends T, S extends H, R>(
  record: Recorder<T, H, S, R>,
): Stage<H, R, S> {
  const attempt = (ctx: H, next: Next<S, R>, n: number): Promise<R> => {
    ctx.sent = false;
    if (record.ready === undefined) return send(ctx as S, next, n);
    let ready: S | Promise<S>;
    try {
      ready = record.ready(ctx);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!isPromise(ready)) return send(ready, next, n);
    return ready.then((sendable) => send(sendable, next, n));
  };
  const send = (ctx: S, next: Next<S, R>, n: number): Promise<R> => {
    const stats = record.stats(ctx);
    const callId = record.started?.(ctx, n) ?? 0;
    const started = performance.now();
    stats?.started();
    ctx.sent = true;
    return proceed(next, ctx).then(
      (result) => {
        try {
          const durationMs = performance.now() - started;
          const handed = record.handedOffRound?.(result);
          if (handed !== undefined) {
            record.handedOff?.(ctx, callId, durationMs, handed);
            return result;
          }
          stats?.record(durationMs, record.ok?.(result) ?? true);
          record.completed?.(ctx, callId, durationMs, result);
          return result;
        } finally {
          stats?.settled();
        }
      },
      (thrown: unknown) => {
        let error: unknown = thrown;
        let again: Promise<void> | undefined;
        try {
          error = record.map === undefined ? thrown : record.map(ctx, thrown);
          const durationMs = performance.now() - started;
          stats?.record(durationMs, false);
          record.failed?.(ctx, callId, durationMs, error, thrown);
          again = record.resend?.(ctx, n, error, thrown);
        } finally {
          stats?.settled();
        }
        if (again === undefined) throw error;
        return again.then(() => attempt(ctx, next, n + 1));
      },
    );
  };
  return (ctx, next) => attempt(ctx, next, 1);
}
