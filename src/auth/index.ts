// Public API of the auth area (issue 9). Any name added here becomes public API.

export {
  type AuthorizationResponse,
  LoopbackReceiver,
  type LoopbackReceiverOptions,
  type OpenBrowserOptions,
  openBrowser,
} from './loopback.js';
export {
  type CrossAppAccessOptions,
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
export {
  DEFAULT_REVOCATION_TIMEOUT_MS,
  forgetTokens,
  type RevocableToken,
  type RevocationClientOptions,
  type RevocationResult,
  type RevokeTokensOptions,
  revokeTokens,
  type SignInStatus,
  type SignOutOptions,
  type SignOutResult,
  signInStatus,
  signOut,
} from './sign-in-state.js';
export {
  DEFAULT_REFRESH_LOCK_TTL_MS,
  FileTokenStore,
  MemoryTokenStore,
  StateTokenStore,
  type StateTokenStoreOptions,
  type StoredOAuthState,
  shareTokenRefresh,
  type TokenStore,
} from './token-store.js';
