/**
 * Issue 43, "one pipeline": a decision is recorded once, in one shape, on spans and audit alike. The same denial
 * (no rule allows it) of an MCP tool call, a native tool call, a resource read, a prompt get and a server's
 * elicitation request yields audit records of one shape, and each span's decision event holds exactly that record's
 * facts (the same time and policy revision included), built by the one attribute builder. Real fixture servers over
 * stdio, spans recorded by the OpenTelemetry SDK.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCPClientManager } from '../../src/interop/manager.js';
import { decisionEventAttributes } from '../../src/interop/pipeline.js';
import { decisionAttributes, MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import type { AuditRecord } from '../../src/security/types.js';
import { NativeCalls } from '../../src/session/native-calls.js';
import { callNativeTool, defineTool } from '../../src/session/native-tool.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { recordSpans } from '../helpers/otel.js';

const DECISION = 'interlock.capability.decision';

let otel: ReturnType<typeof recordSpans>;

beforeAll(() => {
  otel = recordSpans();
});

afterAll(async () => {
  await otel.close();
});

/** The decision events of the last span named `name`. */
function decisionEvents(name: string) {
  const span = otel
    .spans()
    .filter((s: ReadableSpan) => s.name === name)
    .at(-1);
  expect(span, `a span named ${name}`).toBeDefined();
  return (span?.events ?? []).filter((e) => e.name === DECISION).map((e) => ({ ...e.attributes }));
}

function recordOf(audit: MemoryAuditSink, resource: string): AuditRecord {
  const records = audit.records.filter((r) => r.resource === resource);
  expect(records, `one audit record for ${resource}`).toHaveLength(1);
  return records[0] as AuditRecord;
}

describe('one denial, five kinds of invocation', () => {
  it('records the same-shaped audit record, and the very same facts on the span, for each kind', async () => {
    const audit = new MemoryAuditSink();
    const capabilities = new CapabilitySet();
    // Only what carries the server's request is allowed: every invocation below is denied by default.
    capabilities.grant('mcp:srv:ask', 'execute', { id: 'may-ask' });
    const asked: string[] = [];
    await using manager = new MCPClientManager({
      capabilities,
      audit,
      tracer: otel.tracer,
      agent: 'auditor',
      onElicitation: (request) => {
        asked.push(request.message);
        return { action: 'accept', content: { name: 'Ada' } };
      },
    });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    await manager.connectServer({ name: 'srv', transport: 'stdio', ...nodeFixture('modern') });

    await expect(manager.executeTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    await expect(manager.readResource('echo', 'fixture://greeting')).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    await expect(manager.getPrompt('echo', 'greet', { name: 'Ada' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    // The elicitation is declined (the protocol's refusal), and the handler is never asked.
    await expect(manager.executeTool('mcp__srv__ask', {})).resolves.toContain('decline');
    expect(asked).toEqual([]);

    // A native tool, decided by a gate writing to the same sink, on the span its agent would have made.
    const gate = new CapabilityGate({ capabilities, audit });
    const stamp = defineTool({
      name: 'stamp',
      description: 'Stamps a note.',
      input: z.object({ note: z.string() }),
      execute: ({ note }) => `stamped ${note}`,
    });
    const span = otel.tracer.startSpan('execute_tool stamp');
    await expect(
      callNativeTool(
        stamp,
        { note: 'x' },
        {
          gate,
          span,
          context: { agent: 'auditor', callId: 'direct' },
          calls: new NativeCalls(['stamp']),
        },
      ),
    ).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    span.end();

    const kinds = [
      { span: 'tools/call echo', resource: 'mcp:echo:echo' },
      { span: 'execute_tool stamp', resource: 'tool:stamp' },
      { span: 'resources/read', resource: 'mcp-resource:echo:fixture://greeting' },
      { span: 'prompts/get greet', resource: 'mcp-prompt:echo:greet' },
      { span: 'elicitation/create', resource: 'mcp:srv:elicitation' },
    ];
    const shapes = new Set<string>();
    for (const kind of kinds) {
      const record = recordOf(audit, kind.resource);
      expect(record).toMatchObject({ effect: 'default-deny', allowed: false, agent: 'auditor' });
      shapes.add(Object.keys(record).sort().join(','));
      // One event per span, holding the audit record's own facts: not rebuilt from the request, not written twice.
      const events = decisionEvents(kind.span);
      expect(events, kind.span).toEqual([decisionEventAttributes(record, false)]);
      expect(events[0]).toEqual(decisionAttributes(record));
      expect(events[0]).toMatchObject({
        'interlock.time': record.time,
        'interlock.policy_revision': record.policyRevision,
        'interlock.effect': 'default-deny',
      });
    }
    expect(shapes.size).toBe(1);
    // The server request's span says nothing more about the decision than its event does.
    const elicit = otel
      .spans()
      .filter((s) => s.name === 'elicitation/create')
      .at(-1);
    expect(elicit?.attributes).not.toHaveProperty('interlock.decision');
    expect(elicit?.attributes['interlock.server_request.outcome']).toBe('decline');
  });

  it('marks the decision an audit sink failed to take, on the span, with the record the sink was given', async () => {
    const given: AuditRecord[] = [];
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:echo', 'execute', { id: 'echo' });
    await using manager = new MCPClientManager({
      capabilities,
      tracer: otel.tracer,
      auditFailure: 'block',
      audit: {
        write(record) {
          given.push(record);
          throw new Error('disk full');
        },
      },
    });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    await expect(manager.executeTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'AUDIT_FAILED',
    });
    expect(given).toHaveLength(1);
    expect(decisionEvents('tools/call echo')).toEqual([
      { ...decisionAttributes(given[0] as AuditRecord), 'interlock.audit.failed': true },
    ]);
  });
});

describe('what counts as a refusal', () => {
  it('counts a call the gate refused as denied, and a call failed by a refusal inside it as a failed call', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:sample', 'execute', { id: 'may-sample' });
    await using manager = new MCPClientManager({
      capabilities,
      onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'never' } }),
    });
    await manager.connectServer({ name: 'srv', transport: 'stdio', ...nodeFixture('modern') });
    const seen: string[] = [];
    manager.on('tool_call_denied', (e) => seen.push(`denied ${e.tool} ${e.code}`));
    manager.on('tool_call_failed', (e) => seen.push(`failed ${e.tool} ${e.code}`));
    // The gate refuses the call itself: a denial, never sent.
    await expect(manager.executeTool('mcp__srv__ask', {})).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    // The call is sent; the server's sampling request inside it is refused, which fails the call.
    await expect(manager.executeTool('mcp__srv__sample', {})).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      byPolicy: true,
    });
    expect(seen).toEqual(['denied ask CAPABILITY_DENIED', 'failed sample CAPABILITY_DENIED']);
    expect(manager.health().srv).toMatchObject({ denied: 1, calls: 1, errors: 1 });
  });
});
