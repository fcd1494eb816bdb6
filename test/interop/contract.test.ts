/**
 * One contract, every transport: the same behaviour over stdio, SSE and Streamable HTTP, against the echo
 * fixture server (a real process; HTTP ones on a loopback port).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { type HttpServerProcess as HttpFixture, startHttpFixture } from '../helpers/http-fixtures.js';
import { isAlive, waitForExit } from '../helpers/processes.js';

interface Variant {
  transport: 'stdio' | 'sse' | 'http' | 'auto';
  setup(): Promise<{ config: MCPServerConfigInput; close(): Promise<void> }>;
}

const variants: Variant[] = [
  {
    transport: 'stdio',
    setup: async () => ({
      config: { name: 'echo', transport: 'stdio', ...nodeFixture('echo') },
      close: async () => {},
    }),
  },
  {
    transport: 'sse',
    setup: async () => {
      const server: HttpFixture = await startHttpFixture({ transport: 'sse' });
      return { config: { name: 'echo', transport: 'sse', url: server.sseUrl }, close: () => server.close() };
    },
  },
  {
    transport: 'http',
    setup: async () => {
      const server: HttpFixture = await startHttpFixture({ transport: 'http' });
      return { config: { name: 'echo', transport: 'http', url: server.mcpUrl }, close: () => server.close() };
    },
  },
];

describe.each(variants)('contract over $transport', ({ transport, setup }) => {
  let manager: MCPClientManager;
  let server: Awaited<ReturnType<Variant['setup']>>;

  beforeAll(async () => {
    server = await setup();
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:*', 'execute');
    capabilities.grant('mcp-resource:echo:**', 'read');
    capabilities.grant('mcp-prompt:echo:*', 'get');
    manager = new MCPClientManager({ capabilities });
    const result = await manager.connectAll([server.config]);
    expect(result).toEqual({ echo: true });
  });

  afterAll(async () => {
    await manager?.close();
    await server?.close();
  });

  it('connects and reports the transport it used', () => {
    const connection = manager.getConnection('echo');
    expect(connection?.state).toBe('ready');
    expect(connection?.transport).toBe(transport);
    expect(connection?.serverInfo?.name).toBeTruthy();
  });

  it('lists every tool under its namespaced name', () => {
    const names = manager.tools.map((t) => t.name);
    expect(names).toContain('mcp__echo__echo');
    expect(names).toContain('mcp__echo__add');
    const echo = manager.getTool('mcp__echo__echo');
    expect(echo?.server).toBe('echo');
    expect(echo?.tool).toBe('echo');
    expect(echo?.inputSchema.type).toBe('object');
  });

  it('calls a tool and gets its text back as a string', async () => {
    await expect(manager.executeTool('mcp__echo__echo', { text: 'hello' })).resolves.toContain('hello');
  });

  it('reports a tool error result as isError with an Error: prefix', async () => {
    const result = await manager.callTool('mcp__echo__fail', { message: 'disk full' });
    expect(result.isError).toBe(true);
    expect(result.text.startsWith('Error: ')).toBe(true);
    expect(result.text).toContain('disk full');
  });

  it('turns an image result into a placeholder with MIME type and size', async () => {
    const text = await manager.executeTool('mcp__echo__image', {});
    expect(text).toMatch(/\[image: image\/png, \d+(\.\d+)? (B|KB)\]/);
  });

  it('reads a resource through the gate', async () => {
    const result = await manager.readResource('echo', 'fixture://greeting');
    expect(result.contents[0]).toMatchObject({ uri: 'fixture://greeting' });
  });

  it('gets a prompt through the gate', async () => {
    const result = await manager.getPrompt('echo', 'greet', { name: 'Ada' });
    expect(JSON.stringify(result.messages)).toContain('Ada');
  });

  it('disconnects, removes the tools and leaves no process behind', async () => {
    const pid = manager.getConnection('echo')?.pid;
    await manager.disconnectServer('echo');
    expect(manager.tools).toEqual([]);
    expect(manager.getConnection('echo')).toBeUndefined();
    if (pid !== undefined) {
      expect(await waitForExit(pid, 5_000)).toBe(true);
      expect(isAlive(pid)).toBe(false);
    }
  });
});
