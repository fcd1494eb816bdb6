import { afterEach, describe, expect, it } from 'vitest';
import { commandHeaders, wrapServerFetch } from '../../src/auth/index.js';
import { createHttpClient } from '../../src/interop/http.js';
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
});
