// Model APIs through the same guard, proxy and certificates as the MCP servers: build one dispatcher and give
// it to the model provider.
import { createDispatcher, NetworkGuard, NetworkPolicyError } from '../../../src/interop/index.js';
import { OpenAIChatProvider } from '../../../src/providers/index.js';

export async function main(baseURL = 'http://169.254.169.254/v1') {
  const network = { allowPrivate: false, allowHosts: ['llm-gateway.internal'] };
  const dispatcher = createDispatcher(new NetworkGuard(network), { proxy: 'env' });
  const model = new OpenAIChatProvider({
    baseURL,
    apiKey: 'sk-example',
    model: 'gpt-4o-mini',
    dispatcher,
    maxRetries: 0,
  });
  try {
    await model.generate({ messages: [{ role: 'user', content: 'hello' }], tools: [] });
    return { refused: false };
  } catch (err) {
    let cause: unknown = err;
    while (cause instanceof Error && !(cause instanceof NetworkPolicyError)) cause = cause.cause;
    return { refused: cause instanceof NetworkPolicyError }; // true: a metadata address never gets the key
  } finally {
    await dispatcher.close();
  }
}
