/**
 * `toAISDKTools` against the real AI SDK (6.x): `generateText`'s own tool loop, driven by the SDK's
 * `MockLanguageModelV3` as a scripted model, calls server-everything's tools through the manager's gate.
 */
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { toAISDKTools } from '../../src/adapters/ai-sdk/index.js';
import { PermissionDeniedError } from '../../src/errors.js';
import { ECHO, GET_SUM, PNG_BASE64_PREFIX, SECRET_REASON, TINY_IMAGE, useEverything } from './helpers.js';
import {
  aiSdkModel,
  aiSdkAnswer as answer,
  aiSdkCallTools as callTools,
  aiSdkToolResultsSent as toolResultsSent,
} from './models.js';

describe('toAISDKTools with the AI SDK agent loop', () => {
  const setup = useEverything();

  it("hands out the tools the policy could allow, with the servers' JSON Schemas", () => {
    const tools = toAISDKTools(setup.manager);
    expect(Object.keys(tools).sort()).toEqual([ECHO, TINY_IMAGE]);
    expect(Object.keys(toAISDKTools(setup.manager, { tools: 'all' }))).toContain(GET_SUM);
    const echo = tools[ECHO];
    expect(echo?.type).toBe('dynamic');
    expect((echo?.inputSchema as { jsonSchema?: unknown } | undefined)?.jsonSchema).toEqual(
      setup.manager.getTool(ECHO)?.inputSchema,
    );
  });

  it('runs an allowed call on the server and returns a denied one as a tool error the model reads', async () => {
    const model = aiSdkModel([
      callTools([ECHO, { message: 'hello from the AI SDK' }], [ECHO, { message: 'secret plan' }]),
      answer('done'),
    ]);
    const sentBefore = setup.sentCalls();
    const result = await generateText({
      model,
      tools: toAISDKTools(setup.manager),
      prompt: 'Echo two things.',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('done');
    const first = result.steps[0];
    expect(first?.toolResults.map((r) => [r.toolName, r.output])).toEqual([
      [ECHO, 'Echo: hello from the AI SDK'],
    ]);
    const errors = first?.content.filter((p) => p.type === 'tool-error') ?? [];
    expect(errors).toHaveLength(1);
    expect(errors[0]?.error).toBeInstanceOf(PermissionDeniedError);
    // The model's next request carries the allowed result and the denial, reason included.
    const sent = toolResultsSent(model, 1);
    expect(sent.call_0).toEqual({ type: 'text', value: 'Echo: hello from the AI SDK' });
    expect(sent.call_1).toMatchObject({ type: 'error-text' });
    expect((sent.call_1 as { value: string }).value).toContain(SECRET_REASON);
    // Only the allowed call reached server-everything; the denial is audited.
    expect(setup.sentCalls() - sentBefore).toBe(1);
    expect(setup.audit.records.filter((r) => r.effect === 'deny').map((r) => r.tool)).toContain('echo');
  });

  it('refuses a tool outside the policy even when every tool is handed out', async () => {
    const model = aiSdkModel([callTools([GET_SUM, { a: 1, b: 2 }]), answer('ok')]);
    const sentBefore = setup.sentCalls();
    await generateText({
      model,
      tools: toAISDKTools(setup.manager, { tools: 'all' }),
      prompt: 'Add.',
      stopWhen: stepCountIs(3),
    });
    const sent = toolResultsSent(model, 1);
    expect(sent.call_0).toMatchObject({ type: 'error-text' });
    expect((sent.call_0 as { value: string }).value).toContain(
      "Permission denied: 'execute' on 'mcp:everything:get-sum'",
    );
    expect(setup.sentCalls()).toBe(sentBefore);
  });

  it('sends an image result as text by default and as an image part with results: content', async () => {
    const run = async (results: 'text' | 'content') => {
      const model = aiSdkModel([callTools([TINY_IMAGE, {}]), answer('seen')]);
      await generateText({
        model,
        tools: toAISDKTools(setup.manager, { toolResults: results }),
        prompt: 'Show me.',
        stopWhen: stepCountIs(3),
      });
      return toolResultsSent(model, 1).call_0;
    };

    const text = (await run('text')) as { type: string; value: string };
    expect(text.type).toBe('text');
    expect(text.value).toContain('[image: image/png,');
    expect(text.value).not.toContain(PNG_BASE64_PREFIX);

    const content = (await run('content')) as {
      type: string;
      value: { type: string; [k: string]: unknown }[];
    };
    expect(content.type).toBe('content');
    expect(content.value[0]).toMatchObject({ type: 'text' });
    expect(content.value[1]).toMatchObject({ type: 'image-data', mediaType: 'image/png' });
    expect(String(content.value[1]?.data)).toMatch(new RegExp(`^${PNG_BASE64_PREFIX}`));
  });
});
