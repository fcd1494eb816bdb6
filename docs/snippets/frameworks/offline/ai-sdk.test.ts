// The AI SDK agent of ai-sdk.ts, tested offline: the AI SDK's own MockLanguageModelV3 plays the model's turns,
// the tools and the policy are real. No network, no key.
import { MockLanguageModelV3 } from 'ai/test';
import { expect, it } from 'vitest';
import { ask } from '../ai-sdk.js';

type Turn = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** The model's first turn: two tool calls. */
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
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
};
/** Its second turn, once it has read the results: the answer. */
const answer: Turn = {
  content: [{ type: 'text', text: 'I could echo hello, not the secret.' }],
  finishReason: { unified: 'stop', raw: undefined },
  usage,
  warnings: [],
};

it('AI SDK: the echo comes back, and the secret is refused by the policy', async () => {
  const model = new MockLanguageModelV3({ doGenerate: [callTools, answer] });
  const result = await ask(model, 'Echo hello and my secret plan.');
  expect(result).toEqual({
    answer: 'I could echo hello, not the secret.',
    results: ['Echo: hello'],
    denials: ['CAPABILITY_DENIED'],
  });
  // What the model read in its second turn: the denial, with the rule's reason.
  expect(JSON.stringify(model.doGenerateCalls[1]?.prompt)).toContain('Secrets stay on this machine.');
});
