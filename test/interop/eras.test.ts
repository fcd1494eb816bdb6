/**
 * One contract, both protocol eras: the same behaviour against a 2026-07-28 server (the SDK v2 server package,
 * which answers `server/discover` and refuses `initialize`) and 2025-11-25 servers (server-everything from npm;
 * the echo fixture on the 1.x SDK for list changes). Interlock negotiates per server and the caller sees no
 * difference. Failure behaviours (cancellation, timeouts, re-sends) in both eras are in
 * test/contracts/failures.contract.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import {
  EVERYTHING_BIN,
  type HttpServerProcess,
  startEverything,
  startHttpFixture,
  startModernHttp,
} from '../helpers/http-fixtures.js';

/** A server the test started (HTTP) or that the manager spawns (stdio). */
interface Started {
  config: MCPServerConfigInput;
  /** Ends the server process the manager talks to, and (HTTP) starts a new one at the same URL. */
  restart(manager: MCPClientManager): Promise<void>;
  close(): Promise<void>;
}

interface Era {
  era: string;
  transport: 'stdio' | 'http';
  /** The server for connect, call, progress and restart, named `srv`. */
  server(): Promise<Started>;
  echo: { tool: string; args: Record<string, unknown>; says: string };
  progress: { tool: string; args: Record<string, unknown>; steps: number };
  /** A server named `lc` with an `add_tool` tool that adds a tool and announces the change. */
  listChanged(): Promise<Started>;
}

const killStdio = async (manager: MCPClientManager, name: string) => {
  process.kill(manager.getConnection(name)?.pid as number, 'SIGKILL');
};

function stdio(name: string, command: { command: string; args: string[] }): Promise<Started> {
  return Promise.resolve({
    config: { name, transport: 'stdio', ...command },
    restart: (manager) => killStdio(manager, name),
    close: async () => {},
  });
}

function http(name: string, start: (port?: number) => Promise<HttpServerProcess>): Promise<Started> {
  return start().then((first) => {
    let current = first;
    return {
      config: { name, transport: 'http', url: first.mcpUrl },
      restart: async () => {
        await current.close();
        current = await start(first.port);
      },
      close: () => current.close(),
    };
  });
}

const modern = {
  echo: { tool: 'echo', args: { text: 'ping' }, says: 'ping' },
  progress: { tool: 'progress', args: { steps: 3 }, steps: 3 },
};
const legacy = {
  echo: { tool: 'echo', args: { message: 'ping' }, says: 'ping' },
  progress: { tool: 'trigger-long-running-operation', args: { duration: 0.3, steps: 3 }, steps: 3 },
};

const eras: Era[] = [
  {
    era: '2026-07-28',
    transport: 'stdio',
    ...modern,
    server: () => stdio('srv', nodeFixture('modern')),
    listChanged: () => stdio('lc', nodeFixture('modern')),
  },
  {
    era: '2026-07-28',
    transport: 'http',
    ...modern,
    server: () => http('srv', (port) => startModernHttp({ port })),
    listChanged: () => http('lc', (port) => startModernHttp({ port })),
  },
  {
    era: '2025-11-25',
    transport: 'stdio',
    ...legacy,
    server: () => stdio('srv', { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] }),
    listChanged: () => stdio('lc', nodeFixture('echo')),
  },
  {
    era: '2025-11-25',
    transport: 'http',
    ...legacy,
    server: () => http('srv', (port) => startEverything('streamableHttp', { port })),
    listChanged: () => http('lc', (port) => startHttpFixture({ transport: 'http', port })),
  },
];

function once<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

/** A manager connected to one started server; `await using` closes the manager, then the server. */
interface Connected extends AsyncDisposable {
  manager: MCPClientManager;
  started: Started;
}

describe.each(eras)('protocol $era over $transport', (era) => {
  async function connect(which: 'server' | 'listChanged'): Promise<Connected> {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:lc:*', 'execute');
    const manager = new MCPClientManager({ capabilities });
    const started = await era[which]();
    const dispose = async () => {
      await manager.close();
      await started.close();
    };
    try {
      await expect(manager.connectAll([started.config])).resolves.toEqual({ [started.config.name]: true });
    } catch (err) {
      await dispose();
      throw err;
    }
    return { manager, started, [Symbol.asyncDispose]: dispose };
  }

  it('negotiates the era, lists the tools and calls one', async () => {
    await using connected = await connect('server');
    const m = connected.manager;
    expect(m.health().srv?.protocolVersion).toBe(era.era);
    expect(m.getConnection('srv')?.protocolVersion).toBe(era.era);
    expect(m.tools.map((t) => t.name)).toContain(`mcp__srv__${era.echo.tool}`);
    await expect(m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args)).resolves.toContain(
      era.echo.says,
    );
  });

  it('passes progress notifications to the caller', async () => {
    await using connected = await connect('server');
    const m = connected.manager;
    const seen: { progress: number; total?: number | undefined }[] = [];
    await m.executeTool(`mcp__srv__${era.progress.tool}`, era.progress.args, {
      onProgress: (p) => seen.push(p),
    });
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) expect(p.total).toBe(era.progress.steps);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
  });

  it('reconnects after the server restarts and negotiates the same era again', async () => {
    await using connected = await connect('server');
    const m = connected.manager;
    const reconnected = once(m, 'reconnected');
    await connected.started.restart(m);
    if (era.transport === 'http') {
      // An HTTP client learns of the restart from its next request (2025) or its broken listen stream (2026).
      await m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args).catch(() => {});
    }
    await reconnected;
    expect(m.health().srv).toMatchObject({ state: 'ready', reconnects: 1, protocolVersion: era.era });
    await expect(m.executeTool(`mcp__srv__${era.echo.tool}`, era.echo.args)).resolves.toContain(
      era.echo.says,
    );
  });

  it('refreshes the tool list when the server announces a change', async () => {
    await using connected = await connect('listChanged');
    const m = connected.manager;
    const changed = once(m, 'tools_changed');
    await m.executeTool('mcp__lc__add_tool', { name: 'fresh' });
    expect(await changed).toMatchObject({ server: 'lc', added: ['mcp__lc__fresh'] });
    await expect(m.executeTool('mcp__lc__fresh', {})).resolves.toBeTypeOf('string');
  });
});
