// A binding's maxCalls counts per principal (issue 38): in one process the set derived for a binding was shared by
// every principal matching it, so two callers shared one count, while a fleet's store counts per principal. Two
// API keys in the same group call through a real gateway to the echo fixture, whose log shows what arrived.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';

const ALICE_KEY = 'alice-key-0123456789abcdef';
const BOB_KEY = 'bob-key-0123456789abcdef01';

let log: FixtureLog;
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;

beforeAll(async () => {
  log = createFixtureLog();
  const project = CapabilitySet.fromPolicy({
    version: 1,
    rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
  });
  manager = new MCPClientManager({ capabilities: project });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
  gateway = new Gateway({
    manager,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE_KEY, subject: 'alice', groups: ['team'] },
          { key: BOB_KEY, subject: 'bob', groups: ['team'] },
        ],
      },
      principals: [
        {
          match: { groups: ['team'] },
          rules: [
            { id: 'two-each', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'], maxCalls: 2 },
          ],
        },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await log?.close();
});

async function client(key: string) {
  const c = new Client({ name: 'binding-quota-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return c;
}

describe('a binding with maxCalls', () => {
  it('gives each principal matching it its own quota, and the server sees exactly those calls', async () => {
    const alice = await client(ALICE_KEY);
    const bob = await client(BOB_KEY);
    try {
      // A spent quota hides the tool from its caller, so the call answers as unknown (issue 38).
      const echo = (c: Client, text: string) =>
        c.callTool({ name: 'mcp__echo__echo', arguments: { text } }).then(
          (result) => result.isError !== true,
          (error: Error) => (/Unknown tool/.test(error.message) ? false : Promise.reject(error)),
        );
      expect([await echo(alice, 'a1'), await echo(alice, 'a2')]).toEqual([true, true]);
      // Bob's quota is his own: alice spending hers does not spend it.
      expect([await echo(bob, 'b1'), await echo(bob, 'b2')]).toEqual([true, true]);
      expect(await echo(alice, 'a3')).toBe(false);
      expect(await echo(bob, 'b3')).toBe(false);
      expect(log.toolCalls('echo').map((c) => (c.args as { text: string }).text)).toEqual([
        'a1',
        'a2',
        'b1',
        'b2',
      ]);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});
