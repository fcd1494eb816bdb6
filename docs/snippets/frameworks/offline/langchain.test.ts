// The LangChain agent of langchain.ts, tested offline: LangChain's own fakeModel() plays the model's turns,
// the tools and the policy are real. No network, no key.
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { expect, it } from 'vitest';
import { ask } from '../langchain.js';

it('LangChain: the echo comes back, and the secret is refused by the policy', async () => {
  const model = fakeModel()
    .respondWithTools([
      { name: 'mcp__everything__echo', args: { message: 'hello' }, id: 'a' },
      { name: 'mcp__everything__echo', args: { message: 'secret plan' }, id: 'b' },
    ])
    .respond(new AIMessage('I could echo hello, not the secret.'));
  const { answer, results } = await ask(model, 'Echo hello and my secret plan.');
  expect(answer).toBe('I could echo hello, not the secret.');
  expect(results[0]).toBe('success: Echo: hello');
  expect(results[1]).toContain("error: Error: Permission denied: 'execute' on 'mcp:everything:echo'.");
  expect(results[1]).toContain('Secrets stay on this machine.');
});
