/** The scripted model: deterministic turns from a list or a function of the conversation. */
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, scriptedModel, useTool, useTools } from '../../src/providers/scripted.js';
import type { ModelMessage } from '../../src/providers/types.js';

const tools = [
  { name: 'mcp__notes__list_notes', description: 'List notes.', inputSchema: { type: 'object' } },
];

describe('ScriptedProvider', () => {
  it('answers each turn with its step, numbering calls by turn, and records what it was shown', async () => {
    const model = scriptedModel([
      useTool('mcp__notes__list_notes'),
      useTools(['mcp__notes__read_note', { id: 'a' }], { name: 'get_time', id: 'mine' }),
      'All done.',
    ]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const first = await model.generate({ messages, tools });
    expect(first).toEqual({
      text: '',
      toolCalls: [{ id: 'call_1_0', name: 'mcp__notes__list_notes', arguments: {} }],
      finishReason: 'tool_calls',
    });
    messages.push({ role: 'assistant', content: '', toolCalls: first.toolCalls });
    const second = await model.generate({ messages, tools });
    expect(second.toolCalls).toEqual([
      { id: 'call_2_0', name: 'mcp__notes__read_note', arguments: { id: 'a' } },
      { id: 'mine', name: 'get_time', arguments: {} },
    ]);
    messages.push({ role: 'assistant', content: '', toolCalls: second.toolCalls });
    expect(await model.generate({ messages, tools })).toEqual({
      text: 'All done.',
      toolCalls: [],
      finishReason: 'stop',
    });
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(['mcp__notes__list_notes']);
  });

  it('takes its turn from the conversation, so each new run starts at the first step', async () => {
    const model = scriptedModel(['one', 'two']);
    expect((await model.generate({ messages: [{ role: 'user', content: 'a' }], tools: [] })).text).toBe(
      'one',
    );
    expect((await model.generate({ messages: [{ role: 'user', content: 'b' }], tools: [] })).text).toBe(
      'one',
    );
  });

  it('lets a function decide from the tool results it got', async () => {
    const model = new ScriptedProvider(({ turn, toolResults }) =>
      turn === 1
        ? useTool('mcp__notes__list_notes')
        : `I saw: ${toolResults.map((r) => r.content).join(', ')}`,
    );
    const res = await model.generate({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'x', arguments: {} }] },
        { role: 'tool', toolCallId: 'c', toolName: 'x', content: 'drafts/welcome' },
      ],
      tools,
    });
    expect(res.text).toBe('I saw: drafts/welcome');
  });

  it('says how to fix a script that runs out, and honours cancellation', async () => {
    const model = scriptedModel([useTool('x')]);
    await expect(
      model.generate({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'x', arguments: {} }] },
        ],
        tools: [],
      }),
    ).rejects.toMatchObject({
      code: 'MODEL_REQUEST_FAILED',
      message: expect.stringContaining('no step for turn 2'),
    });
    await expect(
      model.generate({ messages: [{ role: 'user', content: 'go' }], tools: [], signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
  });
});
