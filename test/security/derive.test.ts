import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';

function parentSet(): CapabilitySet {
  const parent = new CapabilitySet();
  parent.grant('mcp:fs:*', 'execute', { id: 'fs' });
  parent.grant('mcp-resource:fs:**', 'read');
  parent.deny('mcp:fs:delete_*', 'execute');
  return parent;
}

describe('derive', () => {
  it('makes a child that allows only what it was given and the parent allows', () => {
    const child = parentSet().derive([{ effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }]);
    expect(child.has('mcp:fs:read_file', 'execute')).toBe(true);
    expect(child.has('mcp:fs:write_file', 'execute')).toBe(false);
  });

  it.each([
    ['a wider pattern', 'mcp:**', 'execute'],
    ['another server', 'mcp:git:*', 'execute'],
    ['a prefix-confused server', 'mcp:fs2:*', 'execute'],
    ['a wider action', 'mcp:fs:*', '*'],
    ['a rest pattern over a one-segment grant', 'mcp:fs:**', 'execute'],
  ])('throws instead of clamping when the child asks for %s', (_, resource, actions) => {
    const parent = parentSet();
    let error: unknown;
    try {
      parent.derive([{ effect: 'allow', resource, actions }]);
    } catch (err) {
      error = err;
    }
    expect(isInterlockError(error, 'INVALID_POLICY')).toBe(true);
    expect((error as Error).message).toMatch(/more than the parent/);
  });

  it('refuses a wider grant added to the child later, too', () => {
    const child = parentSet().derive((c) => {
      c.grant('mcp:fs:read_file', 'execute');
    });
    expect(() => child.grant('mcp:git:*', 'execute')).toThrow(/more than the parent/);
    expect(() => child.ask('mcp:**', 'execute')).toThrow(/more than the parent/);
    expect(() => child.deny('mcp:**', '*')).not.toThrow();
  });

  it("applies the parent's deny inside a child grant that covers it", () => {
    const child = parentSet().derive([{ effect: 'allow', resource: 'mcp:fs:*', actions: 'execute' }]);
    const d = child.check('mcp:fs:delete_file', 'execute');
    expect(d).toMatchObject({ allowed: false, effect: 'deny' });
    expect(d.reason).toMatch(/parent set/);
  });

  it("reaches grandchildren at once with a parent's revoke and new deny", () => {
    const root = parentSet();
    const child = root.derive([{ effect: 'allow', resource: 'mcp:fs:*', actions: 'execute' }]);
    const grandchild = child.derive([{ effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }]);
    expect(grandchild.has('mcp:fs:read_file', 'execute')).toBe(true);
    root.deny('mcp:fs:read_file', 'execute');
    expect(grandchild.has('mcp:fs:read_file', 'execute')).toBe(false);
    expect(grandchild.has('mcp:fs:read_dir', 'execute')).toBe(true);
    root.revoke('fs');
    expect(child.has('mcp:fs:read_dir', 'execute')).toBe(false);
    expect(grandchild.has('mcp:fs:read_dir', 'execute')).toBe(false);
    expect(grandchild.couldAllow('mcp:fs:read_dir', 'execute')).toBe(false);
  });

  it("keeps the parent's quota: calls through children count against it", () => {
    const parent = new CapabilitySet();
    parent.grant('mcp:fs:*', 'execute', { maxCalls: 3, id: 'q' });
    const a = parent.derive([{ effect: 'allow', resource: 'mcp:fs:*', actions: 'execute' }]);
    const b = parent.derive([{ effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }]);
    const results = [a, b, a, b, a].map((s) => s.authorize('mcp:fs:read_file', 'execute').allowed);
    expect(results).toEqual([true, true, true, false, false]);
    expect(parent.usage('q')).toEqual({ used: 3, maxCalls: 3 });
  });

  it('spends neither quota when the other side denies', () => {
    const parent = new CapabilitySet();
    parent.grant('mcp:fs:*', 'execute', { maxCalls: 5, id: 'parent-q' });
    parent.deny('mcp:fs:rm', 'execute');
    const child = parent.derive((c) => {
      c.grant('mcp:fs:*', 'execute', { maxCalls: 5, id: 'child-q' });
      c.deny('mcp:fs:mv', 'execute');
    });
    child.authorize('mcp:fs:rm', 'execute');
    child.authorize('mcp:fs:mv', 'execute');
    expect(parent.usage('parent-q')?.used).toBe(0);
    expect(child.usage('child-q')?.used).toBe(0);
    child.authorize('mcp:fs:ls', 'execute');
    expect(parent.usage('parent-q')?.used).toBe(1);
    expect(child.usage('child-q')?.used).toBe(1);
  });

  it('turns a child allow into ask where the parent asks, and the approver decides', async () => {
    const parent = new CapabilitySet();
    parent.ask('mcp:git:push', 'execute');
    const child = parent.derive([{ effect: 'allow', resource: 'mcp:git:push', actions: 'execute' }]);
    expect(child.check('mcp:git:push', 'execute').effect).toBe('ask');
    const gate = new CapabilityGate({ capabilities: child, approver: () => true });
    await expect(gate.authorize({ resource: 'mcp:git:push', action: 'execute' })).resolves.toMatchObject({
      allowed: true,
    });
  });

  it('hides nothing about its bound: toJSON of a derived set throws', () => {
    const child = parentSet().derive([]);
    expect(() => child.toJSON()).toThrow(/derived set/);
  });

  it('refuses child grants covered only by an expired or used-up parent rule', () => {
    let now = 0;
    const parent = new CapabilitySet({ clock: () => now });
    parent.grant('mcp:a:*', 'execute', { ttlMs: 10 });
    parent.grant('mcp:b:*', 'execute', { maxCalls: 1 });
    parent.authorize('mcp:b:x', 'execute');
    now = 10;
    expect(() => parent.derive([{ effect: 'allow', resource: 'mcp:a:x', actions: 'execute' }])).toThrow();
    expect(() => parent.derive([{ effect: 'allow', resource: 'mcp:b:x', actions: 'execute' }])).toThrow();
  });
});
