/**
 * OpenTelemetry for tests, SDK side: an in-memory exporter, and the two globals an app's SDK would register
 * (the AsyncLocalStorage context manager and the W3C trace-context propagator), from the OpenTelemetry
 * packages themselves.
 */

import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A tracer provider recording into memory, plus the globals; `close()` (or `await using`) restores the API's defaults. */
export function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const close = async (): Promise<void> => {
    await provider.shutdown();
    context.disable();
    propagation.disable();
  };
  return {
    tracer: provider.getTracer('interlock-test'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The spans whose parent is `parent` (or the roots, for `undefined`). */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan | undefined): ReadableSpan[] {
  return spans.filter((s) =>
    parent === undefined
      ? s.parentSpanContext === undefined
      : s.parentSpanContext?.spanId === parent.spanContext().spanId,
  );
}

/** True when `span` is `ancestor` or lies under it. */
export function isWithin(
  spans: readonly ReadableSpan[],
  span: ReadableSpan,
  ancestor: ReadableSpan,
): boolean {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  for (
    let s: ReadableSpan | undefined = span;
    s !== undefined;
    s = byId.get(s.parentSpanContext?.spanId ?? '')
  ) {
    if (s.spanContext().spanId === ancestor.spanContext().spanId) return true;
  }
  return false;
}
