// The gateway lists a tool only when some request could be allowed (issue 40), under a Cedar policy too: Cedar's
// partial evaluation with the arguments unknown decides the listing; the call is still decided in full. Real HTTP
// listener on port 0, real API key, the echo fixture over stdio (its log shows what arrived).
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';

const ALICE = 'alice-key-0123456789abcdef';

const CEDAR = `
@id("alice-echo") permit (principal == Interlock::Caller::"alice", action, resource in Interlock::Server::"echo")
when { resource has name && (resource.name == "echo" || resource.name == "add" || resource.name == "pid") };

@id("no-pid") forbid (principal, action, resource) when { resource.path == "mcp:echo:pid" };

@id("small-sums") forbid (principal, action, resource)
when {
  resource.path == "mcp:echo:add" &&
  context.args.hasTag("a") && context.args.getTag("a") has long && context.args.getTag("a").long > 100
};
`;

let log: FixtureLog;
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;

beforeAll(async () => {
  log = createFixtureLog();
  manager = new MCPClientManager({ capabilities: CapabilitySet.fromCedar(CEDAR) });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
  gateway = new Gateway({
    manager,
    logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    config: {
      naming: 'tool',
      auth: { apiKeys: [{ key: ALICE, subject: 'alice' }] },
      principals: [
        {
          match: { subjects: ['alice'] },
          rules: [{ effect: 'allow', resource: 'mcp:echo:*', actions: ['execute'] }],
        },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await log?.close();
});

describe('gateway listing under a Cedar policy', () => {
  it('lists what Cedar could allow, hides what a forbid or no permit rules out, and still decides each call', async () => {
    const alice = new ModernClient(
      { name: 'cedar-listing', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await alice.connect(
      new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }),
    );
    try {
      const names = (await alice.listTools()).tools.map((t) => t.name).sort();
      // add: allowed for some arguments (a residual); pid: always forbidden; get_env: no permit.
      expect(names).toEqual(['add', 'echo']);
      const small = await alice.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
      expect(small.isError).not.toBe(true);
      const big = await alice.callTool({ name: 'add', arguments: { a: 1000, b: 2 } });
      expect(big.isError).toBe(true);
      const sums = log.entries().filter((e) => e.method === 'tools/call' && e.tool === 'add');
      expect(sums.map((e) => e.args)).toEqual([{ a: 1, b: 2 }]);
    } finally {
      await alice.close();
    }
  });
});
