// LangChain.js: createAgent runs its own loop; a denied call comes back as an error ToolMessage.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ToolMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { toLangChainTools } from 'mcp-interlock/langchain';
import { connectEverything } from './policy.js';

/** `model` is any chat model that can call tools, e.g. `new ChatOpenAI({ model: 'gpt-4.1' })`. */
export async function ask(model: BaseChatModel, prompt: string) {
  await using manager = await connectEverything();
  const agent = createAgent({ model, tools: toLangChainTools(manager) });
  const { messages } = await agent.invoke({ messages: [{ role: 'user', content: prompt }] });
  const toolMessages = messages.filter((m) => ToolMessage.isInstance(m));
  return {
    answer: messages.at(-1)?.content,
    results: toolMessages.map((m) => `${m.status}: ${String(m.content)}`),
  };
}
