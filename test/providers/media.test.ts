/**
 * How the providers put tool results' images and audio (`media`, set with `toolResults: 'content'`) on the
 * wire. The run against a real server and both APIs is in test/session/multimodal.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { toAnthropicMessages } from '../../src/providers/anthropic.js';
import { toOpenAIMessages } from '../../src/providers/openai.js';
import type { ModelMessage } from '../../src/providers/types.js';

const conversation: ModelMessage[] = [
  { role: 'user', content: 'Show and play.' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'c1', name: 'mcp__media__photo', arguments: {} },
      { id: 'c2', name: 'mcp__media__clip', arguments: {} },
    ],
  },
  {
    role: 'tool',
    toolCallId: 'c1',
    toolName: 'mcp__media__photo',
    content: '[image: image/jpeg, 3 B] [image: image/bmp, 3 B]',
    media: [
      { type: 'image', data: 'AAAA', mimeType: 'image/jpeg' },
      { type: 'image', data: 'BBBB', mimeType: 'image/bmp' },
    ],
  },
  {
    role: 'tool',
    toolCallId: 'c2',
    toolName: 'mcp__media__clip',
    content: '[audio: audio/wav, 3 B]',
    media: [{ type: 'audio', data: 'CCCC', mimeType: 'audio/wav' }],
  },
];

describe('toOpenAIMessages with media', () => {
  it('keeps the tool messages together and follows them with one user message of the media it takes', () => {
    const out = toOpenAIMessages(undefined, conversation);
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(out[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: conversation[2]?.content });
    expect(out[4]?.content).toEqual([
      { type: 'text', text: 'The media returned by tool call c1 (mcp__media__photo):' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
      { type: 'text', text: 'The media returned by tool call c2 (mcp__media__clip):' },
      { type: 'input_audio', input_audio: { data: 'CCCC', format: 'wav' } },
    ]);
  });

  it('sends exactly what it sent before when no tool result has media', () => {
    const plain = conversation.map((m) => (m.role === 'tool' ? { ...m, media: undefined } : m));
    expect(toOpenAIMessages('Be brief.', plain).map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
    ]);
  });
});

describe('toAnthropicMessages with media', () => {
  it('puts the images the API takes in the tool_result, after the text; audio stays a placeholder', () => {
    const out = toAnthropicMessages(conversation);
    const results = out.at(-1)?.content as Record<string, unknown>[];
    expect(results[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'c1',
      content: [
        { type: 'text', text: conversation[2]?.content },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
      ],
    });
    expect(results[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'c2',
      content: '[audio: audio/wav, 3 B]',
    });
  });
});
