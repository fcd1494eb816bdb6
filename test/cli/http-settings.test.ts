/**
 * The project file's `network` and `http` sections and a server's own `tls` / `proxy`, through the CLI as a real
 * process: certificate files relative to the project file, the SSRF guard refusing a loopback server, a proxy URL
 * whose password comes from a variable and is never printed, and unreadable files reported by path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture } from '../helpers/index.js';
import {
  hasOpenssl,
  makePki,
  type Running,
  startCountingProxy,
  startMtlsMcpServer,
} from '../remote/net-fixtures.js';
import { runCli, type TempProject, tempProject } from './helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanup.splice(0).map((c) => c()));
});
function project(): TempProject {
  const p = tempProject();
  cleanup.push(() => p.close());
  return p;
}
function track<T extends { close(): Promise<void> }>(thing: T): T {
  cleanup.push(() => thing.close());
  return thing;
}

const allowWhoami = {
  version: 1,
  rules: [
    { effect: 'allow', resource: 'mcp:secure:whoami', actions: 'execute' },
    { effect: 'allow', resource: 'mcp:remote:echo', actions: 'execute' },
  ],
};

describe.skipIf(!hasOpenssl())('certificates from the project file', () => {
  it('reads the CA from http.tls and the client certificate from the server, relative to the file', async () => {
    const pki = makePki();
    const server: Running = track(await startMtlsMcpServer(pki));
    const p = project();
    p.write('certs/ca.pem', pki.ca);
    p.write('certs/client.pem', pki.clientCert);
    p.write('certs/client.key', pki.clientKey);
    p.write('interlock.config.yaml', {
      mcpServers: {
        secure: {
          type: 'http',
          url: server.url,
          tls: { certFile: 'certs/client.pem', keyFile: 'certs/client.key' },
        },
      },
      http: { proxy: 'none', tls: { caFile: 'certs/ca.pem' } },
      policy: allowWhoami,
    });
    const result = await runCli(['call', 'mcp__secure__whoami'], { cwd: p.dir });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('client=client');
    expect(result.code).toBe(0);
  });

  it('names the unreadable certificate file and exits 2 before connecting anything', async () => {
    const p = project();
    p.write('interlock.config.yaml', {
      mcpServers: { remote: { type: 'http', url: 'https://127.0.0.1:9/mcp' } },
      http: { tls: { caFile: 'missing/ca.pem' } },
      policy: allowWhoami,
    });
    const result = await runCli(['servers'], { cwd: p.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('missing/ca.pem');
    expect(result.stderr).toContain('ENOENT');
  });
});

describe('network and proxy settings from the project file', () => {
  it('refuses a loopback server under network: {} and reaches it once 127.0.0.1 is allowed', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const p = project();
    const write = (network: object) =>
      p.write('interlock.config.yaml', {
        mcpServers: { remote: { type: 'http', url: fixture.endpoint, reconnect: { enabled: false } } },
        network,
        http: { proxy: 'none' },
        policy: allowWhoami,
      });
    write({});
    const refused = await runCli(['call', 'mcp__remote__echo', '--args', '{"text":"hi"}'], { cwd: p.dir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/loopback address/);
    write({ allowHosts: ['127.0.0.1'] });
    const allowed = await runCli(['call', 'mcp__remote__echo', '--args', '{"text":"hi"}'], { cwd: p.dir });
    expect(allowed.stdout).toContain('hi');
    expect(allowed.code).toBe(0);
  });

  it('sends a server through its own proxy URL, whose password from a variable is never printed', async () => {
    const fixture = track(await startHttpFixture({ transport: 'http' }));
    const proxy = track(await startCountingProxy());
    const p = project();
    const withCredentials = proxy.url.replace('http://', 'http://user:${PROXY_PASSWORD}@');
    p.write('interlock.config.yaml', {
      mcpServers: { remote: { type: 'http', url: fixture.endpoint, proxy: withCredentials } },
      http: { proxy: 'none' },
      policy: allowWhoami,
    });
    const result = await runCli(['servers', '--verbose'], {
      cwd: p.dir,
      env: { PROXY_PASSWORD: 'pr0xy-pa55word' },
    });
    expect(result.code).toBe(0);
    expect(proxy.connects.length + proxy.requests.length).toBeGreaterThan(0);
    expect(`${result.stdout}${result.stderr}`).not.toContain('pr0xy-pa55word');
  });

  it('explains a bad value in the http section with its path', async () => {
    const p = project();
    p.write('interlock.config.yaml', {
      mcpServers: { remote: { type: 'http', url: 'https://example.test/mcp' } },
      http: { proxy: 'ftp://proxy.example:21', connections: 0 },
      policy: allowWhoami,
    });
    const result = await runCli(['servers'], { cwd: p.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('http.proxy');
    expect(result.stderr).toContain('http.connections');
  });
});
