/**
 * Issue 15, "The gate returns its Decision": what the gate decided is what the call's span records, once,
 * whatever stopped the call, and the error a refused call throws carries that decision. Against the echo fixture
 * over stdio, with spans recorded by the OpenTelemetry SDK.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import type { AuditRecord } from '../../src/security/types.js';
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

function echoManager(
  rules: unknown[],
  extra: Partial<ConstructorParameters<typeof MCPClientManager>[0]> = {},
) {
  return new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({ version: 1, rules } as never),
    tracer: otel.tracer,
    ...extra,
  });
}

/** The decision events of the last span named `name`. */
function decisionsOn(name: string): Record<string, unknown>[] {
  const span = otel
    .spans()
    .filter((s: ReadableSpan) => s.name === name)
    .at(-1);
  expect(span, `a span named ${name}`).toBeDefined();
  return (span?.events ?? []).filter((e) => e.name === DECISION).map((e) => ({ ...e.attributes }));
}

describe('the decision a tools/call span records', () => {
  it('records a default deny as default-deny, not deny, and the error carries it', async () => {
    await using manager = echoManager([
      { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
    ]);
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const error = await manager.executeTool('mcp__echo__pid', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CAPABILITY_DENIED', decision: { effect: 'default-deny' } });
    const events = decisionsOn('tools/call pid');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      'interlock.resource': 'mcp:echo:pid',
      'interlock.effect': 'default-deny',
      'interlock.allowed': false,
    });
    expect(events[0]?.['interlock.rule_id']).toBeUndefined();
  });

  it('records an ask the approver refused as ask, with the rule that asked', async () => {
    const asked: string[] = [];
    await using manager = echoManager(
      [{ id: 'ask-echo', effect: 'ask', resource: 'mcp:echo:echo', actions: 'execute' }],
      {
        approver: (request) => {
          asked.push(request.resource);
          return false;
        },
      },
    );
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const error = await manager.executeTool('mcp__echo__echo', { text: 'x' }).catch((e: unknown) => e);
    expect(asked).toEqual(['mcp:echo:echo']);
    expect(error).toMatchObject({ code: 'CAPABILITY_DENIED', decision: { effect: 'ask', allowed: false } });
    const events = decisionsOn('tools/call echo');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      'interlock.effect': 'ask',
      'interlock.allowed': false,
      'interlock.rule_id': 'ask-echo',
    });
  });

  it('records an allowed call the audit sink blocked as allow, marked as an audit failure', async () => {
    const failing = {
      write(_record: AuditRecord): void {
        throw new Error('disk full');
      },
    };
    await using manager = echoManager(
      [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' }],
      { audit: failing, auditFailure: 'block' },
    );
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const error = await manager.executeTool('mcp__echo__echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AUDIT_FAILED', decision: { effect: 'allow', allowed: true } });
    const span = otel
      .spans()
      .filter((s) => s.name === 'tools/call echo')
      .at(-1);
    expect(span?.attributes['error.type']).toBe('AUDIT_FAILED');
    const events = decisionsOn('tools/call echo');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      'interlock.effect': 'allow',
      'interlock.rule_id': 'echo',
      'interlock.audit.failed': true,
    });
  });
});

describe('resource reads and prompts in the pipeline', () => {
  it('gives a resource read its own span with the decision, and counts it in the server statistics', async () => {
    await using manager = echoManager([
      { id: 'read', effect: 'allow', resource: 'mcp-resource:echo:fixture://greeting', actions: 'read' },
    ]);
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const events: unknown[] = [];
    manager.on('request_completed', (e) => events.push(e));
    manager.on('request_failed', (e) => events.push(e));
    const before = manager.health().echo?.calls ?? 0;
    const read = await manager.readResource('echo', 'fixture://greeting');
    expect(read.contents[0]).toMatchObject({ uri: 'fixture://greeting' });
    await expect(manager.readResource('echo', 'fixture://blob')).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      decision: { effect: 'default-deny' },
    });
    const spans = otel.spans().filter((s) => s.name === 'resources/read');
    const allowed = spans.at(-2);
    const denied = spans.at(-1);
    expect(allowed?.attributes).toMatchObject({
      'mcp.method.name': 'resources/read',
      'mcp.resource.uri': 'fixture://greeting',
    });
    expect(allowed?.events.filter((e) => e.name === DECISION).map((e) => e.attributes)).toEqual([
      expect.objectContaining({ 'interlock.effect': 'allow', 'interlock.rule_id': 'read' }),
    ]);
    expect(denied?.attributes['error.type']).toBe('CAPABILITY_DENIED');
    expect(denied?.events.filter((e) => e.name === DECISION).map((e) => e.attributes)).toEqual([
      expect.objectContaining({ 'interlock.effect': 'default-deny', 'interlock.allowed': false }),
    ]);
    // Only the read that was sent counts: the denied one never reached the server.
    expect(manager.health().echo?.calls).toBe(before + 1);
    expect(events).toEqual([
      expect.objectContaining({ server: 'echo', method: 'resources/read', target: 'fixture://greeting' }),
    ]);
  });

  it('reports a prompt the server fails as request_failed, with its code, after the gate allowed it', async () => {
    await using manager = echoManager([
      { id: 'prompts', effect: 'allow', resource: 'mcp-prompt:echo:*', actions: 'get' },
    ]);
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const failed: { method: string; target: string; code: string }[] = [];
    manager.on('request_failed', (e) => failed.push(e));
    const error = await manager.getPrompt('echo', 'no-such-prompt').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SERVER_ERROR' });
    expect(failed).toEqual([
      expect.objectContaining({ method: 'prompts/get', target: 'no-such-prompt', code: 'SERVER_ERROR' }),
    ]);
    const span = otel
      .spans()
      .filter((s) => s.name === 'prompts/get no-such-prompt')
      .at(-1);
    expect(span?.attributes['error.type']).toBe('SERVER_ERROR');
    expect(span?.events.filter((e) => e.name === DECISION)).toHaveLength(1);
  });
});
