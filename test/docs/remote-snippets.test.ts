/**
 * The remote-servers guide's samples (docs/snippets/remote/) run against real local servers: the echo fixture over
 * Streamable HTTP, a counting proxy, and a hand-written OAuth authorization server protecting an MCP server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import * as clientCredentials from '../../docs/snippets/remote/client-credentials.js';
import * as crossAppAccess from '../../docs/snippets/remote/cross-app-access.js';
import * as headersHelper from '../../docs/snippets/remote/headers-helper.js';
import * as modelEndpoints from '../../docs/snippets/remote/model-endpoints.js';
import * as networkPolicy from '../../docs/snippets/remote/network-policy.js';
import * as proxyAndTls from '../../docs/snippets/remote/proxy-and-tls.js';
import * as signIn from '../../docs/snippets/remote/sign-in.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { parseServerConfig } from '../../src/config/servers.js';
import { startHttpFixture } from '../helpers/index.js';
import { hasOpenssl, makePki, startCountingProxy, startMtlsMcpServer } from '../remote/net-fixtures.js';
import { OAuthFixture } from '../remote/oauth-fixture.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanup.splice(0).map((c) => c()));
});

/** Plays the browser: follows the authorization URL, whose redirect lands on the loopback receiver. */
async function approve(url: URL): Promise<void> {
  const res = await fetch(url, { redirect: 'manual' });
  await fetch(res.headers.get('location') ?? '');
}

describe('remote servers snippets', () => {
  it('model-endpoints: a model API on a refused address is refused by the shared guard', async () => {
    await expect(modelEndpoints.main()).resolves.toEqual({ refused: true });
  });

  it('network-policy: refuses the cloud metadata address without connecting', async () => {
    await expect(networkPolicy.main()).resolves.toEqual({
      refused: true,
      code: 'CONNECTION_FAILED',
      reason: 'link-local',
    });
  });

  it('proxy-and-tls: connects through the proxy given', async () => {
    const fixture = await startHttpFixture({ transport: 'http' });
    cleanup.push(() => fixture.close());
    const proxy = await startCountingProxy();
    cleanup.push(() => proxy.close());
    const tools = await proxyAndTls.main({ url: fixture.endpoint, proxy: proxy.url });
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.every((t) => t.startsWith('mcp__remote__'))).toBe(true);
    expect(proxy.connects.length + proxy.requests.length).toBeGreaterThan(0);
  });

  it.skipIf(!hasOpenssl())(
    'proxy-and-tls: trusts the server CA and presents the client certificate from files',
    async () => {
      const pki = makePki();
      const server = await startMtlsMcpServer(pki);
      cleanup.push(() => server.close());
      const dir = mkdtempSync(join(tmpdir(), 'interlock-snippet-tls-'));
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      const file = (name: string, pem: string) => {
        writeFileSync(join(dir, name), pem);
        return join(dir, name);
      };
      const tools = await proxyAndTls.main({
        url: server.url,
        proxy: undefined,
        caFile: file('ca.pem', pki.ca),
        certFile: file('client.pem', pki.clientCert),
        keyFile: file('client.key', pki.clientKey),
      });
      expect(tools).toEqual(['mcp__remote__whoami']);
    },
  );

  it('interlock.config.yaml: the HTTP settings load, certificate paths relative to the file', async () => {
    const file = fileURLToPath(new URL('../../docs/snippets/remote/interlock.config.yaml', import.meta.url));
    const config = await loadInterlockConfig({ file, env: {} });
    const dir = dirname(file);
    expect(config.network).toEqual({
      allowPrivate: false,
      allowHosts: ['*.internal.example'],
      denyHosts: ['legacy.internal.example'],
    });
    expect(config.http).toEqual({ proxy: 'env', keepAliveTimeoutMs: 10000 });
    const billing = config.servers.find((s) => s.name === 'billing');
    expect(billing?.transport === 'http' && billing.tls).toEqual({
      caFile: join(dir, 'certs/internal-ca.pem'),
      certFile: join(dir, 'certs/agent.pem'),
      keyFile: join(dir, 'certs/agent.key'),
    });
    const search = config.servers.find((s) => s.name === 'search');
    expect(search?.transport === 'http' && search.proxy).toBe('none');
  });

  it('client-credentials: gets a token for this server and calls a tool', async () => {
    const oauth = await OAuthFixture.start();
    cleanup.push(() => oauth.close());
    const url = await oauth.startResource();
    oauth.register({
      client_id: 'billing-agent',
      client_secret: 'dev-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
    });
    const reply = await clientCredentials.main(url, { allowHosts: ['127.0.0.1'] });
    expect(reply).toContain('client=billing-agent scope=mcp:read');
  });

  it('cross-app-access: turns the ID token into an ID-JAG, redeems it and calls a tool', async () => {
    const oauth = await OAuthFixture.start();
    cleanup.push(() => oauth.close());
    const url = await oauth.startResource();
    oauth.register({
      client_id: 'chat-app',
      client_secret: 'chat-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
    });
    const idp = { tokenEndpoint: `${oauth.asUrl}/idp/token`, idToken: async () => oauth.idToken };
    const reply = await crossAppAccess.main(url, idp, { allowHosts: ['127.0.0.1'] });
    expect(reply).toContain('client=chat-app scope=mcp:read');
    expect(oauth.log.filter((e) => e.path === 'POST /idp/token')).toHaveLength(1);
  });

  it('sign-in: registers, signs in through the loopback redirect and stores tokens in a 0600 file', async () => {
    const oauth = await OAuthFixture.start();
    cleanup.push(() => oauth.close());
    const url = await oauth.startResource();
    const dir = await mkdtemp(join(tmpdir(), 'interlock-signin-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'tokens.json');
    let opened = 0;
    const openUrl = async (u: URL) => {
      opened++;
      await approve(u);
    };
    const first = await signIn.main({ url, tokenFile, openUrl, network: { allowHosts: ['127.0.0.1'] } });
    expect(first).toMatch(/^client=dyn-/);
    if (process.platform !== 'win32') expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    // A second run reuses the stored tokens: no browser.
    await signIn.main({ url, tokenFile, openUrl, network: { allowHosts: ['127.0.0.1'] } });
    expect(opened).toBe(1);
  });

  it('headers-helper: is a valid server config', () => {
    const config = parseServerConfig(headersHelper.server);
    expect(config.transport === 'http' && config.headersHelper?.command).toBe('vault-token');
  });
});
