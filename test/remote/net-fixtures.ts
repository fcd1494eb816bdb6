// Local servers for the HTTP-stack tests: a plain HTTP server, a counting forward proxy, and a TLS server with a
// self-signed CA (certificates made by the `openssl` CLI at test time). All listen on 127.0.0.1, port 0.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

export interface Running extends AsyncDisposable {
  url: string;
  port: number;
  close(): Promise<void>;
}

function running(server: Server, scheme: string, sockets: Set<Socket>): Running {
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
    return closed;
  };
  return { url: `${scheme}://127.0.0.1:${port}`, port, close, [Symbol.asyncDispose]: close };
}

async function listen(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}

/** An HTTP server answering with `handler`. */
export async function startHttp(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Running> {
  const server = createServer(handler);
  await listen(server);
  return running(server, 'http', new Set());
}

/** A forward proxy (CONNECT tunnels and absolute-form requests) that counts what passes through it. */
export async function startCountingProxy(): Promise<Running & { connects: string[]; requests: string[] }> {
  const connects: string[] = [];
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    // Absolute-form request (plain HTTP proxying).
    requests.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? '');
    const upstream = netConnect(Number(target.port), target.hostname, () => {
      upstream.write(`${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n`);
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        upstream.write(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`);
      upstream.write('connection: close\r\n\r\n');
      req.pipe(upstream);
      upstream.pipe(res.socket as Socket);
    });
    upstream.on('error', () => res.destroy());
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    sockets.add(client);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = netConnect(Number(port), host ?? '', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await listen(server);
  return Object.assign(running(server, 'http', sockets), { connects, requests });
}

/** True when the `openssl` CLI can be run. */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestPki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by that CA. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-pki-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    run([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=Interlock Test CA',
    ]);
    const leaf = (name: string, ext: string) => {
      run([
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${name}`,
      ]);
      writeFileSync(join(dir, `${name}.ext`), ext);
      run([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      ]);
    };
    leaf('server', 'subjectAltName=IP:127.0.0.1,DNS:svc.test\nextendedKeyUsage=serverAuth\n');
    leaf('client', 'extendedKeyUsage=clientAuth\n');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return {
      ca: read('ca.pem'),
      serverCert: read('server.pem'),
      serverKey: read('server.key'),
      clientCert: read('client.pem'),
      clientKey: read('client.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An HTTPS server that requires a client certificate from `pki`'s CA; answers with the client's CN. */
export async function startMtlsServer(pki: TestPki): Promise<Running> {
  const server = createHttpsServer(
    { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${cn}`);
    },
  );
  await listen(server);
  return running(server, 'https', new Set());
}

/**
 * A Streamable HTTP MCP server over HTTPS that requires a client certificate from `pki`'s CA. Its one tool,
 * `whoami`, answers with the CN of the client certificate. Stateless: a new server and transport per request.
 */
export async function startMtlsMcpServer(pki: TestPki): Promise<Running & { requests: number }> {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  const state = { requests: 0 };
  const server = createHttpsServer(
    { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      state.requests++;
      const cn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
      const mcp = new McpServer({ name: 'mtls', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'The CN of the client certificate.' }, async () => ({
        content: [{ type: 'text', text: `client=${cn}` }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    },
  );
  await listen(server);
  const base = running(server, 'https', new Set());
  return Object.defineProperty({ ...base, url: `${base.url}/mcp` }, 'requests', {
    get: () => state.requests,
  }) as Running & { requests: number };
}
