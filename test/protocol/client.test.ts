/**
 * Issue 15, the lean hot path: `InterlockClient` builds the SDK's result check once per era and method instead of
 * on every request. It must be the SDK's client in every other respect: the same results, the same refusal of a
 * malformed result, the same error for a method the era does not define, in both protocol eras. Each case runs
 * the stock SDK `Client` and `InterlockClient` side by side against the same real server process.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { InterlockClient } from '../../src/protocol/client.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { type FixtureName, nodeFixture } from '../helpers/fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function connect<C extends Client>(make: () => C, server: FixtureName): Promise<C> {
  const client = make();
  await client.connect(new StdioClientTransport(nodeFixture(server)));
  closers.push(() => client.close());
  return client;
}

const options = { capabilities: {}, versionNegotiation: { mode: 'auto' as const } };
const identity = { name: 'client-test', version: '1.0.0' };

const eras = [
  { era: 'modern', server: 'modern', call: { name: 'echo', arguments: { text: 'hi' } } },
  { era: 'legacy', server: 'faulty', call: { name: 'echo', arguments: { text: 'hi' } } },
] as const;

describe.each(eras)('InterlockClient on a $era server', ({ era, server, call }) => {
  it('answers exactly as the SDK client does, with the result check built once', async () => {
    const stock = await connect(() => new Client(identity, options), server);
    const ours = await connect(() => new InterlockClient(identity, options), server);
    expect(ours.getProtocolEra()).toBe(era);
    expect(ours.resultChecksReused).toBe(false);

    const expected = await stock.callTool(call);
    for (let i = 0; i < 3; i++) expect(await ours.callTool(call)).toEqual(expected);
    expect(await ours.listTools()).toEqual(await stock.listTools());
    // The proof the SDK's path was taken over: if a new SDK drops the member it relies on, this turns false.
    expect(ours.resultChecksReused).toBe(true);
  });

  it('refuses a method that is not a spec method without a schema, with the SDK error', async () => {
    const stock = await connect(() => new Client(identity, options), server);
    const ours = await connect(() => new InterlockClient(identity, options), server);
    const request = { method: 'x-vendor/thing', params: {} } as never;
    const expected = (() => {
      try {
        stock.request(request);
      } catch (err) {
        return err;
      }
    })();
    expect(expected).toBeInstanceOf(TypeError);
    expect(() => ours.request(request)).toThrow((expected as Error).message);
  });
});

describe('InterlockClient and a malformed result', () => {
  it('rejects a result whose content is not a list, with the error the SDK client gives', async () => {
    const stock = await connect(() => new Client(identity, options), 'faulty');
    const ours = await connect(() => new InterlockClient(identity, options), 'faulty');
    const expected = await stock.callTool({ name: 'malformed', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(expected).toBeInstanceOf(Error);
    const got = await ours.callTool({ name: 'malformed', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(got?.constructor).toBe(expected?.constructor);
    expect(got?.message).toBe(expected?.message);
    expect(ours.resultChecksReused).toBe(true);
  });

  it('reaches a caller of the manager as a failed call that names the server, and the next call works', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:faulty:*', 'execute');
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({ name: 'faulty', transport: 'stdio', ...nodeFixture('faulty') });
    // The connection's object is the internal ServerConnection: every connection runs on InterlockClient.
    const connection = manager.getConnection('faulty') as unknown as { client: unknown };
    expect(connection.client).toBeInstanceOf(InterlockClient);
    await expect(manager.executeTool('mcp__faulty__malformed', {})).rejects.toMatchObject({
      code: 'SERVER_ERROR',
      message: expect.stringMatching(/Server 'faulty' gave an unusable answer .*INVALID_RESULT/),
    });
    await expect(manager.executeTool('mcp__faulty__echo', { text: 'still here' })).resolves.toBe(
      'still here',
    );
  });
});
