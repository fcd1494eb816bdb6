/**
 * Model providers can use the same guarded dispatcher as the MCP servers: the SSRF guard refuses a model
 * endpoint on a refused address before connecting, and an allowed one works, with the same proxy and TLS
 * settings as the manager's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/net/http.js';
import { NetworkGuard, NetworkPolicyError } from '../../src/net/network.js';
import { OpenAIChatProvider } from '../../src/providers/index.js';
import { type FakeApi, openAIResponse, startFakeApi } from '../providers/fake-api.js';

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) out.push(e);
  return out;
}

describe('a model provider on the guarded dispatcher', () => {
  it('is refused a link-local (cloud metadata) endpoint before any connection', async () => {
    const dispatcher = createDispatcher(new NetworkGuard({}));
    const model = new OpenAIChatProvider({
      baseURL: 'http://169.254.169.254/v1',
      apiKey: 'sk-never-sent',
      model: 'm',
      dispatcher,
      maxRetries: 0,
    });
    const err = await model
      .generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] })
      .catch((e: unknown) => e);
    expect(causes(err).some((e) => e instanceof NetworkPolicyError)).toBe(true);
    expect(String((err as Error).message)).not.toContain('sk-never-sent');
    await dispatcher.close();
  });

  it('is refused the metadata address by default, outside an engine and without a dispatcher', async () => {
    const model = new OpenAIChatProvider({
      baseURL: 'http://169.254.169.254/v1',
      apiKey: 'sk-never-sent',
      model: 'm',
      maxRetries: 0,
    });
    const err = await model
      .generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkPolicyError);
    expect((err as NetworkPolicyError).reason).toBe('link-local');
  });

  it('reaches an allowed endpoint through the same dispatcher', async () => {
    api = await startFakeApi();
    const dispatcher = createDispatcher(new NetworkGuard({ allowHosts: ['127.0.0.1'] }));
    const model = new OpenAIChatProvider({ baseURL: `${api.url}/v1`, apiKey: 'k', model: 'm', dispatcher });
    api.reply({ body: openAIResponse({ content: 'hello' }) });
    const answer = await model.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(answer.text).toBe('hello');
    await dispatcher.close();
  });
});
