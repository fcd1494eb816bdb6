// The Mastra agent of mastra.ts, tested offline: a scripted model plays the model's turns; the tools and the
// policy are real. No network, no key. Mastra 0.24 takes AI SDK 5 models (LanguageModelV2), so the script is
// one: Mastra's `generate` asks its `doGenerate` for each step.
import { expect, it } from 'vitest';
import { ask } from '../mastra.js';

interface Turn {
  content: Record<string, unknown>[];
  finishReason: 'tool-calls' | 'stop';
}

const callTools: Turn = {
  content: [
    { type: 'tool-call', toolCallId: 'a', toolName: 'mcp__everything__echo', input: '{"message":"hello"}' },
    {
      type: 'tool-call',
      toolCallId: 'b',
      toolName: 'mcp__everything__echo',
      input: '{"message":"secret plan"}',
    },
  ],
  finishReason: 'tool-calls',
};
const answer: Turn = {
  content: [{ type: 'text', text: 'I could echo hello, not the secret.' }],
  finishReason: 'stop',
};

/** A LanguageModelV2 that answers each step with the next turn of the script, and keeps the prompts. */
function scriptedModel(turns: Turn[]) {
  const prompts: unknown[] = [];
  const model = {
    specificationVersion: 'v2',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(options: { prompt: unknown }) {
      prompts.push(options.prompt);
      const turn = turns.shift();
      if (turn === undefined) throw new Error('The script has no more turns.');
      return { ...turn, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] };
    },
    doStream: () => Promise.reject(new Error('The scripted model does not stream.')),
  };
  // Structurally a LanguageModelV2; its type lives in a package Mastra installs under an alias.
  return { model: model as unknown as Parameters<typeof ask>[0], prompts };
}

it('Mastra: the echo comes back, and the secret is refused by the policy', async () => {
  const { model, prompts } = scriptedModel([callTools, answer]);
  const { answer: text, results } = await ask(model, 'Echo hello and my secret plan.');
  expect(text).toBe('I could echo hello, not the secret.');
  expect(results[0]).toBe('Echo: hello');
  expect(results[1]).toMatchObject({ error: true, code: 'CAPABILITY_DENIED' });
  expect((results[1] as { message: string }).message).toContain('Secrets stay on this machine.');
  expect(JSON.stringify(prompts[1])).toContain('Secrets stay on this machine.');
});
