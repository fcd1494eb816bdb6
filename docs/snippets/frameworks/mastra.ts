// Mastra: an Agent runs its own loop; a denied call returns { error: true, message } for the model to read.
import { Agent } from '@mastra/core/agent';
import { toMastraTools } from 'mcp-interlock/mastra';
import { connectEverything } from './policy.js';

type MastraModel = ConstructorParameters<typeof Agent>[0]['model'];

/** `model` is any model Mastra takes, e.g. `openai('gpt-4.1')` from `@ai-sdk/openai` (v2 models). */
export async function ask(model: MastraModel, prompt: string) {
  await using manager = await connectEverything();
  const agent = new Agent({
    name: 'echoer',
    instructions: 'Use the tools to answer.',
    model,
    tools: toMastraTools(manager),
  });
  const result = await agent.generate(prompt, { maxSteps: 5 });
  return {
    answer: result.text,
    results: result.toolResults.map((r) => (r as { payload?: { result?: unknown } }).payload?.result),
  };
}
