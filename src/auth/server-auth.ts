/**
 * Builds the per-server auth that interop's transports use (issue 9): the OAuth provider from a config's `auth`,
 * dynamic headers from `headersHelper` (or a function) refreshed on 401, step-up on `insufficient_scope` answers,
 * sign-in on a 401 to any request after connect with one retry (issue 13), and the no-token-passthrough rule: a
 * bearer token goes only to the origin of the server it was issued for.
 */
import { execFile } from 'node:child_process';
import type { FetchLike } from '@modelcontextprotocol/client';
import { DpopSession, extractWWWAuthenticateParams, auth as sdkAuth } from '@modelcontextprotocol/client';
import type { HeadersHelperConfig, MCPServerConfig } from '../config/servers.js';
import { AuthError, ClosedError, ConfigError } from '../errors.js';
import type { ServerAuth, ServerAuthFactory } from '../interop/open-client.js';
import { authFailureOf } from '../interop/request-errors.js';
import { isJsonObject } from '../json.js';
import { LoopbackReceiver, openBrowser } from './loopback.js';
import { OAuthProvider, type OAuthProviderOptions, tokenStoreKey } from './provider.js';
import { tokenExchangeAuth } from './token-exchange.js';
import { MemoryTokenStore, shareTokenRefresh, type TokenStore } from './token-store.js';

/** Gives fresh headers for a server; called once, then again after each 401. */
export type HeadersSource = (context: { server: string; url: string }) => Promise<Record<string, string>>;

/** Options of {@link createServerAuth}. */
export interface ServerAuthOptions {
  /** Where OAuth state is kept. @default a new {@link MemoryTokenStore} shared by all servers */
  store?: TokenStore | undefined;
  /** Opens the sign-in URL for `authorization_code`. @default {@link openBrowser} */
  openUrl?: ((url: URL) => void | Promise<void>) | undefined;
  /** Dynamic headers per server name; a config's `headersHelper` command is used when absent. */
  headers?: Readonly<Record<string, HeadersSource>> | undefined;
  /** Extra provider options per server (e.g. a private key read from a vault). Secrets are never logged. */
  provider?: ((config: MCPServerConfig) => Partial<OAuthProviderOptions> | undefined) | undefined;
  /** Longest time a headers helper command may run. @default 10 000 ms */
  helperTimeoutMs?: number | undefined;
  /**
   * The user's ID token for a `cross_app_access` server, asked for each time a grant is needed (e.g. from the
   * enterprise single sign-on of the host app). @default the config's `auth.idp.idToken`
   */
  idToken?: ((config: MCPServerConfig) => string | Promise<string>) | undefined;
  /**
   * The workload's JWT for a `jwt_bearer` server (workload identity federation), asked for each time a token is
   * requested (e.g. read from a projected service account token file). @default the config's `auth.assertion`
   */
  assertion?: ((config: MCPServerConfig) => string | Promise<string>) | undefined;
}

/** A secret from `source`, else the config's `fallback`; a ConfigError naming `path` when neither has one. */
function secretSource(
  config: MCPServerConfig,
  source: ((config: MCPServerConfig) => string | Promise<string>) | undefined,
  fallback: string | undefined,
  path: string,
  option: string,
): () => Promise<string> {
  return async () => {
    const value = (await source?.(config)) ?? fallback;
    if (value === undefined || value === '') {
      throw new ConfigError(
        `Server '${config.name}' needs ${path} for its OAuth grant: set it (from an environment variable) or pass ${option} to createServerAuth.`,
        { server: config.name, issues: [{ path, message: 'missing' }] },
      );
    }
    return value;
  };
}

/** Runs a headers helper command (no shell); its stdout must be a JSON object of string values. */
export function commandHeaders(helper: HeadersHelperConfig, timeoutMs = 10_000): HeadersSource {
  return () =>
    new Promise((resolve, reject) => {
      execFile(helper.command, helper.args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout) => {
        // Neither stdout nor stderr goes into the message: they hold the secrets.
        if (err) {
          return reject(
            helperError(
              helper,
              `failed (${err.code ?? 'error'}); run it by hand to see why, and fix headersHelper.command or its args`,
            ),
          );
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(stdout);
        } catch {
          parsed = undefined;
        }
        if (!isJsonObject(parsed)) {
          return reject(
            helperError(
              helper,
              'did not print a JSON object of headers; it must print e.g. {"Authorization": "Bearer …"}',
            ),
          );
        }
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
        resolve(out);
      });
    });
}

/** A headers helper that failed, as the config mistake it is (`INVALID_CONFIG`). */
function helperError(helper: HeadersHelperConfig, what: string): ConfigError {
  return new ConfigError(`headersHelper '${helper.command}' ${what}.`, {
    issues: [{ path: 'headersHelper', message: what }],
  });
}

function replayable(body: unknown): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof URLSearchParams;
}

/**
 * OAuth servers: bearer tokens in a row a server may answer 401 to, with no success in between, before requests to
 * it fail instead of asking for yet another token. The first refusal is expected (an expired or revoked token); a
 * second one means a newly issued token was refused too.
 */
const MAX_REFUSED_TOKENS = 2;

function bearerOf(headers: Headers): string | undefined {
  return /^(?:bearer|dpop)\s+(.+)$/i.exec(headers.get('authorization') ?? '')?.[1];
}

/**
 * Wraps `fetch` for one server: adds dynamic headers (fetched again and the request retried once on 401), drops a
 * bearer `Authorization` header from any request to another origin, reports `insufficient_scope` to
 * `onInsufficientScope`, and stops the SDK's re-authorization loop when the server refuses newly issued tokens too
 * (the SSE transport asks for a new token after every 401, without end).
 */
export function wrapServerFetch(
  base: FetchLike,
  options: {
    serverUrl: string;
    server: string;
    headers?: HeadersSource | undefined;
    /**
     * Told about `insufficient_scope`; returns a new access token when it got one (step-up), and the request is
     * then sent again with it.
     */
    onInsufficientScope?:
      | ((scope: string, resourceMetadataUrl: URL | undefined) => Promise<string | undefined>)
      | undefined;
    /**
     * Told about a 401 when `active` says so (after connect); returns a new access token when it got one (a
     * refresh, a new grant or a sign-in), and the request is then sent again with it, once.
     */
    onUnauthorized?:
      | ((scope: string | undefined, resourceMetadataUrl: URL | undefined) => Promise<string | undefined>)
      | undefined;
    /** Whether `onUnauthorized` applies now; during connect the SDK's own sign-in runs instead. @default always */
    active?: (() => boolean) | undefined;
    /**
     * Bearer tokens in a row the server may refuse with 401 before a request fails with an error instead of
     * returning the 401 (which would make the SDK ask for another token). `createServerAuth` sets 2 for OAuth
     * servers. @default no limit
     */
    maxRefusedTokens?: number | undefined;
  },
): FetchLike {
  const origin = new URL(options.serverUrl).origin;
  let cached: Promise<Record<string, string>> | undefined;
  const dynamic = (source: HeadersSource): Promise<Record<string, string>> => {
    if (cached === undefined) {
      const next = source({ server: options.server, url: options.serverUrl });
      cached = next;
      // A failed helper is asked again next time.
      next.catch(() => {
        if (cached === next) cached = undefined;
      });
    }
    return cached;
  };
  let refused: string | undefined;
  let refusals = 0;
  const checkRefusals = (token: string | undefined, response: Response): void => {
    if (token === undefined || options.maxRefusedTokens === undefined) return;
    if (response.status !== 401) {
      if (response.ok) [refused, refusals] = [undefined, 0];
      return;
    }
    // Requests in flight with the same refused token count once.
    if (token !== refused) [refused, refusals] = [token, refusals + 1];
    if (refusals >= options.maxRefusedTokens) {
      void response.body?.cancel().catch(() => {});
      // The token itself stays out of the message (issue 9: tokens are never printed).
      throw new AuthError(
        'token_refused',
        `Server '${options.server}' (${origin}) refused ${refusals} access tokens in a row (HTTP 401), also a newly issued one: the authorization server may issue them for another resource (audience) or with too little scope. Check the server's OAuth configuration; no further token is requested.`,
        { server: options.server },
      );
    }
  };
  const send = async (url: string | URL, init: RequestInit | undefined): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const sameOrigin = new URL(String(url)).origin === origin;
    if (sameOrigin && options.headers !== undefined) {
      for (const [k, v] of Object.entries(await dynamic(options.headers))) headers.set(k, v);
    }
    // No token passthrough (issue 9): a bearer or DPoP-bound token is for this server's origin only.
    if (!sameOrigin && /^(bearer|dpop)\s/i.test(headers.get('authorization') ?? '')) {
      headers.delete('authorization');
      headers.delete('dpop');
    }
    const response = await base(url, { ...init, headers });
    if (sameOrigin) checkRefusals(bearerOf(headers), response);
    return response;
  };
  return async (url, init) => {
    let response = await send(url, init);
    // DPoP-bound requests: the SDK's DPoP layer around this fetch answers nonce challenges and re-authorizes with a
    // fresh proof; a retry from here would replay the proof (RFC 9449 4.3) or downgrade it to Bearer.
    const sameOrigin = new URL(String(url)).origin === origin && !new Headers(init?.headers).has('dpop');
    if (response.status === 401 && sameOrigin && options.headers !== undefined && replayable(init?.body)) {
      await response.body?.cancel().catch(() => {});
      cached = undefined;
      response = await send(url, init);
    }
    if (
      response.status === 401 &&
      sameOrigin &&
      options.onUnauthorized !== undefined &&
      (options.active?.() ?? true) &&
      replayable(init?.body)
    ) {
      // Auth on any request (issue 13): a 401 after connect (an expired or revoked token, on tools/list or any later
      // call) gets a new token and one retry. A second 401 is the SDK's to report; the refusal count stops loops.
      const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(response);
      const token = await options.onUnauthorized(scope, resourceMetadataUrl);
      if (token !== undefined) {
        await response.body?.cancel().catch(() => {});
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${token}`);
        response = await send(url, { ...init, headers });
      }
    }
    if (response.status === 403 && sameOrigin && options.onInsufficientScope !== undefined) {
      const { error, scope, resourceMetadataUrl } = extractWWWAuthenticateParams(response);
      if (error === 'insufficient_scope' && scope !== undefined) {
        const token = await options.onInsufficientScope(scope, resourceMetadataUrl);
        if (token !== undefined && replayable(init?.body)) {
          await response.body?.cancel().catch(() => {});
          const headers = new Headers(init?.headers);
          headers.set('authorization', `Bearer ${token}`);
          response = await send(url, { ...init, headers });
        }
      }
    }
    return response;
  };
}

/**
 * Gets a new access token for the server: a refresh or a new non-interactive grant (client credentials, cross-app
 * access) at once, or, with authorization code, a sign-in while the request waits; the redirect receiver runs again
 * on the registered redirect port for it. With `scope` this is step-up (MCP authorization, "Step-up authorization
 * flow"); this also covers the SSE transport, which does not retry a 403 itself. The SDK checks the redirect's
 * `iss` (RFC 9207); its issuer checks fail as `AUTH_FAILED`.
 */
async function signIn(
  provider: OAuthProvider,
  options: {
    server: string;
    serverUrl: string;
    scope: string | undefined;
    resourceMetadataUrl: URL | undefined;
    fetch: FetchLike;
    /**
     * Forget the stored discovery first: after a refused token the server may name another authorization server
     * (SEP-2352), whose client registration and tokens are then made anew.
     */
    rediscover?: boolean | undefined;
  },
): Promise<string | undefined> {
  if (options.rediscover === true) await provider.invalidateCredentials('discovery');
  const common = { serverUrl: options.serverUrl, fetchFn: options.fetch };
  const request = { ...common, scope: options.scope, resourceMetadataUrl: options.resourceMetadataUrl };
  const redirect = provider.redirectUrl;
  try {
    if (redirect === undefined) {
      const result = await sdkAuth(provider, request);
      return result === 'AUTHORIZED' ? (await provider.tokens())?.access_token : undefined;
    }
    const receiver = await LoopbackReceiver.start({ port: Number(new URL(redirect).port) });
    try {
      const result = await sdkAuth(provider, request);
      if (result === 'REDIRECT') {
        const { code, iss } = await receiver.waitForResponse({ state: provider.state() });
        await sdkAuth(provider, { ...common, authorizationCode: code, iss });
      }
    } finally {
      await receiver.close();
    }
  } catch (err) {
    throw authFailureOf(err, options.server) ?? err;
  }
  return (await provider.tokens())?.access_token;
}

/** Runs `task` once at a time: calls while one runs share its result (requests failing together sign in once). */
function single<T>(task: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= task().finally(() => {
      running = undefined;
    });
    return running;
  };
}

/**
 * Starts the redirect receiver on the fixed port, else on the port of the stored registration's redirect URI (so
 * the registration and refreshes stay valid across runs), else on any free port.
 */
async function startReceiver(
  store: TokenStore,
  serverUrl: string,
  fixed: number | undefined,
): Promise<LoopbackReceiver> {
  if (fixed !== undefined) return LoopbackReceiver.start({ port: fixed });
  const info = (await store.load(tokenStoreKey(serverUrl)))?.clientInformation as
    | { redirect_uris?: unknown }
    | undefined;
  const previous = Array.isArray(info?.redirect_uris)
    ? info.redirect_uris.find((u) => typeof u === 'string')
    : undefined;
  const port = typeof previous === 'string' && URL.canParse(previous) ? Number(new URL(previous).port) : 0;
  if (port > 0) {
    try {
      return await LoopbackReceiver.start({ port });
    } catch {
      // Taken: a new port, and the registration is made again.
    }
  }
  return LoopbackReceiver.start({ port: 0 });
}

/**
 * The factory interop's transports call per server. Servers without `auth`, `headersHelper` or an entry in
 * `headers` get no wrapper at all.
 */
export function createServerAuth(options: ServerAuthOptions = {}): ServerAuthFactory {
  const store = options.store ?? new MemoryTokenStore();
  // DPoP keys per server, for the life of this factory: tokens bound to a key stay usable across reconnects.
  const dpopSessions = new Map<string, Promise<DpopSession>>();
  const dpopFor = (url: string) => () => {
    const key = tokenStoreKey(url);
    let session = dpopSessions.get(key);
    if (session === undefined) {
      session = DpopSession.create();
      dpopSessions.set(key, session);
    }
    return session;
  };
  return (config): ServerAuth | undefined => {
    if (config.transport === 'stdio') return undefined;
    const source =
      options.headers?.[config.name] ??
      (config.headersHelper === undefined
        ? undefined
        : commandHeaders(config.headersHelper, options.helperTimeoutMs));
    // Issue 41: the gateway's caller's identity, exchanged per caller; no OAuth provider, no headers helper.
    if (config.auth?.type === 'token_exchange') return tokenExchangeAuth(config, config.auth);
    const oauth = config.auth;
    if (oauth === undefined && source === undefined) return undefined;
    let provider: OAuthProvider | undefined;
    let receiver: LoopbackReceiver | undefined;
    let baseFetch: FetchLike | undefined;
    let ready: Promise<void> = Promise.resolve();
    if (oauth !== undefined) {
      const interactive = oauth.grant === 'authorization_code';
      const idp = oauth.idp;
      const idTokenSource = options.idToken;
      // The identity provider is reached through the server's guarded fetch, known once the transport is built.
      const idpFetch: FetchLike = (url, init) => (baseFetch ?? fetch)(url, init);
      const base: OAuthProviderOptions = {
        serverUrl: config.url,
        store,
        grant: oauth.grant,
        issuer: oauth.issuer,
        crossAppAccess:
          idp === undefined
            ? undefined
            : {
                issuer: idp.issuer,
                tokenEndpoint: idp.tokenEndpoint,
                clientId: idp.clientId,
                clientSecret: idp.clientSecret,
                idToken: secretSource(config, idTokenSource, idp.idToken, 'auth.idp.idToken', 'idToken'),
              },
        assertion: secretSource(config, options.assertion, oauth.assertion, 'auth.assertion', 'assertion'),
        dpop: oauth.dpop === true ? dpopFor(config.url) : undefined,
        fetch: idpFetch,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        tokenEndpointAuthMethod: oauth.tokenEndpointAuthMethod,
        privateKey: oauth.privateKey,
        signingAlgorithm: oauth.signingAlgorithm,
        clientMetadataUrl: oauth.clientMetadataUrl,
        scope: oauth.scope,
        ...options.provider?.(config),
      };
      if (interactive) {
        // The redirect URI must be known before discovery; the receiver listens only for the sign-in.
        ready = startReceiver(store, config.url, oauth.redirectPort).then((r) => {
          receiver = r;
          provider = new OAuthProvider({
            ...base,
            redirectUrl: r.redirectUrl,
            onAuthorizationUrl: options.openUrl ?? ((url) => openBrowser(url)),
          });
        });
      } else provider = new OAuthProvider(base);
    }
    // Connect runs the SDK's own sign-in (and the redirect receiver above); once it settled, a 401 on any request
    // is answered here (issue 13).
    let connected = false;
    const auth: ServerAuth = {
      prepare: () => ready,
      get authProvider() {
        return provider;
      },
      wrapFetch: (fetch) => {
        baseFetch = fetch;
        const target = { server: config.name, serverUrl: config.url, fetch };
        let pending: { scope: string | undefined; resourceMetadataUrl: URL | undefined } = {
          scope: undefined,
          resourceMetadataUrl: undefined,
        };
        const reauthorize = single(async () =>
          provider === undefined ? undefined : signIn(provider, { ...target, ...pending, rediscover: true }),
        );
        const wrapped = wrapServerFetch(fetch, {
          serverUrl: config.url,
          server: config.name,
          headers: source,
          maxRefusedTokens: oauth === undefined ? undefined : MAX_REFUSED_TOKENS,
          active: () => connected,
          onUnauthorized: async (scope, resourceMetadataUrl) => {
            pending = { scope, resourceMetadataUrl };
            return reauthorize();
          },
          onInsufficientScope: async (scope, resourceMetadataUrl) => {
            if (provider === undefined) return undefined;
            const required = await provider.requireScope(scope);
            return signIn(provider, { ...target, scope: required, resourceMetadataUrl });
          },
        });
        // A store shared by a fleet (issue 16): one process at a time refreshes this server's token.
        return oauth === undefined
          ? wrapped
          : shareTokenRefresh(wrapped, { store, key: tokenStoreKey(config.url), serverUrl: config.url });
      },
      close: async () => {
        connected = true;
        await receiver?.close();
      },
    };
    if (oauth?.grant === 'authorization_code') {
      auth.waitForAuthorizationCode = async (signal) => {
        if (receiver === undefined || provider === undefined) {
          throw new ClosedError(
            `The sign-in receiver of server '${config.name}' is not running (its connect attempt already ended); connect again to sign in.`,
            { server: config.name },
          );
        }
        return receiver.waitForResponse({ state: provider.state(), signal });
      };
    }
    return auth;
  };
}
