// OAuth over the 2024-11-05 HTTP+SSE transport (issue 9): the GET stream and the POSTs to the endpoint it names
// both carry the bearer token, and a 401 on either starts the SDK's auth().
import { afterEach, describe, expect, it } from 'vitest';
import { createServerAuth, MemoryTokenStore } from '../../src/auth/index.js';
import { autoApprove, callText, OAuthClients } from './oauth-client.js';
import { OAuthFixture } from './oauth-fixture.js';

let fixture: OAuthFixture | undefined;
let clients: OAuthClients | undefined;

afterEach(async () => {
  await clients?.close();
  await fixture?.close();
  clients = undefined;
  fixture = undefined;
});

async function start(): Promise<{ fixture: OAuthFixture; clients: OAuthClients; url: string }> {
  fixture = await OAuthFixture.start();
  clients = new OAuthClients();
  return { fixture, clients, url: await fixture.startResource({ transport: 'sse' }) };
}

const m2m = {
  type: 'oauth',
  grant: 'client_credentials',
  clientId: 'svc',
  clientSecret: 'sse-secret',
  tokenEndpointAuthMethod: 'client_secret_post',
};

function registerM2m(f: OAuthFixture): void {
  f.register({
    client_id: 'svc',
    client_secret: 'sse-secret',
    token_endpoint_auth_method: 'client_secret_post',
    redirect_uris: [],
  });
}

/** The Authorization headers the SSE server saw, per request kind. */
function seen(f: OAuthFixture, path: 'GET /sse' | 'POST /messages'): (string | undefined)[] {
  return f.resourceLog.filter((e) => e.path === path).map((e) => e.authorization);
}

describe('OAuth over SSE: client credentials', () => {
  it('authorizes after the stream answers 401, then sends the bearer on the stream and on every POST', async () => {
    const { fixture, clients, url } = await start();
    registerM2m(fixture);
    const open = await clients.connect(url, m2m, createServerAuth(), 'sse');
    expect(open.kind).toBe('sse');
    expect(await callText(open, 'whoami')).toBe('client=svc scope=mcp:read');
    const token = [...fixture.tokens.keys()][0];
    expect(fixture.tokens.size).toBe(1);
    // The first GET had no token and got 401; the second carried the token the 401 led to.
    expect(seen(fixture, 'GET /sse')).toEqual([undefined, `Bearer ${token}`]);
    const posts = seen(fixture, 'POST /messages');
    expect(posts.length).toBeGreaterThanOrEqual(3); // initialize, initialized, tools/list, tools/call
    expect(new Set(posts)).toEqual(new Set([`Bearer ${token}`]));
    const request = fixture.log.find((e) => e.form?.grant_type === 'client_credentials')?.form;
    expect(request?.resource).toBe(url);
    expect(fixture.tokens.get(token ?? '')?.resource).toBe(url);
  });

  it('gets a new token when a POST answers 401 and sends the message again', async () => {
    const { fixture, clients, url } = await start();
    registerM2m(fixture);
    const open = await clients.connect(url, m2m, createServerAuth(), 'sse');
    fixture.expireAll();
    expect(await callText(open, 'whoami')).toBe('client=svc scope=mcp:read');
    const [first, second] = [...fixture.tokens.keys()];
    expect(second).toBeDefined();
    const posts = seen(fixture, 'POST /messages');
    // The call went out with the expired token, was refused, and went out again with the new one.
    expect(posts.slice(-2)).toEqual([`Bearer ${first}`, `Bearer ${second}`]);
  });

  it('steps up on insufficient_scope and sends the call again with the larger scope', async () => {
    const { fixture, clients, url } = await start();
    registerM2m(fixture);
    const open = await clients.connect(url, m2m, createServerAuth(), 'sse');
    expect(await callText(open, 'admin')).toBe('admin ok');
    const scopes = fixture.log
      .filter((e) => e.form?.grant_type === 'client_credentials')
      .map((e) => e.form?.scope);
    expect(scopes.at(-1)?.split(' ').sort()).toEqual(['mcp:admin', 'mcp:read']);
  });
});

describe('OAuth over SSE: a server that refuses newly issued tokens', () => {
  // The 1.x SDK's SSE transport asked for a new token after every 401 without end (the fetch wrapper stops a
  // POST); the v2 transport stops after one re-authentication, and the connect error says why.
  const tokenRequests = (f: OAuthFixture) =>
    f.log.filter((e) => e.form?.grant_type === 'client_credentials').length;

  it('fails the connect with a clear error after one more token when the stream refuses them', async () => {
    const { fixture, clients, url } = await start();
    registerM2m(fixture);
    fixture.issueFor = 'http://127.0.0.1:9/elsewhere'; // every token is for another audience
    const err = await clients.connect(url, m2m, createServerAuth(), 'sse').then(
      () => new Error('connected'),
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(/refused the access token again after re-authentication \(HTTP 401\)/);
    expect(err.message).toContain('another resource (audience)');
    // The v2 SDK's SSE transport re-authenticates once and stops; it may reuse a still-valid token.
    expect(tokenRequests(fixture)).toBeGreaterThanOrEqual(1);
    expect(tokenRequests(fixture)).toBeLessThanOrEqual(2);
    for (const token of fixture.tokens.keys()) expect(err.message).not.toContain(token);
  });

  it('fails the call when a POST refuses the token it got after a 401', async () => {
    const { fixture, clients, url } = await start();
    registerM2m(fixture);
    const open = await clients.connect(url, m2m, createServerAuth(), 'sse');
    fixture.issueFor = 'http://127.0.0.1:9/elsewhere';
    fixture.expireAll();
    const err = await callText(open, 'whoami').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/refused 2 access tokens in a row/);
    // One token for the connect, one after the expired token was refused: no more.
    expect(tokenRequests(fixture)).toBe(2);
  });
});

describe('OAuth over SSE: authorization code', () => {
  it('signs in with PKCE when the stream answers 401, then opens the stream with the token', async () => {
    const { fixture, clients, url } = await start();
    const open = await clients.connect(
      url,
      { type: 'oauth' },
      createServerAuth({ openUrl: autoApprove }),
      'sse',
    );
    expect(open.kind).toBe('sse');
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-.* scope=mcp:read$/);
    const authorize = fixture.log.find((e) => e.path === 'GET /authorize')?.form;
    expect(authorize?.code_challenge_method).toBe('S256');
    expect(authorize?.resource).toBe(url);
    const token = [...fixture.tokens.keys()][0];
    expect(seen(fixture, 'GET /sse')).toEqual([undefined, `Bearer ${token}`]);
    expect(new Set(seen(fixture, 'POST /messages'))).toEqual(new Set([`Bearer ${token}`]));
  });

  it('signs in again with the larger scope on insufficient_scope while the call waits', async () => {
    const { clients, url } = await start();
    const scopes: (string | null)[] = [];
    const openUrl = async (u: URL) => {
      scopes.push(u.searchParams.get('scope'));
      await autoApprove(u);
    };
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl }), 'sse');
    expect(await callText(open, 'admin')).toBe('admin ok');
    expect(scopes.map((s) => s?.split(' ').sort().join(' '))).toEqual(['mcp:read', 'mcp:admin mcp:read']);
  });

  it('reaches a protected SSE-only server through auto, after Streamable HTTP is refused', async () => {
    const { clients, url } = await start();
    let signIns = 0;
    const openUrl = async (u: URL) => {
      signIns++;
      await autoApprove(u);
    };
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl }), 'auto');
    expect(open.kind).toBe('sse');
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
    expect(signIns).toBe(1);
  });

  it('refreshes when the stream answers 401 to an expired token, without signing in again', async () => {
    const { fixture, clients, url } = await start();
    let signIns = 0;
    const serverAuth = createServerAuth({
      store: new MemoryTokenStore(),
      openUrl: async (u) => {
        signIns++;
        await autoApprove(u);
      },
    });
    const first = await clients.connect(url, { type: 'oauth' }, serverAuth, 'sse');
    await first.client.close();
    fixture.expireAll();
    const again = await clients.connect(url, { type: 'oauth' }, serverAuth, 'sse');
    expect(await callText(again, 'whoami')).toContain('scope=mcp:read');
    expect(signIns).toBe(1);
    expect(fixture.log.some((e) => e.form?.grant_type === 'refresh_token')).toBe(true);
    const [expired, refreshed] = [...fixture.tokens.keys()];
    expect(seen(fixture, 'GET /sse').slice(-2)).toEqual([`Bearer ${expired}`, `Bearer ${refreshed}`]);
  });
});
