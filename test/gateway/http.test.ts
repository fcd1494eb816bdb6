// The gateway over Streamable HTTP (issue 17): real downstream clients of both protocol eras (the v2 client
// for 2026-07-28, SDK 1.32 for 2025-11-25), a real upstream fixture over stdio whose request log shows what
// reached it, API keys and JWT access tokens checked as an OAuth resource server.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';
import { rawPost } from '../helpers/raw-call.js';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

const ALICE_KEY = 'alice-key-0123456789abcdef';
const BOB_KEY = 'bob-key-0123456789abcdef01';
/** An API key whose subject equals a JWT subject that has a binding (issue 38: they are different callers). */
const CAROL_KEY = 'carol-key-0123456789abcdef';
const OPS_KEY = 'ops-key-0123456789abcdef012';
const ISSUER = 'https://auth.example.test';

let log: FixtureLog;
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;
let audit: MemoryAuditSink;
let signingKey: SigningKey;
let otherKey: SigningKey;

beforeAll(async () => {
  log = createFixtureLog();
  const project = CapabilitySet.fromPolicy({
    version: 1,
    rules: [
      { effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
      { effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] },
      { effect: 'allow', resource: 'mcp:echo:slow', actions: ['execute'] },
      { effect: 'allow', resource: 'mcp:echo:progress', actions: ['execute'] },
      { effect: 'allow', resource: 'mcp-resource:echo:fixture://greeting', actions: ['read'] },
      { effect: 'allow', resource: 'mcp-resource:echo:fixture://items/*', actions: ['read'] },
      { effect: 'allow', resource: 'mcp-prompt:echo:greet', actions: ['get'] },
    ],
  });
  manager = new MCPClientManager({ capabilities: project });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });

  const keys = await generateKeyPair('ES256');
  signingKey = keys.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' };

  audit = new MemoryAuditSink();
  gateway = new Gateway({
    manager,
    audit,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE_KEY, subject: 'alice', groups: ['dev'] },
          { key: BOB_KEY, subject: 'bob' },
          { key: CAROL_KEY, subject: 'carol' },
          { key: OPS_KEY, subject: 'ops' },
        ],
        jwt: { issuer: ISSUER, jwks: { keys: [jwk as Record<string, unknown>] } },
      },
      principals: [
        {
          match: { apiKey: { groups: ['dev'] } },
          rules: [
            ...['echo', 'add', 'slow', 'progress'].map((tool) => ({
              effect: 'allow' as const,
              resource: `mcp:echo:${tool}`,
              actions: ['execute'],
            })),
            { effect: 'allow', resource: 'mcp-resource:echo:fixture://greeting', actions: ['read'] },
            { effect: 'allow', resource: 'mcp-resource:echo:fixture://items/*', actions: ['read'] },
            { effect: 'allow', resource: 'mcp-prompt:echo:greet', actions: ['get'] },
          ],
        },
        {
          match: { apiKey: { subjects: ['bob'] }, jwt: { subjects: ['carol'] } },
          rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
        },
      ],
      operators: { apiKey: { subjects: ['ops'] } },
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

async function modern(token: string | undefined) {
  // `auto` probes with server/discover: the client speaks 2026-07-28 to a gateway that offers it.
  const client = new ModernClient(
    { name: 'gateway-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new ModernHttp(url, { requestInit: { headers } }));
  expect(client.getProtocolEra()).toBe('modern');
  return client;
}

async function legacy(token: string) {
  const client = new LegacyClient({ name: 'gateway-test-2025', version: '1.0.0' });
  await client.connect(
    new LegacyHttp(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

function jwt(claims: Record<string, unknown>, key: SigningKey = signingKey) {
  return new SignJWT({ scope: 'mcp', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer((claims.iss as string | undefined) ?? ISSUER)
    .setAudience((claims.aud as string | undefined) ?? url.href)
    .setSubject((claims.sub as string | undefined) ?? 'carol')
    .setIssuedAt()
    .setExpirationTime((claims.exp as number | undefined) ?? '5m')
    .sign(key);
}

function listTools(token: string | undefined) {
  return rawPost(url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, token);
}

describe('principals and their tools', () => {
  it('shows each principal only the tools its bindings allow, on both protocol eras', async () => {
    const alice = await modern(ALICE_KEY);
    const bob = await legacy(BOB_KEY);
    try {
      const aliceTools = (await alice.listTools()).tools.map((t) => t.name).sort();
      const bobTools = (await bob.listTools()).tools.map((t) => t.name);
      expect(aliceTools).toEqual([
        'mcp__echo__add',
        'mcp__echo__echo',
        'mcp__echo__progress',
        'mcp__echo__slow',
      ]);
      expect(bobTools).toEqual(['mcp__echo__echo']);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('passes input schemas through untouched', async () => {
    const alice = await modern(ALICE_KEY);
    try {
      const add = (await alice.listTools()).tools.find((t) => t.name === 'mcp__echo__add');
      expect(add?.inputSchema).toEqual(manager.getTool('mcp__echo__add')?.definition.inputSchema);
    } finally {
      await alice.close();
    }
  });

  it('calls an allowed tool upstream and returns its content', async () => {
    const bob = await legacy(BOB_KEY);
    try {
      const result = await bob.callTool({ name: 'mcp__echo__echo', arguments: { text: 'hi from bob' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('hi from bob');
      expect(log.toolCalls('echo').some((c) => (c.args as { text?: string }).text === 'hi from bob')).toBe(
        true,
      );
    } finally {
      await bob.close();
    }
  });

  it("answers a tool outside bob's binding as unknown, the call never reaches the server, and the audit keeps the denial", async () => {
    const bob = await modern(BOB_KEY);
    try {
      const before = log.toolCalls('add').length;
      // Issue 38: a caller cannot tell a tool it may not see from one that does not exist.
      await expect(bob.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } })).rejects.toThrow(
        /Unknown tool: mcp__echo__add/,
      );
      expect(log.toolCalls('add').length).toBe(before);
      const record = audit.records.findLast((r) => r.resource === 'mcp:echo:add');
      expect(record).toMatchObject({ effect: 'default-deny', principal: 'bob', agent: 'gateway' });
      expect(record?.operatorHint).toContain("grant('mcp:echo:add', 'execute')");
    } finally {
      await bob.close();
    }
  });

  it('lets alice call add, and records her as the principal', async () => {
    const alice = await modern(ALICE_KEY);
    try {
      const result = await alice.callTool({ name: 'mcp__echo__add', arguments: { a: 2, b: 3 } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('5');
      const record = audit.records.findLast((r) => r.resource === 'mcp:echo:add');
      expect(record).toMatchObject({ effect: 'allow', principal: 'alice' });
    } finally {
      await alice.close();
    }
  });

  it('forwards progress from the upstream server to the downstream client', async () => {
    const alice = await legacy(ALICE_KEY);
    try {
      const seen: number[] = [];
      await alice.callTool({ name: 'mcp__echo__progress', arguments: { steps: 3 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      expect(seen.length).toBeGreaterThan(0);
    } finally {
      await alice.close();
    }
  });
});

describe('resources and prompts', () => {
  it("lists only the resources a principal may read, and reads them through the principal's rules", async () => {
    const alice = await modern(ALICE_KEY);
    const bob = await legacy(BOB_KEY);
    try {
      expect((await alice.listResources()).resources.map((r) => r.uri)).toEqual(['fixture://greeting']);
      const read = await alice.readResource({ uri: 'fixture://greeting' });
      expect(read.contents[0]?.uri).toBe('fixture://greeting');
      expect((await bob.listResources()).resources).toEqual([]);
      await expect(bob.readResource({ uri: 'fixture://greeting' })).rejects.toThrow(/Unknown resource/);
      const record = audit.records.findLast((r) => r.resource === 'mcp-resource:echo:fixture://greeting');
      expect(record).toMatchObject({ principal: 'bob', effect: 'default-deny' });
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('lists the resource templates a principal could read, and reads their instances through its rules', async () => {
    const alice = await modern(ALICE_KEY);
    const bob = await legacy(BOB_KEY);
    try {
      const templates = (await alice.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toEqual(['fixture://items/{id}']);
      const read = await alice.readResource({ uri: 'fixture://items/7' });
      expect(read.contents[0]).toMatchObject({ uri: 'fixture://items/7', text: 'item 7' });
      expect((await bob.listResourceTemplates()).resourceTemplates).toEqual([]);
      await expect(bob.readResource({ uri: 'fixture://items/7' })).rejects.toThrow(/Unknown resource/);
      await expect(alice.readResource({ uri: 'fixture://nowhere/1' })).rejects.toThrow(/Unknown resource/);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('serves prompts under mcp__{server}__{prompt} names, gated like tools', async () => {
    const alice = await legacy(ALICE_KEY);
    const bob = await modern(BOB_KEY);
    try {
      expect((await alice.listPrompts()).prompts.map((p) => p.name)).toEqual(['mcp__echo__greet']);
      const prompt = await alice.getPrompt({ name: 'mcp__echo__greet', arguments: { name: 'Alice' } });
      expect(JSON.stringify(prompt.messages)).toContain('Hello, Alice!');
      expect((await bob.listPrompts()).prompts).toEqual([]);
      await expect(bob.getPrompt({ name: 'mcp__echo__greet', arguments: { name: 'Bob' } })).rejects.toThrow(
        /Unknown prompt/,
      );
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('principals by how they authenticated (issue 38)', () => {
  it("does not give a JWT whose sub is 'bob' the binding written for the API key 'bob'", async () => {
    const before = log.toolCalls('echo').length;
    const impostor = await modern(await jwt({ sub: 'bob' }));
    try {
      expect((await impostor.listTools()).tools).toEqual([]);
      // Hidden from this caller, so it answers as a tool that does not exist (issue 38).
      await expect(
        impostor.callTool({ name: 'mcp__echo__echo', arguments: { text: 'as bob' } }),
      ).rejects.toThrow(/Unknown tool: mcp__echo__echo/);
      expect(log.toolCalls('echo').length).toBe(before);
    } finally {
      await impostor.close();
    }
  });

  it("does not give the API key 'carol' the binding written for the JWT subject 'carol'", async () => {
    const impostor = await modern(CAROL_KEY);
    try {
      expect((await impostor.listTools()).tools).toEqual([]);
    } finally {
      await impostor.close();
    }
  });

  it("does not give a JWT in group 'dev' the binding written for API keys in group 'dev'", async () => {
    const impostor = await modern(await jwt({ sub: 'erin', groups: ['dev'] }));
    try {
      expect((await impostor.listTools()).tools).toEqual([]);
    } finally {
      await impostor.close();
    }
  });

  it("does not let a JWT whose sub is 'ops' read the metrics the API key 'ops' may", async () => {
    const response = await fetch(new URL('/metrics', url), {
      headers: { authorization: `Bearer ${await jwt({ sub: 'ops' })}` },
    });
    expect(response.status).toBe(403);
  });

  it('refuses at start a name without its method when the gateway has several ways in, naming the fix', () => {
    let error: unknown;
    try {
      new Gateway({
        manager,
        config: {
          auth: {
            apiKeys: [{ key: ALICE_KEY, subject: 'ci-bot' }],
            jwt: { issuer: ISSUER, jwks: { keys: [{ kty: 'EC' }] } },
          },
          principals: [
            {
              match: { subjects: ['ci-bot'] },
              rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
            },
          ],
        },
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issue = (error as ConfigError).issues.find(
      (i) => i.path === 'gateway.principals[0].match.subjects',
    );
    expect(issue?.message).toContain('ambiguous');
    expect(issue?.message).toContain('{ apiKey: { subjects: [...] } }');
  });
});

describe('bindings', () => {
  it('refuses at start a binding that asks for more than the project policy allows', () => {
    expect(
      () =>
        new Gateway({
          manager,
          config: {
            principals: [
              {
                match: { subjects: ['mallory'] },
                rules: [{ effect: 'allow', resource: 'mcp:echo:*', actions: ['execute'] }],
              },
            ],
          },
        }),
    ).toThrow(/more than the parent set has/);
  });
});

describe('credentials', () => {
  it('answers a request without a token with 401 and a WWW-Authenticate challenge naming the metadata', async () => {
    const response = await listTools(undefined);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('resource_metadata=');
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? '';
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: url.href, authorization_servers: [ISSUER] });
  });

  it('refuses an unknown API key with 401', async () => {
    expect((await listTools('not-a-key-0123456789')).status).toBe(401);
  });

  it('accepts a JWT signed by the issuer for this audience; the subject selects the binding', async () => {
    const carol = await modern(await jwt({ sub: 'carol' }));
    try {
      expect((await carol.listTools()).tools.map((t) => t.name)).toEqual(['mcp__echo__echo']);
    } finally {
      await carol.close();
    }
  });

  it('gives a principal that matches no binding no tools at all', async () => {
    const dave = await modern(await jwt({ sub: 'dave' }));
    try {
      expect((await dave.listTools()).tools).toEqual([]);
      await expect(dave.callTool({ name: 'mcp__echo__echo', arguments: { text: 'x' } })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await dave.close();
    }
  });

  it.each([
    ['expired', async () => jwt({ exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['for another audience', async () => jwt({ aud: 'https://other.example/mcp' })],
    ['from another issuer', async () => jwt({ iss: 'https://evil.example' })],
    ['forged (signed with another key)', async () => jwt({}, otherKey)],
  ])('refuses a token %s with 401 invalid_token', async (_what, make) => {
    const response = await listTools(await make());
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('never lets a token reach the upstream server', () => {
    const everything = JSON.stringify(log.entries());
    expect(everything).not.toContain(ALICE_KEY);
    expect(everything).not.toContain(BOB_KEY);
    expect(everything.toLowerCase()).not.toContain('bearer');
  });
});

describe('operations', () => {
  it('answers /healthz and /readyz with the upstream states', async () => {
    const base = new URL('/', url);
    expect((await fetch(new URL('/healthz', base))).status).toBe(200);
    const ready = await fetch(new URL('/readyz', base));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, servers: { echo: 'ready' } });
  });

  it('exports calls, denials and upstream health in the Prometheus format', async () => {
    const text = await (
      await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${OPS_KEY}` } })
    ).text();
    expect(text).toMatch(/interlock_gateway_calls_total\{server="echo",tool="add",outcome="denied"\} [1-9]/);
    expect(text).toMatch(/interlock_gateway_denials_total\{server="echo",tool="add"\} [1-9]/);
    expect(text).toMatch(/interlock_gateway_upstream_up\{server="echo"\} 1/);
    expect(text).toMatch(/interlock_gateway_rejected_requests_total\{status="401"\} [1-9]/);
  });

  it('refuses a Host header it does not serve (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: { host: 'evil.example', 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });
});
