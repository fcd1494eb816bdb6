// Public API of the net area (issue 15): the HTTP stack under the remote transports, OAuth and model providers,
// with its SSRF guard. Any name added here becomes public API.

export {
  type CreateHttpClientOptions,
  createHttpClient,
  type HttpClient,
  type HttpOptions,
  type HttpProxyOption,
  type HttpTlsOptions,
} from './http.js';
export { METADATA_ADDRESSES, NetworkGuard, type NetworkPolicy, NetworkPolicyError } from './network.js';
