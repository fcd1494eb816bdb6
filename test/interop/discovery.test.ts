/** Discovery: pagination, hostile tool names, list_changed refreshes, offline registration. */
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { parseToolName } from '../../src/tools/names.js';
import { nodeFixture, WEIRD_TOOL_NAMES } from '../helpers/fixtures.js';

const managers: MCPClientManager[] = [];
function newManager(grant: string[] = []): MCPClientManager {
  const capabilities = new CapabilitySet();
  for (const pattern of grant) capabilities.grant(pattern, 'execute');
  const manager = new MCPClientManager({ capabilities });
  managers.push(manager);
  return manager;
}
afterEach(async () => {
  await Promise.allSettled(managers.splice(0).map((m) => m.close()));
});

describe('discovery', () => {
  it('follows nextCursor until every page of tools is listed', async () => {
    const manager = newManager(['mcp:paged:*']);
    await manager.connectAll([
      {
        name: 'paged',
        transport: 'stdio',
        ...nodeFixture('paged'),
        env: { FIXTURE_TOOL_COUNT: '25', FIXTURE_PAGE_SIZE: '10' },
      },
    ]);
    expect(manager.tools.map((t) => t.tool).sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `t${i}`).sort(),
    );
    await expect(manager.executeTool('mcp__paged__t24', {})).resolves.toContain('24');
  });

  it('refuses unsafe tool names with an event, and keeps every other tool reachable by its original name', async () => {
    const manager = newManager(['mcp:weird:*']);
    const refused: MCPManagerEvents['tool_refused'][] = [];
    const collisions: MCPManagerEvents['tool_name_collision'][] = [];
    manager.on('tool_refused', (e) => refused.push(e));
    manager.on('tool_name_collision', (e) => collisions.push(e));
    await manager.connectAll([{ name: 'weird', transport: 'stdio', ...nodeFixture('weird-names') }]);

    expect(refused.map((r) => r.tool).sort()).toEqual(
      ['a:b', 'star*', 'has space', '', 'tab\there', 'zero\u200bwidth'].sort(),
    );
    const exposed = manager.tools;
    const accepted = WEIRD_TOOL_NAMES.filter((n) => !refused.some((r) => r.tool === n));
    expect(exposed.map((t) => t.tool).sort()).toEqual([...accepted].sort());
    // Every exposed name is unique, model-safe, short enough, and calls exactly its own tool.
    expect(new Set(exposed.map((t) => t.name)).size).toBe(exposed.length);
    for (const wrapper of exposed) {
      expect(wrapper.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(parseToolName(wrapper.name)?.server).toBe('weird');
      await expect(wrapper.execute({})).resolves.toBe(wrapper.tool);
    }
    expect(collisions).toEqual([]);
  });

  it('refreshes tools on list_changed and keeps wrappers handed out before', async () => {
    const manager = newManager(['mcp:echo:*']);
    // Changes are accepted here; blocking them is the pinning suite's subject.
    await manager.connectAll([
      { name: 'echo', transport: 'stdio', ...nodeFixture('echo'), onToolChange: 'accept' },
    ]);
    const echo = manager.getTool('mcp__echo__echo');
    const changes: MCPManagerEvents['tools_changed'][] = [];
    manager.on('tools_changed', (e) => changes.push(e));

    await manager.executeTool('mcp__echo__add_tool', { name: 'late_tool', description: 'added later' });
    await expect.poll(() => manager.getTool('mcp__echo__late_tool') !== undefined).toBe(true);
    expect(changes.some((c) => c.added.includes('mcp__echo__late_tool'))).toBe(true);

    await manager.executeTool('mcp__echo__set_description', { tool: 'echo', description: 'new words' });
    await expect.poll(() => manager.getTool('mcp__echo__echo')?.description).toBe('new words');
    expect(manager.getTool('mcp__echo__echo')).toBe(echo);
    await expect(echo?.execute({ text: 'still works' })).resolves.toContain('still works');

    await manager.executeTool('mcp__echo__remove_tool', { name: 'late_tool' });
    await expect.poll(() => manager.getTool('mcp__echo__late_tool')).toBeUndefined();
  });

  it('applies the per-server tools filter: deny wins, allow narrows', async () => {
    const manager = newManager(['mcp:echo:*']);
    await manager.connectAll([
      {
        name: 'echo',
        transport: 'stdio',
        ...nodeFixture('echo'),
        tools: { allow: ['echo', 'add', 'slo*'], deny: ['slow'] },
      },
    ]);
    expect(manager.tools.map((t) => t.tool).sort()).toEqual(['add', 'echo']);
  });

  it('keeps a wrapper working across a disconnect and a new connection of the same server', async () => {
    const manager = newManager(['mcp:echo:*']);
    const config = { name: 'echo', transport: 'stdio' as const, ...nodeFixture('echo') };
    await manager.connectServer(config);
    const wrapper = manager.getTool('mcp__echo__echo');
    await manager.disconnectServer('echo');
    await expect(wrapper?.execute({ text: 'x' })).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await manager.connectServer(config);
    await expect(wrapper?.execute({ text: 'back' })).resolves.toContain('back');
  });
});

describe('offline registration', () => {
  const schemas = [
    {
      name: 'echo',
      description: 'Echoes text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    },
    { name: 'offline_only', inputSchema: { properties: { n: { type: 'number' } } } },
  ];

  it('creates wrappers without a connection, with a missing schema type read as object', () => {
    const manager = newManager(['mcp:echo:*']);
    const wrappers = manager.registerTools('echo', schemas);
    expect(wrappers.map((w) => w.name)).toEqual(['mcp__echo__echo', 'mcp__echo__offline_only']);
    expect(wrappers[1]?.inputSchema.type).toBe('object');
    expect(wrappers.every((w) => w.offline)).toBe(true);
  });

  it('raises NOT_CONNECTED saying the tool was registered offline', async () => {
    const manager = newManager(['mcp:echo:*']);
    manager.registerTools('echo', schemas);
    const err = await manager.executeTool('mcp__echo__echo', { text: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NOT_CONNECTED' });
    expect((err as Error).message).toMatch(/registered offline/);
    expect((err as Error).message).toMatch(/'echo'/);
  });

  it('still checks the gate and the schema for offline tools', async () => {
    const manager = newManager([]);
    manager.registerTools('echo', schemas);
    await expect(manager.executeTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
  });

  it('rejects bad schemas with INVALID_CONFIG naming the server and the path', () => {
    const manager = newManager();
    expect(() => manager.registerTools('echo', [{ name: 'x', inputSchema: { type: 'string' } }])).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('inputSchema') }),
    );
    expect(() => manager.registerTools('bad__server', schemas)).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });

  it('replaces offline tools with the live ones when the server connects', async () => {
    const manager = newManager(['mcp:echo:*']);
    const [offlineEcho] = manager.registerTools('echo', schemas);
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    expect(manager.getTool('mcp__echo__offline_only')).toBeUndefined();
    expect(manager.getTool('mcp__echo__echo')?.offline).toBe(false);
    await expect(offlineEcho?.execute({ text: 'live now' })).resolves.toContain('live now');
  });
});
