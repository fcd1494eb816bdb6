/** Denial reasons say what to change: the rule that would allow the call, or how to grant it. */
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';

describe('denial reasons', () => {
  it('names the allow rule whose argument condition did not hold, with its description', () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'drafts-only',
          effect: 'allow',
          resource: 'mcp:notes:write_note',
          actions: 'execute',
          description: 'Agents may only write drafts.',
          when: { args: { id: { startsWith: 'drafts/' } } },
        },
      ],
    });
    const decision = set.check('mcp:notes:write_note', 'execute', { args: { id: 'team/x' } });
    expect(decision.effect).toBe('default-deny');
    expect(decision.reason).toContain("Rule 'drafts-only' (Agents may only write drafts) allows");
    expect(decision.reason).toContain(
      `only when id starts with "drafts/"; for this call argument 'id' does not start with "drafts/"`,
    );
    expect(set.check('mcp:notes:write_note', 'execute', { args: { id: 'drafts/x' } }).allowed).toBe(true);
  });

  // Issue 18 item 3: the default deny used to advise an unconditional grant here.
  it('explains a relative path against an absolute-path condition, and never advises an unconditional grant', () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'data-only',
          effect: 'allow',
          resource: 'mcp:fs:read_file',
          actions: 'execute',
          when: { args: { path: { startsWith: '/data' } } },
        },
      ],
    });
    const decision = set.check('mcp:fs:read_file', 'execute', { args: { path: 'docs/a.txt' } });
    expect(decision.effect).toBe('default-deny');
    expect(decision.reason).toBe(
      `Rule 'data-only' allows 'execute' on 'mcp:fs:read_file' only when path starts with "/data"; for this call argument 'path' is a relative path, and the rule wants an absolute path under "/data" (a relative path cannot be placed, so it never matches) (default deny).`,
    );
    expect(decision.reason).not.toContain('grant(');
    expect(set.check('mcp:fs:read_file', 'execute', { args: { path: '/etc/passwd' } }).reason).toContain(
      `argument 'path' is not under "/data"`,
    );
    expect(set.check('mcp:fs:read_file', 'execute', { args: { path: 7 } }).reason).toContain(
      `argument 'path' is a number, and the rule wants text starting with "/data"`,
    );
  });

  it('never puts an argument value in the reason: it is written to audit records', () => {
    const set = new CapabilitySet();
    set.grant('mcp:vault:get', 'execute', {
      when: {
        args: {
          a: { equals: 'x' },
          b: { oneOf: ['y'] },
          c: { startsWith: '/safe' },
          d: { pattern: '^z$' },
          e: { maxLength: 1 },
          f: { min: 0, max: 1 },
        },
      },
    });
    const secret = 's3cr3t-value';
    const calls: Record<string, unknown>[] = [
      { a: secret },
      { a: 'x', b: secret },
      { a: 'x', b: 'y', c: secret },
      { a: 'x', b: 'y', c: `/${secret}` },
      { a: 'x', b: 'y', c: '/safe/a', d: secret },
      { a: 'x', b: 'y', c: '/safe/a', d: 'z', e: secret },
      { a: 'x', b: 'y', c: '/safe/a', d: 'z', e: 'q', f: 424242 },
    ];
    for (const args of calls) {
      const { reason } = set.check('mcp:vault:get', 'execute', { args });
      expect(reason).toMatch(/for this call argument '[a-f]'/);
      expect(reason).not.toContain(secret);
      expect(reason).not.toContain('424242');
    }
  });

  it('names a missing argument and the arguments the call has', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:read_file', 'execute', {
      id: 'data',
      when: { args: { path: { startsWith: '/data' } } },
    });
    const { reason } = set.check('mcp:fs:read_file', 'execute', { args: { pth: '/data/a' } });
    expect(reason).toContain(`argument 'path' is missing (the call has only 'pth')`);
  });

  it.each<[string, Record<string, unknown>, unknown, string]>([
    ['equals', { equals: 'a' }, 'b', `argument 'x' is not "a"`],
    ['oneOf', { oneOf: [1, 2] }, 3, `argument 'x' is not one of 1, 2`],
    ['pattern', { pattern: '^[a-z]+$' }, 'A1', `argument 'x' does not match /^[a-z]+$/`],
    ['maxLength', { maxLength: 2 }, 'abc', `argument 'x' is longer than 2`],
    ['min', { min: 5 }, 1, `argument 'x' is below the minimum 5`],
    ['max', { max: 5 }, 9, `argument 'x' is above the maximum 5`],
  ])('explains a failed %s constraint', (_label, constraint, value, expected) => {
    const set = new CapabilitySet();
    set.grant('mcp:s:t', 'execute', { when: { args: { x: constraint } } });
    expect(set.check('mcp:s:t', 'execute', { args: { x: value } }).reason).toContain(expected);
  });

  it('says a condition function did not hold, without advising a grant', () => {
    const set = new CapabilitySet();
    set.grant('mcp:s:t', 'execute', { id: 'fn', when: () => false });
    const { reason } = set.check('mcp:s:t', 'execute', { args: {} });
    expect(reason).toContain(
      `Rule 'fn' allows 'execute' on 'mcp:s:t' only when its condition function returns true`,
    );
    expect(reason).not.toContain('grant(');
  });

  it('says how to grant a call no rule covers, to the operator only', () => {
    const decision = new CapabilitySet().check('mcp:fs:read', 'execute');
    expect(decision.operatorHint).toContain("grant('mcp:fs:read', 'execute')");
    expect(decision.reason).not.toContain('grant(');
  });

  it('does not double the full stop of a description ending in one', () => {
    const set = new CapabilitySet();
    set.deny('mcp:vault:*', 'execute', { description: 'No secrets.' });
    const { reason } = set.check('mcp:vault:read', 'execute');
    expect(reason).toMatch(/No secrets\.$/);
    expect(reason).not.toContain('..');
  });
});
