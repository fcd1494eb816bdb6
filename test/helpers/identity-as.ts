// A real loopback authorization server for issue 41 (node:http + jose): it signs the gateway's callers' tokens
// (its JWKS is what the gateway's `auth.jwt` points at), and its token endpoint implements RFC 8693 token exchange
// (subject token and actor token verified, client authenticated, `act` naming the actor, scope = requested ∩ the
// caller's), client credentials, and cross-app access: an ID-JAG for an audience, redeemed with the JWT bearer grant
// (RFC 7523). It counts what it issued per grant and subject, and refuses on demand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** One token request the server answered, for assertions (never the tokens). */
export interface TokenRequestRecord {
  grant: string;
  /** The subject the token was issued for (a caller, or the client for client credentials). */
  subject: string | undefined;
  requestedType: string | undefined;
  scope: string | undefined;
  audience: string | undefined;
  outcome: 'issued' | 'refused';
}

export class IdentityAuthorizationServer implements AsyncDisposable {
  readonly issuer: string;
  readonly tokenEndpoint: string;
  readonly jwksUrl: string;
  /** Every token request, in order. */
  readonly requests: TokenRequestRecord[] = [];
  /** Seconds each issued access token lives. */
  expiresIn = 3600;
  readonly #server: Server;
  readonly #key: Key;
  readonly #public: Key;
  readonly #jwk: JWK;
  readonly #clients: Map<string, string>;
  readonly #refused = new Set<string>();

  private constructor(
    server: Server,
    keys: { privateKey: Key; publicKey: Key },
    jwk: JWK,
    clients: Map<string, string>,
  ) {
    this.#server = server;
    this.#key = keys.privateKey;
    this.#public = keys.publicKey;
    this.#jwk = jwk;
    this.#clients = clients;
    const { port } = server.address() as AddressInfo;
    this.issuer = `http://127.0.0.1:${port}`;
    this.tokenEndpoint = `${this.issuer}/token`;
    this.jwksUrl = `${this.issuer}/jwks`;
  }

  /** Starts on 127.0.0.1, any free port; `clients` are id → secret. */
  static async start(clients: Record<string, string>): Promise<IdentityAuthorizationServer> {
    const keys = await generateKeyPair('ES256');
    const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'as-1', alg: 'ES256', use: 'sig' };
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const as = new IdentityAuthorizationServer(server, keys, jwk, new Map(Object.entries(clients)));
    server.on('request', (req, res) => {
      as.#handle(req, res).catch((err) => json(res, 500, { error: 'server_error', detail: String(err) }));
    });
    return as;
  }

  /** A caller's access token for the gateway (`aud`), signed by this server. */
  callerToken(
    subject: string,
    options: { audience: string; scope: string; expiresIn?: string },
  ): Promise<string> {
    return this.#sign({ scope: options.scope }, subject, options.audience, options.expiresIn ?? '10m');
  }

  /** Exchanges for `subject` are refused from now on (with a description quoting the subject token). */
  refuse(subject: string): void {
    this.#refused.add(subject);
  }

  /** Tokens issued for `subject` by a grant (`exchange`, `id-jag`, `jwt-bearer`, `client_credentials`). */
  issued(grant: 'exchange' | 'id-jag' | 'jwt-bearer' | 'client_credentials', subject: string): number {
    const name = {
      exchange: TOKEN_EXCHANGE,
      'id-jag': ID_JAG,
      'jwt-bearer': JWT_BEARER,
      client_credentials: 'client_credentials',
    }[grant];
    return this.requests.filter(
      (r) =>
        r.outcome === 'issued' &&
        r.subject === subject &&
        (grant === 'id-jag' ? r.requestedType === ID_JAG : r.grant === name && r.requestedType !== ID_JAG),
    ).length;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #sign(claims: JWTPayload, subject: string, audience: string, expiresIn: string | number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'as-1', typ: (claims.typ as string | undefined) ?? 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(
        typeof expiresIn === 'number' ? Math.floor(Date.now() / 1000) + expiresIn : expiresIn,
      )
      .sign(this.#key);
  }

  async #verify(token: string | undefined, audience?: string): Promise<JWTPayload | undefined> {
    if (token === undefined) return undefined;
    try {
      const { payload } = await jwtVerify(token, this.#public, {
        issuer: this.issuer,
        ...(audience === undefined ? {} : { audience }),
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.issuer).pathname;
    if (path === '/jwks') return json(res, 200, { keys: [this.#jwk] });
    if (path === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: this.issuer,
        token_endpoint: this.tokenEndpoint,
        jwks_uri: this.jwksUrl,
        grant_types_supported: ['client_credentials', TOKEN_EXCHANGE, JWT_BEARER],
      });
    }
    if (path !== '/token' || req.method !== 'POST') return json(res, 404, { error: 'not_found' });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const client = this.#client(req.headers.authorization);
    if (client === undefined) return json(res, 401, { error: 'invalid_client' });
    const record = (r: Omit<TokenRequestRecord, 'grant' | 'requestedType' | 'audience'>) =>
      this.requests.push({
        grant: form.grant_type ?? '',
        requestedType: form.requested_token_type,
        audience: form.audience,
        ...r,
      });
    const issue = async (
      claims: JWTPayload,
      subject: string,
      audience: string,
      scope: string | undefined,
    ) => {
      const token = await this.#sign(
        { ...claims, client_id: client, ...(scope === undefined ? {} : { scope }) },
        subject,
        audience,
        this.expiresIn,
      );
      record({ subject, scope, outcome: 'issued' });
      return json(res, 200, {
        access_token: token,
        issued_token_type: form.requested_token_type ?? 'urn:ietf:params:oauth:token-type:access_token',
        token_type: form.requested_token_type === ID_JAG ? 'N_A' : 'Bearer',
        expires_in: this.expiresIn,
        ...(scope === undefined ? {} : { scope }),
      });
    };
    switch (form.grant_type) {
      case 'client_credentials':
        return issue({}, client, form.audience ?? form.resource ?? this.issuer, form.scope);
      case TOKEN_EXCHANGE: {
        const subject = await this.#verify(form.subject_token);
        if (subject?.sub === undefined) return json(res, 400, { error: 'invalid_grant' });
        if (this.#refused.has(subject.sub)) {
          record({ subject: subject.sub, scope: form.scope, outcome: 'refused' });
          // The description quotes the subject token, as some servers do: the gateway must not pass it on.
          return json(res, 400, {
            error: 'access_denied',
            error_description: `subject ${subject.sub} may not be exchanged (token ${form.subject_token})`,
          });
        }
        const scope = narrowed(form.scope, subject.scope);
        const audience = form.audience ?? form.resource;
        if (audience === undefined) return json(res, 400, { error: 'invalid_target' });
        if (form.requested_token_type === ID_JAG) {
          return issue({ typ: 'oauth-id-jag+jwt', resource: form.resource }, subject.sub, audience, scope);
        }
        // The actor: a token of a registered client, issued here (the gateway's client-credentials token).
        const actor = await this.#verify(form.actor_token);
        if (actor?.sub === undefined || !this.#clients.has(actor.sub)) {
          return json(res, 400, { error: 'invalid_request', error_description: 'actor_token invalid' });
        }
        return issue({ act: { sub: actor.sub } }, subject.sub, audience, scope);
      }
      case JWT_BEARER: {
        const grant = await this.#verify(form.assertion, this.issuer);
        if (grant?.sub === undefined || grant.typ !== 'oauth-id-jag+jwt') {
          return json(res, 400, { error: 'invalid_grant' });
        }
        const scope = narrowed(form.scope, grant.scope);
        return issue({}, grant.sub, (grant.resource as string | undefined) ?? this.issuer, scope);
      }
      default:
        return json(res, 400, { error: 'unsupported_grant_type' });
    }
  }

  #client(header: string | undefined): string | undefined {
    const basic = /^Basic (.+)$/.exec(header ?? '')?.[1];
    if (basic === undefined) return undefined;
    const [id = '', secret = ''] = Buffer.from(basic, 'base64')
      .toString('utf8')
      .split(':')
      .map(decodeURIComponent);
    return this.#clients.get(id) === secret ? id : undefined;
  }
}

/** The requested scopes the caller has (none requested: the caller's); undefined when nothing is left. */
function narrowed(requested: string | undefined, held: unknown): string | undefined {
  const has = new Set(typeof held === 'string' ? held.split(' ') : []);
  const asked = requested === undefined ? [...has] : requested.split(' ');
  const left = asked.filter((s) => has.has(s)).sort();
  return left.length === 0 ? undefined : left.join(' ');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
