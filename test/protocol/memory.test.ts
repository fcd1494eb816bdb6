/**
 * Issue 43, "memory that stays flat": the table of direct calls in flight keeps its size while calls go by a call
 * that never answers. A million calls over a real child process would take minutes on this machine (each one a
 * pipe write and a read on both sides), so they run in process, over a loopback transport that answers at once
 * (a hand-written peer, not a mock of the client): what is measured is the client's table, which sees the same ids
 * and answers either way. The stdio path of the same table is covered by test/protocol/client-direct.test.ts.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { InterlockClient } from '../../src/protocol/client.js';
import { RING_SLOTS } from '../../src/protocol/direct-calls.js';

type Message = { id?: number | string; method?: string; params?: { name?: string } };

/** A peer in the same process: answers `initialize` and every `tools/call` but those to `never`, which it keeps. */
class LoopbackPeer implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #closed = false;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as Message;
    if (m.id === undefined || m.method === undefined) return;
    if (m.method === 'tools/call' && m.params?.name === 'never') return;
    const result =
      m.method === 'initialize'
        ? {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'loop', version: '1' },
          }
        : { content: [{ type: 'text', text: 'ok' }] };
    // Answered after the send returns, as a real peer's answer arrives.
    queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: m.id as number, result } as JSONRPCMessage));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

const toolDefinition = { name: 'echo', inputSchema: { type: 'object' as const } };

describe('the table of direct calls', () => {
  it('keeps its size while a million calls go by one that never answers', async () => {
    const client = new InterlockClient(
      { name: 'memory-test', version: '1' },
      { capabilities: {}, versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(new LoopbackPeer());
    const hanging = client
      .callTool({ name: 'never', arguments: {} }, { toolDefinition, timeout: 10 * 60_000 })
      .then(
        () => 'answered',
        (err: unknown) => err,
      );
    const total = 1_000_000;
    const inFlight = 64;
    let largest = 0;
    for (let done = 0; done < total; done += inFlight) {
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < inFlight; i++)
        calls.push(client.callTool({ name: 'echo', arguments: {} }, { toolDefinition }));
      await Promise.all(calls);
      largest = Math.max(largest, client.directCallFootprint);
    }
    expect(client.directCalls).toBe(total + 1);
    // The ring and, beside it, the one call that never answered: the same size after a million calls as after one.
    expect(largest).toBeLessThanOrEqual(RING_SLOTS + 1);
    expect(client.directCallFootprint).toBe(RING_SLOTS + 1);
    await client.close();
    const settled = await hanging;
    expect(settled).toBeInstanceOf(SdkError);
    expect((settled as SdkError).code).toBe(SdkErrorCode.ConnectionClosed);
    expect(client.directCallFootprint).toBe(RING_SLOTS);
  }, 240_000);
});
