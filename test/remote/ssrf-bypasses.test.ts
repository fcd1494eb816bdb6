/**
 * The SSRF bypasses an adversarial review found (issue 14, items 1-3), each sent for real: the attack goes through
 * the HTTP client or a manager to a live loopback server, and the test asserts the refusal and that the server saw
 * nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient } from '../../src/net/http.js';
import {
  type AddressKind,
  classifyAddress,
  METADATA_ADDRESSES,
  NetworkGuard,
  type Resolver,
} from '../../src/net/network.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { closesAfterEach, policyError } from './cleanup.js';
import { startCountingProxy, startHttp } from './net-fixtures.js';

const track = closesAfterEach();

/** A loopback HTTP server that counts every request it receives. */
async function countingServer() {
  const seen: string[] = [];
  const server = track(
    await startHttp((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('reached');
    }),
  );
  return Object.assign(server, { seen });
}

function dns(names: Record<string, string>): Resolver {
  return async (host) => {
    const address = names[host];
    if (address === undefined) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
}

describe('loopback through the IPv4-mapped unspecified address (network: {})', () => {
  it('refuses the literal [::ffff:0.0.0.0] and the server sees nothing', async () => {
    const server = await countingServer();
    const http = track(createHttpClient({ network: {} }));
    for (const host of ['[::ffff:0.0.0.0]', '[::ffff:0:0]', '[::ffff:0.0.0.1]', '[::]', '0.0.0.0']) {
      const err = await http.fetch(`http://${host}:${server.port}/`).catch((e: unknown) => e);
      expect(policyError(err)?.reason, host).toBe('unspecified');
    }
    expect(server.seen).toEqual([]);
  });

  it('refuses a name whose DNS answer is ::ffff:0.0.0.0', async () => {
    const server = await countingServer();
    const http = track(createHttpClient({ network: { resolve: dns({ 'rebind.test': '::ffff:0.0.0.0' }) } }));
    const err = await http.fetch(`http://rebind.test:${server.port}/`).catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('unspecified');
    expect(server.seen).toEqual([]);
  });

  it('refuses a 307 redirect from an allowed host to the mapped unspecified address', async () => {
    const target = await countingServer();
    const allowed = track(
      await startHttp((_req, res) =>
        res.writeHead(307, { location: `http://[::ffff:0.0.0.0]:${target.port}/steal` }).end(),
      ),
    );
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] } }));
    const err = await http.fetch(`${allowed.url}/start`).catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('unspecified');
    expect(target.seen).toEqual([]);
  });

  it('a manager refuses an MCP server URL written that way, and the server is never contacted', async () => {
    const server = await countingServer();
    const manager = track(new MCPClientManager({ network: {}, capabilities: new CapabilitySet() }));
    const err = await manager
      .connectServer({ name: 'mapped', transport: 'http', url: `http://[::ffff:0.0.0.0]:${server.port}/mcp` })
      .catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('unspecified');
    expect(server.seen).toEqual([]);
  });
});

describe('address classification follows the IANA special-purpose registries', () => {
  it.each<[string, AddressKind]>([
    // IPv4
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.5.5.5', 'loopback'],
    ['10.255.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['169.254.1.1', 'link-local'],
    ['192.0.0.9', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.7', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['1.1.1.1', 'public'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    // IPv4-mapped (::ffff:0:0/96): as its IPv4 part, the unspecified one included
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:0:0', 'unspecified'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:8.8.8.8', 'public'],
    // IPv4-translated (::ffff:0:0:0/96) and IPv4-compatible (::/96, deprecated)
    ['::ffff:0:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::a9fe:a9fe', 'link-local'],
    ['::8.8.8.8', 'reserved'],
    // NAT64: the well-known prefix is as public as its IPv4 part; the local-use prefix is never public
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1:808:8:800::', 'private'],
    ['64:ff9b:1:7f00:0:100::', 'loopback'],
    // 6to4 with the embedded IPv4 checked
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a9fe:a9fe::', 'link-local'],
    ['2002:808:808::1', 'public'],
    // Teredo: server and (obfuscated) client addresses both checked
    ['2001:0:808:808:0:0:80ff:fffe', 'loopback'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('cloud metadata endpoints are refused by default, whatever their range', () => {
  it.each([...METADATA_ADDRESSES.keys()])('%s is refused even with allowPrivate', (address) => {
    const guard = new NetworkGuard({ allowPrivate: true });
    expect(() => guard.checkAddress(address, address)).toThrow(/cloud metadata endpoint/);
  });

  it('AWS over IPv6 and Alibaba are refused with reason metadata; wrapped forms too', () => {
    const guard = new NetworkGuard({ allowPrivate: true });
    for (const address of [
      'fd00:ec2::254',
      '100.100.100.200',
      '::ffff:100.100.100.200',
      '64:ff9b::6464:64c8',
    ]) {
      const err = (() => {
        try {
          guard.checkAddress('metadata.test', address);
        } catch (e) {
          return e;
        }
      })();
      expect(policyError(err)?.reason, address).toBe('metadata');
    }
  });

  it('a range or a host name in allowHosts does not allow one; the exact address does', () => {
    const broad = new NetworkGuard({ allowHosts: ['100.64.0.0/10', 'fd00::/8', 'metadata.test'] });
    expect(() => broad.checkAddress('metadata.test', '100.100.100.200')).toThrow(/cloud metadata/);
    expect(() => broad.checkAddress('x', 'fd00:ec2::254')).toThrow(/cloud metadata/);
    const exact = new NetworkGuard({ allowHosts: ['100.100.100.200', 'FD00:EC2:0::254'] });
    expect(() => exact.checkAddress('x', '100.100.100.200')).not.toThrow();
    expect(() => exact.checkAddress('x', 'fd00:ec2::254')).not.toThrow();
  });

  it('a name resolving to the Alibaba endpoint is refused before any socket opens (default policy)', async () => {
    const http = track(
      createHttpClient({ network: { allowPrivate: true, resolve: dns({ 'meta.test': '100.100.100.200' }) } }),
    );
    const err = await http.fetch('http://meta.test/latest/meta-data/').catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('metadata');
  });
});

describe('proxy routes come from one derivation', () => {
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('an explicit { https } proxy sends http:// targets direct through the guard, never to HTTP_PROXY', async () => {
    const server = await countingServer();
    const envProxy = track(await startCountingProxy());
    const httpsProxy = track(await startCountingProxy());
    process.env.HTTP_PROXY = envProxy.url;
    delete process.env.http_proxy;
    const http = track(createHttpClient({ network: {}, http: { proxy: { https: httpsProxy.url } } }));
    const err = await http.fetch(`${server.url}/`).catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('loopback');
    expect(envProxy.connects.length + envProxy.requests.length).toBe(0);
    expect(httpsProxy.connects.length + httpsProxy.requests.length).toBe(0);
    expect(server.seen).toEqual([]);
  });

  it('with proxy: env, an http:// target goes through HTTP_PROXY and is pre-checked by the guard', async () => {
    const server = await countingServer();
    const envProxy = track(await startCountingProxy());
    process.env.HTTP_PROXY = envProxy.url;
    delete process.env.http_proxy;
    const strict = track(createHttpClient({ network: {} }));
    const err = await strict.fetch(`${server.url}/`).catch((e: unknown) => e);
    expect(policyError(err)?.reason).toBe('loopback');
    expect(envProxy.connects.length + envProxy.requests.length).toBe(0);
    const open = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] } }));
    const res = await open.fetch(`${server.url}/via-proxy`);
    expect(await res.text()).toBe('reached');
    // undici tunnels plain http through the proxy too (CONNECT).
    expect([...envProxy.connects, ...envProxy.requests]).toEqual([`127.0.0.1:${server.port}`]);
  });
});
