import { describe, expect, it, vi } from 'vitest';
import { AuditError, isInterlockError, PermissionDeniedError } from '../../src/errors.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import type { AccessRequest, AuditRecord, AuditSink } from '../../src/security/types.js';

const request: AccessRequest = {
  resource: 'mcp:fs:write_file',
  action: 'execute',
  context: { args: { path: '/data/a', content: 'secret text' }, agent: 'writer' },
  server: 'fs',
  tool: 'write_file',
  definitionHash: 'ab'.repeat(32),
};

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

const failingSink: AuditSink = {
  write() {
    throw new Error('disk full');
  },
};
const rejectingSink: AuditSink = {
  async write() {
    throw new Error('collector down');
  },
};

describe('CapabilityGate', () => {
  it('returns the decision when allowed and records it with argument names only', async () => {
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:*', 'execute', { id: 'fs' });
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: caps, audit, clock: () => Date.UTC(2030, 0, 1) });
    await expect(gate.authorize(request)).resolves.toMatchObject({ allowed: true, ruleId: 'fs' });
    expect(audit.records).toEqual([
      {
        time: '2030-01-01T00:00:00.000Z',
        agent: 'writer',
        resource: 'mcp:fs:write_file',
        action: 'execute',
        effect: 'allow',
        allowed: true,
        ruleId: 'fs',
        reason: expect.any(String),
        server: 'fs',
        tool: 'write_file',
        argumentKeys: ['content', 'path'],
        definitionHash: 'ab'.repeat(32),
        approved: undefined,
        policyRevision: String(caps.revision),
      },
    ]);
    expect(JSON.stringify(audit.records)).not.toContain('secret text');
  });

  it('records the sorted argument names of each call, one shared frozen list while they repeat', async () => {
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:*', 'execute');
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: caps, audit });
    const call = (args: Record<string, unknown>) => gate.authorize({ ...request, context: { args } });
    await call({ path: '/a', content: 'x' });
    await call({ content: 'y', path: '/b' });
    await call({ mode: 'w', path: '/e' });
    await call({ path: '/c' });
    await call({ path: '/d', content: 'z', mode: 'w' });
    await call({});
    const lists = audit.records.map((r) => r.argumentKeys);
    expect(lists).toEqual([
      ['content', 'path'],
      ['content', 'path'],
      ['mode', 'path'],
      ['path'],
      ['content', 'mode', 'path'],
      [],
    ]);
    expect(lists.every((keys) => Object.isFrozen(keys))).toBe(true);
    // Same names in any order: the second record holds the first one's list, not a copy of it.
    expect(lists[1]).toBe(lists[0]);
    expect(lists[3]).not.toBe(lists[0]);
  });

  it('throws PermissionDeniedError for a deny and records the deny too', async () => {
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: new CapabilitySet(), audit });
    const error = await failureOf(gate.authorize(request));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ code: 'CAPABILITY_DENIED', resource: 'mcp:fs:write_file', server: 'fs' });
    expect(audit.records[0]).toMatchObject({ effect: 'default-deny', allowed: false });
  });

  it('puts argument values in the record only through the redacting serializer', async () => {
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:*', 'execute');
    const audit = new MemoryAuditSink();
    const redact = (args: Readonly<Record<string, unknown>>) => ({ ...args, content: '[redacted]' });
    await new CapabilityGate({ capabilities: caps, audit, redact }).authorize(request);
    expect(audit.records[0]?.arguments).toEqual({ path: '/data/a', content: '[redacted]' });
  });

  describe('ask', () => {
    function askSet(): CapabilitySet {
      const caps = new CapabilitySet();
      caps.grant('mcp:fs:*', 'execute');
      caps.ask('mcp:fs:write_*', 'execute', { id: 'confirm-writes' });
      return caps;
    }

    it('is deny without an approver, and says so', async () => {
      const error = await failureOf(new CapabilityGate({ capabilities: askSet() }).authorize(request));
      expect(error).toBeInstanceOf(PermissionDeniedError);
      expect((error as PermissionDeniedError).reason).toMatch(/No approver is configured/);
      expect((error as PermissionDeniedError).rule?.id).toBe('confirm-writes');
    });

    it('allows once when the approver says true, and records the approval', async () => {
      const audit = new MemoryAuditSink();
      const approver = vi.fn(async () => true);
      const gate = new CapabilityGate({ capabilities: askSet(), approver, audit });
      await expect(gate.authorize(request)).resolves.toMatchObject({ allowed: true, effect: 'allow' });
      expect(approver).toHaveBeenCalledWith(
        expect.objectContaining({
          resource: 'mcp:fs:write_file',
          decision: expect.objectContaining({ effect: 'ask' }),
        }),
      );
      expect(audit.records[0]).toMatchObject({
        effect: 'allow',
        allowed: true,
        approved: true,
        ruleId: 'confirm-writes',
      });
      await gate.authorize(request);
      expect(approver).toHaveBeenCalledTimes(2);
    });

    it.each([
      ['false', () => false],
      ['a truthy non-boolean', () => 'yes' as unknown as boolean],
      ['a rejection', async () => Promise.reject(new Error('timeout'))],
      [
        'a throw',
        () => {
          throw new Error('ui crashed');
        },
      ],
    ])('denies when the approver answers %s', async (_, approver) => {
      const audit = new MemoryAuditSink();
      const gate = new CapabilityGate({ capabilities: askSet(), approver, audit });
      expect(await failureOf(gate.authorize(request))).toBeInstanceOf(PermissionDeniedError);
      expect(audit.records[0]).toMatchObject({ effect: 'ask', allowed: false, approved: false });
    });

    it('decides again after approval, so a revoke during the wait still wins', async () => {
      const caps = askSet();
      const approver = async () => {
        caps.revoke('mcp:fs:*');
        caps.deny('mcp:fs:write_file', 'execute');
        return true;
      };
      const error = await failureOf(new CapabilityGate({ capabilities: caps, approver }).authorize(request));
      expect(error).toMatchObject({ code: 'CAPABILITY_DENIED' });
      expect((error as PermissionDeniedError).rule?.effect).toBe('deny');
    });
  });

  describe('audit failure', () => {
    it.each([
      ['throws', failingSink],
      ['rejects', rejectingSink],
    ])(
      "blocks an allowed call with AuditError when the sink %s (auditFailure 'block', the default)",
      async (_, sink) => {
        const caps = CapabilitySet.allowAll({ onWarning: () => {} });
        const error = await failureOf(
          new CapabilityGate({ capabilities: caps, audit: sink }).authorize(request),
        );
        expect(error).toBeInstanceOf(AuditError);
        expect(isInterlockError(error, 'AUDIT_FAILED')).toBe(true);
        expect((error as AuditError).cause).toBeInstanceOf(Error);
      },
    );

    it.each(['block', 'continue'] as const)(
      'never turns a deny into an allow when the sink fails (auditFailure %s)',
      async (auditFailure) => {
        const gate = new CapabilityGate({
          capabilities: new CapabilitySet(),
          audit: failingSink,
          auditFailure,
        });
        expect(await failureOf(gate.authorize(request))).toBeInstanceOf(PermissionDeniedError);
      },
    );

    it("lets the call proceed and reports the failure with auditFailure 'continue'", async () => {
      const onAuditError = vi.fn();
      const caps = CapabilitySet.allowAll({ onWarning: () => {} });
      const gate = new CapabilityGate({
        capabilities: caps,
        audit: rejectingSink,
        auditFailure: 'continue',
        onAuditError,
      });
      await expect(gate.authorize(request)).resolves.toMatchObject({ allowed: true });
      expect(onAuditError).toHaveBeenCalledWith(
        expect.any(Error),
        expect.objectContaining({ resource: request.resource }),
      );
    });

    it('treats a redacting serializer that throws as a sink failure', async () => {
      const caps = CapabilitySet.allowAll({ onWarning: () => {} });
      const redact = () => {
        throw new Error('cannot redact');
      };
      const gate = new CapabilityGate({ capabilities: caps, audit: new MemoryAuditSink(), redact });
      expect(await failureOf(gate.authorize(request))).toBeInstanceOf(AuditError);
    });
  });

  it('lets exactly N of 50 concurrent callers through a maxCalls quota, even with a slow sink', async () => {
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:write_file', 'execute', { maxCalls: 10 });
    const records: AuditRecord[] = [];
    const slowSink: AuditSink = {
      async write(record) {
        // A sink that takes a random few ms, so writes finish out of order: the delay is the test's subject.
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        records.push(record);
      },
    };
    const gate = new CapabilityGate({ capabilities: caps, audit: slowSink });
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => gate.authorize(request)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(10);
    expect(records.filter((r) => r.allowed)).toHaveLength(10);
    expect(records).toHaveLength(50);
  });
});
