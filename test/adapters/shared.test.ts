/**
 * What every adapter shares: the agent a framework's calls are made for, cancellation from the framework's
 * signal, and media parts. Against server-everything over stdio, except the audio mapping, which no npm
 * server returns: a small in-test source stands in for the manager there.
 */
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { generateText, stepCountIs } from 'ai';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { toAISDKTools } from '../../src/adapters/ai-sdk/index.js';
import { toLangChainTools } from '../../src/adapters/langchain/index.js';
import type { AdapterToolSource } from '../../src/adapters/shared.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { toToolCallResult } from '../../src/tools/normalize.js';
import { ToolWrapper } from '../../src/tools/tool-wrapper.js';
import { connectEverything } from './helpers.js';
import { aiSdkAnswer, aiSdkCallTools, aiSdkModel, aiSdkToolResultsSent } from './models.js';

describe('adapter options', () => {
  it('makes the calls for the agent given, so a rule on the agent decides them', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:everything:echo', 'execute', { when: { agent: { equals: 'alice' } } });
    await using setup = await connectEverything(capabilities);
    const { manager } = setup;

    const run = async (agent: string | undefined) => {
      const model = aiSdkModel([
        aiSdkCallTools(['mcp__everything__echo', { message: 'hi' }]),
        aiSdkAnswer('ok'),
      ]);
      await generateText({
        model,
        prompt: 'Echo.',
        tools: toAISDKTools(manager, { agent }),
        stopWhen: stepCountIs(3),
      });
      return aiSdkToolResultsSent(model, 1).call_0;
    };
    await expect(run('alice')).resolves.toEqual({ type: 'text', value: 'Echo: hi' });
    await expect(run('bob')).resolves.toMatchObject({ type: 'error-text' });
  });

  it("cancels the MCP call when the framework's run is aborted", async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:everything:trigger-long-running-operation', 'execute');
    await using setup = await connectEverything(capabilities);
    const { manager } = setup;
    const inFlight = () => manager.health().everything?.callsInFlight ?? 0;
    const controller = new AbortController();
    const model = aiSdkModel([
      aiSdkCallTools(['mcp__everything__trigger-long-running-operation', { duration: 600, steps: 600 }]),
      aiSdkAnswer('never'),
    ]);

    const run = generateText({
      model,
      prompt: 'Wait.',
      tools: toAISDKTools(manager),
      stopWhen: stepCountIs(3),
      abortSignal: controller.signal,
    });
    await expect.poll(inFlight).toBe(1);
    controller.abort();
    await expect(run).rejects.toThrow();
    await expect.poll(inFlight).toBe(0);
  });
});

describe('audio results with toolResults: content', () => {
  // No npm MCP server returns audio; this source answers like the manager would for one that does.
  const definition = {
    name: 'mcp__voice__say',
    server: 'voice',
    tool: 'say',
    description: 'Speaks a word.',
    inputSchema: { type: 'object', properties: {} },
    offline: false,
  };
  const callTool: AdapterToolSource['callTool'] = async () =>
    toToolCallResult({
      content: [
        { type: 'text', text: 'Said it.' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      ],
    });
  const say = new ToolWrapper(definition, { callTool });
  const source: AdapterToolSource = { tools: [say], visibleTools: () => [say], callTool };

  it('reaches the AI SDK model as a file-data part', async () => {
    const model = aiSdkModel([aiSdkCallTools(['mcp__voice__say', {}]), aiSdkAnswer('heard')]);
    await generateText({
      model,
      prompt: 'Say it.',
      tools: toAISDKTools(source, { toolResults: 'content' }),
      stopWhen: stepCountIs(3),
    });
    expect(aiSdkToolResultsSent(model, 1).call_0).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'Said it.\n[audio: audio/wav, 4 B]' },
        { type: 'file-data', data: 'UklGRg==', mediaType: 'audio/wav' },
      ],
    });
  });

  it('reaches the LangChain model as a standard audio block', async () => {
    const model = fakeModel()
      .respondWithTools([{ name: 'mcp__voice__say', args: {}, id: 'say' }])
      .respond(new AIMessage('heard'));
    const agent = createAgent({ model, tools: toLangChainTools(source, { toolResults: 'content' }) });
    const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'Say it.' }] });
    const result = messages.find((m) => ToolMessage.isInstance(m));
    expect(result?.content).toEqual([
      { type: 'text', text: 'Said it.\n[audio: audio/wav, 4 B]' },
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
    ]);
  });
});
