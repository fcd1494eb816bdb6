/**
 * Issue 14, items 10 and 11: arguments built to stall validation are refused before validation and before
 * anything is sent, and a server whose schema cannot be compiled is failed and closed, not left half-connected.
 */
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { argumentLimitIssue } from '../../src/tools/limits.js';
import { createFixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { isAlive, waitForExit } from '../helpers/processes.js';

function caps(): CapabilitySet {
  const set = new CapabilitySet();
  set.grant('mcp:hostile:*', 'execute');
  return set;
}

describe('arguments that would stall validation', () => {
  it('20 000 objects under uniqueItems: validated in linear time, and duplicates still caught', async () => {
    await using log = createFixtureLog();
    await using manager = new MCPClientManager({ capabilities: caps() });
    await manager.connectServer({
      name: 'hostile',
      transport: 'stdio',
      ...nodeFixture('hostile-schemas'),
      env: log.env,
    });
    const items = Array.from({ length: 20_000 }, (_, i) => ({ id: i, tag: 'x' }));
    await expect(manager.executeTool('mcp__hostile__bag', { items })).resolves.toBe('ok bag');
    await expect(
      manager.executeTool('mcp__hostile__bag', {
        items: [
          { a: 1, b: 2 },
          { b: 2, a: 1 },
        ],
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_TOOL_INPUT',
      message: expect.stringContaining('same item twice'),
    });
    expect(log.toolCalls('bag')).toHaveLength(1);
  });

  it('refuses arguments over the caps with a clear error naming the option, and sends nothing', async () => {
    await using log = createFixtureLog();
    await using manager = new MCPClientManager({
      capabilities: caps(),
      argumentLimits: { maxNodes: 5_000, maxDepth: 16, maxBytes: 100_000 },
    });
    await manager.connectServer({
      name: 'hostile',
      transport: 'stdio',
      ...nodeFixture('hostile-schemas'),
      env: log.env,
    });
    const many = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i })) };
    await expect(manager.executeTool('mcp__hostile__bag', many)).rejects.toMatchObject({
      code: 'INVALID_TOOL_INPUT',
      message: expect.stringContaining('argumentLimits.maxNodes'),
    });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) deep = { next: deep };
    await expect(manager.executeTool('mcp__hostile__bag', { items: [deep] })).rejects.toMatchObject({
      message: expect.stringContaining('argumentLimits.maxDepth'),
    });
    await expect(
      manager.executeTool('mcp__hostile__bag', { items: [{ blob: 'x'.repeat(200_000) }] }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('argumentLimits.maxBytes'),
    });
    expect(log.toolCalls()).toEqual([]);
  });

  it('the defaults let ordinary arguments through and stop a cyclic object', () => {
    expect(argumentLimitIssue({ path: '/data/x', content: 'y'.repeat(1_000_000) })).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(argumentLimitIssue(cyclic)?.message).toMatch(/nested deeper than 64 levels/);
  });
});

describe('a tool list too deep to use', () => {
  it('fails the server and closes it: never ready without its tools, no live process', async () => {
    await using log = createFixtureLog();
    await using manager = new MCPClientManager({ capabilities: caps() });
    const err = await manager
      .connectServer({
        name: 'hostile',
        transport: 'stdio',
        ...nodeFixture('hostile-schemas'),
        env: { ...log.env, HOSTILE_DEEP: '20000' },
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    // The client's own result check (or, failing that, the catalog) cannot take it: either way the connect fails.
    expect(err).toMatchObject({
      code: 'CONNECTION_FAILED',
      message: expect.stringMatching(/its tool list cannot be used|Maximum call stack size exceeded/),
    });
    expect(manager.health().hostile?.state).not.toBe('ready');
    expect(manager.tools.filter((t) => t.server === 'hostile')).toEqual([]);
    const pids = [...new Set(log.entries().map((e) => e.pid))];
    expect(pids).toHaveLength(1);
    expect(await waitForExit(pids[0] as number)).toBe(true);
    expect(isAlive(pids[0] as number)).toBe(false);
  });

  it('a schema deep but still usable connects, and only that tool refuses calls', async () => {
    await using manager = new MCPClientManager({ capabilities: caps() });
    await manager.connectServer({
      name: 'hostile',
      transport: 'stdio',
      ...nodeFixture('hostile-schemas'),
      env: { HOSTILE_DEEP: '500' },
    });
    await expect(manager.executeTool('mcp__hostile__bag', { items: [] })).resolves.toBe('ok bag');
    await expect(manager.executeTool('mcp__hostile__deep', {})).rejects.toMatchObject({
      code: 'INVALID_TOOL_SCHEMA',
    });
  });
});
