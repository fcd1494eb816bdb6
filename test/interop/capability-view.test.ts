/** A sub-agent's view shares the live connection but is checked (and audited, and charged) once, by its own set. */
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, nodeFixture } from '../helpers/fixtures.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe('withCapabilities', () => {
  it('checks calls against the derived set only, charging a parent quota once per call', async () => {
    const parent = new CapabilitySet();
    parent.grant('mcp:echo:echo', 'execute', { maxCalls: 2 });
    parent.grant('mcp:echo:add', 'execute');
    const child = parent.derive((set) => set.grant('mcp:echo:echo', 'execute'));
    const log = createFixtureLog();
    cleanup.push(() => log.close());
    const manager = new MCPClientManager({ capabilities: parent });
    cleanup.push(() => manager.close());
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });

    const audit = new MemoryAuditSink();
    const view = manager.withCapabilities(child, { audit, agent: 'child' });
    await expect(view.executeTool('mcp__echo__echo', { text: 'one' })).resolves.toContain('one');
    await expect(view.executeTool('mcp__echo__echo', { text: 'two' })).resolves.toContain('two');
    // The parent's quota of 2 is now used up, by two calls, not four: a third is denied everywhere.
    await expect(view.executeTool('mcp__echo__echo', { text: 'three' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    await expect(manager.executeTool('mcp__echo__echo', { text: 'three' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    // The child never got add, though the parent has it; the server saw nothing of it.
    await expect(view.executeTool('mcp__echo__add', { a: 1, b: 2 })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    expect(log.toolCalls('add')).toEqual([]);
    expect(audit.records.map((r) => [r.agent, r.allowed])).toEqual([
      ['child', true],
      ['child', true],
      ['child', false],
      ['child', false],
    ]);
  });

  it('refuses a set that was not derived from the manager', () => {
    const manager = new MCPClientManager({ capabilities: new CapabilitySet() });
    cleanup.push(() => manager.close());
    expect(() => manager.withCapabilities(new CapabilitySet())).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });
});
