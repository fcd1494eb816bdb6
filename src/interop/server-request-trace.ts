/**
 * Spans for the requests servers make of us (issue 13): one per request, kind SERVER (the server asks, we
 * answer), placed under the tool call it belongs to. Message contents and answers never go into a span.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import { isInterlockError } from '../errors.js';
import {
  type Context,
  type Link,
  context as otelContext,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '../otel.js';

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

/**
 * Runs a server request in a span of its own (`{method}`, kind SERVER: the server asks, we answer), a child of
 * the tool call it arrived in when there is one. Message contents never go into the span.
 */
export async function traced<T>(
  deps: { tracer: Tracer; inFlight: InFlightCalls },
  method: string,
  server: string,
  kind: string,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  const { parent, links } = deps.inFlight.placement(server);
  const span = deps.tracer.startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': method,
        'interlock.server': server,
        'interlock.server_request.kind': kind,
      },
      ...(links !== undefined && { links }),
    },
    parent,
  );
  try {
    return await run(span);
  } catch (err) {
    span.setAttribute(
      'error.type',
      isInterlockError(err) ? err.code : err instanceof ProtocolError ? String(err.code) : 'UNKNOWN',
    );
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}
