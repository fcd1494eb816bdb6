/**
 * The Anthropic provider against a Messages API on a loopback port: exact request bodies (tools, tool_use
 * ids, tool_result blocks grouped in one user message), headers, and errors.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider, type ModelProviderError } from '../../src/providers/index.js';
import type { ModelMessage, ModelToolDefinition } from '../../src/providers/types.js';
import { anthropicResponse, type FakeApi, startFakeApi } from './fake-api.js';

const forecast: ModelToolDefinition = {
  name: 'mcp__weather__get_forecast',
  description: 'Three-day forecast for a city.',
  inputSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 } },
    required: ['city'],
  },
};
const getTime: ModelToolDefinition = {
  name: 'get_time',
  description: '',
  inputSchema: { type: 'object', properties: {} },
};

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(async () => {
  await api.close();
});

function provider(extra: Partial<ConstructorParameters<typeof AnthropicProvider>[0]> = {}) {
  return new AnthropicProvider({ baseURL: api.url, apiKey: 'sk-ant-secret', model: 'claude-test', ...extra });
}

describe('AnthropicProvider', () => {
  it('sends tools, tool_use blocks and grouped tool_result blocks in the exact Messages format', async () => {
    const model = provider();
    api.reply({
      body: anthropicResponse([
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_01', name: 'mcp__weather__get_forecast', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
      ]),
    });
    const first = await model.generate({
      instructions: 'You plan trips.',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [forecast, getTime],
    });
    expect(first).toEqual({
      text: 'Let me check.',
      toolCalls: [
        { id: 'toolu_01', name: 'mcp__weather__get_forecast', arguments: { city: 'Oslo' } },
        { id: 'toolu_02', name: 'get_time', arguments: {} },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 12, outputTokens: 7 },
      responseId: 'msg_test',
      model: 'claude-test',
    });
    const tools = [
      {
        name: 'mcp__weather__get_forecast',
        description: 'Three-day forecast for a city.',
        input_schema: {
          type: 'object',
          properties: { city: { type: 'string', minLength: 1 } },
          required: ['city'],
        },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    expect(api.requests[0]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'You plan trips.',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools,
    });

    api.reply({ body: anthropicResponse([{ type: 'text', text: 'Rainy.' }]) });
    const history: ModelMessage[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
      {
        role: 'tool',
        toolCallId: 'toolu_01',
        toolName: 'mcp__weather__get_forecast',
        content: 'day 1: rain',
      },
      { role: 'tool', toolCallId: 'toolu_02', toolName: 'get_time', content: 'Error: denied', isError: true },
    ];
    const second = await model.generate({
      instructions: 'You plan trips.',
      messages: history,
      tools: [forecast, getTime],
    });
    expect(second).toMatchObject({ text: 'Rainy.', toolCalls: [], finishReason: 'stop' });
    expect(api.requests[1]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'You plan trips.',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_01', name: 'mcp__weather__get_forecast', input: { city: 'Oslo' } },
            { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'day 1: rain' },
            { type: 'tool_result', tool_use_id: 'toolu_02', content: 'Error: denied', is_error: true },
          ],
        },
      ],
      tools,
    });
  });

  it('posts to /v1/messages with x-api-key and anthropic-version', async () => {
    api.reply({ body: anthropicResponse([{ type: 'text', text: 'hi' }]) });
    await provider({ maxTokens: 256, temperature: 0 }).generate({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
    });
    const req = api.requests[0];
    expect(req?.path).toBe('/v1/messages');
    expect(req?.headers['x-api-key']).toBe('sk-ant-secret');
    expect(req?.headers['anthropic-version']).toBe('2023-06-01');
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.body).toEqual({
      model: 'claude-test',
      max_tokens: 256,
      temperature: 0,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('puts a user message that follows tool results into the same user turn', () => {
    const body = provider().buildBody({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'get_time', arguments: {} }] },
        { role: 'tool', toolCallId: 't1', toolName: 'get_time', content: '12:00' },
        { role: 'user', content: 'and now?' },
        { role: 'assistant', content: '' },
      ],
      tools: [],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_time', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: '12:00' },
          { type: 'text', text: 'and now?' },
        ],
      },
    ]);
  });

  it('ignores block types it does not act on (thinking) and maps stop reasons', async () => {
    api.reply({
      body: anthropicResponse(
        [{ type: 'thinking', thinking: 'hmm', signature: 'x' } as never, { type: 'text', text: 'cut' }],
        'max_tokens',
      ),
    });
    const res = await provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] });
    expect(res).toMatchObject({ text: 'cut', finishReason: 'length', toolCalls: [] });
  });

  it('merges a top-level oneOf the API refuses into one object schema', () => {
    const body = provider().buildBody({
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        {
          name: 'move',
          description: 'Move a file.',
          inputSchema: {
            oneOf: [
              {
                type: 'object',
                properties: { from: { type: 'string' }, to: { type: 'string' } },
                required: ['from', 'to'],
              },
              {
                type: 'object',
                properties: { from: { type: 'string' }, trash: { const: true } },
                required: ['from', 'trash'],
              },
            ],
          },
        },
      ],
    });
    expect((body.tools as { input_schema: unknown }[])[0]?.input_schema).toEqual({
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' }, trash: { const: true } },
      required: ['from'],
      description: 'Arguments take one of these shapes: {from, to} | {from, trash}.',
    });
  });

  it('fails with the API error type and message', async () => {
    api.reply({
      status: 400,
      headers: { 'request-id': 'req_ant_1' },
      body: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'tools.0.custom.input_schema: input_schema does not support oneOf',
        },
      },
    });
    const err = (await provider()
      .generate({ messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e)) as ModelProviderError;
    expect(err).toMatchObject({
      code: 'MODEL_REQUEST_FAILED',
      status: 400,
      type: 'invalid_request_error',
      requestId: 'req_ant_1',
    });
    expect(err.message).toContain('input_schema does not support oneOf');
    expect(err.message).not.toContain('sk-ant-secret');
  });

  it('rejects an answer that is not a Messages response', async () => {
    api.reply({ body: { content: [{ type: 'tool_use', id: 7 }] } });
    await expect(
      provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({
      code: 'MODEL_REQUEST_FAILED',
      message: expect.stringContaining('not a Messages response'),
    });
  });
});
