// Public API of the net area (issue 15): the HTTP stack under the remote transports, OAuth and model providers,
// with its SSRF guard and proxy routing. It depends on errors only. Any name added here becomes public API.

export {
  type CreateHttpClientOptions,
  createDispatcher,
  createHttpClient,
  DEFAULT_CONNECTIONS_PER_ORIGIN,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  type HttpClient,
  type HttpOptions,
  type HttpProxyOption,
  type HttpTlsOptions,
  MAX_REDIRECTS,
  type ServerHttpOverrides,
} from './http.js';
export {
  type AddressKind,
  classifyAddress,
  DEFAULT_NETWORK_POLICY,
  METADATA_ADDRESSES,
  NetworkGuard,
  type NetworkPolicy,
  NetworkPolicyError,
  type NetworkRefusal,
  type Resolver,
} from './network.js';
export { envProxyRoutes, type ProxyRoutes, proxyFor } from './proxy-tunnel.js';
