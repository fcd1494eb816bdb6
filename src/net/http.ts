/**
 * HTTP for the Streamable HTTP and SSE transports and the OAuth endpoints: a fetch built on undici's `request()` over
 * one keep-alive dispatcher per manager (issue 9), unless the caller brings its own fetch. The dispatcher routes each origin by
 * `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` (read once) or explicit proxies, takes custom CA and client certificates (mTLS), and
 * runs the SSRF guard inside its connector so every connection (redirects included) is checked before it opens.
 */
import { createHash } from 'node:crypto';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { buildConnector, Dispatcher, ProxyAgent } from 'undici';
import { ConfigError } from '../errors.js';
import { MASK_LOOKAHEAD_CHARS, maskThenCut, SECRET_NAME, SecretRedactor } from '../redact.js';
import { DEFAULT_NETWORK_POLICY, NetworkGuard, type NetworkPolicy } from './network.js';
import { envProxyRoutes, type ProxyRoutes, proxyFor, tunnelingConnector } from './proxy-tunnel.js';
import { headerEntries, send, undici } from './send.js';

/** Keep-alive idle time of pooled sockets. @default 10 000 ms */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 10_000;
/** Sockets per origin. @default 64 */
export const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;

/** TLS material for the dispatcher (PEM strings or buffers). */
export interface HttpTlsOptions {
  /** Extra trusted CA certificates, added to Node's default roots. */
  ca?: string | Buffer | readonly (string | Buffer)[] | undefined;
  /** Client certificate for mTLS. */
  cert?: string | Buffer | undefined;
  /** Private key of the client certificate. */
  key?: string | Buffer | undefined;
  /** Passphrase of `key`. Never logged. */
  passphrase?: string | undefined;
}

/** Proxy settings. `'env'` reads `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` (and lowercase) at construction. */
export type HttpProxyOption =
  | 'env'
  | 'none'
  | { http?: string | undefined; https?: string | undefined; noProxy?: string | undefined };

/** Options of the shared dispatcher. */
export interface HttpOptions {
  /** @default 'env' */
  proxy?: HttpProxyOption | undefined;
  /** Custom CA and client certificate (mTLS). Applies to the target servers, also when tunneled through a proxy. */
  tls?: HttpTlsOptions | undefined;
  /**
   * What a proxy `CONNECT` names: `'name'` (the proxy resolves it; works with proxies that filter by host name) or
   * `'address'` (the address Interlock resolved and checked, so DNS rebinding cannot move the connection; the TLS
   * certificate is still checked against the name). @default 'name'
   */
  proxyTarget?: 'name' | 'address' | undefined;
  /** @default DEFAULT_KEEP_ALIVE_TIMEOUT_MS */
  keepAliveTimeoutMs?: number | undefined;
  /** @default DEFAULT_CONNECTIONS_PER_ORIGIN */
  connections?: number | undefined;
}

/** Options of {@link createHttpClient}. */
export interface CreateHttpClientOptions {
  /** A caller's fetch: used as is (the caller owns it; no guard, proxy or TLS options apply). */
  fetch?: FetchLike | undefined;
  /** @default DEFAULT_NETWORK_POLICY */
  network?: NetworkPolicy | undefined;
  http?: HttpOptions | undefined;
}

/** What one server may set on top of the shared HTTP options (a server config's `tls` and `proxy`). */
export interface ServerHttpOverrides {
  /** Added to the shared options: `ca` adds to the shared CAs; `cert`, `key` and `passphrase` replace them. */
  tls?: HttpTlsOptions | undefined;
  /** Replaces the shared proxy setting for this server. */
  proxy?: HttpProxyOption | undefined;
}

/**
 * The HTTP stack of a manager or an engine: one guarded keep-alive dispatcher, the fetch over it, and fetches for
 * servers with their own TLS or proxy settings (each on a dispatcher of its own, behind the same guard).
 */
export interface HttpClient {
  /**
   * The secrets this stack has sent (bearer tokens, secret-named headers) or was given: error bodies from servers
   * are masked with it before anyone reads them, and managers mask error messages with it.
   * @internal
   */
  readonly redactor: SecretRedactor;
  /** The fetch for servers without overrides. */
  readonly fetch: FetchLike;
  /** The guard every fetch and dispatcher applies (also for callers that check URLs up front). */
  readonly guard: NetworkGuard;
  /**
   * The guarded dispatcher behind `fetch`, created on first use: give it to other undici users (model providers)
   * so they share the pool, proxy, certificates and SSRF guard. Undefined when a caller's `fetch` was given.
   */
  readonly dispatcher: Dispatcher | undefined;
  /**
   * The fetch for a server with its own `tls` or `proxy`: `fetch` when there are none. Dispatchers are shared by
   * servers with equal settings. Throws `ConfigError` when the client wraps a caller's fetch, which cannot honor
   * them.
   */
  fetchFor(overrides: ServerHttpOverrides | undefined): FetchLike;
  /** Closes every dispatcher it created. A closed client creates new ones on next use. */
  close(): Promise<void>;
}

function tlsConnectOptions(tls: HttpTlsOptions | undefined): Record<string, unknown> {
  if (tls === undefined) return {};
  const out: Record<string, unknown> = {};
  if (tls.ca !== undefined) {
    // Extra CAs add to the default roots instead of replacing them.
    const extra = Array.isArray(tls.ca) ? tls.ca : [tls.ca];
    // node:tls is loaded here, by the first client given extra CAs, not at import (issue 15, import time).
    out.ca = [...process.getBuiltinModule('node:tls').rootCertificates, ...extra];
  }
  if (tls.cert !== undefined) out.cert = tls.cert;
  if (tls.key !== undefined) out.key = tls.key;
  if (tls.passphrase !== undefined) out.passphrase = tls.passphrase;
  return out;
}

/**
 * The shared dispatcher: a guarded connector (the SSRF check runs on resolved addresses before the socket opens),
 * pooled keep-alive sockets, and the proxy agent when a proxy is configured. Through a proxy the proxy resolves
 * the target, so the target is checked by name and by our own resolution just before the request.
 */
export function createDispatcher(guard: NetworkGuard, http: HttpOptions = {}): Dispatcher {
  const tls = tlsConnectOptions(http.tls);
  const { Agent, buildConnector, ProxyAgent } = undici();
  const base = buildConnector({ ...tls, lookup: guard.lookup } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    try {
      // Literal IP hosts never reach `lookup` (net.connect skips it), so they are checked here.
      guard.checkHost(opts.hostname);
    } catch (err) {
      queueMicrotask(() => callback(err as Error, null));
      return;
    }
    base(opts, callback);
  };
  const common = {
    keepAliveTimeout: http.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    connections: http.connections ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
  };
  // One derivation of the routes serves the dispatcher and the pre-check: undici never reads the environment
  // itself, so an explicit `{ https }` cannot pick up HTTP_PROXY behind the guard's back.
  const routes = proxyRoutes(http);
  if (routes === undefined) return new Agent({ ...common, connect });
  if (http.proxyTarget === 'address') {
    return new Agent({ ...common, connect: tunnelingConnector(guard, routes, tls, connect) });
  }
  // Each origin goes direct or through the proxy that `proxyFor` names: the function the SSRF pre-check uses too,
  // so the guard and the dispatcher can never disagree about a route (undici's EnvHttpProxyAgent would fall back
  // to process.env for a protocol left unset). `requestTls` is the TLS to the target inside a CONNECT tunnel.
  return new (routedDispatcherClass())(
    routes,
    new Agent({ ...common, connect }),
    (uri) => new ProxyAgent({ ...common, connect, requestTls: tls, uri } as ProxyAgent.Options),
  );
}

/** Origins whose route a {@link RoutedDispatcher} remembers; beyond that it starts over (routes are cheap). */
const ROUTE_CACHE_SIZE = 256;

let routedDispatcher: ReturnType<typeof defineRoutedDispatcher> | undefined;

function routedDispatcherClass(): ReturnType<typeof defineRoutedDispatcher> {
  routedDispatcher ??= defineRoutedDispatcher(undici().Dispatcher);
  return routedDispatcher;
}

/** Defined on first use, as its base class is undici's. */
function defineRoutedDispatcher(Base: typeof Dispatcher) {
  /** A dispatcher that routes every origin by {@link proxyFor}: direct, or through one agent per proxy URL. */
  return class RoutedDispatcher extends Base {
    readonly #routes: ProxyRoutes;
    readonly #direct: Dispatcher;
    readonly #viaProxy: (uri: string) => Dispatcher;
    readonly #proxies = new Map<string, Dispatcher>();
    readonly #byOrigin = new Map<string, Dispatcher>();

    constructor(routes: ProxyRoutes, direct: Dispatcher, viaProxy: (uri: string) => Dispatcher) {
      super();
      this.#routes = routes;
      this.#direct = direct;
      this.#viaProxy = viaProxy;
    }

    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const key = String(options.origin);
      let target = this.#byOrigin.get(key);
      if (target === undefined) {
        const origin = new URL(key);
        const port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
        const proxy = proxyFor(this.#routes, origin.protocol, origin.hostname, port);
        target = proxy === undefined ? this.#direct : this.#proxy(proxy);
        if (this.#byOrigin.size >= ROUTE_CACHE_SIZE) this.#byOrigin.clear();
        this.#byOrigin.set(key, target);
      }
      return target.dispatch(options, handler);
    }

    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | undefined {
      const done = Promise.all([this.#direct, ...this.#proxies.values()].map((d) => d.close())).then(
        () => {},
      );
      if (callback === undefined) return done;
      done.then(callback, callback);
      return undefined;
    }

    override destroy(): Promise<void>;
    override destroy(err: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(err: Error | null, callback: () => void): void;
    override destroy(
      errOrCallback?: Error | null | (() => void),
      callback?: () => void,
    ): Promise<void> | undefined {
      const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null);
      const cb = typeof errOrCallback === 'function' ? errOrCallback : callback;
      const done = Promise.all([this.#direct, ...this.#proxies.values()].map((d) => d.destroy(err))).then(
        () => {},
      );
      if (cb === undefined) return done;
      done.then(cb, cb);
      return undefined;
    }

    #proxy(uri: string): Dispatcher {
      let agent = this.#proxies.get(uri);
      if (agent === undefined) {
        agent = this.#viaProxy(uri);
        this.#proxies.set(uri, agent);
      }
      return agent;
    }
  };
}

/** `http` with `proxy: 'env'` (the default) replaced by the environment's proxies as they are now. */
function withProxySnapshot(http: HttpOptions): HttpOptions {
  const proxy = http.proxy ?? 'env';
  return proxy === 'env' ? { ...http, proxy: envProxyRoutes() } : http;
}

/** The proxies `http` sends targets through, explicit or from the environment; undefined when there are none. */
function proxyRoutes(http: HttpOptions | undefined): ProxyRoutes | undefined {
  const proxy = http?.proxy ?? 'env';
  if (proxy === 'none') return undefined;
  const routes = proxy === 'env' ? envProxyRoutes() : proxy;
  return routes.http || routes.https ? routes : undefined;
}

/**
 * The proxies whose targets the fetch must resolve and check before each request, because the proxy resolves
 * them: none with `proxyTarget: 'address'`, where the tunnel connector resolves and checks each connection.
 */
function precheckedRoutes(http: HttpOptions | undefined): ProxyRoutes | undefined {
  return http?.proxyTarget === 'address' ? undefined : proxyRoutes(http);
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Redirects followed per request, as browsers do. */
export const MAX_REDIRECTS = 20;
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * The request for the next hop (Fetch standard, "HTTP-redirect fetch"): 303, and 301/302 after a POST, become a
 * bodiless GET; credentials are dropped when the origin changes. Undefined when the body cannot be sent again.
 */
function redirectedRequest(
  request: RequestInit,
  status: number,
  from: URL,
  to: URL,
): RequestInit | undefined {
  const headers = new Headers(request.headers);
  const next: RequestInit = { ...request, headers };
  const method = (request.method ?? 'GET').toUpperCase();
  if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    next.method = 'GET';
    next.body = null;
    for (const h of ['content-type', 'content-length', 'content-encoding', 'content-language'])
      headers.delete(h);
  } else if (request.body instanceof ReadableStream) {
    return undefined;
  }
  if (from.origin !== to.origin) for (const h of CREDENTIAL_HEADERS) headers.delete(h);
  return next;
}

function mergeTls(
  shared: HttpTlsOptions | undefined,
  own: HttpTlsOptions | undefined,
): HttpTlsOptions | undefined {
  if (own === undefined) return shared;
  const list = (ca: HttpTlsOptions['ca']) => (ca === undefined ? [] : Array.isArray(ca) ? ca : [ca]);
  const ca = [...list(shared?.ca), ...list(own.ca)];
  const cert = own.cert ?? shared?.cert;
  const key = own.cert === undefined ? (own.key ?? shared?.key) : own.key;
  const passphrase = own.cert === undefined ? (own.passphrase ?? shared?.passphrase) : own.passphrase;
  return {
    ...(ca.length > 0 ? { ca } : {}),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(passphrase === undefined ? {} : { passphrase }),
  };
}

/** A key equal for equal settings, holding no secret (PEM material and passphrases are hashed). */
function overridesKey(overrides: ServerHttpOverrides): string {
  // JSON.stringify turns a Buffer into { type: 'Buffer', data: [...] }: stable, and hashed below.
  return createHash('sha256').update(JSON.stringify(overrides)).digest('base64url');
}

function hasOverrides(o: ServerHttpOverrides | undefined): o is ServerHttpOverrides {
  return o !== undefined && (o.tls !== undefined || o.proxy !== undefined);
}

/**
 * Distinct per-server TLS / proxy settings whose dispatchers a client keeps; the oldest is closed beyond that
 * (certificates rotated by reconnects would otherwise pile up).
 */
export const MAX_SERVER_DISPATCHERS = 32;

/**
 * Largest error body passed on; the rest is cut (a message quotes only the start anyway). The body is read
 * {@link MASK_LOOKAHEAD_CHARS} further and masked before the cut, so a secret across the cut is masked whole.
 */
const MAX_MASKED_ERROR_BODY = 64 * 1024;

/**
 * An error answer whose body may echo what we sent (a server that repeats the Authorization header in its 500
 * page): every known secret in it is masked before the SDK puts the body into an error message.
 */
async function maskedErrorResponse(response: Response, redactor: SecretRedactor): Promise<Response> {
  if (response.body === null) return response;
  const bytes = new Uint8Array(await new Response(response.body).arrayBuffer());
  const text = new TextDecoder().decode(bytes.subarray(0, MAX_MASKED_ERROR_BODY + MASK_LOOKAHEAD_CHARS * 4));
  const masked = maskThenCut(
    text,
    (t) => redactor.mask(t),
    MAX_MASKED_ERROR_BODY,
    () => '',
  );
  const out = new Response(masked, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(out, 'url', { value: response.url });
  return out;
}

/** The value of header `name` (lower case) in any form `RequestInit.headers` takes. */
function headerValue(headers: RequestInit['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of headerEntries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** Records the secret-named headers of a request (on an error answer only: it walks every header). */
function recordSecretHeaders(headers: RequestInit['headers'], redactor: SecretRedactor): void {
  for (const [key, value] of headerEntries(headers)) if (SECRET_NAME.test(key)) redactor.add(value);
}

/**
 * The guarded fetch over `dispatcher()`. Redirects are followed here, not by undici, so every hop is checked (also
 * through a proxy) and credentials never follow a redirect to another origin (issue 9: no token passthrough).
 */
function guardedFetch(
  guard: NetworkGuard,
  proxied: ProxyRoutes | undefined,
  dispatcher: () => Dispatcher,
  redactor: SecretRedactor,
): FetchLike {
  // The bearer token is looked up on every request (one header read) so that a JSON-RPC error echoing it is
  // masked too; it is added to the redactor only when it changed.
  let lastAuthorization: string | undefined;
  // Through a proxy our connector never sees the target: check what it resolves to now (NO_PROXY targets
  // connect directly, through the guarded connector).
  const checkProxied = async (target: URL, routes: ProxyRoutes) => {
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    if (proxyFor(routes, target.protocol, target.hostname, port) !== undefined)
      await guard.resolveChecked(target.hostname);
  };
  return async (url, init) => {
    let target = new URL(String(url));
    let request: RequestInit = { ...init };
    const mode = init?.redirect ?? 'follow';
    const authorization = headerValue(init?.headers, 'authorization');
    if (authorization !== undefined && authorization !== lastAuthorization) {
      lastAuthorization = authorization;
      redactor.add(authorization);
    }
    for (let hop = 0; ; hop++) {
      guard.checkUrl(target);
      if (proxied !== undefined) await checkProxied(target, proxied);
      let response = await send(dispatcher(), target, request);
      if (response.status >= 400) {
        recordSecretHeaders(request.headers, redactor);
        response = await maskedErrorResponse(response, redactor);
      }
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null || mode === 'manual') return response;
      await response.body?.cancel().catch(() => {});
      if (mode === 'error')
        throw new TypeError(`Redirect refused (redirect: 'error') from ${target.origin}.`);
      if (hop >= MAX_REDIRECTS)
        throw new TypeError(`More than ${MAX_REDIRECTS} redirects from ${target.origin}.`);
      const next = new URL(location, target);
      const followed = redirectedRequest(request, response.status, target, next);
      if (followed === undefined) return response;
      request = followed;
      target = next;
    }
  };
}

/**
 * The HTTP stack: a fetch over one guarded keep-alive dispatcher (created on first use), plus one per
 * distinct server override; or a caller's `fetch` as given, with the URL-string checks only.
 */
export function createHttpClient(options: CreateHttpClientOptions | FetchLike = {}): HttpClient {
  const opts: CreateHttpClientOptions = typeof options === 'function' ? { fetch: options } : options;
  const guard = new NetworkGuard(opts.network ?? DEFAULT_NETWORK_POLICY);
  const redactor = new SecretRedactor();
  const custom = opts.fetch;
  if (custom !== undefined) {
    // A caller's fetch gets the check on the URL string only (scheme, literal addresses, denyHosts): its sockets
    // are its own.
    const wrapped: FetchLike = async (url, init) => {
      guard.checkUrl(new URL(String(url)));
      return custom(url, init);
    };
    return {
      fetch: wrapped,
      guard,
      redactor,
      dispatcher: undefined,
      fetchFor: (overrides) => {
        if (!hasOverrides(overrides)) return wrapped;
        throw new ConfigError(
          'A server sets its own tls or proxy, but HTTP goes through a custom fetch that cannot apply them. Drop the custom fetch, or configure TLS and proxies in it.',
          {
            issues: [
              {
                path: overrides.tls === undefined ? 'proxy' : 'tls',
                message: 'needs the built-in HTTP stack',
              },
            ],
          },
        );
      },
      close: async () => {},
    };
  }
  // The environment is read once, here: the pre-check and every dispatcher then route from the same snapshot.
  const shared = withProxySnapshot(opts.http ?? {});
  const dispatchers = new Map<string, Dispatcher>();
  // Rotated certificates make new settings: beyond MAX_SERVER_DISPATCHERS the oldest dispatcher is let go
  // (requests in flight still end; a fetch that uses its settings again gets a new one).
  const letGoOldest = () => {
    const keys = [...dispatchers.keys()].filter((k) => k !== '');
    if (keys.length < MAX_SERVER_DISPATCHERS) return;
    const oldest = keys[0] as string;
    const d = dispatchers.get(oldest);
    dispatchers.delete(oldest);
    void d?.close().catch(() => {});
  };
  const fetches = new Map<string, FetchLike>();
  const dispatcherFor = (key: string, http: HttpOptions): Dispatcher => {
    let d = dispatchers.get(key);
    if (d === undefined) {
      if (key !== '') letGoOldest();
      d = createDispatcher(guard, http);
      dispatchers.set(key, d);
    }
    return d;
  };
  const fetch = guardedFetch(guard, precheckedRoutes(shared), () => dispatcherFor('', shared), redactor);
  return {
    fetch,
    guard,
    redactor,
    get dispatcher() {
      return dispatcherFor('', shared);
    },
    fetchFor: (overrides) => {
      if (!hasOverrides(overrides)) return fetch;
      const key = overridesKey(overrides);
      let f = fetches.get(key);
      if (f === undefined) {
        // Only closures are kept here; they are cheap, but bounded all the same.
        if (fetches.size >= MAX_SERVER_DISPATCHERS * 4) fetches.delete(fetches.keys().next().value as string);
        const http: HttpOptions = {
          ...shared,
          tls: mergeTls(shared.tls, overrides.tls),
          proxy: overrides.proxy === 'env' ? envProxyRoutes() : (overrides.proxy ?? shared.proxy),
        };
        f = guardedFetch(guard, precheckedRoutes(http), () => dispatcherFor(key, http), redactor);
        fetches.set(key, f);
      }
      return f;
    },
    close: async () => {
      const all = [...dispatchers.values()];
      dispatchers.clear();
      await Promise.all(all.map((d) => d.destroy().catch(() => {})));
    },
  };
}

/** Where an HTTP client comes from: one shared with others (`httpClient`), or the settings to build one. */
export interface HttpClientSource extends CreateHttpClientOptions {
  /** A client shared with others (an engine's): used as is; its owner closes it. */
  httpClient?: HttpClient | undefined;
}

/**
 * The one place HTTP settings become an HTTP client (issue 15): a manager's options, an engine's and a config's
 * (through `httpSettingsFromConfig`) all come here. Returns the shared client as is, or a new one built from
 * `fetch`, `network` and `http`; `owned` says whether the caller made it, and so must close it.
 */
export function httpClientFrom(source: HttpClientSource): {
  readonly client: HttpClient;
  readonly owned: boolean;
} {
  if (source.httpClient !== undefined) return { client: source.httpClient, owned: false };
  const { fetch, network, http } = source;
  return { client: createHttpClient({ fetch, network, http }), owned: true };
}
