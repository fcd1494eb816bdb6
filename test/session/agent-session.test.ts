/**
 * The agent loop on a real MCP server (the echo fixture over stdio) with a scripted model: what the model is
 * shown, how each call is gated and reported, parallel calls, limits, cancellation, and sub-agents.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedProvider, useTool, useTools } from '../../src/providers/scripted.js';
import type { ModelProvider } from '../../src/providers/types.js';
import { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import { AgentSession, type AgentSessionOptions } from '../../src/session/index.js';
import { defineTool } from '../../src/session/native-tool.js';
import { createFixtureLog, descendantPids, nodeFixture } from '../helpers/index.js';

const quiet = { onWarning: () => {} };

/** Reads on the echo server, `add` only for small numbers, `throw`/`fail`/`slow` allowed, the rest denied. */
function echoPolicy(): CapabilitySet {
  return CapabilitySet.fromPolicy(
    {
      version: 1,
      rules: [
        { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
        { id: 'errors', effect: 'allow', resource: 'mcp:echo:f*', actions: 'execute' },
        { id: 'slow', effect: 'allow', resource: 'mcp:echo:slow', actions: 'execute' },
        {
          id: 'small-sums',
          effect: 'allow',
          resource: 'mcp:echo:add',
          actions: 'execute',
          description: 'Only small sums.',
          when: { args: { a: { max: 10 } } },
        },
        {
          id: 'no-env',
          effect: 'deny',
          resource: 'mcp:echo:get_env',
          actions: '*',
          description: 'Secrets stay home.',
        },
      ],
    },
    quiet,
  );
}

function agent(model: ModelProvider, extra: Partial<AgentSessionOptions> = {}): AgentSession {
  return new AgentSession({
    name: 'tester',
    model,
    capabilities: echoPolicy(),
    interop: { mcpServers: [{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }] },
    ...extra,
  });
}

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

describe('AgentSession.run', () => {
  it('gates every call, reports each step, and gives the model strings it can act on', async () => {
    const audit = new MemoryAuditSink();
    const model = new ScriptedProvider([
      useTool('mcp__echo__echo', { text: 'hello' }),
      useTool('mcp__echo__get_env', { name: 'HOME' }),
      useTool('mcp__echo__add', { a: 50, b: 1 }),
      useTool('mcp__echo__fail', { message: 'disk on fire' }),
      useTool('mcp__echo__echo', { txt: 'typo in the field name' }),
      useTool('mcp__echo__ehco', { text: 'typo' }),
      ({ toolResults }) => `Finished after: ${toolResults[0]?.content}`,
    ]);
    await using session = agent(model, { audit, instructions: 'Be careful.' });
    const result = await session.run('Do things.');

    expect(result.status).toBe('completed');
    expect(result.turns).toBe(7);
    expect(result.output).toMatch(/^Finished after: Error: No tool named 'mcp__echo__ehco'/);
    expect(result.steps.map((s) => [s.tool, s.decision, s.isError, s.code])).toEqual([
      ['mcp__echo__echo', 'allow', false, undefined],
      ['mcp__echo__get_env', 'deny', true, 'CAPABILITY_DENIED'],
      ['mcp__echo__add', 'deny', true, 'CAPABILITY_DENIED'],
      ['mcp__echo__fail', 'allow', true, undefined],
      ['mcp__echo__echo', 'allow', true, 'INVALID_TOOL_INPUT'],
      ['mcp__echo__ehco', 'skipped', true, 'TOOL_NOT_FOUND'],
    ]);
    const [echo, env, add] = result.steps;
    expect(echo).toMatchObject({
      output: 'hello',
      source: 'mcp',
      server: 'echo',
      turn: 1,
      callId: 'call_1_0',
    });
    expect(echo?.durationMs).toBeGreaterThanOrEqual(0);
    expect(env).toMatchObject({ ruleId: 'no-env', reason: expect.stringContaining('Secrets stay home.') });
    expect(env?.output).toContain('do not retry it');
    expect(add?.reason).toContain('default deny');
    expect(result.steps[3]?.output).toBe('Error: disk on fire');
    expect(result.steps[4]?.output).toContain('/text: is required');
    expect(result.steps[5]?.output).toContain("Did you mean 'mcp__echo__echo'");

    // The model saw only the tools the policy could allow, and got each result under its call id.
    const shown = model.requests[0]?.tools.map((t) => t.name).sort();
    expect(shown).toEqual(['mcp__echo__add', 'mcp__echo__echo', 'mcp__echo__fail', 'mcp__echo__slow']);
    expect(model.requests[0]?.instructions).toBe('Be careful.');
    expect(model.requests[1]?.messages.slice(-1)).toEqual([
      { role: 'tool', toolCallId: 'call_1_0', toolName: 'mcp__echo__echo', content: 'hello', isError: false },
    ]);
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: result.output });
    expect(audit.records.map((r) => [r.resource, r.allowed])).toEqual([
      ['mcp:echo:echo', true],
      ['mcp:echo:get_env', false],
      ['mcp:echo:add', false],
      ['mcp:echo:fail', true],
      // The misspelt argument is a schema error found before the gate decides (issue 18 item 3): nothing to audit.
    ]);
    expect(audit.records.every((r) => r.agent === 'tester')).toBe(true);
  });

  it('runs the calls of one turn in parallel and answers them in the order proposed', async () => {
    let waiting = 0;
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => {
      release = r;
    });
    // Each call waits until both have started: run one after the other, they would never finish.
    const rendezvous = defineTool({
      name: 'rendezvous',
      description: 'Waits for its partner.',
      input: z.object({ who: z.string() }),
      execute: async ({ who }) => {
        if (++waiting === 2) release();
        await bothStarted;
        return `met ${who}`;
      },
    });
    const capabilities = echoPolicy();
    capabilities.grant('tool:rendezvous', 'execute');
    const model = new ScriptedProvider([
      useTools(
        ['rendezvous', { who: 'a' }],
        ['mcp__echo__echo', { text: 'b' }],
        ['rendezvous', { who: 'c' }],
      ),
      'ok',
    ]);
    await using session = agent(model, { capabilities, tools: [rendezvous] });
    const result = await session.run('meet');
    expect(result.steps.map((s) => s.output)).toEqual(['met a', 'b', 'met c']);
    expect(model.requests[1]?.messages.slice(-3).map((m) => (m.role === 'tool' ? m.toolCallId : ''))).toEqual(
      ['call_1_0', 'call_1_1', 'call_1_2'],
    );
  });

  it('stops at maxTurns and still answers every proposed call', async () => {
    const model = new ScriptedProvider(() => useTool('mcp__echo__echo', { text: 'again' }, 'thinking'));
    await using session = agent(model, { maxTurns: 2 });
    const result = await session.run('loop forever');
    expect(result.status).toBe('max_turns');
    expect(result.turns).toBe(2);
    expect(result.output).toBe('thinking');
    expect(result.steps.map((s) => s.decision)).toEqual(['allow', 'skipped']);
    expect(result.steps[1]).toMatchObject({ source: 'mcp', reason: expect.stringContaining('maxTurns (2)') });
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'call_2_0', isError: true });
  });

  it('tells the model when its arguments were not a JSON object, without calling anything', async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: 'mcp__echo__echo', id: 'bad' }] }, 'ok']);
    const broken: ModelProvider = {
      name: 'broken',
      model: 'm',
      async generate(request) {
        const res = await model.generate(request);
        return {
          ...res,
          toolCalls: res.toolCalls.map((c) => ({
            ...c,
            rawArguments: '{',
            argumentsError: 'the arguments are not valid JSON',
          })),
        };
      },
    };
    await using session = agent(broken);
    const result = await session.run('x');
    expect(result.steps[0]).toMatchObject({ decision: 'skipped', isError: true });
    expect(result.steps[0]?.output).toContain('Call the tool again with a JSON object');
  });

  it('rejects the run when the model fails, and when cancelled, cancelling the call under way', async () => {
    const failing: ModelProvider = {
      name: 'failing',
      model: 'm',
      generate: async () => {
        throw Object.assign(new Error('upstream 500'), { code: 'MODEL_REQUEST_FAILED' });
      },
    };
    await using broken = agent(failing);
    await expect(broken.run('x')).rejects.toThrow('upstream 500');

    const controller = new AbortController();
    const model = new ScriptedProvider([useTool('mcp__echo__slow', { ms: 60_000 }), 'never']);
    await using session = agent(model);
    await session.start();
    session.mcp.once('tool_call_started', () => controller.abort());
    await expect(session.run('wait', { signal: controller.signal })).rejects.toMatchObject({
      code: 'REQUEST_CANCELLED',
    });
  });

  it('cancels a run under way when the session closes', async () => {
    const model = new ScriptedProvider([useTool('mcp__echo__slow', { ms: 60_000 }), 'never']);
    const session = agent(model);
    await session.start();
    session.mcp.once('tool_call_started', () => void session.close());
    await expect(session.run('wait')).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
    await session.close();
  });

  it('tells the model of a default deny the refusal and the reason, never how to widen the policy', async () => {
    // Issue 39: the fix is the operator's (CLI, logs, audit), not something to hand a model.
    await using log = createFixtureLog();
    const audit = new MemoryAuditSink();
    const model = new ScriptedProvider([useTool('mcp__echo__image', {}), 'done']);
    await using session = agent(model, {
      audit,
      interop: { mcpServers: [{ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env }] },
    });
    const result = await session.run('Show an image.');

    const step = result.steps[0];
    expect(step).toMatchObject({ decision: 'deny', code: 'CAPABILITY_DENIED' });
    const shown = model.requests[1]?.messages.at(-1);
    expect(shown).toMatchObject({ role: 'tool', isError: true });
    const text = JSON.stringify([shown, step?.output, step?.reason]);
    expect(text).toContain("No rule allows 'execute' on 'mcp:echo:image' (default deny).");
    expect(text).not.toMatch(/grant\(|To allow it|add (a|this) (policy )?rule/i);
    expect(log.toolCalls('image')).toEqual([]);
    // The operator still reads the fix in the audit trail.
    expect(audit.records.find((r) => r.resource === 'mcp:echo:image')?.operatorHint).toContain(
      "grant('mcp:echo:image', 'execute')",
    );
  });
});

describe('AgentSession.spawn', () => {
  it('derives the child’s set, shares live connections and starts no process', async () => {
    const audit = new MemoryAuditSink();
    const model = new ScriptedProvider([
      useTools(['mcp__echo__echo', { text: 'from child' }], ['mcp__echo__add', { a: 1, b: 2 }]),
      'child done',
    ]);
    await using parent = agent(model, { audit });
    await parent.start();
    const before = descendantPids(process.pid).sort();
    const child = await parent.spawn({
      name: 'helper',
      capabilities: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' }],
    });
    expect(descendantPids(process.pid).sort()).toEqual(before);
    expect(child.mcp).toBe(parent.mcp);
    expect(child.visibleTools().map((t) => t.name)).toEqual(['mcp__echo__echo']);

    const result = await child.run('help');
    expect(result.steps.map((s) => [s.tool, s.decision])).toEqual([
      ['mcp__echo__echo', 'allow'],
      ['mcp__echo__add', 'deny'],
    ]);
    expect(result.steps[0]?.output).toBe('from child');
    expect(
      audit.records.filter((r) => r.resource === 'mcp:echo:add').map((r) => [r.agent, r.allowed]),
    ).toEqual([['helper', false]]);

    // A rule the parent does not grant cannot be given to a child.
    await expect(
      parent.spawn({
        name: 'greedy',
        capabilities: [{ effect: 'allow', resource: 'mcp:echo:get_env', actions: 'execute' }],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_POLICY' });
    // Revoking in the parent reaches the child at once.
    parent.capabilities.revoke('echo');
    await expect(child.callTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });

    await parent.close();
    expect(child.closed).toBe(true);
    expect(parent.children).toEqual([]);
  });
});
