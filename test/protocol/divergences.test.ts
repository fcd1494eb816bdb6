/**
 * Issue 43, the three divergences from the SDK a review found, each replayed against a hand-written hostile server
 * (test/fixtures/servers/divergent-answers.mjs) through the SDK's own client and stdio transport and through
 * Interlock's client and transport: an answer whose id is the request's id as a string, a malformed or unusual
 * server info in a result's `_meta`, and a message over the SDK's stdio limit (10 MiB).
 */
import { Client, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerConfig } from '../../src/config/servers.js';
import { ErrorCode } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { InterlockClient } from '../../src/protocol/client.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  MessageTooLargeError,
  ProcessStdioTransport,
} from '../../src/protocol/stdio-transport.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

const identity = { name: 'divergences-test', version: '1.0.0' };
// The fixture is a 2025-era server that ignores `server/discover`: no probe to wait out.
const options = { capabilities: {}, versionNegotiation: { mode: 'legacy' as const } };
const toolDefinition = { name: 'any', inputSchema: { type: 'object' as const } };

async function stockClient(): Promise<Client> {
  const client = new Client(identity, options);
  await client.connect(new StdioClientTransport(nodeFixture('divergent-answers')));
  closers.push(() => client.close());
  return client;
}

async function ourClient(env: Record<string, string> = {}, maxMessageBytes?: number) {
  const { command, args } = nodeFixture('divergent-answers');
  const transport = new ProcessStdioTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
  const client = new InterlockClient(identity, options);
  await client.connect(transport, { inbound: { taskHandles: true, maxInputRequestsPerRound: 16 } });
  closers.push(() => client.close());
  return { client, transport };
}

/** How a call settled, in the terms a caller sees: the value, or the error's class, message, code and data. */
async function outcome(call: Promise<unknown>) {
  try {
    return { value: await call };
  } catch (err) {
    const e = err as Error & { code?: unknown; data?: unknown };
    return { error: { type: e.constructor.name, message: e.message, code: e.code, data: e.data } };
  }
}

describe('answers the SDK client and Interlock read alike', () => {
  it.each(['string_id', 'string_id_error', 'bad_server_info', 'odd_server_info'])(
    '%s: the direct path settles the call with what the SDK settles it with',
    async (name) => {
      const stock = await stockClient();
      const { client: ours } = await ourClient();
      const call = { name, arguments: {} };
      const expected = await outcome(stock.callTool(call, { toolDefinition, timeout: 20_000 }));
      const got = await outcome(ours.callTool(call, { toolDefinition, timeout: 20_000 }));
      expect(got).toEqual(expected);
      // The direct path answered it (not the SDK's request funnel, and not a timeout).
      expect(ours.directCalls).toBe(1);
      expect(got.error?.code).not.toBe(-32001);
    },
  );

  it('settles an answer whose id is the string of the request id, rather than timing out', async () => {
    const { client } = await ourClient();
    const result = await client.callTool(
      { name: 'string_id', arguments: {} },
      { toolDefinition, timeout: 20_000 },
    );
    expect(result).toEqual({ content: [{ type: 'text', text: 'answered under a string id' }] });
  });

  it('drops a malformed server info from a result, as the SDK does', async () => {
    const { client } = await ourClient();
    const result = (await client.callTool(
      { name: 'bad_server_info', arguments: {} },
      { toolDefinition },
    )) as {
      _meta?: Record<string, unknown>;
    };
    expect(result._meta?.['io.modelcontextprotocol/serverInfo']).toBeUndefined();
  });
});

describe('the stdio message limit', () => {
  it("is the SDK's 10 MiB, in the transport and in a server config's default", () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(STDIO_DEFAULT_MAX_BUFFER_SIZE);
    const config = parseServerConfig({ name: 's', transport: 'stdio', command: 'node' });
    expect(config.transport === 'stdio' && config.maxMessageBytes).toBe(STDIO_DEFAULT_MAX_BUFFER_SIZE);
  });

  it('closes the connection over a larger message with a coded error that names the limit and the option', async () => {
    const { client, transport } = await ourClient();
    const closed = new Promise<void>((resolve) => {
      client.onclose = resolve;
    });
    const call = outcome(client.callTool({ name: 'big', arguments: {} }, { toolDefinition }));
    await closed;
    expect((await call).error?.code).toBe('CONNECTION_CLOSED');
    const error = transport.tooLarge;
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(error?.code).toBe(ErrorCode.CONNECTION_LOST);
    expect(error?.limit).toBe(STDIO_DEFAULT_MAX_BUFFER_SIZE);
    expect(error?.message).toContain(`${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes (maxMessageBytes)`);
    expect(error?.operatorHint).toContain('raise maxMessageBytes');
  });

  it('carries a message under a raised limit', async () => {
    const { client } = await ourClient({}, 16 * 1024 * 1024);
    const result = (await client.callTool({ name: 'big', arguments: {} }, { toolDefinition })) as {
      content: { text: string }[];
    };
    expect(result.content[0]?.text.length).toBe(11 * 1024 * 1024);
  });

  it("fails the manager's server with that error, not with the exit it caused", async () => {
    await using manager = new MCPClientManager({
      capabilities: CapabilitySet.allowAll({ onWarning: () => {} }),
    });
    await manager.connectServer({
      name: 'hostile',
      transport: 'stdio',
      ...nodeFixture('divergent-answers'),
      maxMessageBytes: 1024 * 1024,
      env: { HOSTILE_BIG_BYTES: String(2 * 1024 * 1024) },
      reconnect: { enabled: false },
    });
    const failed = new Promise<{ error: Error }>((resolve) => manager.once('failed', resolve));
    const call = manager.executeTool('mcp__hostile__big', {}).catch((err: unknown) => err);
    const { error } = await failed;
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(error.message).toBe(
      `The connection to server 'hostile' was closed: it wrote a message larger than the limit of ${1024 * 1024} bytes (maxMessageBytes)`,
    );
    expect(error.message).not.toMatch(/exited with code/);
    expect(String(await call)).toContain("Connection to server 'hostile' was lost during the call");
  });
});
