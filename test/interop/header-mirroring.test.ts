/**
 * SEP-2243 header mirroring over 2026-07-28 Streamable HTTP, through the manager against the SDK v2 server
 * fixture: an argument a tool declares with `x-mcp-header` travels in its `Mcp-Param-*` header as well, from the
 * definition in the catalog. When the server's definition changed without a word, the server answers
 * HEADER_MISMATCH; the catalog learns the tools again under `onToolChange`, and the call is re-sent once only when
 * the new definition is accepted.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startModernHttp } from '../helpers/http-fixtures.js';
import { recordSpans } from '../helpers/otel.js';

/** A manager on a fresh modern fixture over HTTP, with every tool of server `m` allowed. */
async function connect(onToolChange: 'block' | 'accept', tracer?: ReturnType<typeof recordSpans>['tracer']) {
  const server = await startModernHttp();
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:m:*', 'execute');
  const manager = new MCPClientManager({ capabilities, ...(tracer !== undefined && { tracer }) });
  const attempts: number[] = [];
  manager.on('tool_call_started', (event) => {
    if (event.tool === 'relabel') attempts.push(event.attempt);
  });
  try {
    await manager.connectServer({ name: 'm', transport: 'http', url: server.mcpUrl, onToolChange });
  } catch (err) {
    await server.close();
    throw err;
  }
  return {
    manager,
    server,
    attempts,
    async [Symbol.asyncDispose]() {
      await manager.close();
      await server.close();
    },
  };
}

describe('SEP-2243 header mirroring over 2026-07-28 HTTP', () => {
  it('sends a declared argument in its Mcp-Param header, which the server requires', async () => {
    await using connected = await connect('block');
    const { manager, server } = connected;
    expect(manager.getConnection('m')?.protocolVersion).toBe('2026-07-28');
    expect(manager.getTool('mcp__m__regional')?.inputSchema).toMatchObject({
      properties: { region: { 'x-mcp-header': 'Region' } },
    });
    await expect(manager.executeTool('mcp__m__regional', { region: 'eu', text: 'hi' })).resolves.toBe(
      'eu: hi',
    );

    // The witness: a client given a definition without the declaration sends no header, and is refused.
    const witness = new Client(
      { name: 'witness', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await witness.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)));
    try {
      const refused = await witness
        .callTool(
          { name: 'regional', arguments: { region: 'eu', text: 'hi' } },
          { toolDefinition: { name: 'regional', inputSchema: { type: 'object' } } },
        )
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32020);
    } finally {
      await witness.close();
    }
  });

  it('learns a definition that changed unannounced and re-sends the call once, when onToolChange accepts it', async () => {
    await using spans = recordSpans();
    await using connected = await connect('accept', spans.tracer);
    const { manager, attempts } = connected;
    await expect(manager.executeTool('mcp__m__relabel', { region: 'eu', text: 'hi' })).resolves.toBe(
      'eu: hi',
    );
    expect(manager.getTool('mcp__m__relabel')?.inputSchema).not.toHaveProperty([
      'properties',
      'region',
      'x-mcp-header',
    ]);

    await manager.executeTool('mcp__m__declare_header', {});
    await expect(manager.executeTool('mcp__m__relabel', { region: 'us', text: 'hi' })).resolves.toBe(
      'us: hi',
    );

    // First call: one attempt. Second: refused with HEADER_MISMATCH, the catalog relisted, then sent again.
    expect(attempts).toEqual([1, 1, 2]);
    expect(manager.getTool('mcp__m__relabel')?.inputSchema).toMatchObject({
      properties: { region: { 'x-mcp-header': 'Region' } },
    });
    const call = spans
      .spans()
      .filter((s) => s.name === 'tools/call relabel')
      .at(-1);
    expect(call?.events.map((e) => [e.name, e.attributes?.reason])).toContainEqual([
      'interlock.call.resend',
      'definition_changed',
    ]);
    // Later calls mirror from the learned definition at once.
    await expect(manager.executeTool('mcp__m__relabel', { region: 'ap', text: 'hi' })).resolves.toBe(
      'ap: hi',
    );
    expect(attempts).toEqual([1, 1, 2, 1]);
  });

  it('blocks the call instead, by default, until the changed definition is approved', async () => {
    await using connected = await connect('block');
    const { manager, attempts } = connected;
    await expect(manager.executeTool('mcp__m__relabel', { region: 'eu', text: 'hi' })).resolves.toBe(
      'eu: hi',
    );
    await manager.executeTool('mcp__m__declare_header', {});

    const err = await manager
      .executeTool('mcp__m__relabel', { region: 'us', text: 'hi' })
      .catch((e: unknown) => e);
    expect(isInterlockError(err) && err.code).toBe('TOOL_DEFINITION_CHANGED');
    // Never sent again: the only attempts are the first call's and the refused one.
    expect(attempts).toEqual([1, 1]);
    const again = await manager
      .executeTool('mcp__m__relabel', { region: 'us', text: 'hi' })
      .catch((e: unknown) => e);
    expect(isInterlockError(again) && again.code).toBe('TOOL_DEFINITION_CHANGED');
    expect(attempts).toEqual([1, 1]);
  });
});
