/**
 * The requests servers make of us (issue 13) through the invocation pipeline: one span per request, kind SERVER (the
 * server asks, we answer), placed under the tool call it belongs to, and the gate's decision recorded on it once.
 * Message contents and answers never go into a span.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import { isInterlockError } from '../errors.js';
import {
  type Context,
  type Link,
  context as otelContext,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from '../otel.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import type { Decision } from '../security/types.js';
import {
  authorizeOne,
  authorizeStage,
  direct,
  type Invocation,
  invocationPipeline,
  type Recorder,
  type Refusal,
  type Traced,
  traceStage,
} from './pipeline.js';

/**
 * The spans of the tool calls in flight, per server. A request a server makes while one call of its is in
 * flight is traced as a child of that call (on 2026 servers it is part of it); while several are, its span links
 * to all of them. The SDK runs these handlers outside the call's async context, so the active context cannot
 * tell.
 */
export class InFlightCalls {
  readonly #byServer = new Map<string, Set<Span>>();

  enter(server: string, span: Span): void {
    const spans = this.#byServer.get(server);
    if (spans === undefined) this.#byServer.set(server, new Set([span]));
    else spans.add(span);
  }

  leave(server: string, span: Span): void {
    const spans = this.#byServer.get(server);
    spans?.delete(span);
    if (spans?.size === 0) this.#byServer.delete(server);
  }

  /** The parent context and links for a request `server` makes now. */
  placement(server: string): { parent: Context; links: Link[] | undefined } {
    const spans = this.#byServer.get(server);
    const active = otelContext.active();
    if (spans === undefined) return { parent: active, links: undefined };
    if (spans.size === 1)
      return { parent: trace.setSpan(active, spans.values().next().value as Span), links: undefined };
    return { parent: active, links: [...spans].map((s) => ({ context: s.spanContext() })) };
  }
}

/** What answering a server's request needs from the manager. */
export interface ServerRequestDeps {
  tracer: Tracer;
  inFlight: InFlightCalls;
  /** The manager's gate: every answer is decided by it. */
  gate: CapabilityGate;
  agent?: string | undefined;
  principal?: string | undefined;
}

/** One request a server made of us, as {@link answerThroughPipeline} runs it. */
export interface ServerRequestRun<R> {
  /** `elicitation/create`, `sampling/createMessage`, `roots/list`. */
  method: string;
  server: string;
  kind: 'elicitation' | 'sampling' | 'roots';
  /**
   * What the request asks, as the conditions' `args`: decided by the pipeline's authorize stage. Undefined when the
   * answer decides for itself, item by item (roots), or has nothing to decide.
   */
  args?: Record<string, unknown> | undefined;
  /** A fixed rule the request broke (an unsafe URL): refused before anything is decided or audited. */
  check?: (() => Error | undefined) | undefined;
  /** The answer to a refusal (a declined elicitation); none: the refusal is thrown. */
  refused?: ((span: Span, refusal: Refusal) => R) | undefined;
  /** Makes the answer; `decide` decides one more request of the same kind on the same span (one root). */
  answer: (span: Span, decide: (args: Record<string, unknown>) => Promise<Decision>) => Promise<R>;
}

interface ServerRequestInvocation extends Invocation {
  readonly run: ServerRequestRun<unknown>;
  readonly deps: ServerRequestDeps;
  readonly parent: Context;
  readonly links: Link[] | undefined;
}

function requestOf(deps: ServerRequestDeps, run: ServerRequestRun<unknown>, args: Record<string, unknown>) {
  return {
    resource: resourceFor.serverRequest(run.server, run.kind),
    action: 'request',
    context: { args, agent: deps.agent, principal: deps.principal },
    server: run.server,
  };
}

type TracedRequest = ServerRequestInvocation & Traced;

const serverRequestRecorder: Recorder<TracedRequest, TracedRequest, TracedRequest, unknown> = {
  // The answers to a server are no calls of ours: nothing is counted, no call event is emitted.
  stats: () => undefined,
  answerRefusal(ctx, refusal) {
    if (ctx.run.refused === undefined) throw refusal;
    return ctx.run.refused(ctx.span, refusal);
  },
};

function serverRequestPipeline(decides: boolean) {
  return invocationPipeline({
    trace: traceStage<ServerRequestInvocation, unknown>({
      tracer: (ctx) => ctx.deps.tracer,
      start: (ctx) => ({
        name: ctx.run.method,
        options: {
          kind: SpanKind.SERVER,
          attributes: {
            'mcp.method.name': ctx.run.method,
            'interlock.server': ctx.run.server,
            'interlock.server_request.kind': ctx.run.kind,
          },
          ...(ctx.links !== undefined && { links: ctx.links }),
        },
      }),
      parent: (ctx) => ctx.parent,
      errorType: (err) =>
        isInterlockError(err) ? err.code : err instanceof ProtocolError ? String(err.code) : 'UNKNOWN',
    }),
    validate: (ctx) => ctx.run.check?.(),
    strict: true,
    record: serverRequestRecorder,
    authorize: decides ? authorizeStage : direct,
    terminal: (ctx) =>
      ctx.run.answer(ctx.span, (args) => authorizeOne(ctx, requestOf(ctx.deps, ctx.run, args))),
  });
}

/** Answers decided by the authorize stage, and answers that decide item by item (or not at all). */
const decidedRequests = serverRequestPipeline(true);
const selfDecidedRequests = serverRequestPipeline(false);

/**
 * Answers a server's request through the one invocation pipeline (issue 43): a span of its own (`{method}`, kind
 * SERVER: the server asks, we answer), a child of the tool call it arrived in when there is one; the fixed rules;
 * the gate's decision, recorded on the span once, as audit records it; then the answer. Message contents never go
 * into the span.
 */
export function answerThroughPipeline<R>(deps: ServerRequestDeps, run: ServerRequestRun<R>): Promise<R> {
  const { parent, links } = deps.inFlight.placement(run.server);
  const pipeline = run.args === undefined ? selfDecidedRequests : decidedRequests;
  return pipeline({
    kind: 'server-request',
    request: requestOf(deps, run, run.args ?? {}),
    gate: deps.gate,
    signal: undefined,
    span: undefined,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
    sent: false,
    run,
    deps,
    parent,
    links,
  }) as Promise<R>;
}
