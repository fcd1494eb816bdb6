/**
 * Issue 43, one declared inbound chain: every message a transport delivers passes the task-handle stage, the
 * input-round bounds and the direct-answer routing once each, in that order, then the SDK's dispatch; and nothing
 * outside src/protocol assigns a transport's `onmessage` or touches the SDK members sdk-internals.ts names.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { InterlockClient } from '../../src/protocol/client.js';
import { type InboundStage, installInbound, SDK_DISPATCH } from '../../src/protocol/inbound.js';
import { SDK_MEMBERS } from '../../src/protocol/sdk-internals.js';
import { ProcessStdioTransport } from '../../src/protocol/stdio-transport.js';
import { nodeFixture } from '../helpers/fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

/** A stage body that notes its name and passes the message on. */
function step(seen: string[], name: string): InboundStage['handle'] {
  return (message, extra, next) => {
    seen.push(name);
    next(message, extra);
  };
}

const toolDefinition = { name: 'echo', inputSchema: { type: 'object' as const } };

describe('the inbound chain of a connection', () => {
  it('runs each stage once per message, in its declared order, before the SDK dispatch', async () => {
    const { command, args } = nodeFixture('echo');
    const transport = new ProcessStdioTransport({
      command,
      args,
      env: process.env as Record<string, string>,
    });
    const client = new InterlockClient(
      { name: 'inbound-test', version: '1' },
      { capabilities: {}, versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(transport, { inbound: { taskHandles: true, maxInputRequestsPerRound: 16 } });
    closers.push(() => client.close());
    const calls = 20;
    for (let i = 0; i < calls; i++) {
      await client.callTool({ name: 'echo', arguments: { text: `n${i}` } }, { toolDefinition });
    }
    await client.listTools();
    const chain = client.inbound;
    expect(chain?.stages).toEqual([
      'result-type',
      'task-handles',
      'input-bounds',
      'direct-answers',
      SDK_DISPATCH,
    ]);
    // The initialize answer, twenty call answers and the tools/list answer, at least.
    const received = chain?.received ?? 0;
    expect(received).toBeGreaterThanOrEqual(calls + 2);
    // Once per message: the old setter-based hook re-wrapped each handler assigned, and ran two or three times.
    expect(chain?.runs('result-type')).toBe(received);
    expect(chain?.runs('task-handles')).toBe(received);
    expect(chain?.runs('input-bounds')).toBe(received);
    expect(chain?.runs('direct-answers')).toBe(received);
    // The direct calls' answers are settled by their stage; every other message reaches the SDK.
    expect(client.directCalls).toBe(calls);
    expect(chain?.runs(SDK_DISPATCH)).toBe(received - calls);
  });

  it('takes the handler the SDK assigns as its last step, however often it is assigned', async () => {
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    const seen: string[] = [];
    const chain = installInbound(ours, [
      { name: 'first', handle: step(seen, 'first') },
      { name: 'second', handle: step(seen, 'second') },
    ]);
    // Before anything is assigned the chain is not handed out, so a wrapper can never call into itself.
    expect(ours.onmessage).toBeUndefined();
    ours.onmessage = () => seen.push('replaced');
    ours.onmessage = () => seen.push('dispatch');
    await ours.start();
    await theirs.start();
    await theirs.send({ jsonrpc: '2.0', method: 'notifications/ping' } as never);
    expect(seen).toEqual(['first', 'second', 'dispatch']);
    expect(chain.received).toBe(1);
    expect(() => installInbound(ours, [])).toThrow(/already installed/);
  });
});

/** The interop files that open connections over the protocol area (issue 43 split them under 600 lines). */
const CONNECTING = ['interop/connection.ts', 'interop/open-client.ts'];
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('the protocol area', () => {
  const files = sourceFiles(SRC).map((path) => ({
    path: relative(SRC, path).replaceAll('\\', '/'),
    text: readFileSync(path, 'utf8'),
  }));
  const outside = files.filter((file) => !file.path.startsWith('protocol/'));

  it('is the only place that assigns a transport onmessage', () => {
    const offenders = outside
      .filter((file) => /\.onmessage\s*=[^=]|defineProperty\([^)]*'onmessage'/.test(file.text))
      .map((file) => file.path);
    expect(offenders).toEqual([]);
  });

  it('is the only place that names an SDK member sdk-internals.ts lists', () => {
    const offenders = outside.flatMap((file) =>
      SDK_MEMBERS.filter((member) => new RegExp(`\\b${member}\\b`).test(file.text)).map(
        (member) => `${file.path}: ${member}`,
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('casts to SDK private members in sdk-internals.ts alone', () => {
    const offenders = files
      .filter((file) => file.path.startsWith('protocol/') && file.path !== 'protocol/sdk-internals.ts')
      .filter((file) => /_requestMessageId|_progressHandlers|as unknown as \{ _/.test(file.text))
      .map((file) => file.path);
    expect(offenders).toEqual([]);
  });

  it('imports nothing of interop, and neither it nor the connection files that use it is over 600 lines', () => {
    const protocol = files.filter((file) => file.path.startsWith('protocol/'));
    expect(protocol.filter((file) => /from '\.\.\/interop\//.test(file.text)).map((f) => f.path)).toEqual([]);
    const long = files
      .filter((file) => file.path.startsWith('protocol/') || CONNECTING.includes(file.path))
      .filter((file) => file.text.split('\n').length > 600)
      .map((file) => file.path);
    expect(long).toEqual([]);
  });
});
