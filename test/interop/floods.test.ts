/**
 * Issue 14, "also seen": floods of calls sharing one AbortSignal and repeated close() add no listeners that pile
 * up (no MaxListenersExceededWarning), and TOOL_NOT_FOUND never suggests the very name that was asked for.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { ProcessStdioTransport } from '../../src/protocol/stdio-transport.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { fixture, nodeFixture } from '../helpers/fixtures.js';

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});
const listenerWarnings = () => warnings.filter((w) => w.name === 'MaxListenersExceededWarning');

function caps(): CapabilitySet {
  const set = new CapabilitySet();
  set.grant('mcp:echo:*', 'execute');
  return set;
}

describe('listener floods', () => {
  it('200 calls sharing one AbortSignal leave no listener behind on it', async () => {
    await using manager = new MCPClientManager({ capabilities: caps() });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const shared = new AbortController();
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          manager.executeTool('mcp__echo__echo', { text: String(i) }, { signal: shared.signal }),
        ),
      );
    }
    await manager.readResource('echo', 'fixture://items/7', { signal: shared.signal }).catch(() => undefined);
    // Let any warning emitted on this turn reach the listener.
    await new Promise((resolve) => setImmediate(resolve));
    expect(listenerWarnings().map((w) => w.message)).toEqual([]);
    // The shared signal still works for the next call.
    const pending = manager.executeTool('mcp__echo__slow', { ms: 5_000 }, { signal: shared.signal });
    shared.abort();
    await expect(pending).rejects.toMatchObject({ code: 'REQUEST_CANCELLED' });
  });

  it('100 calls queued behind maxConcurrentCalls on one AbortSignal add one listener to it, and all cancel', async () => {
    await using manager = new MCPClientManager({ capabilities: caps() });
    await manager.connectServer({
      name: 'echo',
      transport: 'stdio',
      ...nodeFixture('echo'),
      maxConcurrentCalls: 1,
      maxQueuedCalls: 200,
    });
    const shared = new AbortController();
    const calls = Array.from({ length: 100 }, () =>
      manager.executeTool('mcp__echo__slow', { ms: 2_000 }, { signal: shared.signal }),
    );
    await expect.poll(() => manager.health().echo?.callsQueued).toBe(99);
    shared.abort();
    const settled = await Promise.allSettled(calls);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(listenerWarnings().map((w) => w.message)).toEqual([]);
    expect(manager.health().echo?.callsQueued).toBe(0);
  });

  it('close() called 50 times on a stdio transport shuts the process down once', async () => {
    const transport = new ProcessStdioTransport({
      command: process.execPath,
      args: [fixture('echo')],
      env: { ...process.env } as Record<string, string>,
    });
    await transport.start();
    await Promise.all(Array.from({ length: 50 }, () => transport.close()));
    await new Promise((resolve) => setImmediate(resolve));
    expect(listenerWarnings()).toEqual([]);
  });
});

describe('TOOL_NOT_FOUND', () => {
  it('does not suggest the name that was asked for when its server no longer lists it', async () => {
    await using manager = new MCPClientManager({ capabilities: caps() });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    await manager.executeTool('mcp__echo__remove_tool', { name: 'echo' });
    await expect.poll(() => manager.tools.some((t) => t.name === 'mcp__echo__echo')).toBe(false);
    const err = await manager.executeTool('mcp__echo__echo', { text: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect((err as { suggestions: string[] }).suggestions).not.toContain('mcp__echo__echo');
    expect((err as Error).message).not.toContain("Did you mean 'mcp__echo__echo'");
  });
});
