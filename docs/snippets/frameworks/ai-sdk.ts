// The Vercel AI SDK: generateText runs its own tool loop; every call still passes the manager's policy.
import { generateText, type LanguageModel, stepCountIs } from 'ai';
import { toAISDKTools } from 'mcp-interlock/ai-sdk';
import { connectEverything } from './policy.js';

/** `model` is any AI SDK model, e.g. `openai('gpt-4.1')` from `@ai-sdk/openai`. */
export async function ask(model: LanguageModel, prompt: string) {
  await using manager = await connectEverything();
  const result = await generateText({
    model,
    prompt,
    tools: toAISDKTools(manager), // { mcp__everything__echo, mcp__everything__get-tiny-image }
    stopWhen: stepCountIs(5),
  });
  const parts = result.steps.flatMap((step) => step.content);
  return {
    answer: result.text,
    results: parts.flatMap((p) => (p.type === 'tool-result' ? [p.output] : [])),
    // A denial is a tool-error: the model reads its message, your code gets the coded error.
    denials: parts.flatMap((p) => (p.type === 'tool-error' ? [(p.error as { code?: string }).code] : [])),
  };
}
