/**
 * Issue 43: every SDK member Interlock relies on without the SDK publishing it (src/protocol/sdk-internals.ts) is
 * pinned here by what it DOES on a real client and server pair, not only by its existence. A failure names the
 * member and what to re-check after an SDK upgrade.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { SdkErrorCode } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { InterlockClient } from '../../src/protocol/client.js';
import {
  hasPrivateMembers,
  listenForProgress,
  SDK_MEMBERS,
  stopListeningForProgress,
  takeRequestId,
  wireCodecOf,
} from '../../src/protocol/sdk-internals.js';
import { ProcessStdioTransport } from '../../src/protocol/stdio-transport.js';
import { type FixtureName, nodeFixture } from '../helpers/fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

const RECHECK =
  'after an SDK upgrade, re-check this member in @modelcontextprotocol/client and sdk-internals.ts';

/** A connected client over a real fixture process, and the ids of the requests it sent. */
async function connected(
  server: FixtureName,
  options: ConstructorParameters<typeof InterlockClient>[1] = {},
) {
  const { command, args } = nodeFixture(server);
  const transport = new ProcessStdioTransport({ command, args, env: process.env as Record<string, string> });
  const sent: unknown[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => {
    sent.push((message as { id?: unknown }).id);
    return send(message);
  };
  const client = new InterlockClient(
    { name: 'sdk-internals-test', version: '1' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' }, ...options },
  );
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport, sent };
}

describe.each([
  { era: '2025-11-25', server: 'echo' as const },
  { era: '2026-07-28', server: 'modern' as const },
])('the SDK members relied on, on a $era server', ({ era, server }) => {
  it('_requestMessageId: the id taken is the one the next request would have had', async () => {
    const { client, sent } = await connected(server);
    expect(
      hasPrivateMembers(client),
      `_requestMessageId/_progressHandlers are gone or changed shape: ${RECHECK}`,
    ).toBe(true);
    const taken = takeRequestId(client);
    await client.listTools();
    expect(sent.at(-1), `_requestMessageId no longer numbers the SDK's requests: ${RECHECK}`).toBe(taken + 1);
  });

  it('_progressHandlers: a handler put there gets the progress for its token, and one taken out does not', async () => {
    const { client, transport } = await connected(server);
    const seen: unknown[] = [];
    const errors: string[] = [];
    client.onerror = (error) => errors.push(error.message);
    const token = 4242;
    listenForProgress(client, token, (progress) => seen.push(progress));
    const progress = (n: number) =>
      transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: token, progress: n, total: 2 },
      });
    progress(1);
    await expect
      .poll(() => seen, {
        message: `_progressHandlers is no longer where progress is dispatched: ${RECHECK}`,
      })
      .toEqual([{ progress: 1, total: 2 }]);
    stopListeningForProgress(client, token);
    progress(2);
    await expect
      .poll(() => errors.some((m) => m.includes('unknown token')), {
        message: `_progressHandlers entries are no longer removed by delete: ${RECHECK}`,
      })
      .toBe(true);
    expect(seen).toHaveLength(1);
  });

  it("_wireCodec: the negotiated era's codec, which decodes and validates results", async () => {
    const { client } = await connected(server);
    const codec = wireCodecOf(client);
    expect(codec?.era, `_wireCodec() no longer gives the negotiated era's codec: ${RECHECK}`).toBe(era);
    expect(
      codec?.validateResult('tools/call', { content: [] }).ok,
      `WireCodec.validateResult changed: ${RECHECK}`,
    ).toBe(true);
    const bad = codec?.validateResult('tools/call', { content: 'not a list' });
    expect(bad?.ok, `WireCodec.validateResult accepts what it should refuse: ${RECHECK}`).toBe(false);
    expect(typeof codec?.decodeResult, `WireCodec.decodeResult is gone: ${RECHECK}`).toBe('function');
    if (era === '2026-07-28') {
      const decoded = codec?.decodeResult?.('tools/call', {
        resultType: 'input_required',
        requestState: 'state-1',
      });
      expect(decoded?.kind, `WireCodec.decodeResult no longer reads input_required: ${RECHECK}`).toBe(
        'input_required',
      );
    }
  });

  it('_outboundMetaEnvelope and _onclose: the hooks the client overrides are still called', async () => {
    const { client, transport } = await connected(server);
    const hooks = client as unknown as Record<string, unknown>;
    for (const member of SDK_MEMBERS.filter((m) => !m.startsWith('_request') && m !== '_progressHandlers')) {
      expect(typeof hooks[member], `${member} is gone: ${RECHECK}`).toBe('function');
    }
    // _onclose: a direct call in flight settles with the SDK's error when the connection closes.
    const call = client
      .callTool(
        { name: 'slow', arguments: { ms: 60_000 } },
        { toolDefinition: { name: 'slow', inputSchema: { type: 'object' } } },
      )
      .catch((err: unknown) => err);
    await transport.close();
    const settled = (await call) as { code?: unknown };
    expect(settled.code, `_onclose no longer runs when the transport closes: ${RECHECK}`).toBe(
      SdkErrorCode.ConnectionClosed,
    );
  });
});
