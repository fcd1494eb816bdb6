/**
 * `toMastraTools` against real Mastra (@mastra/core 0.24, the newest that runs on Node 20; 1.x needs Node 22):
 * an `Agent`'s own loop, driven by a scripted AI SDK v2 language model (the model interface Mastra takes),
 * calls server-everything's tools through the manager's gate.
 */
import { Agent } from '@mastra/core/agent';
import { describe, expect, it } from 'vitest';
import { toMastraTools } from '../../src/adapters/mastra/index.js';
import { ECHO, GET_SUM, SECRET_REASON, TINY_IMAGE, useEverything } from './helpers.js';
import { mastraModel as scriptedModel, mastraToolResultsSent as toolResultsSent } from './models.js';

describe('toMastraTools with the Mastra agent loop', () => {
  const setup = useEverything();

  it("hands out the tools the policy could allow, with the servers' JSON Schemas", () => {
    const tools = toMastraTools(setup.manager);
    expect(Object.keys(tools).sort()).toEqual([ECHO, TINY_IMAGE]);
    expect(tools[ECHO]?.inputSchema).toEqual(setup.manager.getTool(ECHO)?.inputSchema);
  });

  it('runs an allowed call on the server and returns a denied one as { error, message }', async () => {
    const { model, calls } = scriptedModel([
      {
        calls: [
          ['call_ok', ECHO, { message: 'hello from Mastra' }],
          ['call_denied', ECHO, { message: 'secret plan' }],
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      name: 'echoer',
      instructions: 'Echo.',
      model,
      tools: toMastraTools(setup.manager),
    });
    const sentBefore = setup.sentCalls();

    const result = await agent.generate('Echo two things.', { maxSteps: 3 });

    expect(result.text).toBe('done');
    const sent = toolResultsSent(calls[1]);
    expect(JSON.stringify(sent.call_ok)).toContain('Echo: hello from Mastra');
    const denied = JSON.stringify(sent.call_denied);
    expect(denied).toContain('"error":true');
    expect(denied).toContain(SECRET_REASON);
    expect(denied).toContain('CAPABILITY_DENIED');
    expect(setup.sentCalls() - sentBefore).toBe(1);
  });

  it('refuses a tool outside the policy even when every tool is handed out', async () => {
    const { model, calls } = scriptedModel([
      { calls: [['call_sum', GET_SUM, { a: 1, b: 2 }]] },
      { text: 'ok' },
    ]);
    const agent = new Agent({
      name: 'adder',
      instructions: 'Add.',
      model,
      tools: toMastraTools(setup.manager, { tools: 'all' }),
    });
    const sentBefore = setup.sentCalls();
    await agent.generate('Add.', { maxSteps: 3 });
    expect(JSON.stringify(toolResultsSent(calls[1]).call_sum)).toContain(
      "Permission denied: 'execute' on 'mcp:everything:get-sum'",
    );
    expect(setup.sentCalls()).toBe(sentBefore);
  });
});
