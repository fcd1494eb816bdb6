/** Parallel connects, failing servers among healthy ones, and process cleanup: real processes only. */
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { startHttpFixture } from '../helpers/http-fixtures.js';
import { freePort } from '../helpers/net.js';
import { descendantPids, isAlive, waitForExit } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

function newManager(capabilities = new CapabilitySet()): MCPClientManager {
  return new MCPClientManager({ capabilities });
}

describe('connectAll', () => {
  it('connects five slow-starting servers in parallel, well under the sequential time', async () => {
    await using manager = newManager();
    const configs = Array.from({ length: 5 }, (_, i) => ({
      name: `slow${i}`,
      transport: 'stdio' as const,
      ...nodeFixture('echo'),
      env: { FIXTURE_START_DELAY_MS: '500' },
    }));
    const started = performance.now();
    const result = await manager.connectAll(configs);
    const elapsed = performance.now() - started;
    expect(Object.values(result)).toEqual([true, true, true, true, true]);
    // Each connect takes at least its 500 ms start delay; one after the other, the total would be the sum of
    // the five. In parallel it stays clearly below that sum, however loaded the machine is.
    const durations = manager.connections.map((c) => c.connectDurationMs ?? 0);
    for (const d of durations) expect(d).toBeGreaterThanOrEqual(500);
    const sum = durations.reduce((a, b) => a + b, 0);
    expect(elapsed).toBeLessThan(sum * 0.6);
    expect(manager.tools.filter((t) => t.name.startsWith('mcp__slow3__')).length).toBeGreaterThan(5);
  });

  it('keeps healthy servers when others exit at start, hang in initialize, do not exist or refuse connections', async () => {
    await using manager = newManager();
    const refusedPort = await freePort();
    const failed: string[] = [];
    manager.on('connection_failed', (e) => failed.push(e.server));
    const started = performance.now();
    const result = await manager.connectAll([
      { name: 'good', transport: 'stdio', ...nodeFixture('echo') },
      { name: 'exits', transport: 'stdio', ...nodeFixture('exit-at-start') },
      { name: 'hangs', transport: 'stdio', ...nodeFixture('hang-initialize'), connectTimeoutMs: 1_500 },
      { name: 'missing', transport: 'stdio', command: '/nonexistent/bin/mcp-server' },
      {
        name: 'refused',
        transport: 'http',
        url: `http://127.0.0.1:${refusedPort}/mcp`,
        connectTimeoutMs: 5_000,
      },
      { name: 'good2', transport: 'stdio', ...nodeFixture('echo') },
    ]);
    const elapsed = performance.now() - started;
    expect(result).toEqual({
      good: true,
      exits: false,
      hangs: false,
      missing: false,
      refused: false,
      good2: true,
    });
    expect(failed.sort()).toEqual(['exits', 'hangs', 'missing', 'refused']);
    // The hanging server is cut off by its own 1.5 s timeout, not the 30 s default.
    expect(elapsed).toBeLessThan(15_000);

    const exits = manager.getConnection('exits');
    expect(exits?.state).toBe('failed');
    expect(exits?.error?.message).toContain('fatal: cannot open database');
    expect(manager.getConnection('hangs')?.error?.message).toMatch(/1500 ms/);
    expect(manager.getConnection('missing')?.error?.message).toMatch(/missing|ENOENT|spawn/i);
    expect(manager.getConnection('refused')?.error).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(manager.getConnection('good')?.state).toBe('ready');
  });

  it('leaves no child process behind after disconnectAll, and is safe to call twice', async () => {
    await using manager = newManager();
    await manager.connectAll([
      { name: 'a', transport: 'stdio', ...nodeFixture('echo') },
      { name: 'b', transport: 'stdio', ...nodeFixture('echo') },
      { name: 'hangs', transport: 'stdio', ...nodeFixture('hang-initialize'), connectTimeoutMs: 500 },
    ]);
    const pids = ['a', 'b'].map((n) => manager.getConnection(n)?.pid);
    expect(pids.every((p) => typeof p === 'number' && isAlive(p))).toBe(true);
    await manager.disconnectAll();
    await manager.disconnectAll();
    for (const pid of pids) expect(await waitForExit(pid as number, 5_000)).toBe(true);
    expect(descendantPids(process.pid).filter((p) => pids.includes(p))).toEqual([]);
    expect(manager.tools).toEqual([]);
  });

  it('rejects a bad config with INVALID_CONFIG before connecting anything', async () => {
    await using manager = newManager();
    await expect(
      manager.connectAll([
        { name: 'ok', transport: 'stdio', ...nodeFixture('echo') },
        { name: 'bad__name', transport: 'stdio', command: 'x' },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG', server: 'bad__name' });
    expect(manager.connections).toEqual([]);
  });

  it('refuses a second server with a name already in use', async () => {
    await using manager = newManager();
    await manager.connectServer({ name: 'one', transport: 'stdio', ...nodeFixture('echo') });
    await expect(
      manager.connectServer({ name: 'one', transport: 'stdio', ...nodeFixture('echo') }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
  });

  it('does not connect a disabled server but reports it as not connected', async () => {
    await using manager = newManager();
    const result = await manager.connectAll([
      { name: 'off', transport: 'stdio', ...nodeFixture('echo'), enabled: false },
    ]);
    expect(result).toEqual({ off: false });
    expect(manager.getConnection('off')).toBeUndefined();
  });

  it('falls back from Streamable HTTP to SSE for an SSE-only server with transport auto', async () => {
    await using server = await startHttpFixture({ transport: 'sse' });
    await using manager = newManager();
    const result = await manager.connectAll([{ name: 'legacy', transport: 'auto', url: server.mcpUrl }]);
    expect(result).toEqual({ legacy: true });
    expect(manager.getConnection('legacy')?.transport).toBe('sse');
  });

  it('uses Streamable HTTP with transport auto when the server speaks it', async () => {
    await using server = await startHttpFixture({ transport: 'both' });
    await using manager = newManager();
    await manager.connectAll([{ name: 'modern', transport: 'auto', url: server.mcpUrl }]);
    expect(manager.getConnection('modern')?.transport).toBe('http');
  });

  it('closes a manager for good: a closed manager refuses new connections', async () => {
    await using manager = newManager();
    await manager.close();
    await manager.close();
    await expect(manager.connectAll([])).rejects.toMatchObject({ code: 'CLOSED' });
  });
});

describe('close', () => {
  it('does not wait out the connect timeout of a server still connecting', async () => {
    const manager = new MCPClientManager({ capabilities: new CapabilitySet() });
    const connecting = manager.connectAll([
      { name: 'hangs', transport: 'stdio', ...nodeFixture('hang-initialize'), connectTimeoutMs: 20_000 },
    ]);
    // The server process is up and the connect is under way.
    await waitUntil(() => descendantPids(process.pid).length > 0);
    const started = performance.now();
    await manager.close();
    expect(performance.now() - started).toBeLessThan(10_000);
    await expect(connecting).resolves.toEqual({ hangs: false });
    expect(descendantPids(process.pid)).toEqual([]);
  });
});
