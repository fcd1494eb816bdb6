/**
 * One HTTP stack per engine (issue 9): every agent's HTTP servers and the model providers go through the engine's
 * guarded dispatcher, so its SSRF guard and its proxy apply to both without the app wiring anything. Real
 * loopback servers: the echo MCP fixture over Streamable HTTP, a fake OpenAI-compatible API and a counting proxy.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { createHttpClient } from '../../src/net/http.js';
import { NetworkPolicyError } from '../../src/net/network.js';
import { OpenAIChatProvider } from '../../src/providers/index.js';
import { startHttpFixture } from '../helpers/index.js';
import { type FakeApi, openAIResponse, startFakeApi } from '../providers/fake-api.js';
import { closesAfterEach, policyError } from './cleanup.js';
import { startCountingProxy } from './net-fixtures.js';

const track = closesAfterEach();

const policy = { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:*', actions: 'execute' }] };

async function fakeModel(): Promise<FakeApi> {
  const api = track(await startFakeApi());
  return api;
}

describe("an engine's HTTP stack", () => {
  it('puts a model provider given without a dispatcher on the engine guard: a metadata endpoint is refused', async () => {
    const engine = track(new Engine());
    const model = new OpenAIChatProvider({
      baseURL: 'http://169.254.169.254/v1',
      apiKey: 'sk-never-sent',
      model: 'm',
      maxRetries: 0,
    });
    const agent = await engine.createAgent({ name: 'a', model });
    const err = await agent.run('hi').catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('link-local');
    expect(String((err as Error).message)).not.toContain('sk-never-sent');
  });

  it('refuses a loopback model API and a loopback MCP server alike under network: {}, and allows both by host', async () => {
    const api = await fakeModel();
    const mcp = track(await startHttpFixture({ transport: 'http' }));
    const model = new OpenAIChatProvider({
      baseURL: `${api.url}/v1`,
      apiKey: 'k',
      model: 'm',
      maxRetries: 0,
    });
    const servers = [
      { name: 'echo', transport: 'http' as const, url: mcp.endpoint, reconnect: { enabled: false } },
    ];

    const strict = track(new Engine({ network: {} }));
    const refused = await strict.createAgent({
      name: 'strict',
      model,
      mcpServers: servers,
      capabilities: policy,
    });
    expect(refused.servers).toEqual({ echo: false });
    const err = await refused.run('hi').catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('loopback');
    expect(api.requests).toHaveLength(0);

    const open = track(new Engine({ network: { allowHosts: ['127.0.0.1'] } }));
    const agent = await open.createAgent({ name: 'open', model, mcpServers: servers, capabilities: policy });
    expect(agent.servers).toEqual({ echo: true });
    api.reply({ body: openAIResponse({ content: 'hello' }) });
    expect((await agent.run('hi')).output).toBe('hello');
  });

  it('sends MCP traffic and model requests of every agent through the one configured proxy', async () => {
    const api = await fakeModel();
    const mcp = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const engine = track(new Engine({ http: { proxy: { http: proxy.url, https: proxy.url } } }));
    const model = new OpenAIChatProvider({
      baseURL: `${api.url}/v1`,
      apiKey: 'k',
      model: 'm',
      maxRetries: 0,
    });
    const servers = [{ name: 'echo', transport: 'http' as const, url: mcp.endpoint }];
    const first = await engine.createAgent({
      name: 'first',
      model,
      mcpServers: servers,
      capabilities: policy,
    });
    const second = await engine.createAgent({
      name: 'second',
      model,
      mcpServers: servers,
      capabilities: policy,
    });
    expect([first.servers, second.servers]).toEqual([{ echo: true }, { echo: true }]);
    api.reply({ body: openAIResponse({ content: 'one' }) }, { body: openAIResponse({ content: 'two' }) });
    expect((await first.run('hi')).output).toBe('one');
    expect((await second.run('hi')).output).toBe('two');
    const seen = [...proxy.connects, ...proxy.requests];
    expect(seen.some((s) => s.includes(`127.0.0.1:${mcp.port}`))).toBe(true);
    expect(seen.some((s) => s.includes(`127.0.0.1:${api.port}`))).toBe(true);
  });

  it("leaves a provider that brings its own dispatcher on it, and exposes the engine's for other clients", async () => {
    const api = await fakeModel();
    const own = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] } }));
    const engine = track(new Engine({ network: {} }));
    const model = new OpenAIChatProvider({
      baseURL: `${api.url}/v1`,
      apiKey: 'k',
      model: 'm',
      dispatcher: own.dispatcher,
    });
    expect(model.withDispatcher(engine.http.dispatcher as never)).toBe(model);
    const agent = await engine.createAgent({ name: 'own', model });
    api.reply({ body: openAIResponse({ content: 'own dispatcher' }) });
    expect((await agent.run('hi')).output).toBe('own dispatcher');
    expect(engine.http.dispatcher).toBeDefined();
    expect(() => engine.http.guard.checkUrl('http://127.0.0.1/')).toThrow(NetworkPolicyError);
  });

  it('tells where HTTP settings go when they are given as manager options', () => {
    expect(() => new Engine({ managerOptions: { network: {} } as never })).toThrow(
      /managerOptions.network belongs on the Engine itself/,
    );
  });
});
