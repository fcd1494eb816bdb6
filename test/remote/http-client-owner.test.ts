/**
 * One owner of "an HTTP client from settings" (issue 15): an engine builds its stack once and hands that very client
 * to every agent's manager, which never closes it; a standalone manager builds its own from `fetch`, `network` and
 * `http` through the same function (its `network` and `http` are covered in network.test.ts: guard and proxy; a
 * shared client across managers in server-http.test.ts). Real loopback servers: the echo MCP fixture over
 * Streamable HTTP and a counting proxy.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import type { MCPClientManagerOptions } from '../../src/interop/manager-options.js';
import type { HttpClient } from '../../src/net/http.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { scriptedModel } from '../../src/testing/index.js';
import { startHttpFixture } from '../helpers/index.js';
import { closesAfterEach } from './cleanup.js';
import { startCountingProxy } from './net-fixtures.js';

const track = closesAfterEach();
const policy = { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:*', actions: 'execute' }] };
const allowAll = () => CapabilitySet.allowAll({ onWarning: () => {} });

describe("an engine's HTTP client", () => {
  it("is the one client every agent's manager gets, and closing one agent leaves it working for the others", async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const given: (HttpClient | undefined)[] = [];
    const engine = track(
      new Engine({
        defaultModel: scriptedModel(['done']),
        network: { allowHosts: ['127.0.0.1'] },
        http: { proxy: { http: proxy.url, https: proxy.url } },
        createManager: (options: MCPClientManagerOptions) => {
          given.push(options.httpClient);
          return new MCPClientManager(options);
        },
      }),
    );
    const servers = [{ name: 'echo', transport: 'http' as const, url: fixture.endpoint }];
    const first = await engine.createAgent({ name: 'first', mcpServers: servers, capabilities: policy });
    const second = await engine.createAgent({ name: 'second', mcpServers: servers, capabilities: policy });
    expect(given).toHaveLength(2);
    expect(given[0]).toBe(engine.http);
    expect(given[1]).toBe(engine.http);

    // A manager closes only a client it built: the engine's stays open for the second agent.
    await first.close();
    const result = await second.callTool('mcp__echo__echo', { text: 'still here' });
    expect(result.text).toBe('still here');
    // Both agents' traffic went through the engine's stack: its proxy and its guard.
    expect(proxy.connects.concat(proxy.requests).some((s) => s.includes(`127.0.0.1:${fixture.port}`))).toBe(
      true,
    );
    expect(() => engine.http.guard.checkUrl('http://169.254.169.254/')).toThrow(/cloud metadata/);
  });
});

describe("a standalone manager's HTTP client", () => {
  it('is built from its fetch: every MCP request goes through the function given', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const seen: string[] = [];
    const manager = track(
      new MCPClientManager({
        capabilities: allowAll(),
        fetch: (url, init) => {
          seen.push(String(url));
          return fetch(url, init);
        },
      }),
    );
    await manager.connectServer({ name: 'echo', transport: 'http', url: fixture.endpoint });
    const result = await manager.callTool('mcp__echo__echo', { text: 'via fetch' });
    expect(result.text).toBe('via fetch');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((u) => u.startsWith(`http://127.0.0.1:${fixture.port}/`))).toBe(true);
  });
});
