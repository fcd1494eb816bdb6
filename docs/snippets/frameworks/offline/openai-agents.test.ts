// The OpenAI Agents SDK agent of openai-agents.ts, tested offline: a Model (the SDK's interface for any model)
// that answers from a script plays the model's turns; the tools and the policy are real. No network, no key.
import {
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { expect, it } from 'vitest';
import { ask } from '../openai-agents.js';

/** Answers each request with the next turn of the script, and keeps the requests. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(readonly turns: AgentOutputItem[][]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.turns.shift();
    if (output === undefined) throw new Error('The script has no more turns.');
    return { usage: new Usage(), output };
  }

  // biome-ignore lint/correctness/useYield: this model does not stream; a run that asks fails loudly.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('The scripted model does not stream.');
  }
}

const echo = (callId: string, message: string): AgentOutputItem => ({
  type: 'function_call',
  callId,
  name: 'mcp__everything__echo',
  arguments: JSON.stringify({ message }),
  status: 'completed',
});

it('OpenAI Agents SDK: the echo comes back, and the secret is refused by the policy', async () => {
  setTracingDisabled(true); // traces would go to OpenAI's API
  const model = new ScriptedModel([
    [echo('a', 'hello'), echo('b', 'secret plan')],
    [
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'I could echo hello, not the secret.' }],
      },
    ],
  ]);
  const { answer, results } = await ask(model, 'Echo hello and my secret plan.');
  expect(answer).toBe('I could echo hello, not the secret.');
  expect(results[0]).toBe('Echo: hello');
  expect(String(results[1])).toContain("Error: Permission denied: 'execute' on 'mcp:everything:echo'.");
  expect(JSON.stringify(model.requests[1]?.input)).toContain('Secrets stay on this machine.');
});
