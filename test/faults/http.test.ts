/** Fault injection over Streamable HTTP with a real server process on a loopback port. */
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { type FaultyHttpServer, startFaultyHttp } from '../helpers/faulty-http.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(
  extra: Record<string, unknown> = {},
): Promise<{ server: FaultyHttpServer; manager: MCPClientManager }> {
  const server = await startFaultyHttp();
  cleanup.push(() => server.kill());
  const manager = new MCPClientManager({ capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) });
  cleanup.push(() => manager.close());
  await manager.connectServer({
    name: 'remote',
    transport: 'http',
    url: server.url,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 20 },
    ...extra,
  } as never);
  return { server, manager };
}

function next<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

describe('Streamable HTTP faults', () => {
  it('reports HTTP 500 as SERVER_ERROR and keeps the session', async () => {
    const { server, manager } = await setup();
    await server.inject('500');
    await expect(manager.executeTool('mcp__remote__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'SERVER_ERROR',
    });
    await expect(manager.executeTool('mcp__remote__echo', { text: 'still' })).resolves.toBe('still');
    expect(manager.health().remote?.reconnects).toBe(0);
  });

  it('starts a new session when the server answers 404 for ours, and re-sends the call it never processed', async () => {
    const { server, manager } = await setup();
    await server.inject('forget');
    await expect(manager.executeTool('mcp__remote__count', {})).resolves.toBe('1');
    expect(manager.health().remote?.reconnects).toBe(1);
  });

  it('rejects a call whose connection is reset with CONNECTION_LOST, without sending it twice', async () => {
    const { server, manager } = await setup();
    await server.inject('reset');
    await expect(manager.executeTool('mcp__remote__count', {})).rejects.toMatchObject({
      code: 'CONNECTION_LOST',
    });
    await expect.poll(() => manager.getConnection('remote')?.state, { timeout: 5_000 }).toBe('ready');
    await expect(manager.executeTool('mcp__remote__count', {})).resolves.toBe('1');
  });

  it('rejects a call promptly when its SSE response stream drops mid-call', async () => {
    const { server, manager } = await setup();
    await server.inject('drop');
    const started = performance.now();
    await expect(
      manager.executeTool('mcp__remote__echo', { text: 'x' }, { timeoutMs: 20_000 }),
    ).rejects.toMatchObject({
      code: 'CONNECTION_LOST',
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    await expect.poll(() => manager.getConnection('remote')?.state, { timeout: 5_000 }).toBe('ready');
    await expect(manager.executeTool('mcp__remote__echo', { text: 'again' })).resolves.toBe('again');
  });

  it('reconnects by itself when the server is restarted on the same port', async () => {
    const { server, manager } = await setup();
    const firstPid = await manager.executeTool('mcp__remote__pid', {});
    const reconnected = next(manager, 'reconnected');
    await server.kill();
    const restarted = await startFaultyHttp(server.port);
    cleanup.push(() => restarted.kill());
    await reconnected;
    const secondPid = await manager.executeTool('mcp__remote__pid', {});
    expect(secondPid).not.toBe(firstPid);
  });
});

describe('legacy SSE faults', () => {
  it('reconnects by itself when an SSE server is restarted on the same port', async () => {
    const { startHttpFixture } = await import('../helpers/http-fixtures.js');
    const first = await startHttpFixture({ transport: 'sse' });
    cleanup.push(() => first.close());
    const manager = new MCPClientManager({ capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) });
    cleanup.push(() => manager.close());
    await manager.connectServer({
      name: 'legacy',
      transport: 'sse',
      url: first.sseUrl,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 30 },
    });
    const reconnected = next(manager, 'reconnected');
    await first.close();
    const second = await startHttpFixture({ transport: 'sse', port: first.port });
    cleanup.push(() => second.close());
    await reconnected;
    await expect(manager.executeTool('mcp__legacy__echo', { text: 'via sse again' })).resolves.toContain(
      'via sse again',
    );
  });
});

describe('health', () => {
  it('reports state, counts and latency percentiles per server', async () => {
    const { manager } = await setup();
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
