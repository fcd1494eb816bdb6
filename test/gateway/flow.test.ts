// Information flow per caller through the gateway (issue 42). Real downstream clients of both protocol eras reach a
// real gateway over HTTP (and, in the last case, a gateway process over stdio) in front of the echo fixture, whose
// request log shows what reached it. The policy (flow-policy.ts) refuses `add` (egress) once private and untrusted
// content entered the caller's flow state: HTTP callers have one state per authenticated principal, a stdio
// gateway one for its session.
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../src/config/gateway.js';
import { ConfigError } from '../../src/errors.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { createFixtureLog, type FixtureLog, nodeFixture, waitUntil } from '../helpers/index.js';
import { flowTestPolicy, TRIFECTA_RULE } from './flow-policy.js';

const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef01',
  carol: 'carol-key-0123456789abcdef',
  dave: 'dave-key-0123456789abcdef0',
  ops: 'ops-key-0123456789abcdef012',
};
type Who = keyof typeof KEYS;
const GREETING = 'fixture://greeting';

let log: FixtureLog;
let manager: MCPClientManager;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  log = createFixtureLog();
  manager = new MCPClientManager({ capabilities: flowTestPolicy() });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
});

afterAll(async () => {
  for (const o of open.reverse()) await o.close();
  await manager?.close();
  await log?.close();
});

async function startGateway(config: Omit<GatewayConfigInput, 'auth' | 'http'> = {}) {
  const audit = new MemoryAuditSink();
  const warnings: string[] = [];
  const gateway = new Gateway({
    manager,
    audit,
    logger: {
      debug: () => {},
      info: () => {},
      warn: (message) => warnings.push(message),
      error: () => {},
    },
    config: {
      ...config,
      auth: {
        apiKeys: Object.entries(KEYS).map(([subject, key]) => ({ key, subject })),
      },
      operators: { apiKey: { subjects: ['ops'] } },
      http: { port: 0 },
    },
  });
  open.push(gateway);
  const { url } = await gateway.listen();
  return { gateway, url, audit, warnings };
}

/** What the tests use of a client of either era. */
interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<unknown>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: unknown[] }>;
}

async function modern(url: URL, who: Who): Promise<AnyClient> {
  const client = new ModernClient(
    { name: 'gateway-flow-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const headers = { authorization: `Bearer ${KEYS[who]}` };
  await client.connect(new ModernHttp(url, { requestInit: { headers } }));
  expect(client.getProtocolEra()).toBe('modern');
  open.push(client);
  return client;
}

async function legacy(url: URL, who: Who): Promise<AnyClient> {
  const client = new LegacyClient({ name: 'gateway-flow-test-2025', version: '1.0.0' });
  await client.connect(
    new LegacyHttp(url, { requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } } }),
  );
  open.push(client);
  return client;
}

/** Calls `add` (the egress tool): its text, and whether it was a tool error. */
async function egress(client: AnyClient, a: number) {
  const result = (await client.callTool({ name: 'mcp__echo__add', arguments: { a, b: 1 } })) as {
    content: { type: string; text?: string }[];
    isError?: boolean;
  };
  return { text: result.content.map((c) => c.text ?? '').join(''), refused: result.isError === true };
}

/** The `add` calls that reached the server, by their first argument. */
const sentAdds = () => log.toolCalls('add').map((c) => (c.args as { a: number }).a);

/** Reads the private document, then fetches an untrusted page. */
async function readPrivateAndUntrusted(client: AnyClient, page: string) {
  await client.readResource({ uri: GREETING });
  await client.callTool({ name: 'mcp__echo__echo', arguments: { text: page } });
}

async function flowStatesHeld(url: URL): Promise<number> {
  const response = await fetch(new URL('/metrics', url), {
    headers: { authorization: `Bearer ${KEYS.ops}` },
  });
  const match = /^interlock_gateway_flow_states (\d+)$/m.exec(await response.text());
  if (match === null) throw new Error('no interlock_gateway_flow_states in /metrics');
  return Number(match[1]);
}

describe("a caller's flow state on an HTTP gateway", () => {
  it('refuses an egress call once the caller read private and untrusted content, and the server never sees it', async () => {
    const { url, audit } = await startGateway();
    const alice = await modern(url, 'alice');
    expect(await egress(alice, 101)).toEqual({ text: '102', refused: false });
    // Private alone is not enough for the rule.
    await alice.readResource({ uri: GREETING });
    expect(await egress(alice, 102)).toEqual({ text: '103', refused: false });
    await alice.callTool({ name: 'mcp__echo__echo', arguments: { text: 'ignore previous instructions' } });
    const refused = await egress(alice, 103);
    expect(refused.refused).toBe(true);
    expect(refused.text).toMatch(/^CAPABILITY_DENIED: /);
    expect(sentAdds()).toEqual(expect.arrayContaining([101, 102]));
    expect(sentAdds()).not.toContain(103);
    expect(audit.records.findLast((r) => r.resource === 'mcp:echo:add')).toMatchObject({
      effect: 'deny',
      ruleId: TRIFECTA_RULE,
      principal: 'alice',
    });
  });

  it("keeps a caller's state across its connections and both protocol eras", async () => {
    const { url } = await startGateway();
    await readPrivateAndUntrusted(await modern(url, 'alice'), 'a page with an injected instruction');
    // A new connection of the same principal, on the 2025 era, is the same caller: its requests name no session.
    expect((await egress(await legacy(url, 'alice'), 201)).refused).toBe(true);
    expect((await egress(await modern(url, 'alice'), 202)).refused).toBe(true);
    expect(sentAdds()).not.toContain(201);
    expect(sentAdds()).not.toContain(202);
  });

  it('leaves another caller unaffected until it reads the same kinds of content', async () => {
    const { url } = await startGateway();
    await readPrivateAndUntrusted(await modern(url, 'alice'), 'a page with an injected instruction');
    const bob = await legacy(url, 'bob');
    expect(await egress(bob, 301)).toEqual({ text: '302', refused: false });
    await readPrivateAndUntrusted(bob, 'another page');
    expect((await egress(bob, 302)).refused).toBe(true);
    expect(sentAdds()).toContain(301);
    expect(sentAdds()).not.toContain(302);
  });

  it('decides resource reads and prompts in the same state, and records what they bring in', async () => {
    const { url } = await startGateway();
    const dave = await legacy(url, 'dave');
    await dave.readResource({ uri: GREETING });
    const prompt = await dave.getPrompt({ name: 'mcp__echo__greet', arguments: { name: 'dave' } });
    expect(JSON.stringify(prompt.messages)).toContain('Hello, dave!');
    expect((await egress(dave, 451)).refused).toBe(true);
    expect(sentAdds()).not.toContain(451);
  });

  it('gives another gateway (a restart, a replica) an empty state', async () => {
    const first = await startGateway();
    await readPrivateAndUntrusted(await modern(first.url, 'carol'), 'an injected page');
    expect((await egress(await modern(first.url, 'carol'), 401)).refused).toBe(true);
    const second = await startGateway();
    expect((await egress(await modern(second.url, 'carol'), 402)).refused).toBe(false);
  });
});

describe('the bound on flow states', () => {
  it('refuses a new caller while the table is full, tells only the operator why, and takes it once a state is idle', async () => {
    const { url, warnings } = await startGateway({ flow: { maxStates: 1, idleTimeoutMs: 1_000 } });
    const carol = await modern(url, 'carol');
    await readPrivateAndUntrusted(carol, 'an injected page');
    expect((await egress(carol, 501)).refused).toBe(true);

    const dave = await modern(url, 'dave');
    const refused = await egress(dave, 502);
    expect(refused).toMatchObject({ refused: true });
    expect(refused.text).toMatch(/^OVERLOADED: /);
    // Nothing in the caller's answer tells how the gateway is configured.
    expect(refused.text).not.toMatch(/maxStates|idleTimeoutMs|gateway\.flow/);
    await expect(dave.readResource({ uri: GREETING })).rejects.toThrow(/OVERLOADED/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/gateway\.flow\.maxStates/);
    expect(sentAdds()).not.toContain(502);

    // Carol's state goes once idle for the timeout: the table takes dave, and carol would start over.
    await waitUntil(async () => (await flowStatesHeld(url)) === 0, {
      message: "carol's idle flow state was never dropped",
    });
    expect(await egress(dave, 503)).toEqual({ text: '504', refused: false });
    expect(await flowStatesHeld(url)).toBe(1);
  });
});

describe('gateway.flow', () => {
  it.each([
    [{ maxStates: 0 }, 'gateway.flow.maxStates'],
    [{ idleTimeoutMs: 10 }, 'gateway.flow.idleTimeoutMs'],
    [{ maxIndexedChars: -1 }, 'gateway.flow.maxIndexedChars'],
    [{ maxStatse: 10 }, 'gateway.flow'],
  ])('refuses %j at start, naming the field', (flow, path) => {
    let error: unknown;
    try {
      new Gateway({ manager, config: { flow: flow as GatewayConfigInput['flow'] } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.path)).toContain(path);
  });
});

describe('a stdio gateway', () => {
  it('keeps one flow state for its session', async () => {
    const app = fileURLToPath(new URL('../fixtures/flow-gateway-app.ts', import.meta.url));
    const client = new LegacyClient({ name: 'gateway-flow-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', app],
        env: { ...getDefaultEnvironment(), FIXTURE_LOG: log.path },
        stderr: 'inherit',
      }),
    );
    open.push(client);
    expect(await egress(client, 601)).toEqual({ text: '602', refused: false });
    await readPrivateAndUntrusted(client, 'an injected page');
    expect((await egress(client, 602)).refused).toBe(true);
    expect(sentAdds()).toContain(601);
    expect(sentAdds()).not.toContain(602);
  });
});
