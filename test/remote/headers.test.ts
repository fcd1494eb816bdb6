import { afterEach, describe, expect, it } from 'vitest';
import { commandHeaders, wrapServerFetch } from '../../src/auth/server-auth.js';
import { createHttpClient } from '../../src/net/http.js';
import { startHttp } from './net-fixtures.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanup.splice(0).map((c) => c()));
});

describe('dynamic headers', () => {
  it('fetches headers once, and again when the server answers 401, then retries the request', async () => {
    let validKey = 'key-1';
    const seen: string[] = [];
    const server = await startHttp((req, res) => {
      const key = String(req.headers['x-api-key']);
      seen.push(key);
      res.writeHead(key === validKey ? 200 : 401).end(key === validKey ? 'ok' : '');
    });
    cleanup.push(() => server.close());
    const http = createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } });
    cleanup.push(() => http.close());
    let n = 0;
    const fetch = wrapServerFetch(http.fetch, {
      serverUrl: `${server.url}/mcp`,
      server: 'remote',
      headers: async () => ({ 'x-api-key': `key-${++n}` }),
    });
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(n).toBe(1);
    validKey = 'key-2'; // the key rotated on the server side
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(n).toBe(2);
    expect(seen).toEqual(['key-1', 'key-1', 'key-1', 'key-2']);
  });

  it('runs a headersHelper command and reads a JSON object from its stdout', async () => {
    const source = commandHeaders({
      command: process.execPath,
      args: ['-e', 'process.stdout.write(JSON.stringify({ "x-token": "from-helper", n: 1 }))'],
    });
    expect(await source({ server: 's', url: 'https://example.com/mcp' })).toEqual({
      'x-token': 'from-helper',
    });
  });

  it('names the command but not its output when a helper fails', async () => {
    const source = commandHeaders({
      command: process.execPath,
      args: ['-e', 'process.stdout.write("secret-value"); process.exit(3)'],
    });
    const err = await source({ server: 's', url: 'https://example.com/mcp' }).catch(
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(/headersHelper/);
    expect(err.message).not.toContain('secret-value');
  });
});

describe('no token passthrough', () => {
  it('sends a bearer token only to the origin of the server it was issued for', async () => {
    const sent: { url: string; authorization: string | null }[] = [];
    const base = async (url: string | URL, init?: RequestInit) => {
      sent.push({ url: String(url), authorization: new Headers(init?.headers).get('authorization') });
      return new Response('{}');
    };
    const fetch = wrapServerFetch(base, { serverUrl: 'https://mcp.example.com/mcp', server: 'remote' });
    const headers = { authorization: 'Bearer token-for-mcp' };
    await fetch('https://mcp.example.com/mcp', { method: 'POST', headers });
    await fetch('https://other.example.net/collect', { method: 'POST', headers });
    await fetch('https://mcp.example.com:8443/mcp', { method: 'POST', headers });
    expect(sent.map((s) => s.authorization)).toEqual(['Bearer token-for-mcp', null, null]);
  });

  it('sends a DPoP-bound token and its proof only to the origin of the server it was issued for', async () => {
    const sent: { authorization: string | null; dpop: string | null }[] = [];
    const base = async (_url: string | URL, init?: RequestInit) => {
      const h = new Headers(init?.headers);
      sent.push({ authorization: h.get('authorization'), dpop: h.get('dpop') });
      return new Response('{}');
    };
    const fetch = wrapServerFetch(base, { serverUrl: 'https://mcp.example.com/mcp', server: 'remote' });
    const headers = { authorization: 'DPoP token-for-mcp', dpop: 'proof-for-mcp' };
    await fetch('https://mcp.example.com/mcp', { method: 'POST', headers });
    await fetch('https://other.example.net/collect', { method: 'POST', headers });
    expect(sent).toEqual([
      { authorization: 'DPoP token-for-mcp', dpop: 'proof-for-mcp' },
      { authorization: null, dpop: null },
    ]);
  });
});

describe('auth on any request: the 401 retry', () => {
  it('retries a 401 once with the new token, and leaves DPoP-bound requests to the DPoP layer', async () => {
    const sent: (string | null)[] = [];
    const base = async (_url: string | URL, init?: RequestInit) => {
      const authorization = new Headers(init?.headers).get('authorization');
      sent.push(authorization);
      return new Response('{}', { status: authorization === 'Bearer fresh' ? 200 : 401 });
    };
    let signIns = 0;
    const fetch = wrapServerFetch(base, {
      serverUrl: 'https://mcp.example.com/mcp',
      server: 'remote',
      onUnauthorized: async () => {
        signIns++;
        return 'fresh';
      },
    });
    const bearer = await fetch('https://mcp.example.com/mcp', {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'Bearer stale' },
    });
    expect(bearer.status).toBe(200);
    expect(sent).toEqual(['Bearer stale', 'Bearer fresh']);
    // A replayed DPoP proof would be refused (RFC 9449 4.3), and Bearer would downgrade the token: no retry here.
    const dpop = await fetch('https://mcp.example.com/mcp', {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'DPoP stale', dpop: 'proof' },
    });
    expect(dpop.status).toBe(401);
    expect(signIns).toBe(1);
  });

  it('does not retry while inactive (during connect the SDK signs in)', async () => {
    const base = async () => new Response('{}', { status: 401 });
    let signIns = 0;
    const fetch = wrapServerFetch(base, {
      serverUrl: 'https://mcp.example.com/mcp',
      server: 'remote',
      active: () => false,
      onUnauthorized: async () => {
        signIns++;
        return 'fresh';
      },
    });
    expect((await fetch('https://mcp.example.com/mcp', { method: 'POST', body: '{}' })).status).toBe(401);
    expect(signIns).toBe(0);
  });
});
