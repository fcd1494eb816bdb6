// Public API of the auth area (issue 9). Any name added here becomes public API.

export { LoopbackReceiver, type LoopbackReceiverOptions, openBrowser } from './loopback.js';
export {
  OAuthProvider,
  type OAuthProviderOptions,
  type TokenEndpointAuthMethod,
  tokenStoreKey,
} from './provider.js';
export {
  commandHeaders,
  createServerAuth,
  type HeadersSource,
  type ServerAuthOptions,
  wrapServerFetch,
} from './server-auth.js';
export { FileTokenStore, MemoryTokenStore, type StoredOAuthState, type TokenStore } from './token-store.js';
