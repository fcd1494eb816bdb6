/**
 * The caller's identity for an upstream server (issue 41), for a server whose `auth` is `token_exchange`. A
 * gateway caller's own token is never sent upstream: every request to the server has its `Authorization` replaced.
 *
 * - A call made for a caller (`tools/call`, `resources/read`, `prompts/get`, inside the gateway's caller context)
 *   carries a token exchanged for that caller (RFC 8693): `subject_token` the caller's token, `actor_token` the
 *   gateway's own credential (so the authorization server names the gateway in an `act` claim), `audience` and
 *   `resource` the server, `scope` the union of the configured scopes of the tools the caller's rules could allow.
 *   With `idJag`, the caller's token is exchanged at the identity provider for an ID-JAG for the server's
 *   authorization server, which redeems it (RFC 7523) for the token.
 * - Everything else (connect, discovery, list refreshes) runs as the gateway itself: a client-credentials token.
 * - A call without a caller identity fails closed (`UPSTREAM_IDENTITY_REFUSED`), and so does a refused exchange;
 *   the upstream is then not called. The authorization server's `error_description` is never passed on.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import type { HttpServerConfig, MCPServerConfig } from '../config/servers.js';
import { UpstreamIdentityError } from '../errors.js';
import { type CallerIdentity, currentCaller } from '../interop/caller-context.js';
import type { ServerAuth } from '../interop/open-client.js';
import { isJsonObject, tupleKey } from '../json.js';
import { matchGlob } from '../security/pattern.js';
import { CallerSessions } from './caller-sessions.js';
import { type MintedToken, TokenCache } from './token-cache.js';

/** The `token_exchange` kind of a server's `auth`. */
export type TokenExchangeConfig = Extract<NonNullable<HttpServerConfig['auth']>, { type: 'token_exchange' }>;

const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

/** The requests made for the caller; every other request runs as the gateway. */
const CALLER_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get', 'completion/complete']);

/** An OAuth error code is safe to record (it is a word); anything else from the server is not. */
const OAUTH_ERROR_CODE = /^[a-z_]{1,64}$/;

interface Client {
  tokenEndpoint: () => Promise<string>;
  clientId: string;
  clientSecret: string | undefined;
}

/** The server auth of a `token_exchange` server. */
export function tokenExchangeAuth(
  config: Exclude<MCPServerConfig, { transport: 'stdio' }>,
  auth: TokenExchangeConfig,
  options: { now?: () => number } = {},
): ServerAuth {
  const now = options.now ?? Date.now;
  const server = config.name;
  const origin = new URL(config.url).origin;
  const audience = auth.audience ?? config.url;
  const cache = new TokenCache({ maxEntries: auth.maxCachedTokens, skewMs: auth.expirySkewMs, now });
  let base: FetchLike = fetch;
  const post: FetchLike = (url, init) => base(url, init);
  const exchanger: Client = {
    tokenEndpoint: endpointOf(auth.tokenEndpoint, auth.issuer, post, server),
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
  };
  const idJag = auth.idJag;
  const redeemer: Client | undefined =
    idJag === undefined
      ? undefined
      : {
          tokenEndpoint: () => Promise.resolve(idJag.tokenEndpoint),
          clientId: idJag.clientId,
          clientSecret: idJag.clientSecret,
        };
  const request = (client: Client, params: Record<string, string>) =>
    requestToken(post, client, params, now, server);

  // The gateway itself: discovery, and the actor of every exchange.
  const gatewayToken = () =>
    cache.get(tupleKey('gateway', audience), () =>
      request(redeemer ?? exchanger, {
        grant_type: 'client_credentials',
        ...(redeemer === undefined ? { audience, resource: config.url } : { resource: config.url }),
      }),
    );

  const callerToken = async (caller: CallerIdentity, tool: string | undefined): Promise<string> => {
    const subjectToken = caller.token;
    if (subjectToken === undefined) {
      caller.refused?.({ server, tool, reason: 'no_caller_identity', code: 'UPSTREAM_IDENTITY_REFUSED' });
      throw noCallerIdentity(server, `the caller authenticated with ${caller.via}, which carries no token`);
    }
    const scope = scopeFor(auth.scopes, caller.allowedTools(server));
    const key = tupleKey(caller.via, caller.subject, audience, scope ?? '');
    try {
      return await cache.get(key, async () => {
        const minted =
          redeemer === undefined ? await exchange(subjectToken, scope) : await viaIdJag(subjectToken, scope);
        // An exchanged token is not used past the caller's own.
        return { token: minted.token, expiresAt: capped(minted.expiresAt, subjectToken) };
      });
    } catch (err) {
      if (err instanceof UpstreamIdentityError)
        caller.refused?.({ server, tool, reason: err.reason, code: err.code });
      throw err;
    }
  };

  const exchange = async (subjectToken: string, scope: string | undefined): Promise<MintedToken> =>
    request(exchanger, {
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      actor_token: auth.actorToken ?? (await gatewayToken()),
      actor_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience,
      resource: config.url,
      ...(scope === undefined ? {} : { scope }),
    });

  const viaIdJag = async (subjectToken: string, scope: string | undefined): Promise<MintedToken> => {
    const grant = await request(exchanger, {
      grant_type: TOKEN_EXCHANGE_GRANT,
      requested_token_type: ID_JAG_TYPE,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      audience: idJag?.issuer as string,
      resource: config.url,
      ...(scope === undefined ? {} : { scope }),
    });
    return request(redeemer as Client, {
      grant_type: JWT_BEARER_GRANT,
      assertion: grant.token,
      ...(scope === undefined ? {} : { scope }),
    });
  };

  /** What the connection declared in its own `initialize`: each caller's session declares the same. */
  let declared: Record<string, unknown> | undefined;
  /** The callers' requests in flight on their own sessions, by JSON-RPC id: where a cancellation of one goes. */
  const sentOn = new Map<string | number, string>();
  const sessions = new CallerSessions({
    url: config.url,
    server,
    maxConnections: auth.maxConnections,
    idleTimeoutMs: auth.idleTimeoutMs,
    fetch: () => base,
    declared: () => declared,
  });

  return {
    // The per-caller sessions end with the connection they were opened for (each closed with an HTTP DELETE).
    release: () => sessions.close(),
    wrapFetch: (fetch) => {
      base = fetch;
      return async (url, init) => {
        const headers = new Headers(init?.headers);
        // Never forwarded: whatever Authorization a request brought, it is replaced (or dropped) here.
        headers.delete('authorization');
        if (new URL(String(url)).origin === origin) {
          const call = rpcCall(init?.body);
          if (call?.method === 'initialize') declared = call.params;
          let token: string;
          // The connection's answer to a question a caller's session asked (elicitation, sampling; made in the
          // caller's context), or the cancellation of a caller's request: on that caller's session, where the
          // server waits for it.
          const answering =
            call?.cancels !== undefined
              ? sentOn.get(call.cancels)
              : call?.answers
                ? currentCaller()
                : undefined;
          if (answering !== undefined && headers.has('mcp-session-id')) {
            const sent = await sessions.answer(
              typeof answering === 'string' ? answering : tupleKey(answering.via, answering.subject),
              (sessionId, callerToken) => {
                headers.set('mcp-session-id', sessionId);
                headers.set('authorization', `Bearer ${callerToken}`);
                return fetch(url, { ...init, headers });
              },
            );
            if (sent !== undefined) return sent;
          }
          if (call?.method !== undefined && CALLER_METHODS.has(call.method)) {
            const caller = currentCaller();
            if (caller === undefined) {
              throw noCallerIdentity(server, 'the call was not made through the HTTP gateway for a caller');
            }
            token = await callerToken(caller, call.tool);
            headers.set('authorization', `Bearer ${token}`);
            // A 2025-era server's session belongs to whoever opened it: the caller's request goes on its own.
            if (headers.has('mcp-session-id')) {
              const key = tupleKey(caller.via, caller.subject);
              const id = call.id;
              const forget = () => {
                if (id !== undefined && sentOn.get(id) === key) sentOn.delete(id);
              };
              if (id !== undefined) sentOn.set(id, key);
              const send = (sessionId: string) => {
                headers.set('mcp-session-id', sessionId);
                return fetch(url, { ...init, headers });
              };
              return sessions
                .send(key, token, headers.get('mcp-protocol-version'), send, forget)
                .catch((err: unknown) => {
                  forget();
                  throw err;
                });
            }
          } else token = await gatewayToken();
          headers.set('authorization', `Bearer ${token}`);
        }
        return fetch(url, { ...init, headers });
      };
    },
  };
}

function noCallerIdentity(server: string, why: string): UpstreamIdentityError {
  return new UpstreamIdentityError(
    'no_caller_identity',
    `Server '${server}' is called with the caller's own identity, and this call has none; it was not sent.`,
    {
      server,
      operatorHint: `Server '${server}' has auth.type 'token_exchange', so every call needs a caller with a bearer token (gateway.auth.jwt on the HTTP gateway), and ${why}. Call it through 'interlock serve --http' with JWT callers, or give the server an 'oauth' auth of its own for in-process and stdio use.`,
    },
  );
}

/** What {@link rpcCall} reads of a JSON-RPC message. */
interface RpcMessage {
  method?: string;
  /** A request's id. */
  id?: string | number;
  params?: Record<string, unknown>;
  /** The tool a `tools/call` names. */
  tool?: string;
  /** It answers the server (a response). */
  answers: boolean;
  /** The request a `notifications/cancelled` cancels. */
  cancels?: string | number;
}

/** What a JSON-RPC message body is (see {@link RpcMessage}); undefined for anything else. */
function rpcCall(body: unknown): RpcMessage | undefined {
  if (typeof body !== 'string' || !body.startsWith('{')) return undefined;
  try {
    const message = JSON.parse(body) as {
      method?: unknown;
      params?: unknown;
      result?: unknown;
      error?: unknown;
    };
    const params = isJsonObject(message.params) ? message.params : undefined;
    if (typeof message.method !== 'string') {
      return { answers: 'id' in message && (message.result !== undefined || message.error !== undefined) };
    }
    const { id } = message as { id?: unknown };
    const name = params?.name;
    const cancels = message.method === 'notifications/cancelled' ? params?.requestId : undefined;
    return {
      method: message.method,
      ...(typeof id === 'string' || typeof id === 'number' ? { id } : {}),
      ...(params === undefined ? {} : { params }),
      ...(typeof name === 'string' ? { tool: name } : {}),
      answers: false,
      ...(typeof cancels === 'string' || typeof cancels === 'number' ? { cancels } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The union of the scopes configured for the tools given, sorted; undefined when none. */
export function scopeFor(
  scopes: Readonly<Record<string, readonly string[]>> | undefined,
  tools: readonly string[],
): string | undefined {
  if (scopes === undefined) return undefined;
  const granted = new Set<string>();
  for (const [pattern, list] of Object.entries(scopes)) {
    if (tools.some((tool) => matchGlob(pattern, tool))) for (const s of list) granted.add(s);
  }
  return granted.size === 0 ? undefined : [...granted].sort().join(' ');
}

/** `expiresAt`, not later than the caller's own token's `exp` (when it is a JWT that has one). */
function capped(expiresAt: number | undefined, subjectToken: string): number | undefined {
  let exp: number | undefined;
  try {
    exp = decodeJwt(subjectToken).exp;
  } catch {
    exp = undefined;
  }
  if (exp === undefined || expiresAt === undefined) return expiresAt;
  return Math.min(expiresAt, exp * 1000);
}

/** The token endpoint: configured, or discovered once from the issuer's metadata (RFC 8414). */
function endpointOf(
  tokenEndpoint: string | undefined,
  issuer: string | undefined,
  fetch: FetchLike,
  server: string,
): () => Promise<string> {
  if (tokenEndpoint !== undefined) return () => Promise.resolve(tokenEndpoint);
  let found: Promise<string> | undefined;
  return () => {
    found ??= (async () => {
      const url = new URL('/.well-known/oauth-authorization-server', issuer);
      const response = await fetch(url, { headers: { accept: 'application/json' } }).catch(() => undefined);
      const metadata = (await response?.json().catch(() => undefined)) as
        | { issuer?: unknown; token_endpoint?: unknown }
        | undefined;
      if (metadata?.issuer !== issuer || typeof metadata?.token_endpoint !== 'string') {
        throw exchangeFailed(
          server,
          `the metadata of issuer ${issuer} names no token endpoint for that issuer`,
        );
      }
      return metadata.token_endpoint;
    })();
    found.catch(() => {
      found = undefined;
    });
    return found;
  };
}

/** One token request; a refusal is `exchange_refused` with the OAuth error code only. */
async function requestToken(
  fetch: FetchLike,
  client: Client,
  params: Record<string, string>,
  now: () => number,
  server: string,
): Promise<MintedToken> {
  const endpoint = await client.tokenEndpoint();
  const body = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.clientSecret === undefined) body.set('client_id', client.clientId);
  else {
    const basic = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  let response: Response;
  try {
    response = await fetch(endpoint, { method: 'POST', headers, body: body.toString() });
  } catch {
    throw exchangeFailed(server, `the token endpoint ${new URL(endpoint).origin} cannot be reached`);
  }
  const answer = (await response.json().catch(() => undefined)) as
    | { access_token?: unknown; expires_in?: unknown; error?: unknown }
    | undefined;
  if (!response.ok) {
    const error =
      typeof answer?.error === 'string' && OAUTH_ERROR_CODE.test(answer.error) ? answer.error : undefined;
    if (response.status >= 500 || error === undefined) {
      throw exchangeFailed(server, `the token endpoint answered HTTP ${response.status}`);
    }
    throw new UpstreamIdentityError(
      'exchange_refused',
      `The authorization server refused the caller's identity for server '${server}' (${error}); the call was not sent.`,
      {
        server,
        operatorHint: `The token endpoint of server '${server}' answered '${params.grant_type}' with '${error}': check the client (auth.clientId) may exchange tokens for this audience and that the caller may be given these scopes.`,
      },
    );
  }
  if (typeof answer?.access_token !== 'string' || answer.access_token === '') {
    throw exchangeFailed(server, 'the token endpoint answered without an access_token');
  }
  const expiresIn = typeof answer.expires_in === 'number' ? answer.expires_in : undefined;
  return {
    token: answer.access_token,
    expiresAt: expiresIn === undefined ? undefined : now() + expiresIn * 1000,
  };
}

function exchangeFailed(server: string, why: string): UpstreamIdentityError {
  return new UpstreamIdentityError(
    'exchange_failed',
    `The caller's identity could not be exchanged for server '${server}'; the call was not sent.`,
    {
      server,
      operatorHint: `Token exchange for server '${server}' failed: ${why}. Check auth.tokenEndpoint or auth.issuer.`,
    },
  );
}
