import * as api from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '../src/otel.js';
import { recordSpans } from './helpers/otel.js';

describe('the lazily loaded OpenTelemetry API', () => {
  it('has the same SpanKind and SpanStatusCode values as the API', () => {
    expect(SpanKind).toEqual({
      INTERNAL: api.SpanKind.INTERNAL,
      SERVER: api.SpanKind.SERVER,
      CLIENT: api.SpanKind.CLIENT,
      PRODUCER: api.SpanKind.PRODUCER,
      CONSUMER: api.SpanKind.CONSUMER,
    });
    expect(SpanStatusCode).toEqual({
      UNSET: api.SpanStatusCode.UNSET,
      OK: api.SpanStatusCode.OK,
      ERROR: api.SpanStatusCode.ERROR,
    });
  });

  it('sends spans to the provider an app registered, with context and propagation of the global API', async () => {
    const otel = recordSpans();
    try {
      api.trace.setGlobalTracerProvider({ getTracer: () => otel.tracer });
      const tracer = trace.getTracer('interlock-test');
      const parent = tracer.startSpan('parent');
      const ctx = trace.setSpan(context.active(), parent);
      expect(trace.getSpan(ctx)).toBe(parent);
      const carrier: Record<string, string> = {};
      propagation.inject(ctx, carrier);
      expect(carrier.traceparent).toContain(parent.spanContext().traceId);
      context.with(ctx, () => {
        expect(trace.getActiveSpan()).toBe(parent);
        tracer.startSpan('child', { kind: SpanKind.CLIENT }).end();
      });
      parent.end();
      const child = otel.spans().find((s) => s.name === 'child');
      expect(child?.kind).toBe(api.SpanKind.CLIENT);
      expect(child?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    } finally {
      api.trace.disable();
      await otel.close();
    }
  });
});
