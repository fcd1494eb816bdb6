import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient, type HttpClient } from '../../src/net/http.js';
import { classifyAddress, NetworkGuard, NetworkPolicyError, type Resolver } from '../../src/net/network.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startHttpFixture } from '../helpers/index.js';
import { closesAfterEach, policyError } from './cleanup.js';
import {
  hasOpenssl,
  makePki,
  type Running,
  startCountingProxy,
  startHttp,
  startMtlsServer,
} from './net-fixtures.js';

/** These tests are about the network, not the policy: allowAll()'s loud warning is expected here. */
const ignoreWarning = (): void => {};

const track = closesAfterEach();

/** A resolver that knows only the names given and counts its calls. */
function fakeDns(names: Record<string, string>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const address = names[host];
    if (address === undefined) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  return Object.assign(resolve, { calls });
}

describe('address classification', () => {
  it.each([
    ['169.254.169.254', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
  ])('classifies %s as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('SSRF guard', () => {
  it('refuses the cloud metadata address and 10.x before connecting, even with the default policy', async () => {
    const dns = fakeDns({});
    const http = track(createHttpClient({ network: { resolve: dns } }));
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/']) {
      const err = await http.fetch(url).catch((e: unknown) => e);
      expect(policyError(err)?.reason).toBe('link-local');
    }
    const strict = track(createHttpClient({ network: { allowPrivate: false, resolve: dns } }));
    const privateErr = await strict.fetch('http://10.0.0.8/mcp').catch((e: unknown) => e);
    expect(policyError(privateErr)?.reason).toBe('private');
    // Literal addresses are refused on the string: nothing was resolved, no socket was opened.
    expect(dns.calls).toEqual([]);
  });

  it('refuses schemes other than http and https', () => {
    const guard = new NetworkGuard({ allowPrivate: true });
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://127.0.0.1:70/']) {
      expect(() => guard.checkUrl(url)).toThrow(NetworkPolicyError);
    }
  });

  it('refuses a redirect to 169.254.169.254 before connecting', async () => {
    const server = track(
      await startHttp((_req, res) =>
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
      ),
    );
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    const err = await http.fetch(`${server.url}/start`).catch((e: unknown) => e);
    const refused = policyError(err);
    expect(refused?.reason).toBe('link-local');
    expect(refused?.host).toBe('169.254.169.254');
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const dns = fakeDns({ 'internal.test': '10.0.0.5' });
    const server = track(
      await startHttp((_req, res) => res.writeHead(307, { location: 'http://internal.test/admin' }).end()),
    );
    const http = track(
      createHttpClient({ network: { allowHosts: ['127.0.0.1'], resolve: dns }, http: { proxy: 'none' } }),
    );
    const err = await http
      .fetch(`${server.url}/start`, { method: 'POST', body: '{}' })
      .catch((e: unknown) => e);
    expect(policyError(err)).toMatchObject({ reason: 'private', host: 'internal.test' });
  });

  it("answers errors with Node's global Response class, so the MCP SDK's instanceof checks hold", async () => {
    const server = track(
      await startHttp((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
      }),
    );
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    const response = await http.fetch(`${server.url}/token`);
    expect(response).toBeInstanceOf(Response);
    expect(response.url).toBe(`${server.url}/token`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_client' });
  });

  it('drops credentials when a redirect changes origin, and keeps them on the same origin', async () => {
    const seen: (string | undefined)[] = [];
    const other = track(
      await startHttp((req, res) => {
        seen.push(req.headers.authorization);
        res.end('other');
      }),
    );
    const first = track(
      await startHttp((req, res) => {
        seen.push(req.headers.authorization);
        if (req.url === '/same') res.writeHead(307, { location: '/final' }).end();
        else if (req.url === '/away') res.writeHead(307, { location: `${other.url}/final` }).end();
        else res.end('same');
      }),
    );
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    const headers = { authorization: 'Bearer for-first-only' };
    expect(await (await http.fetch(`${first.url}/same`, { method: 'POST', body: 'x', headers })).text()).toBe(
      'same',
    );
    expect(await (await http.fetch(`${first.url}/away`, { method: 'POST', body: 'x', headers })).text()).toBe(
      'other',
    );
    expect(seen).toEqual([
      'Bearer for-first-only',
      'Bearer for-first-only',
      'Bearer for-first-only',
      undefined,
    ]);
  });

  it('checks the resolved address: a name that resolves to 127.0.0.1 is refused unless allowed', async () => {
    const server = track(await startHttp((_req, res) => res.end('inside')));
    const dns = fakeDns({ 'rebind.test': '127.0.0.1' });
    const url = `http://rebind.test:${server.port}/`;

    const strict = track(createHttpClient({ network: { resolve: dns }, http: { proxy: 'none' } }));
    // The string passes (it is a name), the connector refuses the resolved address before the socket opens.
    expect(() => strict.guard.checkUrl(url)).not.toThrow();
    const err = await strict.fetch(url).catch((e: unknown) => e);
    expect(policyError(err)).toMatchObject({ reason: 'loopback', host: 'rebind.test' });
    expect(policyError(err)?.message).toContain('resolved to 127.0.0.1');

    const allowed = track(
      createHttpClient({ network: { resolve: dns, allowHosts: ['rebind.test'] }, http: { proxy: 'none' } }),
    );
    expect(await (await allowed.fetch(url)).text()).toBe('inside');
    expect(dns.calls.every((h) => h === 'rebind.test')).toBe(true);
  });

  it('refuses localhost with a strict policy after resolving it, without connecting', async () => {
    const http = track(createHttpClient({ network: { allowPrivate: false }, http: { proxy: 'none' } }));
    const err = await http.fetch('http://localhost:59999/').catch((e: unknown) => e);
    // Nothing listens there either way: the refusal comes from the lookup, before a socket opens.
    expect(policyError(err)).toMatchObject({ reason: 'loopback', host: 'localhost' });
  });

  it('lets denyHosts win over allowPrivate and allowHosts', async () => {
    const guard = new NetworkGuard({
      allowPrivate: true,
      allowHosts: ['10.0.0.0/8'],
      denyHosts: ['10.9.0.0/16'],
    });
    expect(() => guard.checkUrl('http://10.1.0.1/')).not.toThrow();
    expect(() => guard.checkUrl('http://10.9.0.1/')).toThrow(/denyHosts/);
  });

  it('gives the same answer for a host however often it is asked, whatever was asked before', () => {
    const guard = new NetworkGuard({ allowHosts: ['api.example.com'], denyHosts: ['*.blocked.example'] });
    for (let round = 0; round < 3; round++) {
      expect(() => guard.checkUrl('https://api.example.com/mcp')).not.toThrow();
      expect(() => guard.checkUrl('https://API.example.com/other')).not.toThrow();
      expect(() => guard.checkUrl('http://169.254.169.254/latest')).toThrow(/metadata endpoint/);
      expect(() => guard.checkUrl('https://x.blocked.example/')).toThrow(/denyHosts/);
      expect(() => guard.checkUrl('http://10.0.0.1/')).toThrow(NetworkPolicyError);
      expect(() => guard.checkUrl('ftp://api.example.com/')).toThrow(/only http: and https:/);
    }
    // Past the hosts a guard remembers, it checks again and still refuses what it must.
    for (let n = 0; n < 600; n++) guard.checkHost(`host-${n}.example.com`);
    expect(() => guard.checkUrl('http://10.0.0.1/')).toThrow(NetworkPolicyError);
    expect(() => guard.checkUrl('https://api.example.com/mcp')).not.toThrow();
  });

  it('refuses a loopback MCP server for a manager with network: {} and connects once it is allowed', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const refusing = track(
      new MCPClientManager({
        network: {},
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    const err = await refusing
      .connectServer({
        name: 'echo',
        transport: 'http',
        url: fixture.endpoint,
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(String((err as Error).message)).toMatch(/loopback/);

    const allowing = track(
      new MCPClientManager({
        network: { allowHosts: ['127.0.0.1'] },
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    await allowing.connectServer({ name: 'echo', transport: 'http', url: fixture.endpoint });
    expect(allowing.tools.length).toBeGreaterThan(0);
  });
});

describe('proxy', () => {
  it('sends MCP traffic through the configured proxy', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const manager = track(
      new MCPClientManager({
        http: { proxy: { http: proxy.url, https: proxy.url } },
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    await manager.connectServer({ name: 'echo', transport: 'http', url: fixture.endpoint });
    expect(manager.tools.length).toBeGreaterThan(0);
    expect(proxy.connects.length + proxy.requests.length).toBeGreaterThan(0);
    expect(proxy.connects.every((c) => c === `127.0.0.1:${fixture.port}`)).toBe(true);
  });

  it('still refuses the metadata address when a proxy is set, without asking the proxy', async () => {
    const proxy = track(await startCountingProxy());
    const http = track(createHttpClient({ http: { proxy: { http: proxy.url } } }));
    const err = await http.fetch('http://169.254.169.254/').catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('link-local');
    expect(proxy.connects.length + proxy.requests.length).toBe(0);
  });

  it('checks every redirect hop when a proxy is set', async () => {
    const proxy = track(await startCountingProxy());
    const server = track(
      await startHttp((_req, res) =>
        res.writeHead(302, { location: 'http://169.254.169.254/latest/' }).end(),
      ),
    );
    const http = track(
      createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: { http: proxy.url } } }),
    );
    const err = await http.fetch(`${server.url}/start`).catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('link-local');
    expect(proxy.connects.concat(proxy.requests).some((r) => r.includes('169.254'))).toBe(false);
    expect(proxy.connects.length + proxy.requests.length).toBe(1);
  });
});

describe.skipIf(!hasOpenssl())('custom CA and mTLS', () => {
  let pki: ReturnType<typeof makePki> | undefined;
  const getPki = () => {
    pki ??= makePki();
    return pki;
  };

  it('trusts a self-signed CA from config and presents a client certificate', async () => {
    const p = getPki();
    const server: Running = track(await startMtlsServer(p));
    const http: HttpClient = track(
      createHttpClient({
        network: { allowHosts: ['127.0.0.1'] },
        http: { proxy: 'none', tls: { ca: p.ca, cert: p.clientCert, key: p.clientKey } },
      }),
    );
    expect(await (await http.fetch(`${server.url}/`)).text()).toBe('hello client');
  });

  it('fails without the CA, and without the client certificate', async () => {
    const p = getPki();
    const server = track(await startMtlsServer(p));
    const noCa = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    await expect(noCa.fetch(`${server.url}/`)).rejects.toThrow();
    const noCert = track(
      createHttpClient({
        network: { allowHosts: ['127.0.0.1'] },
        http: { proxy: 'none', tls: { ca: p.ca } },
      }),
    );
    await expect(noCert.fetch(`${server.url}/`)).rejects.toThrow();
  });
});
