// What a gateway caller names and what it reaches (issue 38), against real upstream servers whose own logs show
// what arrived: a hostile server lists a tool under another server's exposed name (bypass 3), a caller probes
// for tools, prompts and resources it may not see (the hidden-name oracle), and two servers offer one resource
// URI. Real HTTP listener, real API keys, real stdio servers (test/fixtures/servers/routing.mjs).
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef01';

const allow = (resource: string, actions: string[]) => ({ effect: 'allow' as const, resource, actions });

let logs: Record<'fs' | 'evil' | 'docs', FixtureLog>;
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;
let audit: MemoryAuditSink;
const warnings: string[] = [];

beforeAll(async () => {
  logs = { fs: createFixtureLog(), evil: createFixtureLog(), docs: createFixtureLog() };
  const alice = [
    allow('mcp:fs:delete', ['execute']),
    allow('mcp:evil:mcp__fs__delete', ['execute']),
    allow('mcp-resource:fs:shared://doc', ['read']),
    allow('mcp-resource:docs:shared://doc', ['read']),
    allow('mcp-prompt:fs:greet', ['get']),
  ];
  const bob = [allow('mcp:evil:*', ['execute']), allow('mcp-resource:docs:shared://doc', ['read'])];
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        allow('mcp:*:*', ['execute']),
        ...['fs', 'docs', 'evil'].flatMap((s) => [
          allow(`mcp-resource:${s}:shared://doc`, ['read']),
          allow(`mcp-resource:${s}:${s}://own`, ['read']),
        ]),
        allow('mcp-prompt:*:*', ['get']),
      ],
    }),
  });
  // In this order: `fs` connects first, so a first-come choice of `shared://doc` would pick it.
  for (const [name, extra] of [
    ['fs', []],
    ['docs', []],
    ['evil', ['--hostile']],
  ] as const) {
    await manager.connectServer({
      name,
      transport: 'stdio',
      ...nodeFixture('routing', ['--label', name, ...extra]),
      env: logs[name].env,
    });
  }
  audit = new MemoryAuditSink();
  gateway = new Gateway({
    manager,
    audit,
    logger: {
      debug: () => {},
      info: () => {},
      warn: (message) => warnings.push(message),
      error: () => {},
    },
    config: {
      naming: 'tool',
      auth: {
        apiKeys: [
          { key: ALICE, subject: 'alice' },
          { key: BOB, subject: 'bob' },
        ],
      },
      principals: [
        { match: { subjects: ['alice'] }, rules: alice },
        { match: { subjects: ['bob'] }, rules: bob },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await Promise.all(Object.values(logs ?? {}).map((log) => log.close()));
});

async function client(key: string) {
  const c = new ModernClient(
    { name: 'routing-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await c.connect(new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return c;
}

/** Every message a server received for `method`. */
const received = (server: keyof typeof logs, method: string) =>
  logs[server].entries().filter((e) => e.method === method);

/** One raw JSON-RPC request to the gateway, and its answer's text exactly as it came. */
async function raw(key: string, method: string, params: Record<string, unknown>): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...(typeof params.uri === 'string' ? { 'mcp-name': params.uri } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    }),
  });
  return `${response.status} ${await response.text()}`;
}

describe('a tool listed under another tool’s exposed name (naming: tool)', () => {
  it('is listed under its own exposed name, and every listed name reaches the tool it was listed for', async () => {
    const alice = await client(ALICE);
    try {
      const tools = (await alice.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(['delete', 'mcp__evil__mcp__fs__delete']);
      // No listed name is another tool's exposed name.
      for (const tool of tools) {
        const exposed = manager.getTool(tool.name);
        if (exposed !== undefined) expect(exposed.definition.description).toBe(tool.description);
      }
      const weather = await alice.callTool({
        name: 'mcp__evil__mcp__fs__delete',
        arguments: { path: '/etc' },
      });
      expect(JSON.stringify(weather.content)).toContain('evil weather: sunny');
      expect(received('fs', 'tools/call')).toEqual([]);
      expect(warnings.filter((w) => w.includes("'mcp__fs__delete'"))).toHaveLength(1);
    } finally {
      await alice.close();
    }
  });

  it('refuses the exposed name the caller was not listed, and fs never receives a call', async () => {
    const alice = await client(ALICE);
    try {
      // What the hostile server's tool was listed as before: calling it ran fs.delete.
      await expect(alice.callTool({ name: 'mcp__fs__delete', arguments: { path: '/etc' } })).rejects.toThrow(
        /Unknown tool: mcp__fs__delete/,
      );
      expect(received('fs', 'tools/call')).toEqual([]);
      // The name it was listed under runs the real delete, as listed.
      const deleted = await alice.callTool({ name: 'delete', arguments: { path: '/tmp/x' } });
      expect(JSON.stringify(deleted.content)).toContain('fs deleted /tmp/x');
      expect(received('fs', 'tools/call').map((e) => e.tool)).toEqual(['delete']);
    } finally {
      await alice.close();
    }
  });
});

describe('a name the caller may not see', () => {
  const same = async (
    method: string,
    hidden: Record<string, unknown>,
    missing: Record<string, unknown>,
    key: 'name' | 'uri',
  ) => {
    const a = await raw(BOB, method, hidden);
    const b = await raw(BOB, method, missing);
    expect(a.replaceAll(hidden[key] as string, '<name>')).toBe(
      b.replaceAll(missing[key] as string, '<name>'),
    );
    return a;
  };

  it('answers a hidden tool exactly as a tool that does not exist, and audits the denial', async () => {
    const before = audit.records.length;
    const answer = await same(
      'tools/call',
      { name: 'mcp__fs__secret', arguments: {} },
      { name: 'mcp__fs__nothing', arguments: {} },
      'name',
    );
    expect(answer).toContain('Unknown tool');
    expect(answer).not.toMatch(/CAPABILITY_DENIED|grant|mcp:fs/);
    expect(logs.fs.toolCalls('secret')).toEqual([]);
    const denied = audit.records.slice(before).filter((r) => r.resource === 'mcp:fs:secret');
    expect(denied.length).toBeGreaterThan(0);
    expect(denied.every((r) => r.allowed === false && r.principal === 'bob')).toBe(true);
  });

  it('answers a hidden prompt exactly as a prompt that does not exist, and audits the denial', async () => {
    const before = audit.records.length;
    const answer = await same('prompts/get', { name: 'mcp__fs__greet' }, { name: 'mcp__fs__nope' }, 'name');
    expect(answer).toContain('Unknown prompt');
    expect(received('fs', 'prompts/get')).toEqual([]);
    expect(audit.records.slice(before)).toContainEqual(
      expect.objectContaining({ resource: 'mcp-prompt:fs:greet', allowed: false, principal: 'bob' }),
    );
  });

  it('answers a hidden resource exactly as a resource that does not exist, and audits the denial', async () => {
    const before = audit.records.length;
    const answer = await same('resources/read', { uri: 'fs://own' }, { uri: 'nope://own' }, 'uri');
    expect(answer).toContain('Unknown resource');
    expect(received('fs', 'resources/read')).toEqual([]);
    expect(audit.records.slice(before)).toContainEqual(
      expect.objectContaining({ resource: 'mcp-resource:fs:fs://own', allowed: false, principal: 'bob' }),
    );
  });
});

describe('one resource URI offered by two servers', () => {
  it('is refused to a caller who may read it from both, and neither server is asked', async () => {
    const alice = await client(ALICE);
    try {
      expect((await alice.listResources()).resources.map((r) => r.uri)).not.toContain('shared://doc');
      await expect(alice.readResource({ uri: 'shared://doc' })).rejects.toThrow(
        /Ambiguous resource: shared:\/\/doc .*docs, fs|Ambiguous resource: shared:\/\/doc .*fs, docs/,
      );
      expect(received('fs', 'resources/read')).toEqual([]);
      expect(received('docs', 'resources/read')).toEqual([]);
    } finally {
      await alice.close();
    }
  });

  it('is served by the one server a caller may read it from, even when another connected first', async () => {
    const bob = await client(BOB);
    try {
      expect((await bob.listResources()).resources.map((r) => r.uri)).toEqual(['shared://doc']);
      const read = await bob.readResource({ uri: 'shared://doc' });
      expect(JSON.stringify(read.contents)).toContain('doc from docs');
      expect(received('fs', 'resources/read')).toEqual([]);
    } finally {
      await bob.close();
    }
  });
});
