/**
 * Real third-party servers from npm are the best witnesses: server-everything over stdio, SSE and Streamable
 * HTTP; server-filesystem on a temp directory; server-memory.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { EVERYTHING_BIN, type HttpServerProcess, startEverything } from '../helpers/http-fixtures.js';

const require = createRequire(import.meta.url);
const binOf = (pkg: string) => join(dirname(require.resolve(`${pkg}/package.json`)), 'dist/index.js');

describe.each([{ mode: 'stdio' as const }, { mode: 'sse' as const }, { mode: 'streamableHttp' as const }])(
  'server-everything over $mode',
  ({ mode }) => {
    let server: HttpServerProcess | undefined;
    let manager: MCPClientManager;

    beforeAll(async () => {
      const capabilities = new CapabilitySet();
      capabilities.grant('mcp:everything:echo', 'execute');
      capabilities.grant('mcp:everything:get-sum', 'execute');
      capabilities.grant('mcp:everything:get-tiny-image', 'execute');
      manager = new MCPClientManager({ capabilities });
      if (mode === 'stdio') {
        await manager.connectServer({
          name: 'everything',
          transport: 'stdio',
          command: process.execPath,
          args: [EVERYTHING_BIN, 'stdio'],
        });
      } else {
        server = await startEverything(mode);
        const url = mode === 'sse' ? server.sseUrl : server.mcpUrl;
        await manager.connectServer({ name: 'everything', transport: mode === 'sse' ? 'sse' : 'http', url });
      }
    });

    afterAll(async () => {
      await manager?.close();
      await server?.close();
    });

    it('lists its tools, resources and prompts', () => {
      const names = manager.tools.map((t) => t.name);
      expect(names).toContain('mcp__everything__echo');
      expect(names).toContain('mcp__everything__get-sum');
      const connection = manager.getConnection('everything');
      expect(connection?.resources.length).toBeGreaterThan(0);
      expect(connection?.prompts.length).toBeGreaterThan(0);
    });

    it('calls echo and get-sum and returns strings', async () => {
      await expect(manager.executeTool('mcp__everything__echo', { message: 'ping' })).resolves.toContain(
        'ping',
      );
      await expect(manager.executeTool('mcp__everything__get-sum', { a: 40, b: 2 })).resolves.toContain('42');
    });

    it('normalizes its image tool to a placeholder plus the text parts', async () => {
      const text = await manager.executeTool('mcp__everything__get-tiny-image', {});
      expect(text).toMatch(/\[image: image\/png, [\d.]+ (B|KB)\]/);
    });

    it('denies tools that were not granted without calling them', async () => {
      await expect(manager.executeTool('mcp__everything__get-env', {})).rejects.toMatchObject({
        code: 'CAPABILITY_DENIED',
      });
    });
  },
);

describe('server-filesystem on a temp directory', () => {
  let dir: string;
  let manager: MCPClientManager;

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'interlock-fs-')));
    writeFileSync(join(dir, 'notes.txt'), 'first line\nsecond line\n');
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:fs:read_*', 'execute');
    capabilities.grant('mcp:fs:list_*', 'execute');
    manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'fs',
      transport: 'stdio',
      command: process.execPath,
      args: [binOf('@modelcontextprotocol/server-filesystem'), dir],
    });
  });

  afterAll(async () => {
    await manager?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads and lists through granted patterns', async () => {
    await expect(
      manager.executeTool('mcp__fs__read_text_file', { path: join(dir, 'notes.txt') }),
    ).resolves.toContain('second line');
    await expect(manager.executeTool('mcp__fs__list_directory', { path: dir })).resolves.toContain(
      'notes.txt',
    );
  });

  it('denies writes that mcp:fs:read_* does not cover, and the file stays untouched', async () => {
    await expect(
      manager.executeTool('mcp__fs__write_file', { path: join(dir, 'notes.txt'), content: 'overwritten' }),
    ).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    await expect(
      manager.executeTool('mcp__fs__read_text_file', { path: join(dir, 'notes.txt') }),
    ).resolves.toContain('first line');
  });

  it("reports the server's own error for a path outside its roots as an error result", async () => {
    const result = await manager.callTool('mcp__fs__read_text_file', { path: '/etc/hostname' });
    expect(result.isError).toBe(true);
    expect(result.text.startsWith('Error: ')).toBe(true);
  });
});

describe('server-memory', () => {
  it('stores and reads back an entity', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-memory-'));
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:memory:*', 'execute');
    const manager = new MCPClientManager({ capabilities });
    try {
      await manager.connectServer({
        name: 'memory',
        transport: 'stdio',
        command: process.execPath,
        args: [binOf('@modelcontextprotocol/server-memory')],
        env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
      });
      await manager.executeTool('mcp__memory__create_entities', {
        entities: [{ name: 'Interlock', entityType: 'project', observations: ['gates every call'] }],
      });
      await expect(manager.executeTool('mcp__memory__read_graph', {})).resolves.toContain('gates every call');
    } finally {
      await manager.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
