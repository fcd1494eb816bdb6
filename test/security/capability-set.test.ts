import { describe, expect, it, vi } from 'vitest';
import { isInterlockError, PermissionDeniedError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';

const quiet = { onWarning: () => {} };

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('default deny', () => {
  it('denies everything when the set is empty', () => {
    const set = new CapabilitySet();
    for (const [resource, action] of [
      ['mcp:fs:read_file', 'execute'],
      ['mcp-resource:fs:file:///a', 'read'],
      ['mcp-prompt:fs:p', 'get'],
      ['tool:calc', 'execute'],
    ] as const) {
      expect(set.check(resource, action)).toMatchObject({ allowed: false, effect: 'default-deny' });
      expect(set.has(resource, action)).toBe(false);
      expect(set.couldAllow(resource, action)).toBe(false);
    }
  });

  it('says how to grant the call in the operator hint of a default deny, never in its reason', () => {
    const decision = new CapabilitySet().check('mcp:echo:echo', 'execute');
    expect(decision.reason).toBe("No rule allows 'execute' on 'mcp:echo:echo' (default deny).");
    expect(decision.operatorHint).toBe(
      "To allow it, add a policy rule { effect: allow, resource: 'mcp:echo:echo', actions: execute } (in code: grant('mcp:echo:echo', 'execute')).",
    );
  });

  it('puts the operator hint on the PermissionDeniedError that require() throws, not in its message', () => {
    const err = (() => {
      try {
        new CapabilitySet().require('mcp:echo:echo', 'execute');
      } catch (e) {
        return e as PermissionDeniedError;
      }
      throw new Error('require did not throw');
    })();
    expect(err.message).not.toMatch(/grant\(|To allow it/);
    expect(err.operatorHint).toContain("grant('mcp:echo:echo', 'execute')");
  });

  it('denies a request for the action "*", so it cannot dodge a deny on a named action', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', '*');
    set.deny('mcp:fs:delete_file', 'execute');
    expect(set.check('mcp:fs:delete_file', '*')).toMatchObject({ allowed: false, effect: 'default-deny' });
  });

  it('allows only the actions a rule names', () => {
    const set = new CapabilitySet();
    set.grant('mcp-resource:fs:**', 'read');
    expect(set.has('mcp-resource:fs:file:///a', 'read')).toBe(true);
    expect(set.has('mcp-resource:fs:file:///a', 'write')).toBe(false);
  });
});

describe('precedence', () => {
  const rules: [effect: 'grant' | 'deny' | 'ask', pattern: string][] = [
    ['grant', 'mcp:fs:*'],
    ['deny', 'mcp:fs:write_file'],
    ['grant', 'mcp:fs:write_file'],
    ['grant', 'mcp:*:write_*'],
  ];
  it.each(permutations(rules).map((p) => [p.map(([e, r]) => `${e} ${r}`).join(', '), p] as const))(
    'denies write_file even when mcp:fs:* is granted (order: %s)',
    (_, order) => {
      const set = new CapabilitySet();
      for (const [effect, pattern] of order) set[effect](pattern, 'execute');
      expect(set.check('mcp:fs:write_file', 'execute')).toMatchObject({ allowed: false, effect: 'deny' });
      expect(set.check('mcp:fs:read_file', 'execute')).toMatchObject({ allowed: true, effect: 'allow' });
    },
  );

  it('denies however often allow and deny rules repeat', () => {
    const set = new CapabilitySet();
    for (let i = 0; i < 20; i++) {
      set.grant('mcp:fs:write_file', 'execute');
      if (i % 7 === 3) set.deny('mcp:fs:*', '*');
      set.grant('mcp:**', '*');
    }
    expect(set.has('mcp:fs:write_file', 'execute')).toBe(false);
    expect(set.has('mcp:git:x', 'execute')).toBe(true);
  });

  it('lets ask win over allow, and deny over ask, in every order', () => {
    for (const order of permutations(['grant', 'ask'] as const)) {
      const set = new CapabilitySet();
      for (const effect of order) set[effect]('mcp:fs:*', 'execute');
      expect(set.check('mcp:fs:x', 'execute')).toMatchObject({ allowed: false, effect: 'ask' });
    }
    for (const order of permutations(['grant', 'ask', 'deny'] as const)) {
      const set = new CapabilitySet();
      for (const effect of order) set[effect]('mcp:fs:*', 'execute');
      expect(set.check('mcp:fs:x', 'execute').effect).toBe('deny');
    }
  });

  it('names the deciding rule and its description in the decision', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    const id = set.deny('mcp:fs:delete_*', 'execute', {
      id: 'no-deletes',
      description: 'deletes need a ticket',
    });
    const d = set.check('mcp:fs:delete_file', 'execute');
    expect(id).toBe('no-deletes');
    expect(d.ruleId).toBe('no-deletes');
    expect(d.rule).toEqual({
      id: 'no-deletes',
      pattern: 'mcp:fs:delete_*',
      effect: 'deny',
      description: 'deletes need a ticket',
    });
    expect(d.reason).toContain('deletes need a ticket');
  });
});

describe('require', () => {
  it('throws PermissionDeniedError with the resource, action, reason and deciding rule', () => {
    const set = new CapabilitySet();
    set.deny('mcp:fs:*', 'execute', { id: 'block-fs' });
    let error: unknown;
    try {
      set.require('mcp:fs:read_file', 'execute');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({
      code: 'CAPABILITY_DENIED',
      resource: 'mcp:fs:read_file',
      action: 'execute',
      rule: { id: 'block-fs', effect: 'deny' },
    });
    expect((error as PermissionDeniedError).reason).toContain('block-fs');
  });

  it('returns quietly when allowed', () => {
    const set = new CapabilitySet();
    set.grant('tool:calc', 'execute');
    expect(() => set.require('tool:calc', 'execute')).not.toThrow();
  });
});

describe('expiry', () => {
  const at = 1_000_000;
  it.each([
    ['before the boundary', at - 1, true],
    ['at the boundary', at, false],
    ['after the boundary', at + 1, false],
  ])('checks expiresAt at each call: %s the rule %s', (_, now, allowed) => {
    const set = new CapabilitySet({ clock: () => now });
    set.grant('mcp:fs:*', 'execute', { expiresAt: at });
    expect(set.has('mcp:fs:x', 'execute')).toBe(allowed);
  });

  it('lets a deny expire too, after which allows apply again', () => {
    let now = 0;
    const set = new CapabilitySet({ clock: () => now });
    set.grant('mcp:fs:*', 'execute');
    set.deny('mcp:fs:*', 'execute', { ttlMs: 100 });
    expect(set.has('mcp:fs:x', 'execute')).toBe(false);
    now = 100;
    expect(set.has('mcp:fs:x', 'execute')).toBe(true);
  });

  it('places ttlMs from the clock when the rule is added', () => {
    let now = 5_000;
    const set = new CapabilitySet({ clock: () => now });
    set.grant('mcp:fs:*', 'execute', { ttlMs: 1000 });
    expect(set.rules[0]?.expiresAt).toBe(6_000);
    now = 5_999;
    expect(set.has('mcp:fs:x', 'execute')).toBe(true);
    now = 6_000;
    expect(set.has('mcp:fs:x', 'execute')).toBe(false);
  });

  it('accepts a Date and an ISO string, and uses context.now over the clock', () => {
    const set = new CapabilitySet({ clock: () => 0 });
    set.grant('mcp:a:*', 'execute', { expiresAt: new Date(2000) });
    set.grant('mcp:b:*', 'execute', { expiresAt: '1970-01-01T00:00:02Z' });
    expect(set.has('mcp:a:x', 'execute', { now: 1999 })).toBe(true);
    expect(set.has('mcp:b:x', 'execute', { now: 2000 })).toBe(false);
  });

  it('refuses both expiresAt and ttlMs, and times that are not times', () => {
    const set = new CapabilitySet();
    expect(() => set.grant('mcp:a:*', 'execute', { expiresAt: 5, ttlMs: 5 })).toThrow(/not both/);
    expect(() => set.grant('mcp:a:*', 'execute', { expiresAt: 'tomorrow' })).toThrow(/expiresAt/);
    expect(() => set.grant('mcp:a:*', 'execute', { ttlMs: -1 })).toThrow(/ttlMs/);
  });

  it('warns when a rule is added already expired', () => {
    const onWarning = vi.fn();
    const set = new CapabilitySet({ clock: () => 10, onWarning });
    set.deny('mcp:a:*', 'execute', { expiresAt: 5 });
    expect(onWarning).toHaveBeenCalledWith(
      expect.stringMatching(/already expired/),
      'INTERLOCK_RULE_EXPIRED',
    );
  });
});

describe('maxCalls', () => {
  it('lets exactly N calls through authorize and says the quota is used up after', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:read_file', 'execute', { maxCalls: 3, id: 'three' });
    const results = Array.from({ length: 5 }, () => set.authorize('mcp:fs:read_file', 'execute'));
    expect(results.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(results[4]?.reason).toMatch(/quota of 3 calls is used up/);
    expect(set.usage('three')).toEqual({ used: 3, maxCalls: 3 });
  });

  it('consumes nothing on check, has or require', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { maxCalls: 1, id: 'one' });
    for (let i = 0; i < 5; i++) {
      set.check('mcp:fs:x', 'execute');
      set.has('mcp:fs:x', 'execute');
      set.require('mcp:fs:x', 'execute');
    }
    expect(set.usage('one')).toEqual({ used: 0, maxCalls: 1 });
  });

  it('prefers an unlimited allow, so a quota is spent only when needed', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { maxCalls: 1, id: 'limited' });
    set.grant('mcp:fs:read_*', 'execute');
    set.authorize('mcp:fs:read_file', 'execute');
    expect(set.usage('limited')?.used).toBe(0);
    expect(set.authorize('mcp:fs:write_file', 'execute').allowed).toBe(true);
    expect(set.authorize('mcp:fs:write_file', 'execute').allowed).toBe(false);
  });

  it('spends no quota when a deny wins', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { maxCalls: 1, id: 'q' });
    set.deny('mcp:fs:delete', 'execute');
    set.authorize('mcp:fs:delete', 'execute');
    expect(set.usage('q')?.used).toBe(0);
  });

  it('never lets 50 concurrent callers overshoot the quota', async () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:read_file', 'execute', { maxCalls: 7, id: 'q' });
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        // Callers spread over three timer ticks so they interleave: the delay is the test's subject.
        await new Promise((r) => setTimeout(r, i % 3));
        return set.authorize('mcp:fs:read_file', 'execute').allowed;
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(7);
    expect(set.usage('q')).toEqual({ used: 7, maxCalls: 7 });
  });

  it('accepts maxCalls on allow rules only', () => {
    const set = new CapabilitySet();
    expect(() => set.deny('mcp:fs:*', 'execute', { maxCalls: 3 })).toThrow(/allow rules only/);
    expect(() => set.ask('mcp:fs:*', 'execute', { maxCalls: 3 })).toThrow(/allow rules only/);
    expect(() => set.grant('mcp:fs:*', 'execute', { maxCalls: 0 })).toThrow(/positive integer/);
  });
});

describe('conditions that fail', () => {
  const failing: [string, () => unknown][] = [
    [
      'throws',
      () => {
        throw new Error('boom');
      },
    ],
    ['returns a string', () => 'yes'],
    ['returns a number', () => 1],
    ['returns a promise', async () => true],
    ['returns undefined', () => undefined],
  ];
  it.each(failing)('does not apply an allow whose condition %s', (_, when) => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { when: when as () => boolean });
    expect(set.check('mcp:fs:x', 'execute', { args: {} })).toMatchObject({
      allowed: false,
      effect: 'default-deny',
    });
  });

  it.each(failing)('applies a deny whose condition %s', (_, when) => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    set.deny('mcp:fs:*', 'execute', { when: when as () => boolean });
    const d = set.check('mcp:fs:x', 'execute', { args: {} });
    expect(d).toMatchObject({ allowed: false, effect: 'deny' });
    expect(d.reason).toMatch(/fails closed/);
  });

  it.each(failing)('denies when an ask rule condition %s, rather than skipping the ask', (_, when) => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    set.ask('mcp:fs:*', 'execute', { when: when as () => boolean });
    expect(set.check('mcp:fs:x', 'execute')).toMatchObject({ allowed: false, effect: 'deny' });
  });

  it('gives a when function the resource, action, agent, time and arguments', () => {
    const set = new CapabilitySet({ clock: () => 42 });
    const seen: unknown[] = [];
    set.grant('mcp:fs:*', 'execute', {
      when: (input) => {
        seen.push(input);
        return input.agent === 'ops';
      },
    });
    expect(set.has('mcp:fs:x', 'execute', { agent: 'ops', args: { a: 1 } })).toBe(true);
    expect(set.has('mcp:fs:x', 'execute', { agent: 'intern' })).toBe(false);
    expect(seen[0]).toMatchObject({
      resource: 'mcp:fs:x',
      action: 'execute',
      agent: 'ops',
      now: 42,
      args: { a: 1 },
    });
  });
});

describe('revoke', () => {
  it('takes effect on the next check: no cache reuses an old allow', () => {
    const set = new CapabilitySet();
    const id = set.grant('mcp:fs:*', 'execute');
    expect(set.has('mcp:fs:x', 'execute')).toBe(true);
    expect(set.revoke(id)).toBe(true);
    expect(set.has('mcp:fs:x', 'execute')).toBe(false);
    expect(set.revoke(id)).toBe(false);
  });

  it('removes allow and ask rules by pattern but leaves deny rules, which go only by id', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    set.grant('mcp:fs:*', '*');
    set.ask('mcp:fs:*', 'execute');
    const denyId = set.deny('mcp:fs:*', 'execute');
    expect(set.revoke('mcp:fs:*')).toBe(true);
    expect(set.rules.map((r) => r.id)).toEqual([denyId]);
    expect(set.revoke(denyId)).toBe(true);
    expect(set.rules).toHaveLength(0);
  });
});

describe('immutability', () => {
  it('copies options, so changing them after adding widens nothing', () => {
    const set = new CapabilitySet();
    const options = { maxCalls: 1, when: { args: { path: { startsWith: '/data' } } } };
    const actions = ['execute'];
    set.grant('mcp:fs:*', actions, options);
    options.maxCalls = 1000;
    options.when.args.path.startsWith = '/';
    actions.push('*');
    expect(set.rules[0]).toMatchObject({ maxCalls: 1, actions: ['execute'] });
    expect(set.has('mcp:fs:x', 'execute', { args: { path: '/etc/passwd' } })).toBe(false);
  });

  it('returns frozen rules and decisions that cannot be changed to widen access', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:read_*', 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    const rules = set.rules;
    expect(Object.isFrozen(rules)).toBe(true);
    expect(Object.isFrozen(rules[0])).toBe(true);
    expect(Object.isFrozen(rules[0]?.actions)).toBe(true);
    expect(Object.isFrozen(rules[0]?.when?.args?.path)).toBe(true);
    expect(() => {
      (rules[0] as { pattern: string }).pattern = 'mcp:**';
    }).toThrow(TypeError);
    const d = set.check('mcp:fs:read_file', 'execute', { args: { path: '/data/a' } });
    expect(Object.isFrozen(d)).toBe(true);
    expect(Object.isFrozen(d.rule)).toBe(true);
    expect(set.has('mcp:fs:write_file', 'execute')).toBe(false);
  });

  it('refuses a misspelt option rather than adding a permanent or unlimited rule', () => {
    const set = new CapabilitySet();
    expect(() => set.grant('mcp:fs:*', 'execute', { expiresAT: 5 } as never)).toThrow(
      /expiresAT: unknown option/,
    );
    expect(set.rules).toHaveLength(0);
  });

  it('refuses duplicate ids and ids that could be mistaken for patterns', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute', { id: 'fs' });
    expect(() => set.grant('mcp:git:*', 'execute', { id: 'fs' })).toThrow(/already exists/);
    expect(() => set.grant('mcp:git:*', 'execute', { id: 'mcp:git' })).toThrow(/no ':'/);
    expect(set.grant('mcp:git:*', 'execute')).not.toBe('fs');
  });
});

describe('couldAllow', () => {
  it('lists a tool some allow or ask rule might permit, and hides one an unconditional deny blocks', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:*', 'execute');
    set.ask('mcp:git:push', 'execute');
    set.deny('mcp:fs:delete_file', 'execute');
    set.deny('mcp:fs:write_file', 'execute', { when: { args: { path: { startsWith: '/etc' } } } });
    expect(set.couldAllow('mcp:fs:read_file', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:git:push', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:fs:delete_file', 'execute')).toBe(false);
    expect(set.couldAllow('mcp:fs:write_file', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:other:x', 'execute')).toBe(false);
  });

  it('treats conditions as possibly true without arguments, and evaluates them with arguments', () => {
    const set = new CapabilitySet();
    set.grant('mcp:fs:read_file', 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    expect(set.couldAllow('mcp:fs:read_file', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:fs:read_file', 'execute', { args: { path: '/etc' } })).toBe(false);
  });

  it('hides a tool whose only allow is expired or used up', () => {
    let now = 0;
    const set = new CapabilitySet({ clock: () => now });
    set.grant('mcp:a:x', 'execute', { ttlMs: 10 });
    set.grant('mcp:b:x', 'execute', { maxCalls: 1 });
    set.authorize('mcp:b:x', 'execute');
    now = 10;
    expect(set.couldAllow('mcp:a:x', 'execute')).toBe(false);
    expect(set.couldAllow('mcp:b:x', 'execute')).toBe(false);
  });
});

describe('allowAll', () => {
  it('allows everything and warns loudly on creation', () => {
    const onWarning = vi.fn();
    const set = CapabilitySet.allowAll({ onWarning });
    expect(onWarning).toHaveBeenCalledWith(expect.stringMatching(/tests only/), 'INTERLOCK_ALLOW_ALL');
    expect(set.has('mcp:any:tool', 'execute')).toBe(true);
    expect(set.has('mcp-resource:any:file:///x', 'read')).toBe(true);
    expect(set.has('mcp-prompt:any:p', 'get')).toBe(true);
    expect(set.has('tool:calc', 'execute')).toBe(true);
  });

  it('emits a process warning with code INTERLOCK_ALLOW_ALL when no onWarning is given', () => {
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      CapabilitySet.allowAll();
      expect(spy).toHaveBeenCalledWith(expect.any(String), { code: 'INTERLOCK_ALLOW_ALL' });
    } finally {
      spy.mockRestore();
    }
  });

  it('still lets a deny win', () => {
    const set = CapabilitySet.allowAll(quiet);
    set.deny('mcp:fs:delete_file', 'execute');
    expect(set.has('mcp:fs:delete_file', 'execute')).toBe(false);
    expect(isInterlockError(new PermissionDeniedError({ resource: 'r', action: 'a', reason: 'x' }))).toBe(
      true,
    );
  });
});

describe('indexing', () => {
  it('decides correctly with many servers and wildcard-server rules mixed', () => {
    const set = new CapabilitySet();
    for (let s = 0; s < 100; s++) for (let t = 0; t < 10; t++) set.grant(`mcp:srv${s}:tool${t}`, 'execute');
    set.deny('mcp:*:tool3', 'execute');
    set.grant('mcp:srv1*:extra', 'execute');
    expect(set.has('mcp:srv42:tool7', 'execute')).toBe(true);
    expect(set.has('mcp:srv42:tool3', 'execute')).toBe(false);
    expect(set.has('mcp:srv17:extra', 'execute')).toBe(true);
    expect(set.has('mcp:srv27:extra', 'execute')).toBe(false);
    expect(set.has('mcp:srv100:tool1', 'execute')).toBe(false);
  });
});
