/**
 * A revoke is fleet-wide when it returns (issue 38). Processes that follow one shared policy through a real
 * redis-server (child processes with their own gate, answering `check` on stdin) are asked right after
 * `SharedPolicy.revoke()` resolves: every one refuses. A process that stops applying is named in the error instead of
 * a silent success; a process that stalls refuses once it runs again; and after Redis restarts empty, a revoke
 * builds on the newest revision the processes held, never on nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Policy } from '../../src/security/policy.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { redisForFile, type StateWorker, startStateWorker } from '../helpers/redis.js';

const redisServer = redisForFile();

/**
 * Workers' lease: long enough that a loaded machine does not stall a worker past it by accident (writers wait for
 * the longest lease among the members, so the admin's default lease is fine).
 */
const LEASE_MS = 10_000;
/** Starting tsx workers on a loaded 2-core machine takes a while. */
const SLOW = 180_000;

function rules(...ids: string[]): Policy {
  return {
    version: 1,
    rules: ids.map((id) => ({ id, effect: 'allow', resource: `mcp:fs:${id}`, actions: ['execute'] })),
  };
}

function connect(prefix: string): Promise<RedisStateStore> {
  return RedisStateStore.connect({
    url: redisServer.current.url,
    keyPrefix: prefix,
    commandTimeoutMs: 5_000,
  });
}

/** Starts `n` check workers following the policy 'fleet' under `prefix`, and waits until they are ready. */
async function workers(prefix: string, n: number): Promise<StateWorker[] & AsyncDisposable> {
  const list = Array.from({ length: n }, (_, i) =>
    startStateWorker('check-worker', [redisServer.current.url, prefix, `worker-${i + 1}`, String(LEASE_MS)]),
  );
  const dispose = async () => {
    for (const w of list) {
      w.signal('SIGCONT');
      w.kill();
    }
    await Promise.allSettled(list.map((w) => w.done));
  };
  try {
    await Promise.all(list.map((w) => w.line('ready')));
  } catch (err) {
    await dispose();
    throw err;
  }
  return Object.assign(list, { [Symbol.asyncDispose]: dispose });
}

/** Every worker's decision on `mcp:fs:<id>`, asked now. */
function checkAll(list: readonly StateWorker[], id: string): Promise<string[]> {
  return Promise.all(
    list.map((w) => w.ask(`check mcp:fs:${id}`, 'check ').then((l) => l.split(' ')[1] ?? '')),
  );
}

describe('a shared policy across processes', () => {
  it(
    'a call made right after revoke() resolves is refused in every process, every time',
    async () => {
      await using store = await connect('fleet-wide:');
      await using admin = await SharedPolicy.open(store, {
        name: 'fleet',
        initial: rules('r1', 'r2', 'r3', 'r4', 'keep'),
      });
      await using fleet = await workers('fleet-wide:', 3);
      expect(await checkAll(fleet, 'r1')).toEqual(['allowed', 'allowed', 'allowed']);
      for (const id of ['r1', 'r2', 'r3', 'r4']) {
        const version = await admin.revoke(id);
        // No waiting of any kind between the revoke returning and the calls.
        expect(await checkAll(fleet, id)).toEqual(['denied', 'denied', 'denied']);
        for (const w of fleet) expect(await w.ask('version', 'version ')).toBe(`version ${version}`);
      }
      expect(await checkAll(fleet, 'keep')).toEqual(['allowed', 'allowed', 'allowed']);
    },
    SLOW,
  );

  it(
    'a live process that does not apply a revision is named, and the revoke fails instead of succeeding',
    async () => {
      await using store = await connect('stuck:');
      await using admin = await SharedPolicy.open(store, { name: 'fleet', initial: rules('r1', 'keep') });
      // A process whose heartbeat reaches the store but which never applies a new revision (it cannot read it).
      const beat = () =>
        store.putMember('policy:fleet', 'stuck-host:4242', JSON.stringify({ version: 1 }), 1_000);
      await beat();
      const heart = setInterval(() => void beat().catch(() => {}), 200);
      try {
        const error = await admin.revoke('r1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ code: 'POLICY_NOT_APPLIED', version: 2, pending: ['stuck-host:4242'] });
        expect((error as Error).message).toContain('stuck-host:4242');
        // The revision itself stands, and this process applied it.
        expect(admin.version).toBe(2);
        expect(admin.capabilities.has('mcp:fs:r1', 'execute')).toBe(false);
      } finally {
        clearInterval(heart);
      }
    },
    SLOW,
  );

  it(
    'a process stalled through a revoke refuses the revoked call as soon as it runs again',
    async () => {
      await using store = await connect('stalled:');
      await using admin = await SharedPolicy.open(store, { name: 'fleet', initial: rules('r1', 'keep') });
      await using fleet = await workers('stalled:', 2);
      const [stalled, running] = fleet as unknown as [StateWorker, StateWorker];
      stalled.signal('SIGSTOP');
      // Its heartbeat stops: once its membership lapses the revoke returns without it (its lease ran out first).
      const version = await admin.revoke('r1');
      expect(await running.ask('check mcp:fs:r1', 'check ')).toBe(`check denied ${version}`);
      // The question is waiting on its stdin when it wakes up, next to its timers and the broadcast.
      const answer = stalled.ask('check mcp:fs:r1', 'check ');
      stalled.signal('SIGCONT');
      expect((await answer).split(' ')[1]).toBe('denied');
    },
    SLOW,
  );

  it(
    'after Redis restarts empty, a revoke builds on the newest revision the processes held and reaches them all',
    async () => {
      const prefix = 'restart:';
      let store = await connect(prefix);
      let admin = await SharedPolicy.open(store, {
        name: 'fleet',
        initial: rules('r1', 'r2', 'counts', 'keep'),
      });
      await using fleet = await workers(prefix, 2);
      try {
        await admin.revoke('r1');
        expect(await admin.revoke('r2')).toBe(3);
        await admin.close();
        await store.close();

        await redisServer.current.stop();
        await redisServer.current.start();

        // A new writer (as `interlock policy revoke counts` would be): the store it sees is empty.
        store = await connect(prefix);
        admin = await SharedPolicy.open(store, { name: 'fleet' });
        const version = await admin.revoke('counts');
        // Above every revision a process held, so no process ignores it as older than its own.
        expect(version).toBe(4);
        expect(await checkAll(fleet, 'counts')).toEqual(['denied', 'denied']);
        // Built on revision 3, not on nothing: the rules revoked before the restart stay revoked.
        expect(await checkAll(fleet, 'r1')).toEqual(['denied', 'denied']);
        expect(await checkAll(fleet, 'r2')).toEqual(['denied', 'denied']);
        expect(await checkAll(fleet, 'keep')).toEqual(['allowed', 'allowed']);
        expect(admin.policy?.rules.map((r) => r.id)).toEqual(['keep']);
      } finally {
        await admin.close();
        await store.close();
      }
    },
    SLOW,
  );
});
