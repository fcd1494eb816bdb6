/**
 * Sign-in state helpers (issue 9): the status of a stored state without its secrets, dropping tokens while keeping
 * the registration, and signing out with token revocation (RFC 7009) at a real loopback endpoint, with each client
 * authentication method the token endpoint uses.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importSPKI, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthProvider, tokenStoreKey } from '../../src/auth/provider.js';
import { forgetTokens, revokeTokens, signInStatus, signOut } from '../../src/auth/sign-in-state.js';
import { MemoryTokenStore, type StoredOAuthState } from '../../src/auth/token-store.js';

const SERVER = 'https://mcp.example/mcp';
const ISSUER = 'https://as.example';

interface SeenRequest {
  form: Record<string, string>;
  authorization: string | undefined;
  path: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

/** A revocation endpoint on 127.0.0.1 that records each request and answers with `answer` (200 by default). */
async function endpoint(
  answer: (seen: SeenRequest) => { status: number; body?: unknown; location?: string } | 'hang' = () => ({
    status: 200,
  }),
): Promise<{ url: string; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const request = {
        form: Object.fromEntries(new URLSearchParams(body)),
        authorization: req.headers.authorization,
        path: req.url ?? '/',
      };
      seen.push(request);
      const a = answer(request);
      if (a === 'hang') return;
      res
        .writeHead(a.status, {
          'content-type': 'application/json',
          ...(a.location === undefined ? {} : { location: a.location }),
        })
        .end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/revoke`, seen };
}

/** A stored state as the SDK leaves it after an authorization code sign-in. */
function stored(
  revocationEndpoint: string | undefined,
  extra: Partial<StoredOAuthState> = {},
): StoredOAuthState {
  return {
    tokens: {
      access_token: 'at-secret-1',
      refresh_token: 'rt-secret-1',
      token_type: 'Bearer',
      scope: 'mcp:read',
      expires_in: 3600,
    },
    expiresAt: 5_000_000,
    clientInformation: { client_id: 'dyn-1', redirect_uris: ['http://127.0.0.1:5555/callback'] },
    discoveryState: {
      authorizationServerUrl: ISSUER,
      authorizationServerMetadata: {
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/authorize`,
        token_endpoint: `${ISSUER}/token`,
        response_types_supported: ['code'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        ...(revocationEndpoint === undefined ? {} : { revocation_endpoint: revocationEndpoint }),
      },
    },
    ...extra,
  };
}

describe('signInStatus', () => {
  it('describes what is stored, without any token', () => {
    const state = stored('https://as.example/revoke');
    const status = signInStatus(state, 1_000_000);
    expect(status).toEqual({
      signedIn: true,
      scope: 'mcp:read',
      expiresAt: 5_000_000,
      expired: false,
      refreshable: true,
      clientId: 'dyn-1',
      revocationEndpoint: 'https://as.example/revoke',
    });
    expect(JSON.stringify(status)).not.toMatch(/secret/);
    expect(signInStatus(state, 5_000_000).expired).toBe(true);
    expect(signInStatus(undefined)).toMatchObject({
      signedIn: false,
      refreshable: false,
      expiresAt: undefined,
    });
  });

  it('ignores a revocation endpoint that is not an http(s) URL', () => {
    expect(signInStatus(stored('file:///etc/passwd')).revocationEndpoint).toBeUndefined();
    expect(signInStatus(stored('not a url')).revocationEndpoint).toBeUndefined();
  });
});

describe('OAuthProvider token lifetimes', () => {
  it('dates saved tokens with the clock and forgets the date with the tokens', async () => {
    const store = new MemoryTokenStore();
    const provider = new OAuthProvider({
      serverUrl: SERVER,
      store,
      grant: 'client_credentials',
      clock: () => 1_000,
    });
    await provider.saveTokens({ access_token: 'a', token_type: 'Bearer', expires_in: 60 });
    expect((await store.load(tokenStoreKey(SERVER)))?.expiresAt).toBe(61_000);
    await provider.saveTokens({ access_token: 'b', token_type: 'Bearer' });
    expect((await store.load(tokenStoreKey(SERVER)))?.expiresAt).toBeUndefined();
    await provider.saveTokens({ access_token: 'c', token_type: 'Bearer', expires_in: 1 });
    await provider.invalidateCredentials('tokens');
    expect(await store.load(tokenStoreKey(SERVER))).toEqual({});
  });
});

describe('forgetTokens', () => {
  it('drops the tokens and keeps the registration and discovery, so the same client signs in again', async () => {
    const store = new MemoryTokenStore();
    const key = tokenStoreKey(SERVER);
    await store.save(key, { ...stored(undefined), codeVerifier: 'v' });
    expect(await forgetTokens(store, SERVER)).toBe(true);
    const left = await store.load(key);
    expect(left?.tokens).toBeUndefined();
    expect(left?.expiresAt).toBeUndefined();
    expect(left?.codeVerifier).toBeUndefined();
    expect(left?.clientInformation?.client_id).toBe('dyn-1');
    expect(left?.discoveryState?.authorizationServerUrl).toBe(ISSUER);
    expect(await forgetTokens(store, SERVER)).toBe(false);
  });
});

describe('revokeTokens', () => {
  it('revokes the refresh token, then the access token, as a public client', async () => {
    const revoke = await endpoint();
    const result = await revokeTokens(stored(revoke.url));
    expect(result).toEqual({ endpoint: revoke.url, revoked: ['refresh_token', 'access_token'], failed: [] });
    expect(revoke.seen.map((s) => s.form)).toEqual([
      { token: 'rt-secret-1', token_type_hint: 'refresh_token', client_id: 'dyn-1' },
      { token: 'at-secret-1', token_type_hint: 'access_token', client_id: 'dyn-1' },
    ]);
    expect(revoke.seen.every((s) => s.authorization === undefined)).toBe(true);
  });

  it('authenticates a registered confidential client with client_secret_basic', async () => {
    const revoke = await endpoint();
    const state = stored(revoke.url, {
      clientInformation: { client_id: 'dyn-2', client_secret: 'reg-secret' },
    });
    await revokeTokens(state);
    const basic = `Basic ${Buffer.from('dyn-2:reg-secret').toString('base64')}`;
    expect(revoke.seen.map((s) => s.authorization)).toEqual([basic, basic]);
    expect(revoke.seen[0]?.form.client_secret).toBeUndefined();
  });

  it('uses the configured client with client_secret_post when nothing is registered', async () => {
    const revoke = await endpoint();
    const state = stored(revoke.url, { clientInformation: undefined });
    await revokeTokens(state, {
      clientId: 'svc',
      clientSecret: 'svc-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
    });
    expect(revoke.seen[0]?.form).toMatchObject({ client_id: 'svc', client_secret: 'svc-secret' });
    expect(revoke.seen[0]?.authorization).toBeUndefined();
  });

  it('prefers the methods the server lists for its revocation endpoint', async () => {
    const revoke = await endpoint();
    const state = stored(revoke.url, { clientInformation: { client_id: 'dyn-3', client_secret: 's3' } });
    Object.assign(state.discoveryState?.authorizationServerMetadata ?? {}, {
      revocation_endpoint_auth_methods_supported: ['client_secret_post'],
    });
    await revokeTokens(state);
    expect(revoke.seen[0]?.form).toMatchObject({ client_id: 'dyn-3', client_secret: 's3' });
    expect(revoke.seen[0]?.authorization).toBeUndefined();
  });

  it('signs a private_key_jwt assertion for the authorization server', async () => {
    const revoke = await endpoint();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const state = stored(revoke.url, { clientInformation: undefined });
    await revokeTokens(state, {
      clientId: 'jwt-client',
      tokenEndpointAuthMethod: 'private_key_jwt',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    const form = revoke.seen[0]?.form ?? {};
    expect(form.client_assertion_type).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const key = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'RS256');
    const { payload } = await jwtVerify(form.client_assertion ?? '', key, {
      audience: ISSUER,
      issuer: 'jwt-client',
    });
    expect(payload.sub).toBe('jwt-client');
  });

  it('reports failures with the status and error code only, never the token or the description', async () => {
    const revoke = await endpoint(() => ({
      status: 400,
      body: { error: 'unsupported_token_type', error_description: 'cannot revoke at-secret-1' },
    }));
    const result = await revokeTokens(stored(revoke.url));
    expect(result.revoked).toEqual([]);
    expect(result.failed).toEqual([
      { token: 'refresh_token', reason: 'HTTP 400 unsupported_token_type' },
      { token: 'access_token', reason: 'HTTP 400 unsupported_token_type' },
    ]);
  });

  it('does not follow a redirect with the token', async () => {
    const elsewhere = await endpoint();
    const revoke = await endpoint(() => ({ status: 307, location: elsewhere.url }));
    const result = await revokeTokens(stored(revoke.url));
    expect(result.failed.map((f) => f.reason)).toEqual(['HTTP 307', 'HTTP 307']);
    expect(elsewhere.seen).toEqual([]);
  });

  it('reports an unreachable endpoint and one that does not answer in time', async () => {
    const gone = await endpoint();
    const server = servers.pop() as Server;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const refused = await revokeTokens(
      stored(gone.url, { tokens: { access_token: 'a', token_type: 'Bearer' } }),
    );
    expect(refused.failed).toEqual([{ token: 'access_token', reason: 'ECONNREFUSED' }]);

    const silent = await endpoint(() => 'hang');
    const slow = await revokeTokens(
      stored(silent.url, { tokens: { access_token: 'a', token_type: 'Bearer' } }),
      {
        timeoutMs: 50,
      },
    );
    expect(slow.failed).toEqual([{ token: 'access_token', reason: 'timed out' }]);
  });

  it('sends nothing when the stored metadata names no revocation endpoint', async () => {
    expect(await revokeTokens(stored(undefined))).toEqual({ endpoint: undefined, revoked: [], failed: [] });
  });
});

describe('signOut', () => {
  it('revokes, then removes the stored state, also when the revocation fails', async () => {
    const store = new MemoryTokenStore();
    const key = tokenStoreKey(SERVER);
    const failing = await endpoint(() => ({ status: 503 }));
    await store.save(key, stored(failing.url));
    const result = await signOut(store, SERVER);
    expect(result).toMatchObject({ removed: true, hadTokens: true, revoked: [] });
    expect(result.failed).toHaveLength(2);
    expect(await store.load(key)).toBeUndefined();
    expect(await signOut(store, SERVER)).toEqual({
      removed: false,
      hadTokens: false,
      endpoint: undefined,
      revoked: [],
      failed: [],
    });
  });

  it('removes the state without revoking when asked not to', async () => {
    const store = new MemoryTokenStore();
    const revoke = await endpoint();
    await store.save(tokenStoreKey(SERVER), stored(revoke.url));
    const result = await signOut(store, SERVER, { revoke: false });
    expect(result).toMatchObject({ removed: true, endpoint: revoke.url, revoked: [] });
    expect(revoke.seen).toEqual([]);
  });
});
