/**
 * Issue 15: a sub-agent's decision is recorded once, where it is made, with the effect the gate decided; before,
 * the view's audit sink and the manager's call path each added an event (`default-deny` and `deny`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { CapabilitySet } from '../../src/security/index.js';
import { AgentSession } from '../../src/session/index.js';
import { defineTool } from '../../src/session/native-tool.js';
import { descendantPids, nodeFixture } from '../helpers/index.js';
import { isWithin, recordSpans } from '../helpers/otel.js';

const DECISION = 'interlock.capability.decision';

let otel: ReturnType<typeof recordSpans>;

beforeAll(() => {
  otel = recordSpans();
});

afterAll(async () => {
  await otel.close();
});

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

/** The decision events within the last `execute_tool {tool}` span. */
function decisionsWithin(tool: string) {
  const spans = otel.spans();
  const call = spans.filter((s) => s.name === `execute_tool ${tool}`).at(-1);
  expect(call, `an execute_tool span for ${tool}`).toBeDefined();
  return spans
    .filter((s) => call !== undefined && isWithin(spans, s, call))
    .flatMap((s) => s.events.filter((e) => e.name === DECISION).map((e) => ({ ...e.attributes })));
}

describe('a sub-agent on its parent’s manager', () => {
  it('records each of its decisions once, with the effect its gate decided', async () => {
    await using parent = new AgentSession({
      name: 'parent',
      model: new ScriptedProvider(['done']),
      tracer: otel.tracer,
      capabilities: CapabilitySet.fromPolicy({
        version: 1,
        rules: [
          { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
          { id: 'add', effect: 'allow', resource: 'mcp:echo:add', actions: 'execute' },
          { id: 'stamp', effect: 'allow', resource: 'tool:stamp', actions: 'execute' },
        ],
      }),
      tools: [
        defineTool({
          name: 'stamp',
          description: 'Stamps a note.',
          input: z.object({ note: z.string() }),
          execute: ({ note }) => `stamped ${note}`,
        }),
      ],
      interop: { mcpServers: [{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }] },
    });
    const child = await parent.spawn({
      name: 'helper',
      capabilities: [
        { effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
        { effect: 'allow', resource: 'tool:stamp', actions: 'execute' },
      ],
    });

    await expect(child.callTool('mcp__echo__add', { a: 1, b: 2 })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    const denied = decisionsWithin('mcp__echo__add');
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({
      'interlock.effect': 'default-deny',
      'interlock.allowed': false,
      'interlock.agent': 'helper',
    });

    await expect(child.callTool('mcp__echo__echo', { text: 'hi' })).resolves.toMatchObject({
      isError: false,
    });
    const allowed = decisionsWithin('mcp__echo__echo');
    expect(allowed).toHaveLength(1);
    expect(allowed[0]).toMatchObject({ 'interlock.effect': 'allow', 'interlock.agent': 'helper' });

    await expect(child.callTool('stamp', { note: 'n' })).resolves.toMatchObject({ text: 'stamped n' });
    const native = decisionsWithin('stamp');
    expect(native).toHaveLength(1);
    expect(native[0]).toMatchObject({
      'interlock.resource': 'tool:stamp',
      'interlock.effect': 'allow',
      'interlock.argument_keys': ['note'],
    });
  });
});
