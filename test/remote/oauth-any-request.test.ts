// Auth on any request (issue 13): a 401 after connect signs in again and retries once, the authorization
// response's `iss` is checked (RFC 9207), client credentials are kept per authorization server (SEP-2352), and the
// cross-app access grant (ID-JAG, RFC 8693 + RFC 7523) works and fails cleanly.
import { afterEach, describe, expect, it } from 'vitest';
import { createServerAuth, MemoryTokenStore } from '../../src/auth/index.js';
import { tokenStoreKey } from '../../src/auth/provider.js';
import { AuthError, ErrorCode, type InterlockError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/index.js';
import { autoApprove, callText, OAuthClients } from './oauth-client.js';
import { OAuthFixture, type OAuthFixtureOptions } from './oauth-fixture.js';

const fixtures: OAuthFixture[] = [];
let clients: OAuthClients | undefined;

afterEach(async () => {
  await clients?.close();
  clients = undefined;
  await Promise.allSettled(fixtures.splice(0).map((f) => f.close()));
});

async function start(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const fixture = await OAuthFixture.start(options);
  fixtures.push(fixture);
  return fixture;
}

function connections(): OAuthClients {
  clients ??= new OAuthClients();
  return clients;
}

/** The first error in `err`'s cause chain that is an `AuthError`. */
function authErrorIn(err: unknown): AuthError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof AuthError) return e;
  }
  return undefined;
}

/** Counts the sign-ins (browser visits) an auth factory makes. */
function countingSignIn(): { signIns: number; openUrl: (url: URL) => Promise<void> } {
  const counter = {
    signIns: 0,
    openUrl: async (url: URL) => {
      counter.signIns++;
      await autoApprove(url);
    },
  };
  return counter;
}

const calls = (fixture: OAuthFixture) => fixture.resourceLog.filter((e) => e.path === 'POST /mcp').length;

describe('auth on any request: a 401 after connect', () => {
  it('signs in again when a tool call gets 401, and the call succeeds on its one retry', async () => {
    const fixture = await start();
    const url = await fixture.startResource();
    const browser = countingSignIn();
    const open = await connections().connect(url, { type: 'oauth' }, createServerAuth(browser));
    expect(browser.signIns).toBe(1);
    fixture.revokeAll();
    const before = calls(fixture);
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
    expect(browser.signIns).toBe(2);
    // The refused call and its one retry.
    expect(calls(fixture) - before).toBe(2);
  });

  it('signs in again when tools/list gets 401 after connect', async () => {
    const fixture = await start();
    const url = await fixture.startResource();
    const browser = countingSignIn();
    const open = await connections().connect(url, { type: 'oauth' }, createServerAuth(browser));
    fixture.revokeAll();
    const { tools } = await open.client.listTools();
    expect(tools.map((t) => t.name)).toContain('whoami');
    expect(browser.signIns).toBe(2);
  });

  it('gets a new client credentials token on a 401 without any browser', async () => {
    const fixture = await start();
    fixture.register({
      client_id: 'robot',
      client_secret: 'robot-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
    });
    const url = await fixture.startResource();
    const auth = {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: 'robot',
      clientSecret: 'robot-secret',
      tokenEndpointAuthMethod: 'client_secret_basic',
    };
    const opened: URL[] = [];
    const open = await connections().connect(
      url,
      auth,
      createServerAuth({ openUrl: (u) => void opened.push(u) }),
    );
    fixture.revokeAll();
    expect(await callText(open, 'whoami')).toBe('client=robot scope=mcp:read');
    expect(opened).toEqual([]);
    const grants = fixture.log.filter((e) => e.form?.grant_type === 'client_credentials');
    expect(grants).toHaveLength(2);
  });

  it('does not retry a second time when the server refuses the new token too', async () => {
    const fixture = await start();
    const url = await fixture.startResource();
    const browser = countingSignIn();
    const open = await connections().connect(url, { type: 'oauth' }, createServerAuth(browser));
    fixture.revokeAll();
    // Every token from now on is issued for another server: this one refuses them all.
    fixture.issueFor = 'http://127.0.0.1:9/elsewhere';
    const before = calls(fixture);
    const err = await callText(open, 'whoami').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toMatch(/refused 2 access tokens in a row/);
    // One sign-in for the refused token, one retry, then the error: no loop.
    expect(browser.signIns).toBe(2);
    expect(calls(fixture) - before).toBe(2);
  });
});

describe('auth on any request: the iss of the authorization response (RFC 9207)', () => {
  it('signs in when the authorization server sends its own issuer as iss', async () => {
    const fixture = await start({ iss: 'correct' });
    const url = await fixture.startResource();
    const open = await connections().connect(
      url,
      { type: 'oauth' },
      createServerAuth({ openUrl: autoApprove }),
    );
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
  });

  it.each([
    ['names another issuer', 'wrong'],
    ['is missing although advertised', 'missing'],
  ] as const)('refuses the code with AUTH_FAILED when iss %s, and never redeems it', async (_, iss) => {
    const fixture = await start({ iss });
    const url = await fixture.startResource();
    const err = await connections()
      .connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }))
      .catch((e: unknown) => e);
    const auth = authErrorIn(err);
    expect(auth?.code).toBe(ErrorCode.AUTH_FAILED);
    expect(auth?.reason).toBe('issuer_mismatch');
    expect(auth?.server).toBe('remote');
    expect(auth?.message).toContain(fixture.issuer);
    // The attacker-controlled iss is not repeated.
    expect(String((err as Error).message)).not.toContain('attacker.example');
    expect(auth?.message).not.toContain('attacker.example');
    expect(fixture.log.some((e) => e.form?.grant_type === 'authorization_code')).toBe(false);
  });
});

describe('auth on any request: what a manager reports', () => {
  it('fails the connect with CONNECTION_FAILED caused by AUTH_FAILED when iss names another issuer', async () => {
    const fixture = await start({ iss: 'wrong' });
    const url = await fixture.startResource();
    await using manager = new MCPClientManager({
      capabilities: new CapabilitySet(),
      network: { allowHosts: ['127.0.0.1'] },
      http: { proxy: 'none' },
      serverAuth: createServerAuth({ openUrl: autoApprove }),
    });
    const err = await manager
      .connectServer({ name: 'remote', transport: 'http', url, auth: { type: 'oauth' } })
      .catch((e: unknown) => e);
    expect((err as InterlockError).code).toBe(ErrorCode.CONNECTION_FAILED);
    expect((err as Error).message).toMatch(/RFC 9207/);
    expect(authErrorIn(err)?.reason).toBe('issuer_mismatch');
  });
});

describe('auth on any request: client credentials keyed by issuer (SEP-2352)', () => {
  it('registers anew at a new authorization server and never shows it the old client id', async () => {
    const a = await start();
    const b = await start();
    const url = await a.startResource();
    const store = new MemoryTokenStore();
    const open = await connections().connect(
      url,
      { type: 'oauth' },
      createServerAuth({ store, openUrl: autoApprove }),
    );
    const oldId = [...a.clients.keys()][0];
    expect(oldId).toMatch(/^dyn-/);
    // The server moves to authorization server B and forgets A's tokens.
    a.authorizationServers = [b.issuer];
    a.trusted.push(b);
    a.revokeAll();
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-/);
    expect(b.log.map((e) => e.path)).toContain('POST /register');
    const newId = [...b.clients.keys()][0];
    expect(newId).not.toBe(oldId);
    for (const entry of b.log) {
      expect(JSON.stringify(entry)).not.toContain(String(oldId));
    }
    const saved = await store.load(tokenStoreKey(url));
    expect(Object.keys(saved?.clients ?? {}).sort()).toEqual([a.issuer, b.issuer].sort());
  });

  it('refuses to send a configured client secret to another authorization server', async () => {
    const a = await start();
    const b = await start();
    a.register({
      client_id: 'robot',
      client_secret: 'robot-secret',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const url = await a.startResource();
    const auth = {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: 'robot',
      clientSecret: 'robot-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
    };
    const open = await connections().connect(url, auth, createServerAuth());
    a.authorizationServers = [b.issuer];
    a.revokeAll();
    const err = await callText(open, 'whoami').catch((e: unknown) => e);
    const failure = authErrorIn(err);
    expect(failure?.reason).toBe('authorization_server_changed');
    expect(failure?.message).toContain(b.issuer);
    expect(failure?.message).not.toContain('robot-secret');
    expect(b.log.some((e) => e.path.endsWith('/token'))).toBe(false);
  });

  it('sends a configured client only to the issuer named in auth.issuer', async () => {
    const a = await start();
    a.register({
      client_id: 'robot',
      client_secret: 'robot-secret',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const url = await a.startResource();
    const auth = {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: 'robot',
      clientSecret: 'robot-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
      issuer: 'https://login.example.com',
    };
    const err = await connections()
      .connect(url, auth, createServerAuth())
      .catch((e: unknown) => e);
    expect(authErrorIn(err)?.reason).toBe('authorization_server_changed');
    expect(a.log.some((e) => e.path.endsWith('/token'))).toBe(false);
  });
});

describe('auth on any request: cross-app access (ID-JAG)', () => {
  function crossApp(fixture: OAuthFixture, idToken: string): Record<string, unknown> {
    return {
      type: 'oauth',
      grant: 'cross_app_access',
      clientId: 'chat-app',
      clientSecret: 'chat-secret',
      idp: { tokenEndpoint: `${fixture.asUrl}/idp/token`, clientId: 'chat-at-idp', idToken },
    };
  }

  it('exchanges the ID token for an ID-JAG at the identity provider, then redeems it for a token', async () => {
    const fixture = await start();
    fixture.register({
      client_id: 'chat-app',
      client_secret: 'chat-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
    });
    const url = await fixture.startResource();
    const opened: URL[] = [];
    const open = await connections().connect(
      url,
      crossApp(fixture, fixture.idToken),
      createServerAuth({ openUrl: (u) => void opened.push(u) }),
    );
    expect(await callText(open, 'whoami')).toBe('client=chat-app scope=mcp:read');
    expect(opened).toEqual([]);
    const exchange = fixture.log.find((e) => e.path === 'POST /idp/token')?.form;
    expect(exchange?.audience).toBe(fixture.issuer);
    expect(exchange?.resource).toBe(url);
    expect(exchange?.client_id).toBe('chat-at-idp');
    const bearer = fixture.log.find(
      (e) => e.form?.grant_type === 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    );
    expect(bearer?.form?.assertion).toMatch(/^jag-/);
    expect(bearer?.authorization).toMatch(/^Basic /);
  });

  it('fails with AUTH_FAILED when the identity provider refuses the ID token, without printing it', async () => {
    const fixture = await start();
    const url = await fixture.startResource();
    const stale = 'stale-id-token-of-alice';
    const err = await connections()
      .connect(url, crossApp(fixture, stale), createServerAuth())
      .catch((e: unknown) => e);
    const failure = authErrorIn(err);
    expect(failure?.reason).toBe('cross_app_access_refused');
    expect(String((err as Error).message)).not.toContain(stale);
    expect(failure?.message).not.toContain(stale);
    expect(fixture.log.some((e) => e.form?.grant_type?.endsWith('jwt-bearer'))).toBe(false);
  });
});

describe('auth on any request: workload identity federation (JWT bearer)', () => {
  it("gets a token with the workload's own JWT as the grant, and again after a 401", async () => {
    const fixture = await start();
    fixture.register({
      client_id: 'workload',
      token_endpoint_auth_method: 'none',
      redirect_uris: [],
    });
    const url = await fixture.startResource();
    let reads = 0;
    const serverAuth = createServerAuth({
      assertion: () => {
        reads++;
        return fixture.workloadJwt;
      },
    });
    const auth = {
      type: 'oauth',
      grant: 'jwt_bearer',
      clientId: 'workload',
      tokenEndpointAuthMethod: 'none',
    };
    const open = await connections().connect(url, auth, serverAuth);
    fixture.revokeAll();
    expect(await callText(open, 'whoami')).toBe('client=workload scope=mcp:read');
    const grants = fixture.log.filter(
      (e) => e.form?.grant_type === 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    );
    expect(grants).toHaveLength(2);
    expect(grants[0]?.form?.resource).toBe(url);
    // Read afresh for each token: a projected service account token rotates.
    expect(reads).toBe(2);
  });

  it('fails the connect with INVALID_CONFIG naming auth.assertion when there is no workload JWT', async () => {
    const fixture = await start();
    const url = await fixture.startResource();
    const auth = {
      type: 'oauth',
      grant: 'jwt_bearer',
      clientId: 'workload',
      tokenEndpointAuthMethod: 'none',
    };
    const err = await connections()
      .connect(url, auth, createServerAuth())
      .catch((e: unknown) => e);
    let found: InterlockError | undefined;
    for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
      if ((e as InterlockError).code === ErrorCode.INVALID_CONFIG) found = e as InterlockError;
    }
    expect(found?.message).toContain('auth.assertion');
    expect(fixture.log.some((e) => e.path.endsWith('/token'))).toBe(false);
  });
});
