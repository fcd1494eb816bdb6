// A local OAuth 2.1 authorization server and MCP servers protected by it, all on 127.0.0.1 port 0, written by
// hand so every step (discovery, registration, PKCE, resource, refresh, scopes, client auth) is visible and counted.
// Options turn it into the older kinds of server the SDK's discovery has fallbacks for (issue 9): OpenID-only
// metadata, an issuer with a path, no protected resource metadata, no metadata at all. Every protected server
// speaks both Streamable HTTP (`/mcp`) and the 2024-11-05 HTTP+SSE transport (`/sse` plus `/messages`).
import { createHash, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { decodeJwt, jwtVerify } from 'jose';

export interface IssuedToken {
  token: string;
  clientId: string;
  scope: string;
  resource: string | undefined;
  expiresAt: number;
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  redirect_uris: string[];
  publicKey?: KeyObject;
}

export interface OAuthFixtureOptions {
  /** Lifetime of access tokens in seconds. @default 3600 */
  tokenLifetime?: number;
  /** Scope the MCP server demands for every request. @default 'mcp:read' */
  baseScope?: string;
  /** Scope the `admin` tool demands (step-up). @default 'mcp:admin' */
  adminScope?: string;
  /** Advertise client ID metadata documents (an HTTPS URL as client_id; this fixture trusts it unfetched). */
  clientIdMetadata?: boolean;
  /** Path of the issuer (e.g. `/tenant-a`); the endpoints live under it. @default '' */
  issuerPath?: string;
  /**
   * Which authorization server metadata exists: RFC 8414 (`oauth`), OpenID discovery only (`openid`), or none
   * (`none`: the endpoints are the defaults `/authorize`, `/token`, `/register`). @default 'oauth'
   */
  metadata?: 'oauth' | 'openid' | 'none';
  /**
   * Where OpenID metadata of an issuer with a path is served: after the path (OpenID Connect Discovery 1.0,
   * `/tenant-a/.well-known/openid-configuration`) or inserted before it (RFC 8414 style). @default 'append'
   */
  openidPath?: 'append' | 'insert';
  /**
   * Whether the MCP servers serve protected resource metadata (RFC 9728) and name it in `WWW-Authenticate`.
   * Without it they accept tokens issued without a `resource` (older servers predate RFC 8707). @default true
   */
  resourceMetadata?: boolean;
  /**
   * The `iss` parameter of authorization responses (RFC 9207), advertised with
   * `authorization_response_iss_parameter_supported`: the issuer (`correct`), another issuer (`wrong`), or left out
   * although advertised (`missing`). @default none: neither sent nor advertised
   */
  iss?: 'correct' | 'wrong' | 'missing' | undefined;
}

/** RFC 7523 and RFC 8693 names the cross-app access (ID-JAG) flow uses. */
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

export type ResourceTransport = 'http' | 'sse';

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const RESOURCE_PATHS = /^\/(mcp|sse|messages)$|^\/\.well-known\/oauth-protected-resource/;

/** The authorization server plus one or more protected MCP servers. */
export class OAuthFixture implements AsyncDisposable {
  asUrl = '';
  readonly clients = new Map<string, RegisteredClient>();
  readonly tokens = new Map<string, IssuedToken>();
  readonly refreshTokens = new Map<string, IssuedToken>();
  readonly codes = new Map<
    string,
    { clientId: string; challenge: string; redirectUri: string; scope: string; resource: string | undefined }
  >();
  /** Every request the authorization server saw: `METHOD path` plus parsed form for token requests. */
  readonly log: { path: string; form?: Record<string, string>; authorization?: string }[] = [];
  /** Authorization headers the MCP servers received. */
  readonly seenByResource: string[] = [];
  /** Every request the MCP servers saw (`METHOD path`) with its Authorization header. */
  readonly resourceLog: { path: string; authorization: string | undefined }[] = [];
  /** When set, tokens are issued for this resource instead of the one asked for (a wrong audience). */
  issueFor: string | undefined;
  /**
   * The authorization servers the protected resources name in their metadata. @default this fixture's issuer. Set
   * another fixture's issuer to move the servers to it (SEP-2352); tokens of fixtures in {@link trusted} are
   * accepted too.
   */
  authorizationServers: string[] | undefined;
  /** Other authorization servers whose tokens the protected resources accept. */
  readonly trusted: OAuthFixture[] = [];
  /** The ID token the identity provider (`/idp/token`) accepts for a cross-app access grant. */
  idToken = 'id-token-of-alice';
  /** The workload JWT the JWT bearer grant accepts for workload identity federation (RFC 7523, SEP-1933). */
  workloadJwt = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ3b3JrbG9hZCJ9.';
  /** ID-JAGs the identity provider issued, and for which audience and resource. */
  readonly grants = new Map<string, { audience: string; resource: string; clientId: string }>();
  readonly #servers: Server[] = [];
  readonly #options: Required<Omit<OAuthFixtureOptions, 'iss'>> & Pick<OAuthFixtureOptions, 'iss'>;
  readonly #sse = new Map<string, SSEServerTransport>();
  #colocated = false;

  constructor(options: OAuthFixtureOptions = {}) {
    this.#options = {
      tokenLifetime: 3600,
      baseScope: 'mcp:read',
      adminScope: 'mcp:admin',
      clientIdMetadata: false,
      issuerPath: '',
      metadata: 'oauth',
      openidPath: 'append',
      resourceMetadata: true,
      ...options,
    };
  }

  /** The issuer: the authorization server's URL, with its path. */
  get issuer(): string {
    return `${this.asUrl}${this.#options.issuerPath}`;
  }

  static async start(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
    const f = new OAuthFixture(options);
    const as = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const handled =
        f.#colocated && RESOURCE_PATHS.test(path)
          ? f.#handleResource(f.asUrl, req, res)
          : f.#handleAs(req, res);
      handled.catch((err: unknown) => {
        if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(err) });
      });
    });
    f.#servers.push(as);
    f.asUrl = await listen(as);
    return f;
  }

  /** Pre-registers a client (for client credentials). */
  register(client: RegisteredClient): void {
    this.clients.set(client.client_id, client);
  }

  /**
   * Starts a protected MCP server; returns its `/mcp` URL (Streamable HTTP) or its `/sse` URL (HTTP+SSE). With
   * `colocated`, the MCP server is served by the authorization server itself, on its origin (older servers).
   */
  async startResource(options: { transport?: ResourceTransport; colocated?: boolean } = {}): Promise<string> {
    const path = options.transport === 'sse' ? '/sse' : '/mcp';
    if (options.colocated === true) {
      this.#colocated = true;
      return `${this.asUrl}${path}`;
    }
    let base = '';
    const server = createServer((req, res) => {
      this.#handleResource(base, req, res).catch(() => {
        if (!res.headersSent) json(res, 500, {});
      });
    });
    this.#servers.push(server);
    base = await listen(server);
    return `${base}${path}`;
  }

  #metadata(): Record<string, unknown> {
    const issuer = this.issuer;
    const common = {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', JWT_BEARER],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ],
      scopes_supported: [this.#options.baseScope, this.#options.adminScope],
      ...(this.#options.clientIdMetadata ? { client_id_metadata_document_supported: true } : {}),
      ...(this.#options.iss === undefined ? {} : { authorization_response_iss_parameter_supported: true }),
    };
    if (this.#options.metadata !== 'openid') return common;
    // OpenID Connect Discovery 1.0, section 3: the fields an OpenID provider must publish.
    return {
      ...common,
      jwks_uri: `${issuer}/jwks`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    };
  }

  /** The one path the metadata document is served at, or undefined for none. */
  #metadataPath(): string | undefined {
    const p = this.#options.issuerPath;
    if (this.#options.metadata === 'none') return undefined;
    if (this.#options.metadata === 'oauth') return `/.well-known/oauth-authorization-server${p}`;
    return this.#options.openidPath === 'insert'
      ? `/.well-known/openid-configuration${p}`
      : `${p}/.well-known/openid-configuration`;
  }

  async #handleAs(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.asUrl);
    const entry: (typeof this.log)[number] = { path: `${req.method} ${url.pathname}` };
    this.log.push(entry);
    const p = this.#options.issuerPath;
    if (url.pathname === this.#metadataPath()) return json(res, 200, this.#metadata());
    if (url.pathname === `${p}/register` && req.method === 'POST') {
      const meta = JSON.parse(await readBody(req)) as {
        redirect_uris?: string[];
        token_endpoint_auth_method?: string;
      };
      const client: RegisteredClient = {
        client_id: `dyn-${randomBytes(6).toString('hex')}`,
        token_endpoint_auth_method: meta.token_endpoint_auth_method ?? 'none',
        redirect_uris: meta.redirect_uris ?? [],
      };
      this.clients.set(client.client_id, client);
      return json(res, 201, { ...meta, ...client });
    }
    if (url.pathname === `${p}/authorize`) {
      // Auto-approves, as a user clicking "Allow" would.
      const q = Object.fromEntries(url.searchParams);
      if (
        this.#options.clientIdMetadata &&
        q.client_id?.startsWith('https://') &&
        !this.clients.has(q.client_id)
      ) {
        // A real server fetches the document and checks redirect_uris; the fixture trusts it.
        this.clients.set(q.client_id, {
          client_id: q.client_id,
          token_endpoint_auth_method: 'none',
          redirect_uris: [q.redirect_uri ?? ''],
        });
      }
      const client = this.clients.get(q.client_id ?? '');
      if (!client?.redirect_uris.includes(q.redirect_uri ?? ''))
        return json(res, 400, { error: 'invalid_request' });
      if (q.code_challenge_method !== 'S256' || !q.code_challenge)
        return json(res, 400, { error: 'invalid_request' });
      entry.form = q;
      const code = randomBytes(12).toString('hex');
      this.codes.set(code, {
        clientId: client.client_id,
        challenge: q.code_challenge,
        redirectUri: q.redirect_uri ?? '',
        // RFC 6749 3.3: without a scope the server grants its default.
        scope: q.scope || this.#options.baseScope,
        resource: q.resource,
      });
      const back = new URL(q.redirect_uri ?? '');
      back.searchParams.set('code', code);
      if (q.state) back.searchParams.set('state', q.state);
      const iss = this.#options.iss;
      if (iss === 'correct') back.searchParams.set('iss', this.issuer);
      if (iss === 'wrong') back.searchParams.set('iss', 'https://attacker.example');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/idp/token' && req.method === 'POST') {
      // The enterprise identity provider: RFC 8693 token exchange of an ID token for an ID-JAG.
      const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
      entry.form = form;
      if (
        form.grant_type !== TOKEN_EXCHANGE ||
        form.requested_token_type !== ID_JAG ||
        form.subject_token !== this.idToken
      )
        return json(res, 400, { error: 'invalid_grant' });
      const jag = `jag-${randomBytes(12).toString('hex')}`;
      this.grants.set(jag, {
        audience: form.audience ?? '',
        resource: form.resource ?? '',
        clientId: form.client_id ?? '',
      });
      return json(res, 200, { issued_token_type: ID_JAG, access_token: jag, token_type: 'N_A' });
    }
    if (url.pathname === `${p}/token` && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
      entry.form = form;
      entry.authorization = req.headers.authorization;
      const client = await this.#authenticate(req, form);
      if (client === undefined) return json(res, 401, { error: 'invalid_client' });
      if (form.grant_type === 'authorization_code') {
        const code = this.codes.get(form.code ?? '');
        this.codes.delete(form.code ?? '');
        const verifier = form.code_verifier ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (
          !code ||
          code.clientId !== client.client_id ||
          code.challenge !== challenge ||
          code.redirectUri !== form.redirect_uri
        )
          return json(res, 400, { error: 'invalid_grant' });
        return json(
          res,
          200,
          this.#issue(client.client_id, code.scope, form.resource ?? code.resource, true),
        );
      }
      if (form.grant_type === 'refresh_token') {
        const old = this.refreshTokens.get(form.refresh_token ?? '');
        if (!old || old.clientId !== client.client_id) return json(res, 400, { error: 'invalid_grant' });
        this.refreshTokens.delete(form.refresh_token ?? '');
        return json(res, 200, this.#issue(client.client_id, old.scope, form.resource ?? old.resource, true));
      }
      if (form.grant_type === JWT_BEARER) {
        if (form.assertion === this.workloadJwt)
          return json(res, 200, this.#issue(client.client_id, this.#options.baseScope, form.resource, false));
        // RFC 7523: the ID-JAG must be one the identity provider issued for this authorization server.
        const grant = this.grants.get(form.assertion ?? '');
        if (grant === undefined || grant.audience !== this.issuer)
          return json(res, 400, { error: 'invalid_grant' });
        this.grants.delete(form.assertion ?? '');
        return json(res, 200, this.#issue(client.client_id, this.#options.baseScope, grant.resource, false));
      }
      if (form.grant_type === 'client_credentials') {
        return json(
          res,
          200,
          this.#issue(client.client_id, form.scope ?? this.#options.baseScope, form.resource, false),
        );
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    json(res, 404, { error: 'not_found' });
  }

  async #authenticate(
    req: IncomingMessage,
    form: Record<string, string>,
  ): Promise<RegisteredClient | undefined> {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (basic !== undefined) {
      const [id, secret] = Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent);
      const client = this.clients.get(id ?? '');
      return client?.token_endpoint_auth_method === 'client_secret_basic' && client.client_secret === secret
        ? client
        : undefined;
    }
    if (form.client_assertion !== undefined) {
      // RFC 7523 2.2: client_id is optional; the assertion's issuer names the client.
      const client = this.clients.get(form.client_id ?? String(decodeJwt(form.client_assertion).iss));
      if (
        client?.publicKey === undefined ||
        form.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
      )
        return undefined;
      try {
        const { payload } = await jwtVerify(form.client_assertion, client.publicKey, {
          audience: this.issuer,
          issuer: client.client_id,
        });
        return payload.sub === client.client_id ? client : undefined;
      } catch {
        return undefined;
      }
    }
    const client = this.clients.get(form.client_id ?? '');
    if (client === undefined) return undefined;
    if (client.token_endpoint_auth_method === 'none') return client;
    if (
      client.token_endpoint_auth_method === 'client_secret_post' &&
      form.client_secret === client.client_secret
    )
      return client;
    return undefined;
  }

  #issue(
    clientId: string,
    scope: string,
    resource: string | undefined,
    refresh: boolean,
  ): Record<string, unknown> {
    const token: IssuedToken = {
      token: `at-${randomBytes(16).toString('hex')}`,
      clientId,
      scope,
      resource: this.issueFor ?? resource,
      expiresAt: Date.now() + this.#options.tokenLifetime * 1000,
    };
    this.tokens.set(token.token, token);
    const out: Record<string, unknown> = {
      access_token: token.token,
      token_type: 'Bearer',
      expires_in: this.#options.tokenLifetime,
      scope,
    };
    if (refresh) {
      const rt = `rt-${randomBytes(16).toString('hex')}`;
      this.refreshTokens.set(rt, token);
      out.refresh_token = rt;
    }
    return out;
  }

  /** Revokes every access and refresh token (a server that forgot its sessions): the next request answers 401. */
  revokeAll(): void {
    this.tokens.clear();
    this.refreshTokens.clear();
  }

  /** Expires every access token now (to exercise refresh). */
  expireAll(): void {
    for (const t of this.tokens.values()) t.expiresAt = 0;
  }

  async #handleResource(base: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const auth = req.headers.authorization ?? '';
    this.resourceLog.push({
      path: `${req.method} ${url.pathname}`,
      authorization: req.headers.authorization,
    });
    // Both transports of one server are one protected resource each: `/mcp`, and `/sse` with its `/messages`.
    const name = url.pathname === '/mcp' || url.pathname.endsWith('/mcp') ? 'mcp' : 'sse';
    const resource = `${base}/${name}`;
    const prm = `${base}/.well-known/oauth-protected-resource/${name}`;
    const withMetadata = this.#options.resourceMetadata;
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource/') && withMetadata) {
      return json(res, 200, {
        resource,
        authorization_servers: this.authorizationServers ?? [this.issuer],
        scopes_supported: [this.#options.baseScope],
        bearer_methods_supported: ['header'],
      });
    }
    if (!['/mcp', '/sse', '/messages'].includes(url.pathname)) return json(res, 404, {});
    this.seenByResource.push(auth);
    const presented = /^Bearer (.+)$/.exec(auth)?.[1] ?? '';
    const token = [this, ...this.trusted].map((f) => f.tokens.get(presented)).find((t) => t !== undefined);
    // Older servers send a bare challenge: no resource metadata, no scope.
    const challenge = (extra: string) =>
      withMetadata ? `Bearer resource_metadata="${prm}", ${extra}` : `Bearer ${extra}`;
    const scoped = (error: string, scope: string) =>
      withMetadata ? challenge(`scope="${scope}", error="${error}"`) : challenge(`error="${error}"`);
    // MCP authorization: the token must be for this resource (RFC 8707 audience) and unexpired.
    const audienceOk = token?.resource === resource || (token?.resource === undefined && !withMetadata);
    if (!token || !audienceOk || token.expiresAt <= Date.now()) {
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': scoped('invalid_token', this.#options.baseScope) },
      );
    }
    const granted = new Set(token.scope.split(' '));
    if (!granted.has(this.#options.baseScope)) {
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        { 'www-authenticate': scoped('insufficient_scope', this.#options.baseScope) },
      );
    }
    const authInfo: AuthInfo = {
      token: token.token,
      clientId: token.clientId,
      scopes: [...granted],
      ...(token.resource === undefined ? {} : { resource: new URL(token.resource) }),
    };
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfo;
    if (url.pathname === '/sse') {
      if (req.method !== 'GET') return json(res, 405, {});
      const transport = new SSEServerTransport('/messages', res);
      const mcp = this.#mcpServer();
      this.#sse.set(transport.sessionId, transport);
      res.on('close', () => {
        this.#sse.delete(transport.sessionId);
        void mcp.close();
      });
      await mcp.connect(transport);
      return;
    }
    if (req.method !== 'POST') return json(res, 405, {});
    const body: unknown = JSON.parse(await readBody(req));
    const wantsAdmin =
      typeof body === 'object' &&
      body !== null &&
      (body as { method?: string }).method === 'tools/call' &&
      (body as { params?: { name?: string } }).params?.name === 'admin';
    if (wantsAdmin && !granted.has(this.#options.adminScope)) {
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        {
          'www-authenticate': scoped(
            'insufficient_scope',
            `${this.#options.baseScope} ${this.#options.adminScope}`,
          ),
        },
      );
    }
    if (url.pathname === '/messages') {
      const transport = this.#sse.get(url.searchParams.get('sessionId') ?? '');
      if (transport === undefined) return json(res, 404, {});
      await transport.handlePostMessage(req, res, body);
      return;
    }
    const mcp = this.#mcpServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** The MCP server behind the protection; `whoami` reports the token of the request that called it. */
  #mcpServer(): McpServer {
    const mcp = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Who the token belongs to' }, async (extra) => ({
      content: [
        {
          type: 'text',
          text: `client=${extra.authInfo?.clientId} scope=${extra.authInfo?.scopes.join(' ')}`,
        },
      ],
    }));
    mcp.registerTool('admin', { description: 'Needs mcp:admin' }, async () => ({
      content: [{ type: 'text', text: 'admin ok' }],
    }));
    mcp.registerTool('fail', { description: 'Always fails' }, async () => {
      throw new Error('the fail tool failed on purpose');
    });
    return mcp;
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      this.#servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
