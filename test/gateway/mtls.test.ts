// Client certificates as the caller's identity (issue 17): the gateway over HTTPS with mTLS, a real PKI made
// with openssl at test time, real TLS handshakes on loopback.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/index.js';
import { hasOpenssl, makePki, type TestPki } from '../remote/net-fixtures.js';

const KEY = 'optional-mode-key-0123456789';

describe.skipIf(!hasOpenssl())('the gateway with client certificates', () => {
  let pki: TestPki;
  let manager: MCPClientManager;
  const audit = new MemoryAuditSink();

  beforeAll(async () => {
    pki = makePki();
    manager = new MCPClientManager({
      capabilities: CapabilitySet.fromPolicy({
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
      }),
    });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  });
  afterAll(async () => {
    await manager?.close();
  });

  async function gatewayWith(mode: 'optional' | 'required') {
    const gateway = new Gateway({
      manager,
      audit,
      config: {
        auth: mode === 'optional' ? { apiKeys: [{ key: KEY, subject: 'key-holder' }] } : undefined,
        http: {
          port: 0,
          tls: {
            cert: pki.serverCert,
            key: pki.serverKey,
            clientCa: pki.ca,
            clientCertificates: mode,
          },
        },
      },
    });
    const { url } = await gateway.listen();
    return { gateway, url };
  }

  function connect(url: URL, withCertificate: boolean, token?: string) {
    const dispatcher = new Agent({
      connect: {
        ca: pki.ca,
        ...(withCertificate ? { cert: pki.clientCert, key: pki.clientKey } : {}),
      },
    });
    const client = new Client({ name: 'mtls-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url, {
      fetch: ((input: string | URL, init?: RequestInit) =>
        undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
      ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    });
    return { client, connected: client.connect(transport), dispatcher };
  }

  it('names the caller by the certificate subject and decides its calls', async () => {
    const { gateway, url } = await gatewayWith('required');
    try {
      expect(url.protocol).toBe('https:');
      const { client, connected, dispatcher } = connect(url, true);
      await connected;
      const result = await client.callTool({ name: 'mcp__echo__echo', arguments: { text: 'over mTLS' } });
      expect(JSON.stringify(result.content)).toContain('over mTLS');
      expect(audit.records.at(-1)).toMatchObject({ principal: 'client', effect: 'allow' });
      await client.close();
      await dispatcher.close();
    } finally {
      await gateway.close();
    }
  });

  it('refuses a connection without a certificate when certificates are required', async () => {
    const { gateway, url } = await gatewayWith('required');
    try {
      const { connected, dispatcher } = connect(url, false);
      await expect(connected).rejects.toThrow();
      await dispatcher.close();
    } finally {
      await gateway.close();
    }
  });

  it('refuses a request with both a client certificate and a bearer token (two identities), with 400', async () => {
    const { gateway, url } = await gatewayWith('optional');
    try {
      const { connected, dispatcher } = connect(url, true, KEY);
      await expect(connected).rejects.toThrow(/both a client certificate and an Authorization header/);
      await dispatcher.close();
    } finally {
      await gateway.close();
    }
  });

  it('falls back to a bearer credential when certificates are optional and none is sent', async () => {
    const { gateway, url } = await gatewayWith('optional');
    try {
      const { client, connected, dispatcher } = connect(url, false, KEY);
      await connected;
      await client.callTool({ name: 'mcp__echo__echo', arguments: { text: 'with a key' } });
      expect(audit.records.at(-1)).toMatchObject({ principal: 'key-holder' });
      await client.close();
      await dispatcher.close();
      const anonymous = connect(url, false);
      await expect(anonymous.connected).rejects.toThrow(/invalid_token/);
      await anonymous.dispatcher.close();
    } finally {
      await gateway.close();
    }
  });
});
