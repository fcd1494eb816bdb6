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
