// Model providers: one interface, any OpenAI-compatible server, Anthropic, or a script.
import { AnthropicProvider, type ModelProvider, OpenAIChatProvider } from 'mcp-interlock/providers';
import { scriptedModel } from 'mcp-interlock/testing';

export function providers(env: NodeJS.ProcessEnv = process.env): Record<string, ModelProvider> {
  return {
    openai: new OpenAIChatProvider({ apiKey: env.OPENAI_API_KEY, model: 'gpt-4o-mini' }),
    // Same wire format, other servers: only baseURL (and the key, if any) change.
    ollama: new OpenAIChatProvider({ baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.1' }),
    vllm: new OpenAIChatProvider({ baseURL: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen2.5-7B-Instruct' }),
    azure: new OpenAIChatProvider({
      baseURL: 'https://my-resource.openai.azure.com/openai/deployments/my-gpt-4o',
      query: { 'api-version': '2024-10-21' },
      apiKey: env.AZURE_OPENAI_API_KEY,
      apiKeyHeader: 'api-key',
      model: 'gpt-4o',
      providerName: 'azure.ai.openai',
    }),
    anthropic: new AnthropicProvider({
      apiKey: env.ANTHROPIC_API_KEY,
      model: 'claude-sonnet-4-5',
      maxTokens: 2048,
    }),
    scripted: scriptedModel(['Hello from a script.']),
  };
}

export async function main() {
  const all = providers({});
  // What a tool with a top-level `oneOf` (refused by both APIs) becomes in an OpenAI request.
  const body = (all.openai as OpenAIChatProvider).buildBody({
    messages: [{ role: 'user', content: 'Move report.txt to the archive.' }],
    tools: [
      {
        name: 'mcp__files__move',
        description: 'Move or trash a file.',
        inputSchema: {
          oneOf: [
            {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' } },
              required: ['from', 'to'],
            },
            {
              type: 'object',
              properties: { from: { type: 'string' }, trash: { const: true } },
              required: ['from', 'trash'],
            },
          ],
        },
      },
    ],
  });
  const reply = await all.scripted?.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
  return {
    names: Object.entries(all).map(([key, p]) => `${key}: ${p.name}/${p.model}`),
    parameters: (body.tools as { function: { parameters: unknown } }[])[0]?.function.parameters,
    // { type: 'object', properties: { from, to, trash }, required: ['from'], description: 'Arguments take one of ...' }
    scripted: reply?.text, // 'Hello from a script.'
  };
}
