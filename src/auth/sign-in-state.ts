/**
 * Explicit sign-in management over a {@link TokenStore} (issue 9), for `interlock login` and `logout`: what is
 * stored for a server (described without its secrets), dropping its tokens to sign in anew, and signing out, which
 * first revokes the tokens at the authorization server's `revocation_endpoint` (RFC 7009) when the stored discovery
 * state names one, then forgets the stored state.
 */

import type {
  AuthorizationServerMetadata,
  FetchLike,
  OAuthClientInformationMixed,
} from '@modelcontextprotocol/client';
import { createPrivateKeyJwtAuth, selectClientAuthMethod } from '@modelcontextprotocol/client';
import { AuthError, ConfigError } from '../errors.js';
import { type OAuthProviderOptions, tokenStoreKey } from './provider.js';
import type { StoredOAuthState, TokenStore } from './token-store.js';

/** Longest time one revocation request may take. */
export const DEFAULT_REVOCATION_TIMEOUT_MS = 10_000;

/** What is stored for one server, without any token or secret. */
export interface SignInStatus {
  /** An access token is stored. */
  signedIn: boolean;
  /** The scope granted with the access token, when the server named it. */
  scope: string | undefined;
  /** When the access token expires (ms since the epoch), when the server gave a lifetime. */
  expiresAt: number | undefined;
  /** `expiresAt` has passed (a stored refresh token may still renew the access token). */
  expired: boolean;
  /** A refresh token is stored. */
  refreshable: boolean;
  /** The client id in use (a public value), from the stored registration. */
  clientId: string | undefined;
  /** The authorization server's RFC 7009 revocation endpoint, from the stored discovery state. */
  revocationEndpoint: string | undefined;
}

/** Describes a stored state (from {@link TokenStore.load}) without its secrets. */
export function signInStatus(state: StoredOAuthState | undefined, now: number = Date.now()): SignInStatus {
  const tokens = state?.tokens;
  const expiresAt = tokens === undefined ? undefined : state?.expiresAt;
  const clientId = state?.clientInformation?.client_id;
  return {
    signedIn: typeof tokens?.access_token === 'string' && tokens.access_token !== '',
    scope: typeof tokens?.scope === 'string' && tokens.scope !== '' ? tokens.scope : undefined,
    expiresAt: typeof expiresAt === 'number' ? expiresAt : undefined,
    expired: typeof expiresAt === 'number' && expiresAt <= now,
    refreshable: typeof tokens?.refresh_token === 'string' && tokens.refresh_token !== '',
    clientId: typeof clientId === 'string' ? clientId : undefined,
    revocationEndpoint: revocationEndpoint(state),
  };
}

/**
 * The revocation endpoint named by the stored authorization server metadata, when it is an http(s) URL; normalized
 * (the stored file is outside input, and the URL is printed).
 */
function revocationEndpoint(state: StoredOAuthState | undefined): string | undefined {
  const metadata = state?.discoveryState?.authorizationServerMetadata as
    | { revocation_endpoint?: unknown }
    | undefined;
  const endpoint = metadata?.revocation_endpoint;
  if (typeof endpoint !== 'string' || !URL.canParse(endpoint)) return undefined;
  const url = new URL(endpoint);
  return /^https?:$/.test(url.protocol) ? url.href : undefined;
}

/**
 * Drops the stored tokens of the server at `serverUrl` (and a pending PKCE verifier), keeping the client
 * registration and discovery results, so the next connect signs in anew with the same client. Resolves with
 * whether tokens were stored.
 */
export async function forgetTokens(store: TokenStore, serverUrl: string): Promise<boolean> {
  const key = tokenStoreKey(serverUrl);
  const state = await store.load(key);
  if (state?.tokens === undefined) return false;
  const { tokens: _tokens, expiresAt: _expiresAt, codeVerifier: _verifier, ...rest } = state;
  await store.save(key, rest);
  return true;
}

/** A token kind RFC 7009 names in `token_type_hint`. */
export type RevocableToken = 'refresh_token' | 'access_token';

/** How the client authenticates: the fields of a server's `auth` config that matter for it. */
export type RevocationClientOptions = Pick<
  OAuthProviderOptions,
  | 'clientId'
  | 'clientSecret'
  | 'tokenEndpointAuthMethod'
  | 'privateKey'
  | 'signingAlgorithm'
  | 'clientMetadataUrl'
>;

/** Options of {@link revokeTokens}. */
export interface RevokeTokensOptions extends RevocationClientOptions {
  /** The fetch for the revocation requests (a manager's guarded one in the CLI). @default globalThis.fetch */
  fetch?: FetchLike | undefined;
  /** Aborts the revocation requests; what was not revoked then is reported as failed. */
  signal?: AbortSignal | undefined;
  /** Longest time each request may take. @default DEFAULT_REVOCATION_TIMEOUT_MS */
  timeoutMs?: number | undefined;
}

/** What {@link revokeTokens} did. Reasons hold an HTTP status, an OAuth error code or a network error code only. */
export interface RevocationResult {
  /** The revocation endpoint used, or undefined when the stored state names none (nothing was sent). */
  endpoint: string | undefined;
  /** Tokens the endpoint accepted to revoke, in the order sent. */
  revoked: RevocableToken[];
  /** Tokens whose revocation failed, with why. */
  failed: { token: RevocableToken; reason: string }[];
}

/**
 * Revokes the stored refresh token, then the access token, at the revocation endpoint of the stored discovery state
 * (RFC 7009), authenticating the client as the token endpoint does: `private_key_jwt` with a signed assertion, else
 * the stored registration (or the configured client) with `client_secret_basic`, `client_secret_post` or `none`
 * (the method of the registration, else chosen from the server's supported methods). Never throws for a failed
 * request: each failure is in `failed`. No token or secret is ever put in a reason.
 */
export async function revokeTokens(
  state: StoredOAuthState | undefined,
  options: RevokeTokensOptions = {},
): Promise<RevocationResult> {
  const endpoint = revocationEndpoint(state);
  const result: RevocationResult = { endpoint, revoked: [], failed: [] };
  const tokens = state?.tokens;
  if (endpoint === undefined || tokens === undefined) return result;
  const wanted: [RevocableToken, string | undefined][] = [
    // RFC 7009 2.1: revoking the refresh token first also ends the grant on most servers.
    ['refresh_token', tokens.refresh_token],
    ['access_token', tokens.access_token],
  ];
  const metadata = state?.discoveryState?.authorizationServerMetadata;
  for (const [kind, token] of wanted) {
    if (typeof token !== 'string' || token === '') continue;
    try {
      await revokeOne(endpoint, kind, token, state, metadata, options);
      result.revoked.push(kind);
    } catch (err) {
      result.failed.push({ token: kind, reason: (err as Error).message });
    }
  }
  return result;
}

async function revokeOne(
  endpoint: string,
  kind: RevocableToken,
  token: string,
  state: StoredOAuthState | undefined,
  metadata: AuthorizationServerMetadata | undefined,
  options: RevokeTokensOptions,
): Promise<void> {
  const url = new URL(endpoint);
  const headers = new Headers({
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  });
  const params = new URLSearchParams({ token, token_type_hint: kind });
  await authenticateClient(headers, params, url, state, metadata, options);
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_REVOCATION_TIMEOUT_MS);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  let response: Response;
  try {
    // No redirects: the body holds a token (and maybe the client secret), which must not go anywhere else.
    response = await (options.fetch ?? fetch)(url, {
      method: 'POST',
      headers,
      body: params,
      redirect: 'manual',
      signal,
    });
  } catch (err) {
    throw revocationFailed(networkReason(err, signal));
  }
  if (response.ok) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  throw revocationFailed(await httpReason(response));
}

/**
 * A revocation the authorization server did not do. The message is only the reason (a status, an OAuth error
 * code or a network error code): {@link revokeTokens} reports it as such, and no token or secret is in it.
 */
function revocationFailed(reason: string): AuthError {
  return new AuthError('revocation_failed', reason);
}

/** A client setting revocation needs and does not have; the message is short, it becomes a reported reason. */
function clientConfigMissing(message: string): ConfigError {
  return new ConfigError(message, { issues: [{ path: 'auth', message }] });
}

async function authenticateClient(
  headers: Headers,
  params: URLSearchParams,
  url: URL,
  state: StoredOAuthState | undefined,
  metadata: AuthorizationServerMetadata | undefined,
  options: RevocationClientOptions,
): Promise<void> {
  if (options.tokenEndpointAuthMethod === 'private_key_jwt') {
    if (options.clientId === undefined || options.privateKey === undefined)
      throw clientConfigMissing('private_key_jwt needs clientId and privateKey');
    const sign = createPrivateKeyJwtAuth({
      issuer: options.clientId,
      subject: options.clientId,
      privateKey: options.privateKey,
      alg: options.signingAlgorithm ?? 'RS256',
    });
    await sign(headers, params, url, metadata);
    return;
  }
  const info = clientInformation(state, options);
  if (info === undefined) throw clientConfigMissing('no client id is stored or configured');
  const supported = (metadata as Record<string, unknown> | undefined)
    ?.revocation_endpoint_auth_methods_supported;
  const methods = Array.isArray(supported)
    ? supported.filter((m): m is string => typeof m === 'string')
    : (metadata?.token_endpoint_auth_methods_supported ?? []);
  // The same choice, and the same encoding, as the MCP SDK makes for the token endpoint.
  const method = selectClientAuthMethod(info, methods);
  if (method === 'client_secret_basic') {
    if (info.client_secret === undefined)
      throw clientConfigMissing('client_secret_basic needs a client secret');
    headers.set('authorization', `Basic ${btoa(`${info.client_id}:${info.client_secret}`)}`);
    return;
  }
  params.set('client_id', info.client_id);
  if (method === 'client_secret_post' && info.client_secret !== undefined)
    params.set('client_secret', info.client_secret);
}

/** The stored registration first, then the configured client, as {@link OAuthProvider.clientInformation} does. */
function clientInformation(
  state: StoredOAuthState | undefined,
  options: RevocationClientOptions,
): OAuthClientInformationMixed | undefined {
  const stored = state?.clientInformation;
  if (typeof stored?.client_id === 'string') return stored;
  const clientId = options.clientId ?? options.clientMetadataUrl;
  if (clientId === undefined) return undefined;
  return {
    client_id: clientId,
    ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret }),
    ...(options.tokenEndpointAuthMethod === undefined
      ? {}
      : { token_endpoint_auth_method: options.tokenEndpointAuthMethod }),
  };
}

function networkReason(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return (reason as Error | undefined)?.name === 'TimeoutError' ? 'timed out' : 'cancelled';
  }
  // A system error (ECONNREFUSED, ENOTFOUND) says it best; else the message (a refused address, a bad setting).
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  return err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
}

async function httpReason(response: Response): Promise<string> {
  let error: string | undefined;
  try {
    const body: unknown = await response.json();
    const code = (body as { error?: unknown } | null)?.error;
    // Only a well-formed error code (RFC 6749 5.2 characters): descriptions are server text.
    if (typeof code === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code)) error = code;
  } catch {
    // Not JSON: the status says enough.
  }
  return `HTTP ${response.status}${error === undefined ? '' : ` ${error}`}`;
}

/** Options of {@link signOut}. */
export interface SignOutOptions extends RevokeTokensOptions {
  /** Revoke the tokens before forgetting them, when the server offers revocation. @default true */
  revoke?: boolean | undefined;
}

/** What {@link signOut} did. */
export interface SignOutResult extends RevocationResult {
  /** Something was stored for the server (and is now removed). */
  removed: boolean;
  /** Tokens were among it. */
  hadTokens: boolean;
}

/**
 * Signs out of the server at `serverUrl`: revokes its tokens when the stored discovery state names a revocation
 * endpoint (best effort, see {@link revokeTokens}), then deletes everything stored for it, also when the
 * revocation failed or could not be sent.
 */
export async function signOut(
  store: TokenStore,
  serverUrl: string,
  options: SignOutOptions = {},
): Promise<SignOutResult> {
  const key = tokenStoreKey(serverUrl);
  const state = await store.load(key);
  if (state === undefined)
    return { removed: false, hadTokens: false, endpoint: undefined, revoked: [], failed: [] };
  const revocation =
    options.revoke === false
      ? { endpoint: revocationEndpoint(state), revoked: [], failed: [] }
      : await revokeTokens(state, options);
  await store.delete(key);
  return { removed: true, hadTokens: state.tokens !== undefined, ...revocation };
}
