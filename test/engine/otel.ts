/**
 * OpenTelemetry for tests, SDK side: an in-memory exporter, and the two globals an app's SDK would register
 * (an AsyncLocalStorage context manager, the W3C trace-context propagator), written out here in a few lines
 * rather than pulled from packages this project does not depend on.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  type ContextManager,
  context,
  propagation,
  ROOT_CONTEXT,
  type TextMapPropagator,
  trace,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** What `@opentelemetry/context-async-hooks` does, in short. */
class AlsContextManager implements ContextManager {
  readonly #als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) =>
      this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#als.disable();
    return this;
  }
}

/** W3C `traceparent` only (no tracestate), as `W3CTraceContextPropagator` writes it. */
const w3c: TextMapPropagator = {
  inject(ctx, carrier, setter) {
    const sc = trace.getSpanContext(ctx);
    if (sc === undefined || !trace.isSpanContextValid(sc)) return;
    setter.set(carrier, 'traceparent', `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 1).toString(16)}`);
  },
  extract: (ctx) => ctx,
  fields: () => ['traceparent'],
};

/** A tracer provider recording into memory, plus the globals; `close()` restores the API's defaults. */
export function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AlsContextManager());
  propagation.setGlobalPropagator(w3c);
  return {
    tracer: provider.getTracer('interlock-test'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    async close(): Promise<void> {
      await provider.shutdown();
      context.disable();
      propagation.disable();
    },
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
