/**
 * Differential property tests (issue 3, "Tests"): random policies and requests, where the optimized,
 * indexed evaluator must agree with a naive reference evaluator written plainly here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';

const NOW = 1_000;

// ---- the naive reference -------------------------------------------------------------------------

interface NaiveRule {
  seq: number;
  effect: 'allow' | 'deny' | 'ask';
  pattern: string;
  actions: string[];
  min?: number | undefined; // condition: args.n >= min
  expiresAt?: number | undefined;
  maxCalls?: number | undefined;
  used: number;
}

/** The whole pattern as one regular expression: `*` is `[^:]*`, a final `**` is anything. */
function naiveMatches(pattern: string, resource: string): boolean {
  let body = pattern;
  let tail = '';
  if (body.endsWith('**')) {
    body = body.slice(0, -2);
    tail = '[\\s\\S]*';
  }
  const escaped = body.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^:]*')}${tail}$`).test(resource);
}

function naiveWellFormed(resource: string): boolean {
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(resource)) return false;
  const parts = resource.split(':');
  const scheme = parts[0];
  if (scheme === 'tool') return resource.length > 'tool:'.length;
  if (scheme !== 'mcp' && scheme !== 'mcp-prompt' && scheme !== 'mcp-resource') return false;
  if (parts.length < 3 || parts[1] === '' || parts.slice(2).join(':') === '') return false;
  if (scheme === 'mcp-resource' && /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(parts.slice(2).join(':'))) return false;
  return true;
}

type Cond = true | false | 'error';

function naiveCondition(rule: NaiveRule, n: unknown): Cond {
  if (rule.min === undefined) return true;
  if (n === undefined) return false;
  if (typeof n !== 'number') return 'error';
  return n >= rule.min;
}

function naiveDecide(
  rules: NaiveRule[],
  resource: string,
  action: string,
  n: unknown,
  consume: boolean,
): string {
  if (!naiveWellFormed(resource)) return 'default-deny';
  const live = rules.filter(
    (r) =>
      (r.expiresAt === undefined || NOW < r.expiresAt) &&
      (r.actions.includes('*') || r.actions.includes(action)) &&
      naiveMatches(r.pattern, resource),
  );
  if (live.some((r) => r.effect === 'deny' && naiveCondition(r, n) !== false)) return 'deny';
  if (live.some((r) => r.effect === 'ask' && naiveCondition(r, n) === 'error')) return 'deny';
  if (live.some((r) => r.effect === 'ask' && naiveCondition(r, n) === true)) return 'ask';
  const allows = live.filter((r) => r.effect === 'allow' && naiveCondition(r, n) === true);
  if (allows.some((r) => r.maxCalls === undefined)) return 'allow';
  const quota = allows.filter((r) => r.used < (r.maxCalls ?? 0)).sort((a, b) => a.seq - b.seq)[0];
  if (quota === undefined) return 'default-deny';
  if (consume) quota.used++;
  return 'allow';
}

// ---- generators ----------------------------------------------------------------------------------

const SCHEME_ACTION: Record<string, string> = {
  mcp: 'execute',
  'mcp-prompt': 'get',
  'mcp-resource': 'read',
  tool: 'execute',
};

const serverSeg = fc.constantFrom('fs', 'fs2', 'git', 'github', '*', 'f*', 'git*', '*b', 's*v');
const nameSeg = fc.constantFrom(
  'read',
  'read_file',
  'write_file',
  'delete',
  '*',
  'read_*',
  '*_file',
  'r*d',
  'x',
  'a?',
);
const uriPattern = fc.constantFrom(
  'file:///data/*',
  'file:///data/**',
  'file:**',
  '**',
  'file:///etc/p',
  'http://h/*',
  'file:///d*/**',
);

const patternArb = fc.oneof(
  fc
    .tuple(fc.constantFrom('mcp', 'mcp-prompt'), serverSeg, fc.oneof(nameSeg, fc.constant('**')))
    .map(([s, a, b]) => `${s}:${a}:${b}`),
  fc.constantFrom('mcp:**', 'mcp-prompt:**', 'mcp-resource:**', 'tool:**'),
  fc.tuple(serverSeg, uriPattern).map(([a, u]) => `mcp-resource:${a}:${u}`),
  nameSeg.map((n) => `tool:${n}`),
);

const ruleArb = fc.record({
  effect: fc.constantFrom('allow', 'allow', 'deny', 'ask') as fc.Arbitrary<'allow' | 'deny' | 'ask'>,
  pattern: patternArb,
  anyAction: fc.boolean(),
  min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  expires: fc.option(fc.constantFrom(NOW - 1, NOW, NOW + 1), { nil: undefined }),
  maxCalls: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
});

const serverName = fc.constantFrom('fs', 'fs2', 'git', 'github', 'sv', 'a*b');
const toolName = fc.constantFrom(
  'read',
  'read_file',
  'write_file',
  'delete',
  'rd',
  'x',
  'a?',
  'READ',
  'read_file ',
  'x:y',
  'r*d',
);
const resourceArb = fc.oneof(
  fc.tuple(fc.constantFrom('mcp', 'mcp-prompt'), serverName, toolName).map(([s, a, b]) => `${s}:${a}:${b}`),
  fc
    .tuple(
      serverName,
      fc.constantFrom('file:///data/a', 'file:///data/a:b', 'file:///etc/p', 'http://h/x', 'file:///dx/y'),
    )
    .map(([a, u]) => `mcp-resource:${a}:${u}`),
  toolName.map((n) => `tool:${n}`),
  fc.constantFrom(
    'mcp:fs',
    'MCP:fs:read',
    'mcp:fs:read\u200b',
    'mcp-resource:fs:file:///data/../etc/p',
    'tool:',
    'mcp::x',
  ),
);
const requestArb = fc.record({
  resource: resourceArb,
  action: fc.constantFrom('execute', 'read', 'get', 'write'),
  n: fc.option(fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant('x')), { nil: undefined }),
});

type GeneratedRule = typeof ruleArb extends fc.Arbitrary<infer R> ? R : never;

function build(rules: readonly GeneratedRule[]) {
  const set = new CapabilitySet({ clock: () => NOW, onWarning: () => {} });
  const naive: NaiveRule[] = [];
  rules.forEach((r, seq) => {
    const scheme = r.pattern.slice(0, r.pattern.indexOf(':'));
    const actions = r.anyAction ? ['*'] : [SCHEME_ACTION[scheme]!];
    const maxCalls = r.effect === 'allow' ? r.maxCalls : undefined;
    const when = r.min === undefined ? undefined : { args: { n: { min: r.min } } };
    set[r.effect === 'allow' ? 'grant' : r.effect](r.pattern, actions, {
      when,
      expiresAt: r.expires,
      maxCalls,
    });
    naive.push({
      seq,
      effect: r.effect,
      pattern: r.pattern,
      actions,
      min: r.min,
      expiresAt: r.expires,
      maxCalls,
      used: 0,
    });
  });
  return { set, naive };
}

// ---- properties ----------------------------------------------------------------------------------

describe('the optimized matcher agrees with a naive reference evaluator', () => {
  it('over 10 000 random policies with several requests each, for check, authorize and couldAllow', () => {
    let compared = 0;
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 8 }),
        fc.array(requestArb, { minLength: 1, maxLength: 6 }),
        (rules, requests) => {
          const { set, naive } = build(rules);
          for (const { resource, action, n } of requests) {
            const context = { args: n === undefined ? {} : { n } };
            const checked = set.check(resource, action, context).effect;
            expect(checked).toBe(naiveDecide(naive, resource, action, n, false));
            if (checked === 'allow' || checked === 'ask') expect(set.couldAllow(resource, action)).toBe(true);
            expect(set.authorize(resource, action, context).effect).toBe(
              naiveDecide(naive, resource, action, n, true),
            );
            compared++;
          }
        },
      ),
      { numRuns: 10_000 },
    );
    expect(compared).toBeGreaterThanOrEqual(10_000);
  });

  it('never lets a derived set exceed its parent, over 2 000 random parent and child policies', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 6 }),
        fc.array(ruleArb, { maxLength: 6 }),
        fc.array(requestArb, { minLength: 1, maxLength: 6 }),
        (parentRules, childRules, requests) => {
          const { set: parent } = build(parentRules);
          const child = parent.derive((c) => {
            for (const r of childRules) {
              try {
                const when = r.min === undefined ? undefined : { args: { n: { min: r.min } } };
                c[r.effect === 'allow' ? 'grant' : r.effect](r.pattern, '*', { when, expiresAt: r.expires });
              } catch {
                // wider than the parent: refused, as it must be
              }
            }
          });
          for (const { resource, action, n } of requests) {
            const context = { args: n === undefined ? {} : { n } };
            const mine = child.check(resource, action, context);
            const theirs = parent.check(resource, action, context);
            if (mine.allowed) expect(theirs.allowed).toBe(true);
            if (mine.effect === 'ask') expect(theirs.allowed || theirs.effect === 'ask').toBe(true);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('resource paths with percent-encodings (issue 14, item 5)', () => {
  /** Decodes until nothing changes (as a careless server might), treating `\` as `/`, then resolves dot segments. */
  function whereAServerCouldLand(uri: string): string {
    let path = uri.replace(/^file:\/\//, '');
    for (let i = 0; i < 5; i++) {
      let next: string;
      try {
        next = decodeURIComponent(path);
      } catch {
        next = path.replace(/%2e/gi, '.').replace(/%2f/gi, '/').replace(/%5c/gi, '\\').replace(/%25/g, '%');
      }
      if (next === path) break;
      path = next;
    }
    const out: string[] = [];
    for (const seg of path.replace(/\\/g, '/').split('/')) {
      if (seg === '..') out.pop();
      else if (seg !== '.' && seg !== '') out.push(seg);
    }
    return `/${out.join('/')}`;
  }

  const piece = fc.constantFrom(
    'a',
    'b.txt',
    '.',
    '..',
    '%2e',
    '%2E',
    '%2e%2e',
    '.%2e',
    '%252e%252e',
    '%2f',
    '%2F',
    '%5c',
    '%255c',
    '..%2f',
    '..%5c',
    '%2e%2e%2f',
    '%20',
    '%25',
    '%e2%82%ac',
    '%zz',
    '\\',
    '/',
    '%73ecret',
  );

  it('an allow under file:///data/** never lets a read land outside /data or in a denied subtree', () => {
    const caps = new CapabilitySet();
    caps.grant('mcp-resource:fs:file:///data/**', 'read');
    caps.deny('mcp-resource:fs:file:///data/secret/**', 'read');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const uri = `file:///data/${pieces.join('')}`;
        if (!caps.has(`mcp-resource:fs:${uri}`, 'read')) return;
        const landed = whereAServerCouldLand(uri);
        expect(landed === '/data' || landed.startsWith('/data/'), `${uri} -> ${landed}`).toBe(true);
        expect(landed.startsWith('/data/secret'), `${uri} -> ${landed}`).toBe(false);
      }),
      { numRuns: 5_000 },
    );
  });
});
