// Public API of the auth area (issue 9). Any name added here becomes public API.

export { openBrowser } from './loopback.js';
export {
  type CrossAppAccessOptions,
  OAuthProvider,
  type OAuthProviderOptions,
} from './provider.js';
export {
  createServerAuth,
  type ServerAuthOptions,
} from './server-auth.js';
export {
  forgetTokens,
  type RevokeTokensOptions,
  revokeTokens,
  type SignInStatus,
  type SignOutOptions,
  type SignOutResult,
  signInStatus,
  signOut,
} from './sign-in-state.js';
export {
  FileTokenStore,
  MemoryTokenStore,
  StateTokenStore,
  type StateTokenStoreOptions,
  type StoredOAuthState,
  type TokenStore,
} from './token-store.js';
