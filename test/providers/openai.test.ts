/**
 * The OpenAI-compatible provider against a Chat Completions server on a loopback port: the exact request
 * bodies (tools, tool results, tool call ids), the headers for OpenAI and Azure, and every failure mode.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { type ModelProviderError, OpenAIChatProvider } from '../../src/providers/index.js';
import type { ModelMessage, ModelToolDefinition } from '../../src/providers/types.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';
import { type FakeApi, openAIResponse, startFakeApi } from './fake-api.js';

const readNote: ModelToolDefinition = {
  name: 'mcp__notes__read_note',
  description: 'Read one note by id.',
  inputSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { id: { type: 'string', description: 'Note id' } },
    required: ['id'],
    additionalProperties: false,
  },
};
const listNotes: ModelToolDefinition = {
  name: 'mcp__notes__list_notes',
  description: '',
  inputSchema: { type: 'object' },
};

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(async () => {
  await api.close();
});

function provider(extra: Partial<ConstructorParameters<typeof OpenAIChatProvider>[0]> = {}) {
  return new OpenAIChatProvider({
    baseURL: `${api.url}/v1`,
    apiKey: 'sk-test-secret',
    model: 'gpt-test',
    ...extra,
  });
}

describe('OpenAIChatProvider', () => {
  it('sends tools, tool calls and tool results in the exact Chat Completions format', async () => {
    const model = provider();
    api.reply({
      body: openAIResponse({
        tool_calls: [
          { id: 'call_A1', name: 'mcp__notes__list_notes', arguments: '{}' },
          { id: 'call_B2', name: 'mcp__notes__read_note', arguments: '{"id":"drafts/welcome"}' },
        ],
      }),
    });
    const first = await model.generate({
      instructions: 'You keep notes.',
      messages: [{ role: 'user', content: 'What is in my notes?' }],
      tools: [readNote, listNotes],
    });
    expect(first).toEqual({
      text: '',
      toolCalls: [
        { id: 'call_A1', name: 'mcp__notes__list_notes', arguments: {}, rawArguments: '{}' },
        {
          id: 'call_B2',
          name: 'mcp__notes__read_note',
          arguments: { id: 'drafts/welcome' },
          rawArguments: '{"id":"drafts/welcome"}',
        },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 5 },
      responseId: 'chatcmpl-test',
      model: 'gpt-test-2025',
    });
    const tools = [
      {
        type: 'function',
        function: {
          name: 'mcp__notes__read_note',
          description: 'Read one note by id.',
          parameters: {
            type: 'object',
            properties: { id: { type: 'string', description: 'Note id' } },
            required: ['id'],
            additionalProperties: false,
          },
        },
      },
      {
        type: 'function',
        function: { name: 'mcp__notes__list_notes', parameters: { type: 'object', properties: {} } },
      },
    ];
    expect(api.requests[0]?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You keep notes.' },
        { role: 'user', content: 'What is in my notes?' },
      ],
      tools,
    });

    api.reply({ body: openAIResponse({ content: 'You have a welcome note.' }) });
    const history: ModelMessage[] = [
      { role: 'user', content: 'What is in my notes?' },
      { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
      { role: 'tool', toolCallId: 'call_A1', toolName: 'mcp__notes__list_notes', content: 'drafts/welcome' },
      {
        role: 'tool',
        toolCallId: 'call_B2',
        toolName: 'mcp__notes__read_note',
        content: 'Error: Permission denied.',
        isError: true,
      },
    ];
    const second = await model.generate({
      instructions: 'You keep notes.',
      messages: history,
      tools: [readNote, listNotes],
    });
    expect(second.text).toBe('You have a welcome note.');
    expect(second.finishReason).toBe('stop');
    expect(api.requests[1]?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You keep notes.' },
        { role: 'user', content: 'What is in my notes?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_A1',
              type: 'function',
              function: { name: 'mcp__notes__list_notes', arguments: '{}' },
            },
            {
              id: 'call_B2',
              type: 'function',
              function: { name: 'mcp__notes__read_note', arguments: '{"id":"drafts/welcome"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_A1', content: 'drafts/welcome' },
        { role: 'tool', tool_call_id: 'call_B2', content: 'Error: Permission denied.' },
      ],
      tools,
    });
  });

  it('authenticates with a Bearer key on POST /v1/chat/completions, and sends no key when none is set', async () => {
    api.reply({ body: openAIResponse({ content: 'hi' }) }, { body: openAIResponse({ content: 'hi' }) });
    await provider().generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    await provider({ apiKey: undefined }).generate({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
    });
    const [withKey, without] = api.requests;
    expect(withKey?.method).toBe('POST');
    expect(withKey?.path).toBe('/v1/chat/completions');
    expect(withKey?.headers.authorization).toBe('Bearer sk-test-secret');
    expect(withKey?.headers['content-type']).toBe('application/json');
    expect(withKey?.body).toEqual({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(without?.headers.authorization).toBeUndefined();
  });

  it('serves Azure OpenAI deployments: api-key header and api-version query', async () => {
    api.reply({ body: openAIResponse({ content: 'hi' }) });
    const azure = new OpenAIChatProvider({
      baseURL: `${api.url}/openai/deployments/my-gpt`,
      apiKey: 'azure-key',
      apiKeyHeader: 'api-key',
      query: { 'api-version': '2024-10-21' },
      model: 'gpt-4o',
      providerName: 'azure.ai.openai',
    });
    await azure.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(azure.name).toBe('azure.ai.openai');
    expect(api.requests[0]?.path).toBe('/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21');
    expect(api.requests[0]?.headers['api-key']).toBe('azure-key');
    expect(api.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('merges a top-level anyOf the API would refuse, and reports the change once', async () => {
    const warnings: string[] = [];
    const model = provider({ onWarning: (m) => warnings.push(m) });
    const search: ModelToolDefinition = {
      name: 'search',
      description: 'Search by id or by text.',
      inputSchema: {
        type: 'object',
        anyOf: [
          { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
          {
            type: 'object',
            properties: { query: { type: 'string' }, limit: { type: 'integer' } },
            required: ['query'],
          },
        ],
      },
    };
    api.reply({ body: openAIResponse({ content: 'a' }) }, { body: openAIResponse({ content: 'b' }) });
    await model.generate({ messages: [{ role: 'user', content: 'x' }], tools: [search] });
    await model.generate({ messages: [{ role: 'user', content: 'x' }], tools: [search] });
    const body = api.requests[0]?.body as { tools: { function: { parameters: Record<string, unknown> } }[] };
    const sent = body.tools[0]?.function.parameters;
    expect(sent).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, query: { type: 'string' }, limit: { type: 'integer' } },
      description: 'Arguments take one of these shapes: {id} | {query, limit}.',
    });
    expect(sent).not.toHaveProperty('anyOf');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("merged the top-level 'anyOf'");
  });

  it('keeps malformed tool arguments as an error for the loop, and echoes them back verbatim', async () => {
    api.reply({
      body: openAIResponse({
        tool_calls: [{ id: 'call_bad', name: 'mcp__notes__read_note', arguments: '{"id": ' }],
      }),
    });
    const res = await provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [readNote] });
    expect(res.toolCalls[0]).toMatchObject({ id: 'call_bad', arguments: {}, rawArguments: '{"id": ' });
    expect(res.toolCalls[0]?.argumentsError).toContain('not valid JSON');
    api.reply({ body: openAIResponse({ content: 'ok' }) });
    await provider().generate({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: '', toolCalls: res.toolCalls },
        {
          role: 'tool',
          toolCallId: 'call_bad',
          toolName: 'mcp__notes__read_note',
          content: 'Error: bad',
          isError: true,
        },
      ],
      tools: [readNote],
    });
    const sent = api.requests[1]?.body as {
      messages: { tool_calls?: { function: { arguments: string } }[] }[];
    };
    expect(sent.messages[1]?.tool_calls?.[0]?.function.arguments).toBe('{"id": ');
  });

  it('accepts local servers that send tool calls without ids or with object arguments', async () => {
    api.reply({
      body: {
        model: 'llama',
        choices: [
          {
            message: {
              role: 'assistant',
              content: '',
              tool_calls: [{ function: { name: 'search', arguments: { q: 'x' } } }],
            },
            finish_reason: 'stop',
          },
        ],
      },
    });
    const res = await provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] });
    expect(res.finishReason).toBe('tool_calls');
    expect(res.toolCalls).toEqual([{ id: 'call_local_0', name: 'search', arguments: { q: 'x' } }]);
  });

  it('fails with MODEL_REQUEST_FAILED, the API message, type and request id, never the key', async () => {
    api.reply({
      status: 401,
      headers: { 'x-request-id': 'req_123' },
      body: {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      },
    });
    const err = (await provider()
      .generate({ messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e)) as ModelProviderError;
    expect(err.code).toBe('MODEL_REQUEST_FAILED');
    expect(err.status).toBe(401);
    expect(err.type).toBe('invalid_request_error');
    expect(err.requestId).toBe('req_123');
    expect(err.message).toContain('HTTP 401: Incorrect API key provided.');
    expect(err.message).toContain('Check the API key');
    expect(err.message).not.toContain('sk-test-secret');
  });

  it('retries a 429 after retry-after-ms, then succeeds', async () => {
    api.reply(
      { status: 429, headers: { 'retry-after-ms': '0' }, body: { error: { message: 'Rate limit' } } },
      { body: openAIResponse({ content: 'done' }) },
    );
    const res = await provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] });
    expect(res.text).toBe('done');
    expect(api.requests).toHaveLength(2);
  });

  it('does not retry a 400, and gives up on a 500 once retries are spent', async () => {
    api.reply({ status: 400, body: { error: { message: 'bad tools' } } });
    await expect(
      provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({ code: 'MODEL_REQUEST_FAILED', status: 400 });
    expect(api.requests).toHaveLength(1);
    api.reply({ status: 500, raw: 'oops' });
    await expect(
      provider({ maxRetries: 0 }).generate({ messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({ status: 500, message: expect.stringContaining('oops') });
  });

  it('rejects a 200 whose body is not JSON or not a completion', async () => {
    api.reply({ raw: '<html>proxy login</html>' }, { body: { choices: [] } });
    await expect(
      provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({
      code: 'MODEL_REQUEST_FAILED',
      message: expect.stringContaining('not JSON'),
    });
    await expect(
      provider().generate({ messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({
      code: 'MODEL_REQUEST_FAILED',
      message: expect.stringContaining('not a Chat Completions response (choices'),
    });
  });

  it('is cancelled by its signal and times out with REQUEST_TIMEOUT', async () => {
    api.reply({ hang: true }, { hang: true });
    const controller = new AbortController();
    const pending = provider().generate({
      messages: [{ role: 'user', content: 'x' }],
      tools: [],
      signal: controller.signal,
    });
    await vi.waitFor(() => expect(api.requests).toHaveLength(1), { timeout: CONDITION_TIMEOUT_MS });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
    await expect(
      provider({ timeoutMs: 50, maxRetries: 0 }).generate({
        messages: [{ role: 'user', content: 'x' }],
        tools: [],
      }),
    ).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT', timeoutMs: 50 });
  });

  it('reports an unreachable API as CONNECTION_FAILED', async () => {
    const closed = await startFakeApi();
    await closed.close();
    const err = await new OpenAIChatProvider({ baseURL: closed.url, model: 'm', maxRetries: 0 })
      .generate({ messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e);
    expect(isInterlockError(err, 'CONNECTION_FAILED')).toBe(true);
    expect((err as Error).message).toContain(`Could not reach the OpenAI-compatible API at ${closed.url}`);
  });

  it('refuses tool names the API would refuse, and bad options, with coded errors', async () => {
    await expect(
      provider().generate({
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: `mcp__server__${'x'.repeat(60)}`, description: '', inputSchema: { type: 'object' } }],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_TOOL_SCHEMA' });
    expect(api.requests).toHaveLength(0);
    expect(() => new OpenAIChatProvider({ model: '', baseURL: 'ftp://x' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('OpenAIChatProvider.baseURL'),
      }),
    );
  });
});
