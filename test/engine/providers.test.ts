/**
 * An agent on each real provider, against a fake API on a loopback port that speaks that API's wire format,
 * and a real MCP server (the echo fixture): the exact bodies sent, with the tools the policy allows, the
 * tool call ids, and the results and denials the agent sent back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { AnthropicProvider, type ModelProvider, OpenAIChatProvider } from '../../src/providers/index.js';
import { descendantPids, nodeFixture } from '../helpers/index.js';
import { anthropicResponse, type FakeApi, openAIResponse, startFakeApi } from '../providers/fake-api.js';

const policy = {
  version: 1,
  rules: [
    { effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
    { effect: 'deny', resource: 'mcp:echo:get_env', actions: '*', description: 'No secrets' },
  ],
};
const DENIAL =
  "Error: Permission denied: 'execute' on 'mcp:echo:get_env'. Denied by rule 'rule-2' (mcp:echo:get_env): No secrets. " +
  'This call is not allowed, so do not retry it; use another tool or tell the user what you could not do.';

let api: FakeApi;
let engine: Engine;
beforeAll(async () => {
  api = await startFakeApi();
  engine = new Engine({ maxTurns: 4 });
});
afterAll(async () => {
  await engine.close();
  await api.close();
});
afterEach(() => {
  api.requests.length = 0;
  expect(descendantPids(process.pid)).toEqual([]);
});

async function runAgent(model: ModelProvider) {
  const agent = await engine.createAgent({
    name: 'wire',
    model,
    instructions: 'Answer briefly.',
    capabilities: policy,
    mcpServers: [{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }],
  });
  try {
    return await agent.run('Echo hi and read HOME.');
  } finally {
    await agent.close();
  }
}

const echoSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

describe('an agent on OpenAI Chat Completions', () => {
  it('sends the allowed tools, then each result under its tool_call_id', async () => {
    api.reply(
      {
        body: openAIResponse({
          tool_calls: [
            { id: 'call_echo', name: 'mcp__echo__echo', arguments: '{"text":"hi"}' },
            { id: 'call_env', name: 'mcp__echo__get_env', arguments: '{"name":"HOME"}' },
          ],
        }),
      },
      { body: openAIResponse({ content: 'Echoed hi; HOME is off limits.' }) },
    );
    const result = await runAgent(
      new OpenAIChatProvider({ baseURL: `${api.url}/v1`, apiKey: 'k', model: 'gpt-test' }),
    );
    expect(result.output).toBe('Echoed hi; HOME is off limits.');
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
    const tools = [
      {
        type: 'function',
        function: { name: 'mcp__echo__echo', description: 'Echoes the text back.', parameters: echoSchema },
      },
    ];
    expect(api.requests[0]?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Echo hi and read HOME.' },
      ],
      tools,
    });
    expect(api.requests[1]?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Echo hi and read HOME.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_echo',
              type: 'function',
              function: { name: 'mcp__echo__echo', arguments: '{"text":"hi"}' },
            },
            {
              id: 'call_env',
              type: 'function',
              function: { name: 'mcp__echo__get_env', arguments: '{"name":"HOME"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_echo', content: 'hi' },
        { role: 'tool', tool_call_id: 'call_env', content: DENIAL },
      ],
      tools,
    });
  });
});

describe('an agent on Anthropic Messages', () => {
  it('sends the allowed tools, then the results as tool_result blocks of one user message', async () => {
    api.reply(
      {
        body: anthropicResponse([
          { type: 'tool_use', id: 'toolu_echo', name: 'mcp__echo__echo', input: { text: 'hi' } },
          { type: 'tool_use', id: 'toolu_env', name: 'mcp__echo__get_env', input: { name: 'HOME' } },
        ]),
      },
      { body: anthropicResponse([{ type: 'text', text: 'Done.' }]) },
    );
    const result = await runAgent(
      new AnthropicProvider({ baseURL: api.url, apiKey: 'k', model: 'claude-test' }),
    );
    expect(result.output).toBe('Done.');
    const tools = [
      { name: 'mcp__echo__echo', description: 'Echoes the text back.', input_schema: echoSchema },
    ];
    expect(api.requests[0]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Answer briefly.',
      messages: [{ role: 'user', content: 'Echo hi and read HOME.' }],
      tools,
    });
    expect(api.requests[1]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Answer briefly.',
      messages: [
        { role: 'user', content: 'Echo hi and read HOME.' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_echo', name: 'mcp__echo__echo', input: { text: 'hi' } },
            { type: 'tool_use', id: 'toolu_env', name: 'mcp__echo__get_env', input: { name: 'HOME' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_echo', content: 'hi' },
            { type: 'tool_result', tool_use_id: 'toolu_env', content: DENIAL, is_error: true },
          ],
        },
      ],
      tools,
    });
  });
});
