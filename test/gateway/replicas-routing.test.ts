// Routing between gateway replicas (issue 41), two relays in one process on one shared store: a caller cancelling
// a round that was forwarded cancels the call on the replica that holds it, and a holder that takes an answer but
// sends no next step in time fails the round with REPLICA_UNAVAILABLE and cancels its call. (The same over real
// processes, a real Redis and a balancer: replicas.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import type { Principal } from '../../src/gateway/principals.js';
import { type RelayStep, ServerRequestRelay } from '../../src/gateway/relay.js';
import type { CapabilityView } from '../../src/interop/manager.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { waitUntil } from '../helpers/wait.js';

const alice: Principal = { subject: 'alice', groups: [], scopes: [], via: 'api-key' };
const target = {
  principal: alice,
  // The approver asks the caller without consulting a view: none is needed here.
  view: {} as CapabilityView,
  server: 'notes',
  supports: () => true,
};
const binding = JSON.stringify(['api-key', 'alice', 'mcp__notes__delete', 'args']);

const relays: ServerRequestRelay[] = [];
afterEach(() => {
  for (const relay of relays.splice(0)) relay.close();
});

async function pair(replicas: Record<string, unknown> = {}) {
  const store = new MemoryStateStore();
  const [a, b] = [new ServerRequestRelay(), new ServerRequestRelay()];
  relays.push(a, b);
  await a.replicate(replicas, store);
  await b.replicate(replicas, store);
  return { a, b };
}

/** A call whose gate asks the caller to approve it, then runs `after` (the tool's own run) once approved. */
function askingCall(relay: ServerRequestRelay, after: (signal: AbortSignal) => Promise<string>) {
  const outcome: { approved?: boolean } = {};
  const work = async (signal: AbortSignal) => {
    outcome.approved = await relay.approver({
      resource: 'mcp:notes:delete',
      action: 'execute',
      server: 'notes',
      tool: 'delete',
      context: { args: { path: 'a.txt' } },
      decision: { effect: 'ask', allowed: false, ruleId: 'confirm', reason: 'deletes ask first' },
    } as Parameters<ServerRequestRelay['approver']>[0]);
    return outcome.approved ? after(signal) : 'not approved';
  };
  return { outcome, work };
}

function round(state: unknown, signal: AbortSignal, key?: string) {
  return {
    state,
    responses: key === undefined ? undefined : { [key]: { action: 'accept', content: { approve: true } } },
    signal,
    binding,
  };
}

function input(step: RelayStep<string>): { key: string; state: string } {
  expect(step.kind, JSON.stringify(step)).toBe('input');
  const { inputRequests, requestState } = step as Extract<RelayStep<string>, { kind: 'input' }>;
  return { key: Object.keys(inputRequests)[0] as string, state: requestState };
}

describe('a round forwarded to the replica that holds its call', () => {
  it('cancels the call on the holder when the caller cancels the round', async () => {
    const { a, b } = await pair();
    let aborted = false;
    const { outcome, work } = askingCall(a, (signal) => {
      // The tool runs until it is cancelled.
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('cancelled');
        }),
      );
    });
    const asked = input(await a.round(target, round(undefined, new AbortController().signal), work));

    const caller = new AbortController();
    const forwarded = b.round(target, round(asked.state, caller.signal, asked.key), () => {
      throw new Error('a later round never starts the call');
    });
    await waitUntil(() => a.routed.served === 1 && outcome.approved === true);
    caller.abort(new Error('the caller went away'));

    const step = await forwarded;
    expect(step.kind).toBe('failed');
    // The holder cancelled the upstream work, and no longer holds the call.
    await waitUntil(() => aborted && a.waiting === 0);
    expect(b.routed).toEqual({ forwarded: 1, served: 0 });
  });

  it('fails with REPLICA_UNAVAILABLE when the holder sends no next step in time, and the holder cancels the call', async () => {
    const { a, b } = await pair({ routeTimeoutMs: 1_000 });
    let aborted = false;
    const { work } = askingCall(a, (signal) => {
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('cancelled');
        }),
      );
    });
    const asked = input(await a.round(target, round(undefined, new AbortController().signal), work));

    const step = await b.round(target, round(asked.state, new AbortController().signal, asked.key), () => {
      throw new Error('a later round never starts the call');
    });

    expect(step.kind).toBe('failed');
    const error = (step as { error: unknown }).error;
    expect(isInterlockError(error, 'REPLICA_UNAVAILABLE'), String(error)).toBe(true);
    expect((error as { operatorHint: string }).operatorHint).toMatch(/routeTimeoutMs \(1000 ms\)/);
    await waitUntil(() => aborted);
  });
});
