/**
 * A fleet through real tool calls (issue 16, "Tests and proof"): 4 processes, each an agent's manager with the echo
 * fixture, whose policy and quotas live in one real redis-server (with an append-only file, so a kill and restart
 * keeps the counts, as a production Redis for quotas should). Redis is killed and restarted mid-run: no call is
 * allowed that the quota or a revoke would have refused, nothing hangs, and the server sees exactly the quota.
 * Past its lease a process that cannot reach Redis refuses every call (issue 38): it cannot know what was revoked.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { Policy } from '../../src/security/policy.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { redisForFile, type StateWorker, startStateWorker } from '../helpers/redis.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';

const redisServer = redisForFile({ persist: true });
const ECHO = nodeFixture('echo').args[0] as string;
const QUOTA_KEY = JSON.stringify(['echo-quota', 'fleet-agent', 'acme']);

function policy(limit: number): Policy {
  return {
    version: 1,
    rules: [
      {
        id: 'echo-quota',
        effect: 'allow',
        resource: 'mcp:echo:echo',
        actions: ['execute'],
        maxCalls: limit,
      },
      { id: 'pid', effect: 'allow', resource: 'mcp:echo:pid', actions: ['execute'] },
    ],
  };
}

/** The store, policy, log and workers of one test; `await using` stops the workers and closes the rest. */
interface Fleet extends AsyncDisposable {
  store: RedisStateStore;
  shared: SharedPolicy;
  log: FixtureLog;
  workers: StateWorker[];
}

/** Time the workers get to exit by themselves when told to, before they are killed. */
const WORKER_EXIT_GRACE_MS = 5_000;

/**
 * Publishes the policy from this process, then starts 4 workers that follow it, with a lease long enough that a
 * loaded machine does not stall one past it by accident.
 */
async function fleet(prefix: string, limit: number, fallback: string, leaseMs = 10_000): Promise<Fleet> {
  const store = await RedisStateStore.connect({
    url: redisServer.current.url,
    keyPrefix: prefix,
    commandTimeoutMs: 5_000,
  });
  let shared: SharedPolicy | undefined;
  const log = createFixtureLog();
  let workers: StateWorker[] = [];
  const dispose = async () => {
    for (const w of workers) w.send('exit');
    // A bound, not a sleep: it ends as soon as every worker exited.
    const grace = new AbortController();
    await Promise.race([
      Promise.allSettled(workers.map((w) => w.done)),
      delay(WORKER_EXIT_GRACE_MS, undefined, { signal: grace.signal }).catch(() => {}),
    ]);
    grace.abort();
    for (const w of workers) w.kill();
    await log.close();
    await shared?.close();
    await store.close();
  };
  try {
    shared = await SharedPolicy.open(store, { name: 'fleet', initial: policy(limit) });
    workers = [1, 2, 3, 4].map(() =>
      startStateWorker('call-worker', [
        redisServer.current.url,
        prefix,
        ECHO,
        log.path,
        fallback,
        String(leaseMs),
      ]),
    );
    await Promise.all(workers.map((w) => w.line('ready')));
  } catch (err) {
    await dispose();
    throw err;
  }
  return { store, shared, log, workers, [Symbol.asyncDispose]: dispose };
}

/** `calls n tool` in every worker at once; the `ok` and `denied` counts, and any other error codes. */
async function round(
  workers: readonly StateWorker[],
  n: number,
  tool: string,
): Promise<{ ok: number[]; denied: number[]; other: string[] }> {
  const lines = await Promise.all(workers.map((w) => w.ask(`calls ${n} ${tool}`, 'result ')));
  const parts = lines.map((l) => l.split(' '));
  return {
    ok: parts.map((p) => Number(p[1])),
    denied: parts.map((p) => Number(p[2])),
    other: parts.map((p) => p[3] ?? '').filter((o) => o !== '-'),
  };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Retries `op` until it resolves (the store reconnects by itself after a restart). */
function eventually<T>(op: () => Promise<T>): Promise<T> {
  return vi.waitFor(op, { timeout: CONDITION_TIMEOUT_MS, interval: 100 });
}

/** Kills Redis, runs `check`, and starts Redis again (also when `check` fails). */
async function whileRedisIsDown(check: () => Promise<void>): Promise<void> {
  await redisServer.current.stop();
  try {
    await check();
  } finally {
    await redisServer.current.start();
  }
}

/**
 * Rounds of `n` echo calls in every worker until the shared count reaches the quota of 20 (the workers reconnect
 * by themselves, in their own time); returns how many calls were allowed meanwhile.
 */
async function callsUntilUsedUp(store: RedisStateStore, workers: readonly StateWorker[], n: number) {
  let allowed = 0;
  for (let i = 0; i < 100 && (await eventually(() => store.used(QUOTA_KEY))) < 20; i++) {
    const r = await round(workers, n, 'echo');
    expect(r.other).toEqual([]);
    allowed += sum(r.ok);
  }
  expect(await store.used(QUOTA_KEY)).toBe(20);
  return allowed;
}

describe('a fleet of 4 processes calling a real server through one Redis', () => {
  it('200 concurrent tool calls under a quota of 23: exactly 23 reach the server', async () => {
    await using f = await fleet('fleet-200:', 23, 'deny');
    const { workers, log } = f;
    const result = await round(workers, 50, 'echo');
    expect(sum(result.ok)).toBe(23);
    expect(sum(result.denied)).toBe(200 - 23);
    expect(result.other).toEqual([]);
    expect(log.toolCalls('echo')).toHaveLength(23);
  });

  it('Redis killed and restarted mid-run: quotas fail closed, then every rule once the lease ran out, a revoke after it holds everywhere when it returns, nothing hangs', async () => {
    await using f = await fleet('fleet-kill:', 20, 'deny');
    const { workers, log, store, shared } = f;
    const before = await round(workers, 3, 'echo');
    expect(sum(before.ok)).toBe(12);

    await whileRedisIsDown(async () => {
      // Every call answers (no hang): quota calls are refused.
      const down = await round(workers, 5, 'echo');
      expect(down.ok).toEqual([0, 0, 0, 0]);
      expect(down.denied).toEqual([5, 5, 5, 5]);
      // Once a process could not confirm its revision for a lease, it refuses the rest too (fails closed).
      for (const w of workers) {
        await expect.poll(() => w.ask('fenced', 'fenced '), { timeout: 30_000 }).toBe('fenced true');
      }
      const pidCalls = log.toolCalls('pid').length;
      const free = await round(workers, 2, 'pid');
      expect(free.ok).toEqual([0, 0, 0, 0]);
      expect(free.denied).toEqual([2, 2, 2, 2]);
      expect(log.toolCalls('pid')).toHaveLength(pidCalls);
    });

    // Each worker decides again once it has renewed its lease with the restarted Redis (on a loaded machine, later).
    for (const w of workers) {
      await expect.poll(() => w.ask('fenced', 'fenced '), { timeout: 60_000 }).toBe('fenced false');
    }
    // After the restart the count is where it was: exactly the 8 units left are given, whatever the reconnect timing.
    expect(await callsUntilUsedUp(store, workers, 5)).toBe(8);
    expect(sum((await round(workers, 5, 'echo')).ok)).toBe(0);
    expect(log.toolCalls('echo')).toHaveLength(20);

    // A revoke published after the restart has reached every process when it returns (issue 38): the calls made
    // right after it are all refused, and none reaches the server.
    const version = await eventually(() => shared.revoke('pid'));
    // A worker that has not reconnected yet is no live member; it applied the revision or still refuses everything.
    for (const w of workers) {
      // Fenced first: a worker that is not fenced has confirmed a revision read after the revoke.
      const [fenced, applied] = [await w.ask('fenced', 'fenced '), await w.ask('version', 'version ')];
      expect(applied === `version ${version}` || fenced === 'fenced true').toBe(true);
    }
    const pidCalls = log.toolCalls('pid').length;
    const revoked = await round(workers, 2, 'pid');
    expect(revoked.ok).toEqual([0, 0, 0, 0]);
    expect(log.toolCalls('pid')).toHaveLength(pidCalls);
  }, 120_000);

  it('with a local share as fallback, each process gives its share during the outage and the total stays at the quota', async () => {
    // The workers' lease is longer than the outage: the local share is about quotas while the policy holds.
    await using f = await fleet('fleet-share:', 20, 'share:4', 60_000);
    const { workers, log, store } = f;
    // One process after the other, so each has seen the count of those before it.
    for (const w of workers) expect(await w.ask('calls 3 echo', 'result ')).toBe('result 3 0 -');

    await whileRedisIsDown(async () => {
      // Each process had used 3 of its share of 5 (20 / 4 replicas): 2 more each, locally.
      const down = await round(workers, 5, 'echo');
      expect(down.ok).toEqual([2, 2, 2, 2]);
    });

    // Once Redis answers, every process charges its local units to it by itself (no call needed): the shared count
    // reaches the quota, and nothing more goes.
    await expect.poll(() => eventually(() => store.used(QUOTA_KEY))).toBe(20);
    expect(await callsUntilUsedUp(store, workers, 1)).toBe(0);
    expect(sum((await round(workers, 5, 'echo')).ok)).toBe(0);
    expect(log.toolCalls('echo')).toHaveLength(20);
  });
});
