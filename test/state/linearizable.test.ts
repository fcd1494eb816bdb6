/**
 * The shared state is linearizable (issue 38, "a concurrency test of the shared state"). Three processes run
 * generated operations at once against one real redis-server: publishes and revokes of a shared policy's rules and
 * consumes of one quota. Every operation is recorded with its invoke and complete times (one host, one clock) and its result,
 * and a checker proves the history linearizable against a sequential model.
 *
 * The checker is Wing & Gong's search (with Lowe's memoization of visited states): it tries, in real-time order,
 * every operation that could take effect next, applies it to the model, and backtracks when a result disagrees.
 * It is exact (not a heuristic like "counts add up"), and small histories of three sequential clients keep the
 * search tiny. By locality (Herlihy & Wing), the policy and the quota are checked apart. The models: the policy
 * is a register of rule ids and a revision (a publish sets the rules and answers revision + 1; a revoke of a present
 * rule removes it and answers revision + 1; of an absent rule answers "absent": a resurrected rule or a lost update
 * has no linearization, and the state the store ends in must be the end of one); the quota is a counter
 * with a limit (allowed with used = count + 1 below the limit, refused at it: an overrun has none). fast-check
 * generates the operations from a recorded seed, so a failing run can be replayed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Policy } from '../../src/security/policy.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { redisForFile, startStateWorker } from '../helpers/redis.js';

const redisServer = redisForFile();

type Op = { kind: 'revoke'; rule: string } | { kind: 'publish'; rules: string[] } | { kind: 'consume' };
interface Entry {
  process: string;
  op: Op;
  invoke: number;
  complete: number;
  result: unknown;
}

/** A sequential model: the next state when `entry`'s result is what the model answers in `state`, else undefined. */
type Model<S> = (state: S, entry: Entry) => S | undefined;

/**
 * Wing & Gong with memoization: whether some order respecting real time explains every result (and, with
 * `final`, ends in the state the store was found in afterwards).
 */
function linearizable<S>(
  history: readonly Entry[],
  initial: S,
  step: Model<S>,
  final: (state: S) => boolean = () => true,
): boolean {
  const seen = new Set<string>();
  const search = (done: bigint, state: S, left: number): boolean => {
    if (left === 0) return final(state);
    const key = `${done}|${JSON.stringify(state)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    // An operation can go next only if it was invoked before every other pending operation completed.
    let horizon = Number.POSITIVE_INFINITY;
    history.forEach((e, i) => {
      if ((done & (1n << BigInt(i))) === 0n) horizon = Math.min(horizon, e.complete);
    });
    return history.some((e, i) => {
      if ((done & (1n << BigInt(i))) !== 0n || e.invoke > horizon) return false;
      const next = step(state, e);
      return next !== undefined && search(done | (1n << BigInt(i)), next, left - 1);
    });
  };
  return search(0n, initial, history.length);
}

interface PolicyState {
  version: number;
  rules: string[];
}

const policyModel: Model<PolicyState> = (state, { op, result }) => {
  if (op.kind === 'publish') {
    const version = (result as { version?: number }).version;
    return version === state.version + 1 ? { version, rules: [...op.rules] } : undefined;
  }
  if (op.kind !== 'revoke') return undefined;
  const present = state.rules.includes(op.rule);
  if (result === 'absent') return present ? undefined : state;
  const version = (result as { version?: number }).version;
  if (!present || version !== state.version + 1) return undefined;
  return { version, rules: state.rules.filter((r) => r !== op.rule) };
};

const LIMIT = 10;
const counterModel: Model<number> = (count, { op, result }) => {
  if (op.kind !== 'consume') return undefined;
  const r = result as { allowed: boolean; used: number };
  if (count < LIMIT) return r.allowed && r.used === count + 1 ? count + 1 : undefined;
  return !r.allowed && r.used === count ? count : undefined;
};

const RULES = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
const POLICY: Policy = {
  version: 1,
  rules: RULES.map((id) => ({ id, effect: 'allow', resource: `mcp:fs:${id}`, actions: ['execute'] })),
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom(...RULES).map((rule): Op => ({ kind: 'revoke', rule })),
  // A publish brings back a subset of the rules (in the policy's order): a revoke may find them present again.
  fc.subarray(RULES, { minLength: 1 }).map((rules): Op => ({ kind: 'publish', rules })),
  fc.constant<Op>({ kind: 'consume' }),
);

describe('the checker', () => {
  const at = (invoke: number, complete: number, op: Op, result: unknown, process = 'p'): Entry => ({
    process,
    op,
    invoke,
    complete,
    result,
  });

  it('accepts overlapping revokes in either order and refuses a resurrected rule or a lost update', () => {
    const start = { version: 1, rules: ['a', 'b'] };
    const ok = [
      at(0, 10, { kind: 'revoke', rule: 'a' }, { version: 3 }),
      at(1, 9, { kind: 'revoke', rule: 'b' }, { version: 2 }),
    ];
    expect(linearizable(ok, start, policyModel)).toBe(true);
    // Both answered revision 2: one write lost the other (the bug of issue 38).
    const lost = [
      at(0, 10, { kind: 'revoke', rule: 'a' }, { version: 2 }),
      at(1, 9, { kind: 'revoke', rule: 'b' }, { version: 2 }),
    ];
    expect(linearizable(lost, start, policyModel)).toBe(false);
    // 'a' was revoked, then a later revoke of 'a' found it present again.
    const back = [
      at(0, 1, { kind: 'revoke', rule: 'a' }, { version: 2 }),
      at(2, 3, { kind: 'revoke', rule: 'a' }, { version: 3 }),
    ];
    expect(linearizable(back, start, policyModel)).toBe(false);
  });

  it('lets a publish bring a revoked rule back only after it, and checks the state the store ended in', () => {
    const start = { version: 1, rules: ['a', 'b'] };
    const republished = [
      at(0, 1, { kind: 'revoke', rule: 'a' }, { version: 2 }),
      at(2, 3, { kind: 'publish', rules: ['a', 'b'] }, { version: 3 }),
      at(4, 5, { kind: 'revoke', rule: 'a' }, { version: 4 }),
    ];
    expect(linearizable(republished, start, policyModel)).toBe(true);
    expect(linearizable(republished, start, policyModel, (s) => s.rules.join() === 'b')).toBe(true);
    // The store still holding 'a' after the last revoke of it: a write was lost.
    expect(linearizable(republished, start, policyModel, (s) => s.rules.join() === 'a,b')).toBe(false);
  });

  it('refuses a quota overrun and an order that contradicts real time', () => {
    const consume: Op = { kind: 'consume' };
    const over = Array.from({ length: LIMIT + 1 }, (_, i) =>
      at(i, i + 0.5, consume, { allowed: true, used: i + 1 }),
    );
    expect(linearizable(over, 0, counterModel)).toBe(false);
    // used 2 completed before used 1 was invoked.
    const swapped = [
      at(0, 1, consume, { allowed: true, used: 2 }),
      at(2, 3, consume, { allowed: true, used: 1 }),
    ];
    expect(linearizable(swapped, 0, counterModel)).toBe(false);
    expect(linearizable([...swapped].reverse(), 0, counterModel)).toBe(false);
    const overlapping = [
      at(0, 3, consume, { allowed: true, used: 2 }),
      at(1, 2, consume, { allowed: true, used: 1 }),
    ];
    expect(linearizable(overlapping, 0, counterModel)).toBe(true);
  });
});

describe('three processes against one redis-server', () => {
  it('publishes, revokes and quota consumes, recorded and checked: the history is linearizable', async () => {
    const seed = Date.now() % 2 ** 31;
    const plans = fc.sample(fc.array(opArb, { minLength: 12, maxLength: 12 }), { seed, numRuns: 3 });
    const prefix = `history-${seed}:`;
    await using store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
    await using admin = await SharedPolicy.open(store, { name: 'history', initial: POLICY, leaseMs: 10_000 });
    expect(admin.version).toBe(1);
    const workers = plans.map((ops, i) =>
      startStateWorker('history-worker', [redisServer.current.url, prefix, `p${i + 1}`, JSON.stringify(ops)]),
    );
    try {
      await Promise.all(workers.map((w) => w.line('ready')));
      for (const w of workers) w.send('go');
      await Promise.all(workers.map((w) => w.line('done')));
      const history: Entry[] = [];
      for (const w of workers) {
        for (const line of w.lines()) if (line.startsWith('{')) history.push(JSON.parse(line) as Entry);
      }
      expect(history, `seed ${seed}`).toHaveLength(36);
      // No operation failed for another reason than the model's: every outcome is known.
      expect(history.filter((e) => (e.result as { error?: string }).error !== undefined)).toEqual([]);
      const writes = history.filter((e) => e.op.kind !== 'consume');
      const consumes = history.filter((e) => e.op.kind === 'consume');
      // The store ends where some linearization of the writes ends: no write lost, no rule back unasked.
      await admin.refresh();
      const stored = { version: admin.version, rules: admin.policy?.rules.map((r) => r.id) ?? [] };
      const endsStored = (s: PolicyState) =>
        s.version === stored.version && s.rules.join() === stored.rules.join();
      expect(
        linearizable(writes, { version: 1, rules: RULES }, policyModel, endsStored),
        `seed ${seed}`,
      ).toBe(true);
      expect(linearizable(consumes, 0, counterModel), `seed ${seed}`).toBe(true);
      expect(await store.used('quota')).toBe(Math.min(LIMIT, consumes.length));
    } finally {
      for (const w of workers) w.kill();
    }
  }, 180_000);
});
