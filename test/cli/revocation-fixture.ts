// Token revocation (RFC 7009) in front of the OAuth fixture, which has no revocation endpoint: a loopback proxy
// becomes the authorization server's address (the fixture's `asUrl`, which its metadata and its protected servers'
// resource metadata name), passes every request through to the fixture, adds `revocation_endpoint` to the
// metadata, and answers `/revoke` itself: it authenticates the client as the fixture's token endpoint does (basic,
// post or a public client id), removes the token from the fixture's maps, and records what it saw.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthFixture } from '../remote/oauth-fixture.js';

/** One request the revocation endpoint saw. */
export interface Revocation {
  token: string;
  hint: string | undefined;
  /** The client it authenticated as, or undefined when it did not. */
  clientId: string | undefined;
  /** `basic`, `post` or `none`: how the client authenticated. */
  via: 'basic' | 'post' | 'none' | undefined;
  /** The token was live at the fixture and is now revoked. */
  revoked: boolean;
}

export interface RevocationFixtureOptions {
  /** Answer every revocation with this status (and `temporarily_unavailable`) instead of revoking. */
  failWith?: number;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

const PASSED_HEADERS = ['content-type', 'location', 'www-authenticate', 'cache-control'];

/** The revocation proxy. `close()` closes the proxy only; the fixture is closed by its owner. */
export class RevocationFixture implements AsyncDisposable {
  readonly revocations: Revocation[] = [];
  readonly url: string;
  readonly #server: Server;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Puts a revocation endpoint in front of `fixture` (call before anything connects to it). */
  static async wrap(
    fixture: OAuthFixture,
    options: RevocationFixtureOptions = {},
  ): Promise<RevocationFixture> {
    const upstream = fixture.asUrl;
    let self: RevocationFixture | undefined;
    const server = createServer((req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502).end();
      });
    });
    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = await readBody(req);
      if (path === '/revoke' && req.method === 'POST') {
        return revoke(self as RevocationFixture, fixture, req, res, body, options);
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'authorization', 'accept']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await fetch(`${upstream}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        body: body === '' ? undefined : body,
        redirect: 'manual',
      });
      let text = await answer.text();
      if (answer.ok && path.includes('/.well-known/') && !path.includes('oauth-protected-resource')) {
        const metadata = JSON.parse(text) as Record<string, unknown>;
        text = JSON.stringify({ ...metadata, revocation_endpoint: `${fixture.asUrl}/revoke` });
      }
      const out: Record<string, string> = {};
      for (const name of PASSED_HEADERS) {
        const value = answer.headers.get(name);
        if (value !== null) out[name] = value;
      }
      res.writeHead(answer.status, out).end(text);
    };
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    self = new RevocationFixture(server, url);
    // The fixture names its own address in its metadata and its servers' resource metadata: make that the proxy.
    fixture.asUrl = url;
    return self;
  }

  async close(): Promise<void> {
    if (!this.#server.listening) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function revoke(
  self: RevocationFixture,
  fixture: OAuthFixture,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  options: RevocationFixtureOptions,
): void {
  const form = Object.fromEntries(new URLSearchParams(body));
  const entry: Revocation = {
    token: form.token ?? '',
    hint: form.token_type_hint,
    clientId: undefined,
    via: undefined,
    revoked: false,
  };
  self.revocations.push(entry);
  const send = (status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };
  if (options.failWith !== undefined) {
    send(options.failWith, { error: 'temporarily_unavailable' });
    return;
  }
  // RFC 7009 2.1: the client authenticates as it does at the token endpoint.
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (basic !== undefined) {
    const [id, secret] = Buffer.from(basic, 'base64').toString().split(':');
    const client = fixture.clients.get(id ?? '');
    if (client?.token_endpoint_auth_method === 'client_secret_basic' && client.client_secret === secret) {
      entry.clientId = client.client_id;
      entry.via = 'basic';
    }
  } else {
    const client = fixture.clients.get(form.client_id ?? '');
    if (client?.token_endpoint_auth_method === 'none') {
      entry.clientId = client.client_id;
      entry.via = 'none';
    } else if (
      client?.token_endpoint_auth_method === 'client_secret_post' &&
      client.client_secret === form.client_secret
    ) {
      entry.clientId = client.client_id;
      entry.via = 'post';
    }
  }
  if (entry.clientId === undefined) {
    send(401, { error: 'invalid_client' });
    return;
  }
  // Only the client a token was issued to may revoke it; an unknown token is answered 200 all the same.
  for (const map of [fixture.refreshTokens, fixture.tokens]) {
    const issued = map.get(entry.token);
    if (issued !== undefined && issued.clientId === entry.clientId) {
      map.delete(entry.token);
      entry.revoked = true;
    }
  }
  send(200, {});
}
