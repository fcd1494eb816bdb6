// Authorization server discovery against the kinds of servers the SDK's `auth()` has fallbacks for (issue 9):
// OpenID-only metadata (also for an issuer with a path), no protected resource metadata, and no metadata at all.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerAuth } from '../../src/auth/index.js';
import { autoApprove, callText, OAuthClients } from './oauth-client.js';
import { OAuthFixture, type OAuthFixtureOptions } from './oauth-fixture.js';

let fixture: OAuthFixture | undefined;
let clients: OAuthClients | undefined;

afterEach(async () => {
  await clients?.close();
  await fixture?.close();
  clients = undefined;
  fixture = undefined;
});

async function start(
  options: OAuthFixtureOptions,
): Promise<{ fixture: OAuthFixture; clients: OAuthClients }> {
  fixture = await OAuthFixture.start(options);
  clients = new OAuthClients();
  return { fixture, clients };
}

/** The metadata documents the authorization server was asked for, in order. */
function wellKnown(f: OAuthFixture): string[] {
  return f.log.map((e) => e.path).filter((p) => p.includes('/.well-known/'));
}

/** Checks the authorization request and the code exchange of one PKCE sign-in. */
function expectPkce(f: OAuthFixture, prefix: string): void {
  const authorize = f.log.find((e) => e.path === `GET ${prefix}/authorize`)?.form;
  const exchange = f.log.find((e) => e.form?.grant_type === 'authorization_code');
  expect(authorize?.code_challenge_method).toBe('S256');
  expect(exchange?.path).toBe(`POST ${prefix}/token`);
  const verifier = exchange?.form?.code_verifier ?? '';
  expect(verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
  expect(createHash('sha256').update(verifier).digest('base64url')).toBe(authorize?.code_challenge);
}

describe('OAuth discovery: OpenID-only authorization servers', () => {
  it('finds OpenID metadata appended to the issuer path after RFC 8414 and inserted OpenID URLs fail', async () => {
    const { fixture, clients } = await start({
      issuerPath: '/tenant-a',
      metadata: 'openid',
      openidPath: 'append',
    });
    const url = await fixture.startResource();
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-.* scope=mcp:read$/);
    // RFC 8414 path insertion, then OpenID with path insertion, then OpenID Connect Discovery 1.0 (appended).
    expect(wellKnown(fixture)).toEqual([
      'GET /.well-known/oauth-authorization-server/tenant-a',
      'GET /.well-known/openid-configuration/tenant-a',
      'GET /tenant-a/.well-known/openid-configuration',
    ]);
    expect(fixture.log.some((e) => e.path === 'POST /tenant-a/register')).toBe(true);
    expectPkce(fixture, '/tenant-a');
    expect(fixture.log.find((e) => e.path === 'GET /tenant-a/authorize')?.form?.resource).toBe(url);
  });

  it('finds OpenID metadata inserted before the issuer path and stops there', async () => {
    const { fixture, clients } = await start({
      issuerPath: '/tenant-a',
      metadata: 'openid',
      openidPath: 'insert',
    });
    const url = await fixture.startResource();
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
    expect(wellKnown(fixture)).toEqual([
      'GET /.well-known/oauth-authorization-server/tenant-a',
      'GET /.well-known/openid-configuration/tenant-a',
    ]);
    expectPkce(fixture, '/tenant-a');
  });

  it('falls back to OpenID metadata at the root of an issuer without a path', async () => {
    const { fixture, clients } = await start({ metadata: 'openid' });
    const url = await fixture.startResource();
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toContain('scope=mcp:read');
    expect(wellKnown(fixture)).toEqual([
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/openid-configuration',
    ]);
    expectPkce(fixture, '');
  });
});

describe('OAuth discovery: servers without protected resource metadata', () => {
  it('uses the MCP server origin as authorization server and reads its RFC 8414 metadata', async () => {
    const { fixture, clients } = await start({ resourceMetadata: false });
    const url = await fixture.startResource({ colocated: true });
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-.* scope=mcp:read$/);
    // RFC 9728 metadata is looked for (path-aware, then root) and missing; the SDK looks again for the code
    // exchange, since there was nothing to keep in the discovery state.
    const probes = fixture.resourceLog.map((e) => e.path).filter((p) => p.includes('/.well-known/'));
    expect(probes).toEqual([
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-protected-resource',
    ]);
    expect(wellKnown(fixture)).toEqual(['GET /.well-known/oauth-authorization-server']);
    expect(fixture.log.some((e) => e.path === 'POST /register')).toBe(true);
    expectPkce(fixture, '');
    // Without resource metadata the SDK sends no RFC 8707 resource parameter (older servers predate it).
    expect(fixture.log.find((e) => e.path === 'GET /authorize')?.form?.resource).toBeUndefined();
    expect(
      fixture.log.find((e) => e.form?.grant_type === 'authorization_code')?.form?.resource,
    ).toBeUndefined();
  });

  it('uses the default endpoints /authorize, /token and /register when no metadata exists at all', async () => {
    const { fixture, clients } = await start({ resourceMetadata: false, metadata: 'none' });
    const url = await fixture.startResource({ colocated: true });
    const open = await clients.connect(url, { type: 'oauth' }, createServerAuth({ openUrl: autoApprove }));
    expect(await callText(open, 'whoami')).toMatch(/^client=dyn-.* scope=mcp:read$/);
    // Both metadata documents are missing, so the SDK looks for them again before the code exchange.
    expect(fixture.log.map((e) => e.path)).toEqual([
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/openid-configuration',
      'POST /register',
      'GET /authorize',
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/openid-configuration',
      'POST /token',
    ]);
    expectPkce(fixture, '');
  });

  it('gets a client credentials token from the default /token endpoint', async () => {
    const { fixture, clients } = await start({ resourceMetadata: false, metadata: 'none' });
    const url = await fixture.startResource({ colocated: true });
    fixture.register({
      client_id: 'svc',
      client_secret: 'legacy-secret',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const open = await clients.connect(
      url,
      {
        type: 'oauth',
        grant: 'client_credentials',
        clientId: 'svc',
        clientSecret: 'legacy-secret',
        tokenEndpointAuthMethod: 'client_secret_post',
      },
      createServerAuth(),
    );
    expect(await callText(open, 'whoami')).toBe('client=svc scope=mcp:read');
    const token = fixture.log.find((e) => e.form?.grant_type === 'client_credentials');
    expect(token?.path).toBe('POST /token');
    expect(token?.form?.client_secret).toBe('legacy-secret');
  });
});
