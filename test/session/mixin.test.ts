/**
 * SessionInteropMixin on sessions of our own and of a user: connect on start, disconnect on close even when
 * the work failed, idempotent and race-free connect/disconnect, and no server process left behind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/index.js';
import { CapabilitySet } from '../../src/security/index.js';
import { SessionInteropMixin, type SessionInteropOptions } from '../../src/session/index.js';
import { descendantPids, nodeFixture } from '../helpers/index.js';

const echo = (name = 'echo') => ({ name, transport: 'stdio' as const, ...nodeFixture('echo') });

/** A user's session class: its own lifecycle, its own options. */
class ChatSession {
  readonly log: string[] = [];
  constructor(readonly options: { topic: string; interop?: SessionInteropOptions; failStart?: boolean }) {}
  async start(): Promise<void> {
    this.log.push('base start');
    if (this.options.failStart === true) throw new Error('base start failed');
  }
  async close(): Promise<void> {
    this.log.push('base close');
  }
  async run(fail: boolean): Promise<string> {
    if (fail) throw new Error('run failed');
    return this.options.topic;
  }
}
const McpChatSession = SessionInteropMixin(ChatSession);

/** A manager factory that counts connectAll calls. */
function countingFactory() {
  const counts = { connectAll: 0 };
  const create = (o: MCPClientManagerOptions) => {
    const m = new MCPClientManager(o);
    const connectAll = m.connectAll.bind(m);
    m.connectAll = (configs) => {
      counts.connectAll++;
      return connectAll(configs);
    };
    return m;
  };
  return { counts, create };
}

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

describe('SessionInteropMixin', () => {
  it('connects when the session starts and disconnects when it closes, also after the run failed', async () => {
    const session = new McpChatSession({
      topic: 'notes',
      interop: {
        mcpServers: [echo()],
        managerOptions: { capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) },
      },
    });
    expect(session.mcpConnected).toBe(false);
    expect(session.options.topic).toBe('notes'); // the base class got its own arguments
    try {
      await session.start();
      expect(session.log).toEqual(['base start']);
      expect(session.mcpConnected).toBe(true);
      expect(session.tools.map((t) => t.name)).toContain('mcp__echo__echo');
      expect(await session.tools.find((t) => t.name === 'mcp__echo__echo')?.execute({ text: 'hi' })).toBe(
        'hi',
      );
      await expect(session.run(true)).rejects.toThrow('run failed');
    } finally {
      await session.close();
    }
    expect(session.log).toEqual(['base start', 'base close']);
    expect(session.mcpConnected).toBe(false);
    expect(session.mcp.connections).toEqual([]);
    expect(descendantPids(process.pid)).toEqual([]);
  });

  it('disconnects through `await using` when the block throws', async () => {
    let pid: number | undefined;
    await expect(
      (async () => {
        await using session = new McpChatSession({ topic: 't', interop: { mcpServers: [echo()] } });
        await session.start();
        pid = session.mcp.getConnection('echo')?.pid;
        throw new Error('boom');
      })(),
    ).rejects.toThrow('boom');
    expect(pid).toBeGreaterThan(0);
    expect(descendantPids(process.pid)).toEqual([]);
  });

  it('shares one connect among concurrent calls and stays connected when called again', async () => {
    const factory = countingFactory();
    await using session = new McpChatSession({
      topic: 't',
      interop: { mcpServers: [echo()], createManager: factory.create, autoConnect: false },
    });
    const results = await Promise.all([session.connectInterop(), session.connectInterop(), session.start()]);
    expect(results[0]).toEqual({ echo: true });
    expect(results[1]).toEqual({ echo: true });
    expect(await session.connectInterop()).toEqual({ echo: true });
    expect(factory.counts.connectAll).toBe(1);
  });

  it('applies connect and disconnect in call order, whatever their timing', async () => {
    const factory = countingFactory();
    await using session = new McpChatSession({
      topic: 't',
      interop: { mcpServers: [echo()], createManager: factory.create, autoConnect: false },
    });
    const ops = [
      session.connectInterop(),
      session.disconnectInterop(),
      session.disconnectInterop(),
      session.connectInterop(),
    ];
    await Promise.all(ops);
    expect(session.mcpConnected).toBe(true);
    expect(session.mcp.getConnection('echo')?.state).toBe('ready');
    expect(factory.counts.connectAll).toBe(2);
    await Promise.all([session.disconnectInterop(), session.disconnectInterop()]);
    expect(session.mcpConnected).toBe(false);
    expect(session.mcp.connections).toEqual([]);
  });

  it('closes safely twice and refuses to connect after close', async () => {
    const session = new McpChatSession({ topic: 't', interop: { mcpServers: [echo()] } });
    await session.start();
    await Promise.all([session.close(), session.close()]);
    await session.close();
    const err = await session.connectInterop().catch((e: unknown) => e);
    expect(isInterlockError(err, 'CLOSED')).toBe(true);
    await expect(session.start()).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('disconnects when the base class fails to start', async () => {
    const session = new McpChatSession({ topic: 't', failStart: true, interop: { mcpServers: [echo()] } });
    await expect(session.start()).rejects.toThrow('base start failed');
    expect(session.mcpConnected).toBe(false);
    expect(descendantPids(process.pid)).toEqual([]);
    await session.close();
  });

  it('adds start and close to a class that has neither, and reads servers from an mcp.json file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-session-'));
    try {
      const file = join(dir, 'mcp.json');
      const { command, args } = nodeFixture('echo');
      writeFileSync(file, JSON.stringify({ mcpServers: { files: { command, args } } }));
      const Plain = SessionInteropMixin(
        class {
          constructor(readonly options: { interop: SessionInteropOptions }) {}
        },
      );
      const session = new Plain({ interop: { mcpServers: file } });
      await session.start();
      expect(await session.connectInterop()).toEqual({ files: true });
      await session.close();
      expect(session.mcp.connections).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on a shared manager, disconnects only its own servers and never closes the manager', async () => {
    await using manager = new MCPClientManager({
      capabilities: CapabilitySet.allowAll({ onWarning: () => {} }),
    });
    await manager.connectAll([echo('parent')]);
    const session = new McpChatSession({ topic: 't', interop: { manager, mcpServers: [echo('mine')] } });
    await session.start();
    expect(manager.connections.map((c) => c.name).sort()).toEqual(['mine', 'parent']);
    await session.close();
    expect(manager.connections.map((c) => c.name)).toEqual(['parent']);
    expect(await manager.executeTool('mcp__parent__echo', { text: 'still here' })).toBe('still here');
  });

  it('checks calls against its own, narrower set before the shared manager’s', async () => {
    await using manager = new MCPClientManager({
      capabilities: CapabilitySet.allowAll({ onWarning: () => {} }),
    });
    await manager.connectAll([echo()]);
    const narrow = manager.capabilities.derive([
      { effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
    ]);
    const session = new McpChatSession({ topic: 't', interop: { manager, capabilities: narrow } });
    await session.start();
    const add = session.tools.find((t) => t.name === 'mcp__echo__add');
    await expect(add?.execute({ a: 1, b: 2 })).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(await session.tools.find((t) => t.name === 'mcp__echo__echo')?.execute({ text: 'ok' })).toBe('ok');
    expect(await manager.executeTool('mcp__echo__add', { a: 1, b: 2 })).toBe('3');
    await session.close();
  });
});
