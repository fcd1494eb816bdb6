/**
 * `http.proxyTarget: 'address'`: through a proxy, the CONNECT names the address Interlock resolved and checked, so
 * the proxy resolves nothing and DNS rebinding cannot move the connection. Real loopback servers and a counting
 * proxy; names resolve through an injected resolver (the proxy itself cannot resolve them at all, which proves it
 * never tried).
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient } from '../../src/net/http.js';
import type { Resolver } from '../../src/net/network.js';
import { envProxyRoutes, proxyFor } from '../../src/net/proxy-tunnel.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startHttpFixture } from '../helpers/index.js';
import { closesAfterEach, policyError } from './cleanup.js';
import { hasOpenssl, makePki, startCountingProxy, startHttp, startMtlsServer } from './net-fixtures.js';

/** These tests are about the network, not the policy: allowAll()'s loud warning is expected here. */
const ignoreWarning = (): void => {};

const track = closesAfterEach();

/** A resolver that knows only the names given. */
function dns(names: Record<string, string>): Resolver {
  return async (host) => {
    const address = names[host];
    if (address === undefined) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };
}

describe("proxyTarget: 'address'", () => {
  it('sends CONNECT to the checked address of the name, with the name in the Host header', async () => {
    let host: string | undefined;
    const server = track(
      await startHttp((req, res) => {
        host = req.headers.host;
        res.end('ok');
      }),
    );
    const proxy = track(await startCountingProxy());
    const http = track(
      createHttpClient({
        network: { allowHosts: ['svc.test'], resolve: dns({ 'svc.test': '127.0.0.1' }) },
        http: { proxy: { http: proxy.url }, proxyTarget: 'address' },
      }),
    );
    const response = await http.fetch(`http://svc.test:${server.port}/hello`);
    expect(await response.text()).toBe('ok');
    expect(proxy.connects).toEqual([`127.0.0.1:${server.port}`]);
    expect(host).toBe(`svc.test:${server.port}`);
  });

  it('resolves a name once per connection, in the tunnel, not again before every request', async () => {
    const server = track(await startHttp((_req, res) => res.end('ok')));
    const proxy = track(await startCountingProxy());
    const lookups: string[] = [];
    const resolve = dns({ 'svc.test': '127.0.0.1' });
    const http = track(
      createHttpClient({
        network: {
          allowHosts: ['svc.test'],
          resolve: (host) => {
            lookups.push(host);
            return resolve(host);
          },
        },
        http: { proxy: { http: proxy.url }, proxyTarget: 'address' },
      }),
    );
    for (let i = 0; i < 3; i++)
      expect(await (await http.fetch(`http://svc.test:${server.port}/`)).text()).toBe('ok');
    // One lookup per tunnel opened (keep-alive serves several requests on one), none per request.
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups).toEqual(proxy.connects.map(() => 'svc.test'));
  });

  it('refuses a name that resolves to a private address before asking the proxy anything', async () => {
    const proxy = track(await startCountingProxy());
    const http = track(
      createHttpClient({
        network: { resolve: dns({ 'rebind.test': '127.0.0.1' }) },
        http: { proxy: { http: proxy.url, https: proxy.url }, proxyTarget: 'address' },
      }),
    );
    const err = await http.fetch('http://rebind.test:8080/').catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('loopback');
    expect(proxy.connects.length + proxy.requests.length).toBe(0);
  });

  it('connects an MCP server through the tunnel and keeps NO_PROXY hosts direct', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const direct = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const resolve = dns({ 'mcp.test': '127.0.0.1', 'direct.test': '127.0.0.1' });
    const manager = track(
      new MCPClientManager({
        network: { allowHosts: ['mcp.test', 'direct.test'], resolve },
        http: { proxy: { http: proxy.url, noProxy: 'direct.test' }, proxyTarget: 'address' },
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    const results = await manager.connectAll([
      { name: 'tunneled', transport: 'http', url: fixture.endpoint.replace('127.0.0.1', 'mcp.test') },
      { name: 'direct', transport: 'http', url: direct.endpoint.replace('127.0.0.1', 'direct.test') },
    ]);
    expect(results).toEqual({ tunneled: true, direct: true });
    expect(await manager.getTool('mcp__tunneled__echo')?.execute({ text: 'via tunnel' })).toContain(
      'via tunnel',
    );
    expect(new Set(proxy.connects)).toEqual(new Set([`127.0.0.1:${fixture.port}`]));
  });

  it.skipIf(!hasOpenssl())(
    'checks the TLS certificate against the name, not the address the tunnel goes to',
    async () => {
      const pki = makePki(); // the server certificate names 127.0.0.1 and svc.test, not other.test
      const server = track(await startMtlsServer(pki));
      const proxy = track(await startCountingProxy());
      const http = track(
        createHttpClient({
          network: {
            allowHosts: ['svc.test', 'other.test', '127.0.0.1'],
            resolve: dns({ 'svc.test': '127.0.0.1', 'other.test': '127.0.0.1' }),
          },
          http: {
            proxy: { https: proxy.url },
            proxyTarget: 'address',
            tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey },
          },
        }),
      );
      expect(await (await http.fetch(`https://svc.test:${server.port}/`)).text()).toBe('hello client');
      // An address as the host: checked against the certificate's IP entry, with no server name sent.
      expect(await (await http.fetch(`https://127.0.0.1:${server.port}/`)).text()).toBe('hello client');
      const err = await http.fetch(`https://other.test:${server.port}/`).catch((e: unknown) => e);
      const codes: unknown[] = [];
      for (let e = err; e instanceof Error; e = e.cause) codes.push((e as { code?: unknown }).code);
      expect(codes).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
      expect(proxy.connects.every((c) => c === `127.0.0.1:${server.port}`)).toBe(true);
    },
  );

  it('tells which proxy answered what when the proxy refuses the tunnel', async () => {
    const refusing = createServer();
    refusing.on('connect', (_req, socket: Socket) => socket.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    track({ close: () => new Promise<void>((resolve) => refusing.close(() => resolve())) });
    const proxyUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    const http = track(
      createHttpClient({
        network: { allowHosts: ['svc.test'], resolve: dns({ 'svc.test': '127.0.0.1' }) },
        http: { proxy: { http: proxyUrl }, proxyTarget: 'address' },
      }),
    );
    const err = await http.fetch('http://svc.test:8080/').catch((e: unknown) => e);
    const messages: string[] = [];
    for (let e = err; e instanceof Error; e = e.cause) messages.push(e.message);
    expect(messages.join('\n')).toContain(
      `The proxy ${proxyUrl} answered 403 to CONNECT 127.0.0.1:8080 (for 'svc.test')`,
    );
  });
});

describe('proxy routing', () => {
  it('follows NO_PROXY: exact hosts, subdomains, leading dots and wildcards, ports, and *', () => {
    const routes = {
      http: 'http://p:3128',
      https: 'http://ps:3128',
      noProxy: 'internal.example, .corp, *.lan,db:5432',
    };
    expect(proxyFor(routes, 'https:', 'api.example.com', 443)).toBe('http://ps:3128');
    expect(proxyFor(routes, 'http:', 'api.example.com', 80)).toBe('http://p:3128');
    expect(proxyFor(routes, 'https:', 'internal.example', 443)).toBeUndefined();
    expect(proxyFor(routes, 'https:', 'a.internal.example', 443)).toBeUndefined();
    expect(proxyFor(routes, 'https:', 'x.corp', 443)).toBeUndefined();
    expect(proxyFor(routes, 'https:', 'printer.lan', 443)).toBeUndefined();
    expect(proxyFor(routes, 'http:', 'db', 5432)).toBeUndefined();
    expect(proxyFor(routes, 'http:', 'db', 80)).toBe('http://p:3128');
    expect(proxyFor({ ...routes, noProxy: '*' }, 'https:', 'anything', 443)).toBeUndefined();
    expect(proxyFor({ http: 'http://p:3128' }, 'https:', 'api.example.com', 443)).toBe('http://p:3128');
    expect(proxyFor({}, 'https:', 'api.example.com', 443)).toBeUndefined();
  });

  it('reads the proxy variables as undici does, lowercase first', () => {
    expect(
      envProxyRoutes({ HTTP_PROXY: 'http://upper:1', http_proxy: 'http://lower:1', NO_PROXY: 'x' }),
    ).toEqual({ http: 'http://lower:1', https: undefined, noProxy: 'x' });
    expect(proxyFor(envProxyRoutes({ HTTP_PROXY: 'http://p:1' }), 'https:', 'a.example', 443)).toBe(
      'http://p:1',
    );
  });
});
