// Issue 41, part 1: the caller's identity reaches upstream servers, safely. A real loopback authorization server
// (test/helpers/identity-as.ts) signs the callers' tokens and exchanges them (RFC 8693); a real gateway verifies
// the callers against its JWKS; a real 2026-07-28 upstream over Streamable HTTP verifies every bearer it gets and
// answers `whoami` with the claims. The upstream sees a token for its own audience naming the caller, with the
// gateway as actor and the scopes the caller's rules allow; the caller's own token never arrives.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerAuth } from '../../src/auth/server-auth.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { IdentityAuthorizationServer } from '../helpers/identity-as.js';
import { type IdentityUpstream, startIdentityUpstream } from '../helpers/identity-upstream.js';

const GATEWAY_SECRET = 'gateway-secret-0123456789';
const API_KEY = 'dave-key-0123456789abcdef0';
const JAG_SECRET = 'jag-secret-0123456789abc';
const SERVERS = ['modern', 'fresh', 'byissuer', 'jag'];

let as: IdentityAuthorizationServer;
let upstream: IdentityUpstream;
let manager: MCPClientManager;
let gateway: Gateway;
let audit: MemoryAuditSink;
let url: URL;
const tokens = new Map<string, string>();
const clients: Client[] = [];

const allow = (server: string, tool: string) => ({
  effect: 'allow' as const,
  resource: `mcp:${server}:${tool}`,
  actions: ['execute'],
});

beforeAll(async () => {
  as = await IdentityAuthorizationServer.start({ gateway: GATEWAY_SECRET, 'jag-client': JAG_SECRET });
  upstream = await startIdentityUpstream('modern', { jwksUrl: as.jwksUrl, issuer: as.issuer });
  const exchange = {
    type: 'token_exchange' as const,
    tokenEndpoint: as.tokenEndpoint,
    clientId: 'gateway',
    clientSecret: GATEWAY_SECRET,
    scopes: { whoami: ['profile:read'], 'write_*': ['notes:write'] },
  };
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: SERVERS.flatMap((s) => [allow(s, 'whoami'), allow(s, 'write_note')]),
    }),
    serverAuth: createServerAuth(),
  });
  await manager.connectServer({ name: 'modern', transport: 'http', url: upstream.url, auth: exchange });
  // The same upstream again, with a skew longer than a token lives: every call exchanges anew.
  await manager.connectServer({
    name: 'fresh',
    transport: 'http',
    url: upstream.url,
    auth: { ...exchange, expirySkewMs: 2 * 3600 * 1000 },
  });
  // The token endpoint discovered from the issuer's metadata (RFC 8414).
  const { tokenEndpoint: _, ...byIssuer } = exchange;
  await manager.connectServer({
    name: 'byissuer',
    transport: 'http',
    url: upstream.url,
    auth: { ...byIssuer, issuer: as.issuer },
  });
  // Cross-app access per caller: the identity provider (here the same server) issues an ID-JAG for the upstream's
  // authorization server, which redeems it with the JWT bearer grant for its own client.
  await manager.connectServer({
    name: 'jag',
    transport: 'http',
    url: upstream.url,
    auth: {
      ...exchange,
      idJag: {
        issuer: as.issuer,
        tokenEndpoint: as.tokenEndpoint,
        clientId: 'jag-client',
        clientSecret: JAG_SECRET,
      },
    },
  });
  audit = new MemoryAuditSink();
  gateway = new Gateway({
    manager,
    audit,
    config: {
      auth: { jwt: { issuer: as.issuer, jwksUrl: as.jwksUrl }, apiKeys: [{ key: API_KEY, subject: 'dave' }] },
      principals: [
        {
          match: { jwt: { subjects: ['alice', 'mallory'] }, apiKey: { subjects: ['dave'] } },
          rules: SERVERS.flatMap((s) => [allow(s, 'whoami'), allow(s, 'write_note')]),
        },
        {
          match: { jwt: { subjects: ['bob'] } },
          rules: SERVERS.map((s) => allow(s, 'whoami')),
        },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
  for (const who of ['alice', 'bob', 'mallory']) {
    tokens.set(
      who,
      await as.callerToken(who, { audience: url.href, scope: 'mcp profile:read notes:write admin' }),
    );
  }
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gateway?.close();
  await manager?.close();
  await upstream?.close();
  await as?.close();
});

async function caller(credential: string): Promise<Client> {
  const client = new Client(
    { name: 'identity-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${credential}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function whoami(client: Client, server = 'modern', tool = 'whoami') {
  const result = await client.callTool({ name: `mcp__${server}__${tool}`, arguments: {} });
  const first = (result.content as { type: string; text: string }[])[0];
  return { isError: result.isError === true, text: first?.text ?? '' };
}

describe('token exchange for upstream servers', () => {
  it('the upstream sees a token for its audience naming the caller, the gateway as actor, scopes narrowed', async () => {
    const alice = await caller(tokens.get('alice') as string);
    const bob = await caller(tokens.get('bob') as string);
    const seenByAlice = JSON.parse((await whoami(alice)).text);
    expect(seenByAlice).toMatchObject({ sub: 'alice', aud: upstream.url, act: { sub: 'gateway' } });
    // alice's rules allow whoami and write_note: their scopes, and not `admin`, which her own token carries.
    expect(seenByAlice.scope).toBe('notes:write profile:read');
    const seenByBob = JSON.parse((await whoami(bob)).text);
    expect(seenByBob).toMatchObject({ sub: 'bob', aud: upstream.url, act: { sub: 'gateway' } });
    expect(seenByBob.scope).toBe('profile:read');
  });

  it("never forwards the caller's own token: every request upstream carries a token minted for it", async () => {
    const alice = await caller(tokens.get('alice') as string);
    await whoami(alice);
    const callerTokens = [...tokens.values()];
    expect(upstream.authorizations.length).toBeGreaterThan(0);
    for (const header of upstream.authorizations) {
      const token = header.replace(/^Bearer /, '');
      expect(callerTokens).not.toContain(token);
      expect(decodeJwt(token).aud).toBe(upstream.url);
    }
  });

  it('discovery runs as the gateway itself (a client-credentials token), not as a caller', () => {
    const first = upstream.authorizations[0]?.replace(/^Bearer /, '') ?? '';
    expect(decodeJwt(first)).toMatchObject({ sub: 'gateway', aud: upstream.url });
    expect(decodeJwt(first).act).toBeUndefined();
  });

  it('caches per caller and audience: alice and bob get different tokens, each exchanged once', async () => {
    const alice = await caller(tokens.get('alice') as string);
    const bob = await caller(tokens.get('bob') as string);
    const before = { alice: as.issued('exchange', 'alice'), bob: as.issued('exchange', 'bob') };
    await whoami(alice);
    const aliceFirst = upstream.authorizations.at(-1);
    await whoami(alice);
    expect(upstream.authorizations.at(-1)).toBe(aliceFirst);
    const b1 = JSON.parse((await whoami(bob)).text);
    expect(b1.sub).toBe('bob');
    expect(upstream.authorizations.at(-1)).not.toBe(aliceFirst);
    expect(as.issued('exchange', 'alice')).toBe(before.alice);
    expect(as.issued('exchange', 'bob')).toBe(before.bob);
    expect(before.alice).toBeGreaterThanOrEqual(1);
  });

  it('concurrent calls of one caller share one exchange', async () => {
    const alice = await caller(tokens.get('alice') as string);
    await whoami(alice, 'byissuer');
    const after = as.issued('exchange', 'alice');
    // bob has no token for this server yet: five calls at once make one exchange.
    const bob = await caller(tokens.get('bob') as string);
    const before = as.issued('exchange', 'bob');
    const answers = await Promise.all(Array.from({ length: 5 }, () => whoami(bob, 'byissuer')));
    expect(answers.every((a) => JSON.parse(a.text).sub === 'bob')).toBe(true);
    expect(as.issued('exchange', 'bob')).toBe(before + 1);
    expect(as.issued('exchange', 'alice')).toBe(after);
  });

  it('an expired token is exchanged again', async () => {
    const alice = await caller(tokens.get('alice') as string);
    const before = as.issued('exchange', 'alice');
    await whoami(alice, 'fresh');
    await whoami(alice, 'fresh');
    expect(as.issued('exchange', 'alice')).toBe(before + 2);
  });
});

describe('cross-app access (ID-JAG) per caller', () => {
  it("each caller's token becomes an ID-JAG, redeemed for a token of the upstream's own client, cached", async () => {
    const alice = await caller(tokens.get('alice') as string);
    const bob = await caller(tokens.get('bob') as string);
    const seen = JSON.parse((await whoami(alice, 'jag')).text);
    expect(seen).toMatchObject({ sub: 'alice', aud: upstream.url, client_id: 'jag-client' });
    expect(seen.scope).toBe('notes:write profile:read');
    expect(seen.act).toBeUndefined();
    expect(JSON.parse((await whoami(bob, 'jag')).text)).toMatchObject({ sub: 'bob', scope: 'profile:read' });
    await whoami(alice, 'jag');
    expect(as.issued('id-jag', 'alice')).toBe(1);
    expect(as.issued('jwt-bearer', 'alice')).toBe(1);
    expect(as.issued('id-jag', 'bob')).toBe(1);
  });
});

describe('refusals fail closed', () => {
  it('an exchange the AS refuses is a coded tool error, audited, and the upstream is never called', async () => {
    as.refuse('mallory');
    const mallory = await caller(tokens.get('mallory') as string);
    const calls = upstream.calls.length;
    const answer = await whoami(mallory);
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^UPSTREAM_IDENTITY_REFUSED: .*access_denied/);
    // The AS's error_description quotes the token: none of it is passed on.
    expect(answer.text).not.toContain(tokens.get('mallory'));
    expect(answer.text).not.toContain('may not be exchanged');
    expect(upstream.calls.length).toBe(calls);
    const refusal = audit.records.find((r) => r.principal === 'mallory' && !r.allowed);
    expect(refusal).toMatchObject({
      server: 'modern',
      tool: 'whoami',
      effect: 'deny',
      reason: 'UPSTREAM_IDENTITY_REFUSED: exchange_refused',
    });
  });

  it('a caller without a token to exchange (an API key) is refused, audited, and not sent upstream', async () => {
    const dave = await caller(API_KEY);
    const calls = upstream.calls.length;
    const answer = await whoami(dave);
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/^UPSTREAM_IDENTITY_REFUSED: /);
    expect(upstream.calls.length).toBe(calls);
    expect(audit.records.find((r) => r.principal === 'dave' && !r.allowed)).toMatchObject({
      server: 'modern',
      reason: 'UPSTREAM_IDENTITY_REFUSED: no_caller_identity',
    });
  });

  it('an in-process call (no caller identity) fails closed with a coded error that says what to configure', async () => {
    const calls = upstream.calls.length;
    const err = await manager.callTool('mcp__modern__whoami', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_IDENTITY_REFUSED', reason: 'no_caller_identity' });
    expect((err as { operatorHint: string }).operatorHint).toContain('gateway.auth.jwt');
    expect(upstream.calls.length).toBe(calls);
  });

  it("is refused over the legacy HTTP+SSE transport, whose one session would carry every caller's calls", async () => {
    // A server whose Streamable HTTP endpoint refuses the connection: `auto` would fall back to HTTP+SSE.
    const seen: string[] = [];
    const legacyOnly = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(405).end();
    });
    await new Promise<void>((resolve) => legacyOnly.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(legacyOnly.address() as AddressInfo).port}/mcp`;
    const auth = {
      type: 'token_exchange' as const,
      tokenEndpoint: as.tokenEndpoint,
      clientId: 'gateway',
      clientSecret: GATEWAY_SECRET,
    };
    try {
      for (const transport of ['sse', 'auto'] as const) {
        const before = seen.length;
        const err = await manager
          .connectServer({
            name: `legacy-${transport}`,
            transport,
            url: at,
            auth,
            reconnect: { enabled: false },
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        // The connect fails with the configuration's refusal as its cause, in its own words.
        expect(err, transport).toMatchObject({
          code: 'CONNECTION_FAILED',
          cause: { code: 'INVALID_CONFIG' },
        });
        expect((err as Error).message).toContain("auth.type 'token_exchange', which needs Streamable HTTP");
        // Nothing was opened over SSE: `sse` sends nothing, `auto` only the Streamable HTTP attempt it refused.
        expect(
          seen.slice(before).every((line) => !line.startsWith('GET')),
          transport,
        ).toBe(true);
      }
    } finally {
      await new Promise((resolve) => legacyOnly.close(resolve));
    }
  });
});
