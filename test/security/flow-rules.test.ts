/**
 * Flow rules (issue 42, CONTRACT 3): YAML policies with `when.flow` decided through `CapabilitySet.check` with a real
 * `FlowState`: the lethal trifecta, a carries-based deny that spares the user's own address with `noneOf`, fail
 * closed without a flow state or target labels, and the flow names on the decision, the audit record and the span.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ErrorCode, PermissionDeniedError } from '../../src/errors.js';
import { decisionAttributes, MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { policyToCedar } from '../../src/security/cedar/export.js';
import { FlowState } from '../../src/security/flow.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { parsePolicy } from '../../src/security/policy.js';
import type { CheckContext } from '../../src/security/types.js';

const POLICY = parse(`
version: 1
labels:
  - resource: "mcp:mail:read_*"
    labels: [private]
  - resource: "mcp:web:*"
    labels: [untrusted]
  - resource: "mcp:mail:send_email"
    sink: [egress]
rules:
  - id: mail-and-web
    effect: allow
    resource: "mcp:*:*"
    actions: execute
  - id: lethal-trifecta
    effect: deny
    resource: "mcp:**"
    actions: execute
    description: private data and untrusted content were both seen, so nothing leaves
    when:
      flow:
        target: [egress]
        seen: [private, untrusted]
  - id: no-leaks
    effect: deny
    resource: "mcp:mail:send_email"
    actions: execute
    when:
      args:
        to: { noneOf: [me@example.com] }
      flow:
        carries: [private]
`);

const INBOX =
  'From: cfo@example.com. The acquisition of Initech closes on March 3rd for 42 million; tell no one yet.';
const PAGE =
  'Welcome to the weather page. Sunny tomorrow, with a light breeze from the west in the afternoon.';
const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

function setup() {
  const set = CapabilitySet.fromPolicy(POLICY);
  const flow = set.flowLabels.createFlowState();
  /** Records a result the way the pipeline does: the target's content labels, the text the model reads. */
  const read = (resource: string, text: string) =>
    flow.record(resource, set.flowLabels.labelsFor(resource, READ_ONLY).content, text);
  /** The context the pipeline builds for a call: the session's flow and the target's labels. */
  const context = (resource: string, args: Record<string, unknown>): CheckContext => ({
    args,
    annotations: READ_ONLY,
    flow,
    labels: set.flowLabels.labelsFor(resource, READ_ONLY).all,
  });
  const send = (args: Record<string, unknown>) =>
    set.check('mcp:mail:send_email', 'execute', context('mcp:mail:send_email', args));
  return { set, flow, read, context, send };
}

describe('flow rules', () => {
  it('allows egress while the session has seen only private data, and denies it once untrusted content arrives', () => {
    const { read, send } = setup();
    read('mcp:mail:read_inbox', INBOX);
    expect(send({ to: 'me@example.com', body: 'lunch at noon?' })).toMatchObject({
      allowed: true,
      ruleId: 'mail-and-web',
    });
    read('mcp:web:fetch', PAGE);
    const denied = send({ to: 'me@example.com', body: 'lunch at noon?' });
    expect(denied).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'lethal-trifecta' });
    expect(denied.flow).toEqual({ labels: ['private', 'untrusted'], carried: [], target: ['egress'] });
  });

  it('never denies a target that is not egress, whatever the session has seen', () => {
    const { set, read, context } = setup();
    read('mcp:mail:read_inbox', INBOX);
    read('mcp:web:fetch', PAGE);
    const d = set.check('mcp:mail:read_inbox', 'execute', context('mcp:mail:read_inbox', {}));
    expect(d).toMatchObject({ allowed: true, ruleId: 'mail-and-web' });
    expect(d.flow).toBeUndefined();
  });

  it('denies sending a private document to anyone else, and spares the user their own address', () => {
    const { read, send } = setup();
    read('mcp:mail:read_inbox', INBOX);
    const leak = { to: 'attacker@evil.example', body: `FYI: ${INBOX.slice(20, 90)}` };
    const denied = send(leak);
    expect(denied).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'no-leaks' });
    expect(denied.flow).toEqual({
      labels: ['private'],
      carried: [{ argument: 'body', label: 'private', source: 'mcp:mail:read_inbox' }],
    });
    expect(send({ ...leak, to: 'me@example.com' })).toMatchObject({ allowed: true });
    expect(send({ to: 'attacker@evil.example', body: 'see you at the game' })).toMatchObject({
      allowed: true,
    });
    // Two recipients are not the user's own address: a value of another type fails, and a deny applies.
    expect(send({ ...leak, to: ['me@example.com', 'attacker@evil.example'] })).toMatchObject({
      allowed: false,
      ruleId: 'no-leaks',
    });
  });

  it('finds the private fragment disguised by case, zero-width characters and white space', () => {
    const { read, send } = setup();
    read('mcp:mail:read_inbox', INBOX);
    const body = INBOX.slice(20, 90).toUpperCase().replace(/ /g, ' \u200b\n ');
    expect(send({ to: 'attacker@evil.example', body })).toMatchObject({ allowed: false, ruleId: 'no-leaks' });
  });

  it('fails closed without a flow state: a flow deny applies, a flow allow does not', () => {
    const { set } = setup();
    const labels = set.flowLabels.labelsFor('mcp:mail:send_email', READ_ONLY).all;
    const d = set.check('mcp:mail:send_email', 'execute', { args: { to: 'a@b.example' }, labels });
    expect(d).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'lethal-trifecta' });
    expect(d.reason).toMatch(/condition of rule 'lethal-trifecta'.*failed.*no flow state.*fails closed/);

    const allowOnly = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'only-clean',
          effect: 'allow',
          resource: 'mcp:mail:send_email',
          actions: 'execute',
          when: { flow: { seenAny: ['clean'] } },
        },
      ],
    });
    const flow = new FlowState();
    flow.record('mcp:x:y', ['clean']);
    expect(allowOnly.check('mcp:mail:send_email', 'execute', { flow }).allowed).toBe(true);
    const without = allowOnly.check('mcp:mail:send_email', 'execute', {});
    expect(without).toMatchObject({ allowed: false, effect: 'default-deny' });
    expect(without.reason).toMatch(
      /only when the session has seen "clean"; for this call the call has no flow state/,
    );
  });

  it('fails closed without target labels: a target condition cannot be checked', () => {
    const { set, flow } = setup();
    flow.record('mcp:mail:read_inbox', ['private', 'untrusted']);
    const d = set.check('mcp:mail:send_email', 'execute', { args: { to: 'me@example.com' }, flow });
    expect(d).toMatchObject({ allowed: false, ruleId: 'lethal-trifecta' });
  });

  it('fails closed when the provenance index is full and nothing was found', () => {
    const set = CapabilitySet.fromPolicy({ ...POLICY, flow: { maxIndexedChars: 50 } });
    const flow = set.flowLabels.createFlowState();
    flow.record('mcp:mail:read_inbox', ['private'], INBOX); // longer than the index: not indexed
    const d = set.check('mcp:mail:send_email', 'execute', {
      args: { to: 'attacker@evil.example', body: 'nothing from the inbox here, honestly' },
      flow,
      labels: set.flowLabels.labelsFor('mcp:mail:send_email', READ_ONLY).all,
    });
    expect(d).toMatchObject({ allowed: false, ruleId: 'no-leaks' });
    expect(d.flow).toMatchObject({ truncated: true, carried: [] });
  });

  it('lets a sub-agent session deny what its parent read, and its reads reach the parent', () => {
    const { set, flow, context } = setup();
    flow.record('mcp:mail:read_inbox', ['private'], INBOX);
    const child = flow.derive();
    child.record('mcp:web:fetch', ['untrusted'], PAGE);
    const asChild = set.check('mcp:mail:send_email', 'execute', {
      ...context('mcp:mail:send_email', { to: 'me@example.com' }),
      flow: child,
    });
    expect(asChild).toMatchObject({ allowed: false, ruleId: 'lethal-trifecta' });
    expect(
      set.check('mcp:mail:send_email', 'execute', context('mcp:mail:send_email', { to: 'me@example.com' })),
    ).toMatchObject({ allowed: false, ruleId: 'lethal-trifecta' });
  });

  it('ask rules on flow: asks once private data was seen, and a failed flow condition denies', () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        { id: 'all', effect: 'allow', resource: 'mcp:**', actions: 'execute' },
        {
          id: 'ask-after-private',
          effect: 'ask',
          resource: 'mcp:mail:send_email',
          actions: 'execute',
          when: { flow: { seenAny: ['private', 'secret'] } },
        },
      ],
    });
    const flow = new FlowState();
    expect(set.check('mcp:mail:send_email', 'execute', { flow }).allowed).toBe(true);
    flow.record('mcp:drive:read', ['secret']);
    expect(set.check('mcp:mail:send_email', 'execute', { flow })).toMatchObject({
      effect: 'ask',
      flow: { labels: ['secret'], carried: [] },
    });
    expect(set.check('mcp:mail:send_email', 'execute', {})).toMatchObject({ effect: 'deny' });
  });

  it('sees the flow and the target labels in a when function too', () => {
    const set = new CapabilitySet();
    set.grant('mcp:mail:send', 'execute', {
      when: (i) => !(i.flow?.has('private') ?? true) && (i.labels?.includes('egress') ?? false),
    });
    const flow = new FlowState();
    expect(set.has('mcp:mail:send', 'execute', { flow, labels: ['egress'] })).toBe(true);
    flow.record('mcp:mail:read', ['private']);
    expect(set.has('mcp:mail:send', 'execute', { flow, labels: ['egress'] })).toBe(false);
  });
});

describe('flow conditions against a naive reference', () => {
  const LABELS = ['a', 'b', 'c', 'd'] as const;
  const subset = fc.subarray([...LABELS]);
  const nonEmpty = fc.subarray([...LABELS], { minLength: 1 });

  it('a deny on target, seen and seenAny applies exactly when the reference says it holds or cannot be checked', () => {
    fc.assert(
      fc.property(
        fc.record({ target: nonEmpty, seen: nonEmpty, seenAny: nonEmpty }, { requiredKeys: [] }),
        fc.option(subset, { nil: undefined }),
        fc.option(subset, { nil: undefined }),
        (condition, session, target) => {
          fc.pre(Object.keys(condition).length > 0);
          const set = new CapabilitySet();
          set.grant('mcp:x:*', 'execute');
          set.deny('mcp:x:*', 'execute', { id: 'flow', when: { flow: condition } });
          const flow = session === undefined ? undefined : new FlowState();
          if (session !== undefined) flow?.record('mcp:x:src', session);
          // Kleene: a part that does not hold wins over one that cannot be checked.
          const part = (given: readonly string[] | undefined, known: boolean, holds: () => boolean) =>
            given === undefined ? 'holds' : !known ? 'error' : holds() ? 'holds' : 'fails';
          const parts = [
            part(condition.target, target !== undefined, () =>
              condition.target!.every((l) => target!.includes(l)),
            ),
            part(condition.seen, session !== undefined, () =>
              condition.seen!.every((l) => session!.includes(l)),
            ),
            part(condition.seenAny, session !== undefined, () =>
              condition.seenAny!.some((l) => session!.includes(l)),
            ),
          ];
          const denied = !parts.includes('fails');
          const d = set.check('mcp:x:y', 'execute', { flow, labels: target });
          expect(d.allowed).toBe(!denied);
          if (denied) expect(d.ruleId).toBe('flow');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the flow condition schema', () => {
  it('refuses an empty flow condition, a bad label and an unknown key, naming the field', () => {
    const rule = (when: unknown) => ({
      version: 1,
      rules: [{ id: 'r', effect: 'deny', resource: 'mcp:**', actions: 'execute', when }],
    });
    const message = (when: unknown) => {
      try {
        parsePolicy(rule(when));
      } catch (err) {
        expect(err).toMatchObject({ code: ErrorCode.INVALID_POLICY });
        return (err as Error).message;
      }
      throw new Error('expected INVALID_POLICY');
    };
    expect(message({ flow: {} })).toMatch(/rules\[0\]\.when\.flow.*at least one key/);
    expect(message({ flow: { seen: ['two words'] } })).toMatch(
      /rules\[0\]\.when\.flow\.seen\[0\].*a label is/,
    );
    expect(message({ flow: { seem: ['private'] } })).toMatch(/rules\[0\]\.when\.flow/);
    expect(message({ args: { to: { noneOf: [] } } })).toMatch(/rules\[0\]\.when\.args\.to\.noneOf/);
  });
});

describe('flow decisions in the audit trail and on spans', () => {
  it('puts the flow names on the audit record and its attributes, never the data', async () => {
    const { set, read, context } = setup();
    read('mcp:mail:read_inbox', INBOX);
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: set, audit });
    const leak = { to: 'attacker@evil.example', body: INBOX };
    await expect(
      gate.authorize({
        resource: 'mcp:mail:send_email',
        action: 'execute',
        context: context('mcp:mail:send_email', leak),
      }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
    await gate.authorize({
      resource: 'mcp:mail:read_inbox',
      action: 'execute',
      context: context('mcp:mail:read_inbox', {}),
    });
    const [denied, allowed] = audit.records;
    expect(denied?.flow).toEqual({
      labels: ['private'],
      carried: [{ argument: 'body', label: 'private', source: 'mcp:mail:read_inbox' }],
    });
    expect(allowed?.flow).toBeUndefined();
    const attributes = decisionAttributes(denied!);
    expect(attributes).toMatchObject({
      'interlock.flow.labels': ['private'],
      'interlock.flow.carried.arguments': ['body'],
      'interlock.flow.carried.labels': ['private'],
      'interlock.flow.carried.sources': ['mcp:mail:read_inbox'],
    });
    const text = JSON.stringify([denied, attributes]);
    expect(text).not.toContain('Initech');
    expect(text).not.toContain('attacker@evil.example');
  });

  it('keeps the flow on an ask the approver refused', async () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'ask-after-private',
          effect: 'ask',
          resource: 'mcp:mail:send_email',
          actions: 'execute',
          when: { flow: { seen: ['private'] } },
        },
      ],
    });
    const flow = new FlowState();
    flow.record('mcp:mail:read_inbox', ['private']);
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: set, audit, approver: () => false });
    await expect(
      gate.authorize({ resource: 'mcp:mail:send_email', action: 'execute', context: { flow } }),
    ).rejects.toMatchObject({ decision: { effect: 'ask', flow: { labels: ['private'] } } });
    expect(audit.records[0]?.flow).toEqual({ labels: ['private'], carried: [] });
  });
});

describe('what else reads conditions', () => {
  it('couldAllow counts a flow condition as one that may hold, with or without arguments', () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'clean-only',
          effect: 'allow',
          resource: 'mcp:mail:send_email',
          actions: 'execute',
          when: { flow: { seenAny: ['clean'] } },
        },
        {
          id: 'trifecta',
          effect: 'deny',
          resource: 'mcp:mail:*',
          actions: 'execute',
          when: { flow: { seen: ['private', 'untrusted'] } },
        },
      ],
    });
    expect(set.couldAllow('mcp:mail:send_email', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:mail:send_email', 'execute', { args: { to: 'x' } })).toBe(true);
    expect(set.couldAllow('mcp:mail:other', 'execute', { args: {} })).toBe(false);
  });

  it('Cedar export refuses a flow condition naming the rule, and translates noneOf so it decides alike', () => {
    expect(() => policyToCedar(parsePolicy(POLICY))).toThrow(
      /Rule 'lethal-trifecta' \(rules\[1\]\) has no Cedar form: its condition reads the information flow/,
    );
    const text = policyToCedar(
      parsePolicy({
        version: 1,
        rules: [
          { id: 'mail', effect: 'allow', resource: 'mcp:mail:**', actions: 'execute' },
          {
            id: 'not-me',
            effect: 'deny',
            resource: 'mcp:mail:send_email',
            actions: 'execute',
            when: { args: { to: { noneOf: ['me@example.com'] } } },
          },
        ],
      }),
    );
    expect(text).toContain('@id("not-me")');
    expect(text).toContain(
      '!((context.args.getTag("to").kind == "string" && (context.args.getTag("to") has string',
    );
    const cedar = CapabilitySet.fromCedar(text);
    const to = (value: unknown) => cedar.check('mcp:mail:send_email', 'execute', { args: { to: value } });
    expect(to('me@example.com')).toMatchObject({ allowed: true });
    expect(to('attacker@evil.example')).toMatchObject({ allowed: false, ruleId: 'not-me' });
    expect(to(42)).toMatchObject({ allowed: false, ruleId: 'not-me' });
  });
});
