/**
 * Multimodal tool results through the providers (issue 18): with `toolResults: 'content'`, an image a real
 * MCP server returns (server-everything's `get-tiny-image`, over stdio) reaches an OpenAI-compatible API as an
 * `image_url` part and the Anthropic API as an `image` block of the `tool_result`; by default the request
 * carries the text with its placeholder only, exactly as before.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { AnthropicProvider, OpenAIChatProvider } from '../../src/providers/index.js';
import type { ModelProvider } from '../../src/providers/types.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { AgentSession } from '../../src/session/agent-session.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';
import { descendantPids } from '../helpers/index.js';
import { anthropicResponse, type FakeApi, openAIResponse, startFakeApi } from '../providers/fake-api.js';

const TINY_IMAGE = 'mcp__everything__get-tiny-image';
const PNG_BASE64_PREFIX = 'iVBORw0KGgo';

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(async () => {
  await api.close();
  expect(descendantPids(process.pid)).toEqual([]);
});

/** Runs one agent turn that calls get-tiny-image, then answers; returns the second request's body. */
async function runImageCall(model: ModelProvider, toolResults?: 'text' | 'content'): Promise<unknown> {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:get-tiny-image', 'execute');
  await using agent = new AgentSession({
    name: 'viewer',
    model,
    capabilities,
    toolResults,
    interop: {
      mcpServers: [
        {
          name: 'everything',
          transport: 'stdio',
          command: process.execPath,
          args: [EVERYTHING_BIN, 'stdio'],
        },
      ],
    },
  });
  const result = await agent.run('Show me the logo.');
  expect(result.status).toBe('completed');
  expect(result.steps.map((s) => [s.tool, s.decision])).toEqual([[TINY_IMAGE, 'allow']]);
  expect(api.requests).toHaveLength(2);
  return api.requests[1]?.body;
}

describe('image results through the OpenAI-compatible provider', () => {
  const openai = () =>
    new OpenAIChatProvider({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' });
  const script = () =>
    api.reply(
      { body: openAIResponse({ tool_calls: [{ id: 'call_img', name: TINY_IMAGE, arguments: '{}' }] }) },
      { body: openAIResponse({ content: 'A logo.' }) },
    );

  it('sends only the text with its placeholder by default', async () => {
    script();
    const body = (await runImageCall(openai())) as { messages: Record<string, unknown>[] };
    const last = body.messages.at(-1);
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'call_img' });
    expect(String(last?.content)).toContain('[image: image/png,');
    expect(JSON.stringify(body)).not.toContain(PNG_BASE64_PREFIX);
  });

  it("follows the tool messages with the image as an image_url part with toolResults: 'content'", async () => {
    script();
    const body = (await runImageCall(openai(), 'content')) as { messages: Record<string, unknown>[] };
    const [tool, user] = body.messages.slice(-2);
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'call_img' });
    expect(String(tool?.content)).toContain('[image: image/png,');
    expect(user?.role).toBe('user');
    const parts = user?.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts[0]?.text).toContain(`tool call call_img (${TINY_IMAGE})`);
    expect(parts[1]?.type).toBe('image_url');
    expect(parts[1]?.image_url?.url).toMatch(new RegExp(`^data:image/png;base64,${PNG_BASE64_PREFIX}`));
  });
});

describe('image results through the Anthropic provider', () => {
  const anthropic = () =>
    new AnthropicProvider({ baseURL: api.url, apiKey: 'sk-ant-test', model: 'claude-test' });
  const script = () =>
    api.reply(
      { body: anthropicResponse([{ type: 'tool_use', id: 'toolu_img', name: TINY_IMAGE, input: {} }]) },
      { body: anthropicResponse([{ type: 'text', text: 'A logo.' }]) },
    );

  /** The `tool_result` block of the request's last message. */
  const toolResult = (body: unknown) => {
    const messages = (body as { messages: { role: string; content: Record<string, unknown>[] }[] }).messages;
    return messages.at(-1)?.content.find((b) => b.type === 'tool_result');
  };

  it('sends the tool result as text by default', async () => {
    script();
    const result = toolResult(await runImageCall(anthropic()));
    expect(typeof result?.content).toBe('string');
    expect(String(result?.content)).toContain('[image: image/png,');
  });

  it("puts the image in the tool_result as an image block with toolResults: 'content'", async () => {
    script();
    const result = toolResult(await runImageCall(anthropic(), 'content'));
    const blocks = result?.content as { type: string; text?: string; source?: Record<string, string> }[];
    expect(blocks[0]?.type).toBe('text');
    expect(blocks[0]?.text).toContain('[image: image/png,');
    expect(blocks[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png' } });
    expect(blocks[1]?.source?.data).toMatch(new RegExp(`^${PNG_BASE64_PREFIX}`));
  });
});

describe('toolResults on engine agents', () => {
  const everything = {
    name: 'everything',
    transport: 'stdio' as const,
    command: process.execPath,
    args: [EVERYTHING_BIN, 'stdio'],
  };

  it("passes toolResults: 'content' to the agent, and refuses a value it does not know", async () => {
    api.reply(
      { body: openAIResponse({ tool_calls: [{ id: 'call_img', name: TINY_IMAGE, arguments: '{}' }] }) },
      { body: openAIResponse({ content: 'A logo.' }) },
    );
    await using engine = new Engine({
      models: {
        gpt: new OpenAIChatProvider({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' }),
      },
    });
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:everything:get-tiny-image', 'execute');
    await expect(
      engine.createAgent({ name: 'x', model: 'gpt', toolResults: 'images' as 'content' }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      issues: [expect.objectContaining({ path: 'createAgent.toolResults' })],
    });

    const agent = await engine.createAgent({
      name: 'viewer',
      model: 'gpt',
      capabilities,
      mcpServers: [everything],
      toolResults: 'content',
    });
    await agent.run('Show me the logo.');
    const body = api.requests[1]?.body as { messages: { role: string; content: unknown }[] } | undefined;
    expect(JSON.stringify(body?.messages.at(-1))).toContain(`data:image/png;base64,${PNG_BASE64_PREFIX}`);
  });
});
