/**
 * Issue 14, item 6: a revoke reaches calls that were authorized but had not been sent yet, because they waited for
 * a call slot (`maxConcurrentCalls`) or for a reconnect. The fixture server logs every request it receives, so
 * the tests count what reached it.
 */
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

function setup() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:echo:slow', 'execute', { id: 'slow' });
  capabilities.grant('mcp:echo:pid', 'execute', { id: 'pid' });
  const audit = new MemoryAuditSink();
  const manager = new MCPClientManager({ capabilities, audit });
  return { capabilities, audit, manager };
}

describe('a revoke reaches calls still waiting to be sent', () => {
  it('stops a call queued behind maxConcurrentCalls: only the call in flight reaches the server', async () => {
    await using log = createFixtureLog();
    const { capabilities, audit, manager } = setup();
    await using _ = manager;
    await manager.connectServer({
      name: 'echo',
      transport: 'stdio',
      ...nodeFixture('echo'),
      env: log.env,
      maxConcurrentCalls: 1,
    });
    const first = manager.executeTool('mcp__echo__slow', { ms: 400 });
    await waitUntil(() => log.toolCalls('slow').length === 1);
    const queued = manager.executeTool('mcp__echo__slow', { ms: 1 });
    // Authorized (audited as allowed) while it waits for the slot.
    await waitUntil(() => audit.records.filter((r) => r.allowed).length === 2);
    expect(capabilities.revoke('slow')).toBe(true);

    await expect(first).resolves.toBe('slept 400');
    await expect(queued).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      message: expect.stringContaining('policy changed while the call waited'),
    });
    expect(log.toolCalls('slow')).toHaveLength(1);
    const last = audit.records.at(-1);
    expect(last).toMatchObject({ resource: 'mcp:echo:slow', allowed: false, effect: 'default-deny' });
  });

  it('stops a call waiting out a reconnect: the restarted server never receives it', async () => {
    await using log = createFixtureLog();
    const { capabilities, audit, manager } = setup();
    await using _ = manager;
    await manager.connectServer({
      name: 'echo',
      transport: 'stdio',
      ...nodeFixture('echo'),
      env: log.env,
      reconnect: { initialDelayMs: 300, maxDelayMs: 300 },
    });
    const pid = Number(await manager.executeTool('mcp__echo__pid', {}));
    const reconnecting = new Promise((resolve) => manager.once('reconnecting', resolve));
    process.kill(pid, 'SIGKILL');
    await reconnecting;
    const reconnected = new Promise((resolve) => manager.once('reconnected', resolve));
    const waiting = manager.executeTool('mcp__echo__slow', { ms: 1 });
    await waitUntil(() => audit.records.some((r) => r.resource === 'mcp:echo:slow' && r.allowed));
    capabilities.revoke('slow');
    await expect(waiting).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    await reconnected;
    expect(log.entries().some((e) => e.pid !== pid)).toBe(true); // the new process is up and was listed
    expect(log.toolCalls('slow')).toEqual([]);
  });

  it('a grant in between does not cost a re-check its quota: the charged unit still counts as the call own', async () => {
    await using log = createFixtureLog();
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:slow', 'execute', { id: 'once', maxCalls: 1 });
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'echo',
      transport: 'stdio',
      ...nodeFixture('echo'),
      env: log.env,
      maxConcurrentCalls: 1,
    });
    capabilities.grant('mcp:echo:pid', 'execute');
    const blocker = manager.executeTool('mcp__echo__pid', {});
    const call = manager.executeTool('mcp__echo__slow', { ms: 1 });
    capabilities.grant('mcp:echo:add', 'execute'); // the revision moves; the call is re-checked
    await blocker;
    await expect(call).resolves.toBe('slept 1');
    expect(capabilities.usage('once')).toEqual({ used: 1, maxCalls: 1 });
  });
});

describe('CapabilitySet.revision', () => {
  it('moves with every grant, deny and revoke, and with the parent of a derived set', () => {
    const parent = new CapabilitySet();
    const start = parent.revision;
    parent.grant('mcp:a:*', 'execute', { id: 'a' });
    const child = parent.derive([{ effect: 'allow', resource: 'mcp:a:x', actions: ['execute'] }]);
    const childAt = child.revision;
    parent.deny('mcp:a:y', 'execute');
    expect(parent.revision).toBeGreaterThan(start);
    expect(child.revision).not.toBe(childAt);
    const before = parent.revision;
    expect(parent.revoke('nothing-here')).toBe(false);
    expect(parent.revision).toBe(before);
    parent.revoke('a');
    expect(parent.revision).not.toBe(before);
  });
});
