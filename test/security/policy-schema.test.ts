/**
 * The policy schema does the whole check (issue 15, "config parsed once"): what `PolicySchema` accepts, a capability
 * set loads, and what the set refuses, the schema refuses at the field to fix. Random rules from parts that are
 * valid or not (patterns, actions, quotas, regular expressions, ids) are checked both ways.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { type Policy, parsePolicy } from '../../src/security/policy.js';
import { PolicySchema } from '../../src/security/schemas.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type RuleInput = Record<string, unknown> & { effect: 'allow' | 'deny' | 'ask'; resource: string };

const ruleArb: fc.Arbitrary<RuleInput> = fc
  .record(
    {
      id: fc.constantFrom('r1', 'r2', 'a:b', 'with space'),
      effect: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
      resource: fc.constantFrom(
        'mcp:a:b',
        'mcp:a',
        'mcp:a:*',
        'mcp:**',
        'bogus:x:y',
        'mcp:a:b**c',
        'mcp-resource:fs:file:///data/**',
        'mcp-resource:fs:file:///data/../etc',
        'mcp-prompt:p:*',
        'tool:search',
      ),
      actions: fc.constantFrom<unknown>('execute', 'read', 'get', '*', ['execute', 'read'], [], 'bad action'),
      description: fc.constantFrom('why', 'x'.repeat(1001)),
      expiresAt: fc.constantFrom('2100-01-01T00:00:00Z', 'soon'),
      maxCalls: fc.constantFrom<unknown>(1, 0, 2.5),
      per: fc.constantFrom('30s', '400d', 'soon'),
      when: fc.constantFrom<unknown>(
        { args: { path: { startsWith: '/data' } } },
        { args: { path: { pattern: '(a)\\1' } } },
        { args: { n: {} } },
        { agent: { pattern: 'ops-[0-9]+' } },
        { agent: { pattern: '(?=x)' } },
        { annotations: { readOnlyHint: true } },
      ),
    },
    { requiredKeys: ['effect', 'resource', 'actions'] },
  )
  .map((r) => r as RuleInput);

/** Adds each rule through the code API (`grant`, `deny`, `ask`): an independent path to the same set. */
function codeApiAccepts(rules: readonly RuleInput[]): boolean {
  const set = new CapabilitySet({ onWarning: () => {} });
  const method = { allow: 'grant', deny: 'deny', ask: 'ask' } as const;
  try {
    for (const { effect, resource, actions, ...options } of rules) {
      set[method[effect]](resource, actions as string, options as never);
    }
    return true;
  } catch {
    return false;
  }
}

describe('the policy schema', () => {
  it('accepts exactly the rules a capability set accepts, and what it accepts loads', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 3 }), (rules) => {
        const policy = { version: 1, rules };
        const parsed = PolicySchema.safeParse(policy);
        expect(parsed.success).toBe(codeApiAccepts(rules));
        if (parsed.success) {
          const set = CapabilitySet.fromPolicy(parsed.data, { onWarning: () => {} });
          expect(set.rules).toHaveLength(rules.length);
        }
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    [
      { effect: 'allow', resource: 'mcp:a', actions: 'execute' },
      ['rules', 0, 'resource'],
      /did you mean 'mcp:a:\*'/,
    ],
    [
      { effect: 'allow', resource: 'mcp:a:b', actions: 'get' },
      ['rules', 0, 'actions'],
      /not an action of 'mcp'/,
    ],
    [
      { effect: 'ask', resource: 'mcp:a:b', actions: 'execute', maxCalls: 1 },
      ['rules', 0, 'maxCalls'],
      /allow/,
    ],
    [
      { effect: 'allow', resource: 'mcp:a:b', actions: 'execute', maxCalls: 1, per: '999d' },
      ['rules', 0, 'per'],
      /366 days/,
    ],
    [
      { effect: 'deny', resource: 'mcp:a:b', actions: 'execute', when: { agent: { pattern: 'a(?!b)' } } },
      ['rules', 0, 'when', 'agent', 'pattern'],
      /lookaround/,
    ],
    [
      {
        effect: 'allow',
        resource: 'mcp:a:b',
        actions: 'execute',
        when: { annotations: { readOnlyHint: true } },
      },
      ['rules', 0, 'when', 'annotations'],
      /deny or ask rules only/,
    ],
  ])('reports a rule the capability model refuses once, at the field to fix (%#)', (rule, path, message) => {
    const result = PolicySchema.safeParse({ version: 1, rules: [rule] });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.path).toEqual(path);
    expect(result.error?.issues[0]?.message).toMatch(message);
  });

  it('names a repeated id at the later rule and the earlier one in the message', () => {
    const rule = { id: 'same', effect: 'deny', resource: 'mcp:a:*', actions: 'execute' };
    const result = PolicySchema.safeParse({ version: 1, rules: [rule, { ...rule, resource: 'mcp:b:*' }] });
    expect(result.error?.issues.map((i) => [i.path, i.message])).toEqual([
      [['rules', 1, 'id'], "a rule with id 'same' already exists (rules[0]); give each rule its own id"],
    ]);
  });

  it('refuses data that could pollute a prototype before any field is read, and never forwards it', () => {
    const forged = Object.create({ effect: 'allow', resource: 'mcp:**', actions: '*' }) as object;
    const result = PolicySchema.safeParse({ version: 1, rules: [forged] });
    expect(result.error?.issues.map((i) => i.path)).toEqual([['rules', 0]]);
    const hidden = JSON.parse(
      '{"version":1,"rules":[{"effect":"deny","resource":"mcp:a:*","actions":"execute","when":{"args":{"__proto__":{"equals":"x"}}}}]}',
    );
    expect(PolicySchema.safeParse(hidden).error?.issues.map((i) => i.path)).toEqual([
      ['rules', 0, 'when', 'args', '__proto__'],
    ]);
  });

  it('outputs the policy type, which parsePolicy returns', () => {
    expectTypeOf<z.output<typeof PolicySchema>>().toEqualTypeOf<Policy>();
    expectTypeOf(parsePolicy).returns.toEqualTypeOf<Policy>();
    const policy = { version: 1, rules: [{ effect: 'allow', resource: 'mcp:a:*', actions: ['execute'] }] };
    expect(PolicySchema.parse(policy)).toEqual(parsePolicy(policy));
  });
});

describe('building the policy schemas', () => {
  it('waits for the first parse: importing the interop entry builds none (issue 15, import time)', async () => {
    // A fresh process notes every schema described (`.describe()` registers it), before and after the first parse.
    const code = [
      "import { z } from 'zod';",
      'const seen = [];',
      'const add = z.globalRegistry.add.bind(z.globalRegistry);',
      'z.globalRegistry.add = (s, m) => { if (m?.description) seen.push(m.description); return add(s, m); };',
      "const mine = (d) => d.startsWith('A capability policy') || d.startsWith('A condition on the call');",
      "await import('./src/interop/index.ts');",
      'const atImport = seen.filter(mine);',
      "const { parsePolicy } = await import('./src/security/policy.ts');",
      'parsePolicy({ version: 1, rules: [] });',
      'parsePolicy({ version: 1, rules: [] });',
      'console.log(JSON.stringify({ atImport, afterParse: seen.filter(mine) }));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', code],
      { cwd: root },
    );
    const { atImport, afterParse } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(atImport).toEqual([]);
    // Built once, on the first parse, and kept.
    expect([...afterParse].sort()).toEqual([
      'A capability policy: version and rules.',
      'A condition on the call; every part given must hold.',
    ]);
  });
});
