/**
 * HTTP for the Streamable HTTP and SSE transports and the OAuth endpoints: undici's fetch over one keep-alive
 * dispatcher per manager (issue 9), unless the caller brings its own fetch. The dispatcher honors `HTTP_PROXY` /
 * `HTTPS_PROXY` / `NO_PROXY` (undici's `EnvHttpProxyAgent`), takes custom CA and client certificates (mTLS), and
 * runs the SSRF guard inside its connector so every connection (redirects included) is checked before it opens.
 */
import { rootCertificates } from 'node:tls';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, buildConnector, type Dispatcher, EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';
import { DEFAULT_NETWORK_POLICY, NetworkGuard, type NetworkPolicy } from './network.js';

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
  /** @default DEFAULT_KEEP_ALIVE_TIMEOUT_MS */
  keepAliveTimeoutMs?: number | undefined;
  /** @default DEFAULT_CONNECTIONS_PER_ORIGIN */
  connections?: number | undefined;
}

/** Options of {@link createHttpFetch}. */
export interface CreateHttpFetchOptions {
  /** A caller's fetch: used as is (the caller owns it; no guard, proxy or TLS options apply). */
  fetch?: FetchLike | undefined;
  /** @default DEFAULT_NETWORK_POLICY */
  network?: NetworkPolicy | undefined;
  http?: HttpOptions | undefined;
}

/** A fetch and what it takes to release it. */
export interface HttpClient {
  fetch: FetchLike;
  /** The guard the fetch applies (also for callers that check URLs up front). */
  guard: NetworkGuard;
  close(): Promise<void>;
}

function tlsConnectOptions(tls: HttpTlsOptions | undefined): Record<string, unknown> {
  if (tls === undefined) return {};
  const out: Record<string, unknown> = {};
  if (tls.ca !== undefined) {
    // Extra CAs add to the default roots instead of replacing them.
    const extra = Array.isArray(tls.ca) ? tls.ca : [tls.ca];
    out.ca = [...rootCertificates, ...extra];
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
  const proxy = http.proxy ?? 'env';
  if (proxy === 'none') return new Agent({ ...common, connect });
  const explicit =
    proxy === 'env' ? {} : { httpProxy: proxy.http, httpsProxy: proxy.https, noProxy: proxy.noProxy };
  if (proxy !== 'env' && proxy.http === undefined && proxy.https === undefined)
    return new Agent({ ...common, connect });
  // EnvHttpProxyAgent passes `connect` to its direct (NO_PROXY) agent; `requestTls` is the TLS to the target
  // inside a CONNECT tunnel.
  return new EnvHttpProxyAgent({
    ...common,
    ...explicit,
    connect,
    requestTls: tls,
  } as EnvHttpProxyAgent.Options);
}

function isProxied(http: HttpOptions | undefined): boolean {
  const proxy = http?.proxy ?? 'env';
  if (proxy === 'none') return false;
  if (proxy === 'env') {
    const e = process.env;
    return Boolean(e.HTTP_PROXY || e.http_proxy || e.HTTPS_PROXY || e.https_proxy);
  }
  return proxy.http !== undefined || proxy.https !== undefined;
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

/** undici's fetch over the shared guarded dispatcher the manager closes; or `fetch` as given. */
export function createHttpFetch(options: CreateHttpFetchOptions | FetchLike = {}): HttpClient {
  const opts: CreateHttpFetchOptions = typeof options === 'function' ? { fetch: options } : options;
  const guard = new NetworkGuard(opts.network ?? DEFAULT_NETWORK_POLICY);
  const custom = opts.fetch;
  if (custom !== undefined) {
    // A caller's fetch gets the check on the URL string only (scheme, literal addresses, denyHosts): its sockets
    // are its own.
    const wrapped: FetchLike = async (url, init) => {
      guard.checkUrl(new URL(String(url)));
      return custom(url, init);
    };
    return { fetch: wrapped, guard, close: async () => {} };
  }
  const proxied = isProxied(opts.http);
  let dispatcher: Dispatcher | undefined;
  const check = async (target: URL) => {
    guard.checkUrl(target);
    // Through a proxy our connector never sees the target: check what it resolves to now.
    if (proxied) await guard.resolveChecked(target.hostname);
  };
  // Redirects are followed here, not by undici, so every hop is checked (also through a proxy) and credentials
  // never follow a redirect to another origin (issue 9: no token passthrough).
  const fetch: FetchLike = async (url, init) => {
    let target = new URL(String(url));
    let request: RequestInit = { ...init };
    const mode = init?.redirect ?? 'follow';
    for (let hop = 0; ; hop++) {
      await check(target);
      dispatcher ??= createDispatcher(guard, opts.http);
      // undici's Request/Response types are the web ones Node's global fetch uses; only the type names differ.
      const response = (await undiciFetch(target, {
        ...(request as object),
        redirect: 'manual',
        dispatcher,
      })) as unknown as Response;
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
  return {
    fetch,
    guard,
    close: async () => {
      const d = dispatcher;
      dispatcher = undefined;
      await d?.destroy().catch(() => {});
    },
  };
}
