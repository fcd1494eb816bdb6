/**
 * `toMastraTools` against real Mastra (@mastra/core 0.24, the newest that runs on Node 20; 1.x needs Node 22):
 * an `Agent`'s own loop, driven by a scripted AI SDK v2 language model (the model interface Mastra takes),
 * calls server-everything's tools through the manager's gate.
 */
import { Agent } from '@mastra/core/agent';
import { describe, expect, it } from 'vitest';
import { toMastraTools } from '../../src/adapters/mastra/index.js';
import { ECHO, GET_SUM, SECRET_REASON, TINY_IMAGE, useEverything } from './helpers.js';

type MastraModel = ConstructorParameters<typeof Agent>[0]['model'];

interface ScriptedCall {
  prompt: { role: string; content: unknown }[];
}
/** One scripted model turn: tool calls, or a final answer. */
type Turn = { calls: [id: string, name: string, args: Record<string, unknown>][] } | { text: string };

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/**
 * A LanguageModelV2 that answers one scripted turn per call (Mastra's `generate` asks `doGenerate`, `stream`
 * asks `doStream`) and records the prompts it was sent.
 */
function scriptedModel(turns: Turn[]) {
  const calls: ScriptedCall[] = [];
  const next = (options: ScriptedCall): Turn => {
    calls.push({ prompt: options.prompt });
    const turn = turns.shift();
    if (turn === undefined) throw new Error('The script has no more turns.');
    return turn;
  };
  const contentOf = (turn: Turn) =>
    'text' in turn
      ? [{ type: 'text' as const, text: turn.text }]
      : turn.calls.map(([toolCallId, toolName, args]) => ({
          type: 'tool-call' as const,
          toolCallId,
          toolName,
          input: JSON.stringify(args),
        }));
  const model = {
    specificationVersion: 'v2' as const,
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(options: ScriptedCall) {
      const turn = next(options);
      return {
        content: contentOf(turn),
        finishReason: 'text' in turn ? ('stop' as const) : ('tool-calls' as const),
        usage,
        warnings: [],
      };
    },
    async doStream(options: ScriptedCall) {
      const turn = next(options);
      const parts: Record<string, unknown>[] = [
        { type: 'stream-start', warnings: [] },
        ...('text' in turn
          ? [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: turn.text },
              { type: 'text-end', id: 't' },
            ]
          : contentOf(turn)),
        { type: 'finish', finishReason: 'text' in turn ? 'stop' : 'tool-calls', usage },
      ];
      const stream = new ReadableStream<Record<string, unknown>>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return { stream };
    },
  };
  // A structural LanguageModelV2: its type lives in a package Mastra aliases (`@ai-sdk/provider-v5`).
  return { model: model as unknown as MastraModel, calls };
}

/** The tool results the model was sent in a prompt, by tool call id. */
function toolResultsSent(call: ScriptedCall | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const message of call?.prompt ?? []) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; toolCallId: string; output: unknown }[]) {
      if (part.type === 'tool-result') out[part.toolCallId] = part.output;
    }
  }
  return out;
}

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
