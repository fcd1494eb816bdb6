import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { cedarSchemaPath } from '../../src/security/cedar/schema.js';
import { CEDAR_SCHEMA } from '../../src/security/cedar/schema-text.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { ROOT } from '../cli/helpers.js';

const NOTES = `
@id("notes-read") @description("Reading notes is harmless.")
permit (principal, action == Interlock::Action::"execute", resource is Interlock::Tool)
when { resource.server == "notes" && resource.name like "read_*" };

@id("notes-write")
permit (principal, action == Interlock::Action::"execute", resource is Interlock::Tool)
when {
  resource.server == "notes" && resource.name == "write_note" &&
  context.args.hasTag("path") && context.args.getTag("path") has string &&
  context.args.getTag("path").string like "drafts/*"
};

@id("no-secrets")
forbid (principal, action, resource is Interlock::Tool)
when { resource.name like "*secret*" };

@id("deploy") @ask
permit (principal in Interlock::Group::"ops", action == Interlock::Action::"execute", resource)
when { resource.path == "mcp:ci:deploy" };
`;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('Cedar policies: loading', () => {
  it('refuses a policy that does not type-check, with Cedar own message and the INVALID_POLICY code', () => {
    const err = thrown(() =>
      CapabilitySet.fromCedar(
        'permit (principal, action, resource) when { context.args.getTag("path").string == "x" };',
      ),
    );
    expect(isInterlockError(err, 'INVALID_POLICY')).toBe(true);
    expect((err as Error).message).toMatch(/does not type-check/);
    expect((err as Error).message).toMatch(/hasTag\("path"\)/);
  });

  it('refuses a policy that names an attribute the schema does not have', () => {
    const err = thrown(() =>
      CapabilitySet.fromCedar(
        'permit (principal, action, resource is Interlock::Tool) when { resource.owner == "me" };',
      ),
    );
    expect(isInterlockError(err, 'INVALID_POLICY')).toBe(true);
    expect((err as Error).message).toMatch(/owner/);
  });

  it('refuses text that does not parse', () => {
    const err = thrown(() => CapabilitySet.fromCedar('permit (principal, action, resource) when { x };'));
    expect(isInterlockError(err, 'INVALID_POLICY')).toBe(true);
    expect((err as Error).message).toMatch(/does not parse: .*invalid variable/);
  });

  it('refuses two policies with the same @id, and @ask on a forbid', () => {
    const twice =
      '@id("a") permit (principal, action, resource);\n@id("a") forbid (principal, action, resource);';
    expect((thrown(() => CapabilitySet.fromCedar(twice)) as Error).message).toMatch(/id 'a'/);
    const askForbid = '@ask forbid (principal, action, resource);';
    expect((thrown(() => CapabilitySet.fromCedar(askForbid)) as Error).message).toMatch(/@ask is for permit/);
  });
});

describe('Cedar policies: decisions', () => {
  const set = CapabilitySet.fromCedar(NOTES);

  it('allows what a permit holds for, naming the policy @id as the deciding rule', () => {
    const d = set.check('mcp:notes:read_note', 'execute');
    expect(d).toMatchObject({ allowed: true, effect: 'allow', ruleId: 'notes-read' });
    expect(d.rule).toMatchObject({
      id: 'notes-read',
      effect: 'allow',
      description: 'Reading notes is harmless.',
    });
  });

  it('denies by default, with no advice in the reason and the fix in operatorHint', () => {
    const d = set.check('mcp:notes:delete_note', 'execute');
    expect(d).toMatchObject({ allowed: false, effect: 'default-deny' });
    expect(d.ruleId).toBeUndefined();
    expect(d.reason).not.toMatch(/permit \(/);
    expect(d.operatorHint).toMatch(/permit \(principal/);
  });

  it('lets a forbid win over a permit', () => {
    const d = set.check('mcp:notes:read_secret', 'execute');
    expect(d).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'no-secrets' });
  });

  it('reads the arguments: a condition on an argument holds only for the values it names', () => {
    expect(set.check('mcp:notes:write_note', 'execute', { args: { path: 'drafts/a.md' } }).allowed).toBe(
      true,
    );
    expect(set.check('mcp:notes:write_note', 'execute', { args: { path: 'final/a.md' } }).allowed).toBe(
      false,
    );
    expect(set.check('mcp:notes:write_note', 'execute', { args: { path: 42 } }).allowed).toBe(false);
    expect(set.check('mcp:notes:write_note', 'execute', {}).allowed).toBe(false);
  });

  it('turns an @ask permit into an ask the approver decides, and a forbid still wins over it', async () => {
    const ops = { groups: ['ops'] };
    expect(set.check('mcp:ci:deploy', 'execute', ops)).toMatchObject({
      allowed: false,
      effect: 'ask',
      ruleId: 'deploy',
    });
    expect(set.check('mcp:ci:deploy', 'execute', { groups: ['dev'] }).effect).toBe('default-deny');
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: set, approver: () => true, audit });
    const d = await gate.authorize({ resource: 'mcp:ci:deploy', action: 'execute', context: ops });
    expect(d).toMatchObject({ allowed: true, effect: 'allow', ruleId: 'deploy' });
    expect(audit.records.at(-1)).toMatchObject({ allowed: true, ruleId: 'deploy', approved: true });
    const refusing = new CapabilityGate({ capabilities: set, approver: () => false });
    await expect(
      refusing.authorize({ resource: 'mcp:ci:deploy', action: 'execute', context: ops }),
    ).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
  });

  it('denies a malformed resource and an action the schema does not have, whatever the policy says', () => {
    const all = CapabilitySet.fromCedar('permit (principal, action, resource);');
    expect(all.check('mcp:notes:read\u200b', 'execute').allowed).toBe(false);
    expect(all.check('mcp:notes:read', 'delete').allowed).toBe(false);
    expect(all.check('mcp-resource:fs:file:///a', 'execute').allowed).toBe(false);
    expect(all.check('mcp-resource:fs:file:///a', 'read').allowed).toBe(true);
  });

  it('fails closed when a policy errs at evaluation, even where another permit allows', () => {
    const overflow = CapabilitySet.fromCedar(`
      @id("open") permit (principal, action, resource);
      @id("sum") forbid (principal, action, resource)
        when { context.args.hasTag("n") && context.args.getTag("n") has long && context.args.getTag("n").long + 1 > 5 };
    `);
    expect(overflow.check('mcp:a:b', 'execute', { args: { n: 1 } }).allowed).toBe(true);
    const big = CapabilitySet.fromCedar(`
      @id("open") permit (principal, action, resource);
      @id("mul") forbid (principal, action, resource)
        when { context.args.hasTag("n") && context.args.getTag("n") has long && context.args.getTag("n").long * 1048576 > 5 };
    `);
    const erred = big.check('mcp:a:b', 'execute', { args: { n: Number.MAX_SAFE_INTEGER } });
    expect(erred).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'mul' });
    expect(erred.reason).toMatch(/fails closed/);
  });

  it('sees principals, groups, scopes and the agent', () => {
    const who = CapabilitySet.fromCedar(`
      @id("callers") permit (principal is Interlock::Caller, action, resource)
        when { principal.scopes.contains("notes:read") && context has agent && context.agent == "helper" };
      @id("bot") permit (principal == Interlock::Agent::"bot", action, resource);
    `);
    const r = 'mcp:notes:read';
    expect(who.has(r, 'execute', { principal: 'ann', scopes: ['notes:read'], agent: 'helper' })).toBe(true);
    expect(who.has(r, 'execute', { principal: 'ann', scopes: ['notes:read'], agent: 'other' })).toBe(false);
    expect(who.has(r, 'execute', { principal: 'ann', scopes: [], agent: 'helper' })).toBe(false);
    expect(who.has(r, 'execute', { agent: 'bot' })).toBe(true);
    expect(who.has(r, 'execute', { agent: 'bot2' })).toBe(false);
  });

  it('has no native form: toJSON refuses, and replaceRules turns the set native', () => {
    const cedarSet = CapabilitySet.fromCedar(NOTES);
    expect(cedarSet.cedarPolicy).toBe(NOTES);
    expect(
      isInterlockError(
        thrown(() => cedarSet.toJSON()),
        'INVALID_POLICY',
      ),
    ).toBe(true);
    cedarSet.replaceRules({
      version: 1,
      rules: [{ effect: 'allow', resource: 'mcp:x:*', actions: 'execute' }],
    });
    expect(cedarSet.cedarPolicy).toBeUndefined();
    expect(cedarSet.has('mcp:notes:read_note', 'execute')).toBe(false);
    expect(cedarSet.has('mcp:x:y', 'execute')).toBe(true);
  });
});

describe('Cedar policies: derive and listing', () => {
  it('derives a native child that is never wider than its Cedar parent', () => {
    const parent = CapabilitySet.fromCedar(NOTES);
    const child = parent.derive([
      { effect: 'allow', resource: 'mcp:notes:**', actions: 'execute' },
      { effect: 'deny', resource: 'mcp:notes:read_draft', actions: 'execute' },
    ]);
    expect(child.has('mcp:notes:read_note', 'execute')).toBe(true);
    // the child allows it, the parent does not
    const wider = child.check('mcp:notes:delete_note', 'execute');
    expect(wider).toMatchObject({ allowed: false, effect: 'default-deny' });
    expect(wider.reason).toMatch(/parent set/);
    // the parent forbids it
    expect(child.check('mcp:notes:read_secret', 'execute')).toMatchObject({
      allowed: false,
      ruleId: 'no-secrets',
    });
    // the child narrows
    expect(child.has('mcp:notes:read_draft', 'execute')).toBe(false);
  });

  it('could allow a tool only when some arguments could be allowed (partial evaluation)', () => {
    const set = CapabilitySet.fromCedar(NOTES);
    expect(set.couldAllow('mcp:notes:read_note', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:notes:write_note', 'execute')).toBe(true);
    expect(set.couldAllow('mcp:notes:delete_note', 'execute')).toBe(false);
    expect(set.couldAllow('mcp:notes:read_secret', 'execute')).toBe(false);
    expect(set.couldAllow('mcp:ci:deploy', 'execute', { groups: ['ops'] })).toBe(true);
    expect(set.couldAllow('mcp:ci:deploy', 'execute')).toBe(false);
    const impossible = CapabilitySet.fromCedar(`
      @id("p") permit (principal, action, resource is Interlock::Tool) when { resource.name == "t" };
      @id("f") forbid (principal, action, resource is Interlock::Tool)
        when { context.args.hasTag("x") || !context.args.hasTag("x") };
    `);
    expect(impossible.couldAllow('mcp:s:t', 'execute')).toBe(true); // residual: Cedar cannot see it is a tautology
    expect(impossible.has('mcp:s:t', 'execute', { args: {} })).toBe(false);
  });
});

describe('Cedar policies: servers', () => {
  it('places tools, resources, prompts and server requests in their server', () => {
    const set = CapabilitySet.fromCedar(
      '@id("notes") permit (principal, action, resource in Interlock::Server::"notes");',
    );
    expect(set.has('mcp:notes:read', 'execute')).toBe(true);
    expect(set.has('mcp-resource:notes:file:///a', 'read')).toBe(true);
    expect(set.has('mcp-prompt:notes:p', 'get')).toBe(true);
    expect(set.has('mcp:notes:sampling', 'request')).toBe(true);
    expect(set.has('mcp:other:read', 'execute')).toBe(false);
    expect(set.has('tool:read', 'execute')).toBe(false);
  });
});

describe('the published Cedar schema', () => {
  it('ships as schema/interlock.cedarschema, equal to the text the engine validates against', () => {
    const file = join(ROOT, 'schema/interlock.cedarschema');
    if (process.env.INTERLOCK_WRITE_GENERATED === '1') writeFileSync(file, CEDAR_SCHEMA);
    expect(readFileSync(file, 'utf8')).toBe(CEDAR_SCHEMA);
    expect(cedarSchemaPath()).toBe(file);
  });
});
