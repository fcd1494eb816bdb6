import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerAuth, FileTokenStore, MemoryTokenStore, OAuthProvider } from '../../src/auth/index.js';
import { parseServerConfig } from '../../src/config/servers.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { type OpenClient, openClient, type ServerAuthFactory } from '../../src/interop/open-client.js';
import { createHttpClient, type HttpClient } from '../../src/net/http.js';
import { NetworkPolicyError } from '../../src/net/network.js';
import { startHttp } from './net-fixtures.js';
import { OAuthFixture } from './oauth-fixture.js';

let fixture: OAuthFixture | undefined;
let http: HttpClient | undefined;
const opened: OpenClient[] = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((o) => o.client.close()));
  await http?.close();
  await fixture?.close();
  fixture = undefined;
  http = undefined;
});

async function connect(
  url: string,
  auth: Record<string, unknown>,
  serverAuth: ServerAuthFactory,
): Promise<OpenClient> {
  // Loopback is allowed explicitly: the default-deny policy is what the SSRF tests check.
  http ??= createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } });
  const config = parseServerConfig({ name: 'remote', transport: 'http', url, auth });
  const open = await openClient(config, {
    identity: { name: 'test', version: '1' },
    fetch: http.fetch,
    serverAuth,
    signal: new AbortController().signal,
    timeoutMs: 15_000,
    onStderr: () => {},
  });
  opened.push(open);
  return open;
}

async function callText(open: OpenClient, name: string): Promise<string> {
  const result = await open.client.callTool({ name, arguments: {} });
  return (result.content as { text: string }[])[0]?.text ?? '';
}

/** Plays the browser: follows the authorization URL, whose redirect lands on the loopback receiver. */
async function autoApprove(url: URL): Promise<void> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (location === null) throw new Error(`authorize answered ${res.status}`);
  await fetch(location);
}

describe('OAuth: authorization code with PKCE', () => {
  it('discovers, registers, signs in with PKCE S256 and the resource parameter, then calls a tool', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    const store = new MemoryTokenStore();
    const open = await connect(url, { type: 'oauth' }, createServerAuth({ store, openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-.* scope=mcp:read$/);
    const paths = fixture.log.map((e) => e.path);
    expect(paths).toContain('GET /.well-known/oauth-authorization-server');
    expect(paths).toContain('POST /register');
    const authorize = fixture.log.find((e) => e.path === 'GET /authorize')?.form;
    expect(authorize?.code_challenge_method).toBe('S256');
    expect(authorize?.resource).toBe(url);
    // Scope from WWW-Authenticate first.
    expect(authorize?.scope).toBe('mcp:read');
    const token = fixture.log.find((e) => e.form?.grant_type === 'authorization_code')?.form;
    expect(token?.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(token?.resource).toBe(url);
  });

  it('refreshes an expired access token without signing in again', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    const store = new MemoryTokenStore();
    let signIns = 0;
    const serverAuth = createServerAuth({
      store,
      openUrl: async (u) => {
        signIns++;
        await autoApprove(u);
      },
    });
    const first = await connect(url, { type: 'oauth' }, serverAuth);
    // A reconnect after the access token expired (one connection per server, as the manager keeps).
    await first.client.close();
    fixture.expireAll();
    const again = await connect(url, { type: 'oauth' }, serverAuth);
    expect(await callText(again, 'whoami')).toContain('scope=mcp:read');
    expect(signIns).toBe(1);
    expect(fixture.log.some((e) => e.form?.grant_type === 'refresh_token')).toBe(true);
  });
});

describe('OAuth: client ID metadata documents', () => {
  it('uses the metadata document URL as client_id instead of registering', async () => {
    fixture = await OAuthFixture.start({ clientIdMetadata: true });
    const url = await fixture.startResource();
    const clientMetadataUrl = 'https://client.example/interlock/client.json';
    const open = await connect(
      url,
      { type: 'oauth', clientMetadataUrl },
      createServerAuth({ openUrl: autoApprove }),
    );
    expect(await callText(open, 'whoami')).toContain(`client=${clientMetadataUrl}`);
    expect(fixture.log.some((e) => e.path === 'POST /register')).toBe(false);
  });
});

describe('OAuth: step-up with authorization code', () => {
  it('signs in again with the larger scope while the call waits, then the call succeeds', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    const scopes: (string | null)[] = [];
    const open = await connect(
      url,
      { type: 'oauth' },
      createServerAuth({
        openUrl: async (u) => {
          scopes.push(u.searchParams.get('scope'));
          await autoApprove(u);
        },
      }),
    );
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
    expect(await callText(open, 'admin')).toBe('admin ok');
    expect(scopes[0]).toBe('mcp:read');
    expect(scopes[1]?.split(' ').sort()).toEqual(['mcp:admin', 'mcp:read']);
    expect(scopes).toHaveLength(2);
  });
});

describe('OAuth: client credentials (machine to machine)', () => {
  for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
    it(`gets a token with ${method} and never opens a browser`, async () => {
      fixture = await OAuthFixture.start();
      const url = await fixture.startResource();
      fixture.register({
        client_id: 'svc',
        client_secret: 's3cret',
        token_endpoint_auth_method: method,
        redirect_uris: [],
      });
      const open = await connect(
        url,
        {
          type: 'oauth',
          grant: 'client_credentials',
          clientId: 'svc',
          clientSecret: 's3cret',
          tokenEndpointAuthMethod: method,
        },
        createServerAuth({ openUrl: () => Promise.reject(new Error('no browser in M2M')) }),
      );
      expect(await callText(open, 'whoami')).toBe('client=svc scope=mcp:read');
      const req = fixture.log.find((e) => e.form?.grant_type === 'client_credentials');
      expect(req?.form?.resource).toBe(url);
      if (method === 'client_secret_basic') expect(req?.authorization).toMatch(/^Basic /);
      else expect(req?.form?.client_secret).toBe('s3cret');
    });
  }

  it("names the authorization server's error and what to check when the client secret is wrong", async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    fixture.register({
      client_id: 'svc',
      client_secret: 'right-s3cret',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const manager = new MCPClientManager({
      network: { allowHosts: ['127.0.0.1'] },
      http: { proxy: 'none' },
      serverAuth: createServerAuth(),
    });
    try {
      const err = await manager
        .connectServer({
          name: 'remote',
          transport: 'http',
          url,
          reconnect: { enabled: false },
          auth: {
            type: 'oauth',
            grant: 'client_credentials',
            clientId: 'svc',
            clientSecret: 'wrong-s3cret',
            tokenEndpointAuthMethod: 'client_secret_post',
          },
        })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CONNECTION_FAILED' });
      const message = (err as Error).message;
      expect(message).toContain("the authorization server answered 'invalid_client'");
      expect(message).toContain('check auth.clientId, auth.clientSecret');
      expect(message).not.toContain('wrong-s3cret');
    } finally {
      await manager.close();
    }
  });

  it('gets a token with private_key_jwt', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fixture.register({
      client_id: 'jwt-svc',
      token_endpoint_auth_method: 'private_key_jwt',
      redirect_uris: [],
      publicKey,
    });
    const open = await connect(
      url,
      {
        type: 'oauth',
        grant: 'client_credentials',
        clientId: 'jwt-svc',
        tokenEndpointAuthMethod: 'private_key_jwt',
        privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      },
      createServerAuth(),
    );
    expect(await callText(open, 'whoami')).toBe('client=jwt-svc scope=mcp:read');
  });

  it('steps up on insufficient_scope and retries the call with the larger scope', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    fixture.register({
      client_id: 'svc',
      client_secret: 'x',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const open = await connect(
      url,
      {
        type: 'oauth',
        grant: 'client_credentials',
        clientId: 'svc',
        clientSecret: 'x',
        tokenEndpointAuthMethod: 'client_secret_post',
      },
      createServerAuth(),
    );
    expect(await callText(open, 'admin')).toBe('admin ok');
    const scopes = fixture.log
      .filter((e) => e.form?.grant_type === 'client_credentials')
      .map((e) => e.form?.scope);
    expect(scopes.at(-1)?.split(' ').sort()).toEqual(['mcp:admin', 'mcp:read']);
  });
});

describe('OAuth: audience and token handling', () => {
  it('refuses a token issued for another MCP server (wrong audience) and gets its own', async () => {
    fixture = await OAuthFixture.start();
    const first = await fixture.startResource();
    const second = await fixture.startResource();
    fixture.register({
      client_id: 'svc',
      client_secret: 'x',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const cfg = {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: 'svc',
      clientSecret: 'x',
      tokenEndpointAuthMethod: 'client_secret_post',
    };
    const store = new MemoryTokenStore();
    await connect(first, cfg, createServerAuth({ store }));
    const firstToken = [...fixture.tokens.values()][0]?.token ?? '';
    // Presented as a static header to the other server, the first server's token is refused.
    const res = await fetch(second, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${firstToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.status).toBe(401);
    // Through the provider, the second server gets a token of its own (store keyed by server URL).
    const open = await connect(second, cfg, createServerAuth({ store }));
    expect(await callText(open, 'whoami')).toContain('client=svc');
    const resources = fixture.log
      .filter((e) => e.form?.grant_type === 'client_credentials')
      .map((e) => e.form?.resource);
    expect(resources).toEqual([first, second]);
    expect(fixture.seenByResource.filter((a) => a === `Bearer ${firstToken}`).length).toBeGreaterThan(0);
  });

  it('keeps tokens out of error messages when the server refuses them', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    fixture.register({
      client_id: 'svc',
      client_secret: 'right',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const err = await connect(
      url,
      {
        type: 'oauth',
        grant: 'client_credentials',
        clientId: 'svc',
        clientSecret: 'wrong',
        tokenEndpointAuthMethod: 'client_secret_post',
      },
      createServerAuth(),
    ).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const text = `${(err as Error).message} ${String((err as Error).cause ?? '')}`;
    expect(text).not.toContain('wrong');
    for (const t of fixture.tokens.keys()) expect(text).not.toContain(t);
  });
});

describe('OAuth endpoints and the SSRF guard', () => {
  it('refuses an authorization server on the cloud metadata address named by a protected server', async () => {
    const resource = await startHttp((req, res) => {
      const base = `http://${req.headers.host}`;
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ resource: `${base}/mcp`, authorization_servers: ['http://169.254.169.254/'] }),
        );
        return;
      }
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      });
      res.end();
    });
    try {
      const err = await connect(
        `${resource.url}/mcp`,
        { type: 'oauth' },
        createServerAuth({ openUrl: autoApprove }),
      ).catch((e: unknown) => e);
      let found: unknown = err;
      while (found instanceof Error && !(found instanceof NetworkPolicyError)) found = found.cause;
      const text = err instanceof Error ? err.message : String(err);
      expect(found).toBeInstanceOf(NetworkPolicyError);
      expect((found as NetworkPolicyError).reason).toBe('link-local');
      expect(text).toContain('169.254.169.254');
    } finally {
      await resource.close();
    }
  });
});

describe('token stores', () => {
  it('writes the file store with mode 0600 and reads it back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'interlock-tokens-'));
    try {
      const path = join(dir, 'sub', 'tokens.json');
      const store = new FileTokenStore(path);
      const provider = new OAuthProvider({
        serverUrl: 'https://mcp.example.com/mcp',
        store,
        grant: 'client_credentials',
      });
      await provider.saveTokens({ access_token: 'a', token_type: 'Bearer' });
      if (process.platform !== 'win32') expect((await stat(path)).mode & 0o777).toBe(0o600);
      const reread = new OAuthProvider({
        serverUrl: 'https://mcp.example.com/mcp?x=1',
        store: new FileTokenStore(path),
        grant: 'client_credentials',
      });
      expect((await reread.tokens())?.access_token).toBe('a');
      await reread.clear();
      expect(await reread.tokens()).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
