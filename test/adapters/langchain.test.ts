/**
 * `toLangChainTools` against real LangChain.js (@langchain/core 1.x, langchain 1.x): `createAgent`'s own loop,
 * driven by LangChain's `fakeModel()` as a scripted model, calls server-everything's tools through the gate.
 */
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { toLangChainTools } from '../../src/adapters/langchain/index.js';
import { PermissionDeniedError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/index.js';
import { ECHO, GET_SUM, PNG_BASE64_PREFIX, SECRET_REASON, TINY_IMAGE, useEverything } from './helpers.js';

function toolMessages(messages: readonly BaseMessage[]): ToolMessage[] {
  return messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
}

describe('toLangChainTools with the LangChain agent loop', () => {
  const setup = useEverything();

  it("hands out the tools the policy could allow, with the servers' JSON Schemas", () => {
    const tools = toLangChainTools(setup.manager);
    expect(tools.map((t) => t.name).sort()).toEqual([ECHO, TINY_IMAGE]);
    expect(tools.find((t) => t.name === ECHO)?.schema).toEqual(setup.manager.getTool(ECHO)?.inputSchema);
  });

  it('runs an allowed call on the server and answers a denied one with an error ToolMessage', async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: ECHO, args: { message: 'hello from LangChain' }, id: 'call_ok' },
        { name: ECHO, args: { message: 'secret plan' }, id: 'call_denied' },
      ])
      .respond(new AIMessage('done'));
    const agent = createAgent({ model, tools: toLangChainTools(setup.manager) });
    const sentBefore = setup.sentCalls();

    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Echo two things.' }] });

    const byId = new Map(toolMessages(result.messages).map((m) => [m.tool_call_id, m]));
    expect(byId.get('call_ok')?.content).toBe('Echo: hello from LangChain');
    expect(byId.get('call_ok')?.status).toBe('success');
    const denied = byId.get('call_denied');
    expect(denied?.status).toBe('error');
    expect(String(denied?.content)).toContain(SECRET_REASON);
    expect(String(denied?.content)).toContain('do not retry');
    expect(result.messages.at(-1)?.content).toBe('done');
    // The model's second turn saw both answers; only the allowed call reached the server.
    expect(toolMessages(model.calls[1]?.messages ?? [])).toHaveLength(2);
    expect(setup.sentCalls() - sentBefore).toBe(1);
  });

  it('refuses a tool outside the policy even when every tool is handed out', async () => {
    const model = fakeModel()
      .respondWithTools([{ name: GET_SUM, args: { a: 1, b: 2 }, id: 'call_sum' }])
      .respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: toLangChainTools(setup.manager, { tools: 'all' }) });
    const sentBefore = setup.sentCalls();
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Add.' }] });
    const [message] = toolMessages(result.messages);
    expect(message?.status).toBe('error');
    expect(String(message?.content)).toContain("Permission denied: 'execute' on 'mcp:everything:get-sum'");
    expect(setup.sentCalls()).toBe(sentBefore);
  });

  it('throws the coded error when a tool is invoked directly, without a tool call', async () => {
    const echo = toLangChainTools(setup.manager).find((t) => t.name === ECHO);
    await expect(echo?.invoke({ message: 'secret direct' })).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(echo?.invoke({ message: 'plain' })).resolves.toBe('Echo: plain');
  });

  it('sends an image result as text by default and as standard image blocks with results: content', async () => {
    const run = async (results: 'text' | 'content') => {
      const model = fakeModel()
        .respondWithTools([{ name: TINY_IMAGE, args: {}, id: 'call_image' }])
        .respond(new AIMessage('seen'));
      const agent = createAgent({ model, tools: toLangChainTools(setup.manager, { toolResults: results }) });
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'Show me.' }] });
      return toolMessages(result.messages)[0]?.content;
    };

    const text = await run('text');
    expect(typeof text).toBe('string');
    expect(text).toContain('[image: image/png,');

    const content = (await run('content')) as { type: string; [k: string]: unknown }[];
    expect(Array.isArray(content)).toBe(true);
    expect(content[0]).toMatchObject({ type: 'text' });
    expect(content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(String(content[1]?.data)).toMatch(new RegExp(`^${PNG_BASE64_PREFIX}`));
  });

  it("answers a call the server reports as failed (isError) with an error ToolMessage carrying the server's text", async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:fail', 'execute');
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const model = fakeModel()
      .respondWithTools([{ name: 'mcp__echo__fail', args: { message: 'disk full' }, id: 'call_fail' }])
      .respond(new AIMessage('sorry'));
    const agent = createAgent({ model, tools: toLangChainTools(manager) });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Try.' }] });
    const [message] = toolMessages(result.messages);
    expect(message?.status).toBe('error');
    expect(message?.content).toBe('Error: disk full');
  });
});
