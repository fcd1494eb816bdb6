/**
 * The parts of the OpenTelemetry API that interop, security and tools use, with the API itself loaded at its
 * first use, not at import: its CommonJS build is about 45 files, a quarter of the interop entry's import time
 * (issue 15, import time). The API keeps its state in one global, so loading it late changes nothing: a tracer
 * provider registered before or after still receives every span.
 */
import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';

const load = createRequire(import.meta.url);
let api: typeof Api | undefined;

function otel(): typeof Api {
  api ??= load('@opentelemetry/api') as typeof Api;
  return api;
}

/** `SpanKind` of the API, as constants (the API's enum values, checked by a test). */
export const SpanKind = {
  INTERNAL: 0 as Api.SpanKind.INTERNAL,
  SERVER: 1 as Api.SpanKind.SERVER,
  CLIENT: 2 as Api.SpanKind.CLIENT,
  PRODUCER: 3 as Api.SpanKind.PRODUCER,
  CONSUMER: 4 as Api.SpanKind.CONSUMER,
} as const;

/** `SpanStatusCode` of the API, as constants (the API's enum values, checked by a test). */
export const SpanStatusCode = {
  UNSET: 0 as Api.SpanStatusCode.UNSET,
  OK: 1 as Api.SpanStatusCode.OK,
  ERROR: 2 as Api.SpanStatusCode.ERROR,
} as const;

/** The API's `trace`, loaded on first use. */
export const trace: Pick<
  Api.TraceAPI,
  'getTracer' | 'setSpan' | 'getSpan' | 'getActiveSpan' | 'isSpanContextValid'
> = {
  getTracer: (name, version) => otel().trace.getTracer(name, version),
  setSpan: (context, span) => otel().trace.setSpan(context, span),
  getSpan: (context) => otel().trace.getSpan(context),
  getActiveSpan: () => otel().trace.getActiveSpan(),
  isSpanContextValid: (spanContext) => otel().trace.isSpanContextValid(spanContext),
};

/** The API's `context`, loaded on first use. */
export const context: Pick<Api.ContextAPI, 'active' | 'with'> = {
  active: () => otel().context.active(),
  with: (ctx, fn, thisArg, ...args) => otel().context.with(ctx, fn, thisArg, ...args),
};

/** The API's `propagation`, loaded on first use. */
export const propagation: Pick<Api.PropagationAPI, 'inject' | 'extract'> = {
  inject: (ctx, carrier, setter) => otel().propagation.inject(ctx, carrier, setter),
  extract: (ctx, carrier, getter) => otel().propagation.extract(ctx, carrier, getter),
};

export type {
  Attributes,
  Context,
  Link,
  Span,
  SpanOptions,
  Tracer,
} from '@opentelemetry/api';
