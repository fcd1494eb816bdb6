/**
 * The manager as a façade (issue 15): the connection registry, the catalog reporter and the call path each keep
 * their own state. These tests pin what the split must not change, and what apps may read of a connection.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, isInterlockError } from '../../src/errors.js';
import type { ServerConnectionInfo } from '../../src/interop/connection.js';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';

function newManager(): MCPClientManager {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:echo:*', 'execute');
  return new MCPClientManager({ capabilities });
}

describe('the manager over its connection registry and catalog reporter', () => {
  it('refreshes a connected server on demand and reports nothing when its tools did not change', async () => {
    await using manager = newManager();
    await manager.connectAll([{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }]);
    const before = manager.tools.map((t) => t.name);
    const changes: MCPManagerEvents['tools_changed'][] = [];
    manager.on('tools_changed', (e) => changes.push(e));
    await manager.refreshTools('echo');
    expect(manager.tools.map((t) => t.name)).toEqual(before);
    expect(changes).toEqual([]);
  });

  it('brings back none of a disconnected server’s tools when it is refreshed, and says it is not connected', async () => {
    await using manager = newManager();
    await manager.connectAll([{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }]);
    const removed: MCPManagerEvents['tools_changed'][] = [];
    manager.on('tools_changed', (e) => removed.push(e));
    await manager.disconnectServer('echo');
    expect(removed).toHaveLength(1);
    expect(removed[0]?.removed).toContain('mcp__echo__echo');
    const error = await manager.refreshTools('echo').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isInterlockError(error) && error.code).toBe('NOT_CONNECTED');
    expect(manager.tools).toEqual([]);
    expect(manager.getConnection('echo')).toBeUndefined();
  });

  it('keeps offline tools of a server that failed to connect, and reports the failure in health()', async () => {
    await using manager = newManager();
    manager.registerTools('broken', [{ name: 'probe', inputSchema: { type: 'object' } }]);
    const connected = await manager.connectAll([
      { name: 'broken', transport: 'stdio', command: 'no-such-mcp-server', connectTimeoutMs: 5_000 },
    ]);
    expect(connected).toEqual({ broken: false });
    expect(manager.getTool('mcp__broken__probe')?.offline).toBe(true);
    const health = manager.health().broken;
    expect(health?.state).toBe('failed');
    expect(health?.lastError?.code).toBe('CONNECTION_FAILED');
    expect(health?.calls).toBe(0);
  });

  it('counts calls in health() and has none in flight once they settle', async () => {
    await using manager = newManager();
    await manager.connectAll([{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }]);
    await Promise.all([1, 2, 3].map((n) => manager.executeTool('mcp__echo__echo', { text: `call ${n}` })));
    const health = manager.health().echo;
    expect(health?.calls).toBe(3);
    expect(health?.callsInFlight).toBe(0);
    expect(health?.errors).toBe(0);
  });

  it('lets apps read a connection but not change it (a type-level check, run by tsc)', async () => {
    await using manager = newManager();
    await manager.connectAll([{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }]);
    const info: ServerConnectionInfo | undefined = manager.getConnection('echo');
    expect(info?.state).toBe('ready');
    expect(info?.tools.some((t) => t.name === 'echo')).toBe(true);
    if (info !== undefined && Math.random() > 2) {
      // Never runs: tsc fails the typecheck if any of these becomes writable through the public type.
      // @ts-expect-error tools are the connection's own
      info.tools = [];
      // @ts-expect-error state changes only inside the connection
      info.state = 'closed';
      // @ts-expect-error the client is not part of what apps read
      void info.client;
    }
  });

  it('checks every option once, when the manager is made, naming the bad ones', () => {
    const issuesOf = (make: () => unknown) => {
      try {
        make();
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).issues?.map((i) => i.path);
      }
      throw new Error('expected INVALID_CONFIG');
    };
    expect(issuesOf(() => new MCPClientManager({ principal: 'p'.repeat(257) }))).toEqual(['principal']);
    expect(issuesOf(() => new MCPClientManager({ argumentLimits: { maxBytes: -1 } }))).toEqual([
      'argumentLimits.maxBytes',
    ]);
    expect(
      issuesOf(() => new MCPClientManager({ httpClient: {} as never, fetch: globalThis.fetch })),
    ).toEqual(['fetch']);
  });
});
