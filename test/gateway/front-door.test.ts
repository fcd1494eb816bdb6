// The gateway's HTTP front door (issue 38): ambiguous credentials, Host on every path, metrics behind an
// operator's credential, and Origin on a loopback gateway without auth. Raw HTTP requests (node:http, which can
// send a header twice) against real listeners; the upstream fixture's own request log shows what reached it.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';

const ALICE_KEY = 'alice-key-0123456789abcdef';
const BOB_KEY = 'bob-key-0123456789abcdef01';
const OPS_KEY = 'ops-key-0123456789abcdef012';

let log: FixtureLog;
let manager: MCPClientManager;
let secured: Gateway;
let open: Gateway;
let securedUrl: URL;
let openUrl: URL;

beforeAll(async () => {
  log = createFixtureLog();
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
    }),
  });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
  secured = new Gateway({
    manager,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE_KEY, subject: 'alice' },
          { key: BOB_KEY, subject: 'bob' },
          { key: OPS_KEY, subject: 'ops' },
        ],
      },
      // One way in (API keys): the shorthand `subjects` is unambiguous here.
      principals: [
        {
          match: { subjects: ['alice'] },
          rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
        },
      ],
      operators: { subjects: ['ops'] },
      http: { port: 0 },
    },
  });
  ({ url: securedUrl } = await secured.listen());
  // No auth: loopback only, every local caller gets the project policy. A web page must not be one of them.
  open = new Gateway({
    manager,
    config: { http: { port: 0, allowedOrigins: ['https://console.example.com'] } },
  });
  ({ url: openUrl } = await open.listen());
});

afterAll(async () => {
  await secured?.close();
  await open?.close();
  await manager?.close();
  await log?.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request exactly as given: header values that are arrays are sent as repeated headers. */
function raw(
  url: URL,
  options: { method?: string; path?: string; headers?: Record<string, string | string[]>; body?: string },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'POST',
        path: options.path ?? url.pathname,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    for (const [name, value] of Object.entries(options.headers ?? {})) req.setHeader(name, value);
    req.on('error', reject);
    req.end(options.body);
  });
}

let nextId = 1;

/** A stateless 2025-11-25 `tools/call` of echo, as a client would POST it. */
function callEcho(url: URL, text: string, headers: Record<string, string | string[]> = {}) {
  return raw(url, {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: 'mcp__echo__echo', arguments: { text } },
    }),
  });
}

const echoed = (text: string) =>
  log.toolCalls('echo').filter((c) => (c.args as { text?: string }).text === text);

describe('credentials', () => {
  it('runs a call with one well-formed credential (the baseline the refusals below differ from)', async () => {
    const answer = await callEcho(securedUrl, 'baseline', { authorization: `Bearer ${ALICE_KEY}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('baseline');
    expect(echoed('baseline')).toHaveLength(1);
  });

  it('refuses two Authorization headers with 400 invalid_request, and the call never reaches the server', async () => {
    const answer = await callEcho(securedUrl, 'two headers', {
      authorization: [`Bearer ${ALICE_KEY}`, `Bearer ${BOB_KEY}`],
    });
    expect(answer.status).toBe(400);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer error="invalid_request"/);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' });
    expect(answer.body).toContain('2 Authorization headers');
    expect(echoed('two headers')).toEqual([]);
  });

  it('refuses a valid key followed by a second header that is not a credential', async () => {
    const answer = await callEcho(securedUrl, 'valid then junk', {
      authorization: [`Bearer ${ALICE_KEY}`, 'junk'],
    });
    expect(answer.status).toBe(400);
    expect(echoed('valid then junk')).toEqual([]);
  });

  it.each([
    ['a key followed by junk', `Bearer ${ALICE_KEY} junk`],
    ['two keys in one header', `Bearer ${ALICE_KEY}, Bearer ${BOB_KEY}`],
    ['a key after a comma', `Bearer ${ALICE_KEY},${BOB_KEY}`],
  ])('refuses %s with 400 invalid_request, and the call never reaches the server', async (what, value) => {
    const answer = await callEcho(securedUrl, what, { authorization: value });
    expect(answer.status).toBe(400);
    expect(answer.headers['www-authenticate']).toContain('invalid_request');
    expect(answer.body).not.toContain(ALICE_KEY);
    expect(echoed(what)).toEqual([]);
  });

  it('counts refused credentials in the rejected-requests metric', async () => {
    await callEcho(securedUrl, 'counted', { authorization: [`Bearer ${ALICE_KEY}`, `Bearer ${ALICE_KEY}`] });
    const metrics = await raw(securedUrl, {
      method: 'GET',
      path: '/metrics',
      headers: { authorization: `Bearer ${OPS_KEY}` },
    });
    expect(metrics.body).toMatch(/interlock_gateway_rejected_requests_total\{status="400"\} [1-9]/);
  });
});

describe('Host on every path', () => {
  it.each(['/mcp', '/healthz', '/readyz', '/metrics', '/nowhere'])(
    'refuses %s for a Host it does not serve (DNS rebinding)',
    async (path) => {
      for (const url of [securedUrl, openUrl]) {
        const answer = await raw(url, {
          method: 'GET',
          path,
          headers: { host: `evil.example:${url.port}`, authorization: `Bearer ${OPS_KEY}` },
        });
        expect(answer.status).toBe(403);
        expect(answer.body).not.toContain('interlock_gateway');
        expect(answer.body).not.toContain('echo');
      }
    },
  );

  it('still answers /healthz and /readyz to its own Host without a credential', async () => {
    expect((await raw(securedUrl, { method: 'GET', path: '/healthz' })).status).toBe(200);
    expect((await raw(securedUrl, { method: 'GET', path: '/readyz' })).status).toBe(200);
  });
});

describe('metrics', () => {
  const scrape = (url: URL, headers: Record<string, string> = {}) =>
    raw(url, { method: 'GET', path: '/metrics', headers });

  it('refuses a scrape without a credential with 401', async () => {
    const answer = await scrape(securedUrl);
    expect(answer.status).toBe(401);
    expect(answer.body).not.toContain('interlock_gateway');
  });

  it("refuses a caller's credential that is not an operator's with 403", async () => {
    const answer = await scrape(securedUrl, { authorization: `Bearer ${ALICE_KEY}` });
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain('interlock_gateway');
    expect(answer.body).not.toContain('operators');
  });

  it("serves an operator's credential", async () => {
    const answer = await scrape(securedUrl, { authorization: `Bearer ${OPS_KEY}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('interlock_gateway_upstream_up{server="echo"} 1');
  });

  it('serves the local callers of a loopback gateway without auth', async () => {
    expect((await scrape(openUrl)).status).toBe(200);
  });
});

describe('Origin', () => {
  it('refuses a request from a web page on another origin, and the call never reaches the server', async () => {
    const answer = await callEcho(openUrl, 'from a web page', { origin: 'https://evil.example' });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('Origin');
    expect(answer.body).not.toContain('allowedOrigins');
    expect(echoed('from a web page')).toEqual([]);
  });

  it.each([
    ['the opaque origin', 'null'],
    ['a loopback name on another scheme', 'file://localhost'],
    ['a look-alike of an allowed origin', 'https://console.example.com.evil.example'],
    ['an allowed origin on another port', 'https://console.example.com:8443'],
    ['two origins', 'https://console.example.com, https://evil.example'],
  ])('refuses %s', async (what, origin) => {
    const answer = await callEcho(openUrl, `origin: ${what}`, { origin });
    expect(answer.status).toBe(403);
    expect(echoed(`origin: ${what}`)).toEqual([]);
  });

  it('refuses a cross-origin request even with a valid credential', async () => {
    const answer = await callEcho(securedUrl, 'credentialed page', {
      origin: 'https://evil.example',
      authorization: `Bearer ${ALICE_KEY}`,
    });
    expect(answer.status).toBe(403);
    expect(echoed('credentialed page')).toEqual([]);
  });

  it.each([
    ['its own origin', () => openUrl.origin],
    ['a loopback page on another port', () => 'http://localhost:5173'],
    ['an origin listed in http.allowedOrigins', () => 'https://console.example.com'],
  ])('serves %s', async (what, origin) => {
    const answer = await callEcho(openUrl, `allowed: ${what}`, { origin: origin() });
    expect(answer.status).toBe(200);
    expect(echoed(`allowed: ${what}`)).toHaveLength(1);
  });

  it('refuses loopback origins on a gateway that is not on loopback', async () => {
    // 127.0.0.2 is not one of the loopback names the gateway trusts: it stands in for a public address here.
    const gateway = new Gateway({
      manager,
      config: {
        auth: { apiKeys: [{ key: ALICE_KEY, subject: 'alice' }] },
        http: {
          port: 0,
          host: '127.0.0.2',
          resourceUrl: 'https://mcp.example.com/mcp',
          allowedHosts: ['127.0.0.2'],
        },
      },
    });
    const { port } = await gateway.listen();
    try {
      const url = new URL(`http://127.0.0.2:${port}/mcp`);
      const page = await callEcho(url, 'public gateway', {
        origin: 'http://localhost:5173',
        authorization: `Bearer ${ALICE_KEY}`,
      });
      expect(page.status).toBe(403);
      const own = await callEcho(url, 'public gateway, own origin', {
        origin: 'https://mcp.example.com',
        authorization: `Bearer ${ALICE_KEY}`,
      });
      expect(own.status).toBe(200);
      expect(echoed('public gateway')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
