/**
 * Fault injection over Streamable HTTP with a real server process on a loopback port. The re-send of a call the
 * server never received (a lost session) is in test/contracts/failures.contract.test.ts, on every transport.
 */
import { describe, expect, it } from 'vitest';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { type FaultyHttpServer, startFaultyHttp } from '../helpers/faulty-http.js';
import { startHttpFixture } from '../helpers/http-fixtures.js';

function newManager(): MCPClientManager {
  return new MCPClientManager({ capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) });
}

/** A faulty-http server and a manager connected to it as `remote`; `await using` closes both. */
async function setup(): Promise<{ server: FaultyHttpServer; manager: MCPClientManager } & AsyncDisposable> {
  const server = await startFaultyHttp();
  const manager = newManager();
  const dispose = async () => {
    await manager.close();
    await server.kill();
  };
  try {
    await manager.connectServer({
      name: 'remote',
      transport: 'http',
      url: server.url,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 20 },
    });
  } catch (err) {
    await dispose();
    throw err;
  }
  return { server, manager, [Symbol.asyncDispose]: dispose };
}

function next<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

describe('Streamable HTTP faults', () => {
  it('reports HTTP 500 as SERVER_ERROR and keeps the session', async () => {
    await using rig = await setup();
    const { server, manager } = rig;
    await server.inject('500');
    await expect(manager.executeTool('mcp__remote__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'SERVER_ERROR',
    });
    await expect(manager.executeTool('mcp__remote__echo', { text: 'still' })).resolves.toBe('still');
    expect(manager.health().remote?.reconnects).toBe(0);
  });

  it('rejects a call whose connection is reset with CONNECTION_LOST, without sending it twice', async () => {
    await using rig = await setup();
    const { server, manager } = rig;
    await server.inject('reset');
    await expect(manager.executeTool('mcp__remote__count', {})).rejects.toMatchObject({
      code: 'CONNECTION_LOST',
    });
    await expect.poll(() => manager.getConnection('remote')?.state).toBe('ready');
    await expect(manager.executeTool('mcp__remote__count', {})).resolves.toBe('1');
  });

  it('rejects a call promptly when its SSE response stream drops mid-call', async () => {
    await using rig = await setup();
    const { server, manager } = rig;
    await server.inject('drop');
    // A timeout far beyond the test's own: the call can only fail in time because the drop is noticed.
    await expect(
      manager.executeTool('mcp__remote__echo', { text: 'x' }, { timeoutMs: 120_000 }),
    ).rejects.toMatchObject({
      code: 'CONNECTION_LOST',
    });
    await expect.poll(() => manager.getConnection('remote')?.state).toBe('ready');
    await expect(manager.executeTool('mcp__remote__echo', { text: 'again' })).resolves.toBe('again');
  });

  it('reconnects by itself when the server is restarted on the same port', async () => {
    await using rig = await setup();
    const { server, manager } = rig;
    const firstPid = await manager.executeTool('mcp__remote__pid', {});
    const reconnected = next(manager, 'reconnected');
    await server.kill();
    await using _restarted = await startFaultyHttp(server.port);
    await reconnected;
    const secondPid = await manager.executeTool('mcp__remote__pid', {});
    expect(secondPid).not.toBe(firstPid);
  });
});

describe('legacy SSE faults', () => {
  it('reconnects by itself when an SSE server is restarted on the same port', async () => {
    await using first = await startHttpFixture({ transport: 'sse' });
    await using manager = newManager();
    await manager.connectServer({
      name: 'legacy',
      transport: 'sse',
      url: first.sseUrl,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 30 },
    });
    const reconnected = next(manager, 'reconnected');
    await first.close();
    await using _second = await startHttpFixture({ transport: 'sse', port: first.port });
    await reconnected;
    await expect(manager.executeTool('mcp__legacy__echo', { text: 'via sse again' })).resolves.toContain(
      'via sse again',
    );
  });
});

describe('health', () => {
  it('reports state, counts and latency percentiles per server', async () => {
    await using rig = await setup();
    const { manager } = rig;
    for (let i = 0; i < 5; i++) await manager.executeTool('mcp__remote__echo', { text: 'x' });
    await manager.executeTool('mcp__remote__nope', {}).catch(() => {});
    const health = manager.health().remote;
    expect(health).toMatchObject({
      state: 'ready',
      transport: 'http',
      reconnects: 0,
      callsInFlight: 0,
      calls: 5,
      errors: 0,
    });
    expect(health?.latencyMs.p50).toBeGreaterThan(0);
    expect(health?.latencyMs.p95).toBeGreaterThanOrEqual(health?.latencyMs.p50 ?? 0);
    expect(Date.parse(health?.since ?? '')).not.toBeNaN();
  });
});
