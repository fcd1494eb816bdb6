// An engine has one HTTP stack: its guard, proxy and certificates apply to every agent's MCP servers and to the
// model provider too, which is moved onto the engine's dispatcher because it brought none of its own.
import { Engine } from 'mcp-interlock/engine';
import { NetworkPolicyError } from 'mcp-interlock/net';
import { OpenAIChatProvider } from 'mcp-interlock/providers';

export async function main(baseURL = 'http://169.254.169.254/v1') {
  await using engine = new Engine({
    network: { allowPrivate: false, allowHosts: ['llm-gateway.internal'] },
    http: { proxy: 'env' },
  });
  const model = new OpenAIChatProvider({
    baseURL,
    apiKey: 'sk-example',
    model: 'gpt-4o-mini',
    maxRetries: 0,
  });
  const agent = await engine.createAgent({ name: 'assistant', model });
  try {
    await agent.run('hello');
    return { refused: false };
  } catch (err) {
    let cause: unknown = err;
    while (cause instanceof Error && !(cause instanceof NetworkPolicyError)) cause = cause.cause;
    return { refused: cause instanceof NetworkPolicyError }; // true: a metadata address never gets the key
  }
}
