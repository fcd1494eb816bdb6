/**
 * Quotas that hold across processes (issue 16): `maxCalls` with an optional `per` window, counted in a shared
 * store (a real redis-server), per rule, agent and principal; when the store is away, quota checks fail closed.
 */
import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { createFixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { redisForFile, runStateWorker } from '../helpers/redis.js';

const redisServer = redisForFile();

async function runWorker(prefix: string, limit: number, calls: number): Promise<number> {
  const out = await runStateWorker('quota-worker', [
    redisServer.current.url,
    prefix,
    String(limit),
    String(calls),
  ]);
  return Number(out.trim());
}

describe('quota windows (per)', () => {
  it('a quota per window starts over when the clock enters the next window', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const caps = new CapabilitySet({ clock: () => now });
    caps.grant('mcp:s:t', 'execute', { id: 'q', maxCalls: 2, per: '1m' });
    expect(caps.authorize('mcp:s:t', 'execute').allowed).toBe(true);
    expect(caps.authorize('mcp:s:t', 'execute').allowed).toBe(true);
    const spent = caps.authorize('mcp:s:t', 'execute');
    expect(spent.allowed).toBe(false);
    expect(spent.reason).toContain('quota of 2 calls per 1m is used up');
    now += 60_000;
    expect(caps.usage('q')).toEqual({ used: 0, maxCalls: 2 });
    expect(caps.authorize('mcp:s:t', 'execute').allowed).toBe(true);
  });

  it('policies carry per, and refuse it without maxCalls or in a bad form', () => {
    const policy = {
      version: 1,
      rules: [{ id: 'q', effect: 'allow', resource: 'mcp:s:*', actions: 'execute', maxCalls: 5, per: '30s' }],
    };
    expect(CapabilitySet.fromPolicy(policy).toJSON().rules[0]).toMatchObject({ maxCalls: 5, per: '30s' });
    expect(() =>
      CapabilitySet.fromPolicy({
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:s:*', actions: 'execute', per: '1m' }],
      }),
    ).toThrow(/per needs maxCalls/);
    expect(() =>
      CapabilitySet.fromPolicy({
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:s:*', actions: 'execute', maxCalls: 1, per: 'a minute' }],
      }),
    ).toThrow(PolicyError);
  });
});

describe('shared quotas on Redis', () => {
  it('4 processes making 200 concurrent calls under a quota of 23 get exactly 23 between them', async () => {
    const granted = await Promise.all([1, 2, 3, 4].map(() => runWorker('fleet-q:', 23, 50)));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(23);
  });

  it('counts per agent and principal, and audits the principal', async () => {
    await using store = await RedisStateStore.connect({
      url: redisServer.current.url,
      keyPrefix: 'per-principal:',
    });
    const caps = new CapabilitySet({ quotaCounter: store });
    caps.grant('mcp:s:t', 'execute', { id: 'two-each', maxCalls: 2 });
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: caps, audit });
    const call = (principal: string) =>
      gate.authorize({ resource: 'mcp:s:t', action: 'execute', context: { agent: 'a', principal } }).then(
        () => true,
        () => false,
      );
    expect(
      await Promise.all([call('acme'), call('acme'), call('acme'), call('globex'), call('globex')]),
    ).toEqual([true, true, false, true, true]);
    expect(audit.records.filter((r) => r.principal === 'acme')).toHaveLength(3);
    expect(audit.records.at(2)?.reason).toContain('shared by every process, is used up');
  });

  it('fails closed, at once, while Redis is down: no call is allowed through a quota it cannot check', async () => {
    await using store = await RedisStateStore.connect({
      url: redisServer.current.url,
      keyPrefix: 'down-q:',
      commandTimeoutMs: 500,
    });
    const caps = new CapabilitySet({ quotaCounter: store });
    caps.grant('mcp:s:limited', 'execute', { id: 'limited', maxCalls: 100 });
    caps.grant('mcp:s:free', 'execute');
    const gate = new CapabilityGate({ capabilities: caps });
    await expect(gate.authorize({ resource: 'mcp:s:limited', action: 'execute' })).resolves.toMatchObject({
      allowed: true,
    });
    await redisServer.current.stop();
    try {
      await expect(gate.authorize({ resource: 'mcp:s:limited', action: 'execute' })).rejects.toMatchObject({
        code: 'CAPABILITY_DENIED',
        message: expect.stringContaining('could not be checked'),
      });
      // Rules without shared state go on.
      await expect(gate.authorize({ resource: 'mcp:s:free', action: 'execute' })).resolves.toMatchObject({
        allowed: true,
      });
    } finally {
      await redisServer.current.start();
    }
  });

  it('a manager with a shared quota sends exactly the quota to a real server', async () => {
    await using log = createFixtureLog();
    const store = new MemoryStateStore();
    const caps = new CapabilitySet({ quotaCounter: store });
    caps.grant('mcp:echo:echo', 'execute', { id: 'echo-3', maxCalls: 3 });
    await using manager = new MCPClientManager({ capabilities: caps, agent: 'bot' });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => manager.executeTool('mcp__echo__echo', { text: String(i) })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(log.toolCalls('echo')).toHaveLength(3);
    expect(await store.used(JSON.stringify(['echo-3', 'bot', '']))).toBe(3);
  });

  // Issue 38: quota keys joined their parts with U+001F, so (a, b␟c) and (a␟b, c) shared one counter: one principal
  // could spend another's quota by choosing its agent name.
  it('names holding the old separator never share a counter: (a, b\u001fc) and (a\u001fb, c) count apart', async () => {
    const store = new MemoryStateStore();
    const caps = new CapabilitySet({ quotaCounter: store });
    caps.grant('mcp:s:t', 'execute', { id: 'one-each', maxCalls: 1 });
    const gate = new CapabilityGate({ capabilities: caps });
    const call = (agent: string, principal: string) =>
      gate.authorize({ resource: 'mcp:s:t', action: 'execute', context: { agent, principal } });
    await expect(call('a', 'b\u001fc')).resolves.toMatchObject({ allowed: true });
    await expect(call('a\u001fb', 'c')).resolves.toMatchObject({ allowed: true });
    await expect(call('a', 'b\u001fc')).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(await store.used(JSON.stringify(['one-each', 'a', 'b\u001fc']))).toBe(1);
    expect(await store.used(JSON.stringify(['one-each', 'a\u001fb', 'c']))).toBe(1);
  });
});
