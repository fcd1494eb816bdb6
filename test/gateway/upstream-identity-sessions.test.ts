// Issue 41, part 1: a 2025-era upstream binds each Mcp-Session-Id to the subject that opened it (the fixture
// refuses another subject's request on it with 403), so a caller's calls go on a session of its own, opened with
// its exchanged token: one per caller, bounded (the least recently used idle one is closed to make room), closed
// when idle. The gateway's own session (discovery) stays the gateway's.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerAuth } from '../../src/auth/server-auth.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { ServerRequestRelay } from '../../src/gateway/relay.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { IdentityAuthorizationServer } from '../helpers/identity-as.js';
import { type IdentityUpstream, startIdentityUpstream } from '../helpers/identity-upstream.js';
import { waitUntil } from '../helpers/wait.js';

const SECRET = 'gateway-secret-0123456789';
const SERVERS = ['legacy', 'brief', 'tight'];

let as: IdentityAuthorizationServer;
let legacy: IdentityUpstream;
let brief: IdentityUpstream;
let tight: IdentityUpstream;
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;
const clients: Client[] = [];
const callerTokens = new Set<string>();

const allow = (server: string) => ({
  effect: 'allow' as const,
  resource: `mcp:${server}:whoami`,
  actions: ['execute'],
});

const holdRule = { effect: 'allow' as const, resource: 'mcp:tight:hold', actions: ['execute'] };
const askRules = [
  { effect: 'allow' as const, resource: 'mcp:legacy:ask_name', actions: ['execute'] },
  { effect: 'allow' as const, resource: 'mcp:legacy:elicitation', actions: ['request'] },
];

beforeAll(async () => {
  as = await IdentityAuthorizationServer.start({ gateway: SECRET });
  legacy = await startIdentityUpstream('legacy', { jwksUrl: as.jwksUrl, issuer: as.issuer });
  brief = await startIdentityUpstream('legacy', { jwksUrl: as.jwksUrl, issuer: as.issuer });
  tight = await startIdentityUpstream('legacy', { jwksUrl: as.jwksUrl, issuer: as.issuer });
  const exchange = {
    type: 'token_exchange' as const,
    tokenEndpoint: as.tokenEndpoint,
    clientId: 'gateway',
    clientSecret: SECRET,
  };
  const relay = new ServerRequestRelay({ inputTimeoutMs: 30_000 });
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [...SERVERS.map(allow), holdRule, ...askRules],
    }),
    serverAuth: createServerAuth(),
    ...relay.handlers,
  });
  await manager.connectServer({
    name: 'legacy',
    transport: 'http',
    url: legacy.url,
    auth: { ...exchange, maxConnections: 2 },
  });
  await manager.connectServer({
    name: 'brief',
    transport: 'http',
    url: brief.url,
    auth: { ...exchange, idleTimeoutMs: 50 },
  });
  await manager.connectServer({
    name: 'tight',
    transport: 'http',
    url: tight.url,
    auth: { ...exchange, maxConnections: 1 },
  });
  gateway = new Gateway({
    manager,
    relay,
    config: {
      auth: { jwt: { issuer: as.issuer, jwksUrl: as.jwksUrl } },
      principals: [
        {
          match: { jwt: { subjects: ['alice', 'bob', 'carol'] } },
          rules: [...SERVERS.map(allow), holdRule, ...askRules],
        },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gateway?.close();
  await manager?.close();
  await legacy?.close();
  await brief?.close();
  tight?.release();
  await tight?.close();
  await as?.close();
});

/** A 2026-07-28 caller; with `name`, one that can answer a form elicitation (with that name). */
async function caller(subject: string, name?: string): Promise<Client> {
  const token = await as.callerToken(subject, { audience: url.href, scope: 'mcp' });
  callerTokens.add(token);
  const client = new Client(
    { name: 'sessions-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: 'auto' },
      ...(name === undefined ? {} : { capabilities: { elicitation: { form: {} } } }),
    },
  );
  if (name !== undefined)
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name } }));
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function whoami(client: Client, server: string): Promise<{ sub?: string; act?: { sub: string } }> {
  const result = await client.callTool({ name: `mcp__${server}__whoami`, arguments: {} });
  const text = (result.content as { text: string }[])[0]?.text ?? '';
  expect(result.isError, text).not.toBe(true);
  return JSON.parse(text);
}

describe('per-caller sessions on a 2025-era upstream', () => {
  it("each caller's calls go on a session it opened, with its own exchanged token; one session per caller", async () => {
    // The gateway's own session, opened at connect (discovery runs as the gateway).
    expect(legacy.sessions.opened).toBe(1);
    const alice = await caller('alice');
    const bob = await caller('bob');
    expect(await whoami(alice, 'legacy')).toMatchObject({ sub: 'alice', act: { sub: 'gateway' } });
    expect(await whoami(bob, 'legacy')).toMatchObject({ sub: 'bob', act: { sub: 'gateway' } });
    expect(await whoami(alice, 'legacy')).toMatchObject({ sub: 'alice' });
    expect(legacy.sessions.opened).toBe(3);
    expect(legacy.sessions.open()).toBe(3);
  });

  it('is bounded: a new caller beyond maxConnections closes the least recently used idle session', async () => {
    const carol = await caller('carol');
    expect(await whoami(carol, 'legacy')).toMatchObject({ sub: 'carol' });
    expect(legacy.sessions.opened).toBe(4);
    // alice's session (the least recently used) is closed: the gateway's and two callers' remain.
    await waitUntil(() => legacy.sessions.open() === 3, { message: 'no idle session was closed' });
  });

  it("closes a caller's session once it has been idle for idleTimeoutMs", async () => {
    const alice = await caller('alice');
    expect(await whoami(alice, 'brief')).toMatchObject({ sub: 'alice' });
    expect(brief.sessions.opened).toBe(2);
    await waitUntil(() => brief.sessions.open() === 1, { message: "the idle caller's session stayed open" });
    // The next call opens a new one.
    expect(await whoami(alice, 'brief')).toMatchObject({ sub: 'alice' });
    expect(brief.sessions.opened).toBe(3);
  });

  it('refuses a new caller with OVERLOADED when every session is busy, rather than evicting a busy one', async () => {
    const alice = await caller('alice');
    const bob = await caller('bob');
    const holding = alice.callTool({ name: 'mcp__tight__hold', arguments: {} });
    await waitUntil(() => tight.held() === 1, { message: "alice's call never reached the upstream" });
    const refused = await bob.callTool({ name: 'mcp__tight__whoami', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]?.text).toMatch(/^OVERLOADED: /);
    tight.release();
    const held = await holding;
    expect(JSON.parse((held.content as { text: string }[])[0]?.text ?? '')).toMatchObject({ sub: 'alice' });
    // alice's session is idle now: bob's call closes it and opens his own.
    expect(await whoami(bob, 'tight')).toMatchObject({ sub: 'bob' });
  });

  it("sends a caller's cancellation on the caller's session, where its call runs", async () => {
    tight.release();
    const erin = await caller('alice');
    const abort = new AbortController();
    const holding = erin.callTool({ name: 'mcp__tight__hold', arguments: {} }, { signal: abort.signal });
    await waitUntil(() => tight.held() >= 1, { message: "alice's call never reached the upstream" });
    abort.abort();
    await expect(holding).rejects.toThrow();
    await waitUntil(() => tight.cancelled.length === 1, {
      message: 'the upstream never saw the cancellation',
    });
    expect(tight.cancelled).toEqual(['alice']);
    tight.release();
  });

  it("never sends a caller's own token to a 2025-era upstream either", () => {
    const sent = [...legacy.authorizations, ...brief.authorizations, ...tight.authorizations];
    expect(sent.length).toBeGreaterThan(0);
    for (const header of sent) expect(callerTokens.has(header.replace(/^Bearer /, ''))).toBe(false);
    expect(callerTokens.size).toBeGreaterThan(0);
  });

  it("relays a question the server asks on a caller's session, and sends the caller's answer back on it", async () => {
    const dana = await caller('alice', 'Dana');
    const result = await dana.callTool({ name: 'mcp__legacy__ask_name', arguments: {} });
    const text = (result.content as { text: string }[])[0]?.text ?? '';
    expect(result.isError, text).not.toBe(true);
    // The server asked on alice's own session (opened declaring what the gateway's session declared, so it may
    // ask), and the answer reached it there: a session answers only the subject that opened it.
    expect(JSON.parse(text)).toEqual({ sub: 'alice', name: 'Dana' });
  });

  it("closes every caller's session with the server's connection, not only the gateway's own", async () => {
    const bob = await caller('bob');
    expect(await whoami(bob, 'legacy')).toMatchObject({ sub: 'bob' });
    expect(legacy.sessions.owners()).toContain('bob');
    await manager.disconnectServer('legacy');
    // Each caller's session is closed (HTTP DELETE) with the connection; the gateway's own session is the SDK
    // client's, which leaves it for the server to expire.
    await waitUntil(() => legacy.sessions.owners().every((owner) => owner === 'gateway'), {
      message: `callers' sessions left open upstream: ${legacy.sessions.owners().join(', ')}`,
    });
    expect(legacy.sessions.owners().length).toBeLessThanOrEqual(1);
  });
});
