// The gateway's table of flow states (issue 42): one state per caller key, bounded, dropped when idle, and never
// dropped to make room for a new caller. Most cases step a clock by hand; one lets the real timer sweep.
import { describe, expect, it } from 'vitest';
import { ClosedError, OverloadedError } from '../../src/errors.js';
import { FlowStates } from '../../src/gateway/flow-states.js';
import type { FlowState } from '../../src/security/flow.js';
import { waitUntil } from '../helpers/index.js';

const IDLE_MS = 60_000;

function table(
  options: { maxStates?: number; idleTimeoutMs?: number; onFull?: (held: number) => void } = {},
) {
  let now = 1_000;
  const states = new FlowStates({
    maxStates: options.maxStates ?? 8,
    idleTimeoutMs: options.idleTimeoutMs ?? IDLE_MS,
    maxIndexedChars: 4_096,
    onFull: options.onFull,
    clock: () => now,
  });
  return {
    states,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** The state `key` gets now (used and released at once). */
const stateOf = (states: FlowStates, key: string) => states.use(key, async (flow) => flow);

describe('a table of flow states', () => {
  it("makes each new state with the policy's settings as they are then, bounded by the gateway's own limit", async () => {
    let settings = { minFragmentLength: 20, windowSize: 1, maxIndexedChars: 1_000_000 };
    const states = new FlowStates({
      maxStates: 8,
      idleTimeoutMs: IDLE_MS,
      maxIndexedChars: 4_096,
      settings: () => settings,
    });
    const alice = await stateOf(states, 'alice');
    expect([alice.minFragmentLength, alice.windowSize, alice.maxIndexedChars]).toEqual([20, 1, 4_096]);
    settings = { minFragmentLength: 32, windowSize: 4, maxIndexedChars: 1_000_000 };
    const bob = await stateOf(states, 'bob');
    expect([bob.minFragmentLength, bob.windowSize, bob.maxIndexedChars]).toEqual([32, 4, 4_096]);
    expect(states.create().windowSize).toBe(4);
    states.close();
  });

  it('gives each key its own state and the same key the same state on every use', async () => {
    const { states } = table();
    const alice = await stateOf(states, 'alice');
    alice.record('mcp:mail:read_inbox', ['private'], 'the quarterly numbers are not public yet');
    expect(await stateOf(states, 'alice')).toBe(alice);
    const bob = await stateOf(states, 'bob');
    expect(bob).not.toBe(alice);
    expect(bob.has('private')).toBe(false);
    expect(states.size).toBe(2);
    states.close();
  });

  it('makes states with the configured index bound', async () => {
    const { states } = table();
    const flow = await stateOf(states, 'alice');
    expect(flow.maxIndexedChars).toBe(4_096);
    // Past the bound the index says it is truncated, so a `carries` condition fails closed.
    flow.record('mcp:web:fetch', ['untrusted'], 'x'.repeat(5_000));
    expect(flow.carried({ body: 'y' }).truncated).toBe(true);
    states.close();
  });

  it('refuses a new key when full rather than forget a held state, and tells the operator once', async () => {
    const full: number[] = [];
    const { states, advance } = table({ maxStates: 2, onFull: (held) => full.push(held) });
    const alice = await stateOf(states, 'alice');
    alice.record('mcp:mail:read_inbox', ['private']);
    await stateOf(states, 'bob');
    advance(IDLE_MS - 1);
    expect(() => states.use('carol', async () => 'never run')).toThrow(OverloadedError);
    expect(() => states.use('dave', async () => 'never run')).toThrow(OverloadedError);
    expect(full).toEqual([2]);
    // The callers it holds go on with what they had.
    expect((await stateOf(states, 'alice')).has('private')).toBe(true);
    states.close();
  });

  it('drops a state idle for the timeout, so a new caller fits and the old one starts over', async () => {
    const { states, advance } = table({ maxStates: 1 });
    (await stateOf(states, 'alice')).record('mcp:mail:read_inbox', ['private']);
    advance(IDLE_MS);
    expect(await states.use('bob', async () => 'bob ran')).toBe('bob ran');
    expect(states.size).toBe(1);
    advance(IDLE_MS);
    expect((await stateOf(states, 'alice')).has('private')).toBe(false);
    states.close();
  });

  it('keeps a state while a request holds it, however long it runs', async () => {
    const { states, advance } = table();
    let finish: () => void = () => {};
    let held: FlowState | undefined;
    const running = states.use('alice', (flow) => {
      held = flow;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    held?.record('mcp:mail:read_inbox', ['private']);
    advance(IDLE_MS * 10);
    expect(states.sweep()).toBe(0);
    finish();
    await running;
    // Idle counts from the end of the request.
    advance(IDLE_MS - 1);
    expect(states.sweep()).toBe(0);
    expect((await stateOf(states, 'alice')).has('private')).toBe(true);
    advance(IDLE_MS);
    expect(states.sweep()).toBe(1);
    states.close();
  });

  it('releases a state when the work throws before it returns a promise', async () => {
    const { states, advance } = table();
    expect(() =>
      states.use('alice', () => {
        throw new Error('broken work');
      }),
    ).toThrow('broken work');
    advance(IDLE_MS);
    expect(states.sweep()).toBe(1);
    states.close();
  });

  it('refuses every use after close', async () => {
    const { states } = table();
    await stateOf(states, 'alice');
    states.close();
    expect(states.size).toBe(0);
    expect(() => states.use('alice', async () => 'never run')).toThrow(ClosedError);
  });

  it('sweeps idle states on its own timer', async () => {
    const states = new FlowStates({ maxStates: 4, idleTimeoutMs: 20, maxIndexedChars: 0 });
    await states.use('alice', async () => {});
    await states.use('bob', async () => {});
    expect(states.size).toBe(2);
    await waitUntil(() => states.size === 0, { message: 'idle states were never swept' });
    states.close();
  });
});
