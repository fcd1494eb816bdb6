// The OpenAI Agents SDK: run() drives the agent; a denied call reaches the model through errorFunction.
import { Agent, type Model, Runner } from '@openai/agents';
import { toOpenAIAgentsTools } from 'mcp-interlock/openai-agents';
import { connectEverything } from './policy.js';

/** `model` is a model name such as `'gpt-4.1'` (with OPENAI_API_KEY set) or any `Model`. */
export async function ask(model: string | Model, prompt: string) {
  await using manager = await connectEverything();
  const agent = new Agent({ name: 'echoer', model, tools: toOpenAIAgentsTools(manager) });
  const result = await new Runner().run(agent, prompt);
  return {
    answer: result.finalOutput,
    results: result.newItems.flatMap((item) => (item.type === 'tool_call_output_item' ? [item.output] : [])),
  };
}
