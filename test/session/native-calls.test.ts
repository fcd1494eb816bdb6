/**
 * Native tools get the call statistics and events MCP tools have (issue 15): per tool, calls, errors, calls in
 * flight, latency and denials from `nativeToolHealth()`, and `tool_call_*` events from the agent, in the manager's
 * shapes.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedProvider, useTool, useTools } from '../../src/providers/scripted.js';
import { CapabilitySet } from '../../src/security/index.js';
import type {
  AgentSessionEventName,
  AgentSessionEvents,
  NativeToolHealth,
} from '../../src/session/events.js';
import { AgentSession } from '../../src/session/index.js';
import { defineTool } from '../../src/session/native-tool.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

const flaky = defineTool({
  name: 'flaky',
  description: 'Always fails.',
  execute: () => {
    throw new Error('disk full');
  },
});

const secret = defineTool({ name: 'secret', description: 'Never granted.', execute: () => 'leak' });

const EVENTS: AgentSessionEventName[] = [
  'tool_call_started',
  'tool_call_completed',
  'tool_call_failed',
  'tool_call_denied',
];

type Seen = { [K in AgentSessionEventName]: { type: K } & AgentSessionEvents[K] }[AgentSessionEventName];

/** Every event of `agent`, in order. */
function record(agent: AgentSession): Seen[] {
  const seen: Seen[] = [];
  for (const type of EVENTS) agent.on(type, (e) => seen.push({ type, ...e } as Seen));
  return seen;
}

function grantAll(...tools: string[]): CapabilitySet {
  const capabilities = new CapabilitySet();
  for (const tool of tools) capabilities.grant(`tool:${tool}`, 'execute', { id: `${tool}-ok` });
  capabilities.deny('tool:secret', 'execute', { id: 'no-secrets' });
  return capabilities;
}

const NO_CALLS: NativeToolHealth = {
  callsInFlight: 0,
  calls: 0,
  errors: 0,
  denied: 0,
  latencyMs: { p50: undefined, p95: undefined },
};

describe('native tool call statistics and events', () => {
  it('counts and reports a run’s calls that succeed, fail and are denied, each as MCP calls are', async () => {
    await using agent = new AgentSession({
      name: 'calc',
      model: new ScriptedProvider([
        useTools(['add', { a: 2, b: 3 }], ['flaky', {}]),
        useTool('add', { a: 'two' }),
        useTool('secret', {}),
        'done',
      ]),
      capabilities: grantAll('add', 'flaky'),
      tools: [add, flaky, secret],
    });
    expect(agent.nativeToolHealth()).toEqual({ add: NO_CALLS, flaky: NO_CALLS, secret: NO_CALLS });
    const seen = record(agent);

    const result = await agent.run('add, fail, then peek');

    // Each call's events, by the model's id for it, in the order of the run's steps.
    const byCall = result.steps.map((step) => seen.filter((e) => e.toolCallId === step.callId));
    expect(byCall.map((events) => events.map((e) => [e.type, e.name, e.agent]))).toEqual([
      [
        ['tool_call_started', 'add', 'calc'],
        ['tool_call_completed', 'add', 'calc'],
      ],
      [
        ['tool_call_started', 'flaky', 'calc'],
        ['tool_call_completed', 'flaky', 'calc'],
      ],
      [
        ['tool_call_started', 'add', 'calc'],
        ['tool_call_failed', 'add', 'calc'],
      ],
      // A denied call never started: it is reported once, by the denial.
      [['tool_call_denied', 'secret', 'calc']],
    ]);
    expect(seen).toHaveLength(7);
    // One number per call, shared by its start and its end; the two calls of the first turn ran in parallel.
    expect(byCall.map((events) => new Set(events.map((e) => e.callId)).size)).toEqual([1, 1, 1, 1]);
    expect(new Set(seen.map((e) => e.callId))).toEqual(new Set([1, 2, 3, 4]));

    const [[, done] = [], [, errored] = [], [, failed] = [], [denied] = []] = byCall;
    expect(done).toMatchObject({ isError: false, resultChars: 1, durationMs: expect.any(Number) });
    expect(errored).toMatchObject({ isError: true, resultChars: 'Error: disk full'.length });
    expect(failed).toMatchObject({ code: 'INVALID_TOOL_INPUT', error: expect.any(Error) });
    expect(denied).toMatchObject({
      code: 'CAPABILITY_DENIED',
      ruleId: 'no-secrets',
      reason: expect.stringContaining('no-secrets'),
      error: expect.objectContaining({ code: 'CAPABILITY_DENIED' }),
    });
    for (const e of seen) if ('durationMs' in e) expect(e.durationMs).toBeGreaterThanOrEqual(0);
    // Argument values are not in the events (the argument name `a` may be in an error message, its value not).
    expect(JSON.stringify(seen)).not.toContain('two');

    const health = agent.nativeToolHealth();
    expect(health.add).toMatchObject({ calls: 2, errors: 1, denied: 0, callsInFlight: 0 });
    expect(health.flaky).toMatchObject({ calls: 1, errors: 1, denied: 0, callsInFlight: 0 });
    expect(health.secret).toEqual({ ...NO_CALLS, denied: 1 });
    for (const figures of [health.add, health.flaky]) {
      expect(figures?.latencyMs.p50).toBeGreaterThanOrEqual(0);
      expect(figures?.latencyMs.p95).toBeGreaterThanOrEqual(figures?.latencyMs.p50 ?? 0);
    }
  });

  it('reports direct calls as `direct`, a denied one with the rule that decided', async () => {
    await using agent = new AgentSession({
      name: 'direct',
      model: new ScriptedProvider(['unused']),
      capabilities: grantAll('add'),
      tools: [add, secret],
    });
    const seen = record(agent);
    expect((await agent.callTool('add', { a: 1, b: 1 })).text).toBe('2');
    await expect(agent.callTool('secret')).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(seen.map((e) => [e.type, e.name, e.toolCallId])).toEqual([
      ['tool_call_started', 'add', 'direct'],
      ['tool_call_completed', 'add', 'direct'],
      ['tool_call_denied', 'secret', 'direct'],
    ]);
    expect(seen[2]).toMatchObject({ ruleId: 'no-secrets' });
    expect(agent.nativeToolHealth().secret?.denied).toBe(1);
  });

  it('counts a call in flight while it runs, and a cancelled call as failed with REQUEST_CANCELLED', async () => {
    let inFlight: NativeToolHealth | undefined;
    let running: () => void = () => {};
    const isRunning = new Promise<void>((resolve) => {
      running = resolve;
    });
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until cancelled.',
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          inFlight = agent.nativeToolHealth().wait;
          running();
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    });
    await using agent = new AgentSession({
      name: 'waiter',
      model: new ScriptedProvider(['unused']),
      capabilities: grantAll('wait'),
      tools: [wait],
    });
    const failed = new Promise<AgentSessionEvents['tool_call_failed']>((resolve) =>
      agent.once('tool_call_failed', resolve),
    );
    const controller = new AbortController();
    const call = agent.callTool('wait', {}, { signal: controller.signal });
    await isRunning;
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });

    expect(inFlight).toMatchObject({ callsInFlight: 1, calls: 0 });
    expect(await failed).toMatchObject({ name: 'wait', code: 'REQUEST_CANCELLED' });
    expect(agent.nativeToolHealth().wait).toMatchObject({ callsInFlight: 0, calls: 1, errors: 1 });
  });

  it('reports a call blocked by a failing audit sink, or refused by the approver, as denied', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('tool:add', 'execute', { id: 'add-ok' });
    capabilities.ask('tool:secret', 'execute', { id: 'ask-first' });
    await using agent = new AgentSession({
      name: 'audited',
      model: new ScriptedProvider(['unused']),
      capabilities,
      tools: [add, secret],
      approver: () => false,
      audit: {
        write: (r) => {
          if (r.resource === 'tool:add') throw new Error('audit store offline');
        },
      },
    });
    const seen = record(agent);
    await expect(agent.callTool('add', { a: 1, b: 2 })).rejects.toMatchObject({ code: 'AUDIT_FAILED' });
    await expect(agent.callTool('secret')).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(seen.map((e) => [e.type, e.name, 'code' in e ? e.code : undefined])).toEqual([
      ['tool_call_denied', 'add', 'AUDIT_FAILED'],
      ['tool_call_denied', 'secret', 'CAPABILITY_DENIED'],
    ]);
    expect(seen[1]).toMatchObject({ ruleId: 'ask-first', reason: expect.stringContaining('approver') });
    expect(agent.nativeToolHealth()).toMatchObject({
      add: { calls: 0, denied: 1 },
      secret: { calls: 0, denied: 1 },
    });
  });

  it('stops calling a listener once it is removed, and calls a `once` listener once', async () => {
    await using agent = new AgentSession({
      name: 'quiet',
      model: new ScriptedProvider(['unused']),
      capabilities: grantAll('add'),
      tools: [add],
    });
    const every: number[] = [];
    const first: number[] = [];
    const listener = (e: AgentSessionEvents['tool_call_completed']) => every.push(e.callId);
    agent.on('tool_call_completed', listener);
    agent.once('tool_call_completed', (e) => first.push(e.callId));
    await agent.callTool('add', { a: 1, b: 2 });
    await agent.callTool('add', { a: 1, b: 2 });
    agent.off('tool_call_completed', listener);
    await agent.callTool('add', { a: 1, b: 2 });
    expect(every).toEqual([1, 2]);
    expect(first).toEqual([1]);
    expect(agent.nativeToolHealth().add?.calls).toBe(3);
  });

  it('still returns the result when a listener throws, and says so in a process warning', async () => {
    await using agent = new AgentSession({
      name: 'noisy',
      model: new ScriptedProvider(['unused']),
      capabilities: grantAll('add'),
      tools: [add],
    });
    agent.on('tool_call_completed', () => {
      throw new Error('dashboard down');
    });
    const warned = new Promise<Error & { code?: string }>((resolve) => process.once('warning', resolve));
    expect((await agent.callTool('add', { a: 1, b: 2 })).text).toBe('3');
    expect(await warned).toMatchObject({
      code: 'INTERLOCK_LISTENER_ERROR',
      message: expect.stringContaining('dashboard down'),
    });
    expect(agent.nativeToolHealth().add).toMatchObject({ calls: 1, errors: 0 });
  });

  it('gives a sub-agent figures and events of its own', async () => {
    await using parent = new AgentSession({
      name: 'parent',
      model: new ScriptedProvider(['unused']),
      capabilities: grantAll('add'),
      tools: [add],
    });
    const child = await parent.spawn({
      name: 'child',
      capabilities: [{ effect: 'allow', resource: 'tool:add', actions: 'execute' }],
    });
    const parentSeen = record(parent);
    const childSeen = record(child);
    await child.callTool('add', { a: 2, b: 2 });
    expect(childSeen.map((e) => [e.type, e.agent])).toEqual([
      ['tool_call_started', 'child'],
      ['tool_call_completed', 'child'],
    ]);
    expect(parentSeen).toEqual([]);
    expect(child.nativeToolHealth().add?.calls).toBe(1);
    expect(parent.nativeToolHealth().add?.calls).toBe(0);
  });
});
