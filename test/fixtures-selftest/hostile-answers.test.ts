/**
 * The scripted hostile server of the differential suite (hostile-answers.mjs) sends exactly what a case's frames
 * say, byte for byte on stdio, and speaks the era it is told to: if it tidied an answer up, the SDK and Interlock
 * would agree on something no hostile server sent.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFixture } from '../helpers/fixtures.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** The fixture on raw stdio: `ask` writes one request line and resolves to the next `count` lines it writes. */
function raw(era: string) {
  const { command, args } = nodeFixture('hostile-answers', ['--era', era]);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  closers.push(() => child.kill());
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    waiting?.();
  });
  return async (request: Record<string, unknown>, count = 1): Promise<string[]> => {
    lines.length = 0;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...request })}\n`);
    while (lines.length < count) await new Promise<void>((resolve) => (waiting = resolve));
    return lines.slice(0, count);
  };
}

const call = (id: number, frames: unknown[]) => ({
  id,
  method: 'tools/call',
  params: { name: 'replay', arguments: { frames } },
});

describe('hostile-answers fixture', () => {
  it('speaks 2026-07-28 through server/discover and refuses initialize, and the reverse for 2025-11-25', async () => {
    const modern = raw('2026-07-28');
    const [discover] = await modern({ id: 1, method: 'server/discover', params: {} });
    expect(JSON.parse(discover as string).result.supportedVersions).toEqual(['2026-07-28']);
    const [init] = await modern({ id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    expect(JSON.parse(init as string).error.code).toBe(-32601);

    const legacy = raw('2025-11-25');
    const [refused] = await legacy({ id: 1, method: 'server/discover', params: {} });
    expect(JSON.parse(refused as string).error.code).toBe(-32601);
    const [accepted] = await legacy({
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25' },
    });
    expect(JSON.parse(accepted as string).result.protocolVersion).toBe('2025-11-25');
  });

  it('replays the frames of a call as they are written: ids, notifications, whole messages and raw text', async () => {
    const ask = raw('2025-11-25');
    const lines = await ask(
      call(7, [
        { result: { content: 'not a list' }, id: 'string' },
        { notify: 'notifications/message', params: { level: 'info', data: 'x' } },
        { message: { error: { code: 1, message: 'both' }, result: {} } },
        { raw: '{"jsonrpc":"2.0","id":"$ID","result":{"isError":"yes"}}\n' },
        { error: { code: 'E1' }, id: 'null' },
      ]),
      5,
    );
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { jsonrpc: '2.0', id: '7', result: { content: 'not a list' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
      { jsonrpc: '2.0', id: 7, error: { code: 1, message: 'both' }, result: {} },
      { jsonrpc: '2.0', id: 7, result: { isError: 'yes' } },
      { jsonrpc: '2.0', id: null, error: { code: 'E1' } },
    ]);
  });

  it.each(['2025-11-25', '2026-07-28'])('is negotiated at %s by the SDK client', async (era) => {
    const client = new Client(
      { name: 'selftest', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StdioClientTransport(nodeFixture('hostile-answers', ['--era', era])));
    closers.push(() => void client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['replay', 'typed']);
  });
});
