/**
 * Differential test (issue 40): a native policy and its Cedar export decide the same, effect and allowed, on
 * 10,000 generated requests. Policies are drawn from the native features that have a Cedar form: globs, final
 * `**`, every action list, allow/deny/ask, expiry, and conditions on arguments (equals, oneOf, startsWith without
 * a path, maxLength, whole-number min and max), on the agent and on annotations.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { policyToCedar } from '../../src/security/cedar/export.js';
import { type PolicyRule, parsePolicy } from '../../src/security/policy.js';
import type { CheckContext } from '../../src/security/types.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const SEED = 40_2026;
const POLICIES = 50;
const REQUESTS_PER_POLICY = 200;

const SERVERS = ['notes', 'fs', 'nota'];
const NAMES = ['read_a', 'read_b', 'write', 'rm', 'a:b'];
const URIS = ['file:///data/a', 'file:///etc/passwd', 'mem://x'];
const SCHEMES: Record<string, readonly string[]> = {
  mcp: ['execute', 'request'],
  'mcp-resource': ['read'],
  'mcp-prompt': ['get'],
  tool: ['execute'],
};
const STRINGS = ['', 'a', 'ab', 'drafts/x', 'drafts', 'b*c', 'x"y'];
const INTS = [-3, 0, 1, 2, 7, 100];

const segment = fc.constantFrom('notes', 'fs', 'read_a', 'read_*', '*', 'no*', 'file', '///data/*', 'a');

const pattern = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('mcp', 'mcp-prompt', 'mcp-resource'),
      fc.array(segment, { minLength: 2, maxLength: 3 }),
    )
    .map(([s, segs]) => `${s}:${segs.join(':')}`),
  // A final `**` after literal segments only (a glob before it has no exact Cedar form: see the guide).
  fc
    .tuple(
      fc.constantFrom('mcp', 'mcp-resource'),
      fc.constantFrom('notes', 'fs', 'nota'),
      fc.constantFrom('**', 'read**', 'file:///data/**'),
    )
    .map(([s, server, tail]) => `${s}:${server}:${tail}`),
  fc.constantFrom('mcp:**', 'mcp:*:**', 'tool:*', 'tool:read_*', 'tool:**', 'mcp-prompt:notes:*'),
);

const scalar = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.constantFrom(...INTS),
  fc.boolean(),
  fc.constant(null),
);
/** `arb` one time in `1 + absent`, else undefined. */
function sometimes<T>(arb: fc.Arbitrary<T>, absent = 2): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

const oneConstraint = fc.oneof(
  scalar.map((equals) => ({ equals })),
  fc.array(scalar, { minLength: 1, maxLength: 3 }).map((oneOf) => ({ oneOf })),
  fc.constantFrom('a', 'drafts', 'b*').map((startsWith) => ({ startsWith })),
  fc.nat(3).map((maxLength) => ({ maxLength })),
  fc.constantFrom(-1, 0, 1, 1.5, 7).map((min) => ({ min })),
  fc.constantFrom(0, 2, 2.5, 100).map((max) => ({ max })),
);
// One constraint, sometimes two on the same argument (every key must hold).
const argConstraint = fc
  .tuple(oneConstraint, fc.option(oneConstraint, { freq: 3, nil: undefined }))
  .map(([a, b]) => ({ ...a, ...b }));
const agentConstraint = fc
  .record(
    {
      equals: fc.constantFrom('bot', 'helper'),
      oneOf: fc.constant(['bot', 'x']),
      startsWith: fc.constantFrom('he', 'b'),
    },
    { requiredKeys: [] },
  )
  .filter((c) => Object.keys(c).length > 0);

const rule = fc
  .record(
    {
      effect: fc.constantFrom('allow', 'deny', 'ask'),
      resource: pattern,
      star: fc.boolean(),
      pick: fc.nat(3),
      expires: fc.constantFrom(undefined, undefined, undefined, NOW - 1, NOW, NOW + 1),
      args: sometimes(
        fc.dictionary(fc.constantFrom('path', 'n'), argConstraint, { minKeys: 1, maxKeys: 2 }),
        1,
      ),
      agent: sometimes(agentConstraint, 4),
      annotations: sometimes(
        fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
        3,
      ),
    },
    { requiredKeys: ['effect', 'resource', 'star', 'pick', 'expires'] },
  )
  .map((r, _i = 0): PolicyRule => {
    const scheme = r.resource.slice(0, r.resource.indexOf(':'));
    const valid = SCHEMES[scheme] ?? ['execute'];
    const actions = r.star ? '*' : valid.filter((_, k) => k <= r.pick % valid.length);
    const when = {
      ...(r.args !== undefined ? { args: r.args } : {}),
      ...(r.agent !== undefined ? { agent: r.agent } : {}),
      // Annotations are untrusted: deny and ask rules only.
      ...(r.annotations !== undefined && r.effect !== 'allow' && Object.keys(r.annotations).length > 0
        ? { annotations: r.annotations }
        : {}),
    };
    return {
      effect: r.effect as PolicyRule['effect'],
      resource: r.resource,
      actions,
      ...(r.expires !== undefined ? { expiresAt: new Date(r.expires).toISOString() } : {}),
      ...(Object.keys(when).length > 0 ? { when } : {}),
    } as PolicyRule;
  })
  .filter(valid);

/** Only rules the native schema accepts (a generated pattern may put `**` where it may not be). */
function valid(r: PolicyRule): boolean {
  try {
    parsePolicy({ version: 1, rules: [r] });
    return true;
  } catch {
    return false;
  }
}

const argValue = fc.oneof(scalar, fc.constant([1, 2]), fc.constant({ a: 1 }), fc.constant(['x']));
const request = fc.record({
  resource: fc.oneof(
    fc.tuple(fc.constantFrom(...SERVERS), fc.constantFrom(...NAMES)).map(([s, t]) => `mcp:${s}:${t}`),
    fc.tuple(fc.constantFrom(...SERVERS), fc.constantFrom(...URIS)).map(([s, u]) => `mcp-resource:${s}:${u}`),
    fc.tuple(fc.constantFrom(...SERVERS), fc.constantFrom(...NAMES)).map(([s, t]) => `mcp-prompt:${s}:${t}`),
    fc.constantFrom(...NAMES).map((t) => `tool:${t}`),
  ),
  // Mostly an action the scheme has; now and then one it does not (read on a tool), which Cedar cannot express.
  action: fc.oneof(
    { weight: 5, arbitrary: fc.constant('valid') },
    { weight: 1, arbitrary: fc.constantFrom('execute', 'read', 'get', 'request') },
  ),
  pick: fc.nat(1),
  // Half the requests aim at one of the policy's own patterns (a `*` filled in), so rules apply often.
  aim: fc.option(fc.tuple(fc.nat(), fc.constantFrom('a', 'read_b', 'notes', 'x:y')), { nil: undefined }),
  args: fc.option(fc.dictionary(fc.constantFrom('path', 'n', 'other'), argValue, { maxKeys: 3 }), {
    nil: undefined,
  }),
  agent: fc.option(fc.constantFrom('bot', 'helper', 'x'), { nil: undefined }),
  annotations: fc.option(
    fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
    {
      nil: undefined,
    },
  ),
});

type Request = typeof request extends fc.Arbitrary<infer R> ? R : never;

/** The request, or one aimed at a rule's pattern with each `*` (and a final `**`) filled in. */
function requestFor(rules: readonly PolicyRule[], r: Request): Request {
  if (r.aim === undefined) return r;
  const [k, fill] = r.aim;
  const target = rules[k % rules.length]!.resource;
  const resource = target.replace(/\*\*$/, fill).replace(/\*/g, fill.replace(':', '_'));
  return { ...r, resource };
}

describe('Cedar export: differential against the native gate', () => {
  it('decides the same (effect and allowed) on 10,000 generated requests', () => {
    const policies = fc.sample(fc.array(rule, { minLength: 1, maxLength: 8 }), {
      seed: SEED,
      numRuns: POLICIES,
    });
    const requests = fc.sample(request, { seed: SEED + 1, numRuns: POLICIES * REQUESTS_PER_POLICY });
    const clock = () => NOW;
    let compared = 0;
    const effects = { allow: 0, deny: 0, ask: 0, 'default-deny': 0 };
    policies.forEach((rules, p) => {
      const policy = { version: 1 as const, rules };
      const native = CapabilitySet.fromPolicy(policy, { clock, onWarning: () => {} });
      const text = policyToCedar(policy);
      const cedar = CapabilitySet.fromCedar(text, { clock });
      for (let i = 0; i < REQUESTS_PER_POLICY; i++) {
        const r = requestFor(rules, requests[p * REQUESTS_PER_POLICY + i]!);
        const valid = SCHEMES[r.resource.slice(0, r.resource.indexOf(':'))]!;
        const action = r.action === 'valid' ? valid[r.pick % valid.length]! : r.action;
        const context: CheckContext = { args: r.args, agent: r.agent, annotations: r.annotations };
        const want = native.check(r.resource, action, context);
        const got = cedar.check(r.resource, action, context);
        // An action the resource's scheme does not have (read on a tool) has no Cedar request: Cedar denies it,
        // where a native rule for `*` may allow it (narrower, never wider).
        const same = valid.includes(action)
          ? want.effect === got.effect && want.allowed === got.allowed
          : !got.allowed && got.effect === 'default-deny';
        if (!same) {
          expect.fail(
            `policy ${p}, ${action} and ${JSON.stringify(r)}: native ${want.effect} (${want.reason}) but Cedar ${got.effect} (${got.reason})\n${JSON.stringify(rules)}\n${text}`,
          );
        }
        compared++;
        effects[want.effect]++;
      }
    });
    expect(compared).toBe(10_000);
    // The generator must reach every outcome often enough for the comparison to mean something.
    expect(effects.allow).toBeGreaterThan(500);
    expect(effects.deny).toBeGreaterThan(500);
    expect(effects.ask).toBeGreaterThan(300);
    expect(effects['default-deny']).toBeGreaterThan(1000);
    // 10,000 Cedar checks take a few seconds alone; the margin is for a machine shared with other test runs.
  }, 120_000);
});
