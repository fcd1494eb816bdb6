/**
 * Per-server TLS and proxy settings on top of the manager's HTTP stack, and one HTTP stack shared by several
 * managers (what an engine does): real HTTPS MCP servers with their own CAs that require client certificates,
 * and a real counting proxy, all on 127.0.0.1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient, MAX_SERVER_DISPATCHERS } from '../../src/net/http.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startHttpFixture, waitUntil } from '../helpers/index.js';
import { closesAfterEach } from './cleanup.js';
import { hasOpenssl, makePki, startCountingProxy, startMtlsMcpServer, type TestPki } from './net-fixtures.js';

/** These tests are about the network, not the policy: allowAll()'s loud warning is expected here. */
const ignoreWarning = (): void => {};

const track = closesAfterEach();

const dir = mkdtempSync(join(tmpdir(), 'interlock-server-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes the PEM files of `pki` under `dir/name/` and returns their paths. */
function pemFiles(pki: TestPki, name: string): { ca: string; cert: string; key: string } {
  const out = {
    ca: join(dir, `${name}-ca.pem`),
    cert: join(dir, `${name}-cert.pem`),
    key: join(dir, `${name}-key.pem`),
  };
  writeFileSync(out.ca, pki.ca);
  writeFileSync(out.cert, pki.clientCert);
  writeFileSync(out.key, pki.clientKey, { mode: 0o600 });
  return out;
}

const loopback = { allowHosts: ['127.0.0.1'] };

/** A manager that may reach 127.0.0.1, directly, closed after the test. */
function loopbackManager(): MCPClientManager {
  return track(
    new MCPClientManager({
      network: loopback,
      http: { proxy: 'none' },
      capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
    }),
  );
}

describe.skipIf(!hasOpenssl())('per-server TLS', () => {
  let pkis: [TestPki, TestPki] | undefined;
  const getPkis = () => {
    pkis ??= [makePki(), makePki()];
    return pkis;
  };

  it('connects two servers with different private CAs and client certificates, each from its own files', async () => {
    const [a, b] = getPkis();
    const serverA = track(await startMtlsMcpServer(a));
    const serverB = track(await startMtlsMcpServer(b));
    const filesA = pemFiles(a, 'a');
    const manager = loopbackManager();
    const results = await manager.connectAll([
      {
        name: 'a',
        transport: 'http',
        url: serverA.url,
        tls: { caFile: filesA.ca, certFile: filesA.cert, keyFile: filesA.key },
      },
      // PEM text works as well as files.
      {
        name: 'b',
        transport: 'http',
        url: serverB.url,
        tls: { ca: b.ca, cert: b.clientCert, key: b.clientKey },
      },
    ]);
    expect(results).toEqual({ a: true, b: true });
    expect(await manager.getTool('mcp__a__whoami')?.execute({})).toBe('client=client');
    expect(await manager.getTool('mcp__b__whoami')?.execute({})).toBe('client=client');
  });

  it("fails a server whose CA or client certificate is another server's", async () => {
    const [a, b] = getPkis();
    const serverA = track(await startMtlsMcpServer(a));
    const manager = loopbackManager();
    const common = { transport: 'http', url: serverA.url, reconnect: { enabled: false } } as const;
    const results = await manager.connectAll([
      { name: 'noTls', ...common },
      { name: 'wrongCa', ...common, tls: { ca: b.ca, cert: a.clientCert, key: a.clientKey } },
      { name: 'wrongCert', ...common, tls: { ca: a.ca, cert: b.clientCert, key: b.clientKey } },
    ]);
    expect(results).toEqual({ noTls: false, wrongCa: false, wrongCert: false });
  });

  it('adds a server CA to the manager CAs and lets the server bring its own client certificate', async () => {
    const [a] = getPkis();
    const serverA = track(await startMtlsMcpServer(a));
    const manager = track(
      new MCPClientManager({
        network: loopback,
        http: { proxy: 'none', tls: { ca: a.ca } },
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    await manager.connectServer({
      name: 'a',
      transport: 'http',
      url: serverA.url,
      tls: { cert: a.clientCert, key: a.clientKey },
    });
    expect(await manager.getTool('mcp__a__whoami')?.execute({})).toBe('client=client');
  });

  it('fails only that server, with INVALID_CONFIG naming the field and path, when a file cannot be read', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const manager = loopbackManager();
    const missing = join(dir, 'does-not-exist.pem');
    const failures: Error[] = [];
    manager.on('connection_failed', (e) => failures.push(e.error));
    const results = await manager.connectAll([
      { name: 'plain', transport: 'http', url: fixture.endpoint },
      {
        name: 'broken',
        transport: 'http',
        url: fixture.endpoint,
        tls: { caFile: missing },
        reconnect: { enabled: false },
      },
    ]);
    expect(results).toEqual({ plain: true, broken: false });
    expect(failures).toHaveLength(1);
    const [error] = failures;
    const chain: string[] = [];
    for (let e: unknown = error; e instanceof Error; e = e.cause)
      chain.push(`${(e as { code?: string }).code} ${e.message}`);
    expect(chain.join('\n')).toContain('INVALID_CONFIG');
    expect(chain.join('\n')).toContain(`tls.caFile '${missing}'`);
  });

  it('reads the files again for each connect attempt: a reconnect picks up fixed or rotated certificates', async () => {
    const [a, b] = getPkis();
    const serverA = track(await startMtlsMcpServer(a));
    const files = pemFiles(b, 'rotating'); // another CA's material first: the connect fails
    const manager = loopbackManager();
    const results = await manager.connectAll([
      {
        name: 'a',
        transport: 'http',
        url: serverA.url,
        reconnect: { initialDelayMs: 0 },
        tls: { caFile: files.ca, certFile: files.cert, keyFile: files.key },
      },
    ]);
    expect(results).toEqual({ a: false });
    writeFileSync(files.ca, a.ca);
    writeFileSync(files.cert, a.clientCert);
    writeFileSync(files.key, a.clientKey);
    expect(await manager.reconnectServer('a')).toBe(true);
    expect(await manager.getTool('mcp__a__whoami')?.execute({})).toBe('client=client');
  });

  it('refuses a certificate without its key, and a field given both as text and as a file', async () => {
    const manager = track(new MCPClientManager());
    const base = { name: 'x', transport: 'http', url: 'https://example.test/mcp' } as const;
    await expect(manager.connectServer({ ...base, tls: { cert: 'PEM' } })).rejects.toThrow(
      /needs both a certificate/,
    );
    await expect(
      manager.connectServer({ ...base, tls: { key: 'k', keyFile: '/k.pem', cert: 'c' } }),
    ).rejects.toThrow(/set key or keyFile, not both/);
  });
});

describe('per-server proxy', () => {
  it('sends one server through its proxy and the other directly', async () => {
    const viaProxy = track(await startHttpFixture({ transport: 'http' }));
    const direct = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const manager = loopbackManager();
    const results = await manager.connectAll([
      { name: 'proxied', transport: 'http', url: viaProxy.endpoint, proxy: proxy.url },
      { name: 'direct', transport: 'http', url: direct.endpoint },
    ]);
    expect(results).toEqual({ proxied: true, direct: true });
    const seen = [...proxy.connects, ...proxy.requests];
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.includes(`127.0.0.1:${viaProxy.port}`))).toBe(true);
    expect(seen.some((s) => s.includes(`:${direct.port}`))).toBe(false);
  });

  it("bypasses the manager's proxy for a server with proxy: 'none'", async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const manager = track(
      new MCPClientManager({
        network: loopback,
        http: { proxy: { http: proxy.url, https: proxy.url } },
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    await manager.connectServer({ name: 'direct', transport: 'http', url: fixture.endpoint, proxy: 'none' });
    await manager.getTool('mcp__direct__echo')?.execute({ text: 'hi' });
    expect(proxy.connects.length + proxy.requests.length).toBe(0);
  });
});

describe('a shared HTTP client', () => {
  it(`keeps the dispatchers of at most ${MAX_SERVER_DISPATCHERS} distinct server settings, closing the oldest`, async () => {
    const open = new Set<Socket>();
    const server = createServer((_req, res) => res.end('ok'));
    server.on('connection', (socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    track({
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const client = track(createHttpClient({ network: loopback, http: { proxy: 'none' } }));
    // Settings that differ (a CA each, unused over plain HTTP) get a dispatcher, and so a socket, each.
    const fetches = Array.from({ length: MAX_SERVER_DISPATCHERS + 1 }, (_, i) =>
      client.fetchFor({ tls: { ca: `# setting ${i}` } }),
    );
    for (const f of fetches.slice(0, -1)) expect(await (await f(url)).text()).toBe('ok');
    expect(open.size).toBe(MAX_SERVER_DISPATCHERS);
    expect(await (await (fetches.at(-1) as FetchLike)(url)).text()).toBe('ok');
    await waitUntil(() => open.size === MAX_SERVER_DISPATCHERS, {
      message: 'the oldest dispatcher was not closed',
    });
    // A fetch whose dispatcher was let go still works: it gets a new one.
    expect(await (await (fetches[0] as FetchLike)(url)).text()).toBe('ok');
  });

  it('serves several managers; closing one leaves the client working for the others', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const httpClient = track(createHttpClient({ network: loopback, http: { proxy: 'none' } }));
    const first = new MCPClientManager({
      httpClient,
      capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
    });
    const second = track(
      new MCPClientManager({
        httpClient,
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    await first.connectServer({ name: 'echo', transport: 'http', url: fixture.endpoint });
    await second.connectServer({ name: 'echo', transport: 'http', url: fixture.endpoint });
    await first.close();
    expect(await second.getTool('mcp__echo__echo')?.execute({ text: 'still here' })).toContain('still here');
  });

  it("applies the shared client's guard to every manager", async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const httpClient = track(createHttpClient({ network: {}, http: { proxy: 'none' } }));
    const manager = track(
      new MCPClientManager({
        httpClient,
        capabilities: CapabilitySet.allowAll({ onWarning: ignoreWarning }),
      }),
    );
    const err = await manager
      .connectServer({
        name: 'echo',
        transport: 'http',
        url: fixture.endpoint,
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/loopback/);
  });

  it('refuses fetch, network or http next to httpClient', () => {
    const httpClient = track(createHttpClient());
    expect(() => new MCPClientManager({ httpClient, network: {} })).toThrow(ConfigError);
    expect(() => new MCPClientManager({ httpClient, http: { proxy: 'none' } })).toThrow(/drop http/);
  });

  it('refuses per-server TLS when HTTP goes through a caller-supplied fetch', async () => {
    const manager = track(new MCPClientManager({ fetch: (url, init) => fetch(url, init) }));
    const err = await manager
      .connectServer({
        name: 'x',
        transport: 'http',
        url: 'http://127.0.0.1:9/mcp',
        tls: { ca: 'PEM' },
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    const chain: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e.message);
    expect(chain.join('\n')).toMatch(/custom fetch that cannot apply them/);
  });
});
