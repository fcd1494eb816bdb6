/**
 * Issue 15, the lean hot path: messages sent to a stdio server in one tick leave in one write, not one system
 * call each. The server here is a real child process that reports how many reads it took to get each batch.
 */
import { Socket } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { ProcessStdioTransport } from '../../src/interop/stdio-transport.js';

// Counts stdin reads and lines; after every `expect` lines, reports both as a JSON-RPC notification.
const COUNTER = `
let reads = 0, lines = 0, expected = Number(process.argv[1]);
process.stdin.on('data', (chunk) => {
  reads += 1;
  lines += chunk.toString().split('\\n').length - 1;
  if (lines >= expected) {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'counted', params: { reads, lines } }) + '\\n');
    reads = 0;
    lines = 0;
  }
});
`;

async function counter(batch: number) {
  const transport = new ProcessStdioTransport({
    command: process.execPath,
    args: ['-e', COUNTER, String(batch)],
    env: { PATH: process.env.PATH ?? '' },
  });
  const reports: { reads: number; lines: number }[] = [];
  const waiters: (() => void)[] = [];
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'counted') {
      reports.push(message.params as { reads: number; lines: number });
      waiters.shift()?.();
    }
  };
  await transport.start();
  const next = () =>
    new Promise<{ reads: number; lines: number }>((resolve) => {
      if (reports.length > 0) resolve(reports.shift() as { reads: number; lines: number });
      else waiters.push(() => resolve(reports.shift() as { reads: number; lines: number }));
    });
  return Object.assign(transport, { next, [Symbol.asyncDispose]: () => transport.close() });
}

const note = (i: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/note', params: { i } });

describe('ProcessStdioTransport writes', () => {
  it('sends the messages of one tick in one write', async () => {
    await using transport = await counter(16);
    // The child's stdin is a net.Socket over a pipe: one _write per message uncorked, one _writev for a batch.
    const single = vi.spyOn(Socket.prototype as unknown as Record<'_write', () => void>, '_write');
    const vector = vi.spyOn(Socket.prototype as unknown as Record<'_writev', () => void>, '_writev');
    try {
      await Promise.all(Array.from({ length: 16 }, (_, i) => transport.send(note(i))));
      // Written when the tick ends: wait for the turn after it.
      await new Promise((resolve) => setImmediate(resolve));
      expect({ writes: single.mock.calls.length, writevs: vector.mock.calls.length }).toEqual({
        writes: 0,
        writevs: 1,
      });
    } finally {
      single.mockRestore();
      vector.mockRestore();
    }
    // And the server got all sixteen, whole.
    expect(await transport.next()).toEqual({ reads: 1, lines: 16 });
  });

  it('still sends a lone message, and keeps batches of later ticks apart and whole', async () => {
    await using transport = await counter(1);
    for (let i = 0; i < 3; i++) {
      await transport.send(note(i));
      expect(await transport.next()).toEqual({ reads: 1, lines: 1 });
    }
  });
});
