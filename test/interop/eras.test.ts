/**
 * One contract, both protocol eras: the same behaviour against a 2026-07-28 server (the SDK v2 server package,
 * which answers `server/discover` and refuses `initialize`) and 2025-11-25 servers (server-everything from npm;
 * the echo fixture on the 1.x SDK for list changes). Interlock negotiates per server and the caller sees no
 * difference.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/interop/config.js';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';
import { isAlive } from '../helpers/processes.js';

interface Era {
  era: string;
  /** The server for connect, call, progress, cancellation and restart. */
  server: MCPServerConfigInput;
  echo: { tool: string; args: Record<string, unknown>; says: string };
  progress: { tool: string; args: Record<string, unknown>; steps: number };
  /** A tool that runs until cancelled. */
  hang: { tool: string; args: Record<string, unknown> };
  /** A server with a tool that adds a tool and announces the change. */
  listChanged: { server: MCPServerConfigInput; tool: string };
}

const eras: Era[] = [
  {
    era: '2026-07-28',
    server: { name: 'srv', transport: 'stdio', ...nodeFixture('modern') },
    echo: { tool: 'echo', args: { text: 'ping' }, says: 'ping' },
    progress: { tool: 'progress', args: { steps: 3 }, steps: 3 },
    hang: { tool: 'wait', args: {} },
    listChanged: { server: { name: 'lc', transport: 'stdio', ...nodeFixture('modern') }, tool: 'add_tool' },
  },
  {
    era: '2025-11-25',
    server: { name: 'srv', transport: 'stdio', command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
    echo: { tool: 'echo', args: { message: 'ping' }, says: 'ping' },
    progress: { tool: 'trigger-long-running-operation', args: { duration: 0.3, steps: 3 }, steps: 3 },
    hang: { tool: 'trigger-long-running-operation', args: { duration: 600, steps: 2 } },
    listChanged: { server: { name: 'lc', transport: 'stdio', ...nodeFixture('echo') }, tool: 'add_tool' },
  },
];

function once<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

describe.each(eras)('protocol $era', (era) => {
  let manager: MCPClientManager | undefined;

  function newManager(): MCPClientManager {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:lc:*', 'execute');
    manager = new MCPClientManager({ capabilities });
    return manager;
  }

  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });

  it('negotiates the era, lists the tools and calls one', async () => {
    const m = newManager();
    await expect(m.connectAll([era.server])).resolves.toEqual({ srv: true });
    expect(m.health().srv?.protocolVersion).toBe(era.era);
    expect(m.getConnection('srv')?.protocolVersion).toBe(era.era);
    expect(m.tools.map((t) => t.name)).toContain(`mcp__srv__${era.echo.tool}`);
    await expect(m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args)).resolves.toContain(
      era.echo.says,
    );
  });

  it('passes progress notifications to the caller', async () => {
    const m = newManager();
    await m.connectServer(era.server);
    const seen: { progress: number; total?: number | undefined }[] = [];
    await m.executeTool(`mcp__srv__${era.progress.tool}`, era.progress.args, {
      onProgress: (p) => seen.push(p),
    });
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) expect(p.total).toBe(era.progress.steps);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
  });

  it('cancels a running call and stays usable', async () => {
    const m = newManager();
    await m.connectServer(era.server);
    const controller = new AbortController();
    const started = once(m, 'tool_call_started');
    const call = m.executeTool(`mcp__srv__${era.hang.tool}`, era.hang.args, { signal: controller.signal });
    await started;
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
    await expect(m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args)).resolves.toContain(
      era.echo.says,
    );
  });

  it('reconnects after the server process dies and negotiates the same era again', async () => {
    const m = newManager();
    await m.connectServer(era.server);
    const pid = m.getConnection('srv')?.pid as number;
    const reconnected = once(m, 'reconnected');
    process.kill(pid, 'SIGKILL');
    await reconnected;
    const next = m.getConnection('srv')?.pid as number;
    expect(next).not.toBe(pid);
    expect(isAlive(next)).toBe(true);
    expect(m.health().srv).toMatchObject({ state: 'ready', reconnects: 1, protocolVersion: era.era });
    await expect(m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args)).resolves.toContain(
      era.echo.says,
    );
  });

  it('refreshes the tool list when the server announces a change', async () => {
    const m = newManager();
    await m.connectServer(era.listChanged.server);
    const changed = once(m, 'tools_changed');
    await m.executeTool(`mcp__lc__${era.listChanged.tool}`, { name: 'fresh' });
    expect(await changed).toMatchObject({ server: 'lc', added: ['mcp__lc__fresh'] });
    await expect(m.executeTool('mcp__lc__fresh', {})).resolves.toBeTypeOf('string');
  });
});
