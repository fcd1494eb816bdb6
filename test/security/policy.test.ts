import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { type Policy, parsePolicy } from '../../src/security/policy.js';

const policy: Policy = {
  version: 1,
  rules: [
    { id: 'fs-read', effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute', description: 'reads' },
    {
      id: 'fs-write-data',
      effect: 'allow',
      resource: 'mcp:fs:write_file',
      actions: ['execute'],
      when: { args: { path: { startsWith: '/data/' }, content: { maxLength: 10_000 } } },
      maxCalls: 5,
      expiresAt: '2100-01-01T00:00:00.000Z',
    },
    { id: 'no-secrets', effect: 'deny', resource: 'mcp-resource:fs:file:///secrets/**', actions: '*' },
    {
      effect: 'ask',
      resource: 'mcp:git:push',
      actions: 'execute',
      when: { annotations: { destructiveHint: true } },
    },
    {
      effect: 'allow',
      resource: 'mcp-prompt:git:*',
      actions: ['get'],
      when: { agent: { pattern: 'ops-[0-9]+' } },
    },
  ],
};

function errorOf(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('policies as data', () => {
  it('loads a policy and decides by it', () => {
    const set = CapabilitySet.fromPolicy(policy);
    expect(set.has('mcp:fs:read_file', 'execute')).toBe(true);
    expect(set.has('mcp:fs:write_file', 'execute', { args: { path: '/data/a', content: 'x' } })).toBe(true);
    expect(set.has('mcp:fs:write_file', 'execute', { args: { path: '/etc/a', content: 'x' } })).toBe(false);
    expect(set.has('mcp-resource:fs:file:///secrets/key', 'read')).toBe(false);
    expect(set.check('mcp:git:push', 'execute').effect).toBe('ask');
    expect(set.has('mcp-prompt:git:summary', 'get', { agent: 'ops-7' })).toBe(true);
    expect(set.has('mcp-prompt:git:summary', 'get', { agent: 'ops-7x' })).toBe(false);
  });

  it('round-trips through toJSON and JSON text to an equivalent set', () => {
    const set = CapabilitySet.fromPolicy(policy);
    const text = JSON.stringify(set);
    const again = CapabilitySet.fromPolicy(JSON.parse(text));
    expect(again.toJSON()).toEqual(set.toJSON());
    expect(again.rules.map((r) => r.id)).toEqual(set.rules.map((r) => r.id));
    expect(again.toJSON().rules[1]).toMatchObject({ maxCalls: 5, expiresAt: '2100-01-01T00:00:00.000Z' });
  });

  it('refuses to serialize a rule with a function condition rather than dropping it', () => {
    const set = new CapabilitySet();
    set.deny('mcp:fs:*', 'execute', { when: () => true, id: 'fn-deny' });
    expect(() => set.toJSON()).toThrow(/fn-deny.*function condition/);
  });

  it.each([
    [{ version: 2, rules: [] }, /version/],
    [{ rules: [] }, /version/],
    [
      { version: 1, rules: [{ effect: 'permit', resource: 'mcp:a:b', actions: 'execute' }] },
      /rules\[0\]\.effect/,
    ],
    [
      { version: 1, rules: [{ effect: 'allow', resource: 'mcp:a:b', action: 'execute' }] },
      /unknown field\(s\) 'action'/,
    ],
    [{ version: 1, rules: [{ effect: 'allow', resource: 'mcp:a:b', actions: [] }] }, /rules\[0\]\.actions/],
    [
      {
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:a:b', actions: 'execute', when: { arg: {} } }],
      },
      /rules\[0\]\.when.*unknown field\(s\) 'arg'/,
    ],
    [
      {
        version: 1,
        rules: [
          { effect: 'allow', resource: 'mcp:a:b', actions: 'execute' },
          {
            effect: 'allow',
            resource: 'mcp:a:b',
            actions: 'execute',
            when: { args: { p: { startWith: '/' } } },
          },
        ],
      },
      /rules\[1\]\.when\.args\.p.*unknown field\(s\) 'startWith'/,
    ],
    [
      {
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:a:b', actions: 'execute', expiresAt: 'soon' }],
      },
      /rules\[0\]\.expiresAt/,
    ],
    [
      { version: 1, rules: [{ effect: 'allow', resource: 'mcp:a', actions: 'execute' }] },
      /rules\[0\]\.resource.*did you mean/,
    ],
    [
      { version: 1, rules: [{ effect: 'allow', resource: 'mcp:a:b', actions: 'get' }] },
      /rules\[0\]\.actions.*'get'/,
    ],
    [
      { version: 1, rules: [{ effect: 'deny', resource: 'mcp:a:b', actions: 'execute', maxCalls: 2 }] },
      /rules\[0\]\.maxCalls/,
    ],
    [
      {
        version: 1,
        rules: [
          {
            effect: 'allow',
            resource: 'mcp:a:b',
            actions: 'execute',
            when: { args: { v: { pattern: '(a)\\1' } } },
          },
        ],
      },
      /rules\[0\]\.when.*not supported/,
    ],
    [
      {
        version: 1,
        rules: [
          { id: 'x', effect: 'allow', resource: 'mcp:a:b', actions: 'execute' },
          { id: 'x', effect: 'deny', resource: 'mcp:a:c', actions: 'execute' },
        ],
      },
      /rules\[1\]\.id.*already exists/,
    ],
    [
      {
        version: 1,
        rules: [
          {
            effect: 'allow',
            resource: 'mcp:a:b',
            actions: 'execute',
            when: { annotations: { readOnlyHint: true } },
          },
        ],
      },
      /rules\[0\]\.when\.annotations.*untrusted/,
    ],
    [JSON.parse('{"version":1,"rules":[],"__proto__":{"admin":true}}'), /__proto__/],
    [
      JSON.parse(
        '{"version":1,"rules":[{"effect":"allow","resource":"mcp:a:b","actions":"execute","constructor":1}]}',
      ),
      /constructor/,
    ],
    ['version: 1', /expected object/],
  ])('refuses a malformed policy, naming the rule index and field (%#)', (bad, message) => {
    const error = errorOf(() => CapabilitySet.fromPolicy(bad));
    expect(isInterlockError(error, 'INVALID_POLICY')).toBe(true);
    expect(error.message).toMatch(message);
  });

  it('does not pollute Object.prototype through a policy file', () => {
    const text =
      '{"version":1,"rules":[{"effect":"allow","resource":"mcp:a:b","actions":"execute","when":{"args":{"__proto__":{"equals":"x"}}}}]}';
    expect(() => CapabilitySet.fromPolicy(JSON.parse(text))).toThrow();
    expect(({} as Record<string, unknown>).equals).toBeUndefined();
  });

  it('validates a policy object without building a set', () => {
    expect(parsePolicy({ version: 1, rules: [] })).toEqual({ version: 1, rules: [] });
  });
});
