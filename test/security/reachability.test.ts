/**
 * What a policy could ever allow (issue 40 item 5): targets are "never" only when `couldAllow` (what the gateway
 * lists with) proves it, and rules are reported only when they provably never match: expired, shadowed by an
 * unconditional deny, or an `mcp:` pattern naming nothing the project's servers have.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';
import {
  type KnownServers,
  neverAllowed,
  ruleFindings,
  serverTargets,
} from '../../src/security/reachability.js';

const quiet = { onWarning: () => {} };
const NOW = Date.parse('2026-06-01T00:00:00Z');

const notes = serverTargets('notes', {
  tools: [
    { name: 'read_note' },
    { name: 'write_note' },
    { name: 'delete_note', annotations: { destructiveHint: true, note: 'ignored' } },
  ],
  resources: [{ uri: 'notes://a' }],
  resourceTemplates: [{ uriTemplate: 'notes://{id}' }],
  prompts: [{ name: 'summary' }],
});

const names = (list: ReturnType<typeof neverAllowed>) =>
  list.map((n) => `${n.target.kind} ${n.target.resource}`);

describe('neverAllowed', () => {
  it('lists tools, resources, prompts and server requests no request could allow, with what decides', () => {
    const set = CapabilitySet.fromPolicy(
      {
        version: 1,
        rules: [
          { id: 'notes', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
          { id: 'no-delete', effect: 'deny', resource: 'mcp:notes:delete_*', actions: '*' },
          {
            id: 'write-drafts',
            effect: 'ask',
            resource: 'mcp:notes:write_note',
            actions: 'execute',
            when: { args: { id: { startsWith: 'drafts/' } } },
          },
          { id: 'read-a', effect: 'allow', resource: 'mcp-resource:notes:notes://a', actions: 'read' },
          { id: 'sample', effect: 'allow', resource: 'mcp:notes:sampling', actions: 'request' },
        ],
      },
      quiet,
    );
    const never = neverAllowed(set, notes, {});
    expect(names(never)).toEqual([
      'tool mcp:notes:delete_note',
      'resource-template mcp-resource:notes:notes://{id}',
      'prompt mcp-prompt:notes:summary',
      'server-request mcp:notes:elicitation',
      'server-request mcp:notes:roots',
    ]);
    expect(never[0]).toMatchObject({ effect: 'deny', rule: 'no-delete', until: undefined });
    expect(never[1]).toMatchObject({ effect: 'default-deny', rule: undefined });
  });

  it('counts a conditional deny as possibly not applying, and an annotation of the tool as known', () => {
    const set = CapabilitySet.fromPolicy(
      {
        version: 1,
        rules: [
          { id: 'all', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
          {
            id: 'no-team',
            effect: 'deny',
            resource: 'mcp:notes:write_note',
            actions: 'execute',
            when: { args: { id: { startsWith: 'team/' } } },
          },
        ],
      },
      quiet,
    );
    expect(names(neverAllowed(set, notes, {}).filter((n) => n.target.kind === 'tool'))).toEqual([]);
  });

  it('says until when the deciding deny expires', () => {
    const set = CapabilitySet.fromPolicy(
      {
        version: 1,
        rules: [
          { id: 'all', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
          {
            id: 'freeze',
            effect: 'deny',
            resource: 'mcp:notes:write_note',
            actions: '*',
            expiresAt: '2026-07-01T00:00:00Z',
          },
        ],
      },
      { ...quiet, clock: () => NOW },
    );
    const [write] = neverAllowed(set, notes, {}).filter((n) => n.target.kind === 'tool');
    expect(write).toMatchObject({ rule: 'freeze', until: Date.parse('2026-07-01T00:00:00Z') });
  });

  it('bounds a derived set by its parent, as the gateway bindings do', () => {
    const root = CapabilitySet.fromPolicy(
      {
        version: 1,
        rules: [
          { id: 'notes', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
          { id: 'no-delete', effect: 'deny', resource: 'mcp:notes:delete_note', actions: '*' },
        ],
      },
      quiet,
    );
    const child = root.derive([
      { id: 'own', effect: 'allow', resource: 'mcp:notes:*_note', actions: 'execute' },
    ]);
    const tools = neverAllowed(child, notes, {}, [...root.rules, ...child.rules]).filter(
      (n) => n.target.kind === 'tool',
    );
    expect(tools).toEqual([expect.objectContaining({ effect: 'deny', rule: 'no-delete' })]);
  });

  it('never calls "never" a target some request allows (random policies, checked against check())', () => {
    const tools = ['read_note', 'write_note', 'delete_note'];
    const rule = fc.record({
      effect: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
      resource: fc.constantFrom(
        'mcp:notes:*',
        'mcp:notes:read_note',
        'mcp:notes:*_note',
        'mcp:*:write_note',
        'mcp:**',
      ),
      actions: fc.constantFrom('execute', '*', 'request'),
      conditional: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 6 }), fc.constantFrom('drafts/a', 'team/b'), (rules, id) => {
        const set = CapabilitySet.fromPolicy(
          {
            version: 1,
            rules: rules.map((r) => ({
              effect: r.effect,
              resource: r.resource,
              actions: r.actions,
              ...(r.conditional ? { when: { args: { id: { startsWith: 'drafts/' } } } } : {}),
            })),
          },
          quiet,
        );
        const never = new Set(neverAllowed(set, notes, {}).map((n) => n.target.resource));
        for (const tool of tools) {
          const d = set.check(`mcp:notes:${tool}`, 'execute', { args: { id } });
          if (d.allowed || d.effect === 'ask') expect(never.has(`mcp:notes:${tool}`)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('ruleFindings', () => {
  const known: KnownServers = {
    servers: new Map([
      ['notes', ['read_note', 'write_note']],
      ['offline', undefined],
    ]),
  };
  const findings = (rules: object[], denies: object[] = []) => {
    const set = CapabilitySet.fromPolicy({ version: 1, rules }, { ...quiet, clock: () => NOW });
    const parent = CapabilitySet.fromPolicy({ version: 1, rules: denies }, quiet);
    return ruleFindings(set.rules, known, NOW, parent.rules).map((f) =>
      f.kind === 'shadowed' ? `${f.rule.id} shadowed by ${f.by.id}` : `${f.rule.id} ${f.kind}`,
    );
  };

  it('finds an allow every request of which an unconditional deny matches, whatever their order', () => {
    expect(
      findings([
        { id: 'read', effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' },
        { id: 'ask-write', effect: 'ask', resource: 'mcp:notes:write_*', actions: ['execute'] },
        { id: 'no-notes', effect: 'deny', resource: 'mcp:notes:*', actions: '*' },
      ]),
    ).toEqual(['read shadowed by no-notes', 'ask-write shadowed by no-notes']);
  });

  it('does not call shadowed what a deny covers only in part, under a condition, or until it expires', () => {
    expect(
      findings([
        { id: 'wide', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
        { id: 'both', effect: 'allow', resource: 'mcp:notes:read_note', actions: ['execute', 'request'] },
        { id: 'write', effect: 'allow', resource: 'mcp:notes:write_note', actions: 'execute' },
        { id: 'read-only', effect: 'deny', resource: 'mcp:notes:read_note', actions: 'execute' },
        {
          id: 'if-team',
          effect: 'deny',
          resource: 'mcp:notes:write_note',
          actions: '*',
          when: { args: { id: { startsWith: 'team/' } } },
        },
        {
          id: 'for-now',
          effect: 'deny',
          resource: 'mcp:notes:write_note',
          actions: '*',
          expiresAt: '2027-01-01T00:00:00Z',
        },
      ]),
    ).toEqual([]);
  });

  it('counts the denies of the set a binding derives from', () => {
    expect(
      findings(
        [{ id: 'bound', effect: 'allow', resource: 'mcp:notes:write_note', actions: 'execute' }],
        [{ id: 'project-deny', effect: 'deny', resource: 'mcp:notes:write_*', actions: 'execute' }],
      ),
    ).toEqual(['bound shadowed by project-deny']);
  });

  it('finds expired rules', () => {
    expect(
      findings([
        {
          id: 'old',
          effect: 'allow',
          resource: 'mcp:notes:read_note',
          actions: 'execute',
          expiresAt: '2026-01-01T00:00:00Z',
        },
        {
          id: 'live',
          effect: 'allow',
          resource: 'mcp:notes:read_note',
          actions: 'execute',
          expiresAt: '2027-01-01T00:00:00Z',
        },
      ]),
    ).toEqual(['old expired']);
  });

  it('finds dead mcp: patterns only where every server they could name is known', () => {
    expect(
      findings([
        { id: 'typo', effect: 'allow', resource: 'mcp:notes:raed_note', actions: 'execute' },
        { id: 'no-server', effect: 'allow', resource: 'mcp:nowhere:*', actions: 'execute' },
        { id: 'kind-typo', effect: 'allow', resource: 'mcp:notes:sampler', actions: 'request' },
        { id: 'live-tool', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
        { id: 'sampling', effect: 'allow', resource: 'mcp:notes:sampling', actions: 'request' },
        { id: 'unknown-server', effect: 'allow', resource: 'mcp:offline:anything', actions: 'execute' },
        { id: 'any-server', effect: 'allow', resource: 'mcp:*:raed_note', actions: 'execute' },
        { id: 'any-action', effect: 'allow', resource: 'mcp:*:roots', actions: '*' },
        { id: 'other-scheme', effect: 'allow', resource: 'mcp-prompt:notes:nothing', actions: 'get' },
      ]),
    ).toEqual(['typo dead', 'no-server dead', 'kind-typo dead']);
  });

  it('never calls a skill rule dead where its server is known, since skill names are not', () => {
    expect(
      findings([
        { id: 'skill', effect: 'allow', resource: 'mcp:notes:skill:pdf-*', actions: 'read' },
        { id: 'all-of-notes', effect: 'allow', resource: 'mcp:notes:**', actions: 'read' },
        { id: 'three-segments', effect: 'allow', resource: 'mcp:notes:skill', actions: 'read' },
        { id: 'no-server', effect: 'allow', resource: 'mcp:nowhere:skill:*', actions: 'read' },
      ]),
    ).toEqual(['three-segments dead', 'no-server dead']);
  });
});
