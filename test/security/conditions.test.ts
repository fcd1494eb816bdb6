import { afterEach, describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';
import type { ArgConstraint, RuleCondition } from '../../src/security/conditions.js';

/** The effect for `args` when one allow rule has `when`, and when one deny (over an allow-all) has it. */
function effects(when: RuleCondition, args: Record<string, unknown>, extra: { agent?: string } = {}) {
  const allowSet = new CapabilitySet();
  allowSet.grant('mcp:fs:*', 'execute', { when });
  const denySet = new CapabilitySet();
  denySet.grant('mcp:fs:*', 'execute');
  denySet.deny('mcp:fs:*', 'execute', { when });
  const context = { args, ...extra };
  return {
    allow: allowSet.has('mcp:fs:x', 'execute', context),
    deny: !denySet.has('mcp:fs:x', 'execute', context),
  };
}

describe('startsWith on paths', () => {
  const inData = { args: { path: { startsWith: '/data/' } } };
  const table: [path: unknown, allowed: boolean][] = [
    ['/data/report.txt', true],
    ['/data', true],
    ['/data/sub/../report.txt', true],
    ['//data//x', true],
    ['/data/../etc/passwd', false],
    ['/data/./../etc/passwd', false],
    ['/data2/x', false],
    ['/database', false],
    ['/etc/passwd', false],
    ['data/report.txt', false],
    ['../data/x', false],
    ['/data\\..\\etc\\passwd', false],
    ['/data/x\u0000.txt', false],
    [['/data/x'], false],
    [42, false],
  ];
  it.each(table)('normalizes %j before comparing with /data/ (allowed: %s)', (path, allowed) => {
    expect(effects(inData, { path }).allow).toBe(allowed);
  });

  it('fails closed on a relative path: a deny on /etc applies, since the server may resolve it there', () => {
    const denyEtc = { args: { path: { startsWith: '/etc' } } };
    expect(effects(denyEtc, { path: '../../etc/passwd' }).deny).toBe(true);
    expect(effects(denyEtc, { path: '/etc/../data/x' }).deny).toBe(false);
    expect(effects(denyEtc, { path: '/data/../etc/shadow' }).deny).toBe(true);
  });

  it('compares plain prefixes for values that are not paths', () => {
    const url = { args: { url: { startsWith: 'https://api.example.com/' } } };
    expect(effects(url, { url: 'https://api.example.com/v1' }).allow).toBe(true);
    expect(effects(url, { url: 'https://api.example.com.evil/' }).allow).toBe(false);
  });
});

describe('other constraints', () => {
  it.each([
    [{ equals: 'read' }, 'read', true],
    [{ equals: 'read' }, 'write', false],
    [{ equals: 3 }, 3, true],
    [{ equals: null }, null, true],
    [{ oneOf: ['a', 'b'] }, 'b', true],
    [{ oneOf: ['a', 'b'] }, 'c', false],
    [{ maxLength: 3 }, 'abc', true],
    [{ maxLength: 3 }, 'abcd', false],
    [{ maxLength: 2 }, [1, 2, 3], false],
    [{ min: 1, max: 10 }, 10, true],
    [{ min: 1, max: 10 }, 11, false],
    [{ min: 1 }, Number.NaN, false],
    [{ pattern: '[a-z]+' }, 'abc', true],
    [{ pattern: '[a-z]+' }, 'abc; rm -rf /', false],
    [{ pattern: '^[a-z]+$' }, 'abc', true],
    [{ equals: 'x', maxLength: 0 }, 'x', false],
  ])('%j holds for %j: %s', (constraint, value, holds) => {
    expect(effects({ args: { v: constraint } }, { v: value }).allow).toBe(holds);
  });

  it('fails closed when a value has the wrong type: the allow does not apply, the deny does', () => {
    const cases: [ArgConstraint, unknown][] = [
      [{ equals: 'write' }, ['write']],
      [{ equals: 'write' }, { toString: 'write' }],
      [{ oneOf: ['rm', 'mv'] }, 1],
      [{ max: 100 }, '1000'],
      [{ pattern: 'rm.*' }, ['rm']],
      [{ maxLength: 3 }, 12345],
    ];
    for (const [constraint, value] of cases) {
      expect(effects({ args: { v: constraint } }, { v: value })).toEqual({ allow: false, deny: true });
    }
  });

  it('treats a missing argument as not matching, so neither the allow nor the deny applies', () => {
    expect(effects({ args: { v: { equals: 'x' } } }, {})).toEqual({ allow: false, deny: false });
    expect(effects({ args: { v: { equals: 'x' } } }, { v: undefined })).toEqual({
      allow: false,
      deny: false,
    });
  });

  it('constrains the agent name', () => {
    const when = { agent: { oneOf: ['ops', 'admin'] } };
    expect(effects(when, {}, { agent: 'ops' }).allow).toBe(true);
    expect(effects(when, {}, { agent: 'intern' }).allow).toBe(false);
    expect(effects(when, {}).allow).toBe(false);
  });

  it('requires every key of a condition to hold', () => {
    const when = { args: { path: { startsWith: '/data' }, mode: { equals: 'r' } }, agent: { equals: 'ops' } };
    expect(effects(when, { path: '/data/x', mode: 'r' }, { agent: 'ops' }).allow).toBe(true);
    expect(effects(when, { path: '/data/x', mode: 'w' }, { agent: 'ops' }).allow).toBe(false);
    expect(effects(when, { path: '/data/x', mode: 'r' }, { agent: 'bob' }).allow).toBe(false);
  });
});

describe('each: constraints on every item of an array', () => {
  const models = { args: { models: { each: { oneOf: ['small', 'medium'] } } } };

  it('holds when every item meets the constraints, and for an empty array', () => {
    expect(effects(models, { models: ['small', 'medium'] })).toEqual({ allow: true, deny: true });
    expect(effects(models, { models: [] }).allow).toBe(true);
  });

  it('does not hold when one item fails', () => {
    expect(effects(models, { models: ['small', 'huge'] })).toEqual({ allow: false, deny: false });
  });

  it('fails closed on a value that is not an array, or an item of the wrong type', () => {
    expect(effects(models, { models: 'small' })).toEqual({ allow: false, deny: true });
    expect(effects(models, { models: ['small', 7] })).toEqual({ allow: false, deny: true });
  });

  it('combines with maxLength on the array itself, and refuses each inside each', () => {
    const few = { args: { tools: { maxLength: 2, each: { pattern: '^search_[a-z]+$' } } } };
    expect(effects(few, { tools: ['search_web'] }).allow).toBe(true);
    expect(effects(few, { tools: ['search_web', 'search_db', 'search_fs'] }).allow).toBe(false);
    expect(effects(few, { tools: ['delete_all'] }).allow).toBe(false);
    const set = new CapabilitySet();
    const nested = { args: { v: { each: { each: { equals: 1 } } } } } as unknown as RuleCondition;
    expect(() => set.grant('mcp:fs:*', 'execute', { when: nested })).toThrow(/when/);
  });
});

describe('regular expressions in conditions', () => {
  it('stays linear on a classic ReDoS input', () => {
    const hostile = `${'a'.repeat(5000)}!`;
    expect(effects({ args: { v: { pattern: '(a+)+$' } } }, { v: hostile })).toEqual({
      allow: false,
      deny: false,
    });
    expect(effects({ args: { v: { pattern: '(a|aa)*b' } } }, { v: hostile }).allow).toBe(false);
    expect(effects({ args: { v: { pattern: '(a*)*' } } }, { v: 'a'.repeat(5000) }).allow).toBe(true);
  });

  it('rejects backreferences, lookaround and oversized patterns when the rule is added', () => {
    const set = new CapabilitySet();
    for (const pattern of ['(a)\\1', '(?=a)a', '(?<!a)b', 'a{1000}', 'x'.repeat(201), '\\bword']) {
      expect(() => set.grant('mcp:fs:*', 'execute', { when: { args: { v: { pattern } } } })).toThrow(/when/);
    }
    expect(set.rules).toHaveLength(0);
  });

  it('fails closed on a value longer than the regex input bound', () => {
    expect(effects({ args: { v: { pattern: 'a*' } } }, { v: 'a'.repeat(10_001) })).toEqual({
      allow: false,
      deny: true,
    });
  });
});

describe('annotations', () => {
  it('refuses annotation conditions on allow rules: a server could lie to gain access', () => {
    const set = new CapabilitySet();
    expect(() => set.grant('mcp:fs:*', 'execute', { when: { annotations: { readOnlyHint: true } } })).toThrow(
      /untrusted/,
    );
  });

  it('lets a deny use hints to deny more, with the MCP defaults for missing hints', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    set.deny('mcp:fs:*', 'execute', { when: { annotations: { destructiveHint: true } } });
    expect(set.has('mcp:fs:rm', 'execute', { annotations: { destructiveHint: true } })).toBe(false);
    expect(set.has('mcp:fs:ls', 'execute', { annotations: { destructiveHint: false } })).toBe(true);
    // MCP 2025-11-25: destructiveHint defaults to true when absent.
    expect(set.has('mcp:fs:x', 'execute', { annotations: {} })).toBe(false);
    expect(set.has('mcp:fs:x', 'execute')).toBe(false);
    expect(
      set.has('mcp:fs:x', 'execute', { annotations: { destructiveHint: 'no' as unknown as boolean } }),
    ).toBe(false);
  });
});

describe('prototype pollution', () => {
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>).path;
  });

  it('never reads inherited properties as argument values', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    const args = Object.create({ path: '/data/x' }) as Record<string, unknown>;
    expect(set.has('mcp:fs:x', 'execute', { args })).toBe(false);
    (Object.prototype as Record<string, unknown>).path = '/data/polluted';
    expect(set.has('mcp:fs:x', 'execute', { args: {} })).toBe(false);
  });

  it('treats __proto__ and constructor keys in call arguments as plain data', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    const args = JSON.parse(
      '{"__proto__": {"path": "/data/x"}, "constructor": {"prototype": {"path": "/data"}}}',
    );
    expect(set.has('mcp:fs:x', 'execute', { args })).toBe(false);
    expect(({} as Record<string, unknown>).path).toBeUndefined();
  });

  it('refuses __proto__, constructor and prototype keys in conditions', () => {
    const set = new CapabilitySet();
    for (const when of [
      JSON.parse('{"args": {"__proto__": {"equals": 1}}}'),
      { args: { constructor: { equals: 1 } } },
      JSON.parse('{"args": {"path": {"startsWith": "/data", "__proto__": {"startsWith": "/"}}}}'),
      { args: { __proto__: { path: { equals: 'x' } } } },
    ]) {
      expect(() => set.grant('mcp:fs:*', 'execute', { when })).toThrow(/refused/);
    }
    expect(set.rules).toHaveLength(0);
  });
});
