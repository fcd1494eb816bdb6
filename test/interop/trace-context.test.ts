/**
 * The trace context a `tools/call` carries to the server (`_meta.traceparent`, W3C), whatever kind of span the
 * manager's tracer makes: a recorded span is the server's parent; a span that records nothing and only carries the
 * caller's span context (the API's no-op tracer, no SDK registered) passes the caller's context on unchanged, with
 * no context built for it (issue 15, "spans when no tracer is recording"); a span an SDK sampled out keeps its own
 * span id; and without any trace nothing is sent. A real stdio server answers with the `_meta` it received.
 */
import { join } from 'node:path';
import * as api from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';

const META_SERVER = join(import.meta.dirname, '../engine/fixtures/meta-server.mjs');
/** A caller's trace, as an incoming request would have it: sampled, from another process. */
const CALLER = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: api.TraceFlags.SAMPLED,
  isRemote: true,
};
const callerContext = () => api.trace.setSpanContext(api.ROOT_CONTEXT, CALLER);

beforeAll(() => {
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  api.propagation.disable();
});

/** What the server received in `_meta`, for one call through a manager using `tracer`. */
async function metaSeen(tracer: api.Tracer, traceContext: api.Context): Promise<{ traceparent?: string }> {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:meta:whoami', 'execute');
  await using manager = new MCPClientManager({ capabilities, tracer });
  await manager.connectServer({
    name: 'meta',
    transport: 'stdio',
    command: process.execPath,
    args: [META_SERVER],
  });
  return JSON.parse(await manager.executeTool('mcp__meta__whoami', {}, { traceContext }));
}

/** `[traceId, spanId, flags]` of a traceparent. */
function parts(traceparent: string | undefined): string[] {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent ?? '');
  expect(match, `a W3C traceparent, got ${traceparent}`).not.toBeNull();
  return (match as RegExpExecArray).slice(1);
}

describe('the trace context sent with tools/call', () => {
  it('names the recorded tools/call span as the parent, in the caller’s trace', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    try {
      const meta = await metaSeen(provider.getTracer('test'), callerContext());
      const [traceId, spanId, flags] = parts(meta.traceparent);
      const call = exporter.getFinishedSpans().find((s) => s.name === 'tools/call whoami');
      expect(call?.parentSpanContext?.spanId).toBe(CALLER.spanId);
      expect([traceId, spanId, flags]).toEqual([CALLER.traceId, call?.spanContext().spanId, '01']);
    } finally {
      await provider.shutdown();
    }
  });

  it('passes the caller’s context on unchanged when the tracer records nothing (no SDK)', async () => {
    const noop = api.trace.getTracer('no-sdk'); // no provider registered: the API's no-op tracer
    expect(noop.startSpan('probe').isRecording()).toBe(false);
    const meta = await metaSeen(noop, callerContext());
    expect(parts(meta.traceparent)).toEqual([CALLER.traceId, CALLER.spanId, '01']);
  });

  it('keeps the own span id of a span an SDK sampled out, marked not sampled', async () => {
    const provider = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
    try {
      const meta = await metaSeen(provider.getTracer('test'), callerContext());
      const [traceId, spanId, flags] = parts(meta.traceparent);
      expect(traceId).toBe(CALLER.traceId);
      expect(spanId).not.toBe(CALLER.spanId);
      expect(flags).toBe('00');
    } finally {
      await provider.shutdown();
    }
  });

  it('sends no traceparent when there is no trace at all', async () => {
    const meta = await metaSeen(api.trace.getTracer('no-sdk'), api.ROOT_CONTEXT);
    expect(meta.traceparent).toBeUndefined();
  });
});
