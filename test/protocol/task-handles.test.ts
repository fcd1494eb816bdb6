/**
 * The task-handle stage of the inbound chain (issue 13, `acceptTaskResults`) remembers which requests were `tools/call`, so that only
 * an answer to one of them is read for a task handle. Issue 15 made that memory a ring of numbers with a `Set`
 * behind it; these cases hold it to what the `Set` alone did, over the SDK's in-memory transport pair.
 */
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { installInbound } from '../../src/protocol/inbound.js';
import { acceptTaskResults, taskHandleOf } from '../../src/protocol/task-handles.js';

type Message = { jsonrpc: '2.0'; id?: number | string; method?: string; result?: unknown };

/** A hooked client side and the server side of one pair; `answers` collects what reaches the client. */
async function hookedPair() {
  const [client, server] = InMemoryTransport.createLinkedPair();
  installInbound(client, [acceptTaskResults(client)]);
  const answers = new Map<unknown, unknown>();
  client.onmessage = (message) => answers.set((message as Message).id, (message as Message).result);
  await client.start();
  await server.start();
  const request = (id: number | string, method = 'tools/call') =>
    client.send({ jsonrpc: '2.0', id, method, params: { name: 'job' } } as never);
  const answerWithTask = (id: number | string) =>
    server.send({
      jsonrpc: '2.0',
      id,
      result: { resultType: 'task', taskId: `task-${id}`, status: 'working' },
    } as never);
  return { answers, request, answerWithTask };
}

describe('the task hook on a transport', () => {
  it('lifts the task handle answering a tools/call, and only that', async () => {
    const { answers, request, answerWithTask } = await hookedPair();
    await request(1);
    await request(2, 'resources/read');
    await answerWithTask(1);
    await answerWithTask(2);
    expect(taskHandleOf(answers.get(1))).toMatchObject({ taskId: 'task-1', status: 'working' });
    // Not a tools/call: passed on as the server sent it.
    expect(taskHandleOf(answers.get(2))).toBeUndefined();
    expect(answers.get(2)).toEqual({ resultType: 'task', taskId: 'task-2', status: 'working' });
  });

  it('still knows a slow call after hundreds of newer ones took its place, and string ids', async () => {
    const { answers, request, answerWithTask } = await hookedPair();
    await request(5);
    await request('call-a');
    // 600 newer calls, answered as they go: two of them want call 5's slot in the ring.
    for (let id = 6; id < 606; id++) {
      await request(id);
      await answerWithTask(id);
    }
    await answerWithTask(5);
    await answerWithTask('call-a');
    expect(taskHandleOf(answers.get(5))).toMatchObject({ taskId: 'task-5' });
    expect(taskHandleOf(answers.get('call-a'))).toMatchObject({ taskId: 'task-call-a' });
    expect(taskHandleOf(answers.get(605))).toMatchObject({ taskId: 'task-605' });
  });

  it('reads an answer for its call once: a second answer with the same id is passed on as sent', async () => {
    const { answers, request, answerWithTask } = await hookedPair();
    await request(7);
    await answerWithTask(7);
    expect(taskHandleOf(answers.get(7))).toMatchObject({ taskId: 'task-7' });
    await answerWithTask(7);
    expect(taskHandleOf(answers.get(7))).toBeUndefined();
  });
});
