/**
 * One policy for a fleet (issue 16): versioned bundles in Redis and a broadcast on every change. A revoke in one
 * process stops the next call in the others; audit records carry the version that decided.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilityGate } from '../../src/security/gate.js';
import type { Policy } from '../../src/security/policy.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { redisForFile } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/state/policy-worker.ts');

const redisServer = redisForFile();

const POLICY: Policy = {
  version: 1,
  rules: [
    { id: 'write', effect: 'allow', resource: 'mcp:fs:write_file', actions: ['execute'] },
    { id: 'read', effect: 'allow', resource: 'mcp:fs:read_file', actions: ['execute'] },
  ],
};

function worker(prefix: string): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, redisServer.current.url, prefix], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let rest = '';
  child.stdout?.on('data', (c: Buffer) => {
    rest += c.toString();
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  });
  return { child, lines };
}

describe('SharedPolicy', () => {
  it('a revoke in one process stops the next call in three others', async () => {
    await using store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: 'revoke:' });
    await using admin = await SharedPolicy.open(store, { initial: POLICY, pollMs: 0 });
    const workers = [1, 2, 3].map(() => worker('revoke:'));
    try {
      await waitUntil(() => workers.every((w) => w.lines.includes('ready')), { timeoutMs: 20_000 });
      expect(workers.every((w) => w.lines[0] === 'allowed 1')).toBe(true);
      await store.set('revoked-at', String(Date.now()));
      expect(await admin.revoke('write')).toBe(2);
      const denials = await waitUntil(
        () => {
          const found = workers.map((w) => w.lines.find((l) => l.startsWith('denied')));
          return found.every((l) => l !== undefined) ? (found as string[]) : undefined;
        },
        { timeoutMs: 5_000 },
      );
      for (const line of denials) {
        const [, version, ms] = line.split(' ');
        expect(version).toBe('2');
        // Delivery takes milliseconds; the bound is loose on purpose (a shared, noisy machine).
        expect(Number(ms)).toBeLessThan(2_000);
      }
    } finally {
      for (const w of workers) w.child.kill();
    }
  });

  it('follows published versions, keeps the last good one, and audits the version that decided', async () => {
    await using store = new MemoryStateStore();
    await using a = await SharedPolicy.open(store, { name: 'team', initial: POLICY, pollMs: 0 });
    await using b = await SharedPolicy.open(store, { name: 'team', pollMs: 0 });
    expect(b.version).toBe(1);
    const audit = new MemoryAuditSink();
    const gate = new CapabilityGate({ capabilities: b.capabilities, audit });
    await gate.authorize({ resource: 'mcp:fs:read_file', action: 'execute' });
    await a.publish({
      version: 1,
      rules: [{ id: 'only-read', effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }],
    });
    await waitUntil(() => b.version === 2);
    await gate.authorize({ resource: 'mcp:fs:read_file', action: 'execute' });
    await expect(gate.authorize({ resource: 'mcp:fs:write_file', action: 'execute' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    expect(audit.records.map((r) => r.policyRevision)).toEqual(['team@1', 'team@2', 'team@2']);
    // A bad policy is refused before anything is published.
    await expect(
      a.publish({ version: 1, rules: [{ effect: 'allow', resource: 'nope', actions: 'x' }] } as never),
    ).rejects.toMatchObject({
      code: 'INVALID_POLICY',
    });
    expect(b.version).toBe(2);
    await expect(a.revoke('no-such-rule')).rejects.toMatchObject({ code: 'INVALID_POLICY' });
  });

  it('catches up by polling when a broadcast was missed', async () => {
    await using store = new MemoryStateStore();
    await using a = await SharedPolicy.open(store, { initial: POLICY, pollMs: 0 });
    await using b = await SharedPolicy.open(store, { pollMs: 20 });
    // Written behind the broadcast's back, as if b had been disconnected when it went out.
    await store.set(
      'policy:default:bundle',
      JSON.stringify({ version: 7, policy: { version: 1, rules: [] } }),
    );
    await waitUntil(() => b.version === 7);
    expect(b.capabilities.has('mcp:fs:read_file', 'execute')).toBe(false);
    expect(a.version).toBe(1);
  });

  it('a revoke published after the store lost the policy (a restart without persistence) still applies everywhere', async () => {
    await using store = new MemoryStateStore();
    await using a = await SharedPolicy.open(store, { initial: POLICY, pollMs: 0 });
    await using b = await SharedPolicy.open(store, { pollMs: 0 });
    await a.publish(POLICY);
    await b.refresh();
    expect(b.version).toBe(2);
    await store.delete('policy:default:bundle');
    // The store starts over, but versions only grow: b must not ignore the new one as older than its own.
    const version = await a.publish({ version: 1, rules: POLICY.rules.filter((r) => r.id !== 'write') });
    expect(version).toBe(3);
    await b.refresh();
    expect(b.version).toBe(3);
    expect(b.capabilities.has('mcp:fs:write_file', 'execute')).toBe(false);
  });
});
